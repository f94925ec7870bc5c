//! Reading documents for the tools: a line range of one document (by path, link target or
//! alias), the documents linking to one, listings and a folder's statistics. Answers are plain
//! data ([`crate::answers`]); nothing here formats text or writes a file.

use std::collections::HashMap;
use std::fs;
use std::sync::Arc;

use ragdown_index::{DocumentRecord, Snapshot};

use super::files::{document_text, lines_of, read_existing};
use crate::answers::{
    Backlink, Backlinks, FileChunks, LastSyncShape, LinkLine, Listed, Listing, Progress, ReadDoc,
    Reindexed, Stats,
};
use crate::args::{ListArgs, ListSort, WrittenBy};
use crate::format::short_hash;
use crate::{Engine, ToolError, paths};

/// The documents (as this endpoint names them) that say in their front matter that they
/// supersede `path`, sorted.
pub fn superseded_by(engine: &Engine, path: &str) -> Vec<String> {
    let snap = engine.index.snapshot();
    let mut by: Vec<String> = snap
        .documents()
        .filter(|d| d.supersedes.iter().any(|s| s == path))
        .map(|d| engine.unscoped(&d.path).unwrap_or(&d.path).to_string())
        .collect();
    by.sort();
    by
}

/// Every superseded path (folder-relative) with the documents that supersede it, as
/// [`superseded_by`] gives them for one path.
fn superseders(engine: &Engine, snap: &Snapshot) -> HashMap<String, Vec<String>> {
    let mut by: HashMap<String, Vec<String>> = HashMap::new();
    for d in snap.documents() {
        let shown = engine.unscoped(&d.path).unwrap_or(&d.path);
        for old in &d.supersedes {
            by.entry(old.clone()).or_default().push(shown.to_string());
        }
    }
    for list in by.values_mut() {
        list.sort();
        list.dedup();
    }
    by
}

/// Which lines of a document to read.
#[derive(Debug, Clone, Copy, Default)]
pub struct LineRange {
    pub start_line: Option<usize>,
    pub end_line: Option<usize>,
    /// Whole sections to add before the section holding the first line.
    pub before: usize,
    /// Whole sections to add after the section holding the last line.
    pub after: usize,
}

/// Widens `start..=end` by whole sections: `before` sections before the one holding `start`,
/// `after` after the one holding `end`. A section runs from a heading to the next heading of
/// any level (the text before the first heading is a section too).
fn widen_by_sections(
    headings: &[ragdown_markdown::HeadingSpan],
    total: usize,
    (start, end): (usize, usize),
    before: usize,
    after: usize,
) -> (usize, usize) {
    let mut starts: Vec<usize> = std::iter::once(1)
        .chain(headings.iter().map(|h| h.line))
        .collect();
    starts.sort_unstable();
    starts.dedup();
    let section_of = |line: usize| starts.iter().rposition(|&s| s <= line).unwrap_or(0);
    let first = section_of(start).saturating_sub(before);
    let last = (section_of(end) + after).min(starts.len() - 1);
    let new_end = starts.get(last + 1).map_or(total, |&next| next - 1);
    (starts[first].min(start), new_end.max(end).min(total))
}

pub fn read_doc(engine: &Engine, input: &str, range: LineRange) -> Result<ReadDoc, ToolError> {
    let LineRange {
        start_line,
        end_line,
        before,
        after,
    } = range;
    let root = engine.root();
    let direct = paths::document(&root, input)
        .ok()
        .filter(|(rel, abs)| abs.is_file() && ragdown_index::walk::is_document_path(rel));
    let (rel, abs, heading, resolved_from) = match direct {
        Some((rel, abs)) => (rel, abs, None, None),
        None => {
            // Not a path: a wikilink target, `Note#Heading`, or an alias.
            let (target, heading) = match input.split_once('#') {
                Some((t, h)) => (
                    t.trim(),
                    Some(h.trim().to_string()).filter(|h| !h.is_empty()),
                ),
                None => (input.trim(), None),
            };
            let snap = engine.index.snapshot();
            // Links resolve in the whole folder; a target outside the scope is not found.
            let doc = if target.is_empty() {
                None
            } else {
                snap.resolve(target, None)
                    .filter(|d| engine.unscoped(&d.path).is_some())
                    .cloned()
            };
            let Some(doc) = doc else {
                paths::normalize(input)?;
                return Err(ToolError::not_found(format!(
                    "no such document: {input} (not a path, and no document by that name or alias)"
                )));
            };
            let in_scope = engine.unscoped(&doc.path).unwrap_or(&doc.path);
            let (rel, abs) = paths::document(&root, in_scope)?;
            (rel, abs, heading, Some(input.to_string()))
        }
    };
    // Read whole (and converted) in memory: past the indexing limit, refuse rather than
    // hold an arbitrary amount.
    let limit = engine.index.settings().max_file_bytes;
    if let Ok(meta) = fs::metadata(&abs)
        && meta.len() > limit
    {
        return Err(ToolError::invalid(format!(
            "{rel} is {} bytes, over the {limit}-byte limit for reading and indexing (RAGDOWN_MAX_FILE_BYTES): raise it, or split the document",
            meta.len()
        )));
    }
    let bytes = read_existing(&abs, &rel)?;
    let (text, converted_from) = document_text(&rel, &bytes);
    let lines = lines_of(&text);
    let total = lines.len();
    let parsed = ragdown_markdown::parse(&rel, &text);
    let mut section: Option<(usize, usize)> = None;
    if let Some(h) = &heading
        && start_line.is_none()
        && end_line.is_none()
    {
        section = parsed
            .headings
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(h))
            .map(|s| (s.line, s.end_line));
    }
    let start = start_line.or(section.map(|s| s.0)).unwrap_or(1).max(1);
    let end = end_line
        .or(section.map(|s| s.1))
        .unwrap_or(total)
        .min(total);
    if start > end {
        return Err(ToolError::invalid(format!(
            "{rel} has {total} lines: start_line {start} is past end_line {end}"
        )));
    }
    let (start, end) = if before > 0 || after > 0 {
        widen_by_sections(&parsed.headings, total, (start, end), before, after)
    } else {
        (start, end)
    };
    Ok(ReadDoc {
        superseded_by: superseded_by(engine, &engine.scoped(&rel)),
        path: rel,
        line_start: start,
        line_end: end,
        total_lines: total,
        hash: short_hash(&bytes),
        converted_from,
        resolved_from,
        text: lines[start - 1..end].join("\n"),
    })
}

/// The documents in this endpoint's view that link to `input` (a path or link target), with
/// the lines their links are on.
pub fn backlinks(engine: &Engine, input: &str) -> Result<Backlinks, ToolError> {
    let rel = engine.scoped(&paths::normalize(input)?);
    let snap = engine.index.snapshot();
    let target = snap
        .document_by_path(&rel)
        .or_else(|| snap.resolve(&rel, None))
        .filter(|d| engine.unscoped(&d.path).is_some())
        .cloned()
        .ok_or_else(|| ToolError::not_found(format!("not an indexed document: {input}")))?;
    let mut sources: Vec<&Arc<DocumentRecord>> = snap
        .documents()
        .filter(|d| d.id != target.id && engine.unscoped(&d.path).is_some())
        .collect();
    sources.sort_by(|a, b| a.path.cmp(&b.path));
    let mut out = Vec::new();
    for doc in sources {
        let mut lines: Vec<u32> = doc
            .links
            .iter()
            .filter(|l| {
                let resolved = if l.kind == "markdown" {
                    ragdown_markdown::links::join_relative(&doc.path, &l.target)
                        .and_then(|p| snap.document_by_path(&p).map(|d| d.id))
                } else {
                    snap.resolve(&l.target, Some(&doc.path)).map(|d| d.id)
                };
                resolved == Some(target.id)
            })
            .map(|l| l.line)
            .collect();
        lines.dedup();
        if lines.is_empty() {
            continue;
        }
        let text = fs::read(engine.folder_root().join(&doc.path))
            .map(|bytes| document_text(&doc.path, &bytes).0)
            .unwrap_or_default();
        let file_lines = lines_of(&text);
        let lines: Vec<LinkLine> = lines
            .iter()
            .map(|&n| {
                let t = file_lines.get(n as usize - 1).map_or("", |l| l.trim());
                let t = if t.chars().count() > 240 {
                    format!("{}…", t.chars().take(239).collect::<String>())
                } else {
                    t.to_string()
                };
                LinkLine { line: n, text: t }
            })
            .collect();
        let shown = engine.unscoped(&doc.path).unwrap_or(&doc.path);
        out.push(Backlink {
            path: shown.to_string(),
            title: doc.title.clone(),
            lines,
        });
    }
    let shown = engine.unscoped(&target.path).unwrap_or(&target.path);
    Ok(Backlinks {
        path: shown.to_string(),
        backlinks: out,
    })
}

/// The documents matching `args`, by path or most recently changed first; all of them when
/// `args.limit` is `None` (the tool always passes one).
pub fn list(engine: &Engine, args: &ListArgs) -> Result<Listing, ToolError> {
    let prefix = match &args.path_prefix {
        Some(p) => {
            let n = paths::normalize(p).map_err(|_| {
                ToolError::invalid(format!("path_prefix is outside the docs folder: {p}"))
            })?;
            (!n.is_empty()).then_some(n)
        }
        None => None,
    };
    let prefix = engine.scoped_prefix(prefix).map(|p| format!("{p}/"));
    let tag = args
        .tag
        .as_deref()
        .and_then(ragdown_markdown::tags::normalize);
    let snap = engine.index.snapshot();
    let mut docs: Vec<&Arc<DocumentRecord>> = snap
        .documents()
        .filter(|d| {
            prefix
                .as_ref()
                .is_none_or(|p| d.path.starts_with(p.as_str()))
        })
        .filter(|d| {
            tag.as_ref()
                .is_none_or(|t| ragdown_markdown::tags::matches(&d.tags, t))
        })
        .filter(|d| match args.written_by {
            None => true,
            Some(WrittenBy::Agent) => d.created_by.is_some(),
            Some(WrittenBy::User) => d.created_by.is_none(),
        })
        .filter(|d| {
            args.session_id
                .as_ref()
                .is_none_or(|s| d.session.as_ref() == Some(s))
        })
        .collect();
    if matches!(args.sort, ListSort::Recent) {
        docs.sort_by(|a, b| b.mtime_ns.cmp(&a.mtime_ns).then(a.path.cmp(&b.path)));
    } else {
        docs.sort_by(|a, b| a.path.cmp(&b.path));
    }
    let total = docs.len();
    // Who supersedes whom, read once for the whole listing rather than once per document.
    let mut superseders = superseders(engine, &snap);
    let documents = docs
        .into_iter()
        .take(args.limit.map_or(usize::MAX, |l| l.max(1)))
        .map(|d| {
            let by = superseders.remove(&d.path).unwrap_or_default();
            listed_as(engine, &snap, d, by)
        })
        .collect();
    Ok(Listing { total, documents })
}

/// One indexed document as listings show it (paths as this endpoint names them).
pub fn listed(engine: &Engine, snap: &Snapshot, d: &DocumentRecord) -> Listed {
    listed_as(engine, snap, d, superseded_by(engine, &d.path))
}

/// [`listed`] with the documents superseding it already known.
fn listed_as(
    engine: &Engine,
    snap: &Snapshot,
    d: &DocumentRecord,
    superseded_by: Vec<String>,
) -> Listed {
    Listed {
        folder: None,
        path: engine.unscoped(&d.path).unwrap_or(&d.path).to_string(),
        title: d.title.clone(),
        description: d.description.clone(),
        tags: d.tags.clone(),
        aliases: d.aliases.clone(),
        created_by: d.created_by.clone(),
        session: d.session.clone(),
        superseded_by,
        mtime_ns: d.mtime_ns,
        size: d.size,
        chunks: snap.chunks_of(d.id).len(),
    }
}

/// How searches answer with `embedder`, as stats and status say it.
pub fn search_kind(embedder: &dyn ragdown_embed::Embedder) -> String {
    match embedder.unavailable() {
        None => "hybrid (semantic + keyword)".to_string(),
        Some(why) => format!(
            "keyword (BM25) only: the embedding model could not load ({why}); fix it and restart ragdown"
        ),
    }
}

/// This endpoint's statistics: what is indexed, by which model, and how the syncs go.
pub fn stats(engine: &Engine, include_files: bool) -> Result<Stats, ToolError> {
    use std::sync::atomic::Ordering;
    let snap = engine.index.snapshot();
    let status = engine.index.status();
    let last = engine.last_sync.lock().ok().and_then(|l| l.clone());
    // Only what lies inside the scope (the whole folder on its own endpoint).
    let mut files: Vec<FileChunks> = snap
        .documents()
        .filter_map(|d| {
            let shown = engine.unscoped(&d.path)?;
            Some(FileChunks {
                path: shown.to_string(),
                chunks: snap.chunks_of(d.id).len(),
            })
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Stats {
        folder: engine.name.clone(),
        scope: (!engine.scope.is_empty()).then(|| engine.scope.clone()),
        files: files.len(),
        chunks: files.iter().map(|f| f.chunks).sum(),
        embedder: engine.index.embedder().id().to_string(),
        search: search_kind(engine.index.embedder().as_ref()),
        role: if engine.is_primary() {
            "primary"
        } else {
            "reader"
        },
        read_only: engine.settings().read_only,
        syncing: engine
            .is_primary()
            .then(|| status.syncing.load(Ordering::Relaxed)),
        progress: Progress {
            files_done: status.files_done.load(Ordering::Relaxed),
            files_total: status.files_total.load(Ordering::Relaxed),
        },
        last_sync: last.map(|l| LastSyncShape {
            counts: Reindexed::from(&l.report),
            at: crate::format::iso(
                l.at.duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as i64),
            ),
        }),
        file_list: include_files.then_some(files),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_by_whole_sections() {
        let text = "intro\n# A\na1\n## B\nb1\nb2\n# C\nc1\n";
        let doc = ragdown_markdown::parse("x.md", text);
        let total = lines_of(text).len();
        // Line 5 is in B (lines 4-6).
        assert_eq!(
            widen_by_sections(&doc.headings, total, (5, 5), 0, 0),
            (4, 6)
        );
        assert_eq!(
            widen_by_sections(&doc.headings, total, (5, 5), 1, 0),
            (2, 6)
        );
        assert_eq!(
            widen_by_sections(&doc.headings, total, (5, 5), 0, 1),
            (4, total)
        );
        assert_eq!(
            widen_by_sections(&doc.headings, total, (5, 5), 9, 9),
            (1, total)
        );
    }
}
