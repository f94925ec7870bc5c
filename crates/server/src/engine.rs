//! [`Engine`]: one folder served over MCP (optionally narrowed to a subfolder scope) — its
//! index, settings, the hook's session memory, its last sync and the query log it writes to.
//! Paths in and out of its scope, syncs after writes, and what indexing progress to report.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use ragdown_index::{Index, SyncReport};

use crate::sessions::Sessions;
use crate::{ServerSettings, SharedSettings, ToolError, query_log};

/// How long a reader waits for the primary to finish a forwarded sync.
pub const SYNC_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// The last finished sync, for `ragdown_stats`.
#[derive(Debug, Clone)]
pub struct LastSync {
    pub report: SyncReport,
    pub at: SystemTime,
}

/// One folder served over MCP: its index, settings and the hook's session memory.
pub struct Engine {
    /// Shown in the server name (`ragdown-<name>`) and the hook block.
    pub name: String,
    pub index: Arc<Index>,
    settings: SharedSettings,
    pub sessions: Sessions,
    /// Shared by the narrowed views of one folder.
    pub last_sync: Arc<Mutex<Option<LastSync>>>,
    /// The folder's `.ragdown.json`, read on every hook call (`serve` only; `stdio` ignores it).
    pub folder_config: Option<PathBuf>,
    /// Where searches and reads are recorded when `query_log` is on.
    pub query_log: Option<Arc<query_log::QueryLog>>,
    /// The subfolder this engine is narrowed to (`/mcp/<folder>/<sub…>`), folder-relative;
    /// empty for the whole folder. Paths in and out are relative to it.
    pub scope: String,
}

impl Engine {
    pub fn new(name: String, index: Arc<Index>, settings: ServerSettings) -> Self {
        Self::shared(name, index, Arc::new(RwLock::new(settings)))
    }

    /// An engine whose settings are shared with others (every folder of `serve`).
    pub fn shared(name: String, index: Arc<Index>, settings: SharedSettings) -> Self {
        Self {
            name,
            index,
            settings,
            sessions: Sessions::new(200),
            last_sync: Arc::new(Mutex::new(None)),
            folder_config: None,
            query_log: None,
            scope: String::new(),
        }
    }

    /// The same folder narrowed to `scope` (a folder-relative subfolder), with its own hook
    /// session memory.
    pub fn narrowed(&self, scope: &str) -> Self {
        Self {
            name: self.name.clone(),
            index: self.index.clone(),
            settings: self.settings.clone(),
            sessions: Sessions::new(200),
            last_sync: self.last_sync.clone(),
            folder_config: self.folder_config.clone(),
            query_log: self.query_log.clone(),
            scope: scope.trim_matches('/').to_string(),
        }
    }

    /// A scope-relative path as the index knows it (folder-relative).
    pub fn scoped(&self, rel: &str) -> String {
        match (self.scope.is_empty(), rel.is_empty()) {
            (true, _) => rel.to_string(),
            (false, true) => self.scope.clone(),
            (false, false) => format!("{}/{rel}", self.scope),
        }
    }

    /// A folder-relative path as this scope shows it; `None` when it lies outside the scope.
    pub fn unscoped<'a>(&self, path: &'a str) -> Option<&'a str> {
        if self.scope.is_empty() {
            return Some(path);
        }
        path.strip_prefix(self.scope.as_str())?.strip_prefix('/')
    }

    /// Hits with their paths relative to the scope (search already kept them inside it).
    pub fn scope_hits(&self, hits: Vec<ragdown_search::Hit>) -> Vec<ragdown_search::Hit> {
        if self.scope.is_empty() {
            return hits;
        }
        hits.into_iter()
            .map(|mut h| {
                if let Some(rel) = self.unscoped(&h.document.path) {
                    let mut doc = (*h.document).clone();
                    doc.path = rel.to_string();
                    h.document = Arc::new(doc);
                }
                h
            })
            .collect()
    }

    /// The search prefix for a client's `path_prefix` inside this scope.
    pub fn scoped_prefix(&self, prefix: Option<String>) -> Option<String> {
        let full = self.scoped(prefix.as_deref().unwrap_or(""));
        (!full.is_empty()).then_some(full)
    }

    /// The settings in effect now.
    pub fn settings(&self) -> ServerSettings {
        // A poisoned lock still holds the last settings written: use them.
        match self.settings.read() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Records one search or read in the query log, when it is on.
    pub fn log_query(&self, entry: query_log::Entry) {
        if let Some(log) = &self.query_log
            && self.settings().query_log
        {
            log.record(&self.name, entry);
        }
    }

    /// The folder's directory (the index root).
    pub fn folder_root(&self) -> &std::path::Path {
        &self.index.settings().root
    }

    /// The directory client paths are relative to: the folder, or the scope inside it.
    pub fn root(&self) -> PathBuf {
        self.folder_root().join(&self.scope)
    }

    /// Whether this process is the index's primary (else a reader of the same store).
    pub fn is_primary(&self) -> bool {
        self.index.is_writable()
    }

    /// Syncs now and remembers the report. A reader forwards the request to the primary and
    /// then picks up what it committed.
    pub fn sync(&self) -> Result<SyncReport, ToolError> {
        if !self.is_primary() {
            return self.forward_sync(None);
        }
        let report = self.index.sync()?;
        self.record_sync(&report);
        Ok(report)
    }

    /// Indexes the documents a write changed (folder-relative paths: [`Engine::scoped`] for
    /// a tool's) and answers once they are searchable — without waiting for a whole-folder
    /// sync that may be running (it serves these paths between two embedder calls). A reader
    /// forwards a sync to the primary instead.
    pub fn sync_paths(&self, folder_paths: &[String]) -> Result<SyncReport, ToolError> {
        if !self.is_primary() {
            return self.forward_sync(Some(folder_paths));
        }
        let report = self.index.sync_paths(folder_paths)?;
        self.record_sync(&report);
        Ok(report)
    }

    /// A reader asks the primary to sync (the whole folder, or `paths`) and reloads what it
    /// committed.
    fn forward_sync(&self, paths: Option<&[String]>) -> Result<SyncReport, ToolError> {
        let report =
            ragdown_index::forward::forward_sync_report(&self.index, paths, SYNC_REQUEST_TIMEOUT)?;
        Ok(report)
    }

    /// How far this process's running sync is (only a primary syncs), for answers that may
    /// be incomplete meanwhile.
    pub fn indexing(&self) -> Option<ragdown_index::SyncProgress> {
        self.is_primary()
            .then(|| self.index.sync_progress())
            .flatten()
    }

    /// Remembers a finished sync (the watcher's too) for `ragdown_stats`.
    pub fn record_sync(&self, report: &SyncReport) {
        if let Ok(mut last) = self.last_sync.lock() {
            *last = Some(LastSync {
                report: report.clone(),
                at: SystemTime::now(),
            });
        }
    }
}
