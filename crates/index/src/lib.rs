//! The index of one folder: records in SQLite (the source of truth), a BM25 index and an
//! in-memory snapshot derived from them, and the diff sync that keeps all three following the
//! files. Owns every byte under the data dir; never touches the documents themselves.
//!
//! Writes go through [`Index::sync`] (one at a time); reads take a [`Snapshot`] and never wait
//! for a running sync.

mod bm25;
pub mod data_dir;
pub mod lock;
mod resolve;
pub mod snapshot;
pub mod store;
mod sync;
pub mod walk;
pub mod watch;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use ragdown_embed::Embedder;
use serde::{Deserialize, Serialize};

pub use bm25::{BM25_VERSION, TermFrequencies};
pub use snapshot::{ChunkRecord, Snapshot};
pub use sync::SyncReport;

/// Default largest file indexed (`RAGDOWN_MAX_FILE_BYTES`).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("index records: {0}")]
    Store(#[from] rusqlite::Error),
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
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// Where an index lives and what it indexes.
#[derive(Debug, Clone)]
pub struct IndexSettings {
    /// The folder of documents.
    pub root: PathBuf,
    /// Where the records and BM25 index are kept (derived data only).
    pub data_dir: PathBuf,
    /// Files larger than this are skipped with a warning.
    pub max_file_bytes: u64,
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
    /// Unix milliseconds of the last finished sync; 0 = never.
    pub last_sync_ms: AtomicU64,
}

/// A running sync's progress, as searches report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SyncProgress {
    pub files_done: usize,
    pub files_total: usize,
    pub sections_done: usize,
    pub sections_total: usize,
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
        })
    }

    /// `indexing: 40 of 160 files read, 300 of 719 sections indexed so far`.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "indexing: {} of {} files read",
            self.files_done, self.files_total
        );
        if self.sections_total > 0 {
            text.push_str(&format!(
                ", {} of {} sections indexed",
                self.sections_done, self.sections_total
            ));
        }
        text.push_str(" so far");
        text
    }
}

pub struct Index {
    settings: IndexSettings,
    embedder: Arc<dyn Embedder>,
    store: Mutex<store::Store>,
    bm25: bm25::Bm25,
    snapshot: RwLock<Arc<Snapshot>>,
    sync_lock: Mutex<()>,
    /// Paths writers asked to index now, served inside a running sync (`sync.rs`).
    urgent: sync::Urgent,
    status: SyncStatus,
    /// Chunks sent to the embedder since this index was opened (cache misses).
    embedded_chunks: AtomicU64,
    embedded_pieces: AtomicU64,
    /// Why the index was rebuilt when opened, if it was.
    rebuilt_because: Option<String>,
    /// Whether this process writes the index (the primary) or only reads it.
    writable: AtomicBool,
    /// The records' generation the snapshot of a reader was loaded at.
    loaded_generation: AtomicU64,
}

/// The meta values an index must carry to be read with `embedder`; any difference rebuilds.
fn expected_meta(embedder: &dyn Embedder) -> [(&'static str, String); 5] {
    [
        ("embedder", embedder.id().to_string()),
        ("dim", embedder.dim().to_string()),
        (
            "chunker_version",
            ragdown_markdown::CHUNKER_VERSION.to_string(),
        ),
        ("store_version", store::STORE_VERSION.to_string()),
        (
            "pieces_version",
            ragdown_markdown::pieces::PIECES_VERSION.to_string(),
        ),
    ]
}

/// The embedder id and dimension the index in `data_dir` was built with, read without writing
/// anything; `None` when there is no readable index there.
pub fn recorded_embedder(data_dir: &Path) -> Option<(String, usize)> {
    store::recorded_embedder(&data_dir::records(data_dir))
}

fn open_store(data_dir: &Path) -> Result<store::Store> {
    let path = data_dir::records(data_dir);
    match store::Store::open(&path) {
        Ok(s) => Ok(s),
        Err(e) => {
            tracing::warn!(
                "rebuilding the index: {} could not be read as ragdown records ({e})",
                path.display()
            );
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
            store::Store::open(&path)
        }
    }
}

impl Index {
    /// Opens the index, rebuilding what does not match the embedder, chunker or layout, and
    /// catching the BM25 index up with the records.
    pub fn open(settings: IndexSettings, embedder: Arc<dyn Embedder>) -> Result<Self> {
        std::fs::create_dir_all(&settings.data_dir).map_err(|source| IndexError::Io {
            path: settings.data_dir.clone(),
            source,
        })?;
        let mut store = open_store(&settings.data_dir)?;
        let expected = expected_meta(embedder.as_ref());
        let mut rebuilt_because = None;
        let mut same_embedder = true;
        for (key, want) in &expected {
            let have = store.meta(key)?;
            if have.as_deref() != Some(want.as_str()) {
                // Keys are checked embedder and dim first: a later mismatch means both held.
                same_embedder = !matches!(*key, "embedder" | "dim");
                rebuilt_because = Some(match have {
                    None => "the index has no meta record".to_string(),
                    Some(have) => format!("the {key} changed from {have} to {want}"),
                });
                break;
            }
        }
        if let Some(reason) = &rebuilt_because {
            if !store.documents()?.is_empty() {
                tracing::warn!("rebuilding the index: {reason}");
            }
            // Cached vectors stay right under the same embedder: a new chunker or layout then
            // embeds only texts it has not seen.
            store.clear(same_embedder)?;
            for (key, value) in &expected {
                store.set_meta(key, value)?;
            }
        }
        let bm25 = bm25::Bm25::open(&data_dir::bm25(&settings.data_dir))?;
        let index = Self::assemble(settings, embedder, store, bm25, rebuilt_because, true)?;
        index.catch_up_bm25()?;
        Ok(index)
    }

    /// Opens the index as a reader: never rebuilds or writes, sees the primary's commits
    /// through [`Index::refresh`], and fails when the records do not match this embedder.
    pub fn open_reader(settings: IndexSettings, embedder: Arc<dyn Embedder>) -> Result<Self> {
        let store = store::Store::open(&data_dir::records(&settings.data_dir))?;
        for (key, want) in expected_meta(embedder.as_ref()) {
            let have = store.meta(key)?;
            if have.as_deref() != Some(want.as_str()) {
                return Err(IndexError::NeedsPrimary(format!(
                    "its {key} is {} but this process uses {want}",
                    have.as_deref().unwrap_or("unset")
                )));
            }
        }
        let bm25 = bm25::Bm25::open_reader(&data_dir::bm25(&settings.data_dir))?;
        Self::assemble(settings, embedder, store, bm25, None, false)
    }

    /// Builds the index around opened records and BM25, loading the snapshot from the records.
    fn assemble(
        settings: IndexSettings,
        embedder: Arc<dyn Embedder>,
        store: store::Store,
        bm25: bm25::Bm25,
        rebuilt_because: Option<String>,
        writable: bool,
    ) -> Result<Self> {
        let generation = store.generation()?;
        let snapshot = Snapshot::load(embedder.dim(), store.documents()?, store.chunks(None)?);
        Ok(Self {
            settings,
            embedder,
            store: Mutex::new(store),
            bm25,
            snapshot: RwLock::new(Arc::new(snapshot)),
            sync_lock: Mutex::new(()),
            urgent: sync::Urgent::default(),
            status: SyncStatus::default(),
            embedded_chunks: AtomicU64::new(0),
            embedded_pieces: AtomicU64::new(0),
            rebuilt_because,
            writable: AtomicBool::new(writable),
            loaded_generation: AtomicU64::new(generation),
        })
    }

    /// Whether this process writes the index.
    pub fn is_writable(&self) -> bool {
        self.writable.load(Ordering::Relaxed)
    }

    /// In a reader: picks up what the primary committed since the last look. Cheap when
    /// nothing changed (one small query). Returns whether anything was reloaded.
    pub fn refresh(&self) -> Result<bool> {
        if self.is_writable() {
            return Ok(false);
        }
        let store = self.store()?;
        let generation = store.generation()?;
        if generation == self.loaded_generation.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let snapshot = Snapshot::load(self.embedder.dim(), store.documents()?, store.chunks(None)?);
        drop(store);
        self.bm25.reload()?;
        self.publish(Arc::new(snapshot));
        self.loaded_generation.store(generation, Ordering::Relaxed);
        Ok(true)
    }

    /// Turns a reader into the primary (after it took the primary lock): it may now write.
    pub fn promote(&self) -> Result<()> {
        if self.is_writable() {
            return Ok(());
        }
        self.refresh()?;
        self.bm25.promote()?;
        self.writable.store(true, Ordering::Relaxed);
        self.catch_up_bm25()
    }

    pub fn settings(&self) -> &IndexSettings {
        &self.settings
    }

    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.embedder
    }

    pub fn rebuilt_because(&self) -> Option<&str> {
        self.rebuilt_because.as_deref()
    }

    /// The current read view. Cheap; never waits for a sync.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        match self.snapshot.read() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn status(&self) -> &SyncStatus {
        &self.status
    }

    /// How far the running sync is, when one runs over changed files (a first index, a
    /// rebuild, a batch of edits): searches meanwhile answer from what is done so far.
    pub fn sync_progress(&self) -> Option<SyncProgress> {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &self.status;
        let progress = SyncProgress {
            files_done: s.files_done.load(Relaxed),
            files_total: s.files_total.load(Relaxed),
            sections_done: s.sections_done.load(Relaxed),
            sections_total: s.sections_total.load(Relaxed),
        };
        (s.syncing.load(Relaxed) && progress.files_total > 0).then_some(progress)
    }

    /// Chunks embedded (cache misses) since the index was opened.
    pub fn embedded_chunks(&self) -> u64 {
        self.embedded_chunks.load(Ordering::Relaxed)
    }

    /// Pieces of chunks embedded (cache misses) since the index was opened.
    pub fn embedded_pieces(&self) -> u64 {
        self.embedded_pieces.load(Ordering::Relaxed)
    }

    /// BM25 top `limit` `(chunk id, score)` among documents `allowed` accepts.
    pub fn bm25_search(
        &self,
        query: &str,
        limit: usize,
        allowed: Arc<dyn Fn(u64) -> bool + Send + Sync>,
    ) -> Result<Vec<(i64, f32)>> {
        self.bm25.search(query, limit, allowed)
    }

    /// How many chunks hold each analysed term of `query` (see [`TermFrequencies`]).
    pub fn term_frequencies(&self, query: &str) -> Result<TermFrequencies> {
        self.bm25.term_frequencies(query)
    }

    /// The distinct terms of `text` as BM25 analyses them.
    pub fn term_set(&self, text: &str) -> std::collections::HashSet<String> {
        self.bm25.term_set(text)
    }

    /// Drops every record, cached vector and BM25 entry, so the next sync re-embeds
    /// everything (`ragdown_reindex {full: true}`).
    pub fn reset(&self) -> Result<()> {
        if !self.is_writable() {
            return Err(IndexError::Reader);
        }
        let _one_at_a_time = self.sync_lock.lock().map_err(|_| IndexError::Poisoned)?;
        let mut store = self.store()?;
        store.clear(false)?;
        self.bm25.clear()?;
        self.bm25.commit(store.generation()?)?;
        self.publish(Arc::new(Snapshot::new(self.embedder.dim())));
        Ok(())
    }

    fn publish(&self, snapshot: Arc<Snapshot>) {
        match self.snapshot.write() {
            Ok(mut s) => *s = snapshot,
            Err(poisoned) => *poisoned.into_inner() = snapshot,
        }
    }

    fn store(&self) -> Result<std::sync::MutexGuard<'_, store::Store>> {
        self.store.lock().map_err(|_| IndexError::Poisoned)
    }

    /// Brings the BM25 index level with the records: replays the journal when it is behind,
    /// rebuilds it when its layout differs or it is ahead (foreign or restored data).
    fn catch_up_bm25(&self) -> Result<()> {
        let store = self.store()?;
        let generation = store.generation()?;
        let committed = self.bm25.committed();
        let paths: Vec<String> = match committed {
            Some((version, at)) if version == BM25_VERSION && at == generation => return Ok(()),
            Some((version, at)) if version == BM25_VERSION && at < generation => {
                store.journal_since(at)?
            }
            other => {
                if other.is_some() || generation > 0 {
                    tracing::info!("rebuilding the BM25 index from the records");
                }
                self.bm25.clear()?;
                let snap = self.snapshot();
                snap.documents().map(|d| d.path.clone()).collect()
            }
        };
        let snap = self.snapshot();
        for path in &paths {
            self.bm25.remove_path(path)?;
            if let Some(doc) = snap.document_by_path(path) {
                self.add_bm25_document(&snap, doc)?;
            }
        }
        self.bm25.commit(generation)?;
        store.prune_journal(generation)?;
        Ok(())
    }

    fn add_bm25_document(&self, snap: &Snapshot, doc: &DocumentRecord) -> Result<()> {
        let chunks = snap.chunks_of(doc.id);
        self.add_bm25(
            doc,
            chunks
                .iter()
                .map(|c| (c.id, c.breadcrumb.as_str(), c.text.as_str())),
        )
    }

    /// Adds a document's chunks `(id, breadcrumb, text)` to the BM25 index: breadcrumb and
    /// text in the body, title, aliases and tags in fields of their own.
    fn add_bm25<'a>(
        &self,
        doc: &DocumentRecord,
        chunks: impl Iterator<Item = (i64, &'a str, &'a str)>,
    ) -> Result<()> {
        let aliases = doc.aliases.join("\n");
        let tags = doc.tags.join(" ");
        for (chunk_id, breadcrumb, text) in chunks {
            let body = format!("{breadcrumb}\n\n{text}");
            self.bm25.add(&bm25::Bm25Chunk {
                chunk_id,
                document_id: doc.id,
                path: &doc.path,
                body: &body,
                title: &doc.title,
                aliases: &aliases,
                tags: &tags,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
