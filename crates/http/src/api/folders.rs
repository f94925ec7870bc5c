//! `/api/folders…` and `/api/loose`: the folders of documents as the web UI lists, creates,
//! changes and removes them, and the loose files at the top of the docs dir.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ragdown_server::folder_config::FolderConfig;
use serde_json::{Map, Value, json};

use crate::folders::Folder;
use crate::request::{
    blocking, body_object, check_writable, folder_of, required, role_of, string_field, url_segment,
    with_folder,
};
use crate::{ApiError, ApiResult, AppState};

/// A folder as `/api/folders` lists it.
#[derive(serde::Serialize)]
pub(crate) struct FolderShape {
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

pub(crate) fn folder_shape(folder: &Folder) -> FolderShape {
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

pub(crate) async fn list_folders(State(state): State<AppState>) -> ApiResult<Response> {
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
pub(crate) fn folder_settings_patch(body: &Map<String, Value>) -> Map<String, Value> {
    ["title", "mcp", "hook"]
        .into_iter()
        .filter_map(|key| Some((key.to_string(), body.get(key)?.clone())))
        .collect()
}

pub(crate) async fn create_folder(
    State(state): State<AppState>,
    body: Bytes,
) -> ApiResult<Response> {
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

pub(crate) async fn patch_folder(
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

pub(crate) async fn delete_folder(
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
pub(crate) async fn adopt_loose(State(state): State<AppState>, body: Bytes) -> ApiResult<Response> {
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

pub(crate) async fn delete_loose(
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
