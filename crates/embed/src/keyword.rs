//! The stand-in for a model that could not load while an index built with it exists: it
//! carries that index's embedder id and dimension, so the index opens as it is (never rebuilt),
//! and refuses to embed, so searches answer from BM25 alone and syncs keep what is indexed
//! until the model is back.
//!
//! Knows nothing of indexes: the caller reads the recorded id and dimension.

use crate::{EmbedError, Embedder, Result, TextKind};

pub struct KeywordOnly {
    id: String,
    dim: usize,
    reason: String,
}

impl KeywordOnly {
    /// Stands in for the embedder `id` of `dim` dimensions, which could not load for `reason`.
    pub fn new(id: impl Into<String>, dim: usize, reason: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            dim,
            reason: reason.into(),
        }
    }
}

impl Embedder for KeywordOnly {
    fn id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.dim
    }
    /// Keyword hits carry no similarity, so the hook never injects them.
    fn min_score(&self) -> f32 {
        f32::INFINITY
    }
    fn embed(&self, _texts: &[&str], _kind: TextKind) -> Result<Vec<Vec<f32>>> {
        Err(EmbedError::Unavailable(self.reason.clone()))
    }
    fn unavailable(&self) -> Option<&str> {
        Some(&self.reason)
    }
}
