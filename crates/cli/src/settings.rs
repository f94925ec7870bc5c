//! Configuration, read once: `RAGDOWN_*` environment variables (and command-line overrides)
//! resolved into one typed [`Settings`] value that the commands pass down.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use ragdown_embed::EmbedderSettings;
use sha2::{Digest, Sha256};

#[derive(Debug, Clone)]
pub struct Settings {
    pub embedder: EmbedderSettings,
    /// `RAGDOWN_DATA_DIR`: overrides the per-docs-dir default.
    pub data_dir: Option<PathBuf>,
    /// `RAGDOWN_MAX_FILE_BYTES`.
    pub max_file_bytes: u64,
    /// `RAGDOWN_MAX_PER_DOCUMENT` (0 = no cap).
    pub max_per_document: usize,
    /// `RAGDOWN_FOLLOW_LINKS` (0 = off).
    pub follow_links: usize,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn number<T: std::str::FromStr>(name: &str, default: T) -> Result<T> {
    match var(name) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .ok()
            .with_context(|| format!("{name}={v:?} is not a non-negative whole number")),
    }
}

/// `$XDG_CACHE_HOME` or `~/.cache`.
fn cache_root() -> PathBuf {
    var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"))
}

impl Settings {
    pub fn from_env() -> Result<Self> {
        let models_dir = var("RAGDOWN_MODELS")
            .map(PathBuf::from)
            .unwrap_or_else(|| cache_root().join("ragdown").join("models"));
        Ok(Self {
            embedder: EmbedderSettings {
                name: var("RAGDOWN_EMBEDDER").unwrap_or_else(|| "granite-small".into()),
                models_dir,
                threads: number("RAGDOWN_THREADS", 0)?,
                ort_library: var("ORT_DYLIB_PATH").map(PathBuf::from),
                hub_endpoint: var("HF_ENDPOINT").unwrap_or_else(|| "https://huggingface.co".into()),
                openai_url: var("RAGDOWN_EMBEDDING_URL")
                    .unwrap_or_else(|| "https://api.openai.com/v1".into()),
                openai_key: var("RAGDOWN_EMBEDDING_API_KEY"),
            },
            data_dir: var("RAGDOWN_DATA_DIR").map(PathBuf::from),
            max_file_bytes: number(
                "RAGDOWN_MAX_FILE_BYTES",
                ragdown_index::DEFAULT_MAX_FILE_BYTES,
            )?,
            max_per_document: number("RAGDOWN_MAX_PER_DOCUMENT", 0)?,
            follow_links: number("RAGDOWN_FOLLOW_LINKS", 0)?,
        })
    }

    /// The data dir of `docs`: the override, or `<cache>/ragdown/<first 16 hex of SHA-256 of
    /// the absolute docs dir>`, so two folders never share an index.
    pub fn data_dir_for(&self, docs: &Path) -> PathBuf {
        if let Some(dir) = &self.data_dir {
            return dir.clone();
        }
        let digest = Sha256::digest(docs.to_string_lossy().as_bytes());
        let key: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        cache_root().join("ragdown").join(key)
    }
}

/// Checks that `dir` is a directory and returns its absolute path.
pub fn docs_dir(dir: &Path) -> Result<PathBuf> {
    if !dir.exists() {
        bail!(
            "{} does not exist: give the directory of Markdown files to index",
            dir.display()
        );
    }
    if !dir.is_dir() {
        bail!(
            "{} is not a directory: give the directory holding the Markdown files",
            dir.display()
        );
    }
    dir.canonicalize()
        .with_context(|| format!("{} could not be resolved", dir.display()))
}
