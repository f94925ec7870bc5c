//! Bearer-token auth for `/mcp…` and `/api` (all but `GET /api/status`): the token is compared
//! as SHA-256 digests in constant time, so neither its length nor a prefix leaks through
//! timing. Without a token (`SECURE_LOCAL_NET=true`) everything is open. The check on requests
//! is [`crate::guard::require_token`]'s.

use axum::http::StatusCode;
use sha2::{Digest, Sha256};

use crate::ApiError;

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
