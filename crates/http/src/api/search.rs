//! `/api/search`: the people's search, over one folder or every folder (human-only ones
//! included), through the one recall path (`ragdown_server::recall`).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use ragdown_server::answers::FoundHit;
use ragdown_server::args::RecallArgs;
use ragdown_server::recall::Asker;
use serde_json::json;

use crate::request::{
    Given, Params, blank_is_none, blank_or_number, blocking, folder_of, with_folder,
};
use crate::{ApiResult, AppState};

/// Hybrid search over one folder (`folder=`) or, without one, every folder (human-only ones
/// included: this is the people's search), hits merged by fused score. While a folder is
/// still indexing, `indexing` says how far it is.
/// `GET /api/search`.
#[derive(serde::Deserialize)]
pub(crate) struct SearchParams {
    q: Given,
    #[serde(default, deserialize_with = "blank_is_none")]
    folder: Option<String>,
    /// 1–50, default 10.
    #[serde(default, deserialize_with = "blank_or_number")]
    top_k: Option<usize>,
    #[serde(default)]
    tag: Option<String>,
}

pub(crate) async fn search(
    State(state): State<AppState>,
    Params(asked): Params<SearchParams>,
) -> ApiResult<Response> {
    let folders = state.folders()?;
    let SearchParams {
        q,
        folder: name,
        top_k,
        tag,
    } = asked;
    let q = q.0;
    let top_k = top_k.unwrap_or(10).clamp(1, 50);
    blocking(move || {
        let searched = match &name {
            Some(name) => vec![folder_of(&folders, name)?],
            None => folders.list(),
        };
        let asked = RecallArgs {
            query: q,
            top_k: Some(top_k),
            tag,
            ..RecallArgs::default()
        };
        let mut recalls = Vec::new();
        for folder in &searched {
            let engine = &folder.engine;
            let options = ragdown_server::recall::options(&asked, &engine.settings())?;
            recalls.push((
                folder.name.clone(),
                engine.recall(&asked.query, &options, Asker::Person)?,
            ));
        }
        let mut recall = ragdown_server::recall::merge(recalls, top_k);
        // `/api` names a document `folder/path`.
        for found in &mut recall.hits {
            if let Some(folder) = &found.folder {
                found.path = with_folder(folder, found.hit.path());
            }
        }
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

/// A hit as `/api/search` answers it: the one hit shape, plus the names the HTTP API has
/// always documented for its line range and change time.
#[derive(serde::Serialize)]
pub(crate) struct ApiHit {
    #[serde(flatten)]
    hit: FoundHit,
    start_line: u32,
    end_line: u32,
    mtime_ms: i64,
}
