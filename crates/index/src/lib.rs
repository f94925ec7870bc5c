//! The index of one folder: records in SQLite or PostgreSQL (the source of truth), a BM25
//! index and an in-memory snapshot derived from them, and the diff sync that keeps all three
//! following the files. Owns every byte under the data dir; never touches the documents themselves.
//!
//! Writes go through [`Index::sync`] (one at a time); reads take a [`Snapshot`] and never wait
//! for a running sync.

mod bm25;
mod changes;
pub mod data_dir;
pub mod database_lock;
pub mod forward;
mod index;
pub mod lock;
mod request;
mod resolve;
pub mod shared_log;
pub mod snapshot;
pub mod store;
mod sync;
mod sync_report;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod walk;
pub mod watch;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};

use serde::{Deserialize, Serialize};

pub use bm25::{BM25_VERSION, TermFrequencies};
pub use index::{Holding, Index, pending_changes, recorded_embedder};
pub use snapshot::{ChunkRun, Snapshot};
pub use sync_report::SyncReport;

/// Default largest file indexed (`RAGDOWN_MAX_FILE_BYTES`).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("index records: {0}")]
    Store(#[from] rusqlite::Error),
    #[error("index records in PostgreSQL: {0}")]
    Postgres(#[from] postgres::Error),
    /// The database could not be reached or understood; `url` has its password redacted.
    #[error("PostgreSQL at {url}: {reason}")]
    Database { url: String, reason: String },
    /// The records' schema cannot be used by this version (the message says what to do).
    #[error("{0}")]
    Schema(String),
    /// Coordination between servers sharing records: who is primary, forwarded syncs.
    #[error("{0}")]
    Primary(String),
    #[error("BM25 index: {0}")]
    Bm25(#[from] tantivy::TantivyError),
    #[error("embedding failed: {0}")]
    Embed(#[from] ragdown_embed::EmbedError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A sync found the folder's directory missing: it removes nothing, since a directory that
    /// went away at once (renamed, deleted, a volume unmounted) is not every document deleted.
    #[error(
        "{0}: the folder's directory is missing (renamed, deleted or not mounted); the index \
         keeps its records until it is back"
    )]
    FolderMissing(PathBuf),
    #[error("the index lock was poisoned by a panic; restart ragdown")]
    Poisoned,
    #[error("this process is a reader of the index; the primary process syncs it")]
    Reader,
    #[error("the index needs a rebuild ({0}); start the primary server first")]
    NeedsPrimary(String),
    /// A write's paths failed inside the sync that served them (its error, as text).
    #[error("{0}")]
    Urgent(String),
}

pub type Result<T> = std::result::Result<T, IndexError>;

/// A link as recorded for a document (for backlinks, link following and moves).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// `wiki`, `embed` or `markdown`.
    pub kind: String,
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heading: Option<String>,
    pub line: u32,
}

/// One indexed document as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DocumentRecord {
    pub id: i64,
    /// Root-relative, `/`-separated.
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
    /// blake3 of the bytes, hex.
    pub hash: String,
    pub title: String,
    pub tags: Vec<String>,
    pub aliases: Vec<String>,
    pub description: Option<String>,
    /// Root-relative paths this document replaces.
    pub supersedes: Vec<String>,
    pub created_by: Option<String>,
    pub session: Option<String>,
    pub links: Vec<LinkRecord>,
    pub total_lines: u32,
}

/// A chunk as searches see it (its vector lives beside it in the segment).
#[derive(Debug, Clone)]
pub struct ChunkRecord {
    pub id: i64,
    pub document_id: i64,
    pub ord: u32,
    pub line_start: u32,
    pub line_end: u32,
    pub heading: String,
    pub breadcrumb: String,
    pub text: String,
}

/// Where an index lives and what it indexes.
#[derive(Debug, Clone)]
pub struct IndexSettings {
    /// The folder of documents.
    pub root: PathBuf,
    /// Where the records and BM25 index are kept (derived data only).
    pub data_dir: PathBuf,
    /// Files larger than this are skipped with a warning.
    pub max_file_bytes: u64,
    /// Where the records are kept: the data dir, or a PostgreSQL database shared by servers.
    pub records: store::RecordsLocation,
}

/// Progress of the running sync, readable at any time (stats, progress bars).
#[derive(Debug, Default)]
pub struct SyncStatus {
    pub syncing: AtomicBool,
    /// Files the running sync looks at (changed since the last), and how many it has read.
    pub files_total: AtomicUsize,
    pub files_done: AtomicUsize,
    /// Sections of the changed files read so far, and how many of them are indexed: the
    /// stage that takes the time (embedding).
    pub sections_total: AtomicUsize,
    pub sections_done: AtomicUsize,
    /// Bytes of the files the running sync looks at, counted from the listing before any is
    /// read, and how many of them are done — moving within a file as its sections are
    /// embedded: the one fraction known from the start.
    pub bytes_total: AtomicU64,
    pub bytes_done: AtomicU64,
    /// Unix milliseconds of the last finished sync; 0 = never.
    pub last_sync_ms: AtomicU64,
}

/// A running sync's progress, as searches report it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SyncProgress {
    pub files_done: usize,
    pub files_total: usize,
    /// Sections indexed so far, of those read so far: `sections_total` grows while files are
    /// read, so it is no fraction of the whole; `percent` is.
    pub sections_done: usize,
    pub sections_total: usize,
    /// Bytes done of the bytes to index, known from the start.
    pub bytes_done: u64,
    pub bytes_total: u64,
}

impl SyncProgress {
    /// The progress of several indexes at once (the folders behind the root endpoint), or
    /// `None` when none is syncing.
    pub fn total(each: impl IntoIterator<Item = SyncProgress>) -> Option<SyncProgress> {
        each.into_iter().reduce(|a, b| SyncProgress {
            files_done: a.files_done + b.files_done,
            files_total: a.files_total + b.files_total,
            sections_done: a.sections_done + b.sections_done,
            sections_total: a.sections_total + b.sections_total,
            bytes_done: a.bytes_done + b.bytes_done,
            bytes_total: a.bytes_total + b.bytes_total,
        })
    }

    /// How much of the sync is done, 0–100, by the bytes of the files it looks at (counted
    /// before any is read, and moving within a large file); `None` before they are counted.
    pub fn percent(&self) -> Option<u8> {
        (self.bytes_total > 0).then(|| {
            let share = self.bytes_done.min(self.bytes_total) as f64 / self.bytes_total as f64;
            (share * 100.0).floor() as u8
        })
    }

    /// `indexing: 25% done, 40 of 160 files read, 300 sections indexed so far`, or before
    /// the files are counted `indexing: listing the folder, 0 files read so far`.
    pub fn describe(&self) -> String {
        if self.files_total == 0 {
            return "indexing: listing the folder, 0 files read so far".into();
        }
        let mut text = "indexing: ".to_string();
        if let Some(percent) = self.percent() {
            text.push_str(&format!("{percent}% done, "));
        }
        text.push_str(&format!(
            "{} of {} files read",
            self.files_done, self.files_total
        ));
        if self.sections_done > 0 {
            text.push_str(&format!(", {} sections indexed", self.sections_done));
        }
        text.push_str(" so far");
        text
    }
}

#[cfg(test)]
mod tests;
