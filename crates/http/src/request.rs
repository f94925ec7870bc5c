//! What the `/api` handlers (and the rendering routes) share: running blocking work off the
//! executor, reading a request's body and parameters, naming a folder's document
//! (`work/notes/a.md` → the folder and its path), and opening an indexed document as the web
//! UI reads it. No routes here.

use std::sync::Arc;

use axum::body::Bytes;
use axum::http::StatusCode;
use ragdown_server::answers::{Listed, Reindexed};
use ragdown_server::format::full_hash;
use ragdown_server::query_log::{Entry, Read};
use ragdown_server::{Engine, documents, paths};

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

/// A required text parameter or body field: present and not blank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Given(pub String);

impl<'de> serde::Deserialize<'de> for Given {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text.trim().is_empty() {
            return Err(serde::de::Error::custom("must not be empty"));
        }
        Ok(Self(text))
    }
}

impl std::ops::Deref for Given {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// An optional text parameter where an empty value (`folder=`) means none.
pub(crate) fn blank_is_none<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<String>, D::Error> {
    let text: Option<String> = serde::Deserialize::deserialize(d)?;
    Ok(text.filter(|t| !t.trim().is_empty()))
}

/// A failed read of a request's `part` (its query string or body) as a 400 naming the
/// parameter or field: `the query string: top_k: invalid digit found in string`.
fn unreadable<E: std::fmt::Display>(part: &str, e: serde_path_to_error::Error<E>) -> ApiError {
    let place = e.path().to_string();
    if place == "." {
        ApiError::bad_request(format!("the {part}: {}", e.inner()))
    } else {
        ApiError::bad_request(format!("the {part}: {place}: {}", e.inner()))
    }
}

/// The query string as `T` (a `Deserialize` struct of the route's parameters).
pub(crate) struct Params<T>(pub T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S>
    for Params<T>
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or_default();
        let pairs = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(pairs)
            .map(Params)
            .map_err(|e| unreadable("query string", e))
    }
}

/// A JSON body as `T`; an empty body reads as `{}`.
pub(crate) fn json_body<T: serde::de::DeserializeOwned>(body: &Bytes) -> ApiResult<T> {
    let text: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        body
    };
    let mut json = serde_json::Deserializer::from_slice(text);
    serde_path_to_error::deserialize(&mut json).map_err(|e| unreadable("body", e))
}

/// `?path=`: the document or file a route acts on, folder first (`work/notes/a.md`).
#[derive(serde::Deserialize)]
pub(crate) struct PathParam {
    pub path: Given,
}

/// `?folder=`: one folder, or every folder when left out or empty.
#[derive(serde::Deserialize)]
pub(crate) struct FolderParam {
    #[serde(default, deserialize_with = "blank_is_none")]
    pub folder: Option<String>,
}

/// An optional number parameter where an empty value (`top_k=`) means none.
pub(crate) fn blank_or_number<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<usize>, D::Error> {
    match blank_is_none(d)? {
        None => Ok(None),
        Some(text) => text
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("must be a number, not {text}"))),
    }
}
