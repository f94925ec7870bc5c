//! `/api/docs`, `/api/doc`, `/api/move`, `/api/resolve`, `/api/backlinks` and `/api/file`:
//! documents as the web UI lists, reads, writes, moves and deletes them, their links, and
//! the files beside them.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use ragdown_index::walk::is_skipped_name;
use ragdown_server::answers::Listed;
use ragdown_server::args::ListArgs;
use ragdown_server::format::full_hash;
use ragdown_server::{documents, paths};
use serde_json::json;

use crate::folders::Folder;
use crate::request::{
    FolderParam, Given, Params, PathParam, api_path, blocking, check_writable, folder_of,
    in_folder, json_body, last_sync, open_document, split_path, with_folder,
};
use crate::{ApiError, ApiResult, AppState};

/// One document with its whole text (`GET /api/doc`).
#[derive(serde::Serialize)]
pub(crate) struct DocWithText {
    #[serde(flatten)]
    doc: Listed,
    text: String,
    converted_from: Option<&'static str>,
    /// The full SHA-256 of the bytes (a `base_hash` for writes).
    hash: String,
    lines: usize,
}

pub(crate) async fn list_docs(
    State(state): State<AppState>,
    Params(asked): Params<FolderParam>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    blocking(move || {
        let chosen: Vec<Arc<Folder>> = match &asked.folder {
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

pub(crate) async fn read_doc(
    State(state): State<AppState>,
    Params(PathParam { path }): Params<PathParam>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    let path = path.0;
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

pub(crate) async fn write_doc(State(state): State<AppState>, body: Bytes) -> ApiResult<Response> {
    check_writable(&state)?;
    /// `POST /api/doc`: a document's whole text, at its path.
    #[derive(serde::Deserialize)]
    struct WriteBody {
        path: Given,
        text: String,
        /// Replace a document that exists (without `base_hash`: whatever it holds).
        #[serde(default)]
        overwrite: bool,
        /// Replace only this version (`hash` of `GET /api/doc`).
        #[serde(default)]
        base_hash: Option<String>,
    }
    let WriteBody {
        path,
        text,
        overwrite,
        base_hash,
    } = json_body(&body)?;
    let path = path.0;
    let folders = state.folders()?;
    blocking(move || {
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

pub(crate) async fn delete_doc(
    State(state): State<AppState>,
    Params(PathParam { path }): Params<PathParam>,
) -> ApiResult<Response> {
    check_writable(&state)?;
    let folders = state.folders()?;
    let path = path.0;
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

/// `GET /api/resolve`: the document a link in `from` names.
#[derive(serde::Deserialize)]
pub(crate) struct ResolveParams {
    from: Given,
    #[serde(default)]
    link: String,
}

pub(crate) async fn resolve(
    State(state): State<AppState>,
    Params(ResolveParams { from, link }): Params<ResolveParams>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    let from = from.0;
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

pub(crate) async fn move_doc(State(state): State<AppState>, body: Bytes) -> ApiResult<Response> {
    check_writable(&state)?;
    /// `POST /api/move`: a document or subfolder's path, and its new one.
    #[derive(serde::Deserialize)]
    struct MoveBody {
        from: Given,
        to: Given,
    }
    let MoveBody { from, to } = json_body(&body)?;
    let (from, to) = (from.0, to.0);
    let folders = state.folders()?;
    blocking(move || {
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

pub(crate) async fn backlinks(
    State(state): State<AppState>,
    Params(PathParam { path }): Params<PathParam>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    let path = path.0;
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
pub(crate) fn content_type(rel: &str) -> &'static str {
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

pub(crate) async fn file(
    State(state): State<AppState>,
    Params(PathParam { path }): Params<PathParam>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    let path = path.0;
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
