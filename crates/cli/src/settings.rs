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
    /// `RAGDOWN_DATABASE_URL`: keep the records in this PostgreSQL database (shared by every
    /// server pointed at it) instead of the data dir.
    pub database_url: Option<String>,
    /// `RAGDOWN_DATABASE_SCHEMA`: the schema of a single docs dir's records (default from the
    /// docs dir's name), and for `serve` the prefix of each folder's schema (default
    /// `ragdown`).
    pub database_schema: Option<String>,
    /// `RAGDOWN_DENSE_POOL` (`memory`, the default, or `pgvector`) and
    /// `RAGDOWN_HNSW_EF_SEARCH`: where searches find the closest sections (pgvector needs
    /// `RAGDOWN_DATABASE_URL`).
    pub dense_pool: ragdown_index::store::DensePool,
    /// `RAGDOWN_DOCS_DIR`.
    pub docs_dir: Option<PathBuf>,
    /// `RAGDOWN_TAKEOVER_MS`: how often a reader checks whether the primary is gone.
    pub takeover_every: std::time::Duration,
    /// Everything the MCP server reads.
    pub server: ragdown_server::ServerSettings,
    /// What `serve` alone reads.
    pub http: HttpSettings,
}

/// `serve`'s own variables.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// `PORT`.
    pub port: u16,
    /// `HTTP_KEEP_ALIVE_TIMEOUT_MS` (0 = never close an idle connection).
    pub keep_alive_ms: u64,
    /// `RAGDOWN_TOKEN`: the bearer token of /mcp* and /api.
    pub token: Option<String>,
    /// `SECURE_LOCAL_NET`: no token at all, on a trusted network.
    pub secure_local_net: bool,
    /// `RAGDOWN_BIND`: the address to listen on (loopback unless told otherwise).
    pub bind: String,
    /// `RAGDOWN_ALLOWED_HOSTS`: host names answered besides addresses and localhost.
    pub allowed_hosts: Option<String>,
    /// `RAGDOWN_ALLOWED_ORIGINS`: web origins allowed besides the server's own.
    pub allowed_origins: Option<String>,
    /// `HTTP_BODY_TIMEOUT_MS`: how long a request body may take to arrive.
    pub body_timeout_ms: u64,
    /// `RAGDOWN_MAX_CONNECTIONS` (0 = from the file descriptor limit).
    pub max_connections: usize,
}

fn boolean(name: &str, default: bool) -> Result<bool> {
    match var(name) {
        None => Ok(default),
        Some(v) => match v.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => bail!("{name}={v:?} is not a boolean: use true or false"),
        },
    }
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

/// `RAGDOWN_DENSE_POOL` and `RAGDOWN_HNSW_EF_SEARCH`; pgvector without a database is refused
/// here, before anything opens.
fn dense_pool() -> Result<ragdown_index::store::DensePool> {
    use ragdown_index::store::{DEFAULT_EF_SEARCH, DensePool};
    match var("RAGDOWN_DENSE_POOL").as_deref().map(str::trim) {
        None | Some("memory") => Ok(DensePool::Memory),
        Some("pgvector") => {
            if var("RAGDOWN_DATABASE_URL").is_none() {
                bail!(
                    "RAGDOWN_DENSE_POOL=pgvector reads the vectors from PostgreSQL: set \
                     RAGDOWN_DATABASE_URL to a database with the pgvector extension, or unset \
                     RAGDOWN_DENSE_POOL to keep them in memory"
                );
            }
            Ok(DensePool::Pgvector {
                ef_search: number("RAGDOWN_HNSW_EF_SEARCH", DEFAULT_EF_SEARCH)?,
            })
        }
        Some(other) => bail!("RAGDOWN_DENSE_POOL is {other:?}: use `memory` or `pgvector`"),
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
        let server = ragdown_server::ServerSettings::default()
            .with_variables(&var)
            .map_err(anyhow::Error::msg)?;
        let models_dir = var("RAGDOWN_MODELS")
            .map(PathBuf::from)
            .unwrap_or_else(|| cache_root().join("ragdown").join("models"));
        Ok(Self {
            embedder: EmbedderSettings {
                name: server.embedder.clone(),
                models_dir,
                threads: number("RAGDOWN_THREADS", 0)?,
                ort_library: var("ORT_DYLIB_PATH").map(PathBuf::from),
                hub_endpoint: var("HF_ENDPOINT").unwrap_or_else(|| "https://huggingface.co".into()),
                ort_endpoint: var("RAGDOWN_ORT_URL")
                    .unwrap_or_else(|| ragdown_embed::runtime::DEFAULT_ORT_ENDPOINT.into()),
                openai_url: var("RAGDOWN_EMBEDDING_URL")
                    .unwrap_or_else(|| "https://api.openai.com/v1".into()),
                openai_key: var("RAGDOWN_EMBEDDING_API_KEY"),
                one_shot: false,
            },
            data_dir: var("RAGDOWN_DATA_DIR").map(PathBuf::from),
            max_file_bytes: number(
                "RAGDOWN_MAX_FILE_BYTES",
                ragdown_index::DEFAULT_MAX_FILE_BYTES,
            )?,
            database_url: var("RAGDOWN_DATABASE_URL"),
            database_schema: var("RAGDOWN_DATABASE_SCHEMA"),
            dense_pool: dense_pool()?,
            docs_dir: var("RAGDOWN_DOCS_DIR").map(|d| expand_home(&d)),
            takeover_every: std::time::Duration::from_millis(number(
                "RAGDOWN_TAKEOVER_MS",
                10_000,
            )?),
            // Each server setting's default and variable are declared once, in
            // `ragdown_server::settings`.
            server,
            http: HttpSettings {
                port: number("PORT", 3000)?,
                keep_alive_ms: number("HTTP_KEEP_ALIVE_TIMEOUT_MS", 75_000)?,
                token: var("RAGDOWN_TOKEN"),
                secure_local_net: boolean("SECURE_LOCAL_NET", false)?,
                bind: var("RAGDOWN_BIND")
                    .map(|b| b.trim().to_string())
                    .unwrap_or_else(|| "127.0.0.1".into()),
                allowed_hosts: var("RAGDOWN_ALLOWED_HOSTS"),
                allowed_origins: var("RAGDOWN_ALLOWED_ORIGINS"),
                body_timeout_ms: number("HTTP_BODY_TIMEOUT_MS", 30_000)?,
                max_connections: number("RAGDOWN_MAX_CONNECTIONS", 0)?,
            },
        })
    }

    /// The data dir of `docs`: the override, or `<cache>/ragdown/<first 16 hex of SHA-256 of
    /// the absolute docs dir>`, so two folders never share an index.
    /// Where the records of the docs dir `docs` are kept (one docs dir: `stdio`, the CLI).
    pub fn records_for(&self, docs: &Path) -> ragdown_index::store::RecordsLocation {
        use ragdown_index::store::{RecordsLocation, folder_schema};
        match &self.database_url {
            None => RecordsLocation::DataDir,
            Some(url) => RecordsLocation::Postgres {
                url: url.clone(),
                schema: self.database_schema.clone().unwrap_or_else(|| {
                    let name = docs.file_name().unwrap_or_default().to_string_lossy();
                    folder_schema("ragdown", &name)
                }),
                dense: self.dense_pool,
            },
        }
    }

    /// The database `serve`'s folders keep their records in, a schema each.
    pub fn shared_database(&self) -> Option<ragdown_index::store::SharedDatabase> {
        Some(ragdown_index::store::SharedDatabase {
            url: self.database_url.clone()?,
            prefix: self
                .database_schema
                .clone()
                .unwrap_or_else(|| "ragdown".to_string()),
            dense: self.dense_pool,
        })
    }

    pub fn data_dir_for(&self, docs: &Path) -> PathBuf {
        if let Some(dir) = &self.data_dir {
            return dir.clone();
        }
        let digest = Sha256::digest(docs.to_string_lossy().as_bytes());
        let key: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        cache_root().join("ragdown").join(key)
    }
}

/// `~/x` → `$HOME/x`.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), var("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
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
