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
//! This module decides and refuses; it knows nothing of folders or tools.

use std::net::IpAddr;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::{ApiError, AppState};

/// The most bytes of request bodies held at once, all connections together: four uploads of
/// the largest size. Each body holds its announced length (a chunked one, the largest upload)
/// from before it is read until its answer is sent.
pub const BODIES_IN_FLIGHT: usize = 4 * crate::api::MAX_UPLOAD;

/// The semaphore behind [`BODIES_IN_FLIGHT`], in KiB permits.
pub struct BodyBudget(tokio::sync::Semaphore);

impl Default for BodyBudget {
    fn default() -> Self {
        Self(tokio::sync::Semaphore::new(BODIES_IN_FLIGHT / 1024))
    }
}

/// The cross-site policy: names beyond IP addresses and `localhost`, and foreign origins.
#[derive(Debug, Clone, Default)]
pub struct SitePolicy {
    /// Lower-case host names (no port) also answered; `*` answers any.
    pub allowed_hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`, lower case, no trailing slash) also allowed; `*` any.
    pub allowed_origins: Vec<String>,
}

impl SitePolicy {
    /// From the comma-separated lists of `RAGDOWN_ALLOWED_HOSTS` and `RAGDOWN_ALLOWED_ORIGINS`.
    pub fn from_lists(hosts: Option<&str>, origins: Option<&str>) -> Self {
        let split = |list: Option<&str>| -> Vec<String> {
            list.unwrap_or_default()
                .split(',')
                .map(|s| s.trim().trim_end_matches('/').to_ascii_lowercase())
                .filter(|s| !s.is_empty())
                .collect()
        };
        Self {
            allowed_hosts: split(hosts),
            allowed_origins: split(origins),
        }
    }

    /// Whether a `Host` header value (`name[:port]`, `[v6]:port`) is one this server answers.
    pub fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host).to_ascii_lowercase();
        if name.parse::<IpAddr>().is_ok() {
            // An address cannot be re-pointed: only names can be rebound.
            return true;
        }
        name == "localhost"
            || name.ends_with(".localhost")
            || self
                .allowed_hosts
                .iter()
                .any(|h| h == "*" || *h == name || host_name(h) == name)
    }

    /// Whether a browser's `Origin` may talk to the server reached as `host`.
    pub fn origin_allowed(&self, origin: &str, host: Option<&str>) -> bool {
        let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        if self
            .allowed_origins
            .iter()
            .any(|o| o == "*" || *o == origin)
        {
            return true;
        }
        let Some((scheme, authority)) = origin.split_once("://") else {
            return false; // "null" (sandboxed frames, file://) and the like
        };
        let same_authority = host.is_some_and(|h| h.eq_ignore_ascii_case(authority));
        same_authority && matches!(scheme, "http" | "https")
    }
}

/// The name of a `Host` value: `[::1]:3000` → `::1`, `a.b:80` → `a.b`.
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rsplit_once(':') {
        // One colon: a port. More: a bare IPv6 address.
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => host,
    }
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Whether a `Content-Type` value is JSON (`application/json`, parameters allowed).
pub fn is_json(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        ct.split(';')
            .next()
            .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
    })
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
        crate::auth::authorized(
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
            .unwrap_or(crate::api::MAX_UPLOAD);
        if announced > crate::api::MAX_UPLOAD {
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
    if announced.is_some_and(|n| n > crate::api::MAX_UPLOAD as u64) {
        return Err(too_large());
    }
    let (parts, body) = request.into_parts();
    let bytes: Bytes =
        match tokio::time::timeout(deadline, axum::body::to_bytes(body, crate::api::MAX_UPLOAD))
            .await
        {
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
        format!("the request body is over {} bytes", crate::api::MAX_UPLOAD),
    )
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_by_address_localhost_or_list() {
        let none = SitePolicy::default();
        for ok in [
            "127.0.0.1:3000",
            "localhost:3000",
            "LOCALHOST",
            "app.localhost:8080",
            "[::1]:3000",
            "192.168.1.20",
            "::1",
        ] {
            assert!(none.host_allowed(ok), "{ok}");
        }
        for refused in [
            "evil.example",
            "evil.example:3000",
            "localhost.evil.example",
        ] {
            assert!(!none.host_allowed(refused), "{refused}");
        }
        let listed = SitePolicy::from_lists(Some("kb.example.com, Other.Example:443"), None);
        assert!(listed.host_allowed("kb.example.com:3000"));
        assert!(listed.host_allowed("other.example"));
        assert!(!listed.host_allowed("evil.example"));
        assert!(SitePolicy::from_lists(Some("*"), None).host_allowed("anything.example"));
    }

    #[test]
    fn origins_same_as_host_or_listed() {
        let none = SitePolicy::default();
        assert!(none.origin_allowed("http://127.0.0.1:3000", Some("127.0.0.1:3000")));
        assert!(none.origin_allowed("https://LOCALHOST:3000/", Some("localhost:3000")));
        assert!(!none.origin_allowed("http://127.0.0.1:4000", Some("127.0.0.1:3000")));
        assert!(!none.origin_allowed("http://evil.example", Some("127.0.0.1:3000")));
        assert!(!none.origin_allowed("null", Some("127.0.0.1:3000")));
        assert!(!none.origin_allowed("http://127.0.0.1:3000", None));
        let listed = SitePolicy::from_lists(None, Some("http://ui.example:5173/"));
        assert!(listed.origin_allowed("http://ui.example:5173", Some("127.0.0.1:3000")));
        assert!(!listed.origin_allowed("http://ui.example:5174", Some("127.0.0.1:3000")));
    }

    #[test]
    fn json_content_types() {
        assert!(is_json(Some("application/json")));
        assert!(is_json(Some("Application/JSON; charset=utf-8")));
        assert!(!is_json(Some("text/plain")));
        assert!(!is_json(Some("application/x-www-form-urlencoded")));
        assert!(!is_json(None));
    }
}
