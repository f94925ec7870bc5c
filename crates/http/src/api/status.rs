//! `/api/status`, `/api/settings` and `/api/query-log`: how the server is, its settings, and
//! what its query log sums up to.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ragdown_server::documents;
use serde_json::{Value, json};

use crate::request::{blocking, check_writable, json_body, role_of};
use crate::server_settings::{self, ServerPatch, SettingsShape};
use crate::{ApiError, ApiResult, AppState};

/// `GET /api/status`: who answers, whether it is ready, its settings, and (once the folders
/// are open) what they hold.
#[derive(serde::Serialize)]
pub(crate) struct StatusShape {
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
pub(crate) struct IndexSummary {
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

pub(crate) async fn status(State(state): State<AppState>) -> Response {
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

pub(crate) async fn patch_settings(
    State(state): State<AppState>,
    body: Bytes,
) -> ApiResult<Response> {
    check_writable(&state)?;
    let changes = ServerPatch::read(json_body::<Value>(&body)?)?;
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
        let next = saved.over(&st.env_tunables());
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

pub(crate) async fn query_log(State(state): State<AppState>) -> ApiResult<Response> {
    let folders = state.folders()?;
    let enabled = state.tunables().query_log;
    blocking(move || {
        /// Settings → Usage: the summary, and whether the log is on.
        #[derive(serde::Serialize)]
        struct Usage {
            #[serde(flatten)]
            summary: ragdown_server::query_log::Summary,
            enabled: bool,
        }
        let usage = Usage {
            summary: folders.query_log.summary(),
            enabled,
        };
        Ok(axum::Json(usage).into_response())
    })
    .await
}

pub(crate) async fn clear_query_log(State(state): State<AppState>) -> ApiResult<Response> {
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
