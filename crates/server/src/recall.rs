//! One search path for every caller — the `ragdown_recall` tool, the root `/mcp`'s recall
//! over every folder, the web UI's `/api/search` and `ragdown query`. [`options`] turns what
//! was asked into search options, [`Engine::recall`] picks up the primary's commits, searches
//! inside the engine's scope and logs, and [`merge`] joins several folders' recalls by fused
//! score. Callers only pick the folders and render the [`Recall`]; none searches on its own.
//!
//! The hook (`context`) searches through [`Engine::search`], the same path without a log line
//! of its own: it logs what it injected.

use std::time::Instant;

use ragdown_search::{Hit, SearchOptions};

use crate::answers::{FoundHit, Recall, best_first};
use crate::args::RecallArgs;
use crate::query_log::{Entry, Filters, LoggedHit, Search};
use crate::{Engine, ServerSettings, ToolError, paths};

/// Who searched, which the query log keeps apart (Settings → Usage counts agents' and
/// people's searches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asker {
    /// An agent (MCP) or the CLI.
    Agent,
    /// A person in the web UI.
    Person,
}

/// The search a recall asks for under `settings` (the path prefix as the client gave it:
/// [`Engine::recall`] narrows it to the engine's scope). Refuses an empty query and a prefix
/// that leaves the folder.
pub fn options(a: &RecallArgs, settings: &ServerSettings) -> Result<SearchOptions, ToolError> {
    if a.query.trim().is_empty() {
        return Err(ToolError::invalid("query must not be empty"));
    }
    Ok(SearchOptions {
        limit: limit(a),
        path_prefix: prefix_of(a.path_prefix.as_deref())?,
        tag: a.tag.as_deref().and_then(ragdown_markdown::tags::normalize),
        written_by: a.written_by.map(Into::into),
        max_per_document: settings.max_per_document,
        follow_links: settings.follow_links,
        ..Default::default()
    })
}

/// How many hits a recall gives: `top_k`, 8 when left out, within 1–50.
pub fn limit(a: &RecallArgs) -> usize {
    a.top_k.unwrap_or(8).clamp(1, 50)
}

/// A client's `path_prefix`, normalised; `None` for none or the whole folder.
pub fn prefix_of(input: Option<&str>) -> Result<Option<String>, ToolError> {
    match input {
        None => Ok(None),
        Some(p) => {
            let n = paths::normalize(p).map_err(|_| {
                ToolError::invalid(format!("path_prefix is outside the docs folder: {p}"))
            })?;
            Ok((!n.is_empty()).then_some(n))
        }
    }
}

impl Engine {
    /// The hits for `query` inside this engine's scope, paths relative to it: picks up what
    /// the primary committed meanwhile, then searches. Logs nothing.
    pub fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<Hit>, ToolError> {
        self.index.refresh()?;
        self.search_current(query, options)
    }

    /// [`Engine::search`] in what the index holds now, for a caller that has just picked up
    /// the primary's commits ([`crate::tools::run`] does before every tool): a second look
    /// would cost a PostgreSQL follower another round trip for nothing.
    pub(crate) fn search_current(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<Hit>, ToolError> {
        let options = SearchOptions {
            path_prefix: self.scoped_prefix(options.path_prefix.clone()),
            ..options.clone()
        };
        Ok(self.scope_hits(ragdown_search::search(&self.index, query, &options)?))
    }

    /// A recall: [`Engine::search`], logged as `asker`'s, with whether the index is still
    /// being built (the answer may be incomplete) and whether the hits are keyword-only.
    pub fn recall(
        &self,
        query: &str,
        options: &SearchOptions,
        asker: Asker,
    ) -> Result<Recall, ToolError> {
        let started = Instant::now();
        self.index.refresh()?;
        self.recall_current(query, options, asker, started)
    }

    /// [`Engine::recall`] in what the index holds now ([`Engine::search_current`]); the
    /// latency logged runs from `started`.
    pub(crate) fn recall_current(
        &self,
        query: &str,
        options: &SearchOptions,
        asker: Asker,
        started: Instant,
    ) -> Result<Recall, ToolError> {
        let hits = self.search_current(query, options)?;
        let search = Search {
            query: query.to_string(),
            filters: Filters {
                path_prefix: self.scoped_prefix(options.path_prefix.clone()),
                tag: options.tag.clone(),
                top_k: options.limit,
            },
            hits: LoggedHit::all(&hits),
            min_score: crate::format::rounded(self.index.embedder().min_score(), 4),
            latency_ms: started.elapsed().as_secs_f64() * 1000.0,
        };
        self.log_query(match asker {
            Asker::Agent => Entry::Recall(search),
            Asker::Person => Entry::Search(search),
        });
        Ok(Recall {
            hits: hits.into_iter().map(FoundHit::alone).collect(),
            indexing: self.indexing(),
            keyword_only: ragdown_search::keyword_only(&self.index),
        })
    }
}

/// Several folders' hits as one list, best first by fused score and cut to `limit`, each
/// naming its folder.
pub fn merge_hits(per_folder: Vec<(String, Vec<Hit>)>, limit: usize) -> Vec<FoundHit> {
    let mut all: Vec<FoundHit> = per_folder
        .into_iter()
        .flat_map(|(folder, hits)| {
            hits.into_iter()
                .map(move |hit| FoundHit::in_folder(&folder, hit))
        })
        .collect();
    best_first(&mut all, limit);
    all
}

/// Several folders' recalls as one: [`merge_hits`], the indexing progress of them all, and
/// keyword-only when any folder's is (they share one embedder).
pub fn merge(per_folder: Vec<(String, Recall)>, limit: usize) -> Recall {
    let mut hits = Vec::new();
    let mut indexing = Vec::new();
    let mut keyword_only = None;
    for (folder, recall) in per_folder {
        hits.push((folder, recall.hits.into_iter().map(|f| f.hit).collect()));
        indexing.extend(recall.indexing);
        keyword_only = keyword_only.or(recall.keyword_only);
    }
    Recall {
        hits: merge_hits(hits, limit),
        indexing: ragdown_index::SyncProgress::total(indexing),
        keyword_only,
    }
}
