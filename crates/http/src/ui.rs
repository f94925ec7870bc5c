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
/// made (documents' images are fetched with the token), nothing framed, no inline script. The
/// one inline thing allowed is a `<style>` carrying this response's nonce: the editor
/// (CodeMirror) injects its styles so, and reads the nonce from `index.html`.
fn content_security_policy(style_nonce: Option<&str>) -> String {
    let style = match style_nonce {
        Some(nonce) => format!("style-src 'self' 'nonce-{nonce}'"),
        None => "style-src 'self'".to_string(),
    };
    format!(
        "default-src 'none'; script-src 'self'; {style}; img-src 'self' blob:; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// Where `index.html` holds the nonce (web/build.mjs writes it).
const NONCE_PLACEHOLDER: &str = "__CSP_NONCE__";

/// A fresh nonce: 128 random bits, hex. `None` only when the OS has no randomness to give, and
/// then the page goes without inline styles rather than with a guessable nonce.
fn nonce() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

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
    let mut bytes = embedded.data.into_owned();
    let mut style_nonce = None;
    if path == "index.html" {
        let html = String::from_utf8_lossy(&bytes);
        let nonce = nonce();
        bytes = html
            .replace(NONCE_PLACEHOLDER, nonce.as_deref().unwrap_or(""))
            .into_bytes();
        style_nonce = nonce;
    }
    let mut response = (
        [
            (header::CONTENT_TYPE, content_type(path)),
            (header::CACHE_CONTROL, cache),
        ],
        bytes,
    )
        .into_response();
    let headers = response.headers_mut();
    if let Ok(csp) = HeaderValue::from_str(&content_security_policy(style_nonce.as_deref())) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    secure(headers);
    Some(response)
}

/// The headers every UI response carries besides its CSP.
fn secure(headers: &mut axum::http::HeaderMap) {
    for (name, value) in [
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
        assert!(html.contains(NONCE_PLACEHOLDER), "{html}");
    }

    #[test]
    fn every_page_gets_its_own_style_nonce_and_never_inline_script() {
        let a = nonce().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, nonce().unwrap());
        let csp = content_security_policy(Some(&a));
        assert!(
            csp.contains(&format!("style-src 'self' 'nonce-{a}'")),
            "{csp}"
        );
        assert!(
            csp.contains("script-src 'self';") && !csp.contains("unsafe"),
            "{csp}"
        );
    }
}
