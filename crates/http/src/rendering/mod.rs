//! `GET /api/render?path=`: a document as the web UI shows it (and `POST /api/render` with
//! `{path, text}`: an unsaved draft of it, for the editor's preview) — sanitised HTML from
//! `ragdown-render`, its links resolved by the folder's index (the same resolver search, backlinks
//! and moves use), its headings with the line ranges hits cite, its frontmatter as properties.
//!
//! Owns only the adaptation: which document or file a link names, seen from the document, and
//! keeping what was rendered: a document is rendered once per version of its bytes and of the
//! folder's documents ([`RenderCache`]), and a render that takes longer than
//! [`RENDER_DEADLINE`] is answered with a 503 rather than holding the page. It never builds
//! HTML itself (that is `ragdown-render`, which also sanitises and bounds its own work).

use std::time::Duration;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use ragdown_index::Snapshot;
use ragdown_index::walk::is_skipped_name;
use ragdown_markdown::links::join_relative;
use ragdown_render::{Rendered, Resolve};
use ragdown_server::answers::Listed;
use ragdown_server::paths;

use axum::body::Bytes;

pub(crate) mod cache;

use crate::request::{
    Given, Params, PathParam, blocking, json_body, open_document, split_path, with_folder,
};
use crate::{ApiError, ApiResult, AppState, Folder};
use cache::RenderKey;

/// The longest a page waits for a document to render. Rendering is linear in the document's
/// size (nesting is capped), so only a document near the size limit on a loaded machine
/// comes close; the work finishes on its thread and is cached for the next view.
pub const RENDER_DEADLINE: Duration = Duration::from_secs(10);

/// What `GET /api/render` answers.
#[derive(serde::Serialize)]
struct RenderedDocument {
    #[serde(flatten)]
    doc: Listed,
    #[serde(flatten)]
    rendered: Rendered,
    converted_from: Option<&'static str>,
    hash: String,
}

/// Links seen from one document of one folder.
struct FromDocument<'a> {
    folder: &'a Folder,
    snapshot: &'a Snapshot,
    /// The linking document, folder-relative.
    rel: &'a str,
}

impl Resolve for FromDocument<'_> {
    fn document(&self, target: &str) -> Option<String> {
        self.snapshot
            .resolve(target, Some(self.rel))
            .map(|doc| with_folder(&self.folder.name, &doc.path))
    }

    /// A file beside the document, else from the folder's root; never a private path, never
    /// through a symlink.
    fn file(&self, target: &str) -> Option<String> {
        let target = target.trim().replace("%20", " ");
        let candidates = [join_relative(self.rel, &target), join_relative("", &target)];
        candidates.into_iter().flatten().find_map(|rel| {
            if rel.is_empty() || rel.split('/').any(is_skipped_name) {
                return None;
            }
            let abs = paths::inside(&self.folder.dir, &rel).ok()?;
            std::fs::symlink_metadata(&abs)
                .ok()
                .filter(|m| m.is_file())
                .map(|_| with_folder(&self.folder.name, &rel))
        })
    }
}

pub(crate) async fn render(
    State(state): State<AppState>,
    Params(PathParam { path }): Params<PathParam>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    let path = path.0;
    let shown = path.clone();
    let work = blocking(move || {
        let opened = open_document(&folders, &path)?;
        let snapshot = opened.folder.engine.index.snapshot();
        let key = RenderKey {
            dir: opened.folder.dir.clone(),
            rel: opened.rel.clone(),
            hash: opened.hash.clone(),
            documents: snapshot.document_count(),
            newest: snapshot.max_document_id(),
        };
        let rendered = match state.rendered.with(|cache| cache.get(&key).cloned()) {
            Some(rendered) => rendered,
            None => {
                let links = FromDocument {
                    folder: &opened.folder,
                    snapshot: &snapshot,
                    rel: &opened.rel,
                };
                let rendered = ragdown_render::render(&opened.text, &links);
                state
                    .rendered
                    .with(|cache| cache.put(key, rendered.clone()));
                rendered
            }
        };
        Ok(axum::Json(RenderedDocument {
            doc: opened.doc,
            rendered,
            converted_from: opened.converted_from,
            hash: opened.hash,
        })
        .into_response())
    });
    match tokio::time::timeout(RENDER_DEADLINE, work).await {
        Ok(answer) => answer,
        Err(_) => Err(ApiError::new(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "{shown} took longer than {} s to render; try again in a moment, or read its text (GET /api/doc)",
                RENDER_DEADLINE.as_secs()
            ),
        )),
    }
}

/// Renders a draft as if it were the document at `path` (which need not exist yet): the links
/// resolve from there. Nothing is written or logged.
pub(crate) async fn render_draft(
    State(state): State<AppState>,
    body: Bytes,
) -> ApiResult<Response> {
    /// `POST /api/render`: a draft's text, and the path it is a draft of.
    #[derive(serde::Deserialize)]
    struct DraftBody {
        path: Given,
        text: String,
    }
    let DraftBody { path, text } = json_body(&body)?;
    let path = path.0;
    let folders = state.folders()?;
    blocking(move || {
        let (folder, rel) = split_path(&folders, &path)?;
        let (rel, _) = paths::document(&folder.dir, &rel)?;
        let snapshot = folder.engine.index.snapshot();
        let links = FromDocument {
            folder: &folder,
            snapshot: &snapshot,
            rel: &rel,
        };
        Ok(axum::Json(ragdown_render::render(&text, &links)).into_response())
    })
    .await
}
