//! What every request passes before any route sees it: the cross-site checks and the body
//! deadline. A web page the user happens to visit can reach a server on their machine (a form
//! post, a `fetch` with `Content-Type: text/plain`, or DNS rebinding: its own name re-pointed
//! at 127.0.0.1), and with `SECURE_LOCAL_NET=true` there is no token to stop it. So:
//!
//! - `Host` must be an IP address, `localhost` (or a `*.localhost` name), or a name listed in
//!   `RAGDOWN_ALLOWED_HOSTS`: a rebound name is refused, as the MCP specification asks.
//! - `Origin`, when a browser sends one, must be the server's own (the same host and port as
//!   `Host`) or listed in `RAGDOWN_ALLOWED_ORIGINS`.
//! - An `/api` request that carries a body (POST, PATCH, PUT with bytes in it) must say
//!   `Content-Type: application/json`, which a page cannot send cross-site without a CORS
//!   preflight this server never grants.
//! - A body must arrive whole within `HTTP_BODY_TIMEOUT_MS`, so a client trickling bytes
//!   cannot hold a connection and a handler forever.
//! - A body is read only from a client that shows the token (when one is set): every route
//!   that takes a body needs it, so a body without it is left unread, the route answers 401
//!   on the headers alone, and no one without the token can make the server hold bytes.
//! - All bodies being read at once hold at most [`BODIES_IN_FLIGHT`] bytes together; a body
//!   that would go past it is refused 503 with `Retry-After` before it is read.
//! - Every `/api` and `/mcp` answer says `Cache-Control: no-store`: document text must not
//!   stay in the browser's cache after Sign out.
//!
//! The rules themselves are [`crate::policy`]'s; this module applies them to requests and
//! refuses ([`check`] over every route, [`require_token`] over the routes that need the
//! token). It knows nothing of folders or tools.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::{authorized, unauthorized};
use crate::policy::{MAX_UPLOAD, is_json};
use crate::{ApiError, AppState};

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The guard itself (an axum middleware over the whole router).
pub async fn check(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let policy = &state.config.site;
    let headers = request.headers();
    let host = header_str(headers, header::HOST);
    if let Some(h) = host
        && !policy.host_allowed(h)
    {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "Host {h:?} is refused (protection against DNS rebinding): reach this server by its IP address or localhost, or add the name to RAGDOWN_ALLOWED_HOSTS"
            ),
        )
        .into_response();
    }
    if let Some(origin) = header_str(headers, header::ORIGIN)
        && !policy.origin_allowed(origin, host)
    {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "requests from the web page at {origin} are refused (cross-site protection): use this server's own page, or add the origin to RAGDOWN_ALLOWED_ORIGINS"
            ),
        )
        .into_response();
    }
    let carries_body = matches!(
        *request.method(),
        Method::POST | Method::PATCH | Method::PUT
    ) && has_body(headers);
    if carries_body
        && request.uri().path().starts_with("/api/")
        && !is_json(header_str(headers, header::CONTENT_TYPE))
    {
        return ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the body as JSON, with Content-Type: application/json",
        )
        .into_response();
    }
    let mut held = None;
    let mut request = request;
    let authorized = state.token_digest.as_ref().is_none_or(|expected| {
        authorized(
            expected,
            header_str(request.headers(), header::AUTHORIZATION),
        )
    });
    if has_body(request.headers()) && !authorized {
        // Every route that reads a body needs the token (and answers 401 without it); the
        // open ones (status, the app's pages) read none. So a body without the token is
        // never read: it is left on the connection, which closes after the answer.
        let (parts, _unread) = request.into_parts();
        request = Request::from_parts(parts, Body::empty());
    } else if has_body(request.headers()) {
        let announced = header_str(request.headers(), header::CONTENT_LENGTH)
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(MAX_UPLOAD);
        if announced > MAX_UPLOAD {
            return too_large();
        }
        let kib = u32::try_from(announced.div_ceil(1024).max(1)).unwrap_or(u32::MAX);
        match state.bodies.0.try_acquire_many(kib) {
            Ok(permit) => held = Some(permit),
            Err(_) => {
                let mut busy = ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the server is reading as many request bodies as it holds at once: try again in a moment",
                )
                .into_response();
                busy.headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                return busy;
            }
        }
    }
    let path = request.uri().path().to_string();
    let request = match whole_body(request, state.config.body_timeout).await {
        Ok(r) => r,
        Err(refusal) => return refusal,
    };
    let mut response = next.run(request).await;
    drop(held);
    if path.starts_with("/api") || path.starts_with("/mcp") {
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            header::HeaderValue::from_static("no-store"),
        );
    }
    response
}

/// Whether a request announces a body (a length over 0, or chunks).
fn has_body(headers: &HeaderMap) -> bool {
    let announced = header_str(headers, header::CONTENT_LENGTH)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    announced > 0 || headers.contains_key(header::TRANSFER_ENCODING)
}

/// Reads a request's body within `deadline` (none for requests that announce no body), so a
/// handler never waits on a trickling client. The route's own size limit still applies to
/// what was read; anything over the largest limit of any route is refused here.
async fn whole_body(request: Request, deadline: Duration) -> Result<Request, Response> {
    if !has_body(request.headers()) {
        return Ok(request);
    }
    let announced = header_str(request.headers(), header::CONTENT_LENGTH)
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|n| n > MAX_UPLOAD as u64) {
        return Err(too_large());
    }
    let (parts, body) = request.into_parts();
    let bytes: Bytes =
        match tokio::time::timeout(deadline, axum::body::to_bytes(body, MAX_UPLOAD)).await {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(e)) => {
                let over_limit = std::error::Error::source(&e)
                    .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
                return Err(if over_limit {
                    too_large()
                } else {
                    ApiError::bad_request(format!("the request body could not be read: {e}"))
                        .into_response()
                });
            }
            Err(_) => {
                return Err(ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the request body did not arrive within {} ms (HTTP_BODY_TIMEOUT_MS)",
                        deadline.as_millis()
                    ),
                )
                .into_response());
            }
        };
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

fn too_large() -> Response {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body is over {} bytes", MAX_UPLOAD),
    )
    .into_response()
}

/// Refuses a request without the token, when one is set (`/mcp…` and `/api` but `GET
/// /api/status`).
pub async fn require_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    if let Some(expected) = &state.token_digest {
        let header = request
            .headers()
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if !authorized(expected, header) {
            return Err(unauthorized());
        }
    }
    Ok(next.run(request).await)
}
