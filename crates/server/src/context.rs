//! `ragdown_context`, the hook: related sections for a prompt as a ready-to-inject
//! `<ragdown-context>` block, or empty text. Gates: short prompts and slash commands get
//! nothing; hits must reach the embedder's MIN_SCORE and a share (`min_ratio`) of the best hit's
//! cosine; a section is injected once per session. A hit holding a strong name the prompt
//! quotes, or from a document whose alias the prompt names, is injected first whatever its
//! cosine. The block names the folder, never the server's absolute paths.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Mutex;

use ragdown_search::{Hit, SearchOptions, route::names_identifier};
use serde_json::json;

use crate::format::hit_block;
use crate::{Engine, HookSettings, ToolError};

/// Prompts shorter than this (trimmed) get no context.
pub const MIN_PROMPT_CHARS: usize = 12;

/// Session id → chunks injected, and the sessions from least to most recently used.
type SessionTable = (HashMap<String, HashSet<i64>>, VecDeque<String>);

/// Per-session memory of the chunks already injected: an LRU of at most `max` sessions.
pub struct Sessions {
    max: usize,
    inner: Mutex<SessionTable>,
}

impl Sessions {
    pub fn new(max: usize) -> Self {
        Self {
            max,
            inner: Mutex::new((HashMap::new(), VecDeque::new())),
        }
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut (HashMap<String, HashSet<i64>>, VecDeque<String>)) -> T,
    ) -> T {
        let mut guard = match self.inner.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    pub fn forget(&self, key: &str) {
        self.with(|(map, order)| {
            map.remove(key);
            order.retain(|k| k != key);
        });
    }

    /// The chunks this session has seen (touching it as most recently used).
    pub fn seen(&self, key: &str) -> HashSet<i64> {
        self.with(|(map, order)| {
            if map.contains_key(key) {
                order.retain(|k| k != key);
                order.push_back(key.to_string());
            }
            map.get(key).cloned().unwrap_or_default()
        })
    }

    pub fn remember(&self, key: &str, ids: impl IntoIterator<Item = i64>) {
        let max = self.max;
        self.with(|(map, order)| {
            if !map.contains_key(key) {
                while map.len() >= max {
                    match order.pop_front() {
                        Some(oldest) => {
                            map.remove(&oldest);
                        }
                        None => break,
                    }
                }
                order.push_back(key.to_string());
            }
            map.entry(key.to_string()).or_default().extend(ids);
        });
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ContextFormat {
    #[default]
    Text,
    ClaudeCode,
}

#[derive(Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct ContextArgs {
    /// The user's prompt (may be empty, e.g. with `reset` after a compaction).
    pub prompt: String,
    /// Remembers what was injected, so a section is not repeated in this session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Forget this session's memory first.
    #[serde(default)]
    pub reset: bool,
    /// `text` (the block or empty text) or `claude-code` (UserPromptSubmit hook JSON).
    #[serde(default)]
    pub format: ContextFormat,
    /// Most sections (1–50, default 4).
    #[serde(default)]
    pub top_k: Option<usize>,
    /// Lowest cosine similarity injected (default: the embedder's own).
    #[serde(default)]
    pub min_score: Option<f32>,
    /// Lowest share of the best hit's similarity (0–1, default 0.95).
    #[serde(default)]
    pub min_ratio: Option<f32>,
    /// Most characters (default 6000).
    #[serde(default)]
    pub max_chars: Option<usize>,
}

/// Names the prompt quotes that are strong enough to pin a section: identifiers, not plain
/// words (`typescript`) or numbers.
fn strong_quoted_names(prompt: &str) -> Vec<String> {
    let mut out = Vec::new();
    for quote in ['`', '"', '\''] {
        let parts: Vec<&str> = prompt.split(quote).collect();
        for inner in parts
            .iter()
            .skip(1)
            .step_by(2)
            .take((parts.len().saturating_sub(1)) / 2)
        {
            let inner = inner.trim();
            if inner.chars().count() >= 3 && names_identifier(inner) {
                out.push(inner.to_lowercase());
            }
        }
    }
    out
}

const PREAMBLE: &str = "Excerpts from the user's Markdown documents that look related to this prompt, found by search, not chosen by the user.\nThey may be irrelevant or out of date: each says when its file last changed. Use ragdown_read_doc for the whole file before relying on a fragment.";

/// Where `ragdown_context` looks: one folder (an [`Engine`], its subfolder scope included) or,
/// at the root endpoint, every folder with MCP on. The gates and the block are the same.
pub trait ContextSource {
    /// Names the source in the block (`source="work"`).
    fn source_name(&self) -> &str;
    fn sessions(&self) -> &Sessions;
    /// The hook defaults in effect (a folder's own over the server's).
    fn hook(&self) -> HookSettings;
    fn max_per_document(&self) -> usize;
    /// The embedder's MIN_SCORE, used when neither the call nor the settings give one.
    fn default_min_score(&self) -> f32;
    fn search(&self, prompt: &str, options: &SearchOptions) -> Result<Vec<Hit>, ToolError>;
    /// Ids (as in the hits `search` returns) of documents whose alias the prompt names.
    fn aliased(&self, prompt: &str) -> HashSet<i64>;
    fn log(&self, entry: serde_json::Value);
}

impl ContextSource for Engine {
    fn source_name(&self) -> &str {
        &self.name
    }
    fn sessions(&self) -> &Sessions {
        &self.sessions
    }
    fn hook(&self) -> HookSettings {
        let settings = self.settings();
        // A folder's `.ragdown.json` hook values lie over the server's, read on every call.
        match &self.folder_config {
            Some(folder) => crate::folder_config::FolderConfig::read(folder)
                .hook
                .over(&settings.hook),
            None => settings.hook,
        }
    }
    fn max_per_document(&self) -> usize {
        self.settings().max_per_document
    }
    fn default_min_score(&self) -> f32 {
        self.index.embedder().min_score()
    }
    fn search(&self, prompt: &str, options: &SearchOptions) -> Result<Vec<Hit>, ToolError> {
        let options = SearchOptions {
            path_prefix: self.scoped_prefix(None),
            ..options.clone()
        };
        Ok(self.scope_hits(ragdown_search::search(&self.index, prompt, &options)?))
    }
    fn aliased(&self, prompt: &str) -> HashSet<i64> {
        let snap = self.index.snapshot();
        let all = vec![true; snap.max_document_id() as usize + 1];
        ragdown_search::named::named_documents(&snap, prompt, &all)
            .by_alias
            .into_iter()
            .collect()
    }
    fn log(&self, entry: serde_json::Value) {
        self.log_query(entry);
    }
}

pub fn context(engine: &Engine, args: &ContextArgs) -> Result<String, ToolError> {
    context_from(engine, args)
}

pub fn context_from(source: &dyn ContextSource, args: &ContextArgs) -> Result<String, ToolError> {
    let session = args.session_id.as_deref().unwrap_or("").trim().to_string();
    if args.reset && !session.is_empty() {
        source.sessions().forget(&session);
    }
    let prompt = args.prompt.trim();
    if prompt.chars().count() < MIN_PROMPT_CHARS || prompt.starts_with('/') {
        return Ok(String::new());
    }
    let hook = source.hook();
    let top_k = args.top_k.unwrap_or(hook.top_k).clamp(1, 50);
    let min_score = args
        .min_score
        .or(hook.min_score)
        .unwrap_or_else(|| source.default_min_score());
    let min_ratio = args.min_ratio.unwrap_or(hook.min_ratio).clamp(0.0, 1.0);
    let max_chars = args.max_chars.unwrap_or(hook.max_chars).max(1);
    let seen = if session.is_empty() {
        HashSet::new()
    } else {
        source.sessions().seen(&session)
    };

    let options = SearchOptions {
        limit: top_k * 2,
        max_per_document: source.max_per_document(),
        ..SearchOptions::default()
    };
    let started = std::time::Instant::now();
    let hits = source.search(prompt, &options)?;
    let log = |injected: &[i64]| {
        let shown: Vec<Hit> = hits
            .iter()
            .filter(|h| injected.contains(&h.chunk_id))
            .cloned()
            .collect();
        source.log(json!({
            "kind": "context",
            "query": prompt,
            "hits": crate::query_log::hits_json(&shown),
            "injected": injected.len(),
            "candidates": hits.len(),
            "dropped": hits.len() - injected.len(),
            "min_score": crate::format::rounded(min_score, 4),
            "latency_ms": started.elapsed().as_secs_f64() * 1000.0,
        }));
    };

    // The best-ranked candidate holding a quoted name or named by alias goes first.
    let quoted = strong_quoted_names(prompt);
    let aliased = source.aliased(prompt);
    let pinned: Option<&Hit> = hits.iter().find(|h| {
        !seen.contains(&h.chunk_id)
            && (aliased.contains(&h.document.id)
                || quoted
                    .iter()
                    .any(|name| h.text.to_lowercase().contains(name.as_str())))
    });

    let mut gated: Vec<&Hit> = hits
        .iter()
        .filter(|h| h.similarity >= min_score && !seen.contains(&h.chunk_id))
        .collect();
    gated.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    if let Some(best) = gated.first().map(|h| h.similarity) {
        gated.retain(|h| h.similarity >= best * min_ratio);
    }
    let mut chosen: Vec<&Hit> = Vec::new();
    if let Some(p) = pinned {
        chosen.push(p);
    }
    for h in gated {
        if chosen.len() >= top_k {
            break;
        }
        if !chosen.iter().any(|c| c.chunk_id == h.chunk_id) {
            chosen.push(h);
        }
    }
    if chosen.is_empty() {
        log(&[]);
        return Ok(String::new());
    }

    // Whole sections only: the first always (clipped only past the budget), then each further
    // one that still fits.
    let mut blocks = Vec::new();
    let mut used = 0usize;
    let mut injected = Vec::new();
    for (i, hit) in chosen.iter().enumerate() {
        let block = if i == 0 {
            hit_block(hit, max_chars)
        } else {
            hit_block(hit, 0)
        };
        let len = block.chars().count();
        if i > 0 && used + len > max_chars {
            break;
        }
        used += len;
        blocks.push(block);
        injected.push(hit.chunk_id);
    }
    log(&injected);
    if !session.is_empty() {
        source.sessions().remember(&session, injected);
    }
    let block = format!(
        "<ragdown-context source={}>\n{PREAMBLE}\n\n{}\n</ragdown-context>",
        serde_json::to_string(source.source_name()).unwrap_or_default(),
        blocks.join("\n\n")
    );
    Ok(match args.format {
        ContextFormat::Text => block,
        ContextFormat::ClaudeCode => json!({
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": block,
            }
        })
        .to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_names_must_be_strong() {
        assert_eq!(
            strong_quoted_names("run `pg_restore` now"),
            vec!["pg_restore"]
        );
        assert!(strong_quoted_names("we use `typescript` here").is_empty());
        assert!(strong_quoted_names("version \"2.4\" please").is_empty());
    }

    #[test]
    fn sessions_are_lru() {
        let s = Sessions::new(2);
        s.remember("a", [1]);
        s.remember("b", [2]);
        assert!(s.seen("a").contains(&1)); // a is now most recent
        s.remember("c", [3]);
        assert!(s.seen("b").is_empty(), "b was the oldest and is evicted");
        assert!(s.seen("a").contains(&1));
        s.forget("a");
        assert!(s.seen("a").is_empty());
    }
}
