//! What the tools answer, as plain data: one type per kind of answer, produced once by the
//! engine ([`crate::documents`], [`crate::tools::run`]) and rendered at the edge — MCP text by
//! [`crate::format`], JSON (MCP, `/api`, the CLI's `--json`) by `Serialize`. Nothing here reads
//! files or formats text; no caller parses another's output.
//!
//! The JSON shape of each type is the same wherever it appears. Line ranges are `line_start` /
//! `line_end` (inclusive, 1-based) in every output; `path` is the document as the endpoint that
//! answers names it (folder-relative on a folder's endpoint, `folder` beside it where several
//! folders answer).

use ragdown_index::SyncProgress;
use ragdown_search::Hit;
use schemars::JsonSchema;
use serde::{Serialize, Serializer};

use crate::values::{iso, rounded};

/// One search hit, the folder it came from where several folders answered, and its document's
/// path as the answering endpoint names documents.
#[derive(Debug, Clone)]
pub struct FoundHit {
    pub folder: Option<String>,
    pub path: String,
    pub hit: Hit,
}

impl FoundHit {
    /// A hit of the only folder that answered.
    pub fn alone(hit: Hit) -> Self {
        Self {
            folder: None,
            path: hit.path().to_string(),
            hit,
        }
    }

    /// A hit of `folder`, one of several that answered, its path folder-relative (the root
    /// `/mcp` names documents by folder and path).
    pub fn in_folder(folder: &str, hit: Hit) -> Self {
        Self {
            folder: Some(folder.to_string()),
            path: hit.path().to_string(),
            hit,
        }
    }

    /// The path as text output shows it: `[folder] path` where several folders answered.
    pub fn shown_path(&self) -> String {
        match &self.folder {
            Some(folder) => format!("[{folder}] {}", self.path),
            None => self.path.clone(),
        }
    }
}

/// Hits of several folders in one order — fused score, then similarity — keeping the best
/// `limit`.
pub fn best_first(hits: &mut Vec<FoundHit>, limit: usize) {
    hits.sort_by(|a, b| {
        b.hit
            .score
            .total_cmp(&a.hit.score)
            .then(b.hit.similarity.total_cmp(&a.hit.similarity))
    });
    hits.truncate(limit);
}

/// The one JSON shape of a hit (the recall tool's JSON output, `/api/search`, `ragdown query
/// --json`).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Hit")]
struct HitShape<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    folder: Option<&'a str>,
    path: &'a str,
    title: &'a str,
    heading: &'a str,
    line_start: u32,
    line_end: u32,
    /// The cosine, for gating: comparable across queries.
    similarity: f64,
    /// The fused score: orders the hits of one query only.
    score: f64,
    sources: Vec<&'static str>,
    tags: &'a [String],
    modified: String,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_by: Option<&'a str>,
}

/// A hit's schema is its shape's.
impl JsonSchema for FoundHit {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        HitShape::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        HitShape::json_schema(generator)
    }
}

impl Serialize for FoundHit {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let hit = &self.hit;
        HitShape {
            folder: self.folder.as_deref(),
            path: &self.path,
            title: &hit.document.title,
            heading: &hit.heading,
            line_start: hit.line_start,
            line_end: hit.line_end,
            similarity: rounded(hit.similarity, 4),
            score: rounded(hit.score, 5),
            sources: hit.sources.iter().map(|s| s.as_str()).collect(),
            tags: &hit.document.tags,
            modified: iso(hit.document.mtime_ns),
            text: &hit.text,
            created_by: hit.document.created_by.as_deref(),
        }
        .serialize(serializer)
    }
}

/// A search's answer: its hits, best first, and how far indexing is while a sync runs (the
/// hits may then be incomplete).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Recall {
    pub hits: Vec<FoundHit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<SyncProgressShape>")]
    pub indexing: Option<SyncProgress>,
    /// Why these hits are keyword matches with no similarity (the model still loading, or
    /// unable to load); absent for a hybrid search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword_only: Option<String>,
}

/// How far a running sync is, as [`SyncProgress`] serialises (its schema; the index crate
/// knows nothing of schemas).
#[derive(JsonSchema)]
#[allow(dead_code)]
struct SyncProgressShape {
    files_done: usize,
    files_total: usize,
    sections_done: usize,
    sections_total: usize,
    bytes_done: u64,
    bytes_total: u64,
}

/// Lines of one document, as `ragdown_read_doc` returns them.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReadDoc {
    pub path: String,
    pub line_start: usize,
    pub line_end: usize,
    pub total_lines: usize,
    /// The short `base_hash` of the document's bytes.
    pub hash: String,
    /// The format a converted document (PDF, DOCX, …) came from; such a text is read-only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub converted_from: Option<&'static str>,
    /// The link target or alias the path was resolved from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_from: Option<String>,
    pub superseded_by: Vec<String>,
    /// The lines, joined by `\n`.
    pub text: String,
}

/// The documents that link to one document.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Backlinks {
    pub path: String,
    pub backlinks: Vec<Backlink>,
}

/// One document linking to another, with the lines the links are on.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Backlink {
    pub path: String,
    pub title: String,
    pub lines: Vec<LinkLine>,
}

/// A line holding a link, trimmed (and clipped to 240 characters).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LinkLine {
    pub line: u32,
    pub text: String,
}

/// The documents a listing found: `total` matched, `documents` the first of them shown.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Listing {
    pub total: usize,
    pub documents: Vec<Listed>,
}

/// One document as listings show it (`ragdown_list`, `/api/docs`, `ragdown list --json`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Listed {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    pub path: String,
    pub title: String,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub aliases: Vec<String>,
    pub created_by: Option<String>,
    pub session: Option<String>,
    pub superseded_by: Vec<String>,
    /// When the file last changed; JSON has it in milliseconds since the epoch (`mtime_ms`).
    #[serde(rename = "mtime_ms", serialize_with = "as_ms")]
    #[schemars(with = "i64")]
    pub mtime_ns: i64,
    pub size: u64,
    pub chunks: usize,
}

fn as_ms<S: Serializer>(mtime_ns: &i64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_i64(mtime_ns / 1_000_000)
}

/// One folder's statistics (`ragdown_stats`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Stats {
    pub folder: String,
    /// The subfolder a subfolder endpoint serves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    pub files: usize,
    pub chunks: usize,
    pub embedder: String,
    /// How searches answer: hybrid, or keyword-only and why.
    pub search: String,
    pub role: &'static str,
    pub read_only: bool,
    /// Whether a sync runs (only the primary knows).
    pub syncing: Option<bool>,
    pub progress: Progress,
    pub last_sync: Option<LastSyncShape>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_list: Option<Vec<FileChunks>>,
}

/// Files done and in all of the sync that runs (or ran last).
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
pub struct Progress {
    pub files_done: usize,
    pub files_total: usize,
}

/// The last sync, as stats report it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LastSyncShape {
    #[serde(flatten)]
    pub counts: Reindexed,
    pub at: String,
}

/// A document and how many chunks it has.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileChunks {
    pub path: String,
    pub chunks: usize,
}

/// Every folder's statistics at once (the root endpoint).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AllStats {
    pub files: usize,
    pub chunks: usize,
    pub folders: Vec<Stats>,
}

/// What a sync did, as `ragdown_reindex` and stats report it; several add up.
#[derive(Debug, Clone, Copy, Default, Serialize, JsonSchema)]
pub struct Reindexed {
    pub added: usize,
    pub updated: usize,
    pub removed: usize,
    pub unchanged: usize,
    /// Chunks embedded (cache misses).
    pub chunks: usize,
    pub ms: u64,
}

impl From<&ragdown_index::SyncReport> for Reindexed {
    fn from(r: &ragdown_index::SyncReport) -> Self {
        Self {
            added: r.added,
            updated: r.updated,
            removed: r.removed,
            unchanged: r.unchanged,
            chunks: r.embedded,
            ms: r.elapsed.as_millis() as u64,
        }
    }
}

impl std::ops::AddAssign for Reindexed {
    fn add_assign(&mut self, other: Self) {
        self.added += other.added;
        self.updated += other.updated;
        self.removed += other.removed;
        self.unchanged += other.unchanged;
        self.chunks += other.chunks;
        self.ms += other.ms;
    }
}

/// A note `ragdown_remember` saved, and the documents it supersedes.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Saved {
    pub path: String,
    pub supersedes: Vec<String>,
}

/// Content `ragdown_ingest` kept as a document.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Ingested {
    pub path: String,
    pub lines: usize,
    pub source: String,
    /// Whether an earlier ingest of the same source was replaced.
    pub replaced: bool,
}

/// A document `ragdown_write` created or rewrote.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Written {
    pub path: String,
    pub created: bool,
    /// The short hash of the new bytes: the next `base_hash`.
    pub hash: String,
}

/// A document `ragdown_edit` changed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Edited {
    pub path: String,
    /// How many passages were replaced.
    pub replaced: usize,
    pub hash: String,
}

/// A document or subfolder `ragdown_delete` removed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Deleted {
    pub path: String,
}

/// What a move did: folder-relative paths, and the documents whose links were rewritten.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Moved {
    pub from: String,
    pub to: String,
    pub updated: Vec<String>,
}

/// The folders behind the root endpoint that have MCP on.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FolderList {
    pub folders: Vec<FolderEntry>,
}

/// One folder as `ragdown_folders` lists it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FolderEntry {
    pub name: String,
    pub title: String,
    pub documents: usize,
}

/// A folder `ragdown_create_folder` made.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FolderCreated {
    pub name: String,
}

/// Any tool's answer, rendered to MCP text by [`crate::format::answer_text`].
#[derive(Debug, Clone)]
pub enum Answer {
    /// Search hits and how the caller asked to see them.
    Recall(Recall, RecallView),
    /// The hook's block (already the text the prompt gets).
    Context(String),
    ReadDoc(ReadDoc),
    Backlinks(Backlinks),
    Listing(Listing),
    Stats(Box<Stats>),
    AllStats(AllStats),
    Reindexed(Reindexed),
    Saved(Saved),
    Ingested(Ingested),
    Written(Written),
    Edited(Edited),
    Deleted(Deleted),
    Moved(Moved),
    Folders(FolderList),
    FolderCreated(FolderCreated),
}

impl Answer {
    /// The answer as data, for an MCP client that reads `structuredContent` beside the text:
    /// the same JSON `format: json` and `/api` give, and what the tool's output schema
    /// declares. The hook's block is text only.
    pub fn structured(&self) -> Option<serde_json::Value> {
        let value = match self {
            Answer::Context(_) => return None,
            Answer::Recall(recall, _) => serde_json::to_value(recall),
            Answer::ReadDoc(a) => serde_json::to_value(a),
            Answer::Backlinks(a) => serde_json::to_value(a),
            Answer::Listing(a) => serde_json::to_value(a),
            Answer::Stats(a) => serde_json::to_value(a),
            Answer::AllStats(a) => serde_json::to_value(a),
            Answer::Reindexed(a) => serde_json::to_value(a),
            Answer::Saved(a) => serde_json::to_value(a),
            Answer::Ingested(a) => serde_json::to_value(a),
            Answer::Written(a) => serde_json::to_value(a),
            Answer::Edited(a) => serde_json::to_value(a),
            Answer::Deleted(a) => serde_json::to_value(a),
            Answer::Moved(a) => serde_json::to_value(a),
            Answer::Folders(a) => serde_json::to_value(a),
            Answer::FolderCreated(a) => serde_json::to_value(a),
        };
        // Plain data with string keys always becomes a value; were it not to, the client
        // still has the text.
        value.ok()
    }
}

/// `ragdown_stats` at the root endpoint: one folder's statistics, or every folder's.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum StatsAnswer {
    One(Box<Stats>),
    All(AllStats),
}

/// How a recall answer is shown: as text clipped to `max_chars` per hit (0 = whole), or JSON.
#[derive(Debug, Clone, Copy)]
pub enum RecallView {
    Text { max_chars: usize },
    Json,
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::format::{answer_text, json_text};

    fn hit(path: &str, created_by: Option<&str>) -> Hit {
        Hit {
            chunk_id: 3,
            document: Arc::new(ragdown_index::DocumentRecord {
                id: 1,
                path: path.into(),
                size: 10,
                mtime_ns: 1_777_629_600_000_000_000,
                hash: String::new(),
                title: "Backups".into(),
                tags: vec!["ops".into()],
                aliases: vec![],
                description: None,
                supersedes: vec![],
                created_by: created_by.map(Into::into),
                session: None,
                links: vec![],
                total_lines: 9,
            }),
            heading: "Backups › Restore".into(),
            breadcrumb: "Backups › Restore".into(),
            text: "Run pg_restore twice.".into(),
            line_start: 7,
            line_end: 7,
            similarity: 0.748_9,
            score: 0.031_25,
            coverage: 0.5,
            rise: None,
            sources: vec![],
        }
    }

    #[test]
    fn a_hit_has_one_json_shape_with_keys_in_name_order() {
        let alone = Recall {
            hits: vec![FoundHit::alone(hit("ops/backups.md", None))],
            indexing: None,
            keyword_only: None,
        };
        assert_eq!(
            json_text(&alone),
            r#"{"hits":[{"heading":"Backups › Restore","line_end":7,"line_start":7,"modified":"2026-05-01T10:00:00.000Z","path":"ops/backups.md","score":0.03125,"similarity":0.7489,"sources":[],"tags":["ops"],"text":"Run pg_restore twice.","title":"Backups"}]}"#
        );
        // Several folders: the folder beside a folder-relative path, and who wrote it.
        let merged = Recall {
            hits: vec![FoundHit::in_folder(
                "work",
                hit("ops/backups.md", Some("ragdown_write")),
            )],
            indexing: None,
            keyword_only: None,
        };
        let v: serde_json::Value = serde_json::from_str(&json_text(&merged)).unwrap();
        assert_eq!(v["hits"][0]["folder"], "work");
        assert_eq!(v["hits"][0]["path"], "ops/backups.md");
        assert_eq!(v["hits"][0]["created_by"], "ragdown_write");
        // Text names the folder in the path, in the header and the clipped call alike.
        let text = answer_text(&Answer::Recall(merged, RecallView::Text { max_chars: 3 }));
        assert!(
            text.starts_with("[1] [work] ops/backups.md:7-7 — Backups › Restore [#ops] (similarity 0.75, changed 2026-05-01, written by an agent with ragdown_write)\nRun… [clipped: 3 of 21 characters — ragdown_read_doc {path: \"[work] ops/backups.md\""),
            "{text}"
        );
    }

    #[test]
    fn listings_say_when_they_show_only_some() {
        let doc = |path: &str| Listed {
            folder: None,
            path: path.into(),
            title: "T".into(),
            description: Some("what it is".into()),
            tags: vec![],
            aliases: vec!["Alias".into()],
            created_by: None,
            session: None,
            superseded_by: vec![],
            mtime_ns: 1_777_629_600_000_000_000,
            size: 1,
            chunks: 1,
        };
        let some = Listing {
            total: 3,
            documents: vec![doc("a.md"), doc("b.md")],
        };
        assert_eq!(
            answer_text(&Answer::Listing(some.clone())),
            "documents: 2 of 3\na.md — T (changed 2026-05-01, aliases Alias): what it is\nb.md — T (changed 2026-05-01, aliases Alias): what it is"
        );
        let all = Listing { total: 2, ..some };
        assert!(answer_text(&Answer::Listing(all)).starts_with("documents: 2\n"));
        let none = Listing {
            total: 0,
            documents: vec![],
        };
        assert_eq!(answer_text(&Answer::Listing(none)), "No documents.");
        // JSON: milliseconds, as `/api/docs` documents them.
        let v = serde_json::to_value(doc("a.md")).unwrap();
        assert_eq!(v["mtime_ms"], 1_777_629_600_000i64);
        assert!(v.get("folder").is_none());
    }

    #[test]
    fn reindex_counts_add_up() {
        let one = Reindexed {
            added: 1,
            chunks: 4,
            ms: 10,
            ..Default::default()
        };
        let mut all = Reindexed::default();
        all += one;
        all += one;
        assert_eq!(
            json_text(&all),
            r#"{"added":2,"chunks":8,"ms":20,"removed":0,"unchanged":0,"updated":0}"#
        );
    }
}
