//! `/api/folders…` and `/api/loose`: the folders of documents as the web UI lists, creates,
//! changes and removes them, and the loose files at the top of the docs dir.

use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ragdown_server::folder_config::{FolderConfig, FolderPatch};
use serde_json::json;

use crate::folders::Folder;
use crate::request::{
    Given, Params, blocking, check_writable, folder_of, json_body, role_of, url_segment,
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
    hook: ragdown_server::HookPatch,
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

/// `POST /api/folders` and `PATCH /api/folders/{name}`: a name (the new folder's, or a
/// rename), and the folder's settings to change.
#[derive(serde::Deserialize)]
pub(crate) struct FolderBody {
    #[serde(default)]
    name: Option<Given>,
    #[serde(flatten)]
    settings: FolderPatch,
}

pub(crate) async fn create_folder(
    State(state): State<AppState>,
    body: Bytes,
) -> ApiResult<Response> {
    check_writable(&state)?;
    let FolderBody { name, settings } = json_body(&body)?;
    let name = name
        .ok_or_else(|| ApiError::bad_request("name is missing: the folder's directory name"))?
        .0;
    let folders = state.folders()?;
    blocking(move || {
        let mut config = FolderConfig::default();
        config.apply(settings);
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
    let FolderBody {
        name: rename,
        settings,
    } = json_body(&body)?;
    let folders = state.folders()?;
    let read_only = state.config.server.read_only;
    blocking(move || {
        let mut folder = folder_of(&folders, &name)?;
        let rename = rename.map(|n| n.0).filter(|n| n != &name);
        if rename.is_some() && read_only {
            return Err(ApiError::read_only());
        }
        if !settings.is_empty() {
            let mut config = folder.config();
            config.apply(settings);
            config.write(&folder.dir)?;
        }
        if let Some(to) = rename {
            folder = folders.rename(&name, &to)?;
        }
        Ok(axum::Json(json!({ "folder": folder_shape(&folder) })).into_response())
    })
    .await
}

/// `DELETE /api/folders/{name}?confirm=name`.
#[derive(serde::Deserialize)]
pub(crate) struct ConfirmParam {
    #[serde(default)]
    confirm: Option<String>,
}

pub(crate) async fn delete_folder(
    State(state): State<AppState>,
    UrlPath(name): UrlPath<String>,
    Params(ConfirmParam { confirm }): Params<ConfirmParam>,
) -> ApiResult<Response> {
    check_writable(&state)?;
    let folders = state.folders()?;
    blocking(move || {
        folder_of(&folders, &name)?;
        if confirm.as_ref() != Some(&name) {
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
    /// `POST /api/loose`: the folder to move the loose files into (made when missing).
    #[derive(serde::Deserialize)]
    struct AdoptBody {
        folder: Given,
    }
    let name = json_body::<AdoptBody>(&body)?.folder.0;
    let folders = state.folders()?;
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

/// `DELETE /api/loose?name=`: one loose file.
#[derive(serde::Deserialize)]
pub(crate) struct NameParam {
    name: Given,
}

pub(crate) async fn delete_loose(
    State(state): State<AppState>,
    Params(NameParam { name }): Params<NameParam>,
) -> ApiResult<Response> {
    check_writable(&state)?;
    let folders = state.folders()?;
    let name = name.0;
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
