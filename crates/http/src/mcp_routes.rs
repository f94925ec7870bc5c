//! `/mcp/<folder>[/<subfolder…>]`: picks the folder (and subfolder) from the URL and hands the
//! request to rmcp's Streamable HTTP service, stateless with JSON responses: a fresh MCP server
//! per request over the folder's engine. A missing folder, a human-only one and a bad subpath
//! all get the same 404, so a URL never tells whether a folder exists. Bare `/mcp` is a 404
//! that says to pick a folder.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use ragdown_index::walk::is_skipped_name;
use ragdown_server::Engine;
use ragdown_server::mcp::McpServer;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower_service::Service;

use crate::{ApiError, AppState};

/// How long an MCP request waits for the model to load before it is answered 503.
const MCP_LOAD_PATIENCE: std::time::Duration = std::time::Duration::from_secs(20);

/// Largest MCP request body.
pub const MAX_MCP_BODY: usize = 1024 * 1024;

fn no_folder() -> ApiError {
    // The same words for a missing folder and a human-only one, so a URL never tells which.
    ApiError::not_found(
        "Not found: no folder with MCP turned on at this path. A folder starts human-only: turn \
         MCP on for it in the web UI (its Settings), or put { \"mcp\": true } in its .ragdown.json",
    )
}

/// Decodes one `%XX`-escaped URL segment; a malformed escape or non-UTF-8 is `None`.
fn decode_segment(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = raw.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The decoded segments after `/mcp`, each an indexable name; `None` for any bad one.
pub fn scope_segments(path: &str) -> Option<Vec<String>> {
    let rest = path.strip_prefix("/mcp")?;
    let mut out = Vec::new();
    let parts: Vec<&str> = rest.split('/').skip(1).collect();
    for (i, raw) in parts.iter().enumerate() {
        if raw.is_empty() && i == parts.len() - 1 {
            break; // a trailing slash
        }
        let seg = decode_segment(raw)?;
        let bad = seg.is_empty()
            || seg.contains(['/', '\\', '\0'])
            || is_skipped_name(&seg)
            || seg == ".."
            || seg == ".";
        if bad {
            return None;
        }
        out.push(seg);
    }
    Some(out)
}

fn http_config(state: &AppState) -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        // `guard` checks Host (and Origin) for every route, /api included, in one place.
        .disable_allowed_hosts()
        .with_max_request_body_bytes(MAX_MCP_BODY)
        .with_cancellation_token(state.shutdown.child_token())
}

/// A JSON-RPC error answer with no id (the request's could not be read).
fn json_rpc_error(code: i64, message: String) -> Response {
    (
        axum::http::StatusCode::BAD_REQUEST,
        axum::Json(serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": code, "message": message},
        })),
    )
        .into_response()
}

/// A POST whose JSON body is not a JSON-RPC message gets the JSON-RPC answer a client can read
/// (-32700 parse error, -32600 invalid request) rather than rmcp's bare 415, and a request
/// whose params do not fit its method -32602 rather than "method not found". The body is
/// already whole (the guard read it), so looking at it costs no waiting.
async fn check_message(request: Request) -> Result<Request, Response> {
    let json_post = request.method() == axum::http::Method::POST
        && crate::policy::is_json(
            request
                .headers()
                .get(axum::http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
        );
    if !json_post {
        return Ok(request);
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_MCP_BODY).await else {
        return Err(ApiError::new(
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            format!("an MCP message is at most {MAX_MCP_BODY} bytes"),
        )
        .into_response());
    };
    let value: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => return Err(json_rpc_error(-32700, format!("Parse error: {e}"))),
    };
    if let Some(refusal) = ragdown_server::mcp::invalid_params(&value) {
        return Err(axum::Json(refusal).into_response());
    }
    if let Err(e) = serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value) {
        return Err(json_rpc_error(
            -32600,
            format!("Invalid Request: not a JSON-RPC message an MCP client sends ({e})"),
        ));
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// Runs one MCP request against a fresh server made by `make`.
async fn run_mcp(
    state: &AppState,
    make: impl Fn() -> McpServer + Send + Sync + 'static,
    request: Request,
) -> Response {
    let request = match check_message(request).await {
        Ok(r) => r,
        Err(answer) => return answer,
    };
    let mut service = StreamableHttpService::new(
        move || Ok(make()),
        Arc::new(NeverSessionManager::default()),
        http_config(state),
    );
    match service.call(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
}

pub async fn mcp(State(state): State<AppState>, request: Request) -> Response {
    let Some(segments) = scope_segments(request.uri().path()) else {
        return no_folder().into_response();
    };
    let folders = match state.folders_within(MCP_LOAD_PATIENCE).await {
        Ok(f) => f,
        Err(e) => return e.into_response(),
    };
    let Some((folder_name, sub)) = segments.split_first() else {
        if state.tunables().root_mcp
            && let Some(root) = state.root_host()
        {
            return run_mcp(&state, move || McpServer::new(root.clone()), request).await;
        }
        return ApiError::not_found(
            "Pick a folder: /mcp/<folder>. Every MCP folder at bare /mcp is the root endpoint: \
             set RAGDOWN_ROOT_MCP=true, or turn it on under Settings → Server in the web UI",
        )
        .into_response();
    };
    let Some(folder) = folders.get(folder_name) else {
        return no_folder().into_response();
    };
    if !folder.config().mcp {
        return no_folder().into_response();
    }
    let engine: Arc<Engine> = if sub.is_empty() {
        folder.engine.clone()
    } else {
        // Every segment a real directory (no symlink, no file).
        let mut dir = folder.dir.clone();
        for s in sub {
            dir.push(s);
            let real_dir = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
            if !real_dir {
                return no_folder().into_response();
            }
        }
        match folder.scoped_engine(&sub.join("/")) {
            Some(e) => e,
            None => return no_folder().into_response(),
        }
    };
    run_mcp(&state, move || McpServer::new(engine.clone()), request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_segments_refuse_escapes() {
        assert_eq!(scope_segments("/mcp"), Some(vec![]));
        assert_eq!(scope_segments("/mcp/"), Some(vec![]));
        assert_eq!(scope_segments("/mcp/work"), Some(vec!["work".to_string()]));
        assert_eq!(
            scope_segments("/mcp/my%20notes/sub/"),
            Some(vec!["my notes".to_string(), "sub".to_string()])
        );
        assert_eq!(scope_segments("/mcp/work/%2e%2e"), None);
        assert_eq!(scope_segments("/mcp/work/%2E%2E/x"), None);
        assert_eq!(scope_segments("/mcp/work/.obsidian"), None);
        assert_eq!(scope_segments("/mcp/work/a%2fb"), None);
        assert_eq!(scope_segments("/mcp/work/%zz"), None);
        assert_eq!(scope_segments("/mcp/work//x"), None);
        assert_eq!(scope_segments("/mcp/node_modules"), None);
    }
}
