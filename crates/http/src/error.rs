//! [`ApiError`]: how an `/api` failure answers — a status and `{"error", "code"?}` — and how a
//! tool's error maps to one.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ragdown_server::{ErrorKind, ToolError};
use serde_json::json;

/// An API failure: a status and `{"error", "code"?}`.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub code: Option<&'static str>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            code: None,
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }
    pub fn read_only() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "this server is read-only (RAGDOWN_READ_ONLY): documents and folders cannot be changed",
        )
    }
}

impl From<ToolError> for ApiError {
    fn from(e: ToolError) -> Self {
        let status = match e.kind {
            ErrorKind::Invalid => StatusCode::BAD_REQUEST,
            ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::Conflict => StatusCode::CONFLICT,
            ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        };
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            tracing::error!("[http] {}", e.message);
        }
        Self::new(status, e.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({ "error": self.message });
        if let Some(code) = self.code {
            body["code"] = json!(code);
        }
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            // RFC 6750: the scheme the client is to use, so an OAuth-aware client (the MCP
            // Inspector) says a bearer header is needed instead of looking for an OAuth server.
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer realm=\"ragdown\""),
            );
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
