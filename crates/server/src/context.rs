//! `ragdown_context`, the hook: related sections for a prompt as a ready-to-inject
//! `<ragdown-context>` block, or empty text. Gates: short prompts and slash commands get
//! nothing; the prompt's strongest hit must show enough *evidence* that it answers the prompt —
//! the share of the prompt's rare terms its section holds plus how far its closeness (its
//! cosine, or its best piece's) rises from unrelated prompts' towards answers' on the
//! folder's calibration ([`evidence`]), on no model's own scale — and the hits after it
//! [`FOLLOW_SHARE`] of that floor and [`LEAD_SHARE`] of the strongest's evidence; each must,
//! when set, reach `min_score` and a share (`min_ratio`) of the best hit's cosine. A prompt writing a proper name the documents never
//! mention, a name as code whose words no section holds together, or a version or a name of
//! several words no section writes in a row (and naming none of the documents), is about
//! something else and opens no gate. A section is
//! injected once per session. A hit holding a strong name the prompt quotes, or a name it
//! writes as code (a key, flag, error code or path) that only a few sections hold, or from a
//! document whose alias the prompt names, is injected first whatever its evidence. The block
//! names the folder, never the server's absolute paths.

use std::collections::HashSet;

use ragdown_search::{Hit, SearchOptions, route::names_identifier};
use serde_json::json;

pub use crate::args::{ContextArgs, ContextFormat};
use crate::format::hit_block;
use crate::query_log::{Entry, HookCall, LoggedHit};
pub use crate::sessions::Sessions;
use crate::{Engine, HookSettings, ToolError};

/// Prompts shorter than this (trimmed) get no context.
pub const MIN_PROMPT_CHARS: usize = 12;

/// Weight of the dense side of a hit's evidence against its lexical coverage, per unit of
/// rise (from unrelated prompts' cosine to answers', measured on the folder: see
/// [`ragdown_search::calibration`]). First fit as 1.25 per share of the room above the
/// background (MiniLM, synth30-dev, top_k 3: answer injected / off-topic injected — 1.0:
/// 61/0, 1.25: 70/0, 1.5: 75/0); MiniLM's rise unit is ~0.4 of a cosine and that room ~0.8, so
/// 0.63 here keeps its gate where it was. With the unit measured per model and corpus, mpnet
/// (all-mpnet-base-v2, 5× larger) lands on the same scale: both put unrelated prompts
/// 0.17–0.21 and answers 0.55–0.64 on the three corpora.
pub const DENSE_WEIGHT: f32 = 0.63;
pub use crate::settings::MIN_EVIDENCE;

/// The share of [`MIN_EVIDENCE`] (or the configured floor) the sections after the strongest
/// need, once the strongest shows the whole floor. Whether a prompt gets anything stays the
/// strongest section's call, so off-topic prompts inject exactly as before. Fit on synth30-dev
/// at the default top_k 4 (answer injected / sections a prompt; synth30-val and real-dev
/// beside it): 1.0 (every section at the floor) 73.1% / 2.37, val 73.1 / 2.30, real-dev
/// 73.0 / 2.56; 0.8 → 76.9 / 2.96, 76.9 / 2.92, 73.0 / 2.98; 0.7 → 76.9 / 3.08, 77.7 / 3.07,
/// 73.0 / 3.11; 0.6 → 76.5 / 3.17, 77.7 / 3.14, 74.6 / 3.16. 0.8 keeps to 3 sections a prompt.
pub const FOLLOW_SHARE: f32 = 0.8;

/// The share of the strongest section's evidence each section after it needs too: beside a
/// section that matches the prompt squarely, one that barely clears the floor is most often
/// a neighbour of the answer, not the answer. Swept on the three corpora with three models,
/// evidence on the sections' own cosines (answer injected stays at every point up to 0.5;
/// sections a prompt, MiniLM dev / val / real-dev · mpnet · MiniLM int8): 0 → 3.24 / 3.32 /
/// 2.87 · 3.50 / 3.37 / 3.33 · 3.28 / 3.35 / 2.89; 0.5 → 3.21 / 3.26 / 2.75 · 3.49 / 3.35 /
/// 3.16 · 3.25 / 3.31 / 2.73; 0.55 cut more but lost two answers on the int8 model's val.
/// With the evidence reading a section's best piece too ([`ragdown_search::Hit::rise`]),
/// which finds more answers and more neighbours: 0.5 → answer injected 88.5 / 87.3 / 73.0 ·
/// 86.5 / 87.7 / 82.5 · 87.7 / 87.3 / 74.6% at 3.34 / 3.40 / 2.81 · 3.52 / 3.38 / 3.24 ·
/// 3.41 / 3.42 / 2.83 sections (mpnet dev over the 3.5 a prompt the hook keeps to); 0.55 →
/// the same answers but the int8 model's val 86.5% (its figure before pieces), at 3.26 /
/// 3.34 / 2.68 · 3.45 / 3.31 / 3.08 · 3.33 / 3.35 / 2.70; 0.6 → 87.7 / 86.5 / 73.0 · 86.2 /
/// 87.7 / 82.5% (MiniLM · mpnet) at 3.11 / 3.22 / 2.46 · 3.28 / 3.17 / 2.90.
pub const LEAD_SHARE: f32 = 0.55;

/// How strongly a hit answers its prompt, on no model's own scale: the share of the prompt's
/// term weight its section holds, plus [`DENSE_WEIGHT`] times its closeness's rise (its cosine
/// or its best piece's, [`ragdown_search::Hit::rise`]) on the
/// folder's calibration (0 where unrelated prompts land, 1 where a query made from a section
/// lands against it: [`ragdown_search::calibration`]). Without a model only the terms count.
pub fn evidence(hit: &Hit) -> f32 {
    hit.coverage + DENSE_WEIGHT * hit.rise.unwrap_or(0.0)
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

/// What a prompt names, as the gate reads it.
#[derive(Debug, Default)]
pub struct PromptNames {
    /// Ids (as in the hits `search` returns) of documents whose alias the prompt names.
    pub aliased: HashSet<i64>,
    /// Ids of documents the prompt names by a title that is a name in their folder, not by
    /// an alias ([`ragdown_search::evidence::named_by_title`]).
    pub titled: HashSet<i64>,
    /// The proper names and code names the prompt uses that the documents never mention, when
    /// it names none of them ([`ragdown_search::evidence::foreign_names`]).
    pub foreign: Vec<String>,
    /// The names the prompt writes as code (a key, flag, error code or path, quoted or not),
    /// lowercased, each with how many sections may hold it
    /// ([`ragdown_search::evidence::code_name_sections`]): a section holding one that only a
    /// few sections hold is what the prompt asks about.
    pub code_names: Vec<(String, usize)>,
}

impl PromptNames {
    /// The code names only a few sections hold ([`ragdown_search::evidence::is_rare`]).
    pub fn rare_code(&self) -> impl Iterator<Item = &str> {
        self.code_names
            .iter()
            .filter(|(_, sections)| ragdown_search::evidence::is_rare(*sections))
            .map(|(name, _)| name.as_str())
    }
}

/// Where `ragdown_context` looks: one folder (an [`Engine`], its subfolder scope included) or,
/// at the root endpoint, every folder with MCP on. The gates and the block are the same.
pub trait ContextSource {
    /// Names the source in the block (`source="work"`).
    fn source_name(&self) -> &str;
    fn sessions(&self) -> &Sessions;
    /// The hook defaults in effect (a folder's own over the server's).
    fn hook(&self) -> HookSettings;
    fn max_per_document(&self) -> usize;
    fn search(&self, prompt: &str, options: &SearchOptions) -> Result<Vec<Hit>, ToolError>;
    /// What the prompt names, read once from the documents' titles and aliases.
    fn prompt_names(&self, prompt: &str) -> Result<PromptNames, ToolError>;
    fn log(&self, entry: Entry);
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
    fn search(&self, prompt: &str, options: &SearchOptions) -> Result<Vec<Hit>, ToolError> {
        // The whole scope: the hook takes no path prefix.
        let options = SearchOptions {
            path_prefix: None,
            ..options.clone()
        };
        // Every caller of the hook in a folder comes through `tools::run`, which has picked up
        // the primary's commits already (`ragdown eval` writes its own index).
        self.search_current(prompt, &options)
    }
    fn prompt_names(&self, prompt: &str) -> Result<PromptNames, ToolError> {
        let snap = self.index.snapshot();
        let all = vec![true; snap.max_document_id() as usize + 1];
        let named = ragdown_search::named::named_documents(&snap, prompt, &all);
        // Counted once: the pins read them, and so does the check for foreign ones.
        let code_names = ragdown_search::evidence::code_name_sections(&self.index, prompt)?;
        Ok(PromptNames {
            foreign: ragdown_search::evidence::foreign_names(
                &self.index,
                prompt,
                &named,
                &code_names,
            )?,
            titled: ragdown_search::evidence::named_by_title(&self.index, &snap, &named)?
                .into_iter()
                .collect(),
            aliased: named.by_alias.into_iter().collect(),
            code_names,
        })
    }
    fn log(&self, entry: Entry) {
        self.log_query(entry);
    }
}

/// The gates a call runs under, settled from its arguments, the folder and the server.
#[derive(Debug, Clone, Copy)]
pub struct Gate {
    pub top_k: usize,
    pub min_score: Option<f32>,
    pub min_evidence: f32,
    pub min_ratio: f32,
}

/// Indexes in a prompt's candidates of those something the prompt names points at, each list
/// best ranked first.
#[derive(Debug, Default)]
struct Pinning {
    /// Those holding a strong quoted name or a rare code name of the prompt.
    by_name: Vec<usize>,
    /// The sections of a document the prompt names by alias.
    by_alias: Vec<usize>,
    /// The sections of a document the prompt names by a title that is a name in its folder.
    by_title: Vec<usize>,
}

/// A prompt's candidate sections, with what the gate reads beside them: the sections a quoted
/// name, an alias or a title pins, and the names foreign to the documents.
pub struct Candidates {
    pub hits: Vec<Hit>,
    pinning: Pinning,
    /// Proper names of the prompt the documents never mention (it names none of them): the
    /// prompt is about something else, and only a pinned section is injected.
    pub foreign: Vec<String>,
}

impl Candidates {
    /// Searches twice as many sections as `top_k`, the pool the gate chooses from.
    pub fn find(source: &dyn ContextSource, prompt: &str, top_k: usize) -> Result<Self, ToolError> {
        let options = SearchOptions {
            limit: top_k * 2,
            max_per_document: source.max_per_document(),
            ..SearchOptions::default()
        };
        let hits = source.search(prompt, &options)?;
        let names = source.prompt_names(prompt)?;
        let mut pinning_names = strong_quoted_names(prompt);
        pinning_names.extend(names.rare_code().map(str::to_string));
        let positions = |keep: &dyn Fn(&Hit) -> bool| -> Vec<usize> {
            hits.iter()
                .enumerate()
                .filter(|(_, h)| keep(h))
                .map(|(i, _)| i)
                .collect()
        };
        let pinning = Pinning {
            by_name: positions(&|h| {
                let text = h.text.to_lowercase();
                pinning_names
                    .iter()
                    .any(|name| text.contains(name.as_str()))
            }),
            by_alias: positions(&|h| names.aliased.contains(&h.document.id)),
            by_title: positions(&|h| names.titled.contains(&h.document.id)),
        };
        Ok(Self {
            hits,
            pinning,
            foreign: names.foreign,
        })
    }

    /// The sections injected whatever their evidence, best ranked first, none `seen`: the best
    /// ones of a document the prompt names by alias, up to `top_k` − 1 (at least one), the
    /// best one of a document it names by title in a place those leave, and the best one a
    /// name pins; at most `top_k`. An alias names the document but not the section, and the rest of the prompt
    /// picking among that document's sections is the step that most often errs (the answer
    /// ranked second or third there), so more than one is injected, leaving the gate a place.
    /// Measured against one (hook answer injected, MiniLM synth30-dev / val · mpnet): 80.0 /
    /// 82.7 · 82.7 / 81.2% → 82.7 / 84.6 · 84.6 / 85.8% at 0.14–0.16 more sections a prompt;
    /// real-dev (no aliases) and off-topic unchanged. A title pins one, and the gate finds the
    /// rest: three pins instead gave the same answers within 0.4 points at 0.05–0.23 more
    /// sections a prompt.
    fn pins(&self, top_k: usize, seen: &HashSet<i64>) -> Vec<usize> {
        let unseen = |i: &usize| !seen.contains(&self.hits[*i].chunk_id);
        let first_new = |list: &[usize], pins: &[usize]| {
            list.iter()
                .copied()
                .find(|i| unseen(i) && !pins.contains(i))
        };
        let document_places = top_k.saturating_sub(1).max(1);
        let mut pins: Vec<usize> = self
            .pinning
            .by_alias
            .iter()
            .copied()
            .filter(unseen)
            .take(document_places)
            .collect();
        if pins.len() < document_places
            && let Some(titled) = first_new(&self.pinning.by_title, &pins)
        {
            pins.push(titled);
        }
        if let Some(named) = first_new(&self.pinning.by_name, &pins) {
            pins.push(named);
        }
        pins.sort_unstable();
        pins.truncate(top_k);
        pins
    }

    /// The sections to inject, in order: the pinned ones not yet `seen` ([`Self::pins`]), then
    /// those passing every gate, in search order (the fused ranking already weighs both
    /// retrievers and the names), at most `top_k`.
    pub fn choose(&self, gate: &Gate, seen: &HashSet<i64>) -> Vec<&Hit> {
        let unseen = |h: &&Hit| !seen.contains(&h.chunk_id);
        let pinned = self
            .pins(gate.top_k, seen)
            .into_iter()
            .map(|i| &self.hits[i]);
        let evidence_of = |h: &Hit| evidence(h);
        // The prompt is on topic when one section shows the full evidence; the sections that
        // follow it need only a share of it, since the fused ranking already weighed them
        // against the rest (an answer ranked second or third often holds fewer of the
        // prompt's terms than the best one). Whether anything is injected is decided by
        // the strongest section alone, as before.
        let strongest = self
            .hits
            .iter()
            .filter(unseen)
            .map(evidence_of)
            .fold(f32::MIN, f32::max);
        let floor = if strongest >= gate.min_evidence && self.foreign.is_empty() {
            (gate.min_evidence * FOLLOW_SHARE).max(strongest * LEAD_SHARE)
        } else {
            f32::INFINITY
        };
        let mut gated: Vec<&Hit> = self
            .hits
            .iter()
            .filter(unseen)
            .filter(|h| {
                evidence_of(h) >= floor && gate.min_score.is_none_or(|min| h.similarity >= min)
            })
            .collect();
        if let Some(best) = gated.iter().map(|h| h.similarity).reduce(f32::max) {
            gated.retain(|h| h.similarity >= best * gate.min_ratio);
        }
        let mut chosen: Vec<&Hit> = pinned.into_iter().collect();
        for h in gated {
            if chosen.len() >= gate.top_k {
                break;
            }
            if !chosen.iter().any(|c| c.chunk_id == h.chunk_id) {
                chosen.push(h);
            }
        }
        chosen
    }
}

pub fn context(engine: &Engine, args: &ContextArgs) -> Result<String, ToolError> {
    context_from(engine, args)
}

/// `ragdown_context`'s answer in the format the call asks for: the block, or empty text when
/// nothing is injected.
pub fn context_from(source: &dyn ContextSource, args: &ContextArgs) -> Result<String, ToolError> {
    let Some(injection) = inject(source, args)? else {
        return Ok(String::new());
    };
    Ok(match args.format {
        ContextFormat::Text => injection.block,
        ContextFormat::ClaudeCode => json!({
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": injection.block,
            }
        })
        .to_string(),
    })
}

/// What the hook injects for one prompt: its sections, in the order the block cites them, and
/// the `<ragdown-context>` block they make.
pub struct Injection {
    pub sections: Vec<Hit>,
    pub block: String,
}

/// Runs the hook for one prompt — gates, session memory, query log — and returns what it
/// injects, or `None` when it stays silent. [`context_from`] renders it; `ragdown eval` reads
/// the sections without parsing the block.
pub fn inject(
    source: &dyn ContextSource,
    args: &ContextArgs,
) -> Result<Option<Injection>, ToolError> {
    let session = args.session_id.as_deref().unwrap_or("").trim().to_string();
    if args.reset && !session.is_empty() {
        source.sessions().forget(&session);
    }
    let prompt = args.prompt.trim();
    if prompt.chars().count() < MIN_PROMPT_CHARS || prompt.starts_with('/') {
        return Ok(None);
    }
    let hook = source.hook();
    let gate = Gate {
        top_k: args.top_k.unwrap_or(hook.top_k).clamp(1, 50),
        // Set by the call, the folder or the server, the cosine floor is an extra gate.
        min_score: args.min_score.or(hook.min_score),
        min_evidence: args.min_evidence.unwrap_or(hook.min_evidence),
        min_ratio: args.min_ratio.unwrap_or(hook.min_ratio).clamp(0.0, 1.0),
    };
    let max_chars = args.max_chars.unwrap_or(hook.max_chars).max(1);
    let seen = if session.is_empty() {
        HashSet::new()
    } else {
        source.sessions().seen(&session)
    };

    let started = std::time::Instant::now();
    let candidates = Candidates::find(source, prompt, gate.top_k)?;
    let hits = &candidates.hits;
    let log = |injected: &[i64]| {
        let shown: Vec<Hit> = hits
            .iter()
            .filter(|h| injected.contains(&h.chunk_id))
            .cloned()
            .collect();
        source.log(Entry::Context(HookCall {
            query: prompt.to_string(),
            hits: LoggedHit::all(&shown),
            injected: injected.len(),
            candidates: hits.len(),
            dropped: hits.len() - injected.len(),
            min_score: gate.min_score.map(|m| crate::format::rounded(m, 4)),
            min_evidence: crate::format::rounded(gate.min_evidence, 4),
            foreign: candidates.foreign.clone(),
            latency_ms: started.elapsed().as_secs_f64() * 1000.0,
        }));
    };
    let chosen = candidates.choose(&gate, &seen);
    if chosen.is_empty() {
        log(&[]);
        return Ok(None);
    }

    // Whole sections only: the first always (clipped only past the budget), then each further
    // one that still fits.
    let mut blocks = Vec::new();
    let mut used = 0usize;
    let mut sections: Vec<Hit> = Vec::new();
    for (i, hit) in chosen.into_iter().enumerate() {
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
        sections.push(hit.clone());
    }
    let injected: Vec<i64> = sections.iter().map(|h| h.chunk_id).collect();
    log(&injected);
    if !session.is_empty() {
        source.sessions().remember(&session, injected);
    }
    let block = format!(
        "<ragdown-context source={}>\n{PREAMBLE}\n\n{}\n</ragdown-context>",
        serde_json::to_string(source.source_name()).unwrap_or_default(),
        blocks.join("\n\n")
    );
    Ok(Some(Injection { sections, block }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hit whose cosine rises `rise` above unrelated prompts on its folder's calibration
    /// (and whose similarity, for the extra cosine gates, is `0.2 + rise / 2`).
    fn hit(id: i64, coverage: f32, rise: f32) -> Hit {
        Hit {
            chunk_id: id,
            document: std::sync::Arc::new(ragdown_index::DocumentRecord {
                id,
                path: format!("d{id}.md"),
                size: 1,
                title: format!("D{id}"),
                total_lines: 1,
                ..Default::default()
            }),
            heading: String::new(),
            breadcrumb: String::new(),
            text: String::new(),
            line_start: 1,
            line_end: 1,
            similarity: 0.2 + rise / 2.0,
            score: 0.0,
            coverage,
            rise: Some(rise),
            sources: Vec::new(),
        }
    }

    fn gate() -> Gate {
        Gate {
            top_k: 4,
            min_score: None,
            min_evidence: MIN_EVIDENCE,
            min_ratio: 0.0,
        }
    }

    fn chosen(candidates: &Candidates, gate: &Gate) -> Vec<i64> {
        chosen_after(candidates, gate, &HashSet::new())
    }

    fn chosen_after(candidates: &Candidates, gate: &Gate, seen: &HashSet<i64>) -> Vec<i64> {
        candidates
            .choose(gate, seen)
            .iter()
            .map(|h| h.chunk_id)
            .collect()
    }

    #[test]
    fn the_gate_weighs_terms_and_closeness_together() {
        let candidates = Candidates {
            hits: vec![
                // Holds the prompt's rare terms, barely closer than unrelated prompts.
                hit(1, 0.85, 0.05),
                // Shares only common words with the prompt.
                hit(2, 0.2, 0.1),
                // A paraphrase: few shared terms, but as close as answers come.
                hit(3, 0.25, 1.0),
                // Nothing in common: below the background.
                hit(4, 0.0, -0.1),
            ],
            pinning: Pinning::default(),
            foreign: Vec::new(),
        };
        assert_eq!(chosen(&candidates, &gate()), vec![1, 3]);
    }

    #[test]
    fn sections_after_a_strong_one_need_only_a_share_of_the_floor() {
        // Evidence = coverage here (cosine at the background).
        let background = 0.0;
        let strong = Candidates {
            hits: vec![
                hit(1, 0.9, background),
                hit(2, MIN_EVIDENCE * FOLLOW_SHARE + 0.01, background),
                hit(3, MIN_EVIDENCE * FOLLOW_SHARE - 0.01, background),
            ],
            pinning: Pinning::default(),
            foreign: Vec::new(),
        };
        assert_eq!(chosen(&strong, &gate()), vec![1, 2]);
        // Without a section at the whole floor, the prompt gets nothing.
        let weak = Candidates {
            hits: vec![
                hit(1, MIN_EVIDENCE - 0.01, background),
                hit(2, MIN_EVIDENCE * FOLLOW_SHARE + 0.01, background),
            ],
            pinning: Pinning::default(),
            foreign: Vec::new(),
        };
        assert!(chosen(&weak, &gate()).is_empty());
        // The strongest, once injected in this session, no longer opens the gate for the rest.
        let seen: HashSet<i64> = [1].into();
        assert!(chosen_after(&strong, &gate(), &seen).is_empty());
    }

    #[test]
    fn sections_after_a_strong_one_need_a_share_of_its_evidence_too() {
        // Evidence = coverage here (cosine at the background).
        let background = 0.0;
        let strongest = 1.6;
        let candidates = Candidates {
            hits: vec![
                hit(1, strongest, background),
                // Above the follow floor, but under LEAD_SHARE of the strongest's evidence.
                hit(2, strongest * LEAD_SHARE - 0.01, background),
                hit(3, strongest * LEAD_SHARE + 0.01, background),
            ],
            pinning: Pinning::default(),
            foreign: Vec::new(),
        };
        assert!(strongest * LEAD_SHARE - 0.01 > MIN_EVIDENCE * FOLLOW_SHARE);
        assert_eq!(chosen(&candidates, &gate()), vec![1, 3]);
    }

    #[test]
    fn common_words_alone_inject_nothing() {
        let candidates = Candidates {
            hits: vec![hit(1, 0.3, 0.3), hit(2, 0.25, 0.28)],
            pinning: Pinning::default(),
            foreign: Vec::new(),
        };
        assert!(chosen(&candidates, &gate()).is_empty());
    }

    #[test]
    fn a_named_document_goes_first_whatever_its_evidence() {
        let candidates = Candidates {
            hits: vec![hit(1, 0.9, 0.7), hit(2, 0.0, 0.1)],
            pinning: Pinning {
                by_name: vec![1],
                ..Pinning::default()
            },
            foreign: Vec::new(),
        };
        assert_eq!(chosen(&candidates, &gate()), vec![2, 1]);
        // Once seen, the pinned section is not repeated and the gate decides alone.
        let seen: HashSet<i64> = [2].into();
        assert_eq!(chosen_after(&candidates, &gate(), &seen), vec![1]);
    }

    #[test]
    fn a_document_named_by_alias_gets_its_best_sections_leaving_the_gate_a_place() {
        // Sections 1, 3, 4 and 5 are the named document's, weak on evidence; 2 is strong.
        let weak = |id| hit(id, 0.0, 0.1);
        let candidates = Candidates {
            hits: vec![weak(1), hit(2, 0.9, 0.7), weak(3), weak(4), weak(5)],
            pinning: Pinning {
                by_alias: vec![0, 2, 3, 4],
                ..Pinning::default()
            },
            foreign: Vec::new(),
        };
        assert_eq!(chosen(&candidates, &gate()), vec![1, 3, 4, 2]);
        // Those already injected in the session make room for the next ones.
        let seen: HashSet<i64> = [1, 3].into();
        assert_eq!(chosen_after(&candidates, &gate(), &seen), vec![4, 5, 2]);
        // One place: the named document's best section alone.
        let one = Gate { top_k: 1, ..gate() };
        assert_eq!(chosen(&candidates, &one), vec![1]);
        // A section a name pins joins them in rank order, within top_k.
        let named = Candidates {
            pinning: Pinning {
                by_name: vec![1],
                by_alias: candidates.pinning.by_alias.clone(),
                ..Pinning::default()
            },
            ..candidates
        };
        assert_eq!(chosen(&named, &gate()), vec![1, 2, 3, 4]);
        assert_eq!(chosen(&named, &one), vec![1]);
    }

    #[test]
    fn a_document_named_by_title_gets_its_best_section_and_the_gate_the_rest() {
        // Sections 1, 3 and 4 are the titled document's, weak on evidence; 2 is strong.
        let weak = |id| hit(id, 0.0, 0.1);
        let candidates = Candidates {
            hits: vec![weak(1), hit(2, 0.9, 0.7), weak(3), weak(4)],
            pinning: Pinning {
                by_title: vec![0, 2, 3],
                ..Pinning::default()
            },
            foreign: Vec::new(),
        };
        assert_eq!(chosen(&candidates, &gate()), vec![1, 2]);
        // Once it is seen, the document's next best section.
        let seen: HashSet<i64> = [1].into();
        assert_eq!(chosen_after(&candidates, &gate(), &seen), vec![3, 2]);
        // Another document named by alias: its sections first, the title's best in a place
        // they leave, and none when they take every place but the gate's.
        let both = Candidates {
            pinning: Pinning {
                by_alias: vec![0, 2],
                by_title: vec![3],
                ..Pinning::default()
            },
            ..candidates
        };
        assert_eq!(chosen(&both, &gate()), vec![1, 3, 4, 2]);
        let two = Gate { top_k: 2, ..gate() };
        assert_eq!(chosen(&both, &two), vec![1, 2]);
    }

    #[test]
    fn a_prompt_about_a_name_the_documents_never_mention_gets_only_a_pinned_section() {
        // Strong evidence otherwise: the documents hold the prompt's other rare terms.
        let mut candidates = Candidates {
            hits: vec![hit(1, 0.9, 0.7), hit(2, 0.8, 0.6)],
            pinning: Pinning::default(),
            foreign: vec!["Dendrite".into()],
        };
        assert!(chosen(&candidates, &gate()).is_empty());
        // A section holding a strong name the prompt quotes is still injected.
        candidates.pinning.by_name = vec![1];
        assert_eq!(chosen(&candidates, &gate()), vec![2]);
        candidates.foreign.clear();
        assert_eq!(chosen(&candidates, &gate()), vec![2, 1]);
    }

    #[test]
    fn min_score_and_min_ratio_are_extra_gates() {
        let candidates = Candidates {
            hits: vec![hit(1, 1.0, 0.5), hit(2, 1.0, 0.3)],
            pinning: Pinning::default(),
            foreign: Vec::new(),
        };
        assert_eq!(chosen(&candidates, &gate()), vec![1, 2]);
        let floor = Gate {
            min_score: Some(0.4),
            ..gate()
        };
        assert_eq!(chosen(&candidates, &floor), vec![1]);
        let ratio = Gate {
            min_ratio: 0.9,
            ..gate()
        };
        assert_eq!(chosen(&candidates, &ratio), vec![1]);
        // Without a model (no rise) only the terms count.
        let keyword_only = Candidates {
            hits: vec![hit(1, 0.9, 0.0), hit(2, 0.5, 0.0)],
            pinning: Pinning::default(),
            foreign: Vec::new(),
        };
        assert_eq!(chosen(&keyword_only, &gate()), vec![1]);
    }

    /// A source that fails the test if the hook searches it.
    struct NeverSearched(Sessions);

    impl ContextSource for NeverSearched {
        fn source_name(&self) -> &str {
            "never"
        }
        fn sessions(&self) -> &Sessions {
            &self.0
        }
        fn hook(&self) -> HookSettings {
            HookSettings::default()
        }
        fn max_per_document(&self) -> usize {
            0
        }
        fn search(&self, prompt: &str, _: &SearchOptions) -> Result<Vec<Hit>, ToolError> {
            panic!("a skipped prompt was searched: {prompt:?}")
        }
        fn prompt_names(&self, prompt: &str) -> Result<PromptNames, ToolError> {
            panic!("a skipped prompt was read for names: {prompt:?}")
        }
        fn log(&self, _: crate::query_log::Entry) {}
    }

    #[test]
    fn empty_short_and_slash_command_prompts_get_nothing_without_a_search() {
        let source = NeverSearched(Sessions::new(2));
        for prompt in [
            "",
            "   ",
            "ok thanks",
            "/compact and then summarise everything",
        ] {
            let args = ContextArgs {
                prompt: prompt.into(),
                ..Default::default()
            };
            assert_eq!(context_from(&source, &args).unwrap(), "", "{prompt:?}");
        }
    }

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
