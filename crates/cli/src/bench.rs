//! `ragdown bench`: indexes a corpus into a fresh data dir, then measures what the targets
//! name — index time and embedded texts/s (chunks and their pieces) against the raw embedder
//! throughput on the same texts, peak RSS, no-op re-sync time, query latency p50/p95, and
//! top-1, recall@5 and MRR@10 overall and per question type. A hit counts when its path is the answer's and its lines overlap the
//! answer's.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use clap::{Args, ValueEnum};
use ragdown_index::{Index, IndexSettings};
use ragdown_search::{Mode, SearchOptions};
use serde_json::json;

use crate::eval::{HookTally, hook_evaluation, open_index, read_prompts, retrieval};
use crate::progress::DownloadBar;
use crate::settings::{Settings, docs_dir};

#[derive(Clone, Copy, ValueEnum)]
pub enum BenchMode {
    Hybrid,
    NaiveRrf,
    Dense,
    Lexical,
}

#[derive(Args)]
pub struct BenchArgs {
    /// The corpus directory.
    dir: PathBuf,
    /// Questions, one JSON object a line: query, type, answer_path, answer_start_line,
    /// answer_end_line.
    #[arg(long)]
    questions: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Which ranking to measure: the full hybrid search, plain reciprocal-rank fusion of the
    /// two retrievers, or one retriever alone.
    #[arg(long, value_enum, default_value = "hybrid")]
    mode: BenchMode,
    /// Also time a no-op re-sync of this many generated files (hash embedder).
    #[arg(long, default_value_t = 0)]
    resync_files: usize,
    /// Off-topic prompts (JSON lines with `query`): reports the strongest one's best cosine
    /// against the on-topic 10th percentile, to calibrate the hook's MIN_SCORE.
    #[arg(long)]
    offtopic: Option<PathBuf>,
    /// Also measure the live index with the configured embedder: time from saving an edit to
    /// finding it, in a generated folder of this many files; and first-index throughput while
    /// ten threads search the index being built.
    #[arg(long, default_value_t = 0)]
    live_files: usize,
    /// Keep the index here (reused by the next run) instead of a fresh temporary one.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Skip the raw embedder throughput pass.
    #[arg(long)]
    no_raw: bool,
}

/// Peak resident set size of this process, from /proc (Linux).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The `p` quantile of `sorted` (ascending), nearest rank.
/// The `p` quantile of values in any order.
pub(crate) fn unsorted_percentile(mut values: Vec<f64>, p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    percentile(&values, p)
}

pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Writes `files` small generated documents under `root`.
fn generate_notes(root: &std::path::Path, files: usize) -> Result<()> {
    for i in 0..files {
        let dir = root.join(format!("d{}", i % 20));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join(format!("note-{i}.md")),
            format!("# Note {i}\n\n## Part\n\nSome text for note {i}.\n"),
        )?;
    }
    Ok(())
}

/// Milliseconds from saving an edit in a watched folder of `files` documents until a search
/// finds it (median of five edits).
fn save_to_searchable(embedder: Arc<dyn ragdown_embed::Embedder>, files: usize) -> Result<f64> {
    let docs = tempfile::tempdir()?;
    let data = tempfile::tempdir()?;
    generate_notes(docs.path(), files)?;
    let index = Arc::new(Index::open(
        IndexSettings {
            root: docs.path().to_path_buf(),
            data_dir: data.path().to_path_buf(),
            max_file_bytes: ragdown_index::DEFAULT_MAX_FILE_BYTES,
            records: ragdown_index::store::RecordsLocation::DataDir,
        },
        embedder,
    )?);
    index.sync()?;
    let _follower = ragdown_index::watch::Follower::start(index.clone(), true, |_| {});
    let mut times = Vec::new();
    for round in 0..5 {
        let word = format!("zebracrossing{round}");
        let path = docs.path().join(format!("d{}/note-{round}.md", round % 20));
        let started = Instant::now();
        std::fs::write(&path, format!("# Note\n\n## Part\n\nNow about {word}.\n"))?;
        loop {
            let found = !index.bm25_search(&word, 1, Arc::new(|_| true))?.is_empty();
            if found {
                break;
            }
            if started.elapsed() > std::time::Duration::from_secs(60) {
                anyhow::bail!("an edit was not searchable after 60 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[2])
}

/// First index of `root` while ten threads search it: (chunks/s, search p95 ms, searches).
fn index_under_search_load(
    embedder: Arc<dyn ragdown_embed::Embedder>,
    root: &std::path::Path,
    queries: &[String],
) -> Result<(f64, f64, usize)> {
    let data = tempfile::tempdir()?;
    let index = Index::open(
        IndexSettings {
            root: root.to_path_buf(),
            data_dir: data.path().to_path_buf(),
            max_file_bytes: ragdown_index::DEFAULT_MAX_FILE_BYTES,
            records: ragdown_index::store::RecordsLocation::DataDir,
        },
        embedder,
    )?;
    let done = std::sync::atomic::AtomicBool::new(false);
    let (report, latencies) = std::thread::scope(|scope| {
        let searchers: Vec<_> = (0..10)
            .map(|t| {
                let (index, done) = (&index, &done);
                scope.spawn(move || {
                    let mut latencies = Vec::new();
                    let mut i = t;
                    while !done.load(std::sync::atomic::Ordering::Relaxed) {
                        let q = &queries[i % queries.len()];
                        let started = Instant::now();
                        let _ = ragdown_search::search(index, q, &SearchOptions::default());
                        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
                        i += 10;
                    }
                    latencies
                })
            })
            .collect();
        let report = index.sync();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let latencies: Vec<f64> = searchers
            .into_iter()
            .flat_map(|s| s.join().unwrap_or_default())
            .collect();
        (report, latencies)
    });
    let report = report?;
    let mut latencies = latencies;
    latencies.sort_by(f64::total_cmp);
    let chunks = index.snapshot().chunk_count() as f64;
    Ok((
        chunks / report.elapsed.as_secs_f64().max(1e-9),
        percentile(&latencies, 0.95),
        latencies.len(),
    ))
}

/// Times a no-op re-sync of `files` generated documents (median of five).
fn resync_benchmark(files: usize) -> Result<f64> {
    let docs = tempfile::tempdir()?;
    let data = tempfile::tempdir()?;
    generate_notes(docs.path(), files)?;
    let index = Index::open(
        IndexSettings {
            root: docs.path().to_path_buf(),
            data_dir: data.path().to_path_buf(),
            max_file_bytes: ragdown_index::DEFAULT_MAX_FILE_BYTES,
            records: ragdown_index::store::RecordsLocation::DataDir,
        },
        Arc::new(ragdown_embed::hash::HashEmbedder::new(384)),
    )?;
    index.sync()?;
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            index.sync().map(|_| t.elapsed().as_secs_f64() * 1000.0)
        })
        .collect::<ragdown_index::Result<_>>()?;
    times.sort_by(f64::total_cmp);
    Ok(times[2])
}

pub fn run(settings: &Settings, args: &BenchArgs) -> Result<()> {
    let root = docs_dir(&args.dir)?;
    let (questions, offtopic) = read_prompts(&args.questions, args.offtopic.as_deref())?;

    let load_started = Instant::now();
    let embedder = ragdown_embed::load(&settings.embedder, &DownloadBar::new())?;
    let model_load_s = load_started.elapsed().as_secs_f64();
    let temporary = tempfile::tempdir()?;
    let index = open_index(
        settings,
        root.clone(),
        args.data_dir.as_deref().unwrap_or(temporary.path()),
        embedder.clone(),
    )?;
    let report = index.sync()?;
    let index_s = report.elapsed.as_secs_f64();
    let snap = index.snapshot();
    let chunks = snap.chunk_count();
    let chunks_per_s = chunks as f64 / index_s.max(1e-9);
    // Each chunk is embedded whole and, when it has several blocks, block by block: the
    // embedder's work is counted in texts.
    let embedded_texts = report.embedded + report.embedded_pieces;
    let texts_per_s = embedded_texts as f64 / index_s.max(1e-9);

    let raw = if args.no_raw {
        None
    } else {
        // The same texts the sync embedded: each chunk, then its pieces.
        let texts: Vec<String> = snap
            .chunks()
            .flat_map(|(c, _)| {
                let title = snap
                    .document(c.document_id)
                    .map_or("", |d| d.title.as_str());
                std::iter::once(format!("{}\n\n{}", c.breadcrumb, c.text))
                    .chain(ragdown_markdown::pieces::piece_texts(title, &c.text))
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let t = Instant::now();
        embedder.embed(&refs, ragdown_embed::TextKind::Document)?;
        Some(texts.len() as f64 / t.elapsed().as_secs_f64().max(1e-9))
    };

    let t = Instant::now();
    index.sync()?;
    let noop_resync_ms = t.elapsed().as_secs_f64() * 1000.0;

    let mode = match args.mode {
        BenchMode::Hybrid => Mode::Hybrid,
        BenchMode::NaiveRrf => Mode::NaiveRrf,
        BenchMode::Dense => Mode::Dense,
        BenchMode::Lexical => Mode::Lexical,
    };
    let options = SearchOptions {
        limit: 10,
        mode,
        max_per_document: settings.server.max_per_document,
        follow_links: settings.server.follow_links,
        ..SearchOptions::default()
    };
    // One warm-up query so model and caches are loaded.
    ragdown_search::search(&index, "warm up", &options)?;
    let found = retrieval(&index, &questions, &options)?;
    let (overall, by_type, misses) = (&found.overall, &found.by_kind, &found.misses);
    let mut latencies = found.latencies.clone();
    latencies.sort_by(f64::total_cmp);
    let mut on_topic_best = found.best_similarities.clone();
    on_topic_best.sort_by(f64::total_cmp);
    let on_topic_p10 = percentile(&on_topic_best, 0.1);
    let offtopic_max = if args.offtopic.is_some() {
        let mut best = 0.0f64;
        for p in &offtopic {
            let hits = ragdown_search::search(&index, &p.query, &options)?;
            best = hits
                .iter()
                .map(|h| f64::from(h.similarity))
                .fold(best, f64::max);
        }
        Some(best)
    } else {
        None
    };
    let hook = match &args.offtopic {
        Some(_) => Some(hook_evaluation(settings, &index, &questions, &offtopic)?),
        None => None,
    };
    let resync_files_ms = if args.resync_files > 0 {
        Some(resync_benchmark(args.resync_files)?)
    } else {
        None
    };
    let live = if args.live_files > 0 {
        let queries: Vec<String> = questions.iter().map(|q| q.query.clone()).collect();
        let loaded = index_under_search_load(embedder.clone(), &root, &queries)?;
        Some((
            save_to_searchable(embedder.clone(), args.live_files)?,
            loaded,
        ))
    } else {
        None
    };
    let peak_rss = peak_rss_bytes();

    if args.json {
        let value = json!({
            "embedder": embedder.id(),
            "documents": snap.document_count(),
            "chunks": chunks,
            "model_load_s": model_load_s,
            "index_s": index_s,
            "chunks_per_s": chunks_per_s,
            "embedded_texts": embedded_texts,
            "texts_per_s": texts_per_s,
            "raw_embed_texts_per_s": raw,
            "noop_resync_ms": noop_resync_ms,
            "resync_files": args.resync_files,
            "resync_files_ms": resync_files_ms,
            "peak_rss_bytes": peak_rss,
            "live": live.map(|(save_ms, (cps, p95, n))| json!({
                "files": args.live_files,
                "save_to_searchable_ms": save_ms,
                "index_chunks_per_s_under_search": cps,
                "search_p95_ms_while_indexing": p95,
                "searches_while_indexing": n,
            })),
            "query_ms_p50": percentile(&latencies, 0.5),
            "query_ms_p95": percentile(&latencies, 0.95),
            "on_topic_best_cosine_p10": on_topic_p10,
            "offtopic_best_cosine_max": offtopic_max,
            "hook": hook.as_ref().map(HookTally::json),
            "overall": overall.json(),
            "by_type": by_type.iter().map(|(k, v)| (k.clone(), v.json())).collect::<serde_json::Map<_, _>>(),
            "misses": misses,
        });
        println!("{value}");
        return Ok(());
    }
    println!(
        "embedder          {} ({:.2} s to load)",
        embedder.id(),
        model_load_s
    );
    println!(
        "corpus            {} documents, {} chunks",
        snap.document_count(),
        chunks
    );
    println!(
        "index time        {index_s:.2} s ({chunks_per_s:.1} chunks/s; {embedded_texts} texts embedded, \
         chunks and their pieces: {texts_per_s:.1} texts/s)"
    );
    if let Some(raw) = raw {
        println!(
            "raw embedder      {raw:.1} texts/s on the same texts (indexing runs at {:.0}% of it)",
            100.0 * texts_per_s / raw
        );
    }
    println!("no-op re-sync     {noop_resync_ms:.1} ms");
    if let Some(ms) = resync_files_ms {
        println!(
            "no-op re-sync     {ms:.1} ms for {} files",
            args.resync_files
        );
    }
    if let Some((save_ms, (cps, p95, n))) = live {
        println!(
            "save→searchable   {save_ms:.0} ms (median of 5 edits, {} files, watcher)",
            args.live_files
        );
        println!(
            "index under load  {cps:.1} chunks/s with 10 searching threads; {n} searches, p95 {p95:.1} ms"
        );
    }
    if let Some(rss) = peak_rss {
        println!(
            "peak RSS          {:.1} MiB",
            rss as f64 / (1024.0 * 1024.0)
        );
    }
    println!(
        "query latency     p50 {:.2} ms, p95 {:.2} ms",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.95)
    );
    match offtopic_max {
        Some(off) => println!(
            "hook threshold    on-topic p10 {on_topic_p10:.3}, strongest off-topic {off:.3} (MIN_SCORE {:.2})",
            embedder.min_score()
        ),
        None => println!("hook threshold    on-topic p10 {on_topic_p10:.3}"),
    }
    if let Some(h) = &hook {
        println!("{}", h.line());
    }
    println!("{}", overall.line("overall"));
    for (kind, tally) in by_type {
        println!("{}", tally.line(kind));
    }
    Ok(())
}
