//! The web UI's files, compiled into the binary from the committed `web/dist` (built by
//! `scripts/build-ui.sh`; no build script runs npm). `/assets/*` are content-hashed and cached
//! for good; every other GET that no route took is the app's `index.html` (no-cache), so deep
//! links like `/f/work/notes/a.md` load the app, which then asks `/api`.
//!
//! Static files hold no documents, so they need no token; every UI response carries the
//! security headers (a strict CSP: scripts and styles from this server only, no framing).
//! This module must not serve anything from the docs dir.

use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

use crate::ApiError;

#[derive(RustEmbed)]
#[folder = "../../web/dist"]
struct Dist;

/// What a page of the app may load: its own scripts, styles and data, images from blobs it
/// made (documents' images are fetched with the token), nothing framed, nothing inline.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("woff2") => "font/woff2",
        Some("json" | "map") => "application/json",
        _ => "application/octet-stream",
    }
}

fn file(path: &str, cache: &'static str) -> Option<Response> {
    let embedded = Dist::get(path)?;
    let mut response = (
        [
            (header::CONTENT_TYPE, content_type(path)),
            (header::CACHE_CONTROL, cache),
        ],
        embedded.data.into_owned(),
    )
        .into_response();
    secure(response.headers_mut());
    Some(response)
}

/// The headers every UI response carries.
fn secure(headers: &mut axum::http::HeaderMap) {
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
}

/// The fallback of the whole router: an asset, or the app for any other page.
pub async fn serve(method: Method, uri: Uri) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed").into_response();
    }
    let path = uri.path().trim_start_matches('/');
    if path.starts_with("assets/") {
        return file(path, "public, max-age=31536000, immutable")
            .unwrap_or_else(|| ApiError::not_found("Not found").into_response());
    }
    file("index.html", "no-cache").unwrap_or_else(|| {
        ApiError::not_found(
            "The web UI is not built into this ragdown: run scripts/build-ui.sh, then cargo build",
        )
        .into_response()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_app_is_embedded_and_names_its_hashed_assets() {
        let index = Dist::get("index.html").expect("web/dist/index.html is committed");
        let html = String::from_utf8_lossy(&index.data);
        let scripts: Vec<&str> = html
            .split("src=\"/")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .collect();
        assert!(!scripts.is_empty(), "{html}");
        for script in scripts {
            assert!(
                Dist::get(script).is_some(),
                "{script} is named but not embedded"
            );
            assert!(script.starts_with("assets/"), "{script}");
        }
        // No inline script: the CSP would refuse it.
        assert!(!html.contains("<script>"), "{html}");
    }
}
