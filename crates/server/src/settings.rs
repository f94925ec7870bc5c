//! The server's settings as the engines use them: what the binary read once from the
//! environment (and `serve`'s saved settings laid over it), with each default written here
//! once. Reading variables is the binary's job; validating a hook patch is `hook_patch`'s.

use std::sync::{Arc, RwLock};

/// Lowest evidence the prompt's strongest section needs for anything to be injected
/// (`RAGDOWN_HOOK_MIN_EVIDENCE`); measured before `context::FOLLOW_SHARE`, every section then needing it. At weight
/// 1.25: 0.7 → 74/0, 76/0, 73%/4 off-topic; 0.75 → 70/0, 70/0, 71%/2; 0.8 → 64/0, 65/0, 68%/2.
pub const MIN_EVIDENCE: f32 = 0.75;

/// `ragdown_context` defaults (`RAGDOWN_HOOK_*`).
#[derive(Debug, Clone, PartialEq)]
pub struct HookSettings {
    pub top_k: usize,
    /// `None`: the embedder's own MIN_SCORE.
    pub min_score: Option<f32>,
    pub min_ratio: f32,
    pub max_chars: usize,
    /// Lowest evidence (lexical coverage plus dense closeness above the background) a section
    /// needs to be injected; see `MIN_EVIDENCE`.
    pub min_evidence: f32,
}

impl Default for HookSettings {
    fn default() -> Self {
        Self {
            top_k: 4,
            min_score: None,
            min_ratio: 0.0,
            max_chars: 6000,
            min_evidence: MIN_EVIDENCE,
        }
    }
}

/// Server behaviour read once from the environment by the binary.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// `RAGDOWN_TEXT_LIMIT`: characters per hit in text output (0 = never clip).
    pub text_limit: usize,
    /// `RAGDOWN_NOTES_DIR`: where `ragdown_remember` writes, relative to the folder.
    pub notes_dir: String,
    /// `RAGDOWN_READ_ONLY`.
    pub read_only: bool,
    /// `RAGDOWN_DISABLED_TOOLS`.
    pub disabled_tools: Vec<String>,
    pub hook: HookSettings,
    pub max_per_document: usize,
    pub follow_links: usize,
    /// `RAGDOWN_QUERY_LOG`: record searches and reads in the data dir's query log.
    pub query_log: bool,
}

/// Settings shared by every folder's engine and changed at once by `PATCH /api/settings`.
pub type SharedSettings = Arc<RwLock<ServerSettings>>;

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            text_limit: 2000,
            notes_dir: "notes".into(),
            read_only: false,
            disabled_tools: Vec::new(),
            hook: HookSettings::default(),
            max_per_document: 0,
            follow_links: 0,
            query_log: false,
        }
    }
}
