//! `ragdown serve`: HTTP over the folders of a docs dir. Every top-level directory is a folder
//! with its own Streamable HTTP MCP endpoint (`/mcp/<folder>[/<subfolder…>]`, stateless, JSON
//! responses), the optional root endpoint `/mcp` over every MCP folder, and the JSON `/api`
//! the web UI uses; bearer-token auth on everything but `GET /api/status`.
//!
//! The port is bound before the model loads (`ready: false` meanwhile), so a first-start
//! download never looks like a dead server. This crate adapts the `server` crate's tools and
//! documents to HTTP; it never ranks, parses Markdown or touches the index files itself.

mod api;
mod auth;
mod error;
pub mod folders;
pub mod guard;
mod listen;
mod mcp_routes;
pub mod policy;
mod rendering;
mod request;
pub mod root;
pub mod server_settings;
mod state;
mod ui;

pub use api::{ApiRoute, api_routes};
pub use error::{ApiError, ApiResult};
pub use folders::{Folder, Folders, OpenWith};
pub use listen::serve;
pub use state::{AppInner, AppState, ServeConfig};

/// The whole router: `/api`, `/mcp…`, and the fallbacks.
pub fn router(state: AppState) -> axum::Router {
    api::router(state)
}
