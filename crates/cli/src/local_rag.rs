//! The commands mcp-local-rag's CLI has, for people and scripts without an MCP client:
//! `sync`, `ingest`, `list`, `read` and `delete` (with `query` and `status` in `commands`).
//! Each opens the same index a running server uses — as a reader when a primary is up, whose
//! syncs it forwards — and prints text, or JSON with `--json`; logs go to stderr.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use ragdown_server::Engine;
use ragdown_server::answers::Listed;
use ragdown_server::args::ListArgs;
use ragdown_server::documents::{self, LineRange};
use ragdown_server::format;
use serde_json::{Value, json};

use crate::commands::{OnModelError, Opened, folder_name, open_index, sync_dir};
use crate::settings::{Settings, docs_dir};

/// The docs dirs a command works on: those given (`DIR` and repeated `--docs-dir`), else
/// `RAGDOWN_DOCS_DIR`, else the current directory (as mcp-local-rag does).
pub fn roots(settings: &Settings, given: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let chosen: Vec<PathBuf> = if !given.is_empty() {
        given.to_vec()
    } else if let Some(d) = &settings.docs_dir {
        vec![d.clone()]
    } else {
        vec![std::env::current_dir().context("reading the current directory")?]
    };
    if chosen.len() > 1 && settings.data_dir.is_some() {
        bail!(
            "RAGDOWN_DATA_DIR names one index, but {} docs dirs were given: unset it so each docs dir keeps its own",
            chosen.len()
        );
    }
    chosen.iter().map(|d| docs_dir(d)).collect()
}

/// One docs dir's sync as `ragdown sync` reports it (`--json`: one of `roots`).
#[derive(serde::Serialize)]
struct RootSynced {
    docs_dir: PathBuf,
    documents: usize,
    chunks: usize,
    added: usize,
    updated: usize,
    removed: usize,
    unchanged: usize,
    embedded: usize,
    ms: u64,
    skipped: Vec<Skipped>,
}

#[derive(serde::Serialize)]
struct Skipped {
    path: String,
    reason: String,
}

impl RootSynced {
    fn new(
        root: &Path,
        report: &ragdown_index::SyncReport,
        index: &ragdown_index::Index,
    ) -> Result<Self> {
        Ok(Self {
            docs_dir: root.to_path_buf(),
            documents: index.snapshot().document_count(),
            chunks: index.chunk_counts()?.values().sum::<usize>(),
            added: report.added,
            updated: report.updated,
            removed: report.removed,
            unchanged: report.unchanged,
            embedded: report.embedded,
            ms: report.elapsed.as_millis() as u64,
            skipped: report
                .skipped
                .iter()
                .map(|(path, reason)| Skipped {
                    path: path.clone(),
                    reason: reason.clone(),
                })
                .collect(),
        })
    }

    fn print(&self) {
        println!(
            "{}: {} documents, {} chunks ({} added, {} updated, {} removed, {} chunks embedded)",
            self.docs_dir.display(),
            self.documents,
            self.chunks,
            self.added,
            self.updated,
            self.removed,
            self.embedded
        );
        for s in &self.skipped {
            println!("  skipped {}: {}", s.path, s.reason);
        }
    }
}

/// `ragdown sync`: brings every root's index up to date.
pub fn sync(settings: &Settings, given: &[PathBuf], as_json: bool) -> Result<()> {
    let mut out = Vec::new();
    for root in roots(settings, given)? {
        let (index, report) = sync_dir(settings, &root)?;
        let synced = RootSynced::new(&root, &report, &index)?;
        if !as_json {
            synced.print();
        }
        out.push(synced);
    }
    if as_json {
        println!("{}", json!({ "roots": out }));
    }
    Ok(())
}

/// `ragdown ingest PATH...`: each path (a document or a directory) must lie inside one of the
/// roots; the roots holding them are synced, and each path's indexed documents are reported.
pub fn ingest(
    settings: &Settings,
    paths: &[PathBuf],
    given_roots: &[PathBuf],
    as_json: bool,
) -> Result<()> {
    let roots = roots(settings, given_roots)?;
    let mut wanted: Vec<(PathBuf, PathBuf, String)> = Vec::new();
    for path in paths {
        let abs = path
            .canonicalize()
            .with_context(|| format!("{} does not exist", path.display()))?;
        let Some(root) = roots.iter().find(|r| abs.starts_with(r)) else {
            bail!(
                "{} is outside every docs dir ({}): pass the folder that holds it with --docs-dir",
                path.display(),
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        };
        let rel = abs
            .strip_prefix(root)
            .map(|r| r.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        if abs.is_file() && !ragdown_index::walk::is_document_path(&rel) {
            bail!(
                "{} is not a format ragdown indexes: use .md, .markdown, .mdx, .pdf, .docx, .html, .htm or .txt",
                path.display()
            );
        }
        wanted.push((root.clone(), abs, rel));
    }
    let mut results = Vec::new();
    let mut synced: Vec<(
        PathBuf,
        Arc<ragdown_index::Index>,
        ragdown_index::SyncReport,
    )> = Vec::new();
    for (root, abs, rel) in &wanted {
        if !synced.iter().any(|(r, _, _)| r == root) {
            let (index, report) = sync_dir(settings, root)?;
            synced.push((root.clone(), index, report));
        }
        let Some((_, index, report)) = synced.iter().find(|(r, _, _)| r == root) else {
            continue;
        };
        let snap = index.snapshot();
        let chunks = index.chunk_counts()?;
        let under = |p: &str| rel.is_empty() || p == rel || p.starts_with(&format!("{rel}/"));
        let documents: Vec<Value> = snap
            .documents()
            .filter(|d| under(&d.path))
            .map(|d| json!({"path": d.path, "chunks": chunks.get(&d.id).copied().unwrap_or(0)}))
            .collect();
        let skipped: Vec<Value> = report
            .skipped
            .iter()
            .filter(|(p, _)| under(p))
            .map(|(p, why)| json!({"path": p, "reason": why}))
            .collect();
        if documents.is_empty() && skipped.is_empty() && abs.is_file() {
            bail!("{} was not indexed", abs.display());
        }
        results.push(json!({
            "path": abs, "docs_dir": root, "documents": documents, "skipped": skipped,
        }));
    }
    if as_json {
        println!("{}", json!({ "ingested": results }));
        return Ok(());
    }
    for r in &results {
        let docs = r["documents"].as_array().map_or(0, Vec::len);
        let chunks: u64 = r["documents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["chunks"].as_u64())
            .sum();
        println!(
            "{}: {docs} documents, {chunks} chunks",
            r["path"].as_str().unwrap_or("")
        );
        for s in r["skipped"].as_array().into_iter().flatten() {
            println!(
                "  skipped {}: {}",
                s["path"].as_str().unwrap_or(""),
                s["reason"].as_str().unwrap_or("")
            );
        }
    }
    Ok(())
}

/// An engine over `dir`'s index, synced first when this process is its primary.
fn engine_for(settings: &Settings, dir: &Path) -> Result<Arc<Engine>> {
    let Opened { index, role } = open_index(settings, dir, OnModelError::KeywordOnly)?;
    if role.is_primary() {
        crate::progress::sync_with_bar(&index)?;
    }
    Ok(Arc::new(Engine::new(
        folder_name(&index),
        index,
        settings.server.clone(),
    )))
}

/// `ragdown list`: the indexed documents of every root.
pub fn list(settings: &Settings, given: &[PathBuf], as_json: bool) -> Result<()> {
    let roots = roots(settings, given)?;
    let mut out = Vec::new();
    for root in &roots {
        let engine = engine_for(settings, root)?;
        // No limit: the command lists every document.
        let listing = documents::list(&engine, &ListArgs::default())?;
        if as_json {
            // The folder of a document here is the docs dir it is in.
            out.extend(listing.documents.into_iter().map(|d| Listed {
                folder: Some(root.display().to_string()),
                ..d
            }));
            continue;
        }
        if roots.len() > 1 {
            println!("{}:", root.display());
        }
        println!("{}", format::listing_text(&listing));
    }
    if as_json {
        println!("{}", json!({ "documents": out }));
    }
    Ok(())
}

/// `--lines A:B` → (A, B); either side may be left out (`:20`, `5:`).
pub fn parse_lines(spec: &str) -> Result<(Option<usize>, Option<usize>)> {
    let (a, b) = spec.split_once(':').unwrap_or((spec, spec));
    let num = |s: &str| -> Result<Option<usize>> {
        if s.trim().is_empty() {
            return Ok(None);
        }
        s.trim()
            .parse::<usize>()
            .map(Some)
            .with_context(|| format!("--lines {spec:?}: use START:END, such as 10:20"))
    };
    Ok((num(a)?, num(b)?))
}

/// `ragdown read DIR PATH`: a document's lines as the index cites them.
pub fn read(
    settings: &Settings,
    dir: &Path,
    path: &str,
    lines: Option<&str>,
    (before, after): (usize, usize),
    as_json: bool,
) -> Result<()> {
    let (start_line, end_line) = match lines {
        Some(spec) => parse_lines(spec)?,
        None => (None, None),
    };
    let engine = engine_for(settings, &docs_dir(dir)?)?;
    let doc = documents::read_doc(
        &engine,
        path,
        LineRange {
            start_line,
            end_line,
            before,
            after,
        },
    )?;
    if as_json {
        println!("{}", format::json_text(&doc));
    } else {
        println!("{}", format::read_doc_text(&doc));
    }
    Ok(())
}

/// `ragdown delete DIR PATH`: deletes a document (Markdown or converted) and syncs.
pub fn delete(settings: &Settings, dir: &Path, path: &str, as_json: bool) -> Result<()> {
    let engine = engine_for(settings, &docs_dir(dir)?)?;
    let snap = engine.index.snapshot();
    let rel = ragdown_server::paths::normalize(path)?;
    if snap.document_by_path(&rel).is_none() {
        bail!("{path} is not an indexed document of {}", dir.display());
    }
    if ragdown_index::walk::is_markdown_path(&rel) {
        documents::delete(&engine, &rel, false, None)?;
    } else {
        // A converted document: the same sandbox as every tool path, then the file goes.
        let (_, abs) = ragdown_server::paths::document(&engine.root(), &rel)?;
        std::fs::remove_file(&abs).with_context(|| format!("deleting {rel}"))?;
        engine.sync()?;
    }
    if as_json {
        println!("{}", json!({ "deleted": rel }));
    } else {
        println!("deleted {rel}");
    }
    Ok(())
}
