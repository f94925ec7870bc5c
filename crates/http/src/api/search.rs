//! `/api/search`: the people's search, over one folder or every folder (human-only ones
//! included), through the one recall path (`ragdown_server::recall`).

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use ragdown_server::answers::FoundHit;
use ragdown_server::args::RecallArgs;
use ragdown_server::recall::Asker;
use serde_json::json;

use crate::request::{blocking, folder_of, required, with_folder};
use crate::{ApiError, ApiResult, AppState};

/// Hybrid search over one folder (`folder=`) or, without one, every folder (human-only ones
/// included: this is the people's search), hits merged by fused score. While a folder is
/// still indexing, `indexing` says how far it is.
pub(crate) async fn search(
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
