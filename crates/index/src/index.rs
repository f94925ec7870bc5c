//! [`Index`]: one folder's index opened as its primary (writes, rebuilds when the model or a
//! format version changed) or as a reader (follows the primary's generation), its snapshot,
//! BM25 searcher, sync status and the embedder it was built with.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use ragdown_embed::Embedder;

use crate::{
    BM25_VERSION, DocumentRecord, IndexError, IndexSettings, Result, Snapshot, SyncProgress,
    SyncStatus, TermFrequencies, bm25, data_dir, store,
};

/// What an opened index holds in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holding {
    /// Every section with its vectors: what searching needs.
    Everything,
    /// The documents' records only, for a process that syncs and searches nothing (a one-shot
    /// `ragdown sync`): reading every section and vector is most of opening an index, and it
    /// grows with the folder (real-dev, one edit re-synced with the test model, median of 15
    /// interleaved: 195 -> 140 ms). A sync needs only the documents to see what changed; the
    /// sections it writes join them. Searching such an index finds nothing it did not write.
    DocumentsOnly,
}

/// How [`Index::assemble`] sets an opened index up.
pub(crate) struct Assembly {
    /// Why the records were rebuilt when opened, if they were.
    rebuilt_because: Option<String>,
    /// Whether this process writes the index.
    writable: bool,
    holding: Holding,
}

impl Assembly {
    /// A reader's or follower's: never rebuilt, never writing, holding everything.
    fn reading() -> Self {
        Self {
            rebuilt_because: None,
            writable: false,
            holding: Holding::Everything,
        }
    }
}

/// One folder's index.
pub struct Index {
    pub(crate) settings: IndexSettings,
    /// What the snapshot holds (see [`Holding`]).
    pub(crate) holding: Holding,
    pub(crate) embedder: Arc<dyn Embedder>,
    pub(crate) store: Mutex<Box<dyn store::RecordStore>>,
    pub(crate) bm25: bm25::Bm25,
    pub(crate) snapshot: RwLock<Arc<Snapshot>>,
    pub(crate) sync_lock: Mutex<()>,
    /// Paths writers asked to index now, served inside a running sync (`sync.rs`).
    pub(crate) urgent: crate::sync_report::Urgent,
    pub(crate) status: SyncStatus,
    /// Chunks sent to the embedder since this index was opened (cache misses).
    pub(crate) embedded_chunks: AtomicU64,
    pub(crate) embedded_pieces: AtomicU64,
    /// Why the index was rebuilt when opened, if it was.
    pub(crate) rebuilt_because: Option<String>,
    /// Whether this process writes the index (the primary) or only reads it.
    pub(crate) writable: AtomicBool,
    /// Whether this process follows records another server writes, keeping its own BM25
    /// index (see [`Index::open_follower`]).
    pub(crate) follower: AtomicBool,
    /// Set while a refresh cannot reach the database (logged once, not per search).
    pub(crate) database_unreachable: AtomicBool,
    /// The records' generation the snapshot of a reader was loaded at.
    pub(crate) loaded_generation: AtomicU64,
    /// Which engine keeps the records (`sqlite`, `postgres`).
    pub(crate) records_backend: &'static str,
    /// The pgvector HNSW index searches take their dense pool from, when the settings ask
    /// for one (`store::DensePool::Pgvector`); the snapshot then holds no vectors.
    pub(crate) vector_index: Option<store::VectorIndex>,
    /// A value an upper crate derives from this index and keeps with it (the search crate's
    /// calibration of the model on this corpus): the index only holds it, never reads it.
    pub(crate) derived: RwLock<Option<Arc<dyn std::any::Any + Send + Sync>>>,
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

/// The embedder id and dimension the index of `settings` was built with, read without writing
/// anything; `None` when there is no readable index there.
pub fn recorded_embedder(settings: &IndexSettings) -> Option<(String, usize)> {
    match &settings.records {
        store::RecordsLocation::DataDir => {
            store::recorded_embedder(&data_dir::records(&settings.data_dir))
        }
        location => {
            let mut store =
                store::open(location, &settings.data_dir, store::Creating::Never).ok()?;
            Some((
                store.meta("embedder").ok()??,
                store.meta("dim").ok()??.parse().ok()?,
            ))
        }
    }
}

/// How many files of the folder may have changed since the records were written (see
/// [`crate::sync`]: new, or of another size or modification time), read without opening the
/// index: a one-shot sync that will embed a few documents starts loading the model while the
/// index opens. `None` when there are no records yet or they were built with another embedder
/// (then every document is embedded).
pub fn pending_changes(settings: &IndexSettings, embedder_id: &str) -> Option<usize> {
    if settings.records == store::RecordsLocation::DataDir
        && !data_dir::records(&settings.data_dir).is_file()
    {
        return None;
    }
    let mut store = store::open(
        &settings.records,
        &settings.data_dir,
        store::Creating::Never,
    )
    .ok()?;
    if store.meta("embedder").ok()?? != embedder_id {
        return None;
    }
    let documents = store.documents().ok()?;
    let by_path: std::collections::HashMap<&str, &crate::DocumentRecord> =
        documents.iter().map(|d| (d.path.as_str(), d)).collect();
    let files = crate::walk::walk(&settings.root);
    Some(
        files
            .iter()
            .filter(|f| crate::changes::may_have_changed(f, by_path.get(f.path.as_str()).copied()))
            .count(),
    )
}

/// The pgvector index the settings ask for (made and filled when missing), or `None` for the
/// in-memory dense pool.
fn open_vector_index(settings: &IndexSettings, dim: usize) -> Result<Option<store::VectorIndex>> {
    match (&settings.records, settings.records.dense_pool()) {
        (
            store::RecordsLocation::Postgres { url, schema, .. },
            store::DensePool::Pgvector { ef_search },
        ) => Ok(Some(store::VectorIndex::open(url, schema, dim, ef_search)?)),
        _ => Ok(None),
    }
}

/// Opens the records, replacing a SQLite file that cannot be read as ours (derived data). A
/// database that cannot be opened is an error: it may hold other servers' records.
fn open_store(settings: &IndexSettings) -> Result<Box<dyn store::RecordStore>> {
    if settings.records != store::RecordsLocation::DataDir {
        return store::open(
            &settings.records,
            &settings.data_dir,
            store::Creating::WhileDirExists(&settings.root),
        );
    }
    let path = data_dir::records(&settings.data_dir);
    match store::SqliteStore::open(&path) {
        Ok(s) => Ok(Box::new(s)),
        Err(e) => {
            tracing::warn!(
                "rebuilding the index: {} could not be read as ragdown records ({e})",
                path.display()
            );
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
            Ok(Box::new(store::SqliteStore::open(&path)?))
        }
    }
}

impl Index {
    /// Opens the index, rebuilding what does not match the embedder, chunker or layout, and
    /// catching the BM25 index up with the records.
    pub fn open(settings: IndexSettings, embedder: Arc<dyn Embedder>) -> Result<Self> {
        Self::open_holding(settings, embedder, Holding::Everything)
    }

    /// [`Index::open`], holding what `holding` says (everything, whatever it says, when the
    /// BM25 index must be caught up: that re-reads sections from memory).
    pub fn open_holding(
        settings: IndexSettings,
        embedder: Arc<dyn Embedder>,
        holding: Holding,
    ) -> Result<Self> {
        std::fs::create_dir_all(&settings.data_dir).map_err(|source| IndexError::Io {
            path: settings.data_dir.clone(),
            source,
        })?;
        let mut store = open_store(&settings)?;
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
        let bm25 = bm25::Bm25::open(&settings.records.bm25_dir(&settings.data_dir))?;
        let holding = match holding {
            Holding::DocumentsOnly if !bm25_is_level(bm25.committed(), store.generation()?) => {
                Holding::Everything
            }
            asked => asked,
        };
        let writing = Assembly {
            rebuilt_because,
            writable: true,
            holding,
        };
        let index = Self::assemble(settings, embedder, store, bm25, writing)?;
        index.catch_up_bm25()?;
        Ok(index)
    }

    /// Opens the index as `role` has it: the primary writes (fenced at its database epoch),
    /// a follower follows shared records, a reader reads.
    pub fn open_as(
        role: &crate::lock::Role,
        settings: IndexSettings,
        embedder: Arc<dyn Embedder>,
    ) -> Result<Self> {
        Self::open_as_holding(role, settings, embedder, Holding::Everything)
    }

    /// [`Index::open_as`]; the primary holds what `holding` says (a reader or follower
    /// holds everything: it only searches).
    pub fn open_as_holding(
        role: &crate::lock::Role,
        settings: IndexSettings,
        embedder: Arc<dyn Embedder>,
        holding: Holding,
    ) -> Result<Self> {
        use crate::lock::Role;
        match role {
            Role::Primary { database, .. } => {
                let index = Self::open_holding(settings, embedder, holding)?;
                if let Some(database) = database {
                    index.fence(database.epoch())?;
                }
                Ok(index)
            }
            Role::Follower { .. } => Self::open_follower(settings, embedder),
            Role::Reader => Self::open_reader(settings, embedder),
        }
    }

    /// Opens the index as a reader: never rebuilds or writes, sees the primary's commits
    /// through [`Index::refresh`], and fails when the records do not match this embedder.
    pub fn open_reader(settings: IndexSettings, embedder: Arc<dyn Embedder>) -> Result<Self> {
        let store = Self::open_matching_records(&settings, embedder.as_ref())?;
        let bm25 = bm25::Bm25::open_reader(&settings.records.bm25_dir(&settings.data_dir))?;
        Self::assemble(settings, embedder, store, bm25, Assembly::reading())
    }

    /// Opens the index as a follower of records another server writes (a shared database):
    /// the records are only read, but this data dir's BM25 index is its own, caught up from
    /// the journal at open and by every [`Index::refresh`]. Fails like a reader when the
    /// records do not match this embedder (the primary rebuilds, never a follower).
    pub fn open_follower(settings: IndexSettings, embedder: Arc<dyn Embedder>) -> Result<Self> {
        let store = Self::open_matching_records(&settings, embedder.as_ref())?;
        let bm25 = bm25::Bm25::open(&settings.records.bm25_dir(&settings.data_dir))?;
        let index = Self::assemble(settings, embedder, store, bm25, Assembly::reading())?;
        index.follower.store(true, Ordering::Relaxed);
        index.catch_up_bm25()?;
        Ok(index)
    }

    /// The records, when they were built with this embedder and layout; else the error that
    /// sends the caller to the primary.
    fn open_matching_records(
        settings: &IndexSettings,
        embedder: &dyn Embedder,
    ) -> Result<Box<dyn store::RecordStore>> {
        let mut store = store::open(
            &settings.records,
            &settings.data_dir,
            store::Creating::WhileDirExists(&settings.root),
        )?;
        for (key, want) in expected_meta(embedder) {
            let have = store.meta(key)?;
            if have.as_deref() != Some(want.as_str()) {
                return Err(IndexError::NeedsPrimary(format!(
                    "its {key} is {} but this process uses {want}",
                    have.as_deref().unwrap_or("unset")
                )));
            }
        }
        Ok(store)
    }

    /// Builds the index around opened records and BM25, loading the snapshot from the records.
    pub(crate) fn assemble(
        settings: IndexSettings,
        embedder: Arc<dyn Embedder>,
        mut store: Box<dyn store::RecordStore>,
        bm25: bm25::Bm25,
        assembly: Assembly,
    ) -> Result<Self> {
        let Assembly {
            rebuilt_because,
            writable,
            holding,
        } = assembly;
        let generation = store.generation()?;
        let vector_index = open_vector_index(&settings, embedder.dim())?;
        let (dim, holds_vectors) = (embedder.dim(), vector_index.is_none());
        let snapshot = match holding {
            Holding::Everything => Snapshot::from_records(store.as_mut(), dim, holds_vectors)?,
            Holding::DocumentsOnly => Snapshot::documents_only(store.as_mut(), dim, holds_vectors)?,
        };
        let records_backend = store.backend();
        Ok(Self {
            vector_index,
            records_backend,
            holding,
            settings,
            embedder,
            store: Mutex::new(store),
            bm25,
            snapshot: RwLock::new(Arc::new(snapshot)),
            sync_lock: Mutex::new(()),
            urgent: crate::sync_report::Urgent::default(),
            status: SyncStatus::default(),
            embedded_chunks: AtomicU64::new(0),
            embedded_pieces: AtomicU64::new(0),
            rebuilt_because,
            writable: AtomicBool::new(writable),
            follower: AtomicBool::new(false),
            database_unreachable: AtomicBool::new(false),
            loaded_generation: AtomicU64::new(generation),
            derived: RwLock::new(None),
        })
    }

    /// The value kept with [`Index::set_derived`], when it is a `T`.
    pub fn derived<T: std::any::Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let held = match self.derived.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }?;
        held.downcast::<T>().ok()
    }

    /// Keeps `value` with this index, in memory, for [`Index::derived`].
    pub fn set_derived<T: std::any::Any + Send + Sync>(&self, value: Arc<T>) {
        let mut slot = match self.derived.write() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        *slot = Some(value);
    }

    /// A value an upper crate saved in the records' meta table under `key` (prefixed
    /// `derived.`, so it can never be one of the values that decide a rebuild).
    pub fn saved_value(&self, key: &str) -> Result<Option<String>> {
        self.store()?.meta(&format!("derived.{key}"))
    }

    /// Saves `value` under `key` beside the records; a process that does not write the
    /// index (a reader or follower) keeps nothing and says so with `false`.
    pub fn save_value(&self, key: &str, value: &str) -> Result<bool> {
        if !self.is_writable() || self.is_follower() {
            return Ok(false);
        }
        self.store()?.set_meta(&format!("derived.{key}"), value)?;
        Ok(true)
    }

    /// What the snapshot holds: every section, or (a one-shot sync) documents only.
    pub fn holding(&self) -> Holding {
        self.holding
    }

    /// How many sections each document has (documents without any are absent): counted in
    /// memory, or in the records when the index holds documents only.
    pub fn chunk_counts(&self) -> Result<std::collections::HashMap<i64, usize>> {
        match self.holding {
            Holding::DocumentsOnly => self.store()?.chunk_counts(),
            Holding::Everything => {
                let snap = self.snapshot();
                Ok(snap
                    .documents()
                    .map(|d| (d.id, snap.chunks_of(d.id).len()))
                    .filter(|(_, n)| *n > 0)
                    .collect())
            }
        }
    }

    /// Whether the snapshot holds the sections' vectors (no pgvector index serves the dense
    /// pool).
    pub(crate) fn holds_vectors(&self) -> bool {
        self.vector_index.is_none()
    }

    /// The pgvector index the dense pool comes from, when the settings ask for one.
    pub fn vector_index(&self) -> Option<&store::VectorIndex> {
        self.vector_index.as_ref()
    }

    /// Which engine keeps the records: `sqlite` (the data dir) or `postgres` (shared).
    pub fn records_backend(&self) -> &'static str {
        self.records_backend
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
        let refreshed = if self.is_follower() {
            self.follow()
        } else {
            self.reload()
        };
        match refreshed {
            // Records in a database that went away: searches go on answering from memory,
            // and the next refresh after its return catches up.
            Err(e @ (IndexError::Postgres(_) | IndexError::Database { .. })) => {
                if !self.database_unreachable.swap(true, Ordering::Relaxed) {
                    tracing::warn!("answering from memory: the records cannot be read ({e})");
                }
                Ok(false)
            }
            Err(e @ IndexError::NeedsPrimary(_)) if self.is_follower() => {
                if !self.database_unreachable.swap(true, Ordering::Relaxed) {
                    tracing::warn!("answering from memory: {e}");
                }
                Ok(false)
            }
            other => {
                if other.is_ok() && self.database_unreachable.swap(false, Ordering::Relaxed) {
                    tracing::info!("the records can be read again");
                }
                other
            }
        }
    }

    /// How many generations of the records this process's view is behind: a follower's or a
    /// reader's lag (0 for the writer), as status reports show it.
    pub fn generations_behind(&self) -> Result<u64> {
        if self.is_writable() {
            return Ok(0);
        }
        let now = self.store()?.generation()?;
        Ok(now.saturating_sub(self.loaded_generation.load(Ordering::Relaxed)))
    }

    /// Whether this process follows records another server writes (a shared database).
    pub fn is_follower(&self) -> bool {
        self.follower.load(Ordering::Relaxed)
    }

    /// Fences this process's writes at the primary epoch it took (see `database_lock`).
    pub fn fence(&self, epoch: u64) -> Result<()> {
        self.store()?.fence(epoch);
        Ok(())
    }

    /// A primary that lost its database lock becomes a follower again: it stops writing the
    /// records and keeps its BM25 index following them.
    pub fn demote(&self) {
        self.writable.store(false, Ordering::Relaxed);
        self.follower.store(true, Ordering::Relaxed);
    }

    /// A reader on this data dir whose primary process is gone, with the records in a
    /// database another server writes: it takes this data dir's BM25 index and follows.
    pub fn become_follower(&self) -> Result<()> {
        self.bm25.promote()?;
        self.follower.store(true, Ordering::Relaxed);
        self.follow()?;
        Ok(())
    }

    /// A follower catches up: the documents the journal names since its BM25 commit are read
    /// again into a new snapshot and into its BM25 index (all of them when the journal no
    /// longer reaches back that far).
    fn follow(&self) -> Result<bool> {
        let _one_at_a_time = self.sync_lock.lock().map_err(|_| IndexError::Poisoned)?;
        let mut store = self.store()?;
        let generation = store.generation()?;
        let committed = self
            .bm25
            .committed()
            .filter(|(version, _)| *version == BM25_VERSION)
            .map(|(_, at)| at);
        if committed == Some(generation) {
            return Ok(false);
        }
        // The primary rebuilt the records for another embedder or layout: following them would
        // mix vectors of two models. Answer from memory until this server is reopened with it.
        for (key, want) in expected_meta(self.embedder.as_ref()) {
            let have = store.meta(key)?;
            if have.as_deref() != Some(want.as_str()) {
                return Err(IndexError::NeedsPrimary(format!(
                    "the records' {key} is now {} but this server uses {want}",
                    have.as_deref().unwrap_or("unset")
                )));
            }
        }
        let changed = match committed {
            Some(at) if at < generation => store.journal_since(at)?,
            _ => None,
        };
        let Some(changed) = changed else {
            let snapshot =
                Snapshot::from_records(store.as_mut(), self.embedder.dim(), self.holds_vectors())?;
            drop(store);
            self.publish(Arc::new(snapshot));
            self.bm25.clear()?;
            let snap = self.snapshot();
            for doc in snap.documents() {
                self.add_bm25_document(&snap, doc)?;
            }
            self.bm25.commit(generation)?;
            self.loaded_generation.store(generation, Ordering::Relaxed);
            return Ok(true);
        };
        // Read after the generation: a document newer than it is read now and again at the
        // next refresh (harmless), never missed.
        let changed: std::collections::HashSet<String> = changed.into_iter().collect();
        let documents: Vec<_> = store
            .documents()?
            .into_iter()
            .filter(|d| changed.contains(&d.path))
            .collect();
        let mut chunks = Vec::with_capacity(documents.len());
        for doc in &documents {
            chunks.push(store.chunks(Some(doc.id))?);
        }
        drop(store);
        let mut working = (*self.snapshot()).clone();
        for path in &changed {
            working.remove_document(path);
            self.bm25.remove_path(path)?;
        }
        for (doc, doc_chunks) in documents.into_iter().zip(chunks) {
            self.add_bm25(
                &doc,
                doc_chunks.iter().map(|c| {
                    (
                        c.record.id,
                        c.record.breadcrumb.as_str(),
                        c.record.text.as_str(),
                    )
                }),
            )?;
            working.put_document(doc);
            for c in doc_chunks {
                working.push_chunk(c);
            }
        }
        working.compact();
        working.refresh_superseded();
        self.bm25.commit(generation)?;
        self.publish(Arc::new(working));
        self.loaded_generation.store(generation, Ordering::Relaxed);
        Ok(true)
    }

    /// A reader reloads everything the primary committed since the last look.
    fn reload(&self) -> Result<bool> {
        let mut store = self.store()?;
        let generation = store.generation()?;
        if generation == self.loaded_generation.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let snapshot =
            Snapshot::from_records(store.as_mut(), self.embedder.dim(), self.holds_vectors())?;
        drop(store);
        self.bm25.reload()?;
        self.publish(Arc::new(snapshot));
        self.loaded_generation.store(generation, Ordering::Relaxed);
        Ok(true)
    }

    /// For a process about to exit after writing: lets the BM25 merges its commits started
    /// finish instead of abandoning them (see `Bm25::finish_merges`). A reader has nothing to
    /// finish.
    pub fn finish_merges(&self) -> Result<()> {
        if self.is_writable() {
            self.bm25.finish_merges()?;
        }
        Ok(())
    }

    /// Turns a reader into the primary (after it took the primary lock): it may now write.
    pub fn promote(&self) -> Result<()> {
        if self.is_writable() {
            return Ok(());
        }
        self.refresh()?;
        self.bm25.promote()?;
        self.writable.store(true, Ordering::Relaxed);
        self.follower.store(false, Ordering::Relaxed);
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
    /// rebuild, a batch of edits): searches meanwhile answer from what is done so far. A
    /// writer holding no document that has not finished a sync yet is indexing too, with no
    /// file counted: its first sync is still listing the folder, or about to start (a search
    /// can arrive within milliseconds of a server's start, and "no matching documents" then
    /// would be wrong).
    pub fn sync_progress(&self) -> Option<SyncProgress> {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &self.status;
        let progress = SyncProgress {
            files_done: s.files_done.load(Relaxed),
            files_total: s.files_total.load(Relaxed),
            sections_done: s.sections_done.load(Relaxed),
            sections_total: s.sections_total.load(Relaxed),
            bytes_done: s.bytes_done.load(Relaxed),
            bytes_total: s.bytes_total.load(Relaxed),
        };
        if s.syncing.load(Relaxed) && progress.files_total > 0 {
            return Some(progress);
        }
        let first_pending = s.last_sync_ms.load(Relaxed) == 0
            && self.is_writable()
            && self.snapshot().document_count() == 0;
        first_pending.then(SyncProgress::default)
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

    /// How many sections hold every term of `name` as BM25 analyses it: an upper bound on how
    /// many hold `name` itself.
    pub fn chunks_holding_all(&self, name: &str) -> Result<usize> {
        self.bm25.chunks_holding_all(name)
    }

    /// The ids of up to `limit` of the sections holding every term of `name` as BM25
    /// analyses it.
    pub fn chunk_ids_holding_all(&self, name: &str, limit: usize) -> Result<Vec<i64>> {
        self.bm25.chunk_ids_holding_all(name, limit)
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
        if let Some(vector_index) = &self.vector_index {
            // Clearing dropped its table (it is typed for one dimension): make it again.
            vector_index.ensure(self.embedder.dim())?;
        }
        self.bm25.clear()?;
        self.bm25.commit(store.generation()?)?;
        let dim = self.embedder.dim();
        self.publish(Arc::new(if self.holds_vectors() {
            Snapshot::new(dim)
        } else {
            Snapshot::without_vectors(dim)
        }));
        Ok(())
    }

    pub(crate) fn publish(&self, snapshot: Arc<Snapshot>) {
        match self.snapshot.write() {
            Ok(mut s) => *s = snapshot,
            Err(poisoned) => *poisoned.into_inner() = snapshot,
        }
    }

    pub(crate) fn store(&self) -> Result<std::sync::MutexGuard<'_, Box<dyn store::RecordStore>>> {
        self.store.lock().map_err(|_| IndexError::Poisoned)
    }

    /// Brings the BM25 index level with the records: replays the journal when it is behind,
    /// rebuilds it when its layout differs, it is ahead (foreign or restored data) or the
    /// journal no longer reaches back to it.
    pub(crate) fn catch_up_bm25(&self) -> Result<()> {
        let mut store = self.store()?;
        let generation = store.generation()?;
        let committed = self.bm25.committed();
        if bm25_is_level(committed, generation) {
            return Ok(());
        }
        let replay = match committed {
            Some((version, at)) if version == BM25_VERSION && at < generation => {
                store.journal_since(at)?
            }
            _ => None,
        };
        let paths: Vec<String> = match replay {
            Some(paths) => paths,
            // Another layout, ahead of the records (foreign or restored data), or behind
            // further than the journal reaches.
            None => {
                if committed.is_some() || generation > 0 {
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
        // Only the writer prunes: a follower's records are another server's.
        if self.is_writable() {
            store.prune_journal(generation)?;
        }
        Ok(())
    }

    pub(crate) fn add_bm25_document(&self, snap: &Snapshot, doc: &DocumentRecord) -> Result<()> {
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
    pub(crate) fn add_bm25<'a>(
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

/// Whether the BM25 index's `committed` (layout version, generation) is exactly the records'
/// `generation` in this layout.
fn bm25_is_level(committed: Option<(u32, u64)>, generation: u64) -> bool {
    committed == Some((BM25_VERSION, generation))
}
