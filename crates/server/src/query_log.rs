//! The query log (`RAGDOWN_QUERY_LOG`): one JSON line per search (`recall`, the web UI's
//! `search`), hook call (`context`) and document read (`read`), in `query-log.jsonl` in the data
//! dir, rotated to `query-log.1.jsonl` past 10 MB. [`QueryLog::summary`] sums it up for
//! `GET /api/query-log`: searches and their latency, gaps (the best hit under the minimum
//! score), the hook's injection rate, and the documents read most.
//!
//! With the records shared in PostgreSQL the entries go to one table there instead
//! (`ragdown_index::shared_log`), so every server's Usage sums up the team's searches.
//!
//! Recording never fails a tool: a log that cannot be written is reported once and skipped.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use ragdown_search::Hit;
use serde::{Deserialize, Serialize};

/// The log's file name in a data dir.
pub const FILE_NAME: &str = "query-log.jsonl";

/// Past this size the log is rotated (one old file kept).
pub const MAX_LOG_BYTES: u64 = 10 * 1024 * 1024;

pub struct QueryLog {
    path: PathBuf,
    max_bytes: u64,
    write: Mutex<()>,
    warned: AtomicBool,
    /// With the records shared in PostgreSQL, the servers' one log there instead of the file.
    shared: Option<ragdown_index::shared_log::SharedLog>,
}

/// One line of the log: an [`Entry`] stamped with when and in which folder (`*`: the root
/// endpoint, over every folder). Written and read back as this type; a line that is not one
/// (another version's kind) is skipped.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Line {
    /// Milliseconds since the Unix epoch.
    #[serde(default)]
    pub ts: u64,
    #[serde(default)]
    pub folder: String,
    #[serde(flatten)]
    pub entry: Entry,
}

/// What one line records.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Entry {
    /// An agent's search: `ragdown_recall`, `ragdown query`.
    Recall(Search),
    /// A person's search in the web UI.
    Search(Search),
    /// A hook call (`ragdown_context`).
    Context(HookCall),
    /// A document read: `ragdown_read_doc`, or opened in the web UI.
    Read(Read),
}

/// A search, as logged.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Search {
    pub query: String,
    pub filters: Filters,
    pub hits: Vec<LoggedHit>,
    /// The embedder's minimum score: a best hit under it is a gap in the documents.
    pub min_score: f64,
    pub latency_ms: f64,
}

/// The filters a search ran with.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Filters {
    pub path_prefix: Option<String>,
    pub tag: Option<String>,
    pub top_k: usize,
}

/// A hit as logged: where it is and how well it matched.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LoggedHit {
    pub path: String,
    pub lines: [u32; 2],
    pub similarity: f64,
    pub score: f64,
}

impl LoggedHit {
    pub fn of(hit: &Hit) -> Self {
        Self {
            path: hit.path().to_string(),
            lines: [hit.line_start, hit.line_end],
            similarity: crate::format::rounded(hit.similarity, 4),
            score: crate::format::rounded(hit.score, 5),
        }
    }

    /// Every hit of a search.
    pub fn all(hits: &[Hit]) -> Vec<Self> {
        hits.iter().map(Self::of).collect()
    }
}

/// A hook call, as logged: what it injected of its candidates and the gates it ran under.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct HookCall {
    pub query: String,
    /// The sections injected.
    pub hits: Vec<LoggedHit>,
    pub injected: usize,
    pub candidates: usize,
    pub dropped: usize,
    pub min_score: Option<f64>,
    pub min_evidence: f64,
    /// The prompt's names no document knows.
    pub foreign: Vec<String>,
    pub latency_ms: f64,
}

/// A document read, as logged.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Read {
    pub path: String,
    /// The line range an agent asked for (`null` for the whole document).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<[Option<usize>; 2]>,
    /// `web` for the web UI.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// Settings → Usage: the log summed up.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub entries: usize,
    pub searches: Searches,
    pub gaps: Gaps,
    pub hook: HookRate,
    pub most_read: Vec<MostRead>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Searches {
    pub total: usize,
    /// By agents.
    pub recall: usize,
    /// In the web UI.
    pub web: usize,
    pub latency_ms: Percentiles,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
}

/// Searches whose best hit was under the minimum score: what the documents lack.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Gaps {
    pub count: usize,
    /// The latest fifty, newest first.
    pub recent: Vec<Gap>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Gap {
    pub query: String,
    pub folder: String,
    /// The best hit's similarity; `None` when nothing was found.
    pub best: Option<f64>,
    pub ts: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct HookRate {
    pub calls: usize,
    pub injected: usize,
    pub rate: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct MostRead {
    pub folder: String,
    pub path: String,
    pub reads: usize,
    /// How many of the reads followed a search that showed the document.
    pub after_search: usize,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

impl QueryLog {
    /// A log kept at `path` (its place in a data dir is `ragdown_index::data_dir`'s to say).
    pub fn new(path: PathBuf) -> Self {
        Self::with_limit(path, MAX_LOG_BYTES)
    }

    /// A log at `path` rotated past `max_bytes`.
    pub fn with_limit(path: PathBuf, max_bytes: u64) -> Self {
        Self {
            path,
            max_bytes,
            write: Mutex::new(()),
            warned: AtomicBool::new(false),
            shared: None,
        }
    }

    /// The log every server sharing a database keeps there (see `ragdown_index::shared_log`).
    pub fn shared(log: ragdown_index::shared_log::SharedLog) -> Self {
        Self {
            shared: Some(log),
            ..Self::new(PathBuf::new())
        }
    }

    /// The one older file kept: `query-log.1.jsonl` beside `query-log.jsonl`.
    fn rotated(&self) -> PathBuf {
        self.path.with_extension("1.jsonl")
    }

    /// Appends one entry, stamped with the time and folder.
    pub fn record(&self, folder: &str, entry: Entry) {
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let line = Line {
            ts,
            folder: folder.to_string(),
            entry,
        };
        let text = match serde_json::to_string(&line) {
            Ok(text) => text,
            // Plain data of strings and numbers: serialising it cannot fail, but a log never
            // fails a tool.
            Err(_) => return,
        };
        if let Some(shared) = &self.shared {
            if let Err(e) = shared.append(&text)
                && !self.warned.swap(true, Ordering::Relaxed)
            {
                tracing::warn!("the shared query log: {e}; entries are skipped");
            }
            return;
        }
        let Ok(_guard) = self.write.lock() else {
            return;
        };
        if let Err(e) = self.append(&text)
            && !self.warned.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "query log {}: {e}; entries are skipped",
                self.path.display()
            );
        }
    }

    fn append(&self, text: &str) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() >= self.max_bytes) {
            std::fs::rename(&self.path, self.rotated())?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        let mut line = text.to_string();
        line.push('\n');
        file.write_all(line.as_bytes())
    }

    /// Empties the log (both files).
    pub fn clear(&self) -> std::io::Result<()> {
        if let Some(shared) = &self.shared {
            return shared.clear().map_err(std::io::Error::other);
        }
        let _guard = self.write.lock();
        for path in [self.rotated(), self.path.clone()] {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> Vec<Line> {
        if let Some(shared) = &self.shared {
            return match shared.entries() {
                Ok(lines) => lines
                    .iter()
                    .filter_map(|line| serde_json::from_str(line).ok())
                    .collect(),
                Err(e) => {
                    tracing::warn!("the shared query log cannot be read: {e}");
                    Vec::new()
                }
            };
        }
        let mut out = Vec::new();
        for path in [self.rotated(), self.path.clone()] {
            let Ok(file) = std::fs::File::open(&path) else {
                continue;
            };
            for line in std::io::BufReader::new(file).lines().map_while(Result::ok) {
                if let Ok(entry) = serde_json::from_str::<Line>(&line) {
                    out.push(entry);
                }
            }
        }
        out
    }

    /// The log summed up for Settings → Usage.
    pub fn summary(&self) -> Summary {
        let entries = self.entries();
        let mut summary = Summary {
            entries: entries.len(),
            ..Summary::default()
        };
        let mut latencies = Vec::new();
        let mut gaps = Vec::new();
        // (folder, path) → (reads, reads after a search that showed it)
        let mut reads: HashMap<(String, String), (usize, usize)> = HashMap::new();
        let mut shown: HashSet<(String, String)> = HashSet::new();
        let saw = |shown: &mut HashSet<(String, String)>, folder: &str, hits: &[LoggedHit]| {
            for h in hits {
                shown.insert((folder.to_string(), h.path.clone()));
            }
        };
        for line in &entries {
            let folder = &line.folder;
            match &line.entry {
                Entry::Recall(search) | Entry::Search(search) => {
                    if matches!(line.entry, Entry::Recall(_)) {
                        summary.searches.recall += 1;
                    } else {
                        summary.searches.web += 1;
                    }
                    latencies.push(search.latency_ms);
                    saw(&mut shown, folder, &search.hits);
                    let best = search
                        .hits
                        .iter()
                        .map(|h| h.similarity)
                        .fold(f64::NEG_INFINITY, f64::max);
                    if search.hits.is_empty() || best < search.min_score {
                        gaps.push(Gap {
                            query: search.query.clone(),
                            folder: folder.clone(),
                            best: (!search.hits.is_empty()).then_some(best),
                            ts: line.ts,
                        });
                    }
                }
                Entry::Context(call) => {
                    latencies.push(call.latency_ms);
                    saw(&mut shown, folder, &call.hits);
                    summary.hook.calls += 1;
                    summary.hook.injected += usize::from(call.injected > 0);
                }
                Entry::Read(read) => {
                    let key = (folder.clone(), read.path.clone());
                    let after = shown.contains(&key);
                    let r = reads.entry(key).or_default();
                    r.0 += 1;
                    r.1 += usize::from(after);
                }
            }
        }
        latencies.sort_by(f64::total_cmp);
        summary.searches.total = summary.searches.recall + summary.searches.web;
        summary.searches.latency_ms = Percentiles {
            p50: percentile(&latencies, 0.5),
            p95: percentile(&latencies, 0.95),
        };
        summary.gaps.count = gaps.len();
        gaps.reverse();
        gaps.truncate(50);
        summary.gaps.recent = gaps;
        if summary.hook.calls > 0 {
            summary.hook.rate = summary.hook.injected as f64 / summary.hook.calls as f64;
        }
        let mut most_read: Vec<_> = reads.into_iter().collect();
        most_read.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
        summary.most_read = most_read
            .into_iter()
            .take(20)
            .map(|((folder, path), (reads, after_search))| MostRead {
                folder,
                path,
                reads,
                after_search,
            })
            .collect();
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(query: &str, latency_ms: f64, best: &[(&str, f64)]) -> Search {
        Search {
            query: query.into(),
            latency_ms,
            min_score: 0.3,
            hits: best
                .iter()
                .map(|(path, similarity)| LoggedHit {
                    path: path.to_string(),
                    similarity: *similarity,
                    ..LoggedHit::default()
                })
                .collect(),
            ..Search::default()
        }
    }

    fn hook(query: &str, injected: usize) -> Entry {
        Entry::Context(HookCall {
            query: query.into(),
            injected,
            ..HookCall::default()
        })
    }

    fn read(path: &str) -> Entry {
        Entry::Read(Read {
            path: path.into(),
            ..Read::default()
        })
    }

    #[test]
    fn summarises_gaps_hook_rate_and_reads() {
        let dir = tempfile::tempdir().unwrap();
        let log = QueryLog::new(dir.path().join("query-log.jsonl"));
        log.record(
            "work",
            Entry::Recall(search("backups", 5.0, &[("b.md", 0.6)])),
        );
        log.record(
            "work",
            Entry::Search(search("zebra", 7.0, &[("c.md", 0.1)])),
        );
        log.record("work", hook("x", 2));
        log.record("work", hook("y", 0));
        log.record("work", read("b.md"));
        log.record("work", read("z.md"));
        let s = serde_json::to_value(log.summary()).unwrap();
        assert_eq!(s["entries"], 6);
        assert_eq!(s["searches"]["total"], 2);
        assert_eq!(s["searches"]["web"], 1);
        assert_eq!(s["gaps"]["count"], 1);
        assert_eq!(s["gaps"]["recent"][0]["query"], "zebra");
        assert_eq!(s["gaps"]["recent"][0]["best"], 0.1);
        assert_eq!(s["hook"]["rate"], 0.5);
        let reads = s["most_read"].as_array().unwrap();
        let b = reads.iter().find(|r| r["path"] == "b.md").unwrap();
        assert_eq!(b["after_search"], 1);
        let z = reads.iter().find(|r| r["path"] == "z.md").unwrap();
        assert_eq!(z["after_search"], 0);
        log.clear().unwrap();
        assert_eq!(log.summary().entries, 0);
    }

    /// The lines keep the shape earlier versions wrote (`kind`, `ts`, `folder` beside the
    /// entry's fields), so a log written before is still summed up, and lines of a kind this
    /// version does not know are skipped rather than failing the summary.
    #[test]
    fn reads_the_lines_earlier_versions_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("query-log.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"kind":"recall","query":"q","ts":5,"folder":"work","min_score":0.3,"hits":[{"path":"a.md","lines":[1,2],"similarity":0.5,"score":0.1}],"latency_ms":3.0}"#,
                "\n",
                r#"{"kind":"teleport","ts":6}"#,
                "\n",
                r#"{"kind":"read","path":"a.md","folder":"work","ts":7}"#,
                "\n",
            ),
        )
        .unwrap();
        let log = QueryLog::new(path.clone());
        let s = log.summary();
        assert_eq!((s.entries, s.searches.recall, s.gaps.count), (2, 1, 0));
        assert_eq!(s.most_read[0].after_search, 1);
        log.record("work", read("b.md"));
        let written = std::fs::read_to_string(&path).unwrap();
        let last: serde_json::Value =
            serde_json::from_str(written.lines().last().unwrap()).unwrap();
        assert_eq!(last["kind"], "read");
        assert_eq!(last["path"], "b.md");
        assert_eq!(last["folder"], "work");
        assert!(last["ts"].as_u64().unwrap() > 0);
    }

    #[test]
    fn rotation_keeps_one_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let log = QueryLog::with_limit(dir.path().join("query-log.jsonl"), 1);
        for q in ["a", "b", "c"] {
            log.record("f", Entry::Recall(search(q, 1.0, &[])));
        }
        let queries: Vec<String> = log
            .entries()
            .into_iter()
            .map(|line| match line.entry {
                Entry::Recall(s) => s.query,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(queries, ["b", "c"], "past the limit, the oldest goes");
    }
}
