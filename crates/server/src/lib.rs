//! ragdown's MCP server: the thirteen `ragdown_*` tools over one folder (an [`Engine`]), and
//! the two the root endpoint adds. Each tool is defined once ([`tools`]: the table, with how
//! it runs in a folder and across folders; [`args`]: what it takes), does its work in the
//! engine ([`documents`], [`context`], [`recall`]) and ends in a typed answer ([`answers`])
//! that [`format`] turns into MCP text. Every path goes through the sandbox in [`paths`].
//!
//! The only crate that knows about transports: [`mcp`] adapts the engine to rmcp (stdio today).
//! It never ranks (that is `search`) and never touches the index files (that is `index`).

pub mod answers;
pub mod args;
pub mod context;
pub mod documents;
mod engine;
mod error;
pub mod folder_config;
pub mod format;
pub mod mcp;
pub mod patch;
pub mod paths;
pub mod pending;
pub mod primary;
pub mod query_log;
pub mod recall;
pub mod resources;
pub mod sessions;
pub mod settings;
pub mod tools;
pub mod values;

pub use engine::{Engine, LastSync, SYNC_REQUEST_TIMEOUT};
pub use error::{ErrorKind, ToolError};
pub use settings::{HookPatch, HookSettings, ServerPatch, ServerSettings, SharedSettings};
