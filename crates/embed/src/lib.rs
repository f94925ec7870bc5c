//! Embedders: turning texts into unit-length vectors. The [`Embedder`] trait, with three
//! implementations — ONNX Runtime for local models ([`onnx`]), any OpenAI-compatible
//! `/embeddings` endpoint ([`openai`]) and feature hashing for fast unit tests ([`hash`]) — the
//! keyword-only stand-in for a model that failed to load ([`keyword`]), a preset's model
//! loaded on first use ([`lazy`]), vectors stored as int8 and their dot product ([`int8`]), plus
//! the model presets and their first-start download ([`preset`], [`download`]), and finding
//! or fetching the ONNX Runtime library ([`runtime`]).
//!
//! Knows nothing of documents, chunks or storage: it receives strings and returns vectors.

pub mod combine;
pub mod download;
pub mod external;
pub mod hash;
pub mod int8;
pub mod keyword;
pub mod lazy;
pub mod onnx;
pub mod openai;
pub mod preset;
pub mod runtime;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use preset::{EmbedderSettings, Preset};

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

/// Scales `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Dot product; the cosine of two unit vectors. The exact dense search runs it once per
/// stored vector, so it is the search's inner loop: on x86-64 with AVX2 and FMA (checked at
/// run time, once) it runs 8-wide fused multiply-adds, else the portable lanes below.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    dot_with(a, b)
}

/// [`dot`] against components of any type that widens to f32 (f32 itself, or the int8 of
/// [`int8`]).
pub(crate) fn dot_with<T: Copy + Into<f32>>(a: &[f32], b: &[T]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU was just checked to have both features the function enables.
            return unsafe { dot_avx2_fma(a, b) };
        }
    }
    dot_lanes::<false, T>(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn dot_avx2_fma<T: Copy + Into<f32>>(a: &[f32], b: &[T]) -> f32 {
    // The same lanes, compiled for AVX2 with fused multiply-adds.
    dot_lanes::<true, T>(a, b)
}

/// Sixteen running sums instead of one: a single sum is a chain the compiler may not reorder
/// (float addition is not associative), so it stays scalar; sixteen independent lanes become
/// SIMD registers. Measured over 1M × 384 vectors (`ragdown bench-system`): one sum 314 ms,
/// these lanes (SSE2) 205 ms, the same lanes under AVX2 and FMA 161–189 ms.
#[inline(always)]
fn dot_lanes<const FMA: bool, T: Copy + Into<f32>>(a: &[f32], b: &[T]) -> f32 {
    const LANES: usize = 16;
    let mut sums = [0f32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, &y)| x * y.into())
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for lane in 0..LANES {
            let y: f32 = y[lane].into();
            sums[lane] = if FMA {
                x[lane].mul_add(y, sums[lane])
            } else {
                sums[lane] + x[lane] * y
            };
        }
    }
    sums.iter().sum::<f32>() + tail
}

/// The ONNX Runtime library: configured, installed, or downloaded once into the models folder.
fn onnx_runtime(settings: &EmbedderSettings, progress: &dyn download::Progress) -> Result<PathBuf> {
    runtime::locate_or_download(
        settings.ort_library.as_deref(),
        &settings.models_dir,
        &settings.ort_endpoint,
        progress,
    )
}

/// Loads the embedder `settings` names, downloading a preset's model on first use.
pub fn load(
    settings: &EmbedderSettings,
    progress: &dyn download::Progress,
) -> Result<Arc<dyn Embedder>> {
    match preset::resolve(&settings.name)? {
        preset::Choice::Hash => Ok(Arc::new(hash::HashEmbedder::new(384))),
        preset::Choice::OpenAi(model) => Ok(Arc::new(openai::OpenAiEmbedder::connect(
            &model,
            &settings.openai_url,
            settings.openai_key.as_deref(),
        )?)),
        preset::Choice::Local(preset) => {
            let library = onnx_runtime(settings, progress)?;
            let dir = download::ensure_preset(
                &preset,
                &settings.models_dir,
                &settings.hub_endpoint,
                progress,
            )?;
            // The files are here; the session (~0.3–0.5 s) is built when first needed.
            let (id, dim, min_score) = (preset.id.clone(), preset.dim, preset.min_score);
            let one_shot = settings.one_shot;
            let settings = settings.clone();
            let loader: lazy::Loader = Box::new(move |build| {
                // A preset's folder is ragdown's own: its weights can be split out to be
                // mapped rather than copied (see `external`).
                let model_file = external::model_for(&dir);
                let load = |file: &Path| {
                    onnx::OnnxEmbedder::load(file, &preset, &settings, &library, build)
                };
                let model = match load(&model_file) {
                    // Split files that no longer load (damaged on disk) never stop the model:
                    // the original loads, and the next load splits it again.
                    Err(EmbedError::ModelLoad { path, reason })
                        if path != dir.join("model.onnx") =>
                    {
                        tracing::warn!(
                            "{}: {reason}; loading model.onnx instead (it is split again next time)",
                            path.display()
                        );
                        external::forget(&dir);
                        load(&dir.join("model.onnx"))?
                    }
                    loaded => loaded?,
                };
                Ok(Arc::new(model) as Arc<dyn Embedder>)
            });
            Ok(Arc::new(lazy::LazyEmbedder::new(
                id, dim, min_score, one_shot, loader,
            )))
        }
        preset::Choice::Directory(dir) => {
            let library = onnx_runtime(settings, progress)?;
            let preset = Preset::for_directory(&dir);
            Ok(Arc::new(onnx::OnnxEmbedder::load(
                &dir.join("model.onnx"),
                &preset,
                settings,
                &library,
                lazy::Build::Full,
            )?))
        }
    }
}
