//! An embedder that loads its model on first use. A preset's id, dimension and hook floor are
//! known without the model, so an index opens, re-syncs what needs no new vector and answers
//! keyword searches before (or without) the ~0.3–0.5 s a model load costs; the first text to
//! embed loads it, and [`LazyEmbedder::load_in_background`] lets a server start that load at
//! once without anyone waiting for it.
//!
//! A load that fails turns the embedder into the keyword-only stand-in for good (like
//! [`crate::keyword::KeywordOnly`]): [`Embedder::unavailable`] says why from then on.
//! Knows nothing of indexes or searches.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::{EmbedError, Embedder, Result, TextKind};

/// Loads the real embedder; called at most once, with [`Build::Quick`] when a one-shot process
/// needs it for a few texts only.
pub type Loader = Box<dyn FnOnce(Build) -> Result<Arc<dyn Embedder>> + Send>;

/// How the model's session is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// Optimised for throughput: a server, an index of many documents.
    Full,
    /// Built at once, unoptimised: a one-shot command (a CLI query, a re-sync of a few edits)
    /// that embeds a handful of texts and exits. Measured with MiniLM int8 on 2 cores: the
    /// session is ready in ~65 ms instead of ~370–460 ms, its first query ~50 ms instead of
    /// ~5 ms, and a batch runs ~10–20% slower.
    Quick,
}

/// A one-shot process builds [`Build::Quick`] when it is about to embed at most this many
/// documents (or one query).
pub const QUICK_DOCUMENTS: usize = 8;

pub struct LazyEmbedder {
    inner: Arc<Inner>,
    /// The thread of a background load, which a one-shot process waits for before it exits
    /// (see the `Drop` below).
    background: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Drop for LazyEmbedder {
    /// A one-shot process that started a load it then did not need (a re-sync whose edited
    /// files held no new text) waits for it: leaving while ONNX Runtime builds a session on
    /// another thread would run the library's exit-time destructors under it. Servers do not
    /// wait: their load is always used, and a server stopping early should not linger.
    fn drop(&mut self) {
        if !self.inner.one_shot {
            return;
        }
        let running = self.background.get_mut().ok().and_then(Option::take);
        if let Some(thread) = running {
            // A panicked load already left its outcome unset; nothing more to do.
            let _ = thread.join();
        }
    }
}

struct Inner {
    id: String,
    dim: usize,
    min_score: f32,
    loader: Mutex<Option<Loader>>,
    /// The loaded model, or why it could not load.
    outcome: OnceLock<std::result::Result<Arc<dyn Embedder>, String>>,
    /// A background load runs whose callers answer without the model meanwhile.
    answer_meanwhile: AtomicBool,
    /// A one-shot process, which may build [`Build::Quick`].
    one_shot: bool,
    /// How many documents the caller said it is about to embed (`usize::MAX`: unknown).
    planned: AtomicUsize,
}

impl LazyEmbedder {
    /// An embedder known as `id` of `dim` dimensions whose model `loader` loads when first
    /// needed (quickly when `one_shot` and the first need is small).
    pub fn new(
        id: impl Into<String>,
        dim: usize,
        min_score: f32,
        one_shot: bool,
        loader: Loader,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                id: id.into(),
                dim,
                min_score,
                loader: Mutex::new(Some(loader)),
                outcome: OnceLock::new(),
                answer_meanwhile: AtomicBool::new(false),
                one_shot,
                planned: AtomicUsize::new(usize::MAX),
            }),
            background: Mutex::new(None),
        }
    }

    /// Whether the model is loaded.
    pub fn is_loaded(&self) -> bool {
        matches!(self.inner.outcome.get(), Some(Ok(_)))
    }
}

impl Inner {
    /// The loaded model, loading it now if no one has; concurrent callers wait for the one
    /// load. `few` says the need at hand is a query or a planned handful of documents.
    fn model(&self, few: bool) -> Result<&Arc<dyn Embedder>> {
        let outcome = self.outcome.get_or_init(|| {
            let started = std::time::Instant::now();
            let loader = self.loader.lock().ok().and_then(|mut l| l.take());
            let build = if self.one_shot && few {
                Build::Quick
            } else {
                Build::Full
            };
            let loaded = match loader {
                Some(load) => load(build).map_err(|e| e.to_string()),
                None => Err("the model loader was lost to a panic".to_string()),
            };
            match loaded {
                Ok(model) if model.dim() != self.dim => Err(format!(
                    "the model gives {} dimensions where {} were expected",
                    model.dim(),
                    self.dim
                )),
                Ok(model) => {
                    tracing::info!(
                        "embedding model {} loaded ({build:?}) in {} ms",
                        self.id,
                        started.elapsed().as_millis()
                    );
                    Ok(model)
                }
                Err(reason) => {
                    tracing::warn!(
                        "the embedding model {} could not load ({reason}); searches answer from keywords (BM25) only",
                        self.id
                    );
                    Err(reason)
                }
            }
        });
        outcome
            .as_ref()
            .map_err(|reason| EmbedError::Unavailable(reason.clone()))
    }
}

impl Embedder for LazyEmbedder {
    fn id(&self) -> &str {
        &self.inner.id
    }
    fn dim(&self) -> usize {
        self.inner.dim
    }
    fn min_score(&self) -> f32 {
        if self.unavailable().is_some() {
            // As the keyword-only stand-in: keyword hits carry no similarity.
            return f32::INFINITY;
        }
        self.inner.min_score
    }
    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>> {
        let few =
            kind == TextKind::Query || self.inner.planned.load(Ordering::SeqCst) <= QUICK_DOCUMENTS;
        self.inner.model(few)?.embed(texts, kind)
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        self.inner.model(true)?.embed_query(text)
    }
    fn plan(&self, documents: usize) {
        self.inner.planned.store(documents, Ordering::SeqCst);
    }
    fn unavailable(&self) -> Option<&str> {
        match self.inner.outcome.get() {
            Some(Err(reason)) => Some(reason),
            _ => None,
        }
    }
    fn loading(&self) -> bool {
        self.inner.outcome.get().is_none() && self.inner.answer_meanwhile.load(Ordering::SeqCst)
    }
    /// Starts loading the model on a thread of its own; a caller that needs it meanwhile
    /// waits for that load rather than starting another.
    fn load_in_background(&self, answer_meanwhile: bool) {
        if self.inner.outcome.get().is_some() {
            return;
        }
        if answer_meanwhile {
            self.inner.answer_meanwhile.store(true, Ordering::SeqCst);
        }
        let inner = self.inner.clone();
        let started = std::thread::Builder::new()
            .name("ragdown-model".into())
            .spawn(move || {
                // A one-shot process preloads for its query or a planned few documents; a
                // server for everything.
                let few = inner.one_shot;
                inner.model(few).ok();
            });
        match started {
            Ok(thread) => {
                if let Ok(mut background) = self.background.lock() {
                    // An earlier load's thread (if any) ends on the same outcome: no need to
                    // keep it to wait for.
                    *background = Some(thread);
                }
            }
            // Not fatal: the first text to embed loads the model instead.
            Err(e) => tracing::warn!("could not start loading the model in the background: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::HashEmbedder;

    fn counting(loads: Arc<AtomicUsize>, dim: usize) -> Loader {
        Box::new(move |_| {
            loads.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(50));
            Ok(Arc::new(HashEmbedder::new(dim)) as Arc<dyn Embedder>)
        })
    }

    #[test]
    fn loads_once_on_first_embed_and_not_before() {
        let loads = Arc::new(AtomicUsize::new(0));
        let lazy = Arc::new(LazyEmbedder::new(
            "hash-384",
            384,
            0.4,
            false,
            counting(loads.clone(), 384),
        ));
        assert!(!lazy.loading());
        assert_eq!((lazy.id(), lazy.dim()), ("hash-384", 384));
        assert_eq!(loads.load(Ordering::SeqCst), 0, "nothing loads up front");
        assert!(!lazy.is_loaded() && lazy.unavailable().is_none());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lazy = lazy.clone();
                std::thread::spawn(move || lazy.embed_query("restore the backup").unwrap())
            })
            .collect();
        let vectors: Vec<Vec<f32>> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(loads.load(Ordering::SeqCst), 1, "four callers, one load");
        assert!(vectors.iter().all(|v| v == &vectors[0] && v.len() == 384));
        assert!(lazy.is_loaded() && !lazy.loading());
        assert_eq!(lazy.min_score(), 0.4);
    }

    /// A one-shot process builds the quick session for a query or a planned handful of
    /// documents, the optimised one for many or when unplanned; a server always optimises.
    #[test]
    fn a_one_shot_process_builds_quickly_only_for_a_few_texts() {
        let built = |one_shot: bool, planned: Option<usize>, query: bool| {
            let seen = Arc::new(Mutex::new(None));
            let record = seen.clone();
            let lazy = LazyEmbedder::new(
                "h",
                8,
                0.4,
                one_shot,
                Box::new(move |build| {
                    *record.lock().unwrap() = Some(build);
                    Ok(Arc::new(HashEmbedder::new(8)) as Arc<dyn Embedder>)
                }),
            );
            if let Some(documents) = planned {
                lazy.plan(documents);
            }
            if query {
                lazy.embed_query("restore").unwrap();
            } else {
                lazy.embed(&["a section"], TextKind::Document).unwrap();
            }
            let build = *seen.lock().unwrap();
            build.unwrap()
        };
        assert_eq!(built(true, None, true), Build::Quick);
        assert_eq!(built(true, Some(QUICK_DOCUMENTS), false), Build::Quick);
        assert_eq!(built(true, Some(QUICK_DOCUMENTS + 1), false), Build::Full);
        assert_eq!(built(true, None, false), Build::Full, "unplanned");
        assert_eq!(built(false, None, true), Build::Full, "a server");
        assert_eq!(built(false, Some(1), false), Build::Full, "a server");
    }

    #[test]
    fn background_load_is_waited_for_not_repeated() {
        let loads = Arc::new(AtomicUsize::new(0));
        let lazy = LazyEmbedder::new("h", 8, 0.4, false, counting(loads.clone(), 8));
        lazy.load_in_background(true);
        assert!(
            lazy.loading(),
            "searches may answer from keywords meanwhile"
        );
        let v = lazy.embed(&["a", "b"], TextKind::Document).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        assert!(!lazy.loading());
    }

    #[test]
    fn a_warm_up_that_others_wait_for_is_not_loading() {
        let loads = Arc::new(AtomicUsize::new(0));
        let lazy = LazyEmbedder::new("h", 8, 0.4, false, counting(loads.clone(), 8));
        lazy.load_in_background(false);
        assert!(!lazy.loading(), "callers wait for this load");
        assert_eq!(lazy.embed_query("q").unwrap().len(), 8);
        assert_eq!(loads.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_failed_load_is_unavailable_with_its_reason_for_good() {
        let lazy = LazyEmbedder::new(
            "m",
            384,
            0.35,
            false,
            Box::new(|_| {
                Err(EmbedError::RuntimeMissing(
                    "no libonnxruntime.so: set ORT_DYLIB_PATH".into(),
                ))
            }),
        );
        let err = lazy.embed_query("q").unwrap_err();
        assert!(matches!(err, EmbedError::Unavailable(ref r) if r.contains("ORT_DYLIB_PATH")));
        assert!(lazy.unavailable().unwrap().contains("no libonnxruntime.so"));
        assert!(lazy.embed(&["again"], TextKind::Document).is_err());
        assert_eq!(lazy.min_score(), f32::INFINITY);
    }

    #[test]
    fn a_model_of_another_dimension_is_refused() {
        let lazy = LazyEmbedder::new(
            "m",
            384,
            0.35,
            false,
            Box::new(|_| Ok(Arc::new(HashEmbedder::new(768)) as Arc<dyn Embedder>)),
        );
        assert!(lazy.embed_query("q").is_err());
        assert!(lazy.unavailable().unwrap().contains("768"));
    }

    #[test]
    fn a_one_shot_process_waits_for_its_background_load_before_leaving() {
        for one_shot in [true, false] {
            let finished = Arc::new(AtomicBool::new(false));
            let done = finished.clone();
            let loader: Loader = Box::new(move |_| {
                std::thread::sleep(std::time::Duration::from_millis(200));
                done.store(true, Ordering::SeqCst);
                Ok(Arc::new(HashEmbedder::new(8)) as Arc<dyn Embedder>)
            });
            let lazy = LazyEmbedder::new("h", 8, 0.4, one_shot, loader);
            lazy.load_in_background(false);
            drop(lazy);
            // A server's embedder leaves at once; a one-shot one only once the load is done.
            assert_eq!(
                finished.load(Ordering::SeqCst),
                one_shot,
                "one_shot {one_shot}"
            );
        }
    }
}
