//! The `/api` routes the web UI uses, and the router that puts them, `/mcp…` and the fallbacks
//! together. Every route is declared once in [`api_routes`], which also decides whether it
//! needs the token: a route cannot be added without saying so (a test walks the table).
//!
//! Paths in `/api` include the folder (`work/notes/a.md`); handlers split it off, then call the
//! `server` crate's documents code on that folder's engine, off the async executor. Writes
//! answer after the index has synced.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Query, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, any, get};
use ragdown_index::walk::is_skipped_name;
use ragdown_server::answers::{FoundHit, Listed, Recall, Reindexed, best_first};
use ragdown_server::args::ListArgs;
use ragdown_server::folder_config::FolderConfig;
use ragdown_server::format::full_hash;
use ragdown_server::{Engine, ToolError, documents, paths};
use serde_json::{Map, Value, json};

use crate::folders::{Folder, Folders};
use crate::server_settings::{self, ServerPatch, SettingsShape};
use crate::{ApiError, ApiResult, AppState, auth, mcp_routes};

/// Largest JSON body, and largest upload or move body.
pub const MAX_BODY: usize = 1024 * 1024;
pub const MAX_UPLOAD: usize = 4 * 1024 * 1024;

/// One declared route.
pub struct ApiRoute {
    pub path: &'static str,
    pub methods: &'static [Method],
    /// `false` only for `GET /api/status`.
    pub needs_token: bool,
    pub handler: MethodRouter<AppState>,
}

fn route(
    path: &'static str,
    methods: &'static [Method],
    handler: MethodRouter<AppState>,
) -> ApiRoute {
    ApiRoute {
        path,
        methods,
        needs_token: true,
        handler,
    }
}

/// Every route of `/api` and `/mcp`, with its methods.
pub fn api_routes() -> Vec<ApiRoute> {
    use axum::routing::{patch, post};
    vec![
        ApiRoute {
            path: "/api/status",
            methods: &[Method::GET],
            needs_token: false,
            handler: get(status),
        },
        route(
            "/api/folders",
            &[Method::GET, Method::POST],
            get(list_folders).post(create_folder),
        ),
        route(
            "/api/folders/{name}",
            &[Method::PATCH, Method::DELETE],
            patch(patch_folder).delete(delete_folder),
        ),
        route("/api/settings", &[Method::PATCH], patch(patch_settings)),
        route(
            "/api/query-log",
            &[Method::GET, Method::DELETE],
            get(query_log).delete(clear_query_log),
        ),
        route(
            "/api/loose",
            &[Method::POST, Method::DELETE],
            post(adopt_loose).delete(delete_loose),
        ),
        route("/api/docs", &[Method::GET], get(list_docs)),
        route(
            "/api/doc",
            &[Method::GET, Method::POST, Method::DELETE],
            get(read_doc)
                .post(write_doc)
                .delete(delete_doc)
                .layer(DefaultBodyLimit::max(MAX_UPLOAD)),
        ),
        route("/api/search", &[Method::GET], get(search)),
        route("/api/resolve", &[Method::GET], get(resolve)),
        route(
            "/api/move",
            &[Method::POST],
            post(move_doc).layer(DefaultBodyLimit::max(MAX_UPLOAD)),
        ),
        route("/api/backlinks", &[Method::GET], get(backlinks)),
        route(
            "/api/render",
            &[Method::GET, Method::POST],
            get(crate::rendering::render)
                .post(crate::rendering::render_draft)
                .layer(DefaultBodyLimit::max(MAX_UPLOAD)),
        ),
        route("/api/file", &[Method::GET], get(file)),
        route(
            "/mcp",
            &[Method::GET, Method::POST, Method::DELETE],
            any(mcp_routes::mcp),
        ),
        route(
            "/mcp/{*scope}",
            &[Method::GET, Method::POST, Method::DELETE],
            any(mcp_routes::mcp),
        ),
    ]
}

async fn not_found() -> ApiError {
    ApiError::not_found("Not found")
}

async fn no_oauth() -> ApiError {
    ApiError::not_found(
        "Not found: ragdown has no OAuth. Send the server's token as the header \
         Authorization: Bearer <RAGDOWN_TOKEN>",
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed")
}

pub fn router(state: AppState) -> Router {
    let mut open = Router::new();
    let mut protected = Router::new();
    for r in api_routes() {
        if r.needs_token {
            protected = protected.route(r.path, r.handler);
        } else {
            open = open.route(r.path, r.handler);
        }
    }
    // `route_layer`: auth runs for matched routes only, so an unknown /api path is a 404 before
    // auth, as upstream.
    let protected = protected.route_layer(axum::middleware::from_fn_with_state(
        state.clone(),
        auth::require_token,
    ));
    let keep_alive = state.config.keep_alive_ms;
    let guard = axum::middleware::from_fn_with_state(state.clone(), crate::guard::check);
    open.merge(protected)
        .route("/api", any(not_found))
        .route("/api/{*rest}", any(not_found))
        // OAuth discovery (`oauth-protected-resource`, `oauth-authorization-server`, …): JSON,
        // not the web app's page, so such a client reports plainly that there is none.
        .route("/.well-known/{*rest}", any(no_oauth))
        .fallback(crate::ui::serve)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::map_response(
            move |mut response: Response| async move {
                if keep_alive > 0
                    && let Ok(v) =
                        HeaderValue::from_str(&format!("timeout={}", keep_alive.div_ceil(1000)))
                {
                    response.headers_mut().insert("keep-alive", v);
                }
                response
            },
        ))
        // Outermost: a cross-site or trickling request is refused before anything else runs.
        .layer(guard)
        .with_state(state)
}

// ---------------------------------------------------------------- helpers

/// Runs blocking work (file I/O, syncing, embedding) off the async executor.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        tracing::error!("[http] a request failed unexpectedly: {e}");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error: the request failed unexpectedly (logged on the server)",
        )
    })?
}

/// The JSON object of a body: empty or non-object is `{}`, invalid JSON a 400.
pub(crate) fn body_object(body: &Bytes) -> ApiResult<Map<String, Value>> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Ok(Map::new()),
        Err(e) => Err(ApiError::bad_request(format!("invalid JSON body: {e}"))),
    }
}

fn string_field(body: &Map<String, Value>, key: &str) -> ApiResult<Option<String>> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(ApiError::bad_request(format!(
            "{key} must be a string, not {other}"
        ))),
    }
}

pub(crate) fn required_field(body: &Map<String, Value>, key: &str) -> ApiResult<String> {
    string_field(body, key)?.ok_or_else(|| ApiError::bad_request(format!("{key} is missing")))
}

pub(crate) fn required<'a>(query: &'a HashMap<String, String>, key: &str) -> ApiResult<&'a str> {
    query
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| ApiError::bad_request(format!("the {key} parameter is missing")))
}

fn check_writable(state: &AppState) -> ApiResult<()> {
    if state.config.server.read_only {
        return Err(ApiError::read_only());
    }
    Ok(())
}

/// A client path of /api, normalised; `..` is refused outright (paths name the folder, so
/// there is never a reason to climb).
fn api_path(input: &str) -> ApiResult<String> {
    if input
        .replace('\\', "/")
        .split('/')
        .any(|s| s.trim() == "..")
    {
        return Err(ApiError::bad_request(format!(
            "{input} climbs with '..': give the path from the folder down (work/notes/a.md)"
        )));
    }
    Ok(paths::normalize(input)?)
}

/// Splits `work/notes/a.md` into the folder and the folder-relative path (which may be empty).
pub(crate) fn split_path(folders: &Folders, input: &str) -> ApiResult<(Arc<Folder>, String)> {
    let path = api_path(input)?;
    let (name, rel) = path.split_once('/').unwrap_or((path.as_str(), ""));
    if name.is_empty() {
        return Err(ApiError::bad_request(
            "the path names no folder: paths in /api start with the folder (work/notes/a.md)",
        ));
    }
    let folder = folders
        .get(name)
        .ok_or_else(|| ApiError::not_found(format!("no folder named {name}")))?;
    Ok((folder, rel.to_string()))
}

fn folder_of(folders: &Folders, name: &str) -> ApiResult<Arc<Folder>> {
    folders
        .get(name)
        .ok_or_else(|| ApiError::not_found(format!("no folder named {name}")))
}

pub(crate) fn with_folder(folder: &str, rel: &str) -> String {
    format!("{folder}/{rel}")
}

/// What the folder's last sync did (`null` before its first), as a write answers it.
fn last_sync(engine: &Engine) -> Option<Reindexed> {
    let last = engine.last_sync.lock().ok().and_then(|l| l.clone());
    last.map(|l| Reindexed::from(&l.report))
}

fn url_segment(name: &str) -> String {
    name.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A folder as `/api/folders` lists it.
#[derive(serde::Serialize)]
struct FolderShape {
    name: String,
    title: String,
    mcp: bool,
    /// The folder's own hook values (those it leaves out come from the server's).
    hook: ragdown_server::hook_patch::HookPatch,
    mcp_path: String,
    files: usize,
    chunks: usize,
    role: &'static str,
    /// Where its records are kept: `sqlite` or `postgres`.
    records: &'static str,
    /// Record generations this server's view is behind the writer's (0 for the primary;
    /// absent when the records cannot be read right now).
    behind: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_by: Option<String>,
}

/// What this process is to an index: `primary` (writes it), `follower` (shared records
/// another server writes) or `reader` (another process on this host writes it).
fn role_of(index: &ragdown_index::Index) -> &'static str {
    if index.is_writable() {
        "primary"
    } else if index.is_follower() {
        "follower"
    } else {
        "reader"
    }
}

fn folder_shape(folder: &Folder) -> FolderShape {
    let config = folder.config();
    let snap = folder.engine.index.snapshot();
    FolderShape {
        name: folder.name.clone(),
        title: config.title_or(&folder.name).to_string(),
        mcp: config.mcp,
        hook: config.hook.clone(),
        mcp_path: format!("/mcp/{}", url_segment(&folder.name)),
        files: snap.document_count(),
        chunks: snap.chunk_count(),
        role: role_of(&folder.engine.index),
        records: folder.engine.index.records_backend(),
        behind: folder.engine.index.generations_behind().ok(),
        created_by: config.created_by.clone(),
    }
}

// ---------------------------------------------------------------- status, settings

/// `GET /api/status`: who answers, whether it is ready, its settings, and (once the folders
/// are open) what they hold.
#[derive(serde::Serialize)]
struct StatusShape {
    name: &'static str,
    version: &'static str,
    ready: bool,
    auth_required: bool,
    read_only: bool,
    settings: SettingsShape,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    index: Option<IndexSummary>,
}

/// Every folder's index at once.
#[derive(serde::Serialize)]
struct IndexSummary {
    folders: usize,
    files: usize,
    chunks: usize,
    syncing: bool,
    /// Files read and sections indexed so far by the syncs that run (a first index, an
    /// embedder switch's rebuild); absent when none runs over changed files.
    #[serde(skip_serializing_if = "Option::is_none")]
    progress: Option<ragdown_index::SyncProgress>,
    embedder: Option<String>,
    search: Option<String>,
    role: &'static str,
    /// Where the records are kept: `sqlite` (each server's data dir) or `postgres` (shared).
    records: Option<&'static str>,
    /// The most record generations any folder's view is behind its writer (see
    /// `/api/folders` for each); absent when some records cannot be read right now.
    behind: Option<u64>,
}

async fn status(State(state): State<AppState>) -> Response {
    let saved = state.saved.read();
    let settings = SettingsShape {
        effective: state.tunables(),
        saved,
        env: Some(state.env_tunables()),
        embedders: Some(server_settings::embedder_floors()),
    };
    let mut body = StatusShape {
        name: "ragdown",
        version: env!("CARGO_PKG_VERSION"),
        ready: state.ready(),
        auth_required: state.token_digest.is_some(),
        read_only: state.config.server.read_only,
        settings,
        index: None,
    };
    if let Ok(folders) = state.folders() {
        // Reading how far behind each folder is asks its records: off the async workers.
        let (list, behind) = blocking(move || {
            let list = folders.list();
            let behind = list
                .iter()
                .map(|f| f.engine.index.generations_behind().ok())
                .try_fold(0, |most, lag| Some(most.max(lag?)));
            Ok((list, behind))
        })
        .await
        .unwrap_or_default();
        let mut index = IndexSummary {
            folders: list.len(),
            files: 0,
            chunks: 0,
            syncing: false,
            progress: ragdown_index::SyncProgress::total(
                list.iter().filter_map(|f| f.engine.index.sync_progress()),
            ),
            embedder: list
                .first()
                .map(|f| f.engine.index.embedder().id().to_string()),
            search: list
                .first()
                .map(|f| documents::search_kind(f.engine.index.embedder().as_ref())),
            // The server's part for all its folders: primary only when it writes every one.
            role: list
                .iter()
                .map(|f| role_of(&f.engine.index))
                .max_by_key(|role| match *role {
                    "reader" => 2,
                    "follower" => 1,
                    _ => 0,
                })
                .unwrap_or("primary"),
            records: list.first().map(|f| f.engine.index.records_backend()),
            behind,
        };
        for f in &list {
            let snap = f.engine.index.snapshot();
            index.files += snap.document_count();
            index.chunks += snap.chunk_count();
            index.syncing |= f
                .engine
                .index
                .status()
                .syncing
                .load(std::sync::atomic::Ordering::Relaxed);
        }
        body.index = Some(index);
    }
    axum::Json(body).into_response()
}

async fn patch_settings(State(state): State<AppState>, body: Bytes) -> ApiResult<Response> {
    check_writable(&state)?;
    let changes = ServerPatch::read(Value::Object(body_object(&body)?))?;
    let folders = state.folders()?;
    let _one_at_a_time = state.settings_change.lock().await;
    let st = state.clone();
    blocking(move || {
        // Servers sharing records in a database share this file too (it is in the docs dir):
        // whichever saves it, every one follows it within a second.
        if !folders.is_primary() && st.config.database.is_none() {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "this process does not own the index (another ragdown is its primary): change the settings there",
            ));
        }
        let saved = st.saved.patched(changes);
        let next = st.env_tunables().with_saved(&saved);
        // A new embedder is loaded before anything changes: one that cannot load changes nothing.
        let embedder = st.load_embedder_of(&next).map_err(ApiError::bad_request)?;
        st.saved.write(&saved)?;
        st.put_in_effect(&next, embedder)?;
        let settings = SettingsShape {
            effective: next,
            saved,
            env: None,
            embedders: None,
        };
        Ok(axum::Json(json!({ "settings": settings })).into_response())
    })
    .await
}

async fn query_log(State(state): State<AppState>) -> ApiResult<Response> {
    let folders = state.folders()?;
    let enabled = state.tunables().query_log;
    blocking(move || {
        let mut summary = folders.query_log.summary();
        summary["enabled"] = json!(enabled);
        Ok(axum::Json(summary).into_response())
    })
    .await
}

async fn clear_query_log(State(state): State<AppState>) -> ApiResult<Response> {
    // Emptying the log is allowed read-only or not: it holds no documents.
    let folders = state.folders()?;
    blocking(move || {
        folders
            .query_log
            .clear()
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        Ok(axum::Json(json!({ "cleared": true })).into_response())
    })
    .await
}

// ---------------------------------------------------------------- folders

async fn list_folders(State(state): State<AppState>) -> ApiResult<Response> {
    let folders = state.folders()?;
    blocking(move || {
        let list: Vec<FolderShape> = folders.list().iter().map(|f| folder_shape(f)).collect();
        Ok(
            axum::Json(json!({ "folders": list, "loose_files": folders.loose_files() }))
                .into_response(),
        )
    })
    .await
}

/// The folder settings (`.ragdown.json` keys) a request body carries.
fn folder_settings_patch(body: &Map<String, Value>) -> Map<String, Value> {
    ["title", "mcp", "hook"]
        .into_iter()
        .filter_map(|key| Some((key.to_string(), body.get(key)?.clone())))
        .collect()
}

async fn create_folder(State(state): State<AppState>, body: Bytes) -> ApiResult<Response> {
    check_writable(&state)?;
    let body = body_object(&body)?;
    let folders = state.folders()?;
    let name = string_field(&body, "name")?
        .ok_or_else(|| ApiError::bad_request("name is missing: the folder's directory name"))?;
    blocking(move || {
        let mut config = FolderConfig::default();
        let patch = folder_settings_patch(&body);
        config.apply_patch(&patch)?;
        let folder = folders.create(&name, &config)?;
        Ok((
            StatusCode::CREATED,
            axum::Json(json!({ "folder": folder_shape(&folder) })),
        )
            .into_response())
    })
    .await
}

async fn patch_folder(
    State(state): State<AppState>,
    UrlPath(name): UrlPath<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let body = body_object(&body)?;
    let folders = state.folders()?;
    let read_only = state.config.server.read_only;
    blocking(move || {
        let mut folder = folder_of(&folders, &name)?;
        let mut config = folder.config();
        let patch = folder_settings_patch(&body);
        config.apply_patch(&patch)?;
        let rename = string_field(&body, "name")?.filter(|n| n != &name);
        if rename.is_some() && read_only {
            return Err(ApiError::read_only());
        }
        if !patch.is_empty() {
            config.write(&folder.dir)?;
        }
        if let Some(to) = rename {
            folder = folders.rename(&name, &to)?;
        }
        Ok(axum::Json(json!({ "folder": folder_shape(&folder) })).into_response())
    })
    .await
}

async fn delete_folder(
    State(state): State<AppState>,
    UrlPath(name): UrlPath<String>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult<Response> {
    check_writable(&state)?;
    let folders = state.folders()?;
    blocking(move || {
        folder_of(&folders, &name)?;
        if query.get("confirm") != Some(&name) {
            return Err(ApiError::bad_request(format!(
                "deleting a folder removes every file in it: repeat its name as ?confirm={name}"
            )));
        }
        folders.delete(&name)?;
        Ok(axum::Json(json!({ "name": name, "sync": { "removed_folder": name } })).into_response())
    })
    .await
}

/// `POST /api/loose {"folder": name}`: the loose Markdown files become a folder's documents.
async fn adopt_loose(State(state): State<AppState>, body: Bytes) -> ApiResult<Response> {
    check_writable(&state)?;
    let body = body_object(&body)?;
    let folders = state.folders()?;
    let name = string_field(&body, "folder")?
        .ok_or_else(|| ApiError::bad_request("folder is missing: the folder to move them into"))?;
    blocking(move || {
        let (folder, moved) = folders.adopt_loose(&name)?;
        Ok(axum::Json(json!({
            "folder": folder_shape(&folder),
            "moved": moved.iter().map(|f| with_folder(&folder.name, f)).collect::<Vec<_>>(),
        }))
        .into_response())
    })
    .await
}

async fn delete_loose(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult<Response> {
    check_writable(&state)?;
    let folders = state.folders()?;
    let name = required(&query, "name")?.to_string();
    blocking(move || {
        if !folders.loose_files().contains(&name) {
            return Err(ApiError::not_found(format!(
                "{name} is not a loose Markdown file of the docs directory"
            )));
        }
        std::fs::remove_file(folders.docs_dir().join(&name))
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        Ok(axum::Json(json!({ "name": name })).into_response())
    })
    .await
}

// ---------------------------------------------------------------- documents

/// A listed document as `/api` names it: `folder/path`, with its folder beside it.
pub(crate) fn in_folder(folder: &Folder, listed: Listed) -> Listed {
    Listed {
        folder: Some(folder.name.clone()),
        path: with_folder(&folder.name, &listed.path),
        superseded_by: listed
            .superseded_by
            .iter()
            .map(|p| with_folder(&folder.name, p))
            .collect(),
        ..listed
    }
}

/// One document with its whole text (`GET /api/doc`).
#[derive(serde::Serialize)]
struct DocWithText {
    #[serde(flatten)]
    doc: Listed,
    text: String,
    converted_from: Option<&'static str>,
    /// The full SHA-256 of the bytes (a `base_hash` for writes).
    hash: String,
    lines: usize,
}

/// A hit as `/api/search` answers it: the one hit shape, plus the names the HTTP API has
/// always documented for its line range and change time.
#[derive(serde::Serialize)]
struct ApiHit {
    #[serde(flatten)]
    hit: FoundHit,
    start_line: u32,
    end_line: u32,
    mtime_ms: i64,
}

async fn list_docs(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    blocking(move || {
        let chosen: Vec<Arc<Folder>> = match query.get("folder").filter(|f| !f.is_empty()) {
            Some(name) => vec![folder_of(&folders, name)?],
            None => folders.list(),
        };
        let mut docs = Vec::new();
        for folder in &chosen {
            let listing = documents::list(&folder.engine, &ListArgs::default())?;
            docs.extend(listing.documents.into_iter().map(|d| in_folder(folder, d)));
        }
        Ok(axum::Json(json!({ "docs": docs })).into_response())
    })
    .await
}

/// An indexed document read from disk, as `GET /api/doc` and `GET /api/render` start.
pub(crate) struct OpenedDocument {
    pub folder: Arc<Folder>,
    pub rel: String,
    /// Its listing, paths with the folder in front.
    pub doc: Listed,
    /// Its Markdown: the file's text, or what a PDF/DOCX/HTML/text file converts to.
    pub text: String,
    pub converted_from: Option<&'static str>,
    /// The full SHA-256 of the bytes (a `base_hash` for writes).
    pub hash: String,
}

/// Opens the indexed document `path` (`work/notes/a.md`) and logs the read as the web's.
pub(crate) fn open_document(folders: &Folders, path: &str) -> ApiResult<OpenedDocument> {
    let (folder, rel) = split_path(folders, path)?;
    let snap = folder.engine.index.snapshot();
    let record = snap
        .document_by_path(&rel)
        .cloned()
        .ok_or_else(|| ApiError::not_found(format!("not an indexed document: {path}")))?;
    let (_, abs) = paths::document(&folder.dir, &rel)?;
    let bytes = std::fs::read(&abs)
        .map_err(|_| ApiError::not_found(format!("{path} is no longer on disk")))?;
    let (text, converted_from) = documents::document_text(&rel, &bytes);
    let doc = in_folder(&folder, documents::listed(&folder.engine, &snap, &record));
    folder
        .engine
        .log_query(json!({"kind": "read", "path": rel, "via": "web"}));
    Ok(OpenedDocument {
        folder,
        rel,
        doc,
        text,
        converted_from,
        hash: full_hash(&bytes),
    })
}

async fn read_doc(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    let path = required(&query, "path")?.to_string();
    blocking(move || {
        let opened = open_document(&folders, &path)?;
        let v = DocWithText {
            doc: opened.doc,
            lines: opened.text.lines().count(),
            text: opened.text,
            converted_from: opened.converted_from,
            hash: opened.hash,
        };
        Ok(axum::Json(v).into_response())
    })
    .await
}

async fn write_doc(State(state): State<AppState>, body: Bytes) -> ApiResult<Response> {
    check_writable(&state)?;
    let body = body_object(&body)?;
    let folders = state.folders()?;
    blocking(move || {
        let path = required_field(&body, "path")?;
        let text = required_field(&body, "text")?;
        let overwrite = body
            .get("overwrite")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let base_hash = string_field(&body, "base_hash")?;
        let normalized = api_path(&path)?;
        let (name, rel) = normalized.split_once('/').unwrap_or(("", ""));
        let folder = folders.get(name).filter(|_| !rel.is_empty()).ok_or_else(|| {
            ApiError::bad_request(format!(
                "{path} is not inside a folder: upload into an existing folder (work/notes/a.md)"
            ))
        })?;
        let (rel, abs) = paths::document(&folder.dir, rel)?;
        paths::check_markdown(&rel)?;
        if abs.is_dir() {
            return Err(ApiError::bad_request(format!("{path} is a directory")));
        }
        // Held until the new bytes are in place: the base_hash check and the write are one
        // critical section against every other writer of this document.
        let (lock, existing) = documents::lock_document(&abs, &rel)?;
        let changed = |why: &str| ApiError {
            status: StatusCode::CONFLICT,
            message: format!("{path} {why} since it was opened: reload it, or save over it"),
            code: Some("changed"),
        };
        match (&existing, &base_hash) {
            (Some(bytes), Some(base)) if !documents::is_version(&full_hash(bytes), base) => {
                return Err(changed("has changed"));
            }
            (None, Some(_)) => return Err(changed("is gone")),
            (Some(_), None) if !overwrite => {
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    format!("{path} already exists: send overwrite: true to replace it"),
                ));
            }
            _ => {}
        }
        let created = existing.is_none();
        let text = match &existing {
            Some(old) => documents::match_line_endings(&text, &String::from_utf8_lossy(old)),
            None => text,
        };
        if created {
            if !documents::create_new(&abs, &rel, text.as_bytes())? {
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    format!("{path} was created meanwhile: send overwrite: true to replace it"),
                ));
            }
        } else {
            documents::atomic_write(&abs, &rel, text.as_bytes())?;
        }
        drop(lock);
        folder.engine.sync_paths(std::slice::from_ref(&rel))?;
        let status = if created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        Ok((
            status,
            axum::Json(json!({
                "path": with_folder(&folder.name, &rel),
                "created": created,
                "hash": full_hash(text.as_bytes()),
                "sync": last_sync(&folder.engine),
            })),
        )
            .into_response())
    })
    .await
}

async fn delete_doc(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult<Response> {
    check_writable(&state)?;
    let folders = state.folders()?;
    let path = required(&query, "path")?.to_string();
    blocking(move || {
        let (folder, rel) = split_path(&folders, &path)?;
        let (rel, abs) = paths::document(&folder.dir, &rel)?;
        paths::check_markdown(&rel)?;
        if !abs.is_file() {
            return Err(ApiError::not_found(format!("no such document: {path}")));
        }
        documents::delete(&folder.engine, &rel, false, None)?;
        Ok(axum::Json(json!({
            "path": with_folder(&folder.name, &rel),
            "sync": last_sync(&folder.engine),
        }))
        .into_response())
    })
    .await
}

/// Hybrid search over one folder (`folder=`) or, without one, every folder (human-only ones
/// included: this is the people's search), hits merged by fused score. While a folder is
/// still indexing, `indexing` says how far it is.
async fn search(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    let q = required(&query, "q")?.to_string();
    let name = query.get("folder").filter(|f| !f.is_empty()).cloned();
    let top_k = match query.get("top_k").filter(|v| !v.is_empty()) {
        None => 10,
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request(format!("top_k must be a number, not {v}")))?,
    }
    .clamp(1, 50);
    let tag = query.get("tag").cloned();
    blocking(move || {
        let searched = match &name {
            Some(name) => vec![folder_of(&folders, name)?],
            None => folders.list(),
        };
        let mut found: Vec<FoundHit> = Vec::new();
        for folder in &searched {
            let engine = &folder.engine;
            let settings = engine.settings();
            let options = ragdown_search::SearchOptions {
                limit: top_k,
                tag: tag.as_deref().and_then(ragdown_markdown::tags::normalize),
                max_per_document: settings.max_per_document,
                follow_links: settings.follow_links,
                ..Default::default()
            };
            let started = std::time::Instant::now();
            engine.index.refresh().map_err(ToolError::from)?;
            let hits =
                ragdown_search::search(&engine.index, &q, &options).map_err(ToolError::from)?;
            engine.log_query(json!({
                "kind": "search",
                "query": q,
                "filters": {"tag": options.tag, "top_k": top_k},
                "hits": ragdown_server::query_log::hits_json(&hits),
                "min_score": ragdown_server::format::rounded(engine.index.embedder().min_score(), 4),
                "latency_ms": started.elapsed().as_secs_f64() * 1000.0,
            }));
            // `/api` names a document `folder/path`.
            found.extend(hits.into_iter().map(|hit| FoundHit {
                folder: Some(folder.name.clone()),
                path: with_folder(&folder.name, hit.path()),
                hit,
            }));
        }
        best_first(&mut found, top_k);
        let recall = Recall {
            hits: found,
            indexing: ragdown_index::SyncProgress::total(
                searched.iter().filter_map(|f| f.engine.indexing()),
            ),
            keyword_only: searched
                .iter()
                .find_map(|f| ragdown_search::keyword_only(&f.engine.index)),
        };
        let hits: Vec<ApiHit> = recall
            .hits
            .into_iter()
            .map(|hit| ApiHit {
                start_line: hit.hit.line_start,
                end_line: hit.hit.line_end,
                mtime_ms: hit.hit.document.mtime_ns / 1_000_000,
                hit,
            })
            .collect();
        let mut body = json!({ "hits": hits });
        if let Some(p) = &recall.indexing {
            body["indexing"] = json!(p);
            body["note"] = json!(format!("{}; results may be incomplete", p.describe()));
        }
        if let Some(why) = &recall.keyword_only {
            body["keyword_only"] = json!(why);
        }
        Ok(axum::Json(body).into_response())
    })
    .await
}

async fn resolve(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    let from = required(&query, "from")?.to_string();
    let link = query.get("link").cloned().unwrap_or_default();
    blocking(move || {
        let (folder, from_rel) = split_path(&folders, &from)?;
        let inner = link
            .trim()
            .trim_start_matches('!')
            .trim_start_matches("[[")
            .trim_end_matches("]]");
        let parsed = ragdown_markdown::links::parse_wikilink(inner)
            .ok_or_else(|| ApiError::not_found(format!("{link} names no document")))?;
        let snap = folder.engine.index.snapshot();
        let doc = if parsed.target.is_empty() {
            snap.document_by_path(&from_rel)
        } else {
            snap.resolve(&parsed.target, Some(&from_rel))
        }
        .ok_or_else(|| ApiError::not_found(format!("{link} resolves to no document")))?;
        let mut v = json!({ "path": with_folder(&folder.name, &doc.path) });
        if let Some(anchor) = parsed.heading {
            v["anchor"] = json!(anchor);
        }
        Ok(axum::Json(v).into_response())
    })
    .await
}

async fn move_doc(State(state): State<AppState>, body: Bytes) -> ApiResult<Response> {
    check_writable(&state)?;
    let body = body_object(&body)?;
    let folders = state.folders()?;
    blocking(move || {
        let from = required_field(&body, "from")?;
        let to = required_field(&body, "to")?;
        let (folder, from_rel) = split_path(&folders, &from)?;
        let to_norm = api_path(&to)?;
        let (to_folder, to_rel) = to_norm.split_once('/').unwrap_or((to_norm.as_str(), ""));
        if to_folder != folder.name {
            return Err(ApiError::bad_request(
                "a move stays within its folder: to must start with the same folder as from",
            ));
        }
        let moved = documents::move_paths(&folder.engine, &from_rel, to_rel)?;
        let prefix = |p: &String| with_folder(&folder.name, p);
        Ok(axum::Json(json!({
            "from": prefix(&moved.from),
            "to": prefix(&moved.to),
            "updated": moved.updated.iter().map(prefix).collect::<Vec<_>>(),
            "sync": last_sync(&folder.engine),
        }))
        .into_response())
    })
    .await
}

async fn backlinks(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    let path = required(&query, "path")?.to_string();
    blocking(move || {
        let (folder, rel) = split_path(&folders, &path)?;
        if folder
            .engine
            .index
            .snapshot()
            .document_by_path(&rel)
            .is_none()
        {
            return Err(ApiError::not_found(format!(
                "not an indexed document: {path}"
            )));
        }
        let mut found = documents::backlinks(&folder.engine, &rel)?;
        found.path = with_folder(&folder.name, &found.path);
        for b in &mut found.backlinks {
            b.path = with_folder(&folder.name, &b.path);
        }
        Ok(axum::Json(found).into_response())
    })
    .await
}

/// The content type a file is served with: never one a browser would run.
fn content_type(rel: &str) -> &'static str {
    let ext = rel.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown" | "mdx") => "text/markdown; charset=utf-8",
        Some("txt" | "html" | "htm" | "js" | "mjs" | "css" | "json" | "csv") => {
            "text/plain; charset=utf-8"
        }
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

async fn file(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    let path = required(&query, "path")?.to_string();
    blocking(move || {
        let (folder, rel) = split_path(&folders, &path)?;
        if rel.is_empty() || rel.split('/').any(is_skipped_name) {
            return Err(ApiError::bad_request(format!(
                "{path} is not a file ragdown serves: dot-paths and node_modules are private"
            )));
        }
        let abs = paths::inside(&folder.dir, &rel)?;
        let file = match std::fs::symlink_metadata(&abs) {
            Ok(m) if m.is_file() => std::fs::File::open(&abs)
                .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?,
            _ => return Err(ApiError::not_found(format!("no such file: {path}"))),
        };
        let length = file
            .metadata()
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
            .len();
        // Streamed in blocks: a file of any size costs one block of memory, not its size.
        let stream = tokio_util::io::ReaderStream::new(tokio::fs::File::from_std(file));
        Ok((
            [
                (header::CONTENT_TYPE, content_type(&rel).to_string()),
                (header::CONTENT_LENGTH, length.to_string()),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
                (header::CONTENT_SECURITY_POLICY, "sandbox".to_string()),
                (header::CACHE_CONTROL, "no-cache".to_string()),
            ],
            axum::body::Body::from_stream(stream),
        )
            .into_response())
    })
    .await
}
