//! The records: documents, chunks, pieces, links, the vector cache keyed by content hash, a
//! journal of changed paths and the meta values (generation among them). The source of
//! truth; the BM25 index and the in-memory snapshot are derived from it.
//!
//! [`RecordStore`] is what the index needs of them; two engines keep them: SQLite in the data
//! dir (`sqlite.rs`, the default) and PostgreSQL (`postgres.rs`, when
//! `RAGDOWN_DATABASE_URL` names one), so several servers share one knowledge base. Above this
//! module nobody knows which runs. Each document is replaced in one transaction, so a crash
//! leaves either its old or its new state. Knows nothing of files on disk or of embedders
//! beyond the vectors it is handed.

mod pgvector;
mod postgres;
mod sqlite;

use std::collections::HashMap;
use std::path::Path;

pub use pgvector::{Allowed, VectorIndex};
pub use postgres::{Creating, PostgresStore, folder_schema, redact_url};
pub(crate) use postgres::{bump_counter, connect_in};

/// Moves the records of a folder renamed from `from` to `to` together with its files:
/// `move_files` renames the directory (a data dir's records move with the folder's data dir,
/// `data_dir::FoldersDataDir`; a database's schema is renamed here in the same step, so other
/// servers never see one moved without the other). Returns what `move_files` returned; the
/// records stay where they were when it failed.
pub fn rename_records<E>(
    from: &RecordsLocation,
    to: &RecordsLocation,
    move_files: impl FnOnce() -> std::result::Result<(), E>,
) -> Result<std::result::Result<(), E>> {
    match (from, to) {
        (
            RecordsLocation::Postgres {
                url, schema: from, ..
            },
            RecordsLocation::Postgres { schema: to, .. },
        ) => postgres::rename_schema(url, from, to, move_files),
        _ => Ok(move_files()),
    }
}

/// Copies the vector cache and the meta values that say what built it (embedder, dimension,
/// layout versions) from the SQLite records in `data_dir` to `to`, so that indexing the same
/// documents there embeds nothing. Returns how many vectors were copied.
pub fn copy_vector_cache(data_dir: &Path, to: &RecordsLocation) -> Result<usize> {
    let path = crate::data_dir::records(data_dir);
    if !path.is_file() {
        return Err(crate::IndexError::Schema(format!(
            "there are no records to move in {}: index the docs dir first, or set \
             RAGDOWN_DATA_DIR to the data dir that holds them",
            data_dir.display()
        )));
    }
    let mut from = SqliteStore::open(&path)?;
    let mut to = open(to, data_dir, Creating::Always)?;
    for key in COPIED_META {
        if let Some(value) = from.meta(key)? {
            to.set_meta(key, &value)?;
        }
    }
    let vectors = from.vectors()?;
    for batch in vectors.chunks(1000) {
        to.put_vectors(batch)?;
    }
    Ok(vectors.len())
}

/// Writes `vectors` (`dim` floats each) into `store` as synthetic documents of
/// `per_document` one-line sections each — the vector cache first, then one transaction per
/// document — for benchmarks at a scale no corpus here reaches (`ragdown bench-system
/// --pgvector`). Chunk ids follow the vectors' order. Returns the documents written.
pub fn write_synthetic(
    store: &mut dyn RecordStore,
    vectors: &[f32],
    dim: usize,
    per_document: usize,
) -> Result<usize> {
    let per_document = per_document.max(1);
    let keys: Vec<[u8; 32]> = (0..vectors.len() / dim.max(1))
        .map(|i| *blake3::hash(format!("synthetic {i}").as_bytes()).as_bytes())
        .collect();
    for (batch, floats) in keys.chunks(1000).zip(vectors.chunks(1000 * dim.max(1))) {
        let entries: Vec<([u8; 32], Vec<f32>)> = batch
            .iter()
            .zip(floats.chunks_exact(dim.max(1)))
            .map(|(key, v)| (*key, v.to_vec()))
            .collect();
        store.put_vectors(&entries)?;
    }
    let mut documents = 0;
    for (d, keys) in keys.chunks(per_document).enumerate() {
        let chunks: Vec<ragdown_markdown::Chunk> = (0..keys.len())
            .map(|i| ragdown_markdown::Chunk {
                heading: format!("Section {i}"),
                breadcrumb: format!("Document {d} › Section {i}"),
                text: String::new(),
                line_start: i + 1,
                line_end: i + 1,
            })
            .collect();
        let new: Vec<NewChunk<'_>> = chunks
            .iter()
            .zip(keys)
            .map(|(chunk, key)| NewChunk {
                chunk,
                vector_key: *key,
                piece_keys: &[],
            })
            .collect();
        let record = DocumentRecord {
            path: format!("synthetic/{d}.md"),
            hash: format!("{d}"),
            total_lines: keys.len() as u32,
            ..Default::default()
        };
        store.replace_document(&record, &new)?;
        documents += 1;
    }
    Ok(documents)
}

/// The meta values that decide whether records are rebuilt (see `index.rs`).
const COPIED_META: [&str; 5] = [
    "embedder",
    "dim",
    "chunker_version",
    "store_version",
    "pieces_version",
];

/// Deletes a folder's files (`remove_files`) and the records of it kept in a database, in one
/// step other servers cannot open it between (a data dir's records go with the data dir).
/// Returns what `remove_files` returned; the records stay when it failed.
pub fn drop_records<E>(
    location: &RecordsLocation,
    remove_files: impl FnOnce() -> std::result::Result<(), E>,
) -> Result<std::result::Result<(), E>> {
    match location {
        RecordsLocation::Postgres { url, schema, .. } => {
            postgres::drop_schema(url, schema, remove_files)
        }
        RecordsLocation::DataDir => Ok(remove_files()),
    }
}
pub use sqlite::{SqliteStore, recorded_embedder};

use ragdown_embed::int8::OwnedInt8;

use crate::{ChunkRecord, DocumentRecord, Result};

/// Bumped when the tables change shape; a mismatch rebuilds the index.
pub const STORE_VERSION: u32 = 2;

/// A chunk as stored, with its vector and its pieces' vectors.
#[derive(Debug, Clone)]
pub struct StoredChunk {
    pub record: ChunkRecord,
    pub vector: Vec<f32>,
    /// The vectors of its pieces (see `ragdown_markdown::pieces`), one after another.
    pub pieces: Vec<f32>,
}

/// A chunk as a snapshot loads it: its vectors rounded to int8 as they were read (a
/// million sections' f32 vectors are never all held at once), or none for a snapshot whose
/// dense pool is a pgvector index.
#[derive(Debug, Clone)]
pub struct SnapshotChunk {
    pub record: ChunkRecord,
    pub vector: Option<OwnedInt8>,
    pub pieces: Vec<OwnedInt8>,
}

impl SnapshotChunk {
    /// A chunk read with f32 vectors (`dim` floats a piece), rounded.
    pub fn rounded(chunk: StoredChunk, dim: usize) -> Self {
        Self {
            vector: Some(OwnedInt8::new(&chunk.vector)),
            pieces: chunk
                .pieces
                .chunks_exact(dim.max(1))
                .map(OwnedInt8::new)
                .collect(),
            record: chunk.record,
        }
    }
}

/// A chunk to write, its vectors already in the cache under `vector_key` and `piece_keys`.
pub struct NewChunk<'a> {
    pub chunk: &'a ragdown_markdown::Chunk,
    pub vector_key: [u8; 32],
    pub piece_keys: &'a [[u8; 32]],
}

/// Where one index's records are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordsLocation {
    /// `records.sqlite` in the index's data dir.
    DataDir,
    /// A PostgreSQL database (`url`, as libpq takes it), in a schema of the folder's own,
    /// with the dense pool `dense` names.
    Postgres {
        url: String,
        schema: String,
        dense: DensePool,
    },
}

impl RecordsLocation {
    /// The BM25 directory of an index whose records are kept at `records`: `bm25/` beside
    /// `records.sqlite`, or one directory per database and schema, so that a data dir switched
    /// between stores never takes one store's BM25 commit for the other's (their generations and
    /// chunk ids are unrelated).
    pub fn bm25_dir(&self, data_dir: &Path) -> std::path::PathBuf {
        match self {
            RecordsLocation::DataDir => crate::data_dir::bm25(data_dir),
            RecordsLocation::Postgres { url, schema, .. } => {
                let digest = blake3::hash(format!("{url}\0{schema}").as_bytes()).to_hex();
                data_dir.join(format!("bm25-postgres-{}", &digest[..16]))
            }
        }
    }
}

impl RecordsLocation {
    /// Where the dense pool comes from: always memory for a data dir's records.
    pub fn dense_pool(&self) -> DensePool {
        match self {
            RecordsLocation::Postgres { dense, .. } => *dense,
            RecordsLocation::DataDir => DensePool::Memory,
        }
    }
}

/// Where searches find the sections closest to a query's vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DensePool {
    /// An exact scan of the vectors each process holds in memory (int8; 388 MB per million
    /// 384-dimension sections). The default.
    #[default]
    Memory,
    /// A pgvector HNSW index in the records' database (`RAGDOWN_DENSE_POOL=pgvector`), for
    /// folders too large to hold in memory: processes hold no vectors, and the walk
    /// considers `ef_search` candidates (`RAGDOWN_HNSW_EF_SEARCH`, default 100).
    Pgvector { ef_search: u32 },
}

/// pgvector's `hnsw.ef_search` unless `RAGDOWN_HNSW_EF_SEARCH` says: recall@10 0.99 at 200k
/// sections, measured when the PostgreSQL backend was designed.
pub const DEFAULT_EF_SEARCH: u32 = 100;

/// A PostgreSQL database holding the records of several folders, each in a schema named
/// `<prefix>_<folder>` (so several knowledge bases can share one database by prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedDatabase {
    pub url: String,
    pub prefix: String,
    /// Where every folder's dense pool comes from.
    pub dense: DensePool,
}

impl SharedDatabase {
    /// Where folder `name`'s records are kept.
    pub fn folder(&self, name: &str) -> RecordsLocation {
        RecordsLocation::Postgres {
            url: self.url.clone(),
            schema: folder_schema(&self.prefix, name),
            dense: self.dense,
        }
    }
}

/// What the index reads and writes of its records, whichever engine keeps them. Methods take
/// `&mut self` because a database connection is used by one caller at a time (the index holds
/// its store behind a mutex).
pub trait RecordStore: Send {
    /// Which engine: `sqlite` or `postgres`.
    fn backend(&self) -> &'static str;

    /// Fences this store's writes at the primary epoch `epoch` (records shared by servers):
    /// a write is refused once another server has taken over. No-op where one process owns
    /// the records.
    fn fence(&mut self, _epoch: u64) {}

    fn meta(&mut self, key: &str) -> Result<Option<String>>;

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()>;

    /// The generation of the last committed change (0 for new records).
    fn generation(&mut self) -> Result<u64> {
        Ok(self
            .meta("generation")?
            .and_then(|g| g.parse().ok())
            .unwrap_or(0))
    }

    /// Empties every table but meta (a rebuild). The vector cache is kept when the embedder
    /// is the same (its keys name the embedder, so its vectors stay right for any text).
    fn clear(&mut self, keep_vectors: bool) -> Result<()>;

    fn documents(&mut self) -> Result<Vec<DocumentRecord>>;

    /// Every chunk with its vector, in id order; `document_id` narrows to one document. A
    /// chunk whose vector is missing from the cache is left out.
    fn chunks(&mut self, document_id: Option<i64>) -> Result<Vec<StoredChunk>>;

    /// The records a load of the whole index joins in memory ([`stored_chunks`],
    /// [`RecordStore::snapshot_chunks`]), by three sequential scans: every cached vector
    /// handed to `vector` as `(key, little-endian f32 bytes)`, then every chunk with its vector
    /// key and every piece's chunk id and key, both in chunk id order.
    fn scan_rows(&mut self, vector: &mut dyn FnMut([u8; 32], &[u8])) -> Result<KeyedRows>;

    /// Every chunk's record in id order, without reading the vector cache.
    fn scan_chunk_records(&mut self, each: &mut dyn FnMut(ChunkRecord)) -> Result<()>;

    /// How many chunks each document has (documents without any are absent).
    fn chunk_counts(&mut self) -> Result<HashMap<i64, usize>>;

    /// Hands `each` every chunk in id order as a snapshot loads it: with its vectors rounded
    /// to int8 as the cache is read, so its f32 form is never held whole (a chunk whose vector
    /// is missing is left out), or, without `vectors`, with none (the dense pool is a pgvector
    /// index) and without reading the cache. A million 384-dimension sections opened in
    /// 14.9 s at a 4.3 GB peak reading f32; 5.8 s at 1.4 GB so.
    fn snapshot_chunks(
        &mut self,
        vectors: bool,
        each: &mut dyn FnMut(SnapshotChunk),
    ) -> Result<()> {
        if !vectors {
            return self.scan_chunk_records(&mut |record| {
                each(SnapshotChunk {
                    record,
                    vector: None,
                    pieces: Vec::new(),
                })
            });
        }
        let rows = read_rows(self, OwnedInt8::from_le_bytes)?;
        join_chunks(rows, |record, vector, pieces| {
            each(SnapshotChunk {
                record,
                vector: Some(vector),
                pieces,
            })
        });
        Ok(())
    }

    /// Cached vectors for `keys` (absent keys are simply missing from the answer).
    fn cached_vectors(&mut self, keys: &[[u8; 32]]) -> Result<HashMap<[u8; 32], Vec<f32>>>;

    /// The whole vector cache (for moving it to another store).
    fn vectors(&mut self) -> Result<Vec<([u8; 32], Vec<f32>)>>;

    /// Adds vectors to the cache; keys already there keep their vector.
    fn put_vectors(&mut self, entries: &[([u8; 32], Vec<f32>)]) -> Result<()>;

    /// Replaces one document and its chunks in a single transaction, journalled under a new
    /// generation. Returns the document id, the new chunk ids and the generation.
    fn replace_document(
        &mut self,
        doc: &DocumentRecord,
        chunks: &[NewChunk<'_>],
    ) -> Result<(i64, Vec<i64>, u64)>;

    /// Records a new size and mtime for a document whose bytes did not change.
    fn touch_document(&mut self, id: i64, size: u64, mtime_ns: i64) -> Result<()>;

    /// Deletes a document and its chunks in one transaction. Returns the generation.
    fn remove_document(&mut self, path: &str) -> Result<u64>;

    /// The generation the journal was last pruned to (0 when never): entries at or under it
    /// are gone.
    fn journal_floor(&mut self) -> Result<u64> {
        Ok(self
            .meta("journal_floor")?
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0))
    }

    /// Paths changed after generation `since`, in path order (for catching BM25 up); `None`
    /// when entries after `since` were already pruned, so the caller must rebuild instead.
    fn journal_since(&mut self, since: u64) -> Result<Option<Vec<String>>>;

    /// Forgets journal entries a BM25 index committed at generation `upto` no longer needs.
    fn prune_journal(&mut self, upto: u64) -> Result<()>;

    /// Drops cached vectors no chunk or piece uses any more: with [`Sweep::Released`] only
    /// among those the replaced and removed documents used since the last collection, with
    /// [`Sweep::All`] over the whole cache. Returns how many were dropped.
    fn collect_unused_vectors(&mut self, sweep: Sweep) -> Result<usize>;

    fn document_id(&mut self, path: &str) -> Result<Option<i64>>;
}

/// How much of the vector cache [`RecordStore::collect_unused_vectors`] looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// The vectors the documents replaced or removed since the last collection used: a
    /// lookup each (real-dev, one edit: ~0.2 ms instead of ~10 ms).
    Released,
    /// Every cached vector: also finds what a crash between a write and its collection, or
    /// a rebuild that kept the cache, left behind.
    All,
}

/// Opens the records `location` names for the index in `data_dir`; records in a database are
/// made only as `creating` allows (a data dir's are made whenever missing).
pub fn open(
    location: &RecordsLocation,
    data_dir: &Path,
    creating: Creating<'_>,
) -> Result<Box<dyn RecordStore>> {
    Ok(match location {
        RecordsLocation::DataDir => {
            Box::new(SqliteStore::open(&crate::data_dir::records(data_dir))?)
        }
        RecordsLocation::Postgres { url, schema, .. } => {
            Box::new(PostgresStore::open_with(url, schema, creating)?)
        }
    })
}

pub fn vector_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn blob_to_vector(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A vector key from the bytes of a stored one (`None` for a malformed key).
fn key_of(bytes: &[u8]) -> Option<[u8; 32]> {
    <[u8; 32]>::try_from(bytes).ok()
}

/// Every chunk with its vector key and every piece's chunk id and vector key, in chunk id
/// order ([`RecordStore::scan_rows`]).
pub type KeyedRows = (Vec<(ChunkRecord, Vec<u8>)>, Vec<(i64, Vec<u8>)>);

/// What [`join_chunks`] joins: the vector cache by key, and the [`KeyedRows`].
type AllRows<V> = (
    HashMap<[u8; 32], V>,
    Vec<(ChunkRecord, Vec<u8>)>,
    Vec<(i64, Vec<u8>)>,
);

/// The records' [`RecordStore::scan_rows`], each cached vector decoded by `decode` as it is
/// read.
fn read_rows<S: RecordStore + ?Sized, V>(
    store: &mut S,
    decode: impl Fn(&[u8]) -> V,
) -> Result<AllRows<V>> {
    let mut vectors = HashMap::new();
    let (chunks, pieces) = store.scan_rows(&mut |key, bytes| {
        vectors.insert(key, decode(bytes));
    })?;
    Ok((vectors, chunks, pieces))
}

/// Chunks from the records' rows, joined in memory: each chunk's vector from the cache by its
/// key, then its pieces' vectors, handed to `each` as `(record, vector, pieces)` in chunk id
/// order. `chunks` and `pieces` must both come in chunk id order (pieces in their order within
/// a chunk). A chunk whose vector is missing is left out, as a join in SQL would leave it. The
/// cache is consumed: a vector's last user takes it instead of a copy, so opening holds each
/// vector once, not twice. Three sequential scans and a map beat a join in SQL, which looks
/// each vector up by its hash in random order (real-dev, 10k vectors: 42 ms of lookups
/// against a 10 ms scan; a million sections: 24 s against 13 s).
fn join_chunks<V: Clone>(
    (mut vectors, chunks, pieces): AllRows<V>,
    mut each: impl FnMut(ChunkRecord, V, Vec<V>),
) {
    let mut users: HashMap<[u8; 32], usize> = HashMap::with_capacity(vectors.len());
    for key in chunks
        .iter()
        .map(|c| &c.1)
        .chain(pieces.iter().map(|p| &p.1))
    {
        if let Some(key) = key_of(key) {
            *users.entry(key).or_default() += 1;
        }
    }
    // The vector under `key` for one of its users: moved out for the last one.
    let mut take = |key: &[u8]| -> Option<V> {
        let key = key_of(key)?;
        let left = users.get_mut(&key)?;
        *left -= 1;
        if *left == 0 {
            vectors.remove(&key)
        } else {
            vectors.get(&key).cloned()
        }
    };
    let mut pieces = pieces.into_iter().peekable();
    for (record, key) in chunks {
        // Pieces of a chunk that is not in the list (none should be) are skipped.
        while pieces.next_if(|(id, _)| *id < record.id).is_some() {}
        let mut own = Vec::new();
        while let Some((_, piece_key)) = pieces.next_if(|(id, _)| *id == record.id) {
            own.extend(take(&piece_key));
        }
        if let Some(vector) = take(&key) {
            each(record, vector, own);
        }
    }
}

/// Every chunk of `store` as [`StoredChunk`]s (f32, pieces one after another).
fn stored_chunks<S: RecordStore + ?Sized>(store: &mut S) -> Result<Vec<StoredChunk>> {
    let rows = read_rows(store, blob_to_vector)?;
    let mut joined = Vec::with_capacity(rows.1.len());
    join_chunks(rows, |record, vector, pieces| {
        joined.push(StoredChunk {
            record,
            vector,
            pieces: pieces.concat(),
        })
    });
    Ok(joined)
}

/// Appends each piece's vector to its chunk; both lists are in chunk id order, so they are
/// walked together. A piece without a vector or a chunk is skipped.
fn attach_pieces<V: AsRef<[f32]>>(
    chunks: &mut [StoredChunk],
    pieces: impl Iterator<Item = (i64, Option<V>)>,
) {
    let mut at = 0;
    for (chunk_id, vector) in pieces {
        while chunks.get(at).is_some_and(|c| c.record.id < chunk_id) {
            at += 1;
        }
        if let Some(c) = chunks.get_mut(at).filter(|c| c.record.id == chunk_id)
            && let Some(vector) = vector
        {
            c.pieces.extend_from_slice(vector.as_ref());
        }
    }
}

/// A JSON list column as strings; a damaged value reads as empty rather than failing the load.
fn json_list<T: serde::de::DeserializeOwned>(text: &str) -> Vec<T> {
    serde_json::from_str(text).unwrap_or_default()
}

/// A list as the JSON text a list column holds.
fn list_json<T: serde::Serialize>(list: &[T]) -> String {
    serde_json::to_string(list).unwrap_or_else(|_| "[]".into())
}

#[cfg(any(test, feature = "test-support"))]
pub mod test_db;
#[cfg(test)]
mod tests;
