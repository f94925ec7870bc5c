//! Reading and changing documents on disk for the tools: read_doc, backlinks, list, stats,
//! remember, write, edit, move, delete, reindex. Every path goes through [`crate::paths`];
//! every write is atomic (a temporary dot-file renamed into place, or an exclusive create) and
//! is indexed before the tool returns.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use ragdown_index::DocumentRecord;
use serde_json::json;

use crate::format::{day, full_hash, short_hash};
use crate::{Engine, ToolError, paths};

fn io_error(path: &str, e: std::io::Error) -> ToolError {
    ToolError::internal(format!("{path}: {e}"))
}

/// Replaces `abs` with `bytes` atomically: a temporary dot-file beside it, renamed over it.
pub fn atomic_write(abs: &Path, rel: &str, bytes: &[u8]) -> Result<(), ToolError> {
    let dir = abs
        .parent()
        .ok_or_else(|| ToolError::invalid(format!("{rel} has no folder")))?;
    let tmp = dir.join(ragdown_index::walk::temp_file_name(
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    ));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, abs)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(|e| io_error(rel, e))
}

/// Removes the temporary files writers killed mid-write left behind (their documents are
/// whole: the rename never happened). A file is a leftover when its writer is no longer
/// running, or, where that cannot be told, when it is over a minute old (a write takes
/// milliseconds). Returns how many were removed.
pub fn remove_leftover_temp_files(root: &Path) -> usize {
    let mut removed = 0;
    for (path, pid, age) in ragdown_index::walk::temp_files(root) {
        let writer_gone = if cfg!(target_os = "linux") {
            pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
        } else {
            false
        };
        if (writer_gone || age > std::time::Duration::from_secs(60))
            && fs::remove_file(&path).is_ok()
        {
            tracing::info!(
                "removed {}, left by a write that was interrupted",
                path.display()
            );
            removed += 1;
        }
    }
    removed
}

/// The write lock of one document, held from reading its current bytes until the new ones are
/// renamed into place, so a check (its `base_hash`, an edit's `old_text`) and the write that
/// follows are one critical section. It is an advisory lock (`flock`) on the document file
/// itself: every open file description conflicts with every other, so it orders threads of one
/// process and separate processes (two `ragdown stdio`, a CLI `delete`) alike. Dropping it
/// unlocks.
pub struct DocumentLock {
    _file: Option<fs::File>,
}

/// Locks the document at `abs` and reads it: `None` when there is no such file (a creator then
/// relies on [`create_new`]'s exclusive create instead). A writer that renamed a new version in
/// while this one waited leaves the lock on the old, unlinked file; that is detected (the path
/// names another file now) and the lock is taken again on the current one, so a waiting
/// writer always checks against what is on disk at the moment it writes.
pub fn lock_document(abs: &Path, rel: &str) -> Result<(DocumentLock, Option<Vec<u8>>), ToolError> {
    use std::io::Read;
    loop {
        let mut file = match fs::File::open(abs) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((DocumentLock { _file: None }, None));
            }
            Err(e) => return Err(io_error(rel, e)),
        };
        file.lock().map_err(|e| io_error(rel, e))?;
        let held = file.metadata().map_err(|e| io_error(rel, e))?;
        match fs::metadata(abs) {
            Ok(now) if same_file(&held, &now) => {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes).map_err(|e| io_error(rel, e))?;
                return Ok((DocumentLock { _file: Some(file) }, Some(bytes)));
            }
            // Replaced or removed while this writer waited: look again.
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((DocumentLock { _file: None }, None));
            }
            Err(e) => return Err(io_error(rel, e)),
        }
    }
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    // Windows refuses to rename over an open file, so the file locked is still the one named.
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// Creates `abs` with `bytes`, failing if it exists (never overwrites).
pub fn create_new(abs: &Path, rel: &str, bytes: &[u8]) -> Result<bool, ToolError> {
    if let Some(dir) = abs.parent() {
        fs::create_dir_all(dir).map_err(|e| io_error(rel, e))?;
    }
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(abs)
    {
        Ok(mut f) => {
            f.write_all(bytes).map_err(|e| io_error(rel, e))?;
            f.sync_all().map_err(|e| io_error(rel, e))?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io_error(rel, e)),
    }
}

/// A `base_hash` names this version when it has 12+ hex digits and prefixes the full hash.
pub fn is_version(full: &str, base: &str) -> bool {
    let base = base.trim().to_lowercase();
    base.len() >= 12 && full.starts_with(&base)
}

fn lines_of(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

fn read_existing(abs: &Path, rel: &str) -> Result<Vec<u8>, ToolError> {
    match fs::read(abs) {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(ToolError::not_found(format!("no such document: {rel}")))
        }
        Err(e) => Err(io_error(rel, e)),
    }
}

/// Locks an existing document and reads it ([`lock_document`]); a missing one is not found.
fn lock_existing(abs: &Path, rel: &str) -> Result<(DocumentLock, Vec<u8>), ToolError> {
    match lock_document(abs, rel)? {
        (lock, Some(bytes)) => Ok((lock, bytes)),
        (_, None) => Err(ToolError::not_found(format!("no such document: {rel}"))),
    }
}

/// A document's text as indexed: Markdown as it is, other formats converted (the same bytes
/// always convert to the same text, so hits' line numbers hold). The second value names the
/// format a converted text came from.
pub fn document_text(rel: &str, bytes: &[u8]) -> (String, Option<&'static str>) {
    match ragdown_convert::Format::from_path(rel) {
        None => (String::from_utf8_lossy(bytes).into_owned(), None),
        Some(format) => (converted_text(format, bytes), Some(format.name())),
    }
}

/// How many converted texts are kept: an agent reads one long PDF in several line ranges, and a
/// large PDF takes seconds to convert.
const CONVERTED_KEPT: usize = 8;

/// Converted texts by the BLAKE3 of their bytes, most recent last. Keyed by content, an entry
/// can never be stale.
static CONVERTED: Mutex<Vec<([u8; 32], String)>> = Mutex::new(Vec::new());

/// The Markdown of a converted document (or a line saying why it could not be converted),
/// converting each distinct content once while it stays among the last [`CONVERTED_KEPT`].
fn converted_text(format: ragdown_convert::Format, bytes: &[u8]) -> String {
    let key = *blake3::hash(bytes).as_bytes();
    let cached = |kept: &mut Vec<([u8; 32], String)>| {
        let at = kept.iter().position(|(k, _)| *k == key)?;
        let entry = kept.remove(at);
        let text = entry.1.clone();
        kept.push(entry);
        Some(text)
    };
    if let Some(text) = CONVERTED.lock().ok().as_deref_mut().and_then(cached) {
        return text;
    }
    match ragdown_convert::convert(format, bytes) {
        Ok(text) => {
            if let Ok(mut kept) = CONVERTED.lock() {
                if kept.len() >= CONVERTED_KEPT {
                    kept.remove(0);
                }
                kept.push((key, text.clone()));
            }
            text
        }
        // Failures are not kept: a timeout may pass on a quieter machine.
        Err(e) => format!("(this {} could not be converted: {e})", format.name()),
    }
}

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

// ---------------------------------------------------------------- read_doc

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

pub fn read_doc(engine: &Engine, input: &str, range: LineRange) -> Result<String, ToolError> {
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
    let mut header = format!(
        "{rel}:{start}-{end} of {total} (hash {}",
        short_hash(&bytes)
    );
    if let Some(format) = converted_from {
        header.push_str(&format!(
            ", converted from {format} for search: lines are the converted text's; read-only"
        ));
    }
    if let Some(from) = resolved_from {
        header.push_str(&format!(
            ", resolved from {}",
            serde_json::to_string(&from).unwrap_or_default()
        ));
    }
    let by = superseded_by(engine, &engine.scoped(&rel));
    if !by.is_empty() {
        header.push_str(&format!(", superseded by {}", by.join(", ")));
    }
    header.push(')');
    Ok(format!("{header}\n{}", lines[start - 1..end].join("\n")))
}

// ---------------------------------------------------------------- backlinks, list, stats

pub fn backlinks(engine: &Engine, input: &str) -> Result<String, ToolError> {
    let rel = engine.scoped(&paths::normalize(input)?);
    let snap = engine.index.snapshot();
    let target = snap
        .document_by_path(&rel)
        .or_else(|| snap.resolve(&rel, None))
        .filter(|d| engine.unscoped(&d.path).is_some())
        .cloned()
        .ok_or_else(|| ToolError::not_found(format!("not an indexed document: {input}")))?;
    let mut sources: Vec<&std::sync::Arc<DocumentRecord>> = snap
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
        let lines: Vec<serde_json::Value> = lines
            .iter()
            .map(|&n| {
                let t = file_lines.get(n as usize - 1).map_or("", |l| l.trim());
                let t = if t.chars().count() > 240 {
                    format!("{}…", t.chars().take(239).collect::<String>())
                } else {
                    t.to_string()
                };
                json!({"line": n, "text": t})
            })
            .collect();
        let shown = engine.unscoped(&doc.path).unwrap_or(&doc.path);
        out.push(json!({"path": shown, "title": doc.title, "lines": lines}));
    }
    let shown = engine.unscoped(&target.path).unwrap_or(&target.path);
    Ok(json!({"path": shown, "backlinks": out}).to_string())
}

pub struct ListArgs {
    pub path_prefix: Option<String>,
    pub tag: Option<String>,
    pub written_by: Option<ragdown_search::WrittenBy>,
    pub session_id: Option<String>,
    pub recent: bool,
    pub limit: usize,
}

pub fn list(engine: &Engine, args: &ListArgs) -> Result<String, ToolError> {
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
    let mut docs: Vec<&std::sync::Arc<DocumentRecord>> = snap
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
            Some(ragdown_search::WrittenBy::Agent) => d.created_by.is_some(),
            Some(ragdown_search::WrittenBy::User) => d.created_by.is_none(),
        })
        .filter(|d| {
            args.session_id
                .as_ref()
                .is_none_or(|s| d.session.as_ref() == Some(s))
        })
        .collect();
    if docs.is_empty() {
        return Ok("No documents.".into());
    }
    if args.recent {
        docs.sort_by(|a, b| b.mtime_ns.cmp(&a.mtime_ns).then(a.path.cmp(&b.path)));
    } else {
        docs.sort_by(|a, b| a.path.cmp(&b.path));
    }
    let total = docs.len();
    let shown = total.min(args.limit.max(1));
    let mut out = vec![if shown < total {
        format!("documents: {shown} of {total}")
    } else {
        format!("documents: {total}")
    }];
    for d in docs.into_iter().take(shown) {
        let mut line = format!(
            "{} — {}{}",
            crate::format::escaped(engine.unscoped(&d.path).unwrap_or(&d.path)),
            d.title,
            crate::format::tag_list(&d.tags)
        );
        line.push_str(&format!(" (changed {}", day(d.mtime_ns)));
        if let Some(by) = &d.created_by {
            line.push_str(&format!(", written by an agent with {by}"));
        }
        if let Some(s) = &d.session {
            line.push_str(&format!(", session {s}"));
        }
        if !d.aliases.is_empty() {
            line.push_str(&format!(", aliases {}", d.aliases.join(", ")));
        }
        let by = superseded_by(engine, &d.path);
        if !by.is_empty() {
            line.push_str(&format!(", superseded by {}", by.join(", ")));
        }
        line.push(')');
        if let Some(desc) = &d.description {
            line.push_str(&format!(": {desc}"));
        }
        out.push(line);
    }
    Ok(out.join("\n"))
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

pub fn stats(engine: &Engine, include_files: bool) -> Result<String, ToolError> {
    use std::sync::atomic::Ordering;
    let snap = engine.index.snapshot();
    let status = engine.index.status();
    let last = engine.last_sync.lock().ok().and_then(|l| l.clone());
    // Only what lies inside the scope (the whole folder on its own endpoint).
    let mut files: Vec<(String, usize)> = snap
        .documents()
        .filter_map(|d| {
            let shown = engine.unscoped(&d.path)?;
            Some((shown.to_string(), snap.chunks_of(d.id).len()))
        })
        .collect();
    let mut value = json!({
        "folder": engine.name,
        "files": files.len(),
        "chunks": files.iter().map(|(_, c)| c).sum::<usize>(),
        "embedder": engine.index.embedder().id(),
        "search": search_kind(engine.index.embedder().as_ref()),
        "role": if engine.is_primary() { "primary" } else { "reader" },
        "read_only": engine.settings().read_only,
        "syncing": engine.is_primary().then(|| status.syncing.load(Ordering::Relaxed)),
        "progress": {
            "files_done": status.files_done.load(Ordering::Relaxed),
            "files_total": status.files_total.load(Ordering::Relaxed),
        },
        "last_sync": last.map(|l| json!({
            "added": l.report.added,
            "updated": l.report.updated,
            "removed": l.report.removed,
            "unchanged": l.report.unchanged,
            "chunks": l.report.embedded,
            "ms": l.report.elapsed.as_millis() as u64,
            "at": crate::format::iso(
                l.at.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
            ),
        })),
    });
    if !engine.scope.is_empty() {
        value["scope"] = json!(engine.scope);
    }
    if include_files {
        files.sort();
        value["file_list"] = json!(
            files
                .into_iter()
                .map(|(p, c)| json!({"path": p, "chunks": c}))
                .collect::<Vec<_>>()
        );
    }
    Ok(value.to_string())
}

// ---------------------------------------------------------------- ingest

/// What a client fetched, to keep as a document.
pub struct IngestArgs {
    pub content: String,
    /// `text`, `markdown` or `html`.
    pub format: String,
    /// Where it came from (a URL, a file name); one document per source.
    pub source: String,
    pub title: Option<String>,
}

/// Where ingested documents go: `<notes dir>/ingested/` on a folder's endpoint, `ingested/`
/// inside a subfolder endpoint's subfolder.
fn ingest_dir(engine: &Engine) -> Result<String, ToolError> {
    let notes = if engine.scope.is_empty() {
        paths::normalize(&engine.settings().notes_dir)?
    } else {
        String::new()
    };
    Ok(if notes.is_empty() {
        "ingested".into()
    } else {
        format!("{notes}/ingested")
    })
}

/// Stores client-fetched content as Markdown under `ingested/`, named by its source so the
/// same source again replaces it.
pub fn ingest(engine: &Engine, args: &IngestArgs) -> Result<String, ToolError> {
    use sha2::{Digest, Sha256};
    let source = args.source.trim();
    if source.is_empty() || args.content.trim().is_empty() {
        return Err(ToolError::invalid("content and source must not be empty"));
    }
    let body = match args.format.as_str() {
        "markdown" | "md" => args.content.clone(),
        "text" | "txt" => {
            ragdown_convert::convert(ragdown_convert::Format::Text, args.content.as_bytes())
                .map_err(|e| ToolError::invalid(format!("the text could not be kept: {e}")))?
        }
        "html" => ragdown_convert::convert(ragdown_convert::Format::Html, args.content.as_bytes())
            .map_err(|e| ToolError::invalid(format!("the HTML could not be converted: {e}")))?,
        other => {
            return Err(ToolError::invalid(format!(
                "format {other:?} is not one ragdown ingests: use text, markdown or html"
            )));
        }
    };
    // The title: given, else the content's first heading, else the source.
    let first_heading = body
        .lines()
        .find(|l| l.starts_with("# "))
        .map(|l| l.trim_start_matches('#').trim().to_string());
    let title = args
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or(first_heading)
        .unwrap_or_else(|| source.to_string());
    let digest = Sha256::digest(source.as_bytes());
    let key: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let rel = format!("{}/{}-{key}.md", ingest_dir(engine)?, slug(source));
    paths::check_indexed_segments(&rel)?;
    let abs = paths::inside(&engine.root(), &rel)?;
    let front = [
        "---".to_string(),
        format!("title: {}", quoted(title.trim())),
        format!("source: {}", quoted(source)),
        format!("ingested: {}", today()),
        "created_by: ragdown_ingest".to_string(),
        "---".to_string(),
    ]
    .join("\n");
    let text = format!("{front}\n{}\n", body.trim_end());
    let replaced = abs.is_file();
    if let Some(dir) = abs.parent() {
        fs::create_dir_all(dir).map_err(|e| io_error(&rel, e))?;
    }
    atomic_write(&abs, &rel, text.as_bytes())?;
    engine.sync_paths(&[engine.scoped(&rel)])?;
    let verb = if replaced { "replaced" } else { "ingested" };
    Ok(format!(
        "{verb} {rel} ({} lines) from {source}",
        text.lines().count()
    ))
}

// ---------------------------------------------------------------- remember

pub struct RememberArgs {
    pub title: String,
    pub content: String,
    pub tags: Vec<String>,
    pub name: Option<String>,
    pub supersedes: Vec<String>,
    pub session_id: Option<String>,
}

/// Lowercase, every run of non-alphanumerics → `-`, trimmed, at most 60 characters.
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.to_lowercase().chars() {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed: String = out.trim_matches('-').chars().take(60).collect();
    let trimmed = trimmed.trim_end_matches('-').to_string();
    if trimmed.is_empty() {
        "note".into()
    } else {
        trimmed
    }
}

fn today() -> String {
    day(std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64))
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

pub fn remember(engine: &Engine, args: &RememberArgs) -> Result<String, ToolError> {
    if args.title.trim().is_empty() || args.content.trim().is_empty() {
        return Err(ToolError::invalid("title and content must not be empty"));
    }
    let root = engine.root();
    let notes = if engine.scope.is_empty() {
        paths::normalize(&engine.settings().notes_dir)?
    } else {
        String::new()
    };
    let snap = engine.index.snapshot();
    // Check every supersedes path before anything is written.
    let mut replaced = Vec::new();
    for s in &args.supersedes {
        let rel = paths::normalize(s).map_err(|_| {
            ToolError::invalid(format!("supersedes is outside the documents folder: {s}"))
        })?;
        if snap.document_by_path(&engine.scoped(&rel)).is_none() || !root.join(&rel).is_file() {
            return Err(ToolError::not_found(format!(
                "supersedes names no document in this folder: {s} (use the path ragdown_list or ragdown_recall shows)"
            )));
        }
        replaced.push(rel);
    }
    let base = match &args.name {
        Some(n) => {
            let n = n.trim().trim_end_matches(".md");
            let joined = if notes.is_empty() {
                n.to_string()
            } else {
                format!("{notes}/{n}")
            };
            let rel = paths::normalize(&joined).map_err(|_| {
                ToolError::invalid(format!("document name escapes the documents folder: {n}"))
            })?;
            if !rel.starts_with(&format!("{notes}/")) && !notes.is_empty() {
                return Err(ToolError::invalid(format!(
                    "document name escapes the documents folder: {n}"
                )));
            }
            rel
        }
        None => {
            let prefix = if notes.is_empty() {
                String::new()
            } else {
                format!("{notes}/")
            };
            format!("{prefix}{}-{}", today(), slug(&args.title))
        }
    };
    paths::check_indexed_segments(&base)?;
    let note_dir = base.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let relative_to_note = |target: &str| -> String {
        let from_parts: Vec<&str> = note_dir.split('/').filter(|p| !p.is_empty()).collect();
        let to_parts: Vec<&str> = target.split('/').collect();
        let common = from_parts
            .iter()
            .zip(&to_parts)
            .take_while(|(a, b)| a == b)
            .count();
        let mut parts: Vec<String> = vec!["..".into(); from_parts.len() - common];
        parts.extend(to_parts[common..].iter().map(|s| s.to_string()));
        parts.join("/")
    };
    let mut front = vec![
        "---".to_string(),
        format!("title: {}", quoted(args.title.trim())),
        format!("date: {}", today()),
    ];
    if !args.tags.is_empty() {
        front.push(format!(
            "tags: [{}]",
            args.tags
                .iter()
                .map(|t| quoted(t.trim().trim_start_matches('#')))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !replaced.is_empty() {
        front.push(format!(
            "supersedes: [{}]",
            replaced
                .iter()
                .map(|r| quoted(&relative_to_note(r)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    front.push("created_by: ragdown_remember".into());
    if let Some(s) = args.session_id.as_deref().filter(|s| !s.trim().is_empty()) {
        front.push(format!("session: {}", quoted(s)));
    }
    front.push("---".into());
    let text = format!("{}\n{}\n", front.join("\n"), args.content.trim_end());
    let mut n = 1;
    let rel = loop {
        let candidate = if n == 1 {
            format!("{base}.md")
        } else {
            format!("{base}-{n}.md")
        };
        let abs = paths::inside(&root, &candidate)?;
        if create_new(&abs, &candidate, text.as_bytes())? {
            break candidate;
        }
        n += 1;
    };
    engine.sync_paths(&[engine.scoped(&rel)])?;
    Ok(if replaced.is_empty() {
        format!("saved {rel}")
    } else {
        format!("saved {rel} (supersedes {})", replaced.join(", "))
    })
}

// ---------------------------------------------------------------- write

pub struct WriteArgs {
    pub path: String,
    pub text: String,
    pub base_hash: Option<String>,
    pub append: bool,
    pub heading: Option<String>,
    pub session_id: Option<String>,
}

/// Uses CRLF throughout when `like` does.
pub fn match_line_endings(text: &str, like: &str) -> String {
    if like.contains("\r\n") {
        text.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        text.to_string()
    }
}

/// Adds `created_by` (and `session`) to a document's frontmatter unless it has one.
fn stamp(text: &str, created_by: &str, session: Option<&str>) -> String {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut lines: Vec<String> = vec![format!("created_by: {created_by}")];
    if let Some(s) = session.filter(|s| !s.is_empty()) {
        lines.push(format!("session: {}", quoted(s)));
    }
    let all: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if let Some(span) = ragdown_markdown::frontmatter::find_span(&all) {
        if all[1..span.closing_line]
            .iter()
            .any(|l| l.starts_with("created_by:"))
        {
            return text.to_string();
        }
        let mut out: Vec<String> = all[..span.closing_line]
            .iter()
            .map(|s| s.to_string())
            .collect();
        out.extend(lines);
        out.extend(all[span.closing_line..].iter().map(|s| s.to_string()));
        return out.join(newline);
    }
    format!(
        "---{newline}{}{newline}---{newline}{text}",
        lines.join(newline)
    )
}

fn check_base_hash(rel: &str, bytes: &[u8], base: Option<&str>) -> Result<(), ToolError> {
    if let Some(base) = base
        && !is_version(&full_hash(bytes), base)
    {
        return Err(ToolError::conflict(format!(
            "{rel} was changed on disk since it was opened (base_hash {base} is not its hash {}): read it again with ragdown_read_doc",
            short_hash(bytes)
        )));
    }
    Ok(())
}

pub fn write(engine: &Engine, args: &WriteArgs) -> Result<String, ToolError> {
    if args.text.is_empty() {
        return Err(ToolError::invalid("text must not be empty"));
    }
    if args.heading.is_some() && !args.append {
        return Err(ToolError::invalid("heading is for append: true"));
    }
    let (rel, abs) = paths::document(&engine.root(), &args.path)?;
    paths::check_markdown(&rel)?;
    let (lock, existing) = lock_document(&abs, &rel)?;
    let (new_text, created) = match (existing, args.append) {
        (None, true) => {
            return Err(ToolError::not_found(format!(
                "no such document: {rel} (append needs an existing document; leave append out to create it)"
            )));
        }
        (None, false) => (
            stamp(&args.text, "ragdown_write", args.session_id.as_deref()),
            true,
        ),
        (Some(bytes), false) => {
            let Some(base) = args.base_hash.as_deref() else {
                return Err(ToolError::conflict(format!(
                    "{rel} exists: pass the hash ragdown_read_doc returned as base_hash to replace it"
                )));
            };
            check_base_hash(&rel, &bytes, Some(base))?;
            let old = String::from_utf8_lossy(&bytes).into_owned();
            let old_doc = ragdown_markdown::parse(&rel, &old);
            let mut text = match_line_endings(&args.text, &old);
            if let Some(by) = &old_doc.meta.created_by {
                text = stamp(&text, by, old_doc.meta.session.as_deref());
            }
            (text, false)
        }
        (Some(bytes), true) => {
            check_base_hash(&rel, &bytes, args.base_hash.as_deref())?;
            let old = String::from_utf8_lossy(&bytes).into_owned();
            (
                append_text(&rel, &old, &args.text, args.heading.as_deref())?,
                false,
            )
        }
    };
    if created {
        if !create_new(&abs, &rel, new_text.as_bytes())? {
            return Err(ToolError::conflict(format!(
                "{rel} was created meanwhile: read it and pass its base_hash"
            )));
        }
    } else {
        atomic_write(&abs, &rel, new_text.as_bytes())?;
    }
    drop(lock);
    engine.sync_paths(&[engine.scoped(&rel)])?;
    let hash = short_hash(new_text.as_bytes());
    Ok(if created {
        format!("created {rel} (hash {hash})")
    } else {
        format!("wrote {rel} (hash {hash})")
    })
}

fn append_text(
    rel: &str,
    old: &str,
    addition: &str,
    heading: Option<&str>,
) -> Result<String, ToolError> {
    let newline = if old.contains("\r\n") { "\r\n" } else { "\n" };
    let lines: Vec<&str> = old
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut insert_at = lines.len();
    if let Some(h) = heading {
        let wanted = h.rsplit('#').next().unwrap_or(h).trim();
        let doc = ragdown_markdown::parse(rel, old);
        let span = doc
            .headings
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(wanted))
            .ok_or_else(|| ToolError::not_found(format!("no heading \"{h}\" in {rel}")))?;
        insert_at = span.end_line;
    }
    // Skip trailing blank lines of the range.
    let mut end = insert_at;
    while end > 0 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let mut out: Vec<String> = lines[..end].iter().map(|s| s.to_string()).collect();
    if end > 0 {
        out.push(String::new());
    }
    out.extend(
        addition
            .trim_end()
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string()),
    );
    out.push(String::new());
    let rest: Vec<String> = lines[insert_at..].iter().map(|s| s.to_string()).collect();
    let rest_is_blank = rest.iter().all(|l| l.trim().is_empty());
    if !rest_is_blank {
        out.extend(rest);
    }
    Ok(out.join(newline))
}

// ---------------------------------------------------------------- edit

pub struct Edit {
    pub old_text: String,
    pub new_text: String,
    pub replace_all: bool,
}

fn nearest_passage(text: &str, old: &str) -> Option<(usize, usize, String)> {
    let words: Vec<String> = old.split_whitespace().map(regex_escape).collect();
    if !words.is_empty() {
        let pattern = words.join(r"\s+");
        if let Ok(re) = regex::Regex::new(&pattern)
            && let Some(m) = re.find(text)
        {
            let start = text[..m.start()].matches('\n').count() + 1;
            let end = start + m.as_str().matches('\n').count();
            return Some((start, end, m.as_str().to_string()));
        }
    }
    let first = old.lines().next()?.trim();
    let lines: Vec<&str> = text.split('\n').collect();
    let count = old.lines().count().max(1);
    let i = lines
        .iter()
        .position(|l| l.trim() == first && !first.is_empty())?;
    let end = (i + count).min(lines.len());
    Some((i + 1, end, lines[i..end].join("\n")))
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub fn edit(
    engine: &Engine,
    path: &str,
    edits: &[Edit],
    base_hash: Option<&str>,
) -> Result<String, ToolError> {
    if edits.is_empty() {
        return Err(ToolError::invalid("edits must hold at least one edit"));
    }
    let (rel, abs) = paths::document(&engine.root(), path)?;
    paths::check_markdown(&rel)?;
    let (lock, bytes) = lock_existing(&abs, &rel)?;
    check_base_hash(&rel, &bytes, base_hash)?;
    let original = String::from_utf8_lossy(&bytes).into_owned();
    let crlf = original.contains("\r\n");
    let mut text = original.replace("\r\n", "\n");
    let n = edits.len();
    let mut replaced = 0usize;
    for (i, e) in edits.iter().enumerate() {
        let i = i + 1;
        let old = e.old_text.replace("\r\n", "\n");
        let new = e.new_text.replace("\r\n", "\n");
        if old.is_empty() {
            return Err(ToolError::invalid(format!(
                "edit {i} of {n}: old_text is empty, so nothing was written"
            )));
        }
        if old == new {
            return Err(ToolError::invalid(format!(
                "edit {i} of {n}: old_text and new_text are the same, so nothing was written"
            )));
        }
        let count = text.matches(old.as_str()).count();
        if count == 0 {
            let hint = match nearest_passage(&text, &old) {
                Some((a, b, passage)) if i == 1 => format!("The nearest passage (lines {a}-{b}) follows; copy old_text from it exactly:\n{passage}"),
                Some((_, _, passage)) => format!("The nearest passage follows; copy old_text from it exactly:\n{passage}"),
                None => "It must match character for character, whitespace included: read the document again and copy the passage from it".into(),
            };
            return Err(ToolError::not_found(format!(
                "edit {i} of {n}: old_text is not in the document, so nothing was written. {hint}"
            )));
        }
        if count > 1 && !e.replace_all {
            return Err(ToolError::conflict(format!(
                "edit {i} of {n}: old_text is in the document {count} times, so nothing was written. Add the text around the one you mean until it matches once, or pass replace_all: true"
            )));
        }
        text = if e.replace_all {
            text.replace(old.as_str(), &new)
        } else {
            text.replacen(old.as_str(), &new, 1)
        };
        replaced += if e.replace_all { count } else { 1 };
    }
    if crlf {
        text = text.replace('\n', "\r\n");
    }
    atomic_write(&abs, &rel, text.as_bytes())?;
    drop(lock);
    engine.sync_paths(&[engine.scoped(&rel)])?;
    Ok(format!(
        "edited {rel} (replaced {replaced}, hash {})",
        short_hash(text.as_bytes())
    ))
}

// ---------------------------------------------------------------- delete

pub fn delete(
    engine: &Engine,
    path: &str,
    recursive: bool,
    base_hash: Option<&str>,
) -> Result<String, ToolError> {
    let rel = paths::normalize(path)?;
    if rel.is_empty() {
        return Err(ToolError::invalid(
            "refusing to delete the folder itself: name a document or subfolder",
        ));
    }
    paths::check_indexed_segments(&rel)?;
    let abs = paths::inside(&engine.root(), &rel)?;
    let meta = fs::symlink_metadata(&abs)
        .map_err(|_| ToolError::not_found(format!("no such document or folder: {rel}")))?;
    if meta.is_dir() {
        if base_hash.is_some() {
            return Err(ToolError::invalid(
                "base_hash is for a document, not a folder",
            ));
        }
        let empty = fs::read_dir(&abs)
            .map_err(|e| io_error(&rel, e))?
            .next()
            .is_none();
        if !empty && !recursive {
            return Err(ToolError::conflict(format!(
                "{rel} is not empty: pass recursive: true to delete everything in it"
            )));
        }
        fs::remove_dir_all(&abs).map_err(|e| io_error(&rel, e))?;
    } else {
        paths::check_markdown(&rel)?;
        let (_lock, bytes) = lock_existing(&abs, &rel)?;
        if let Some(base) = base_hash
            && !is_version(&full_hash(&bytes), base)
        {
            return Err(ToolError::conflict(format!(
                "{rel} changed since it was read, so it was not deleted: read it again and decide on what it says now"
            )));
        }
        fs::remove_file(&abs).map_err(|e| io_error(&rel, e))?;
    }
    if meta.is_dir() {
        engine.sync()?;
    } else {
        engine.sync_paths(&[engine.scoped(&rel)])?;
    }
    Ok(format!("deleted {rel}"))
}

// ---------------------------------------------------------------- move

/// The relative path from the directory of `from` to `to` (both root-relative).
fn relative_path(from: &str, to: &str) -> String {
    let from_dir: Vec<&str> = from
        .split('/')
        .collect::<Vec<_>>()
        .split_last()
        .map_or(Vec::new(), |(_, d)| d.to_vec());
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dir
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = vec!["..".into(); from_dir.len() - common];
    parts.extend(to_parts[common..].iter().map(|s| s.to_string()));
    parts.join("/")
}

fn encode_url_path(path: &str) -> String {
    path.replace('%', "%25")
        .replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

/// What a move did: folder-relative paths, and the documents whose links were rewritten.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Moved {
    pub from: String,
    pub to: String,
    pub updated: Vec<String>,
}

pub fn move_document(engine: &Engine, from: &str, to: &str) -> Result<String, ToolError> {
    let moved = move_paths(engine, from, to)?;
    Ok(if moved.updated.is_empty() {
        format!("moved {} to {}", moved.from, moved.to)
    } else {
        format!(
            "moved {} to {}; links updated in {}",
            moved.from,
            moved.to,
            moved.updated.join(", ")
        )
    })
}

/// Moves a document or subfolder and rewrites the links that pointed at it.
pub fn move_paths(engine: &Engine, from: &str, to: &str) -> Result<Moved, ToolError> {
    let root = engine.folder_root().to_path_buf();
    let (from_shown, to_shown) = (paths::normalize(from)?, paths::normalize(to)?);
    if from_shown.is_empty() || to_shown.is_empty() {
        return Err(ToolError::invalid(
            "from and to must name a document or subfolder, not the folder itself",
        ));
    }
    paths::check_indexed_segments(&from_shown)?;
    paths::check_indexed_segments(&to_shown)?;
    // The scope's own directory is checked too (no symlink on the way to it).
    paths::inside(&root, &engine.scope)?;
    let (from_rel, to_rel) = (engine.scoped(&from_shown), engine.scoped(&to_shown));
    let from_abs = paths::inside(&root, &from_rel)?;
    let to_abs = paths::inside(&root, &to_rel)?;
    let meta = fs::symlink_metadata(&from_abs)
        .map_err(|_| ToolError::not_found(format!("no such document or folder: {from_shown}")))?;
    if from_rel == to_rel {
        return Err(ToolError::invalid(format!("{to_shown} is already there")));
    }
    let is_dir = meta.is_dir();
    if is_dir && to_rel.starts_with(&format!("{from_rel}/")) {
        return Err(ToolError::invalid(format!(
            "cannot move {from_rel} into itself"
        )));
    }
    if !is_dir {
        paths::check_markdown(&from_rel)?;
        paths::check_markdown(&to_rel)?;
    }
    if fs::symlink_metadata(&to_abs).is_ok() {
        return Err(ToolError::conflict(format!("already exists: {to_shown}")));
    }
    // Old path → new path of every document that moves.
    let snap = engine.index.snapshot();
    let moved: BTreeMap<String, String> = snap
        .documents()
        .filter_map(|d| {
            if is_dir {
                d.path
                    .strip_prefix(&format!("{from_rel}/"))
                    .map(|rest| (d.path.clone(), format!("{to_rel}/{rest}")))
            } else {
                (d.path == from_rel).then(|| (d.path.clone(), to_rel.clone()))
            }
        })
        .collect();
    // Links that point at a moved document, per linking document (by its old path).
    // With the hash of the text they were found in: link offsets hold only for that text.
    type Found = (blake3::Hash, Vec<(ragdown_markdown::Link, String)>);
    let mut affected: BTreeMap<String, Found> = BTreeMap::new();
    // Only Markdown is ever rewritten: a converted PDF or DOCX is never touched.
    for doc in snap
        .documents()
        .filter(|d| ragdown_index::walk::is_markdown_path(&d.path))
    {
        let text = match fs::read_to_string(root.join(&doc.path)) {
            Ok(t) => t,
            Err(_) => continue,
        };
        let parsed = ragdown_markdown::parse(&doc.path, &text);
        for link in parsed.links {
            let resolved = if link.kind == ragdown_markdown::LinkKind::Markdown {
                ragdown_markdown::links::join_relative(&doc.path, &link.target)
            } else {
                snap.resolve(&link.target, Some(&doc.path))
                    .map(|d| d.path.clone())
            };
            let Some(old_target) = resolved else { continue };
            let source_moves = moved.contains_key(&doc.path);
            if moved.contains_key(&old_target)
                || (source_moves && link.kind == ragdown_markdown::LinkKind::Markdown)
            {
                affected
                    .entry(doc.path.clone())
                    .or_insert_with(|| (blake3::hash(text.as_bytes()), Vec::new()))
                    .1
                    .push((link, old_target));
            }
        }
    }
    if let Some(parent) = to_abs.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error(&to_rel, e))?;
    }
    {
        // A document being edited moves after the edit is written, never under it (the edit
        // would otherwise write the old path back).
        let _lock = if is_dir {
            None
        } else {
            Some(lock_existing(&from_abs, &from_shown)?.0)
        };
        fs::rename(&from_abs, &to_abs).map_err(|e| io_error(&from_rel, e))?;
    }
    if is_dir {
        engine.sync()?;
    } else {
        engine.sync_paths(&[from_rel.clone(), to_rel.clone()])?;
    }
    let after = engine.index.snapshot();
    let mut updated = Vec::new();
    for (old_path, (scanned, links)) in affected {
        let new_path = moved
            .get(&old_path)
            .cloned()
            .unwrap_or_else(|| old_path.clone());
        let abs = root.join(&new_path);
        let Ok((_lock, Some(bytes))) = lock_document(&abs, &new_path) else {
            continue;
        };
        if blake3::hash(&bytes) != scanned {
            // Edited between the scan and now: its offsets are stale, and a wrong rewrite
            // would damage it. A broken link is the lesser harm; say so.
            tracing::warn!(
                "[ragdown] {new_path} changed during the move of {from_shown}: its links to it were not rewritten"
            );
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        for (link, old_target) in links {
            let new_target = moved.get(&old_target).cloned().unwrap_or(old_target);
            let source = &text[link.byte_range.clone()];
            let replacement = if link.kind == ragdown_markdown::LinkKind::Markdown {
                let dest = relative_path(&new_path, &new_target);
                if ragdown_markdown::links::join_relative(&new_path, &link.target).as_deref()
                    == Some(new_target.as_str())
                {
                    continue; // still resolves: links between files that moved together
                }
                let Some(open) = source.rfind("](") else {
                    continue;
                };
                let anchor = link
                    .heading
                    .as_ref()
                    .map(|h| format!("#{}", h.replace(' ', "%20")))
                    .unwrap_or_default();
                format!("{}]({}{anchor})", &source[..open], encode_url_path(&dest))
            } else {
                if after
                    .resolve(&link.target, Some(&new_path))
                    .map(|d| d.path.as_str())
                    == Some(new_target.as_str())
                {
                    continue;
                }
                let keep_ext = link.target.ends_with(".md");
                let stem_path = if keep_ext {
                    new_target.clone()
                } else {
                    new_target
                        .rsplit_once('.')
                        .map_or(new_target.clone(), |(s, _)| s.to_string())
                };
                let parts: Vec<&str> = stem_path.split('/').collect();
                let shortest = (1..=parts.len())
                    .map(|k| parts[parts.len() - k..].join("/"))
                    .find(|candidate| {
                        after
                            .resolve(candidate, Some(&new_path))
                            .map(|d| d.path.as_str())
                            == Some(new_target.as_str())
                    })
                    .unwrap_or(stem_path.clone());
                let bang = if link.kind == ragdown_markdown::LinkKind::Embed {
                    "!"
                } else {
                    ""
                };
                let heading = link
                    .heading
                    .as_ref()
                    .map(|h| format!("#{h}"))
                    .unwrap_or_default();
                let label = link
                    .label
                    .as_ref()
                    .map(|l| format!("|{l}"))
                    .unwrap_or_default();
                format!("{bang}[[{shortest}{heading}{label}]]")
            };
            edits.push((link.byte_range.clone(), replacement));
        }
        if edits.is_empty() {
            continue;
        }
        edits.sort_by_key(|e| std::cmp::Reverse(e.0.start));
        let mut new_text = text.clone();
        for (range, replacement) in edits {
            new_text.replace_range(range, &replacement);
        }
        atomic_write(&abs, &new_path, new_text.as_bytes())?;
        updated.push(new_path);
    }
    if !updated.is_empty() {
        engine.sync_paths(&updated)?;
    }
    // Documents outside the scope whose links were rewritten are shown folder-relative.
    let updated = updated
        .iter()
        .map(|p| engine.unscoped(p).unwrap_or(p).to_string())
        .collect();
    Ok(Moved {
        from: from_shown,
        to: to_shown,
        updated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(bytes: &[u8]) -> bool {
        let key = *blake3::hash(bytes).as_bytes();
        CONVERTED.lock().unwrap().iter().any(|(k, _)| *k == key)
    }

    #[test]
    fn converted_texts_are_kept_by_content_and_the_oldest_goes_first() {
        let first = b"kept text, first of nine\n";
        let (text, from) = document_text("notes/a.txt", first);
        assert_eq!(from, Some("text"));
        assert!(kept(first));
        // Same bytes under another name: the same text, from the cache.
        assert_eq!(document_text("b.txt", first).0, text);
        // Markdown is never converted, so never kept.
        document_text("c.md", b"# plain markdown, not kept\n");
        assert!(!kept(b"# plain markdown, not kept\n"));
        for i in 0..CONVERTED_KEPT {
            document_text("d.txt", format!("other text {i} of this test\n").as_bytes());
        }
        assert!(!kept(first), "the oldest entry is dropped");
        assert!(CONVERTED.lock().unwrap().len() <= CONVERTED_KEPT);
        assert_eq!(document_text("a.txt", first).0, text);
    }

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

    #[test]
    fn slugs() {
        assert_eq!(slug("Kafka retention!"), "kafka-retention");
        assert_eq!(slug("???"), "note");
    }

    #[test]
    fn versions_need_twelve_hex() {
        let full = full_hash(b"x");
        assert!(is_version(&full, &full[..12]));
        assert!(is_version(&full, &full));
        assert!(!is_version(&full, &full[..6]));
    }

    #[test]
    fn appends_under_a_heading() {
        let out = append_text(
            "a.md",
            "# A\n\n## One\n\nfirst\n\n## Two\n\nsecond\n",
            "more",
            Some("One"),
        )
        .unwrap();
        assert_eq!(out, "# A\n\n## One\n\nfirst\n\nmore\n\n## Two\n\nsecond\n");
        let end = append_text("a.md", "# A\n\ntext\n", "tail", None).unwrap();
        assert_eq!(end, "# A\n\ntext\n\ntail\n");
    }

    #[test]
    fn stamps_provenance() {
        assert_eq!(
            stamp("---\ntitle: x\n---\nbody", "ragdown_write", Some("s")),
            "---\ntitle: x\ncreated_by: ragdown_write\nsession: \"s\"\n---\nbody"
        );
        assert_eq!(
            stamp("body", "ragdown_write", None),
            "---\ncreated_by: ragdown_write\n---\nbody"
        );
        assert_eq!(
            stamp("a\r\nb", "w", None),
            "---\r\ncreated_by: w\r\n---\r\na\r\nb"
        );
    }

    #[test]
    fn relative_paths() {
        assert_eq!(relative_path("a/b.md", "a/c.md"), "c.md");
        assert_eq!(
            relative_path("x/deep/b.md", "run/book.md"),
            "../../run/book.md"
        );
        assert_eq!(relative_path("b.md", "db/postgres.md"), "db/postgres.md");
    }
}
