//! Changing documents for the tools: notes (`remember`), ingested content, whole-document
//! writes and appends, exact-passage edits, deletes. Every write is atomic (a temporary
//! dot-file renamed into place, or an exclusive create), holds the document's lock from its
//! check to its write, and is indexed before the tool returns. Answers are plain data.

use std::fs;

use super::files::{atomic_write, create_new, io_error, is_version, lock_document, lock_existing};
use super::moving::relative_path;
use crate::answers::{Deleted, Edited, Ingested, Saved, Written};
use crate::args::{EditArgs, IngestArgs, IngestFormat, RememberArgs, WriteArgs};
use crate::format::{day, full_hash, short_hash};
use crate::{Engine, ToolError, paths};

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
pub fn ingest(engine: &Engine, args: &IngestArgs) -> Result<Ingested, ToolError> {
    use sha2::{Digest, Sha256};
    let source = args.source.trim();
    if source.is_empty() || args.content.trim().is_empty() {
        return Err(ToolError::invalid("content and source must not be empty"));
    }
    let body = match args.format {
        IngestFormat::Markdown => args.content.clone(),
        IngestFormat::Text => {
            ragdown_convert::convert(ragdown_convert::Format::Text, args.content.as_bytes())
                .map_err(|e| ToolError::invalid(format!("the text could not be kept: {e}")))?
        }
        IngestFormat::Html => {
            ragdown_convert::convert(ragdown_convert::Format::Html, args.content.as_bytes())
                .map_err(|e| ToolError::invalid(format!("the HTML could not be converted: {e}")))?
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
    Ok(Ingested {
        lines: text.lines().count(),
        path: rel,
        source: source.to_string(),
        replaced,
    })
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

/// Saves a note under the notes folder with its provenance, never over another document.
pub fn remember(engine: &Engine, args: &RememberArgs) -> Result<Saved, ToolError> {
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
                // Relative to the note's own folder, as a Markdown link from it would be.
                .map(|r| quoted(&relative_path(&base, r)))
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
    Ok(Saved {
        path: rel,
        supersedes: replaced,
    })
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

/// Creates, replaces (with its `base_hash`) or appends to a Markdown document.
pub fn write(engine: &Engine, args: &WriteArgs) -> Result<Written, ToolError> {
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
    Ok(Written {
        path: rel,
        created,
        hash: short_hash(new_text.as_bytes()),
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

/// Replaces exact passages of a document, all of them or none.
pub fn edit(engine: &Engine, args: &EditArgs) -> Result<Edited, ToolError> {
    let edits = &args.edits;
    if edits.is_empty() {
        return Err(ToolError::invalid("edits must hold at least one edit"));
    }
    let (rel, abs) = paths::document(&engine.root(), &args.path)?;
    paths::check_markdown(&rel)?;
    let (lock, bytes) = lock_existing(&abs, &rel)?;
    check_base_hash(&rel, &bytes, args.base_hash.as_deref())?;
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
    Ok(Edited {
        path: rel,
        replaced,
        hash: short_hash(text.as_bytes()),
    })
}

/// Deletes a document (only the version read, given its `base_hash`) or a subfolder.
pub fn delete(
    engine: &Engine,
    path: &str,
    recursive: bool,
    base_hash: Option<&str>,
) -> Result<Deleted, ToolError> {
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
    Ok(Deleted { path: rel })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slug("Kafka retention!"), "kafka-retention");
        assert_eq!(slug("???"), "note");
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
}
