//! Bearer-token auth for `/mcp…` and `/api` (all but `GET /api/status`): the token is compared
//! as SHA-256 digests in constant time, so neither its length nor a prefix leaks through
//! timing. Without a token (`SECURE_LOCAL_NET=true`) everything is open.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};

use crate::{ApiError, AppState};

pub fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Equal digests, compared without an early exit.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether `header` (an `Authorization` value) carries the token.
pub fn authorized(expected: &[u8; 32], header: Option<&str>) -> bool {
    let Some(value) = header else { return false };
    let Some((scheme, token)) = value.trim().split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer") && same(expected, &digest(token.trim()))
}

/// The answer to a request without the token.
pub fn unauthorized() -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, "Unauthorized")
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_scheme_any_case_and_exact_token() {
        let d = digest("s3cret");
        assert!(authorized(&d, Some("Bearer s3cret")));
        assert!(authorized(&d, Some("bearer s3cret")));
        assert!(!authorized(&d, Some("Bearer s3cret2")));
        assert!(!authorized(&d, Some("Basic s3cret")));
        assert!(!authorized(&d, Some("s3cret")));
        assert!(!authorized(&d, None));
    }
}
