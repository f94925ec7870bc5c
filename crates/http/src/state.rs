//! What `serve` runs on: its configuration ([`ServeConfig`], read once by the binary) and the
//! shared state every route reads ([`AppState`]: the folders once they are open, the settings
//! laid together, the token, loading progress and the shutdown signal).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::http::StatusCode;
use ragdown_embed::{Embedder, EmbedderSettings};
use ragdown_server::{ServerSettings, SharedSettings, ToolError};
use tokio_util::sync::CancellationToken;

use crate::{ApiError, ApiResult, Folders, OpenWith, auth, policy, root, server_settings};

/// Everything `serve` is started with (read once from the environment by the binary).
#[derive(Clone)]
pub struct ServeConfig {
    pub docs_dir: PathBuf,
    pub data_dir: PathBuf,
    /// The embedder the environment names (saved settings may name another).
    pub embedder: EmbedderSettings,
    /// The environment's server settings (the embedder's name, watching and the root
    /// endpoint among them).
    pub server: ServerSettings,
    pub max_file_bytes: u64,
    /// `RAGDOWN_DATABASE_URL` and the schema prefix: the folders' records in PostgreSQL, a
    /// schema each.
    pub database: Option<ragdown_index::store::SharedDatabase>,
    pub takeover_every: Duration,
    /// `RAGDOWN_TOKEN`; `None` only with `SECURE_LOCAL_NET=true` (checked by the caller).
    pub token: Option<String>,
    /// `HTTP_KEEP_ALIVE_TIMEOUT_MS` (0 = never close an idle connection).
    pub keep_alive_ms: u64,
    /// `RAGDOWN_ALLOWED_HOSTS` and `RAGDOWN_ALLOWED_ORIGINS`.
    pub site: policy::SitePolicy,
    /// `HTTP_BODY_TIMEOUT_MS`: how long a request body may take to arrive.
    pub body_timeout: Duration,
    /// Most connections open at once (`RAGDOWN_MAX_CONNECTIONS`, else from the descriptor
    /// limit); past it the oldest connection is closed once its request is answered.
    pub max_connections: usize,
}

/// What every handler reads.
pub struct AppInner {
    pub config: ServeConfig,
    /// Set once the embedder has loaded and the folders are open.
    folders: OnceLock<Arc<Folders>>,
    /// The root endpoint's server (its hook memory outlives each stateless request).
    root: OnceLock<Arc<root::RootHost>>,
    /// Why loading failed, if it did.
    load_error: Mutex<Option<String>>,
    /// The settings in effect: the environment's with the saved values over them.
    pub settings: SharedSettings,
    pub saved: server_settings::SavedSettings,
    /// `PATCH /api/settings` changes one at a time.
    pub settings_change: tokio::sync::Mutex<()>,
    pub token_digest: Option<[u8; 32]>,
    pub shutdown: CancellationToken,
    /// Documents as the web UI last rendered them (`GET /api/render`).
    pub rendered: crate::rendering::cache::RenderCache,
    /// What the bodies being read may hold together (`policy::BODIES_IN_FLIGHT`).
    pub bodies: crate::policy::BodyBudget,
}

#[derive(Clone)]
pub struct AppState(pub Arc<AppInner>);

impl std::ops::Deref for AppState {
    type Target = AppInner;
    fn deref(&self) -> &AppInner {
        &self.0
    }
}

impl AppState {
    pub fn new(config: ServeConfig) -> Self {
        let saved = server_settings::SavedSettings::new(&config.docs_dir);
        let server = saved.read().over(&config.server);
        let token_digest = config.token.as_deref().map(auth::digest);
        Self(Arc::new(AppInner {
            folders: OnceLock::new(),
            root: OnceLock::new(),
            load_error: Mutex::new(None),
            settings: Arc::new(std::sync::RwLock::new(server)),
            saved,
            settings_change: tokio::sync::Mutex::new(()),
            token_digest,
            shutdown: CancellationToken::new(),
            rendered: crate::rendering::cache::RenderCache::default(),
            bodies: crate::policy::BodyBudget::default(),
            config,
        }))
    }

    /// The embedder `next` names, loaded, when it is not the one in effect; an error that
    /// says why when it cannot load (nothing has changed then).
    pub fn load_embedder_of(
        &self,
        next: &ServerSettings,
    ) -> Result<Option<Arc<dyn Embedder>>, String> {
        if next.embedder == self.tunables().embedder {
            return Ok(None);
        }
        let settings = self.embedder_settings(&next.embedder);
        ragdown_embed::load(&settings, &ragdown_embed::download::Silent)
            // A preset's model loads on first use: load it now, so that a model that cannot
            // run is refused here rather than after the switch.
            .and_then(|e| e.embed_query("ragdown").map(|_| e))
            .map(Some)
            .map_err(|e| format!("the embedder {} cannot be loaded: {e}", next.embedder))
    }

    /// Puts the tunables `next` in effect; with a new embedder (loaded by the caller) or a
    /// change of watching, every folder is reopened with them.
    pub fn put_in_effect(
        &self,
        next: &ServerSettings,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<(), ToolError> {
        let before = self.tunables();
        {
            let mut shared = self
                .settings
                .write()
                .map_err(|_| ToolError::internal("settings lock poisoned"))?;
            *shared = next.clone();
        }
        if (embedder.is_some() || next.watch != before.watch)
            && let Ok(folders) = self.folders()
        {
            let embedder = embedder.unwrap_or_else(|| folders.embedder());
            folders.reopen_all(OpenWith {
                embedder,
                watch: next.watch,
            })?;
        }
        Ok(())
    }

    /// Follows `.ragdown-server.json` when it changed since `seen` (another server saved it,
    /// or a hand edit): its values are put in effect as a `PATCH /api/settings` would.
    fn follow_saved_settings(&self, seen: &mut Option<(std::time::SystemTime, u64)>) {
        let stamp = self.saved.stamp();
        if stamp == *seen {
            return;
        }
        *seen = stamp;
        // After a PATCH of this server that is still putting the file it wrote in effect.
        let _one_at_a_time = self.settings_change.blocking_lock();
        let next = self.saved.read().over(&self.config.server);
        if next == self.tunables() {
            return;
        }
        let embedder = match self.load_embedder_of(&next) {
            Ok(embedder) => embedder,
            Err(why) => {
                tracing::error!(
                    "the saved settings changed, but {why}: kept the settings in effect"
                );
                return;
            }
        };
        match self.put_in_effect(&next, embedder) {
            Ok(()) => tracing::info!("the saved settings changed: now in effect"),
            Err(e) => tracing::error!("the saved settings changed, but could not apply: {e}"),
        }
    }

    /// The environment's settings.
    pub fn env_tunables(&self) -> ServerSettings {
        self.config.server.clone()
    }

    /// The settings in effect.
    pub fn tunables(&self) -> ServerSettings {
        match self.settings.read() {
            Ok(t) => t.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// The embedder settings for `name` (the environment's others kept).
    pub fn embedder_settings(&self, name: &str) -> EmbedderSettings {
        EmbedderSettings {
            name: name.to_string(),
            ..self.config.embedder.clone()
        }
    }

    /// The folders, once the model has loaded; 503 before.
    pub fn folders(&self) -> ApiResult<Arc<Folders>> {
        if let Some(f) = self.folders.get() {
            return Ok(f.clone());
        }
        let why = self.load_error.lock().ok().and_then(|e| e.clone());
        Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            match why {
                Some(e) => format!("the embedding model could not be loaded: {e}"),
                None => "the embedding model is still loading: try again in a moment".into(),
            },
        ))
    }

    /// The folders, waiting up to `patience` for them while the model loads: an MCP client
    /// that connects the moment the port answers gets its answer a little later rather than a
    /// refusal (stdio's tool calls wait the same way). A load that failed answers at once.
    pub async fn folders_within(&self, patience: Duration) -> ApiResult<Arc<Folders>> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let failed = self.load_error.lock().map(|e| e.is_some()).unwrap_or(true);
            if self.ready() || failed || tokio::time::Instant::now() >= deadline {
                return self.folders();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The root endpoint's server, once the folders are open.
    pub fn root_host(&self) -> Option<Arc<root::RootHost>> {
        self.root.get().cloned()
    }

    pub fn ready(&self) -> bool {
        self.folders.get().is_some()
    }

    /// Opens the folders with `embedder` (after the model loaded) and keeps watching the docs
    /// dir for new ones.
    pub fn start_folders(&self, embedder: Arc<dyn Embedder>) {
        let tunables = self.tunables();
        let folders = Arc::new(Folders::new(
            self.config.docs_dir.clone(),
            self.config.data_dir.clone(),
            self.config.max_file_bytes,
            self.config.database.clone(),
            self.config.takeover_every,
            self.settings.clone(),
            OpenWith {
                embedder,
                watch: tunables.watch,
            },
        ));
        if let Err(e) = folders.refresh() {
            tracing::error!("opening the folders: {e}");
        }
        let loose = folders.loose_files();
        if !loose.is_empty() {
            eprintln!(
                "ragdown: {}",
                loose_files_message(folders.docs_dir(), &loose)
            );
        }
        let _ = self
            .root
            .set(Arc::new(root::RootHost::new(folders.clone())));
        let _ = self.folders.set(folders.clone());
        // Folders are found as they appear, and the saved settings followed when another
        // server or a hand edit changed them: a cheap listing and one stat every second.
        let weak = Arc::downgrade(&folders);
        let shutdown = self.shutdown.clone();
        let state = Arc::downgrade(&self.0);
        let mut seen = self.saved.stamp();
        std::thread::spawn(move || {
            while !shutdown.is_cancelled() {
                std::thread::sleep(Duration::from_secs(1));
                let Some(folders) = weak.upgrade() else {
                    return;
                };
                if let Err(e) = folders.refresh() {
                    tracing::error!("{e}");
                }
                drop(folders);
                if let Some(inner) = state.upgrade() {
                    AppState(inner).follow_saved_settings(&mut seen);
                }
            }
        });
    }

    pub fn fail_loading(&self, why: String) {
        tracing::error!("[ragdown] the embedding model could not be loaded: {why}");
        if let Ok(mut e) = self.load_error.lock() {
            *e = Some(why);
        }
    }

    /// Closes every folder (at shutdown, after the last request finished).
    pub fn close(&self) {
        if let Some(f) = self.folders.get() {
            f.close();
        }
    }
}

/// What `serve` says at start-up about Markdown directly in the docs dir: for `serve`,
/// `RAGDOWN_DOCS_DIR` is the directory *of* folders, unlike for `stdio`, and a user who points
/// both at one notes directory meets this first.
pub fn loose_files_message(docs_dir: &std::path::Path, loose: &[String]) -> String {
    const NAMED: usize = 5;
    let mut names = loose
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if loose.len() > NAMED {
        names.push_str(&format!(" and {} more", loose.len() - NAMED));
    }
    let files = if loose.len() == 1 { "file" } else { "files" };
    format!(
        "{} Markdown {files} at the top of {} {} not in a folder, so not indexed: {names}. For \
         `serve`, RAGDOWN_DOCS_DIR is the directory of folders (each subdirectory is one); move \
         them into a subdirectory, or open the web UI and use \"Move into a folder\"",
        loose.len(),
        docs_dir.display(),
        if loose.len() == 1 { "is" } else { "are" },
    )
}
