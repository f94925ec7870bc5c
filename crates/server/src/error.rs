//! The one error type of every tool: its kind (which MCP and HTTP map to an error result or a
//! status) and a message that says what to do. Index and search failures convert into it.

/// What kind of failure a tool met; the message always says what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Invalid,
    NotFound,
    Conflict,
    Internal,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    pub kind: ErrorKind,
    pub message: String,
}

impl ToolError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Invalid,
            message: message.into(),
        }
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::NotFound,
            message: message.into(),
        }
    }
    pub fn conflict(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Conflict,
            message: message.into(),
        }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Internal,
            message: message.into(),
        }
    }
}

impl From<ragdown_index::IndexError> for ToolError {
    fn from(e: ragdown_index::IndexError) -> Self {
        Self::internal(e.to_string())
    }
}

impl From<ragdown_search::SearchError> for ToolError {
    fn from(e: ragdown_search::SearchError) -> Self {
        Self::internal(e.to_string())
    }
}
