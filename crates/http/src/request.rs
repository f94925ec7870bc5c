//! What the `/api` handlers (and the rendering routes) share: running blocking work off the
//! executor, reading a request's body and parameters, naming a folder's document
//! (`work/notes/a.md` → the folder and its path), and opening an indexed document as the web
//! UI reads it. No routes here.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::http::StatusCode;
use ragdown_server::answers::{Listed, Reindexed};
use ragdown_server::format::full_hash;
use ragdown_server::query_log::{Entry, Read};
use ragdown_server::{Engine, documents, paths};
use serde_json::{Map, Value};

use crate::folders::{Folder, Folders};
use crate::{ApiError, ApiResult, AppState};

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

pub(crate) fn string_field(body: &Map<String, Value>, key: &str) -> ApiResult<Option<String>> {
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

pub(crate) fn check_writable(state: &AppState) -> ApiResult<()> {
    if state.config.server.read_only {
        return Err(ApiError::read_only());
    }
    Ok(())
}

/// A client path of /api, normalised; `..` is refused outright (paths name the folder, so
/// there is never a reason to climb).
pub(crate) fn api_path(input: &str) -> ApiResult<String> {
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

pub(crate) fn folder_of(folders: &Folders, name: &str) -> ApiResult<Arc<Folder>> {
    folders
        .get(name)
        .ok_or_else(|| ApiError::not_found(format!("no folder named {name}")))
}

pub(crate) fn with_folder(folder: &str, rel: &str) -> String {
    format!("{folder}/{rel}")
}

/// What the folder's last sync did (`null` before its first), as a write answers it.
pub(crate) fn last_sync(engine: &Engine) -> Option<Reindexed> {
    let last = engine.last_sync.lock().ok().and_then(|l| l.clone());
    last.map(|l| Reindexed::from(&l.report))
}

pub(crate) fn url_segment(name: &str) -> String {
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
    folder.engine.log_query(Entry::Read(Read {
        path: rel.clone(),
        lines: None,
        via: Some("web".into()),
    }));
    Ok(OpenedDocument {
        folder,
        rel,
        doc,
        text,
        converted_from,
        hash: full_hash(&bytes),
    })
}

/// What this process is to an index: `primary` (writes it), `follower` (shared records
/// another server writes) or `reader` (another process on this host writes it).
pub(crate) fn role_of(index: &ragdown_index::Index) -> &'static str {
    if index.is_writable() {
        "primary"
    } else if index.is_follower() {
        "follower"
    } else {
        "reader"
    }
}
