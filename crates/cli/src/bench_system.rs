//! `ragdown bench-system DIR`: the whole-process figures a user feels, measured by running
//! this very binary the way users do, each run in a child process of its own — first index
//! (wall, CPU, peak RSS), no-change and one-edit re-syncs, a one-shot CLI query, an MCP server
//! over stdio from spawn to its first answered search, its warm search latency and its RSS —
//! and the exact top-10 scan over a million synthetic vectors.
//!
//! Works on a copy of `DIR` in a temporary folder, with a fresh data dir: the corpus and any
//! index of it are never touched. Times are medians over `--rounds`; on a shared machine
//! compare runs made side by side.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::bench::unsorted_percentile as percentile;
use crate::bench_vectors::{DIM, Synthetic, TOP};
use anyhow::{Context, Result};
use clap::Args;
use ragdown_embed::int8::OwnedInt8;
use serde_json::{Value, json};

#[derive(Args)]
pub struct SystemArgs {
    /// The corpus directory (copied; never modified).
    dir: PathBuf,
    /// The question the query figures ask.
    #[arg(long, default_value = "how do I configure the server")]
    query: String,
    /// Rounds per figure (the median is reported).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Synthetic vectors for the exact-scan figure (0 skips it).
    #[arg(long, default_value_t = 1_000_000)]
    vectors: usize,
    /// Also measure the pgvector HNSW pool over the same synthetic vectors in this PostgreSQL
    /// database (pgvector installed; a schema of its own, dropped afterwards).
    #[arg(long, value_name = "URL")]
    pgvector: Option<String>,
    /// Only the synthetic-vector figures: no corpus is indexed (DIR is not read).
    #[arg(long)]
    vectors_only: bool,
    /// Internal: write `--vectors` synthetic sections as SQLite records in DIR (`write`), or
    /// open them the way a server's start does (`int8`: every chunk into a snapshot, its
    /// vectors rounded as they are read; `f32`: all read as f32 first, the way opening worked
    /// before) and exit. The parent measures the child.
    #[arg(long, hide = true, value_name = "HOW")]
    open_records: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// What one child process cost.
#[derive(Debug, Clone, Copy)]
struct Cost {
    wall: Duration,
    cpu: Duration,
    peak_rss: u64,
}

/// Waits for `child` and returns its exit status with its own resource usage.
fn wait_with_usage(child: &std::process::Child) -> Result<(i32, Duration, u64)> {
    let pid = libc::pid_t::try_from(child.id()).context("child pid out of range")?;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value (plain integers and timevals).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for (std's `Child::wait` is never called
    // on it), and both pointers refer to live locals of the right types.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if waited != pid {
        anyhow::bail!("waiting for pid {pid}: {}", std::io::Error::last_os_error());
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    let cpu = time(usage.ru_utime) + time(usage.ru_stime);
    // Linux reports ru_maxrss in kilobytes.
    let peak = u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024;
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    Ok((code, cpu, peak))
}

/// Runs this binary with `args` and `env`, output discarded, and measures it.
fn run_measured(args: &[&str], env: &[(&str, &Path)]) -> Result<Cost> {
    let exe = std::env::current_exe().context("locating the ragdown binary")?;
    let mut command = Command::new(exe);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    let started = Instant::now();
    let child = command.spawn().context("starting ragdown")?;
    let (code, cpu, peak_rss) = wait_with_usage(&child)?;
    let wall = started.elapsed();
    if code != 0 {
        anyhow::bail!("`ragdown {}` failed (exit {code})", args.join(" "));
    }
    Ok(Cost {
        wall,
        cpu,
        peak_rss,
    })
}

fn median(values: Vec<f64>) -> f64 {
    percentile(values, 0.5)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// Copies the visible files of `from` into `to` (dot-folders, like an index, stay behind).
fn copy_corpus(from: &Path, to: &Path) -> Result<usize> {
    let mut copied = 0;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        let target = to.join(&name);
        if kind.is_dir() {
            std::fs::create_dir_all(&target)?;
            copied += copy_corpus(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
            copied += 1;
        }
    }
    Ok(copied)
}

/// The first Markdown file under `dir`, in name order: the one the edit figure changes.
fn first_markdown(dir: &Path) -> Option<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    entries
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "md"))
        .cloned()
        .or_else(|| {
            entries
                .iter()
                .filter(|p| p.is_dir())
                .find_map(|d| first_markdown(d))
        })
}

/// `text` with a word added to the end of its first prose line outside code (a letter first,
/// eight words or more), or `None` when it has none: the paragraph-edit figure's change, which
/// re-embeds a section and that paragraph, where an appended paragraph adds a section's text.
fn edit_first_paragraph(text: &str, word: &str) -> Option<String> {
    let mut in_code = false;
    let mut done = false;
    let mut out = String::with_capacity(text.len() + word.len() + 1);
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if body.trim_start().starts_with("```") || body.trim_start().starts_with("~~~") {
            in_code = !in_code;
        }
        let prose = !in_code
            && body.starts_with(|c: char| c.is_alphabetic())
            && body.split_whitespace().count() >= 8;
        if prose && !done {
            out.push_str(body);
            out.push(' ');
            out.push_str(word);
            out.push_str(&line[body.len()..]);
            done = true;
        } else {
            out.push_str(line);
        }
    }
    done.then_some(out)
}

/// An MCP client over a child's stdin/stdout, newline-delimited JSON-RPC.
struct StdioClient {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl StdioClient {
    fn spawn(docs: &Path, data: &Path) -> Result<Self> {
        let exe = std::env::current_exe().context("locating the ragdown binary")?;
        let mut child = Command::new(exe)
            .arg("stdio")
            .env("RAGDOWN_DOCS_DIR", docs)
            .env("RAGDOWN_DATA_DIR", data)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting ragdown stdio")?;
        let input = child.stdin.take().context("no stdin")?;
        let output = BufReader::new(child.stdout.take().context("no stdout")?);
        Ok(Self {
            child,
            input,
            output,
            next_id: 1,
        })
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        writeln!(self.input, "{message}")?;
        self.input.flush()?;
        Ok(())
    }

    /// Sends a request and returns its result, skipping notifications.
    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let mut line = String::new();
            if self.output.read_line(&mut line)? == 0 {
                anyhow::bail!("ragdown stdio closed its output during {method}");
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id").and_then(Value::as_u64) != Some(id) {
                continue;
            }
            if let Some(error) = message.get("error") {
                anyhow::bail!("{method} failed: {error}");
            }
            return Ok(message.get("result").cloned().unwrap_or(Value::Null));
        }
    }

    fn initialize(&mut self) -> Result<()> {
        self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "ragdown-bench", "version": "1"}}),
        )?;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    }

    fn search(&mut self, query: &str) -> Result<Value> {
        let result = self.request(
            "tools/call",
            json!({"name": "ragdown_recall", "arguments": {"query": query}}),
        )?;
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            anyhow::bail!("ragdown_recall failed: {result}");
        }
        Ok(result)
    }

    /// Resident and peak resident memory of the server now, from /proc (Linux).
    fn memory(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .map_or(0, |kb| kb * 1024)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    fn close(mut self) {
        drop(self.input);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the exact scan over many synthetic vectors cost.
#[derive(Debug, Clone, Copy)]
struct ScanFigures {
    /// p50 of 20 top-10 queries, in ms.
    p50_ms: f64,
    /// Bytes the snapshot's vectors take per million sections (int8 components and a scale).
    bytes_per_million: f64,
    /// Share of the exact f32 top-10 the int8 scan returned, over the 20 queries.
    recall_at_10: f64,
}

/// Exact top-10 by cosine over `count` random unit vectors of 384 dimensions through the dense
/// search's own scan (`ragdown_search::dense_top` over a snapshot of that many sections, on
/// every core), and how much of the f32 top-10 its int8 vectors keep.
fn exact_scan(synthetic: &Synthetic) -> ScanFigures {
    let snapshot = synthetic_snapshot(&synthetic.vectors, DIM);
    let (mut times, mut found, mut wanted) = (Vec::new(), 0usize, 0usize);
    for (query, exact) in synthetic.queries.iter().zip(&synthetic.exact) {
        let started = Instant::now();
        let best = ragdown_search::dense_top(&snapshot, query, TOP);
        times.push(ms(started.elapsed()));
        wanted += exact.len();
        found += exact
            .iter()
            .filter(|id| best.iter().any(|(got, _)| got == *id))
            .count();
    }
    ScanFigures {
        p50_ms: median(times),
        bytes_per_million: ((DIM + 4) * 1_000_000) as f64,
        recall_at_10: found as f64 / wanted.max(1) as f64,
    }
}

/// A snapshot of one section per vector, a thousand sections a document.
fn synthetic_snapshot(vectors: &[f32], dim: usize) -> ragdown_index::Snapshot {
    const PER_DOCUMENT: usize = 1000;
    let count = vectors.len() / dim;
    let documents = (0..count.div_ceil(PER_DOCUMENT))
        .map(|d| ragdown_index::DocumentRecord {
            id: d as i64 + 1,
            path: format!("generated/{d}.md"),
            total_lines: 1,
            ..Default::default()
        })
        .collect();
    let Ok(snapshot) = ragdown_index::Snapshot::load(dim, true, documents, |each| {
        for (i, v) in vectors.chunks_exact(dim).enumerate() {
            each(ragdown_index::store::SnapshotChunk {
                record: ragdown_index::ChunkRecord {
                    id: i as i64 + 1,
                    document_id: (i / PER_DOCUMENT) as i64 + 1,
                    ord: (i % PER_DOCUMENT) as u32,
                    line_start: 1,
                    line_end: 1,
                    heading: String::new(),
                    breadcrumb: String::new(),
                    text: String::new(),
                },
                vector: Some(OwnedInt8::new(v)),
                pieces: Vec::new(),
            });
        }
        Ok::<(), std::convert::Infallible>(())
    });
    snapshot
}

/// A server's start over `count` sections in SQLite records: the synthetic vectors written as
/// records by one child process, then opened into a snapshot by another per way of reading
/// them (each way's wall time and the child's peak RSS). Run while this process is still
/// small: Linux carries a parent's peak RSS into a child spawned by vfork and exec, so a
/// child's figure is only its own when it is above the parent's.
fn open_figures(count: usize) -> Result<Value> {
    let scratch = tempfile::tempdir()?;
    let dir = scratch.path().to_string_lossy().into_owned();
    let count = count.to_string();
    run_measured(
        &[
            "bench-system",
            &dir,
            "--vectors",
            &count,
            "--open-records",
            "write",
        ],
        &[],
    )?;
    let mut figures = json!({});
    for how in ["int8", "f32"] {
        let cost = run_measured(&["bench-system", &dir, "--open-records", how], &[])?;
        figures[how] = json!({"s": cost.wall.as_secs_f64(), "peak_mb": mb(cost.peak_rss)});
    }
    Ok(figures)
}

/// `--open-records`: loads the snapshot of the SQLite records in `dir` (see [`SystemArgs`]).
fn open_records(dir: &Path, how: &str, vectors: usize) -> Result<()> {
    let mut records = ragdown_index::store::open(
        &ragdown_index::store::RecordsLocation::DataDir,
        dir,
        ragdown_index::store::Creating::Always,
    )?;
    if how == "write" {
        let synthetic = Synthetic::new(vectors);
        ragdown_index::store::write_synthetic(records.as_mut(), &synthetic.vectors, DIM, 1000)?;
        return Ok(());
    }
    let snapshot = match how {
        "int8" => ragdown_index::Snapshot::from_records(records.as_mut(), DIM, true)?,
        // The f32 way: every stored vector read as f32, then rounded chunk by chunk.
        "f32" => {
            let chunks = records.chunks(None)?;
            ragdown_index::Snapshot::load(DIM, true, records.documents()?, |each| {
                for c in chunks {
                    each(ragdown_index::store::SnapshotChunk::rounded(c, DIM));
                }
                Ok::<(), anyhow::Error>(())
            })?
        }
        other => anyhow::bail!("--open-records takes write, int8 or f32, not {other}"),
    };
    println!("{} sections", snapshot.chunk_count());
    Ok(())
}

/// The synthetic-vector figures: the exact in-memory scan, and the pgvector pool when asked.
fn run_vectors(args: &SystemArgs) -> Result<Value> {
    if args.vectors == 0 {
        return Ok(Value::Null);
    }
    let say = |what: &str| {
        if !args.json {
            eprintln!("bench-system: {what}");
        }
    };
    say("a server's start from SQLite records of that many sections");
    let open = open_figures(args.vectors)?;
    say(&format!("{} synthetic vectors", args.vectors));
    let synthetic = Synthetic::new(args.vectors);
    say("exact top-10 in memory");
    let scan = exact_scan(&synthetic);
    if !args.json {
        println!(
            "exact top-10 over {} × 384 (int8): p50 {:.1} ms, recall@10 of the f32 top-10 {:.3}, {:.0} MB of vectors per million sections",
            args.vectors,
            scan.p50_ms,
            scan.recall_at_10,
            scan.bytes_per_million / 1e6
        );
    }
    if !args.json {
        println!(
            "open {} sections from SQLite records: {:.1} s, peak {:.0} MB (vectors read as f32 first: {:.1} s, peak {:.0} MB)",
            args.vectors,
            open["int8"]["s"].as_f64().unwrap_or(0.0),
            open["int8"]["peak_mb"].as_f64().unwrap_or(0.0),
            open["f32"]["s"].as_f64().unwrap_or(0.0),
            open["f32"]["peak_mb"].as_f64().unwrap_or(0.0),
        );
    }
    let mut report = json!({
        "vectors": args.vectors, "dim": DIM, "p50_ms": scan.p50_ms,
        "recall_at_10": scan.recall_at_10,
        "mb_per_million": scan.bytes_per_million / 1e6,
        "open_from_sqlite": open,
    });
    if let Some(url) = &args.pgvector {
        say("pgvector: writing the records, building the HNSW index, querying");
        let figures = crate::bench_pgvector::measure(url, &synthetic)?;
        let walks: Vec<Value> = figures
            .walks
            .iter()
            .map(|w| {
                json!({"ef_search": w.ef_search, "p50_ms": w.p50_ms, "p95_ms": w.p95_ms,
                       "recall_at_10": w.recall_at_10})
            })
            .collect();
        report["pgvector"] = json!({
            "write_s": figures.write_s, "build_s": figures.build_s, "walks": walks,
            "join_with_vectors_s": figures.join_with_vectors_s,
            "join_without_vectors_s": figures.join_without_vectors_s,
        });
        if !args.json {
            println!(
                "pgvector over the same vectors: records written in {:.0} s, table filled and HNSW built in {:.0} s",
                figures.write_s, figures.build_s
            );
            for w in &figures.walks {
                println!(
                    "  ef_search {:>3}: top-10 p50 {:.1} / p95 {:.1} ms, recall@10 {:.3}",
                    w.ef_search, w.p50_ms, w.p95_ms, w.recall_at_10
                );
            }
            println!(
                "  a joining server's snapshot from the records: {:.1} s with every vector (in-memory pool), {:.1} s without (pgvector pool)",
                figures.join_with_vectors_s, figures.join_without_vectors_s
            );
        }
    }
    Ok(report)
}

pub fn run(args: &SystemArgs) -> Result<()> {
    if let Some(how) = &args.open_records {
        return open_records(&args.dir, how, args.vectors);
    }
    if args.vectors_only {
        let report = run_vectors(args)?;
        if args.json {
            println!("{}", json!({ "exact_scan": report }));
        }
        return Ok(());
    }
    let rounds = args.rounds.max(1);
    let work = tempfile::tempdir()?;
    let docs = work.path().join("docs");
    let data = work.path().join("data");
    std::fs::create_dir_all(&docs)?;
    let files = copy_corpus(&args.dir, &docs)?;
    let env: &[(&str, &Path)] = &[("RAGDOWN_DATA_DIR", &data)];
    let docs_arg = docs.to_string_lossy().into_owned();
    let say = |what: &str| {
        if !args.json {
            eprintln!("bench-system: {what}");
        }
    };

    say(&format!("first index of {files} files"));
    let first = run_measured(&["index", &docs_arg], env)?;

    say("no-change re-syncs");
    let mut unchanged = Vec::new();
    for _ in 0..rounds {
        unchanged.push(run_measured(&["index", &docs_arg], env)?);
    }

    say("one-edit re-syncs");
    let edited_file = first_markdown(&docs).context("the corpus holds no Markdown file")?;
    let original = std::fs::read_to_string(&edited_file)?;
    let mut edited = Vec::new();
    for round in 0..rounds {
        std::fs::write(
            &edited_file,
            format!("{original}\n\nA benchmark edit, round {round}: the zebra crossing moved.\n"),
        )?;
        edited.push(run_measured(&["index", &docs_arg], env)?);
    }
    // Back to the original, indexed, so each paragraph edit changes only its one line.
    std::fs::write(&edited_file, &original)?;
    run_measured(&["index", &docs_arg], env)?;

    say("paragraph-edit re-syncs");
    let mut paragraph_edits = Vec::new();
    for round in 0..rounds {
        let Some(changed) = edit_first_paragraph(&original, &format!("zebra{round}")) else {
            break;
        };
        std::fs::write(&edited_file, changed)?;
        paragraph_edits.push(run_measured(&["index", &docs_arg], env)?);
    }

    say("one-shot CLI queries");
    let mut queries = Vec::new();
    for _ in 0..rounds {
        queries.push(run_measured(&["query", &docs_arg, &args.query], env)?);
    }

    say("MCP over stdio: spawn to first answered search");
    let mut first_answers = Vec::new();
    let mut warm = Vec::new();
    let mut server_memory = (0, 0);
    for round in 0..rounds {
        let started = Instant::now();
        let mut client = StdioClient::spawn(&docs, &data)?;
        client.initialize()?;
        client.search(&args.query)?;
        first_answers.push(ms(started.elapsed()));
        if round + 1 == rounds {
            // Let the model finish loading and the start-up re-sync end, then time warm
            // searches over a few different questions.
            std::thread::sleep(Duration::from_secs(2));
            let questions = [
                args.query.as_str(),
                "what does the error message mean",
                "how to upgrade to the latest version",
                "which settings control logging",
            ];
            for i in 0..60 {
                let q = questions[i % questions.len()];
                let t = Instant::now();
                client.search(&format!("{q} {i}"))?;
                warm.push(ms(t.elapsed()));
            }
            server_memory = client.memory();
        }
        client.close();
    }

    let walls = |costs: &[Cost]| median(costs.iter().map(|c| ms(c.wall)).collect());
    let peaks = |costs: &[Cost]| costs.iter().map(|c| c.peak_rss).max().unwrap_or(0);
    let report = json!({
        "files": files,
        "first_index": {"wall_s": first.wall.as_secs_f64(), "cpu_s": first.cpu.as_secs_f64(),
                        "peak_rss_mb": mb(first.peak_rss)},
        "resync_unchanged": {"wall_ms": walls(&unchanged), "peak_rss_mb": mb(peaks(&unchanged))},
        "resync_one_edit": {"wall_ms": walls(&edited), "peak_rss_mb": mb(peaks(&edited))},
        "resync_paragraph_edit": {"wall_ms": walls(&paragraph_edits),
                                  "peak_rss_mb": mb(peaks(&paragraph_edits))},
        "cli_query": {"wall_ms": walls(&queries), "peak_rss_mb": mb(peaks(&queries))},
        "stdio_first_search_ms": median(first_answers),
        "stdio_warm_search_ms": {"p50": percentile(warm.clone(), 0.5), "p95": percentile(warm, 0.95)},
        "stdio_rss_mb": {"now": mb(server_memory.0), "peak": mb(server_memory.1)},
    });
    if args.json {
        let mut report = report;
        report["exact_scan"] = run_vectors(args)?;
        println!("{report}");
        return Ok(());
    }
    let r = &report;
    println!(
        "first index        {:.1} s wall, {:.1} s CPU, peak {:.0} MB ({files} files)",
        first.wall.as_secs_f64(),
        first.cpu.as_secs_f64(),
        mb(first.peak_rss)
    );
    println!(
        "re-sync, no change {:.0} ms (peak {:.0} MB)",
        walls(&unchanged),
        mb(peaks(&unchanged))
    );
    println!(
        "re-sync, one edit  {:.0} ms (peak {:.0} MB)",
        walls(&edited),
        mb(peaks(&edited))
    );
    if !paragraph_edits.is_empty() {
        println!(
            "re-sync, a word    {:.0} ms (peak {:.0} MB): added inside a paragraph",
            walls(&paragraph_edits),
            mb(peaks(&paragraph_edits))
        );
    }
    println!(
        "CLI query          {:.0} ms (peak {:.0} MB)",
        walls(&queries),
        mb(peaks(&queries))
    );
    println!(
        "stdio: spawn → first answered search {:.0} ms; warm search p50 {:.1} / p95 {:.1} ms; RSS {:.0} MB (peak {:.0} MB)",
        r["stdio_first_search_ms"].as_f64().unwrap_or(0.0),
        r["stdio_warm_search_ms"]["p50"].as_f64().unwrap_or(0.0),
        r["stdio_warm_search_ms"]["p95"].as_f64().unwrap_or(0.0),
        mb(server_memory.0),
        mb(server_memory.1)
    );
    run_vectors(args)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::edit_first_paragraph;

    #[test]
    fn the_paragraph_edit_changes_the_first_prose_line_outside_code() {
        let text = "# Title\n\n```\nlet code = one two three four five six seven eight;\n```\n\
                    Short line.\nThe first paragraph of prose that is long enough here.\nMore.\n";
        let edited = edit_first_paragraph(text, "zebra").expect("a prose line");
        assert_eq!(
            edited,
            text.replace("long enough here.", "long enough here. zebra")
        );
        // Only that line changed: the rest, code included, is byte for byte the same.
        assert_eq!(edited.len(), text.len() + " zebra".len());
        assert_eq!(edit_first_paragraph("# Only\n\n- a list\n", "zebra"), None);
        // CRLF line ends stay as they were.
        assert_eq!(
            edit_first_paragraph("one two three four five six seven eight\r\n", "z").as_deref(),
            Some("one two three four five six seven eight z\r\n")
        );
    }
}
