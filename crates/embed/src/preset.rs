//! Model presets (`RAGDOWN_EMBEDDER`): which Hugging Face repository and files a preset uses,
//! its pooling, token limit, query/document prefixes and hook threshold; and how a setting
//! string is read (`granite-small`, `openai:<model>`, `hash`, or a model directory).

use std::path::{Path, PathBuf};

use crate::{EmbedError, Result};

/// How token vectors become one text vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The first token's vector.
    Cls,
    /// The attention-masked mean of all token vectors.
    Mean,
}

/// A local ONNX model with everything needed to run it the way it was trained.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// Setting name (`granite-small`).
    pub name: String,
    /// Recorded in the index; a change rebuilds it.
    pub id: String,
    /// Hugging Face repository the files come from.
    pub repo: String,
    /// `(path in the repository, file name in the model folder)`.
    pub files: Vec<(String, String)>,
    pub pooling: Pooling,
    /// Vector dimensions, known before the model loads (checked when it does).
    pub dim: usize,
    /// Longer inputs are truncated to this many tokens.
    pub max_tokens: usize,
    pub query_prefix: String,
    pub document_prefix: String,
    /// Hook threshold: the cosine of the strongest unrelated prompt measured, rounded up.
    pub min_score: f32,
}

/// The two files every hub preset needs: the ONNX model and its tokenizer.
fn hub_files(model_file: &str) -> Vec<(String, String)> {
    vec![
        (model_file.into(), "model.onnx".into()),
        ("tokenizer.json".into(), "tokenizer.json".into()),
    ]
}

/// The presets a user can name.
pub fn presets() -> Vec<Preset> {
    let q8 = "onnx/model_quantized.onnx";
    vec![
        Preset {
            name: "granite-small".into(),
            id: "granite-embedding-small-english-r2-q8".into(),
            repo: "onnx-community/granite-embedding-small-english-r2-ONNX".into(),
            files: hub_files(q8),
            pooling: Pooling::Cls,
            dim: 384,
            max_tokens: 512,
            query_prefix: String::new(),
            document_prefix: String::new(),
            min_score: 0.8,
        },
        Preset {
            name: "bge-small".into(),
            id: "bge-small-en-v1.5-q8".into(),
            repo: "Xenova/bge-small-en-v1.5".into(),
            files: hub_files(q8),
            pooling: Pooling::Cls,
            dim: 384,
            max_tokens: 512,
            query_prefix: "Represent this sentence for searching relevant passages: ".into(),
            document_prefix: String::new(),
            min_score: 0.7,
        },
        Preset {
            name: "embeddinggemma".into(),
            id: "embeddinggemma-300m-q8".into(),
            repo: "onnx-community/embeddinggemma-300m-ONNX".into(),
            files: hub_files(q8),
            pooling: Pooling::Mean,
            dim: 768,
            max_tokens: 512,
            query_prefix: "task: search result | query: ".into(),
            document_prefix: "title: none | text: ".into(),
            min_score: 0.6,
        },
        Preset {
            name: "minilm".into(),
            id: "all-minilm-l6-v2-q8".into(),
            repo: "Xenova/all-MiniLM-L6-v2".into(),
            files: hub_files(q8),
            pooling: Pooling::Mean,
            dim: 384,
            max_tokens: 256,
            query_prefix: String::new(),
            document_prefix: String::new(),
            // `ragdown bench --offtopic` on synth30-dev: the strongest off-topic prompt scored
            // 0.348 and the weakest on-topic decile 0.344; MiniLM barely separates them.
            min_score: 0.35,
        },
        Preset {
            name: "mpnet".into(),
            id: "all-mpnet-base-v2".into(),
            repo: "sentence-transformers/all-mpnet-base-v2".into(),
            // The repository's own fp32 export (~440 MB); it publishes no quantised one.
            files: hub_files("onnx/model.onnx"),
            pooling: Pooling::Mean,
            dim: 768,
            // Trained for 384; 256 as MiniLM, since a longer section is also embedded by its
            // pieces, and a pass of 384 costs half as much again on a small machine. Measured
            // at 384 (`ragdown eval`): synth30-dev unchanged (its sections fit in 256); real-dev
            // top-1 65.1 → 66.7%, recall@5 87.3 → 85.7%, hook 79.4 → 77.8% — one question
            // either way (the whole eval with a first index at 384 took 15 min on 2 cores).
            max_tokens: 256,
            query_prefix: String::new(),
            document_prefix: String::new(),
            // `ragdown bench --offtopic` on synth30-dev: the strongest off-topic prompt scored
            // 0.309 and the weakest on-topic decile 0.322.
            min_score: 0.31,
        },
    ]
}

impl Preset {
    /// Settings for a model folder the user brought: mean pooling unless its
    /// sentence-transformers `1_Pooling/config.json` says CLS.
    pub fn for_directory(dir: &Path) -> Preset {
        let cls = std::fs::read_to_string(dir.join("1_Pooling/config.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .and_then(|v| v.get("pooling_mode_cls_token")?.as_bool())
            .unwrap_or(false);
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        Preset {
            name: name.clone(),
            id: format!("dir:{name}"),
            repo: String::new(),
            files: Vec::new(),
            pooling: if cls { Pooling::Cls } else { Pooling::Mean },
            // Read from the model when it loads (a directory model loads at once).
            dim: 0,
            max_tokens: 256,
            query_prefix: String::new(),
            document_prefix: String::new(),
            min_score: 0.5,
        }
    }
}

/// What a `RAGDOWN_EMBEDDER` value names.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    Hash,
    OpenAi(String),
    Local(Preset),
    Directory(PathBuf),
}

pub fn resolve(name: &str) -> Result<Choice> {
    let name = name.trim();
    if name == "hash" {
        return Ok(Choice::Hash);
    }
    if let Some(model) = name.strip_prefix("openai:") {
        if model.is_empty() {
            return Err(EmbedError::UnknownEmbedder(name.into()));
        }
        return Ok(Choice::OpenAi(model.into()));
    }
    if let Some(preset) = presets().into_iter().find(|p| p.name == name) {
        return Ok(Choice::Local(preset));
    }
    let dir = PathBuf::from(name);
    if dir.join("model.onnx").is_file() && dir.join("tokenizer.json").is_file() {
        return Ok(Choice::Directory(dir));
    }
    Err(EmbedError::UnknownEmbedder(name.into()))
}

/// Everything the embedder layer reads from the environment, resolved once by the binary.
#[derive(Debug, Clone)]
pub struct EmbedderSettings {
    /// `RAGDOWN_EMBEDDER`.
    pub name: String,
    /// `RAGDOWN_MODELS`: where presets are downloaded.
    pub models_dir: PathBuf,
    /// `RAGDOWN_THREADS`; 0 = every logical core.
    pub threads: usize,
    /// `ORT_DYLIB_PATH`, if set.
    pub ort_library: Option<PathBuf>,
    /// Where presets are downloaded from (`HF_ENDPOINT`, default `https://huggingface.co`).
    pub hub_endpoint: String,
    /// Where ONNX Runtime is downloaded from when none is installed (`RAGDOWN_ORT_URL`,
    /// default [`crate::runtime::DEFAULT_ORT_ENDPOINT`]).
    pub ort_endpoint: String,
    /// `RAGDOWN_EMBEDDING_URL`.
    pub openai_url: String,
    /// `RAGDOWN_EMBEDDING_API_KEY`.
    pub openai_key: Option<String>,
    /// A one-shot command (not a server): a model needed for a query or a few documents is
    /// built quickly rather than optimised (see [`crate::lazy::Build`]).
    pub one_shot: bool,
}

impl EmbedderSettings {
    /// Intra-op threads to use: the setting, or every logical core. Half the cores was the
    /// default while searches had a session of their own; with one session shared (searches
    /// first, see `onnx`), a first index on 2 cores took 26 s where one thread took 38 s,
    /// and searches during it waited p95 105 ms (160 ms before).
    pub fn effective_threads(&self) -> usize {
        if self.threads > 0 {
            return self.threads;
        }
        std::thread::available_parallelism()
            .map(std::num::NonZeroUsize::get)
            .unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_names() {
        assert_eq!(resolve("hash").unwrap(), Choice::Hash);
        assert_eq!(
            resolve("openai:text-embedding-3-small").unwrap(),
            Choice::OpenAi("text-embedding-3-small".into())
        );
        assert!(
            matches!(resolve("granite-small").unwrap(), Choice::Local(p) if p.pooling == Pooling::Cls)
        );
        let err = resolve("nope").unwrap_err().to_string();
        assert!(err.contains("granite-small"), "{err}");
    }

    #[test]
    fn directory_pooling_from_sentence_transformers_config() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
        std::fs::write(
            dir.path().join("1_Pooling/config.json"),
            r#"{"pooling_mode_cls_token": true}"#,
        )
        .unwrap();
        assert_eq!(Preset::for_directory(dir.path()).pooling, Pooling::Cls);
    }
}
