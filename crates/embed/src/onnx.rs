//! Local models on ONNX Runtime: the runtime library is loaded at run time (never linked or
//! downloaded at build time), texts are tokenized, sorted by token length and run in batches
//! of at most [`BATCH`] texts and [`BATCH_TOKENS`] padded tokens, padding little, then pooled
//! and L2-normalised.
//!
//! One session serves indexing and searches. A second session cost ~100 MB (weights and
//! ONNX Runtime's per-session state) for a lane that only spared a search one batch of wait;
//! instead a search goes before the next indexing batch ([`SessionLane`]), and batches are
//! kept small enough (by tokens) that waiting for the running one is short: smaller still
//! ([`BATCH_TOKENS_BESIDE_SEARCHES`]) while searches are coming in.

use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::Tensor;
use tokenizers::{Tokenizer, TruncationParams};

use crate::preset::{EmbedderSettings, Pooling, Preset};
use crate::{EmbedError, Embedder, Result, TextKind, normalize};

/// Texts per forward pass: measured on 2 cores, 32 doubles memory for no gain.
pub const BATCH: usize = 16;

/// Padded tokens per forward pass. Measured with MiniLM int8 on 2 cores over 1,500 real
/// sections and paragraphs: 4,096 (16 × 256) peaked at 1,043 MB and took 53 s; 512 peaked at
/// 317 MB and took 34 s — the attention's memory and cost grow with rows × width², and short
/// texts still fill whole batches of [`BATCH`]. A longer text runs alone.
pub const BATCH_TOKENS: usize = 512;

/// Padded tokens per indexing pass while searches are coming in (one seen within
/// [`SEARCHES_RECENT`]): a search waits for the pass running when it arrives, so a shorter
/// pass is a shorter wait, at about a third less indexing speed under that load. Measured on
/// 2 cores (test model, `bench synth30-dev --live-files 300`, a first index while ten threads
/// search): 512 tokens 16.2-17.1 sections/s with search p95 176-179 ms; 256 tokens after a
/// search 10.6-11.3 sections/s, p95 120-121 ms (issue 15 holds it to 160). Not spinning ONNX
/// Runtime's workers instead: p95 130 ms but 5.8 sections/s. A first index nobody searches
/// meanwhile keeps [`BATCH_TOKENS`] (its speed unchanged: 14.2-14.5 s).
pub const BATCH_TOKENS_BESIDE_SEARCHES: usize = 256;

/// How long after a search indexing keeps its passes short.
const SEARCHES_RECENT: Duration = Duration::from_secs(2);

/// Padding a batch may carry: its padded tokens stay within its real tokens plus a quarter,
/// plus [`PADDING_SLACK`]. A forward pass costs about its padded tokens (MiniLM q8, one thread:
/// 16 × 16 tokens 43 ms against 16 runs of one 16-token text 46 ms), so a short text padded to
/// a long one's width is compute thrown away. A word changed inside a paragraph re-embeds its
/// chunk (256 tokens) and that paragraph (59): one pass of 2 × 256 took ~105 ms, two passes
/// ~13 + ~52 ms (that edit's re-sync in 100 READMEs, median of 21 interleaved: q8 241 -> 196
/// ms, the test model 271 -> 234 ms). A first index is unchanged: its sorted lengths are
/// dense, so its batches barely pad.
const PADDING_SLACK: usize = 16;

static RUNTIME: OnceLock<std::result::Result<ort::environment::Environment, EmbedError>> =
    OnceLock::new();

/// Loads the ONNX Runtime library at `path` once per process (the first path wins: a
/// process cannot hold two runtimes).
pub fn ensure_runtime(path: &Path) -> Result<&'static ort::environment::Environment> {
    let outcome = RUNTIME.get_or_init(|| {
        let path = path.to_path_buf();
        let load_error = |reason: String| EmbedError::RuntimeLoad {
            path: path.clone(),
            reason,
        };
        ort::init_from(&path)
            .map_err(|e| load_error(e.to_string()))?
            .with_name("ragdown")
            .build()
            .map_err(|e| load_error(e.to_string()))
    });
    match outcome {
        Ok(environment) => Ok(environment),
        Err(EmbedError::RuntimeMissing(m)) => Err(EmbedError::RuntimeMissing(m.clone())),
        Err(EmbedError::RuntimeLoad { path, reason }) => Err(EmbedError::RuntimeLoad {
            path: path.clone(),
            reason: reason.clone(),
        }),
        Err(other) => Err(EmbedError::Inference(other.to_string())),
    }
}

/// The one session, shared by searches and indexing, with searches first: an indexing batch
/// that finds a search waiting steps back, so a search waits for at most the batch running.
struct SessionLane {
    session: Mutex<Session>,
    queries_waiting: AtomicUsize,
    searches: RecentSearches,
}

/// When the lane last served a search, without a lock (indexing reads it before each pass).
struct RecentSearches {
    since: Instant,
    /// Milliseconds from `since` to the last search, plus one; 0 when there was none.
    last: AtomicU64,
}

impl RecentSearches {
    fn new() -> Self {
        Self {
            since: Instant::now(),
            last: AtomicU64::new(0),
        }
    }

    fn saw_one(&self) {
        let ms = u64::try_from(self.since.elapsed().as_millis()).unwrap_or(u64::MAX - 1);
        self.last.store(ms + 1, Ordering::Relaxed);
    }

    fn within(&self, window: Duration) -> bool {
        match self.last.load(Ordering::Relaxed) {
            0 => false,
            last => {
                let now = u64::try_from(self.since.elapsed().as_millis()).unwrap_or(u64::MAX);
                now.saturating_sub(last - 1) < u64::try_from(window.as_millis()).unwrap_or(u64::MAX)
            }
        }
    }
}

impl SessionLane {
    fn lock(&self, kind: TextKind) -> Result<MutexGuard<'_, Session>> {
        let poisoned = |_| EmbedError::Inference("a previous inference panicked".into());
        if kind == TextKind::Query {
            self.searches.saw_one();
            self.queries_waiting.fetch_add(1, Ordering::SeqCst);
            let guard = self.session.lock();
            self.queries_waiting.fetch_sub(1, Ordering::SeqCst);
            return guard.map_err(poisoned);
        }
        loop {
            let guard = self.session.lock().map_err(poisoned)?;
            if self.queries_waiting.load(Ordering::SeqCst) == 0 {
                return Ok(guard);
            }
            drop(guard);
            // A waiting search takes the lock now; this batch comes back after it.
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
}

pub struct OnnxEmbedder {
    lane: SessionLane,
    tokenizer: Tokenizer,
    preset: Preset,
    dim: usize,
    needs_token_types: bool,
    output: String,
    /// Queries arriving together share one forward pass, in arrival order.
    queries: crate::combine::Combiner,
}

impl OnnxEmbedder {
    /// Loads the ONNX `model` and `tokenizer.json` from its folder on the runtime at
    /// `library`, building its session as `build` says.
    pub fn load(
        model: &Path,
        preset: &Preset,
        settings: &EmbedderSettings,
        library: &Path,
        build: crate::lazy::Build,
    ) -> Result<Self> {
        let model = model.to_path_buf();
        let tokenizer_path = model.with_file_name("tokenizer.json");
        for file in [&model, &tokenizer_path] {
            if !file.is_file() {
                return Err(EmbedError::ModelMissing(file.clone()));
            }
        }
        let model_error = |reason: String| EmbedError::ModelLoad {
            path: model.clone(),
            reason,
        };
        let level = match build {
            crate::lazy::Build::Full => GraphOptimizationLevel::Level3,
            crate::lazy::Build::Quick => GraphOptimizationLevel::Disable,
        };
        let serving = build == crate::lazy::Build::Full;
        let build = |environment| -> std::result::Result<Session, String> {
            let text = |e: ort::Error<_>| e.to_string();
            let mut builder = Session::builder(environment)
                .map_err(|e| e.to_string())?
                .with_optimization_level(level)
                .map_err(text)?
                .with_intra_threads(settings.effective_threads())
                .map_err(text)?
                .with_inter_threads(1)
                .map_err(text)?
                // Workers spin briefly between operators instead of sleeping: a sleeping pool
                // pays a wake-up per operator. Measured on 2 cores (MiniLM int8, synth30-dev,
                // `bench --live-files 100`): indexing under ten searching threads 2.9 -> 6.2
                // sections/s, their p95 158 -> 147 ms, warm query p50 9.7 -> 7.4 ms; a first
                // index alone 19.5-25.2 s -> 18.7-19.9 s. An idle server runs no operator,
                // so nothing spins. A one-shot process does not spin: its main thread is
                // still opening the index while the session builds, and a spinning worker
                // took that core from it (one-edit re-sync on real-dev, median of 12:
                // 265 -> 252 ms).
                .with_intra_op_spinning(serving)
                .map_err(text)?
                // Prepacking reorders the int8 weights for faster runs; a one-shot process
                // runs a handful of texts, fewer than it takes to repay it (quick load with
                // MiniLM q8, median of 12: 86 -> 79 ms, its forward passes unchanged).
                .with_prepacking(serving)
                .map_err(text)?;
            builder.commit_from_file(&model).map_err(|e| e.to_string())
        };
        // The tokenizer (~20-60 ms of JSON) loads on a second core while ONNX Runtime loads
        // (~20 ms) and builds the session (~60 ms unoptimised, ~220 ms optimised): a one-shot
        // CLI query waits for both.
        let (session, tokenizer) = std::thread::scope(|scope| {
            let tokenizer = scope.spawn(|| load_tokenizer(&tokenizer_path, preset));
            let session = ensure_runtime(library).map(build);
            let tokenizer = tokenizer.join().unwrap_or_else(|_| {
                Err(EmbedError::Tokenizer(format!(
                    "{}: the loading thread panicked",
                    tokenizer_path.display()
                )))
            });
            (session, tokenizer)
        });
        let session = session?.map_err(model_error)?;
        let tokenizer = tokenizer?;
        let needs_token_types = session
            .inputs()
            .iter()
            .any(|i| i.name() == "token_type_ids");
        let output = session
            .outputs()
            .iter()
            .map(|o| o.name().to_string())
            .find(|n| n == "last_hidden_state")
            .or_else(|| session.outputs().first().map(|o| o.name().to_string()))
            .ok_or_else(|| model_error("the model has no outputs".into()))?;
        // The vector's length as the model declares it (the output's last axis); a model
        // that leaves it dynamic is asked with a probe below.
        let declared_dim = session
            .outputs()
            .iter()
            .find(|o| o.name() == output)
            .and_then(|o| o.dtype().tensor_shape())
            .and_then(|shape| shape.last().copied())
            .and_then(|d| usize::try_from(d).ok())
            .filter(|&d| d > 0);
        let mut embedder = Self {
            lane: SessionLane {
                session: Mutex::new(session),
                queries_waiting: AtomicUsize::new(0),
                searches: RecentSearches::new(),
            },
            tokenizer,
            preset: preset.clone(),
            dim: 0,
            needs_token_types,
            output,
            queries: crate::combine::Combiner::new(BATCH),
        };
        // A session's first run pays its setup (~30 ms beside the run itself). A server
        // pays it here, while it loads, with a probe run, so its first search does not; a
        // one-shot process whose model declares its dimension runs nothing more than the
        // texts it came for (one-edit re-sync on real-dev: the probe and the edit's run
        // ~95 ms -> the run alone ~60 ms).
        embedder.dim = match declared_dim {
            Some(dim) if !serving => dim,
            _ => embedder
                .embed(&["dimension probe"], TextKind::Document)?
                .first()
                .map_or(0, Vec::len),
        };
        Ok(embedder)
    }

    fn run_batch(
        &self,
        encodings: &[&tokenizers::Encoding],
        kind: TextKind,
    ) -> Result<Vec<Vec<f32>>> {
        let rows = encodings.len();
        let width = encodings.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![0i64; rows * width];
        let mut mask = vec![0i64; rows * width];
        for (r, enc) in encodings.iter().enumerate() {
            for (c, (&id, &m)) in enc
                .get_ids()
                .iter()
                .zip(enc.get_attention_mask())
                .enumerate()
            {
                ids[r * width + c] = i64::from(id);
                mask[r * width + c] = i64::from(m);
            }
        }
        let tensor = |data: Vec<i64>| {
            Tensor::from_array(([rows, width], data))
                .map_err(|e| EmbedError::Inference(e.to_string()))
        };
        let mut inputs = ort::inputs![
            "input_ids" => tensor(ids)?,
            "attention_mask" => tensor(mask.clone())?,
        ];
        if self.needs_token_types {
            inputs.push((
                "token_type_ids".into(),
                tensor(vec![0i64; rows * width])?.into(),
            ));
        }
        let mut session = self.lane.lock(kind)?;
        let started = std::time::Instant::now();
        let outputs = session
            .run(inputs)
            .map_err(|e| EmbedError::Inference(e.to_string()))?;
        // `RAGDOWN_LOG=ragdown_embed=debug` shows each forward pass: where a slow sync goes.
        tracing::debug!(
            rows,
            tokens = width,
            ms = started.elapsed().as_secs_f64() * 1000.0,
            "forward pass"
        );
        let (shape, data) = outputs[self.output.as_str()]
            .try_extract_tensor::<f32>()
            .map_err(|e| EmbedError::Inference(e.to_string()))?;
        let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        let mut out = Vec::with_capacity(rows);
        match dims.as_slice() {
            // Token vectors: [rows, tokens, hidden].
            [_, tokens, hidden] => {
                for r in 0..rows {
                    let base = r * tokens * hidden;
                    let mut v = vec![0f32; *hidden];
                    match self.preset.pooling {
                        Pooling::Cls => v.copy_from_slice(&data[base..base + hidden]),
                        Pooling::Mean => {
                            let mut count = 0f32;
                            for t in 0..(*tokens).min(width) {
                                if mask[r * width + t] == 0 {
                                    continue;
                                }
                                count += 1.0;
                                let row = &data[base + t * hidden..base + (t + 1) * hidden];
                                v.iter_mut().zip(row).for_each(|(a, b)| *a += b);
                            }
                            v.iter_mut().for_each(|a| *a /= count.max(1.0));
                        }
                    }
                    normalize(&mut v);
                    out.push(v);
                }
            }
            // Already pooled: [rows, hidden].
            [_, hidden] => {
                for r in 0..rows {
                    let mut v = data[r * hidden..(r + 1) * hidden].to_vec();
                    normalize(&mut v);
                    out.push(v);
                }
            }
            other => {
                return Err(EmbedError::Inference(format!(
                    "unexpected output shape {other:?}"
                )));
            }
        }
        Ok(out)
    }
}

impl Embedder for OnnxEmbedder {
    fn id(&self) -> &str {
        &self.preset.id
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn min_score(&self) -> f32 {
        self.preset.min_score
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        self.queries
            .embed(text, |texts| self.embed(texts, TextKind::Query))
    }

    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>> {
        let prefix = match kind {
            TextKind::Query => &self.preset.query_prefix,
            TextKind::Document => &self.preset.document_prefix,
        };
        let inputs: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
        let encodings = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        // Sorting by length keeps padding, and so wasted compute, small.
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); encodings.len()];
        let lengths: Vec<usize> = order.iter().map(|&i| encodings[i].len()).collect();
        let mut start = 0;
        while start < lengths.len() {
            // Decided before each pass: searches may start in the middle of a long document.
            let budget = if kind == TextKind::Document && self.lane.searches.within(SEARCHES_RECENT)
            {
                BATCH_TOKENS_BESIDE_SEARCHES
            } else {
                BATCH_TOKENS
            };
            let end = batch_end(&lengths, start, budget);
            let batch = &order[start..end];
            let refs: Vec<&tokenizers::Encoding> = batch.iter().map(|&i| &encodings[i]).collect();
            for (&i, v) in batch.iter().zip(self.run_batch(&refs, kind)?) {
                out[i] = v;
            }
            start = end;
        }
        Ok(out)
    }
}

/// `tokenizer.json`, padding per batch and truncating at the preset's token limit.
fn load_tokenizer(path: &Path, preset: &Preset) -> Result<Tokenizer> {
    let mut tokenizer = Tokenizer::from_file(path)
        .map_err(|e| EmbedError::Tokenizer(format!("{}: {e}", path.display())))?;
    // Shipped tokenizer.json files often pad to a fixed length; pad per batch instead.
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: preset.max_tokens,
            ..TruncationParams::default()
        }))
        .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
    Ok(tokenizer)
}

/// Where the batch starting at `start` ends, over token `lengths` sorted ascending: as many
/// texts as fit in [`BATCH`] rows and `budget` padded tokens (the longest, last, sets the
/// width) with little padding (see [`PADDING_SLACK`]), and at least one.
fn batch_end(lengths: &[usize], start: usize, budget: usize) -> usize {
    let Some(&first) = lengths.get(start) else {
        return lengths.len();
    };
    let mut end = start + 1;
    // The real tokens of the texts start..end.
    let mut real = first;
    while end < lengths.len() && end - start < BATCH {
        let padded = (end + 1 - start) * lengths[end];
        let with_next = real + lengths[end];
        if padded > budget || padded > with_next + with_next / 4 + PADDING_SLACK {
            break;
        }
        real = with_next;
        end += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every batch's end, each batch planned with `budget`.
    fn ends_with(lengths: &[usize], budget: usize) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut start = 0;
        while start < lengths.len() {
            start = batch_end(lengths, start, budget);
            ends.push(start);
        }
        ends
    }

    fn batch_ends(lengths: &[usize]) -> Vec<usize> {
        ends_with(lengths, BATCH_TOKENS)
    }

    #[test]
    fn beside_searches_passes_hold_half_the_tokens() {
        assert_eq!(
            ends_with(&[256; 3], BATCH_TOKENS_BESIDE_SEARCHES),
            vec![1, 2, 3]
        );
        // 4 × 60 fits in 256 tokens, a fifth would not; rows still cap short texts.
        assert_eq!(
            ends_with(&[60; 10], BATCH_TOKENS_BESIDE_SEARCHES),
            vec![4, 8, 10]
        );
        assert_eq!(ends_with(&[60; 10], BATCH_TOKENS), vec![8, 10]);
        assert_eq!(
            ends_with(&[10; 20], BATCH_TOKENS_BESIDE_SEARCHES),
            vec![16, 20]
        );
    }

    #[test]
    fn a_search_keeps_passes_short_for_a_while() {
        let searches = RecentSearches::new();
        assert!(!searches.within(SEARCHES_RECENT), "no search yet");
        searches.saw_one();
        assert!(searches.within(SEARCHES_RECENT));
        std::thread::sleep(Duration::from_millis(30));
        assert!(
            !searches.within(Duration::from_millis(20)),
            "the window has passed"
        );
        assert!(searches.within(SEARCHES_RECENT));
    }

    #[test]
    fn batches_are_bounded_by_rows_and_padded_tokens() {
        // 40 short texts: full batches of 16 rows.
        assert_eq!(batch_ends(&[10; 40]), vec![16, 32, 40]);
        // 256 tokens wide: two rows fill the token budget.
        assert_eq!(batch_ends(&[256; 5]), vec![2, 4, 5]);
        // Width grows along the sorted lengths: 8 × 60 fits, a ninth at 64 would not.
        let lengths: Vec<usize> = (0..10).map(|i| if i < 8 { 60 } else { 64 }).collect();
        assert_eq!(batch_ends(&lengths), vec![8, 10]);
        // A text over the budget runs alone; nothing is dropped.
        assert_eq!(batch_ends(&[5, 900, 901]), vec![1, 2, 3]);
        // A short text is not padded to a long one's width: a chunk's paragraph and the
        // chunk run apart, while texts of near lengths still share a pass.
        assert_eq!(batch_ends(&[19, 230]), vec![1, 2]);
        assert_eq!(batch_ends(&[20, 22, 25, 30, 120, 128]), vec![4, 6]);
        assert!(batch_ends(&[]).is_empty());
    }
}
