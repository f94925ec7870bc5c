//! Embedders: turning texts into unit-length vectors. The [`Embedder`] trait, with three
//! implementations — ONNX Runtime for local models ([`onnx`]), any OpenAI-compatible
//! `/embeddings` endpoint ([`openai`]) and feature hashing for fast unit tests ([`hash`]) — the
//! keyword-only stand-in for a model that failed to load ([`keyword`]), a preset's model
//! loaded on first use ([`lazy`]), vectors stored as int8 and their dot product ([`int8`]), plus
//! the model presets and their first-start download ([`preset`], [`download`]), and finding
//! or fetching the ONNX Runtime library ([`runtime`]).
//!
//! This file declares the trait and the error; the loader that picks an embedder from the
//! settings is `loader.rs`, the vector kernels (`dot`, `normalize`) are `vector.rs`.
//!
//! Knows nothing of documents, chunks or storage: it receives strings and returns vectors.

pub mod combine;
pub mod download;
pub mod external;
pub mod hash;
pub mod int8;
pub mod keyword;
pub mod lazy;
mod loader;
pub mod onnx;
pub mod openai;
pub mod preset;
pub mod runtime;
mod vector;

use std::path::PathBuf;

pub use loader::load;
pub use preset::{EmbedderSettings, Preset};
pub use vector::{dot, normalize};

/// What can go wrong while loading or running an embedder. Every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(
        "unknown embedder {0:?}: use granite-small, bge-small, embeddinggemma, minilm, mpnet, openai:<model>, hash, or a directory holding model.onnx and tokenizer.json"
    )]
    UnknownEmbedder(String),
    /// No ONNX Runtime library to load: the text says what failed and what to set, once.
    #[error("{0}")]
    RuntimeMissing(String),
    #[error(
        "ONNX Runtime could not be loaded from {path}: {reason}. Point ORT_DYLIB_PATH at a libonnxruntime.so of version 1.22 or newer"
    )]
    RuntimeLoad { path: PathBuf, reason: String },
    #[error(
        "model file {0} is missing; delete the folder and start again to download it, or set RAGDOWN_MODELS to a folder holding it"
    )]
    ModelMissing(PathBuf),
    #[error("the model could not be loaded from {path}: {reason}")]
    ModelLoad { path: PathBuf, reason: String },
    #[error("tokenizer error: {0}")]
    Tokenizer(String),
    #[error("inference failed: {0}")]
    Inference(String),
    #[error("download of {url} failed: {reason}")]
    Download { url: String, reason: String },
    #[error("embedding service error: {0}")]
    Remote(String),
    #[error(
        "semantic search is off because the model could not load ({0}); only keyword (BM25) search answers until it is fixed and ragdown restarted"
    )]
    Unavailable(String),
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, EmbedError>;

/// Whether a text is stored (a chunk) or asked (a query); some models prefix them differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    Document,
    Query,
}

/// Turns texts into L2-normalised vectors of [`Embedder::dim`] floats.
pub trait Embedder: Send + Sync {
    /// Stable identity recorded in the index: a change of id rebuilds the index.
    fn id(&self) -> &str;
    fn dim(&self) -> usize;
    /// The cosine below which the hook treats a hit as unrelated, on this model's own scale.
    fn min_score(&self) -> f32;
    /// Embeds many texts, in order.
    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>>;

    /// Why this embedder cannot embed, when it stands in for a model that failed to load
    /// ([`keyword::KeywordOnly`]).
    fn unavailable(&self) -> Option<&str> {
        None
    }

    /// Whether the model is being loaded in the background by one who asked searches to
    /// answer from keywords meanwhile ([`Embedder::load_in_background`]).
    fn loading(&self) -> bool {
        false
    }

    /// Starts loading the model, if it loads lazily and has not yet, without waiting for it;
    /// with `answer_meanwhile`, [`Embedder::loading`] says so until it is loaded.
    fn load_in_background(&self, _answer_meanwhile: bool) {}

    /// Says how many documents the caller is about to embed, so a lazily loaded model in a
    /// one-shot process can be built quickly for a few ([`lazy::Build::Quick`]).
    fn plan(&self, _documents: usize) {}

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let mut out = self.embed(&[text], TextKind::Query)?;
        out.pop()
            .ok_or_else(|| EmbedError::Inference("no vector returned for the query".into()))
    }
}
