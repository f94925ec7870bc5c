//! The sections' vectors one search reads: the snapshot's own, or — when the folder's dense
//! pool is a pgvector index and the snapshot holds no vectors (`DensePool::Pgvector`) — those
//! of this search's candidates, fetched from the records once per stage (the pools and the
//! named documents' sections, the documents they link to, the documents hits link to) and
//! held as int8 like the snapshot's, so ranking reads the same numbers either way.
//!
//! Knows nothing of ranking; never writes the index.

use std::collections::HashMap;

use ragdown_embed::int8::{Int8Vector, quantize};
use ragdown_index::store::{Allowed, VectorIndex};
use ragdown_index::{ChunkRecord, Index, Snapshot};

use crate::SearchError;

/// One fetched section: its vector and its pieces', int8 with one scale each.
struct Fetched {
    values: Vec<i8>,
    scale: f32,
    pieces: Vec<i8>,
    piece_scales: Vec<f32>,
}

/// Where one search reads vectors (see the module's doc).
pub(crate) struct SectionVectors<'a> {
    snap: &'a Snapshot,
    /// The pgvector index to fetch from; `None` when the snapshot holds the vectors.
    records: Option<&'a VectorIndex>,
    fetched: HashMap<i64, Fetched>,
}

impl<'a> SectionVectors<'a> {
    pub(crate) fn new(index: &'a Index, snap: &'a Snapshot) -> Self {
        let records = if snap.holds_vectors() {
            None
        } else {
            index.vector_index()
        };
        Self {
            snap,
            records,
            fetched: HashMap::new(),
        }
    }

    /// The pgvector index the dense pool comes from, when the snapshot holds no vectors.
    pub(crate) fn pool(&self) -> Option<&'a VectorIndex> {
        self.records
    }

    /// Fetches the vectors of the chunks `ids` not fetched yet (nothing to do when the
    /// snapshot holds them).
    pub(crate) fn fetch(&mut self, ids: impl IntoIterator<Item = i64>) -> Result<(), SearchError> {
        let Some(records) = self.records else {
            return Ok(());
        };
        let mut missing: Vec<i64> = ids
            .into_iter()
            .filter(|id| !self.fetched.contains_key(id))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        for (id, (vector, pieces)) in records.vectors(&missing)? {
            let mut fetched = Fetched {
                values: Vec::with_capacity(vector.len()),
                scale: 0.0,
                pieces: Vec::new(),
                piece_scales: Vec::with_capacity(pieces.len()),
            };
            fetched.scale = quantize(&vector, &mut fetched.values);
            for piece in &pieces {
                fetched
                    .piece_scales
                    .push(quantize(piece, &mut fetched.pieces));
            }
            self.fetched.insert(id, fetched);
        }
        Ok(())
    }

    /// Fetches the vectors of every section of `documents`.
    pub(crate) fn fetch_documents(&mut self, documents: &[i64]) -> Result<(), SearchError> {
        if self.records.is_none() {
            return Ok(());
        }
        let snap = self.snap;
        self.fetch(
            documents
                .iter()
                .flat_map(|d| snap.chunks_of(*d))
                .map(|c| c.id),
        )
    }

    /// A live chunk and its vector (empty, so every cosine 0, when it was not fetched).
    pub(crate) fn chunk(&self, id: i64) -> Option<(&'a ChunkRecord, Int8Vector<'_>)> {
        let (record, held) = self.snap.chunk(id)?;
        // Nothing is fetched when the snapshot holds the vectors: no lookup on that hot path.
        if self.records.is_none() {
            return Some((record, held));
        }
        Some((
            record,
            match self.fetched.get(&id) {
                Some(f) => Int8Vector {
                    values: &f.values,
                    scale: f.scale,
                },
                None => held,
            },
        ))
    }

    /// The vectors of a live chunk's pieces.
    pub(crate) fn pieces(&self, id: i64) -> impl Iterator<Item = Int8Vector<'_>> {
        // A snapshot without vectors holds no pieces either, and nothing is fetched for one
        // that holds them: one side is always empty.
        let dim = self.snap.dim.max(1);
        let fetched = self.fetched.get(&id).into_iter().flat_map(move |f| {
            f.pieces
                .chunks_exact(dim)
                .zip(&f.piece_scales)
                .map(|(values, scale)| Int8Vector {
                    values,
                    scale: *scale,
                })
        });
        self.snap.pieces(id).chain(fetched)
    }
}

/// The dense pool's view of a search's filters: every document, or the allowed ones.
pub(crate) fn allowed_for_pool<'b>(
    snap: &Snapshot,
    allowed: &[bool],
    ids: &'b mut Vec<i64>,
) -> Allowed<'b> {
    ids.extend(
        snap.documents()
            .map(|d| d.id)
            .filter(|id| allowed.get(*id as usize).copied().unwrap_or(false)),
    );
    if ids.len() == snap.document_count() {
        Allowed::All
    } else {
        Allowed::Only {
            ids,
            total: snap.document_count(),
        }
    }
}
