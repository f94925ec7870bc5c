//! Hybrid retrieval over one index: a dense pool (cosine over the snapshot's vectors) and a
//! BM25 pool, fused by reciprocal rank (k = 60) — or, for a query that names an identifier, by
//! min-max normalised scores with BM25 weighted 0.8 — plus the alias boost, a re-scoring of
//! the best fused candidates by closeness and lexical coverage ([`rerank`]), filters (path
//! prefix, tag, who wrote it), hiding of superseded documents, the per-document cap and link
//! following. When the model could not load (`Embedder::unavailable`), BM25 alone answers.
//!
//! Reads the index; never writes it, never waits for a sync, knows nothing of MCP or output
//! formats: it returns [`Hit`]s and the caller formats them.

pub mod calibration;
pub mod evidence;
mod hybrid;
pub mod named;
pub mod route;
mod vectors;

pub use hybrid::{keyword_only, search};

use std::sync::Arc;

use ragdown_index::DocumentRecord;

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("embedding the query failed: {0}")]
    Embed(#[from] ragdown_embed::EmbedError),
    #[error(transparent)]
    Index(#[from] ragdown_index::IndexError),
}

/// `RRF k`: ranks are scored `1 / (k + rank)`, rank 1 first. Swept with the re-scoring on:
/// 20 / 40 / 100 against 60 moved synth30-dev by −0.4 / 0 / 0 top-1 and the other corpora
/// both ways (val −0.4 … 0, real-dev 0 … +1.6): kept at the usual 60.
pub const RRF_K: f32 = 60.0;
/// BM25's weight in score fusion for queries that name an identifier.
pub const IDENTIFIER_BM25_WEIGHT: f32 = 0.8;
/// Weight of the section ranking inside documents a query names, in rank shares: the name
/// already picked the document, so the rest of the query decides among its sections.
/// Swept 1–8 on synth30-dev: 1 → 56.9% top-1, 2 → 59.2%, 4 → 64.2%, 8 → 63.5%.
pub const SECTION_WEIGHT: f32 = 4.0;
/// How many of a named document's best sections have their links followed into the section
/// ranking. Swept on synth30-dev: 0 → 64.2% top-1 / 84.6% recall@5, 1 → 66.5% / 89.2%,
/// 2 → 68.1% / 90.0%, 3 and 5 → 67.7%.
pub const LINKED_SECTIONS: usize = 2;
/// A section's best piece counts at this fraction of its cosine when sections of one document
/// are ranked: a short piece matches a question more easily than a whole section does.
/// Swept on synth30-dev (pieces prefixed by the document title): 1.0 → 71.5% top-1,
/// 0.95 / 0.9 / 0.85 / 0.8 → 73.1%; pieces prefixed by the breadcrumb instead, 0.9 → 71.9%;
/// no pieces → 68.1%. Used in the dense pool as well, it lost 3–4 points (breadcrumb questions
/// fall to the sibling sections' pieces).
pub const PIECE_WEIGHT: f32 = 0.9;
/// How many of the candidates closest to a query that names no document, best piece included
/// ([`PIECE_WEIGHT`]), get [`CLOSENESS_LIST_WEIGHT`] rank shares more in fusion
/// (`add_closeness_list` in `hybrid`). Swept with both models at weight 1 (top-1 / recall@5 on
/// dev / val / real-dev; before, MiniLM 77.7 / 91.9, 77.3 / 91.9, 69.8 / 85.7 · mpnet 76.2 /
/// 90.0, 75.4 / 90.0, 69.8 / 87.3): 3 → MiniLM dev and val top-1 76.9; **5** → MiniLM 77.7 /
/// 91.9, 77.3 / 92.3, 71.4 / 88.9 · mpnet 76.5 / 90.4, 75.4 / 91.5, 69.8 / 92.1; 8 → the same
/// within a question; 10 and 15 → real-dev's gains halve. Ranking every section of the folder
/// by closeness instead of the candidates gave the same within a question at 5–20, for a scan
/// of every piece; as a list of every section's best piece over the whole pool it cost
/// synth30 2–4 points, and with queries naming documents too, 4 (their name, in every piece's
/// prefix, pulls their short pieces up).
pub const CLOSENESS_LIST: usize = 5;
/// The closeness list's weight, in rank shares. Swept at [`CLOSENESS_LIST`] 5 (top-1 / recall@5
/// as above): 0.75 → MiniLM real-dev 71.4 / 90.5, mpnet real-dev 69.8 / 90.5, the rest as at 1;
/// 1 → mpnet real-dev top-1 69.8, one question behind MiniLM's 71.4; 1.25 / **1.5** / 2 →
/// MiniLM 77.7 / 91.9, 77.3 / 92.3, 71.4 / 88.9 · mpnet 76.9 / 90.4, 75.4 / 91.9 (1.5: 91.5),
/// 71.4 / 90.5, MRR up on five runs of six and level on MiniLM dev. The hook injects the same
/// answers at every point.
pub const CLOSENESS_LIST_WEIGHT: f32 = 1.5;
/// How many of the best fused candidates [`rerank`] re-scores. Swept on synth30-dev: 20 and
/// 30 score the same; fewer cost less.
pub const RERANK_DEPTH: usize = 20;
/// Weight of a candidate's closeness below the best candidate's, in shares of the best fused
/// score per unit of rise (the distance from unrelated prompts' cosine to answers' on this
/// corpus under this model, [`calibration::Calibration::scale`]). First swept in MiniLM's
/// cosines on synth30-dev (with coverage at 0.2): 0 → 74.2% top-1, 0.5 → 77.7%, 0.7 and 1 →
/// 77.3%, 2 → 76.9%, and 1.0 kept; MiniLM's rise unit is ~0.4 of a cosine, and 0.4 here gives
/// exactly its figures (top-1 77.7 / 74.6 / 68.3 on dev / val / real-dev). Swept again in rise
/// units (dev / val / real-dev top-1): MiniLM 0.3 → 77.7 / 74.6 / 68.3, 0.5 → 77.3 / 74.6 / 68.3,
/// 0.7 → 76.5 / 72.3 / 71.4; mpnet 0.4 → 75.0 / 73.8, 0.7 → 73.1 / 73.1, 1.0 → 71.2 / 69.2.
/// Measured with the full query's cosine even when it names a document, it lost 7 points
/// (the other runbooks' sections of the same name win). Swept once more with coverage, after
/// the code names' term joined: see [`RERANK_COVERAGE_WEIGHT`]; 0.3 kept.
pub const RERANK_CLOSENESS_WEIGHT: f32 = 0.3;
/// Weight of a candidate's lexical coverage of the query. Swept on synth30-dev (closeness at
/// 1): 0 → 77.3% top-1 / 92.3% recall@5, 0.1 and 0.2 → 77.3 / 92.3, 0.3 → 77.3 / 92.7.
/// A heading-only coverage (0.1–0.4) and a document's share of the pool (0.2–1) lost 0.4–5
/// points there and were dropped. Swept again with both models, closeness at 0.4 (top-1,
/// MiniLM dev / val / real-dev · mpnet): 0.2 → 77.7 / 74.6 / 68.3 · 75.0 / 73.8 / 65.1,
/// 0.5 → 77.7 / 76.9 / 69.8 · 74.2 / 75.0 / 66.7, 0.8 → 75.8 / 76.2 / 69.8 · 72.7 / 75.0 /
/// 69.8: the corpus it is tuned on gains nothing and mpnet loses there, so 0.2 stayed.
/// With [`RERANK_CODE_WEIGHT`] at 0.5, the two swept together (top-1, MiniLM dev / val /
/// real-dev · mpnet; coverage / closeness): 0.2 / 0.4 → 77.7 / 75.0 / 68.3 · 76.2 / 74.6 /
/// 66.7; 0.3 / 0.3 → 77.7 / 76.9 / 68.3 · 76.2 / 76.2 / 66.7; 0.35 / 0.3 → 77.7 / 77.3 / 69.8
/// · 75.8 / 75.4 / 68.3; **0.4 / 0.3** → 77.7 / 77.3 / 69.8 · 76.2 / 75.4 / 69.8; 0.4 / 0.25
/// → 76.9 / 76.5 / 69.8 · 76.2 / 76.2 / 69.8; 0.4 / 0.35 → 77.7 / 76.9 / 69.8 · 75.8 / 75.8 /
/// 69.8; 0.45 / 0.3 → 77.3 / 76.9 / 69.8 · 76.2 / 76.2 / 69.8; 0.5 / 0.3 → 76.2 / 76.9 / 69.8
/// · 76.2 / 75.8 / 69.8; 0.5 / 0.5 → 77.3 / 76.2 / 71.4 · 75.4 / 75.4 / 71.4. Coverage at
/// 0.35–0.45 over closeness at 0.25–0.35 is a plateau; 0.4 / 0.3 is the one point in it where
/// no top-1 falls (recall@5 MiniLM dev 92.3 → 91.9 and mpnet val 90.4 → 90.0, one question
/// each; mpnet dev 88.1 → 90.0; MRR up on five runs, MiniLM dev 0.834 → 0.833).
pub const RERANK_COVERAGE_WEIGHT: f32 = 0.4;
/// Weight of the share of the query's names written as code (`max_lifetime`,
/// `m.room.retention`, `--drain-agents`: [`route::code_names`]) that a candidate's section holds
/// word for word. Coverage weighs a name's analysed words, which a sibling section shares
/// (`room`, `retention`, `lifetime`); the name itself is in the section that documents it.
/// Swept with both models (top-1, MiniLM dev / val / real-dev · mpnet): 0 → 77.7 / 74.6 /
/// 68.3 · 75.0 / 73.8 / 65.1, 0.15 → 77.7 / 74.6 / 68.3 · 75.8 / 74.2 / 66.7, 0.3 and 0.6 →
/// 77.7 / 75.0 / 68.3 · 76.2 / 74.6 / 66.7, 1.0 → 77.7 / 75.4 / 68.3 · 76.2 / 75.0 / 66.7;
/// recall@5 unchanged or up everywhere. 0.5 sits inside the plateau, beside the other terms'
/// weights rather than over them.
pub const RERANK_CODE_WEIGHT: f32 = 0.5;
/// A query naming more documents than this is about their relation, not one section.
pub const MAX_NAMED_DOCUMENTS: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrittenBy {
    /// Documents with `created_by` in their frontmatter.
    Agent,
    /// Documents without.
    User,
}

/// Which retrievers run and how they are fused (the benchmark compares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Everything this crate does: RRF, identifier routing, alias boost.
    #[default]
    Hybrid,
    /// Plain RRF of the two pools, nothing else.
    NaiveRrf,
    Dense,
    Lexical,
}

#[derive(Debug, Clone)]
pub struct SearchOptions {
    pub limit: usize,
    /// A folder, root-relative without a trailing `/`; only documents under it.
    pub path_prefix: Option<String>,
    /// A normalised tag; nested tags match (`project` matches `project/alpha`).
    pub tag: Option<String>,
    pub written_by: Option<WrittenBy>,
    /// At most this many hits per document (0 = no cap).
    pub max_per_document: usize,
    /// Follow the wikilinks of this many best hits (0 = off).
    pub follow_links: usize,
    pub mode: Mode,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            limit: 8,
            path_prefix: None,
            tag: None,
            written_by: None,
            max_per_document: 0,
            follow_links: 0,
            mode: Mode::Hybrid,
        }
    }
}

/// Which retriever found a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Dense,
    Lexical,
    /// Ranked within a document the query names, by the rest of the query.
    Section,
    /// Placed after a hit whose section links to its document.
    Link,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Dense => "dense",
            Source::Lexical => "lexical",
            Source::Section => "section",
            Source::Link => "link",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Hit {
    pub chunk_id: i64,
    pub document: Arc<DocumentRecord>,
    /// Heading path (`Backups › Restore`).
    pub heading: String,
    pub breadcrumb: String,
    pub text: String,
    pub line_start: u32,
    pub line_end: u32,
    /// Cosine between query and chunk: comparable across queries, used for gating.
    pub similarity: f32,
    /// Fused score: orders hits of one query only.
    pub score: f32,
    /// Share (0–1) of the query's term weight this section holds ([`evidence`]): lexical
    /// evidence on no embedder's scale.
    pub coverage: f32,
    /// The section's closeness to the query — its cosine, or its best piece's at
    /// [`PIECE_WEIGHT`], whichever is higher, as the re-scoring reads it — as a rise on this
    /// index's calibration ([`calibration::Calibration::rise`]): 0 where unrelated prompts
    /// land, 1 where a query made from a section lands against it. A question answered by one
    /// paragraph of a long section shows here even when the section as a whole is far.
    /// `None` without a model (keyword-only hits) or before the index can be calibrated.
    pub rise: Option<f32>,
    pub sources: Vec<Source>,
}

impl Hit {
    pub fn path(&self) -> &str {
        &self.document.path
    }
}

/// The exact dense scan a search runs, over every document: the best `n` `(chunk id,
/// cosine)` for `query`, best first (for benchmarks of the scan alone).
pub fn dense_top(snap: &ragdown_index::Snapshot, query: &[f32], n: usize) -> Vec<(i64, f32)> {
    let allowed = vec![true; snap.max_document_id() as usize + 1];
    hybrid::dense_pool(snap, query, &allowed, n)
}

#[cfg(test)]
mod tests;
