//! [`search`] itself: the filters' allowed documents, the dense and BM25 pools, ranking the
//! sections of named documents, fusion (RRF, or normalised scores for identifiers, and the
//! candidates' closeness list, best piece included), the re-scoring of the best candidates,
//! supersedes, the per-document cap and link following.

use std::collections::HashMap;
use std::sync::Arc;

use ragdown_embed::int8::{Int8Vector, ScanQuery};
use ragdown_index::{Index, Snapshot};

use crate::calibration::Calibration;
use crate::vectors::{SectionVectors, allowed_for_pool};
use crate::{
    CLOSENESS_LIST, CLOSENESS_LIST_WEIGHT, Hit, IDENTIFIER_BM25_WEIGHT, LINKED_SECTIONS,
    MAX_NAMED_DOCUMENTS, Mode, PIECE_WEIGHT, RERANK_CLOSENESS_WEIGHT, RERANK_CODE_WEIGHT,
    RERANK_COVERAGE_WEIGHT, RERANK_DEPTH, RRF_K, SECTION_WEIGHT, SearchError, SearchOptions,
    Source, WrittenBy, evidence, named, route,
};

/// The documents a search may return, as a lookup by document id.
fn allowed_documents(snap: &Snapshot, opts: &SearchOptions) -> Arc<Vec<bool>> {
    let mut allowed = vec![false; snap.max_document_id() as usize + 1];
    let prefix = opts
        .path_prefix
        .as_deref()
        .filter(|p| !p.is_empty())
        .map(|p| format!("{}/", p.trim_end_matches('/')));
    for doc in snap.documents() {
        let ok = prefix
            .as_ref()
            .is_none_or(|p| doc.path.starts_with(p.as_str()))
            && opts
                .tag
                .as_ref()
                .is_none_or(|t| ragdown_markdown::tags::matches(&doc.tags, t))
            && match opts.written_by {
                None => true,
                Some(WrittenBy::Agent) => doc.created_by.is_some(),
                Some(WrittenBy::User) => doc.created_by.is_none(),
            }
            && !snap.superseded().contains(&doc.path);
        if ok {
            allowed[doc.id as usize] = true;
        }
    }
    Arc::new(allowed)
}

/// Top `n` `(chunk id, cosine)` over the allowed documents; a folder of more than
/// [`PARALLEL_SCAN_CHUNKS`] chunks is scanned on every core.
pub(crate) fn dense_pool(
    snap: &Snapshot,
    query: &[f32],
    allowed: &[bool],
    n: usize,
) -> Vec<(i64, f32)> {
    let threads = if snap.chunk_count() >= PARALLEL_SCAN_CHUNKS {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    } else {
        1
    };
    dense_pool_on(snap, query, allowed, n, threads)
}

/// Folders with at least this many chunks have their exact dense scan split over threads:
/// below it a scan takes under ~2 ms and starting threads would cost more than it saves.
const PARALLEL_SCAN_CHUNKS: usize = 50_000;

/// [`dense_pool`] on `threads` threads: each keeps its run's best `n`, whose union holds the
/// best `n` of all (the order is total: score, then chunk id).
pub(crate) fn dense_pool_on(
    snap: &Snapshot,
    query: &[f32],
    allowed: &[bool],
    n: usize,
    threads: usize,
) -> Vec<(i64, f32)> {
    let by_score = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let best = |mut scored: Vec<(i64, f32)>| {
        if scored.len() > n {
            scored.select_nth_unstable_by(n, by_score);
            scored.truncate(n);
        }
        scored
    };
    let dim = snap.dim.max(1);
    let prepared = ScanQuery::new(query);
    let score_run = |run: ragdown_index::ChunkRun| {
        // A bounded buffer instead of every score: once it fills, it keeps its best `n` and
        // admits only scores that could still be among them (ties included, so the order by
        // chunk id stays exact).
        let room = (4 * n).max(64);
        let mut kept: Vec<(i64, f32)> = Vec::with_capacity(room);
        let mut floor = f32::NEG_INFINITY;
        let pairs = run
            .chunks
            .iter()
            .zip(run.vectors.chunks_exact(dim).zip(run.scales));
        for (c, (values, scale)) in pairs {
            if !allowed
                .get(c.document_id as usize)
                .copied()
                .unwrap_or(false)
                || snap.is_removed(c.id)
            {
                continue;
            }
            let score = prepared.dot(values, *scale);
            if score < floor {
                continue;
            }
            kept.push((c.id, score));
            if kept.len() == room {
                kept = best(std::mem::take(&mut kept));
                floor = kept.iter().map(|x| x.1).fold(f32::INFINITY, f32::min);
                kept.reserve(room - kept.len());
            }
        }
        best(kept)
    };
    let runs = snap.chunk_runs(threads);
    let mut scored: Vec<(i64, f32)> = if threads <= 1 {
        runs.into_iter().flat_map(score_run).collect()
    } else {
        // Runs are dealt round-robin so each thread gets about one share of the chunks.
        let score_runs = |k: usize| -> Vec<(i64, f32)> {
            runs.iter()
                .skip(k)
                .step_by(threads)
                .flat_map(|run| score_run(*run))
                .collect()
        };
        std::thread::scope(|scope| {
            let others: Vec<_> = (1..threads)
                .map(|k| scope.spawn(move || score_runs(k)))
                .collect();
            let mut all = score_runs(0);
            for other in others {
                // A scan thread only computes dot products: it cannot panic short of a bug,
                // and then its part is left out rather than failing the search.
                all.extend(other.join().unwrap_or_default());
            }
            all
        })
    };
    scored = best(scored);
    scored.sort_by(by_score);
    scored
}

/// How close a section is to a query: its own cosine, or its best piece's at
/// [`PIECE_WEIGHT`], whichever is higher.
fn section_similarity(vectors: &SectionVectors, id: i64, vector: Int8Vector, query: &[f32]) -> f32 {
    vectors
        .pieces(id)
        .map(|piece| PIECE_WEIGHT * piece.dot(query))
        .fold(vector.dot(query), f32::max)
}

/// One more fused list: the candidates in order of closeness to the query (a section's cosine
/// or its best piece's, [`section_similarity`]), its first [`CLOSENESS_LIST`] given
/// [`CLOSENESS_LIST_WEIGHT`] RRF rank shares each. It finds no new sections; it lifts those a
/// row or a paragraph of which answers the query above their whole cosine's rank. Each
/// candidate keeps its closeness for the re-scoring.
pub(crate) fn add_closeness_list(
    vectors: &SectionVectors,
    query: &[f32],
    candidates: &mut HashMap<i64, Candidate>,
) {
    let mut by_closeness: Vec<(i64, f32)> = candidates
        .iter_mut()
        .filter_map(|(id, c)| {
            let (_, vector) = vectors.chunk(*id)?;
            let closeness = section_similarity(vectors, *id, vector, query);
            c.closeness = Some(closeness);
            Some((*id, closeness))
        })
        .collect();
    by_closeness.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for (rank, (id, _)) in by_closeness.into_iter().take(CLOSENESS_LIST).enumerate() {
        if let Some(c) = candidates.get_mut(&id) {
            c.score += CLOSENESS_LIST_WEIGHT / (RRF_K + rank as f32 + 1.0);
        }
    }
}

/// The sections of the named `documents` and of the documents their best sections link to,
/// best first, by cosine to the query without the names. A runbook that says "credentials are
/// rotated by [[vault]]" hands the question to the vault's section on rotation.
fn rank_sections(
    vectors: &mut SectionVectors,
    snap: &Snapshot,
    documents: &[i64],
    rest_vector: &[f32],
    allowed: &[bool],
) -> Result<Vec<i64>, SearchError> {
    fn score(vectors: &SectionVectors, snap: &Snapshot, doc: i64, rest: &[f32]) -> Vec<(i64, f32)> {
        snap.chunks_of(doc)
            .into_iter()
            .filter_map(|c| {
                vectors
                    .chunk(c.id)
                    .map(|(c, v)| (c.id, section_similarity(vectors, c.id, v, rest)))
            })
            .collect()
    }
    vectors.fetch_documents(documents)?;
    let by_cosine = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut sections: Vec<(i64, f32)> = documents
        .iter()
        .flat_map(|d| score(vectors, snap, *d, rest_vector))
        .collect();
    sections.sort_by(by_cosine);
    let mut linked: Vec<i64> = Vec::new();
    for &(best, _) in sections.iter().take(LINKED_SECTIONS) {
        let Some((chunk, _)) = snap.chunk(best) else {
            continue;
        };
        let Some(doc) = snap.document(chunk.document_id) else {
            continue;
        };
        let own_links = doc
            .links
            .iter()
            .filter(|l| l.line >= chunk.line_start && l.line <= chunk.line_end);
        for link in own_links {
            if let Some(target) = snap.resolve(&link.target, Some(&doc.path))
                && !documents.contains(&target.id)
                && !linked.contains(&target.id)
                && allowed.get(target.id as usize).copied().unwrap_or(false)
            {
                linked.push(target.id);
            }
        }
    }
    if !linked.is_empty() {
        vectors.fetch_documents(&linked)?;
        sections.extend(
            linked
                .iter()
                .flat_map(|d| score(vectors, snap, *d, rest_vector)),
        );
        sections.sort_by(by_cosine);
    }
    Ok(sections.into_iter().map(|(id, _)| id).collect())
}

pub(crate) struct Candidate {
    similarity: f32,
    pub(crate) score: f32,
    sources: Vec<Source>,
    /// Its [`section_similarity`] to the whole query, once [`add_closeness_list`] read it: the
    /// re-scoring and the hit's rise reuse it.
    pub(crate) closeness: Option<f32>,
}

impl Candidate {
    /// A candidate no list has scored yet.
    pub(crate) fn new(similarity: f32) -> Self {
        Self {
            similarity,
            score: 0.0,
            sources: Vec::new(),
            closeness: None,
        }
    }
}

/// Why a search of `index` now answers from keywords (BM25) alone, with no similarity, as a
/// person reads it; `None` when it is hybrid. A server's first moments while the model loads,
/// or a model that could not load.
pub fn keyword_only(index: &Index) -> Option<String> {
    let embedder = index.embedder();
    if let Some(why) = embedder.unavailable() {
        Some(format!(
            "keyword (BM25) matches only, with no similarity: the embedding model could not load ({why})"
        ))
    } else if embedder.loading() {
        Some(
            "keyword (BM25) matches only, with no similarity yet: the embedding model is still \
             loading (a few seconds after start)"
                .into(),
        )
    } else {
        None
    }
}

/// Runs a search. Never waits for a sync: it reads the snapshot published last.
pub fn search(index: &Index, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>, SearchError> {
    let query = query.trim();
    if query.is_empty() || opts.limit == 0 {
        return Ok(Vec::new());
    }
    let snap = index.snapshot();
    let allowed = allowed_documents(&snap, opts);
    let pool = (opts.limit * 4).max(20);
    // With the model not loaded (or a server's first seconds, while it loads), BM25 alone
    // answers (hits then carry no similarity).
    let keyword_only = index.embedder().unavailable().is_some() || index.embedder().loading();
    let mode = if keyword_only {
        Mode::Lexical
    } else {
        opts.mode
    };
    let routed = mode == Mode::Hybrid && route::names_identifier(query);
    let named = if mode == Mode::Hybrid {
        named::named_documents(&snap, query, &allowed)
    } else {
        named::Named::default()
    };
    let rank_named_sections = !routed
        && !named.documents.is_empty()
        && named.documents.len() <= MAX_NAMED_DOCUMENTS
        && !named.rest.is_empty();
    // One forward pass for the query and, when needed, the query without the names.
    let embedded = if keyword_only {
        Ok((vec![0.0; index.embedder().dim()], None))
    } else if rank_named_sections {
        index
            .embedder()
            .embed(&[query, &named.rest], ragdown_embed::TextKind::Query)
            .map(|mut vectors| {
                let rest = vectors.pop();
                (vectors.pop().unwrap_or_default(), rest)
            })
    } else {
        index.embedder().embed_query(query).map(|v| (v, None))
    };
    let (query_vector, rest_vector) = match embedded {
        Ok(vectors) => vectors,
        // The model failed to load on this very query (it loads on first use): from now on
        // the embedder says so, and the search answers from keywords like every later one.
        Err(ragdown_embed::EmbedError::Unavailable(_))
            if index.embedder().unavailable().is_some() =>
        {
            return search(index, query, opts);
        }
        Err(e) => return Err(e.into()),
    };

    let mut vectors = SectionVectors::new(index, &snap);
    let dense = if mode == Mode::Lexical {
        Vec::new()
    } else if let Some(records) = vectors.pool() {
        let mut ids = Vec::new();
        records
            .nearest(
                &query_vector,
                pool,
                allowed_for_pool(&snap, &allowed, &mut ids),
            )?
            .into_iter()
            // The records may already hold chunks this snapshot does not.
            .filter(|(id, _)| snap.chunk(*id).is_some())
            .collect()
    } else {
        dense_pool(&snap, &query_vector, &allowed, pool)
    };
    let has_words = query.chars().any(char::is_alphanumeric);
    let lexical: Vec<(i64, f32)> = if mode == Mode::Dense || !has_words {
        Vec::new()
    } else {
        let filter = allowed.clone();
        let accept = move |id: u64| filter.get(id as usize).copied().unwrap_or(false);
        index
            .bm25_search(query, pool, Arc::new(accept))?
            .into_iter()
            // BM25 may still hold chunks a newer snapshot dropped.
            .filter(|(id, _)| snap.chunk(*id).is_some())
            .collect()
    };

    // The named documents' sections, best first by closeness to the rest of the query.
    let named_sections = match &rest_vector {
        Some(rest_vector) if mode == Mode::Hybrid => {
            let mut sections =
                rank_sections(&mut vectors, &snap, &named.documents, rest_vector, &allowed)?;
            sections.truncate(pool);
            sections
        }
        _ => Vec::new(),
    };
    // Every candidate's vector, for the cosines and the re-scoring below (without a
    // snapshot's vectors: one fetch from the records).
    vectors.fetch(
        dense
            .iter()
            .chain(&lexical)
            .map(|(id, _)| *id)
            .chain(named_sections.iter().copied()),
    )?;
    let mut candidates: HashMap<i64, Candidate> = HashMap::new();
    let cosine = |id: i64| vectors.chunk(id).map_or(0.0, |(_, v)| v.dot(&query_vector));
    let mut add = |id: i64, score: f32, source: Source, similarity: f32| {
        let c = candidates
            .entry(id)
            .or_insert_with(|| Candidate::new(similarity));
        c.score += score;
        c.sources.push(source);
    };
    if routed {
        let normalise = |list: &[(i64, f32)]| -> Vec<(i64, f32)> {
            let max = list.iter().map(|x| x.1).fold(f32::MIN, f32::max);
            let min = list.iter().map(|x| x.1).fold(f32::MAX, f32::min);
            let span = (max - min).max(1e-9);
            list.iter().map(|(id, s)| (*id, (s - min) / span)).collect()
        };
        for (id, s) in normalise(&dense) {
            add(
                id,
                (1.0 - IDENTIFIER_BM25_WEIGHT) * s,
                Source::Dense,
                cosine(id),
            );
        }
        for (id, s) in normalise(&lexical) {
            add(id, IDENTIFIER_BM25_WEIGHT * s, Source::Lexical, cosine(id));
        }
    } else {
        for (rank, (id, sim)) in dense.iter().enumerate() {
            add(*id, 1.0 / (RRF_K + rank as f32 + 1.0), Source::Dense, *sim);
        }
        for (rank, (id, _)) in lexical.iter().enumerate() {
            add(
                *id,
                1.0 / (RRF_K + rank as f32 + 1.0),
                Source::Lexical,
                cosine(*id),
            );
        }
    }
    // Fusion ranks sections by their whole cosine; the answer is often one row or paragraph of
    // a long section. Not when the query names documents: there the names already rank the
    // sections, and the name in every piece's prefix would pull the document's short pieces up.
    if mode == Mode::Hybrid && !routed && named.documents.is_empty() {
        add_closeness_list(&vectors, &query_vector, &mut candidates);
    }
    if mode == Mode::Hybrid {
        // A named alias is one rank-1 share for the document's chunks already in the pools.
        let share = if routed { 1.0 } else { 1.0 / (RRF_K + 1.0) };
        if !named.by_alias.is_empty() {
            for (id, c) in candidates.iter_mut() {
                if snap
                    .chunk(*id)
                    .is_some_and(|(chunk, _)| named.by_alias.contains(&chunk.document_id))
                {
                    c.score += share;
                }
            }
        }
        if rest_vector.is_some() {
            for (rank, id) in named_sections.into_iter().enumerate() {
                let similarity = cosine(id);
                let c = candidates
                    .entry(id)
                    .or_insert_with(|| Candidate::new(similarity));
                c.score += SECTION_WEIGHT / (RRF_K + rank as f32 + 1.0);
                c.sources.push(Source::Section);
            }
        }
    }

    let mut ranked: Vec<(i64, Candidate)> = candidates.into_iter().collect();
    ranked.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(a.0.cmp(&b.0)));
    let terms = evidence::QueryTerms::read(index, query);
    let calibration = if keyword_only {
        None
    } else {
        Calibration::for_search(index)
    };
    if mode == Mode::Hybrid && !keyword_only {
        let closeness_vector = rest_vector.as_deref().unwrap_or(&query_vector);
        let scale = calibration.as_ref().map_or(1.0, |c| c.scale());
        rerank(
            index,
            &vectors,
            &terms,
            &route::code_names(query),
            closeness_vector,
            scale,
            &mut ranked,
        );
    }
    let mut per_document: HashMap<i64, usize> = HashMap::new();
    let mut hits: Vec<Hit> = Vec::with_capacity(opts.limit);
    // The closeness to the whole query the closeness list already read, kept for the hits'
    // rise so no piece is compared twice.
    let mut closeness_read: HashMap<i64, f32> = HashMap::new();
    for (id, c) in ranked {
        if hits.len() >= opts.limit {
            break;
        }
        let Some((chunk, _)) = snap.chunk(id) else {
            continue;
        };
        let count = per_document.entry(chunk.document_id).or_default();
        if opts.max_per_document > 0 && *count >= opts.max_per_document {
            continue;
        }
        *count += 1;
        let Some(document) = snap.document(chunk.document_id) else {
            continue;
        };
        if let Some(closeness) = c.closeness {
            closeness_read.insert(id, closeness);
        }
        hits.push(Hit {
            chunk_id: id,
            document: document.clone(),
            heading: chunk.heading.clone(),
            breadcrumb: chunk.breadcrumb.clone(),
            text: chunk.text.clone(),
            line_start: chunk.line_start,
            line_end: chunk.line_end,
            similarity: c.similarity,
            score: c.score,
            coverage: 0.0,
            rise: None,
            sources: c.sources,
        });
    }
    if opts.follow_links > 0 {
        hits = follow_links(&mut vectors, &snap, &query_vector, &allowed, hits, opts)?;
    }
    for hit in &mut hits {
        let held = index.term_set(&format!(
            "{}\n{}\n{}\n{}",
            hit.document.title,
            hit.document.aliases.join("\n"),
            hit.breadcrumb,
            hit.text
        ));
        hit.coverage = terms.coverage(&held);
        // The closeness the re-scoring reads, best piece included, read only with a model;
        // the reported similarity stays the section's own cosine.
        hit.rise = calibration.as_ref().map(|c| {
            let closeness = closeness_read
                .get(&hit.chunk_id)
                .copied()
                .unwrap_or_else(|| {
                    vectors
                        .chunk(hit.chunk_id)
                        .map_or(hit.similarity, |(_, vector)| {
                            section_similarity(&vectors, hit.chunk_id, vector, &query_vector)
                        })
                });
            c.rise(closeness)
        });
    }
    Ok(hits)
}

/// Re-scores the best fused candidates with what fusion sees only as ranks: each section's
/// closeness to the query (its cosine, best piece included, against the best candidate's —
/// with the rest of the query when it names documents, since the names already chose those)
/// how much of the query's term weight its headings and text hold ([`evidence`]), and how many
/// of the names the query writes as code (`code_names`) they hold word for word.
/// Fusion keeps the rank order of each retriever but drops how far apart the scores are: a
/// section far closer than the next, or holding every rare term of the query, is worth more
/// than one rank share. The fused score, normalised by the best one, stays the main term.
/// Closeness is measured in `scale`s, the distance from unrelated prompts to answers on this
/// corpus under this model ([`Calibration::scale`]), so its weight means the same with any model.
fn rerank(
    index: &Index,
    vectors: &SectionVectors,
    terms: &evidence::QueryTerms,
    code_names: &[String],
    closeness_vector: &[f32],
    scale: f32,
    ranked: &mut [(i64, Candidate)],
) {
    let depth = RERANK_DEPTH.min(ranked.len());
    if depth < 2 {
        return;
    }
    let top = ranked[0].1.score.max(f32::EPSILON);
    // (fused share of the best, closeness, coverage, code names held) for each of the best
    // `depth`.
    let features: Vec<(f32, f32, f32, f32)> = ranked[..depth]
        .iter()
        .map(|(id, c)| match vectors.chunk(*id) {
            Some((chunk, vector)) => (
                c.score / top,
                // Read already when the query names no document, where `closeness_vector` is
                // the whole query's.
                c.closeness
                    .unwrap_or_else(|| section_similarity(vectors, *id, vector, closeness_vector)),
                terms.coverage(&evidence::section_terms(
                    index,
                    &chunk.breadcrumb,
                    &chunk.text,
                )),
                evidence::code_name_share(code_names, &chunk.breadcrumb, &chunk.text),
            ),
            None => (c.score / top, f32::MIN, 0.0, 0.0),
        })
        .collect();
    let best_closeness = features.iter().map(|f| f.1).fold(f32::MIN, f32::max);
    for ((_, c), (fused, closeness, coverage, code)) in ranked[..depth].iter_mut().zip(features) {
        let closeness = if closeness == f32::MIN {
            -1.0 / scale
        } else {
            (closeness - best_closeness) / scale
        };
        c.score = top
            * (fused
                + RERANK_CLOSENESS_WEIGHT * closeness
                + RERANK_COVERAGE_WEIGHT * coverage
                + RERANK_CODE_WEIGHT * code);
    }
    ranked[..depth].sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(a.0.cmp(&b.0)));
}

/// The documents `hit`'s own section links to (Markdown links to `.md` files and wikilinks),
/// within the filters, itself left out.
fn linked_documents<'s>(
    snap: &'s Snapshot,
    hit: &Hit,
    allowed: &[bool],
) -> Vec<&'s Arc<ragdown_index::DocumentRecord>> {
    hit.document
        .links
        .iter()
        .filter(|l| l.kind != "markdown" || l.target.ends_with(".md"))
        .filter(|l| l.line >= hit.line_start && l.line <= hit.line_end)
        .filter_map(|l| snap.resolve(&l.target, Some(&hit.document.path)))
        .filter(|target| {
            target.id != hit.document.id
                && allowed.get(target.id as usize).copied().unwrap_or(false)
        })
        .collect()
}

/// Places, right after each of the best `opts.follow_links` hits, the two sections closest to
/// the query (by [`section_similarity`]) of every document its own section links to (within
/// the filters), with the hit's score and their own cosine. The list keeps `opts.limit` hits.
fn follow_links(
    vectors: &mut SectionVectors,
    snap: &Snapshot,
    query_vector: &[f32],
    allowed: &[bool],
    hits: Vec<Hit>,
    opts: &SearchOptions,
) -> Result<Vec<Hit>, SearchError> {
    // Without a snapshot's vectors, the linked documents' are fetched at once.
    let targets: Vec<i64> = hits
        .iter()
        .take(opts.follow_links)
        .flat_map(|hit| linked_documents(snap, hit, allowed))
        .map(|d| d.id)
        .collect();
    vectors.fetch_documents(&targets)?;
    let vectors = &*vectors;
    let mut out: Vec<Hit> = Vec::with_capacity(hits.len());
    let mut seen: std::collections::HashSet<i64> = hits.iter().map(|h| h.chunk_id).collect();
    for (rank, hit) in hits.into_iter().enumerate() {
        let mut followed = Vec::new();
        if rank < opts.follow_links {
            for target in linked_documents(snap, &hit, allowed) {
                // (closeness for ranking, cosine for the hit, chunk)
                let mut sections: Vec<(f32, f32, &ragdown_index::ChunkRecord)> = snap
                    .chunks_of(target.id)
                    .into_iter()
                    .filter_map(|c| {
                        vectors.chunk(c.id).map(|(c, v)| {
                            let closeness = section_similarity(vectors, c.id, v, query_vector);
                            (closeness, v.dot(query_vector), c)
                        })
                    })
                    .collect();
                sections.sort_by(|a, b| b.0.total_cmp(&a.0));
                for (_, similarity, chunk) in sections.into_iter().take(2) {
                    if seen.insert(chunk.id) {
                        followed.push(Hit {
                            chunk_id: chunk.id,
                            document: target.clone(),
                            heading: chunk.heading.clone(),
                            breadcrumb: chunk.breadcrumb.clone(),
                            text: chunk.text.clone(),
                            line_start: chunk.line_start,
                            line_end: chunk.line_end,
                            similarity,
                            score: hit.score,
                            coverage: 0.0,
                            rise: None,
                            sources: vec![Source::Link],
                        });
                    }
                }
            }
        }
        out.push(hit);
        out.extend(followed);
    }
    out.truncate(opts.limit);
    Ok(out)
}
