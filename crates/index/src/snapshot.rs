//! The read view searches use: every document record and every chunk with its vector (as
//! int8, [`ragdown_embed::int8`]), held in memory as immutable segments behind `Arc`s, so a search holds a consistent view while a
//! sync builds the next one, and publishing a view costs little more than cloning a few maps.
//!
//! Chunk ids only grow (SQLite AUTOINCREMENT), so segments cover increasing id ranges and a
//! chunk is found by two binary searches. A replaced document's old chunks are tombstoned
//! until the sync ends and compacts the segments into one.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ragdown_embed::int8::{Int8Vector, OwnedInt8};

use crate::store::{SnapshotChunk, StoredChunk};
use crate::{ChunkRecord, DocumentRecord};

/// Chunks of increasing id with their vectors, as int8 ([`Int8Vector`]): a quarter of the
/// memory of f32, and a quarter of the bytes an exact scan streams.
#[derive(Debug, Clone)]
pub struct Segment {
    chunks: Vec<ChunkRecord>,
    /// Chunk `i`'s vector is `vectors[i * dim..(i + 1) * dim]` times `scales[i]`.
    vectors: Vec<i8>,
    scales: Vec<f32>,
    /// Piece vectors of every chunk, one after another, with one scale each; chunk `i`'s are
    /// pieces `piece_starts[i]` to `piece_starts[i + 1]`.
    piece_vectors: Vec<i8>,
    piece_scales: Vec<f32>,
    piece_starts: Vec<usize>,
}

impl Default for Segment {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            vectors: Vec::new(),
            scales: Vec::new(),
            piece_vectors: Vec::new(),
            piece_scales: Vec::new(),
            piece_starts: vec![0],
        }
    }
}

impl Segment {
    /// Adds a chunk with its vectors (rounded); without a vector, a chunk of a snapshot whose
    /// dense pool is elsewhere.
    fn push(&mut self, record: ChunkRecord, vector: Option<&OwnedInt8>, pieces: &[OwnedInt8]) {
        self.chunks.push(record);
        if let Some(vector) = vector {
            self.vectors.extend_from_slice(&vector.values);
            self.scales.push(vector.scale);
        }
        for piece in pieces {
            self.piece_vectors.extend_from_slice(&piece.values);
            self.piece_scales.push(piece.scale);
        }
        self.piece_starts.push(self.piece_scales.len());
    }

    /// Adds chunk `i` of `other` as it is stored (no second rounding).
    fn push_from(&mut self, other: &Segment, i: usize, dim: usize) {
        self.chunks.push(other.chunks[i].clone());
        if let (Some(values), Some(scale)) = (
            other.vectors.get(i * dim..(i + 1) * dim),
            other.scales.get(i),
        ) {
            self.vectors.extend_from_slice(values);
            self.scales.push(*scale);
        }
        let (start, end) = other.piece_range(i);
        self.piece_vectors
            .extend_from_slice(&other.piece_vectors[start * dim..end * dim]);
        self.piece_scales
            .extend_from_slice(&other.piece_scales[start..end]);
        self.piece_starts.push(self.piece_scales.len());
    }

    /// Chunk `i`'s vector; empty (every dot product 0) in a segment without vectors.
    fn vector(&self, i: usize, dim: usize) -> Int8Vector<'_> {
        Int8Vector {
            values: self.vectors.get(i * dim..(i + 1) * dim).unwrap_or(&[]),
            scale: self.scales.get(i).copied().unwrap_or(0.0),
        }
    }

    /// The range of chunk `i`'s pieces.
    fn piece_range(&self, i: usize) -> (usize, usize) {
        match (self.piece_starts.get(i), self.piece_starts.get(i + 1)) {
            (Some(&start), Some(&end)) => (start, end),
            _ => (0, 0),
        }
    }

    fn pieces(&self, i: usize, dim: usize) -> impl Iterator<Item = Int8Vector<'_>> {
        let (start, end) = self.piece_range(i);
        (start..end).map(move |p| Int8Vector {
            values: &self.piece_vectors[p * dim..(p + 1) * dim],
            scale: self.piece_scales[p],
        })
    }
}

/// A run of consecutive chunks of one segment with their vectors, for scans split over
/// threads (see [`Snapshot::chunk_runs`]).
#[derive(Debug, Clone, Copy)]
pub struct ChunkRun<'a> {
    pub chunks: &'a [ChunkRecord],
    /// `chunks.len() * dim` int8 components, chunk after chunk.
    pub vectors: &'a [i8],
    /// One scale per chunk.
    pub scales: &'a [f32],
}

#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub dim: usize,
    /// False when the folder's dense pool is a pgvector index (`store::DensePool`): chunks
    /// are then held without vectors, and searches fetch their candidates' from the records.
    holds_vectors: bool,
    documents: Arc<HashMap<i64, Arc<DocumentRecord>>>,
    paths: Arc<HashMap<String, i64>>,
    document_chunks: Arc<HashMap<i64, Vec<i64>>>,
    segments: Vec<Arc<Segment>>,
    removed: Arc<HashSet<i64>>,
    superseded: Arc<HashSet<String>>,
    pending: Segment,
}

impl Snapshot {
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            holds_vectors: true,
            ..Self::default()
        }
    }

    /// An empty snapshot that holds chunks without their vectors (see
    /// [`Snapshot::holds_vectors`]).
    pub fn without_vectors(dim: usize) -> Self {
        Self {
            dim,
            holds_vectors: false,
            ..Self::default()
        }
    }

    /// Builds a snapshot from the records' `documents` and the chunks `read` hands over (see
    /// [`crate::store::RecordStore::snapshot_chunks`]), with their vectors when
    /// `holds_vectors`.
    pub fn load<E>(
        dim: usize,
        holds_vectors: bool,
        documents: Vec<DocumentRecord>,
        read: impl FnOnce(&mut dyn FnMut(SnapshotChunk)) -> Result<(), E>,
    ) -> Result<Self, E> {
        let mut snap = if holds_vectors {
            Self::new(dim)
        } else {
            Self::without_vectors(dim)
        };
        for doc in documents {
            snap.put_document(doc);
        }
        read(&mut |c| snap.push_rounded_chunk(c))?;
        snap.seal();
        snap.refresh_superseded();
        Ok(snap)
    }

    /// The snapshot of everything in `store`, its vectors held when `holds_vectors` (else none
    /// are read): what opening an index loads.
    pub fn from_records(
        store: &mut dyn crate::store::RecordStore,
        dim: usize,
        holds_vectors: bool,
    ) -> crate::Result<Self> {
        let documents = store.documents()?;
        Self::load(dim, holds_vectors, documents, |each| {
            store.snapshot_chunks(holds_vectors, each)
        })
    }

    /// The documents of `store` without their chunks: what a sync that searches nothing
    /// needs (see [`crate::index::Holding::DocumentsOnly`]).
    pub fn documents_only(
        store: &mut dyn crate::store::RecordStore,
        dim: usize,
        holds_vectors: bool,
    ) -> crate::Result<Self> {
        let documents = store.documents()?;
        Self::load(dim, holds_vectors, documents, |_| Ok(()))
    }

    /// Whether chunks are held with their vectors; when not, [`Snapshot::chunk`] gives each an
    /// empty vector and the dense pool comes from the records' pgvector index.
    pub fn holds_vectors(&self) -> bool {
        self.holds_vectors
    }

    pub fn document_count(&self) -> usize {
        self.documents.len()
    }

    pub fn chunk_count(&self) -> usize {
        self.segments.iter().map(|s| s.chunks.len()).sum::<usize>() - self.removed.len()
    }

    pub fn documents(&self) -> impl Iterator<Item = &Arc<DocumentRecord>> {
        self.documents.values()
    }

    pub fn document(&self, id: i64) -> Option<&Arc<DocumentRecord>> {
        self.documents.get(&id)
    }

    pub fn document_by_path(&self, path: &str) -> Option<&Arc<DocumentRecord>> {
        self.paths.get(path).and_then(|id| self.documents.get(id))
    }

    /// Paths some other document's `supersedes` names.
    pub fn superseded(&self) -> &HashSet<String> {
        &self.superseded
    }

    /// Largest document id, for sizing per-document lookup tables.
    pub fn max_document_id(&self) -> i64 {
        self.documents.keys().copied().max().unwrap_or(0)
    }

    /// The segment and position of a live chunk.
    fn locate(&self, id: i64) -> Option<(&Segment, usize)> {
        if self.removed.contains(&id) {
            return None;
        }
        let seg_index = self
            .segments
            .partition_point(|s| s.chunks.first().is_some_and(|c| c.id <= id));
        let segment = self.segments.get(seg_index.checked_sub(1)?)?;
        let i = segment.chunks.binary_search_by_key(&id, |c| c.id).ok()?;
        Some((segment, i))
    }

    /// A live chunk and its vector.
    pub fn chunk(&self, id: i64) -> Option<(&ChunkRecord, Int8Vector<'_>)> {
        let (segment, i) = self.locate(id)?;
        Some((&segment.chunks[i], segment.vector(i, self.dim)))
    }

    /// The vectors of a live chunk's pieces (none for a chunk of one block).
    pub fn pieces(&self, id: i64) -> impl Iterator<Item = Int8Vector<'_>> {
        let dim = self.dim;
        self.locate(id)
            .into_iter()
            .flat_map(move |(segment, i)| segment.pieces(i, dim))
    }

    /// The chunks of one document in order.
    pub fn chunks_of(&self, document_id: i64) -> Vec<&ChunkRecord> {
        self.document_chunks
            .get(&document_id)
            .map(|ids| {
                ids.iter()
                    .filter_map(|id| self.chunk(*id).map(|(c, _)| c))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every live chunk with its vector.
    pub fn chunks(&self) -> impl Iterator<Item = (&ChunkRecord, Int8Vector<'_>)> {
        let dim = self.dim;
        self.segments.iter().flat_map(move |s| {
            s.chunks
                .iter()
                .enumerate()
                .filter(|(_, c)| !self.removed.contains(&c.id))
                .map(move |(i, c)| (c, s.vector(i, dim)))
        })
    }

    /// Every chunk with its vectors, as runs of at most about `1 / parts` of them (each with
    /// the floats of its chunks' vectors), for scans split over threads. Runs may hold
    /// removed chunks: skip those [`Snapshot::is_removed`] names.
    pub fn chunk_runs(&self, parts: usize) -> Vec<ChunkRun<'_>> {
        let total: usize = self.segments.iter().map(|s| s.chunks.len()).sum();
        let run = total.div_ceil(parts.max(1)).max(1);
        let dim = self.dim;
        self.segments
            .iter()
            .flat_map(|s| {
                s.chunks.chunks(run).enumerate().map(move |(k, chunks)| {
                    let first = k * run;
                    // A segment without vectors gives runs without any: a scan finds nothing.
                    ChunkRun {
                        chunks,
                        vectors: s
                            .vectors
                            .get(first * dim..(first + chunks.len()) * dim)
                            .unwrap_or(&[]),
                        scales: s.scales.get(first..first + chunks.len()).unwrap_or(&[]),
                    }
                })
            })
            .collect()
    }

    /// Whether chunk `id` was removed (replaced or deleted) since its segment was written.
    pub fn is_removed(&self, id: i64) -> bool {
        !self.removed.is_empty() && self.removed.contains(&id)
    }

    // ---- writing (used by sync on its private copy) ----

    pub(crate) fn put_document(&mut self, doc: DocumentRecord) {
        Arc::make_mut(&mut self.paths).insert(doc.path.clone(), doc.id);
        Arc::make_mut(&mut self.documents).insert(doc.id, Arc::new(doc));
    }

    /// Tombstones a document's chunks (they are about to be replaced).
    pub(crate) fn retire_chunks(&mut self, document_id: i64) {
        if let Some(ids) = Arc::make_mut(&mut self.document_chunks).remove(&document_id) {
            Arc::make_mut(&mut self.removed).extend(ids);
        }
    }

    pub(crate) fn remove_document(&mut self, path: &str) {
        if let Some(id) = Arc::make_mut(&mut self.paths).remove(path) {
            self.retire_chunks(id);
            Arc::make_mut(&mut self.documents).remove(&id);
        }
    }

    /// Adds a chunk with its f32 vectors (a sync's, just embedded), rounded here.
    pub(crate) fn push_chunk(&mut self, c: StoredChunk) {
        self.push_rounded_chunk(SnapshotChunk::rounded(c, self.dim));
    }

    /// Adds a chunk whose vectors are already rounded; a snapshot without vectors keeps only
    /// its record.
    fn push_rounded_chunk(&mut self, c: SnapshotChunk) {
        if self.holds_vectors && c.vector.is_none() {
            // A snapshot's chunks and vectors go in step: one without is left out, as the
            // records' join leaves out a chunk whose vector is missing.
            return;
        }
        Arc::make_mut(&mut self.document_chunks)
            .entry(c.record.document_id)
            .or_default()
            .push(c.record.id);
        let vector = c.vector.as_ref().filter(|_| self.holds_vectors);
        let pieces = if self.holds_vectors {
            &c.pieces[..]
        } else {
            &[]
        };
        self.pending.push(c.record, vector, pieces);
    }

    /// Freezes chunks pushed since the last seal into a segment.
    pub(crate) fn seal(&mut self) {
        if !self.pending.chunks.is_empty() {
            let segment = std::mem::take(&mut self.pending);
            self.segments.push(Arc::new(segment));
        }
    }

    pub(crate) fn refresh_superseded(&mut self) {
        let set: HashSet<String> = self
            .documents
            .values()
            .flat_map(|d| d.supersedes.iter().cloned())
            .collect();
        self.superseded = Arc::new(set);
    }

    /// Merges segments and drops tombstones (once per sync: O(chunks)).
    pub(crate) fn compact(&mut self) {
        self.seal();
        if self.segments.len() <= 1 && self.removed.is_empty() {
            return;
        }
        let mut merged = Segment::default();
        for segment in &self.segments {
            for (i, c) in segment.chunks.iter().enumerate() {
                if !self.removed.contains(&c.id) {
                    merged.push_from(segment, i, self.dim);
                }
            }
        }
        self.segments = if merged.chunks.is_empty() {
            Vec::new()
        } else {
            vec![Arc::new(merged)]
        };
        self.removed = Arc::new(HashSet::new());
    }
}
