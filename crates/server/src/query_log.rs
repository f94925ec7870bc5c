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
use serde_json::{Value, json};

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

/// The hits of a search as logged: where they are and how well they matched.
pub fn hits_json(hits: &[Hit]) -> Value {
    Value::Array(
        hits.iter()
            .map(|h| {
                json!({
                    "path": h.path(),
                    "lines": [h.line_start, h.line_end],
                    "similarity": crate::format::rounded(h.similarity, 4),
                    "score": crate::format::rounded(h.score, 5),
                })
            })
            .collect(),
    )
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
    pub fn record(&self, folder: &str, mut entry: Value) {
        if let Value::Object(m) = &mut entry {
            let ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            m.insert("ts".into(), json!(ms));
            m.insert("folder".into(), json!(folder));
        }
        if let Some(shared) = &self.shared {
            if let Err(e) = shared.append(&entry.to_string())
                && !self.warned.swap(true, Ordering::Relaxed)
            {
                tracing::warn!("the shared query log: {e}; entries are skipped");
            }
            return;
        }
        let Ok(_guard) = self.write.lock() else {
            return;
        };
        if let Err(e) = self.append(&entry)
            && !self.warned.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "query log {}: {e}; entries are skipped",
                self.path.display()
            );
        }
    }

    fn append(&self, entry: &Value) -> std::io::Result<()> {
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
        let mut line = entry.to_string();
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
    pub fn entries(&self) -> Vec<Value> {
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
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    out.push(v);
                }
            }
        }
        out
    }

    /// The log summed up for Settings → Usage.
    pub fn summary(&self) -> Value {
        let entries = self.entries();
        let mut latencies = Vec::new();
        let mut by_kind: HashMap<String, usize> = HashMap::new();
        let mut gaps = Vec::new();
        let mut gap_count = 0usize;
        let (mut hook_calls, mut hook_injected) = (0usize, 0usize);
        // (folder, path) → (reads, reads after a search that showed it)
        let mut reads: HashMap<(String, String), (usize, usize)> = HashMap::new();
        let mut shown: HashSet<(String, String)> = HashSet::new();
        for e in &entries {
            let kind = e["kind"].as_str().unwrap_or("").to_string();
            let folder = e["folder"].as_str().unwrap_or("").to_string();
            *by_kind.entry(kind.clone()).or_default() += 1;
            match kind.as_str() {
                "recall" | "search" | "context" => {
                    if let Some(ms) = e["latency_ms"].as_f64() {
                        latencies.push(ms);
                    }
                    let hits = e["hits"].as_array().cloned().unwrap_or_default();
                    for h in &hits {
                        if let Some(p) = h["path"].as_str() {
                            shown.insert((folder.clone(), p.to_string()));
                        }
                    }
                    if kind == "context" {
                        hook_calls += 1;
                        if e["injected"].as_u64().unwrap_or(0) > 0 {
                            hook_injected += 1;
                        }
                        continue;
                    }
                    let best = hits
                        .iter()
                        .filter_map(|h| h["similarity"].as_f64())
                        .fold(f64::NEG_INFINITY, f64::max);
                    let floor = e["min_score"].as_f64().unwrap_or(0.0);
                    if hits.is_empty() || best < floor {
                        gap_count += 1;
                        gaps.push(json!({
                            "query": e["query"],
                            "folder": folder,
                            "best": if hits.is_empty() { Value::Null } else { json!(best) },
                            "ts": e["ts"],
                        }));
                    }
                }
                "read" => {
                    let Some(path) = e["path"].as_str() else {
                        continue;
                    };
                    let key = (folder.clone(), path.to_string());
                    let after = shown.contains(&key);
                    let r = reads.entry(key).or_default();
                    r.0 += 1;
                    r.1 += usize::from(after);
                }
                _ => {}
            }
        }
        latencies.sort_by(f64::total_cmp);
        let mut most_read: Vec<_> = reads.into_iter().collect();
        most_read.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
        let searches = by_kind.get("recall").copied().unwrap_or(0)
            + by_kind.get("search").copied().unwrap_or(0);
        gaps.reverse();
        gaps.truncate(50);
        json!({
            "entries": entries.len(),
            "searches": {
                "total": searches,
                "recall": by_kind.get("recall").copied().unwrap_or(0),
                "web": by_kind.get("search").copied().unwrap_or(0),
                "latency_ms": {
                    "p50": percentile(&latencies, 0.5),
                    "p95": percentile(&latencies, 0.95),
                },
            },
            "gaps": { "count": gap_count, "recent": gaps },
            "hook": {
                "calls": hook_calls,
                "injected": hook_injected,
                "rate": if hook_calls == 0 { 0.0 } else { hook_injected as f64 / hook_calls as f64 },
            },
            "most_read": most_read.into_iter().take(20).map(|((folder, path), (n, after))| json!({
                "folder": folder, "path": path, "reads": n, "after_search": after,
            })).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarises_gaps_hook_rate_and_reads() {
        let dir = tempfile::tempdir().unwrap();
        let log = QueryLog::new(dir.path().join("query-log.jsonl"));
        log.record(
            "work",
            json!({"kind": "recall", "query": "backups", "latency_ms": 5.0, "min_score": 0.3,
                   "hits": [{"path": "b.md", "similarity": 0.6}]}),
        );
        log.record(
            "work",
            json!({"kind": "search", "query": "zebra", "latency_ms": 7.0, "min_score": 0.3,
                   "hits": [{"path": "c.md", "similarity": 0.1}]}),
        );
        log.record(
            "work",
            json!({"kind": "context", "query": "x", "injected": 2, "hits": []}),
        );
        log.record(
            "work",
            json!({"kind": "context", "query": "y", "injected": 0, "hits": []}),
        );
        log.record("work", json!({"kind": "read", "path": "b.md"}));
        log.record("work", json!({"kind": "read", "path": "z.md"}));
        let s = log.summary();
        assert_eq!(s["entries"], 6);
        assert_eq!(s["searches"]["total"], 2);
        assert_eq!(s["gaps"]["count"], 1);
        assert_eq!(s["gaps"]["recent"][0]["query"], "zebra");
        assert_eq!(s["hook"]["rate"], 0.5);
        let reads = s["most_read"].as_array().unwrap();
        let b = reads.iter().find(|r| r["path"] == "b.md").unwrap();
        assert_eq!(b["after_search"], 1);
        let z = reads.iter().find(|r| r["path"] == "z.md").unwrap();
        assert_eq!(z["after_search"], 0);
        log.clear().unwrap();
        assert_eq!(log.summary()["entries"], 0);
    }

    #[test]
    fn rotation_keeps_one_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let log = QueryLog::with_limit(dir.path().join("query-log.jsonl"), 1);
        for q in ["a", "b", "c"] {
            log.record("f", json!({"kind": "recall", "query": q}));
        }
        let queries: Vec<Value> = log.entries().iter().map(|e| e["query"].clone()).collect();
        assert_eq!(
            queries,
            [json!("b"), json!("c")],
            "past the limit, the oldest goes"
        );
    }
}
