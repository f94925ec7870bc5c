//! `ragdown index`, `query` and `status`: open a directory's index, sync it, search it, and
//! print results for people (text) or scripts (`--json`) on stdout.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use ragdown_index::{Index, IndexSettings};
use ragdown_search::{Hit, SearchOptions};
use serde_json::json;

use crate::progress::{DownloadBar, sync_with_bar};
use crate::settings::{Settings, docs_dir};

/// Loads the embedder (downloading a preset on first use) and opens the index of `dir`.
pub fn open_index(settings: &Settings, dir: &Path) -> Result<Index> {
    let root = docs_dir(dir)?;
    let embedder = ragdown_embed::load(&settings.embedder, &DownloadBar::new())
        .with_context(|| format!("loading the embedder {:?}", settings.embedder.name))?;
    let index = Index::open(
        IndexSettings {
            data_dir: settings.data_dir_for(&root),
            root,
            max_file_bytes: settings.max_file_bytes,
        },
        embedder,
    )?;
    Ok(index)
}

pub fn index(settings: &Settings, dir: &Path) -> Result<()> {
    let index = open_index(settings, dir)?;
    let report = sync_with_bar(&index)?;
    let snap = index.snapshot();
    println!(
        "indexed {} documents, {} chunks in {:.2} s: {} added, {} updated, {} removed, {} unchanged, {} chunks embedded",
        snap.document_count(),
        snap.chunk_count(),
        report.elapsed.as_secs_f64(),
        report.added,
        report.updated,
        report.removed,
        report.unchanged,
        report.embedded
    );
    for (path, reason) in &report.skipped {
        println!("skipped {path}: {reason}");
    }
    Ok(())
}

pub struct QueryFlags {
    pub top_k: usize,
    pub json: bool,
    pub tag: Option<String>,
    pub path_prefix: Option<String>,
}

/// An excerpt of at most `max` characters on one line.
fn excerpt(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

pub fn hit_json(hit: &Hit) -> serde_json::Value {
    let mut value = json!({
        "path": hit.path(),
        "title": hit.document.title,
        "heading": hit.heading,
        "breadcrumb": hit.breadcrumb,
        "line_start": hit.line_start,
        "line_end": hit.line_end,
        "similarity": (hit.similarity * 10_000.0).round() / 10_000.0,
        "score": (hit.score * 100_000.0).round() / 100_000.0,
        "sources": hit.sources.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "tags": hit.document.tags,
        "text": hit.text,
    });
    if let Some(by) = &hit.document.created_by {
        value["created_by"] = json!(by);
    }
    value
}

pub fn query(settings: &Settings, dir: &Path, question: &str, flags: QueryFlags) -> Result<()> {
    let index = open_index(settings, dir)?;
    sync_with_bar(&index)?;
    let options = SearchOptions {
        limit: flags.top_k,
        path_prefix: flags.path_prefix.map(|p| p.trim_matches('/').to_string()),
        tag: flags
            .tag
            .as_deref()
            .and_then(ragdown_markdown::tags::normalize),
        max_per_document: settings.max_per_document,
        follow_links: settings.follow_links,
        ..SearchOptions::default()
    };
    let hits = ragdown_search::search(&index, question, &options)?;
    if flags.json {
        println!(
            "{}",
            json!({ "hits": hits.iter().map(hit_json).collect::<Vec<_>>() })
        );
        return Ok(());
    }
    if hits.is_empty() {
        println!("No matching documents.");
    }
    for (i, hit) in hits.iter().enumerate() {
        println!(
            "[{}] {}:{}-{} — {} (similarity {:.2})\n    {}\n",
            i + 1,
            hit.path(),
            hit.line_start,
            hit.line_end,
            hit.breadcrumb,
            hit.similarity,
            excerpt(&hit.text, 300)
        );
    }
    Ok(())
}

pub fn status(settings: &Settings, dir: &Path, as_json: bool) -> Result<()> {
    let index = open_index(settings, dir)?;
    let snap = index.snapshot();
    let embedder: &Arc<dyn ragdown_embed::Embedder> = index.embedder();
    let value = json!({
        "folder": index.settings().root,
        "data_dir": index.settings().data_dir,
        "documents": snap.document_count(),
        "chunks": snap.chunk_count(),
        "embedder": embedder.id(),
        "dim": embedder.dim(),
    });
    if as_json {
        println!("{value}");
    } else {
        println!(
            "folder    {}\ndata dir  {}\ndocuments {}\nchunks    {}\nembedder  {} ({} dimensions)",
            index.settings().root.display(),
            index.settings().data_dir.display(),
            snap.document_count(),
            snap.chunk_count(),
            embedder.id(),
            embedder.dim()
        );
    }
    Ok(())
}

/// `ragdown stdio`: opens the index of `RAGDOWN_DOCS_DIR`, syncs it in the background (searches
/// answer from what is indexed meanwhile) and serves MCP on stdin/stdout.
pub fn stdio(settings: &Settings) -> Result<()> {
    let dir = settings.docs_dir.clone().context(
        "RAGDOWN_DOCS_DIR is not set: point it at the directory of Markdown files to serve",
    )?;
    let index = Arc::new(open_index(settings, &dir)?);
    let name = index
        .settings()
        .root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "docs".into());
    let engine = Arc::new(ragdown_server::Engine::new(
        name,
        index,
        settings.server.clone(),
    ));
    // The first sync and every later one run on the follower's thread, so searches answer
    // from what is indexed meanwhile.
    let recorder = engine.clone();
    let follower = ragdown_index::watch::Follower::start(
        engine.index.clone(),
        settings.watch,
        move |outcome| match outcome {
            Ok(report) => recorder.record_sync(&report),
            Err(e) => tracing::error!("sync failed: {e}"),
        },
    );
    follower.nudge();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let served = runtime
        .block_on(ragdown_server::mcp::serve_stdio(engine))
        .map_err(|e| anyhow::anyhow!("MCP over stdio: {e}"));
    drop(follower);
    served
}
