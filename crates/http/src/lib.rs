//! `ragdown serve`: HTTP over the folders of a docs dir. Every top-level directory is a folder
//! with its own Streamable HTTP MCP endpoint (`/mcp/<folder>[/<subfolder…>]`, stateless, JSON
//! responses), the optional root endpoint `/mcp` over every MCP folder, and the JSON `/api`
//! the web UI uses; bearer-token auth on everything but `GET /api/status`.
//!
//! The port is bound before the model loads (`ready: false` meanwhile), so a first-start
//! download never looks like a dead server. This crate adapts the `server` crate's tools and
//! documents to HTTP; it never ranks, parses Markdown or touches the index files itself.

mod api;
mod auth;
pub mod folders;
pub mod guard;
mod mcp_routes;
pub mod root;
pub mod server_settings;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ragdown_embed::{Embedder, EmbedderSettings};
use ragdown_server::{ErrorKind, ServerSettings, SharedSettings, ToolError};
use serde_json::json;
use tokio_util::sync::CancellationToken;

pub use api::{ApiRoute, api_routes};
pub use folders::{Folder, Folders, OpenWith};

/// Everything `serve` is started with (read once from the environment by the binary).
#[derive(Clone)]
pub struct ServeConfig {
    pub docs_dir: PathBuf,
    pub data_dir: PathBuf,
    /// The embedder the environment names (saved settings may name another).
    pub embedder: EmbedderSettings,
    /// The environment's server settings.
    pub server: ServerSettings,
    pub watch: bool,
    pub root_mcp: bool,
    pub max_file_bytes: u64,
    pub takeover_every: Duration,
    /// `RAGDOWN_TOKEN`; `None` only with `SECURE_LOCAL_NET=true` (checked by the caller).
    pub token: Option<String>,
    /// `HTTP_KEEP_ALIVE_TIMEOUT_MS` (0 = never close an idle connection).
    pub keep_alive_ms: u64,
    /// `RAGDOWN_ALLOWED_HOSTS` and `RAGDOWN_ALLOWED_ORIGINS`.
    pub site: guard::SitePolicy,
    /// `HTTP_BODY_TIMEOUT_MS`: how long a request body may take to arrive.
    pub body_timeout: Duration,
    /// Most connections open at once (`RAGDOWN_MAX_CONNECTIONS`, else from the descriptor
    /// limit); past it the oldest connection is closed once its request is answered.
    pub max_connections: usize,
}

/// An API failure: a status and `{"error", "code"?}`.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub code: Option<&'static str>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            code: None,
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }
    pub fn read_only() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "this server is read-only (RAGDOWN_READ_ONLY): documents and folders cannot be changed",
        )
    }
}

impl From<ToolError> for ApiError {
    fn from(e: ToolError) -> Self {
        let status = match e.kind {
            ErrorKind::Invalid => StatusCode::BAD_REQUEST,
            ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::Conflict => StatusCode::CONFLICT,
            ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        };
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            tracing::error!("[http] {}", e.message);
        }
        Self::new(status, e.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({ "error": self.message });
        if let Some(code) = self.code {
            body["code"] = json!(code);
        }
        (self.status, Json(body)).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// What every handler reads.
pub struct AppInner {
    pub config: ServeConfig,
    /// Set once the embedder has loaded and the folders are open.
    folders: OnceLock<Arc<Folders>>,
    /// The root endpoint's server (its hook memory outlives each stateless request).
    root: OnceLock<Arc<root::RootHost>>,
    /// Why loading failed, if it did.
    load_error: Mutex<Option<String>>,
    pub settings: SharedSettings,
    pub saved: server_settings::SavedSettings,
    /// The settings in effect (env with saved values over them).
    pub tunables: Mutex<server_settings::Tunables>,
    /// `PATCH /api/settings` changes one at a time.
    pub settings_change: tokio::sync::Mutex<()>,
    pub token_digest: Option<[u8; 32]>,
    pub shutdown: CancellationToken,
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
        let env = server_settings::Tunables::from_env(
            &config.embedder.name,
            config.watch,
            config.root_mcp,
            &config.server,
        );
        let tunables = env.with_saved(&saved.read());
        let mut server = config.server.clone();
        tunables.apply_to(&mut server);
        let token_digest = config.token.as_deref().map(auth::digest);
        Self(Arc::new(AppInner {
            folders: OnceLock::new(),
            root: OnceLock::new(),
            load_error: Mutex::new(None),
            settings: Arc::new(std::sync::RwLock::new(server)),
            saved,
            tunables: Mutex::new(tunables),
            settings_change: tokio::sync::Mutex::new(()),
            token_digest,
            shutdown: CancellationToken::new(),
            config,
        }))
    }

    /// The environment's tunables.
    pub fn env_tunables(&self) -> server_settings::Tunables {
        server_settings::Tunables::from_env(
            &self.config.embedder.name,
            self.config.watch,
            self.config.root_mcp,
            &self.config.server,
        )
    }

    pub fn tunables(&self) -> server_settings::Tunables {
        match self.tunables.lock() {
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
            tracing::warn!(
                "[ragdown] Markdown outside every folder is not indexed: {}",
                loose.join(", ")
            );
        }
        let _ = self
            .root
            .set(Arc::new(root::RootHost::new(folders.clone())));
        let _ = self.folders.set(folders.clone());
        // Folders are found as they appear: a cheap directory listing every second.
        let weak = Arc::downgrade(&folders);
        let shutdown = self.shutdown.clone();
        std::thread::spawn(move || {
            while !shutdown.is_cancelled() {
                std::thread::sleep(Duration::from_secs(1));
                let Some(folders) = weak.upgrade() else {
                    return;
                };
                if let Err(e) = folders.refresh() {
                    tracing::error!("{e}");
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

/// The whole router: `/api`, `/mcp…`, and the fallbacks.
pub fn router(state: AppState) -> axum::Router {
    api::router(state)
}

/// Serves until `state.shutdown` is cancelled or SIGTERM/SIGINT arrives; in-flight requests
/// finish first (for up to 30 s), then every folder is closed (its index consistent: writes are
/// transactional). An idle keep-alive connection is closed after `HTTP_KEEP_ALIVE_TIMEOUT_MS`
/// without a new request (hyper's header-read timeout starts when the connection goes idle).
///
/// At most `max_connections` stay open: a new connection past the cap asks the oldest open one
/// to close (at once when it is idle, after its answer when a request is running), so a flood
/// of idle connections cannot lock out new clients or run the process out of descriptors; a
/// few connections past the cap in which requests are still running are answered 503 and
/// closed.
pub async fn serve(state: AppState, listener: tokio::net::TcpListener) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let shutdown = state.shutdown.clone();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            shutdown_signal().await;
            tracing::info!("[ragdown] shutting down: finishing requests in flight");
            shutdown.cancel();
        }
    });
    let app = router(state.clone());
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1.keep_alive(true);
    if state.config.keep_alive_ms > 0 {
        http1
            .timer(TokioTimer::new())
            .header_read_timeout(Duration::from_millis(state.config.keep_alive_ms));
    }
    let cap = state.config.max_connections.max(1);
    // Connections asked to close but not yet closed: past this many, wait for them, then
    // refuse. (`max_connections` leaves room for these below the descriptor limit.)
    let overflow = cap / 8 + 4;
    let mut accept_warned: Option<std::time::Instant> = None;
    let open = Arc::new(Mutex::new(connections::Open::default()));
    let tracker = tokio_util::task::TaskTracker::new();
    // Every connection's close signal is a child of this one: shutdown closes them all.
    let closing_all = CancellationToken::new();
    let mut warned = false;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: wait rather than spin, and
                        // say so once a minute, not once per attempt.
                        if accept_warned.is_none_or(|at| at.elapsed() > Duration::from_secs(60)) {
                            tracing::warn!("[http] accepting a connection: {e}");
                            accept_warned = Some(std::time::Instant::now());
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let mut admitted = None;
                // Connections asked to close need a moment to do so under a burst.
                for _ in 0..20 {
                    admitted = match open.lock() {
                        Ok(mut o) => o.admit(cap, overflow, &closing_all),
                        Err(_) => None,
                    };
                    if admitted.is_some() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                let Some((id, close)) = admitted else {
                    if !warned {
                        tracing::warn!(
                            "[http] {cap} connections are open (RAGDOWN_MAX_CONNECTIONS): refusing new ones until some close"
                        );
                        warned = true;
                    }
                    tracker.spawn(connections::refuse(stream));
                    continue;
                };
                warned = false;
                let service = hyper_util::service::TowerToHyperService::new(app.clone());
                let connection = http1.serve_connection(TokioIo::new(stream), service);
                let open = open.clone();
                tracker.spawn(async move {
                    let mut connection = std::pin::pin!(connection);
                    tokio::select! {
                        _ = connection.as_mut() => {}
                        _ = close.cancelled() => {
                            // Idle: closes now; answering: closes after the answer.
                            connection.as_mut().graceful_shutdown();
                            let _ = connection.await;
                        }
                    }
                    if let Ok(mut o) = open.lock() {
                        o.closed(id);
                    }
                });
            }
            _ = shutdown.cancelled() => break,
        }
    }
    drop(listener);
    closing_all.cancel();
    tracker.close();
    if tokio::time::timeout(Duration::from_secs(30), tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("[ragdown] requests still running after 30 s: closing anyway");
    }
    let closing = state.clone();
    let _ = tokio::task::spawn_blocking(move || closing.close()).await;
    Ok(())
}

mod connections {
    //! The open connections, oldest first, each with the signal that asks it to close.

    use std::collections::VecDeque;

    use tokio::io::AsyncWriteExt;
    use tokio_util::sync::CancellationToken;

    #[derive(Default)]
    pub struct Open {
        next_id: u64,
        /// Not yet asked to close, oldest first.
        serving: VecDeque<(u64, CancellationToken)>,
        /// Asked to close, still finishing an answer.
        closing: usize,
    }

    impl Open {
        /// Admits a new connection (its id and close signal), first asking the oldest to close
        /// when `cap` are open; `None` when even those asked are still busy past `overflow`.
        pub fn admit(
            &mut self,
            cap: usize,
            overflow: usize,
            all: &CancellationToken,
        ) -> Option<(u64, CancellationToken)> {
            if self.serving.len() + self.closing >= cap {
                if self.closing >= overflow {
                    return None;
                }
                if let Some((_, oldest)) = self.serving.pop_front() {
                    oldest.cancel();
                    self.closing += 1;
                }
            }
            self.next_id += 1;
            let close = all.child_token();
            self.serving.push_back((self.next_id, close.clone()));
            Some((self.next_id, close))
        }

        pub fn closed(&mut self, id: u64) {
            match self.serving.iter().position(|(i, _)| *i == id) {
                Some(at) => {
                    self.serving.remove(at);
                }
                None => self.closing = self.closing.saturating_sub(1),
            }
        }
    }

    /// Answers 503 on a connection that cannot be served, and closes it.
    pub async fn refuse(mut stream: tokio::net::TcpStream) {
        let body = r#"{"error":"too many connections are open: try again in a moment"}"#;
        let answer = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), async {
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
        })
        .await;
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_oldest_is_asked_to_close_past_the_cap() {
            let all = CancellationToken::new();
            let mut open = Open::default();
            let first = open.admit(2, 1, &all).unwrap();
            let second = open.admit(2, 1, &all).unwrap();
            assert!(!first.1.is_cancelled());
            let third = open.admit(2, 1, &all).unwrap();
            assert!(first.1.is_cancelled(), "the oldest is asked to close");
            assert!(!second.1.is_cancelled() && !third.1.is_cancelled());
            // The first is still answering: one past the cap is all the overflow allows.
            assert!(open.admit(2, 1, &all).is_none());
            open.closed(first.0);
            let fourth = open.admit(2, 1, &all).unwrap();
            assert!(second.1.is_cancelled());
            open.closed(second.0);
            open.closed(third.0);
            open.closed(fourth.0);
            assert_eq!(open.serving.len() + open.closing, 0);
            all.cancel();
            assert!(open.admit(2, 1, &all).unwrap().1.is_cancelled());
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
