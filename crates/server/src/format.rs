//! The MCP text of every answer, exactly as ragdown writes it: each [`Answer`] rendered once
//! here (recall hits as text or JSON, the hit header shared with the hook block, clipping with
//! the `ragdown_read_doc` call that returns the rest, listings, read ranges), plus the small
//! shared pieces (UTC days, hashes, escaped paths). JSON answers are the answer types'
//! `Serialize`. Nothing here searches or touches a file.

use ragdown_search::Hit;
use serde::Serialize;
use serde_json::Value;

use crate::answers::{Answer, FolderList, Listing, Moved, ReadDoc, Recall, RecallView};
pub use crate::values::{day, iso, rounded};

/// ` [#a #b]`, or nothing for no tags.
pub fn tag_list(tags: &[String]) -> String {
    if tags.is_empty() {
        return String::new();
    }
    let marked: Vec<String> = tags.iter().map(|t| format!("#{t}")).collect();
    format!(" [{}]", marked.join(" "))
}

/// A path as text output shows it: control characters (a newline in a file name) escaped as
/// in JSON, so one hit or document is always one line. Other paths are shown as they are.
pub fn escaped(path: &str) -> std::borrow::Cow<'_, str> {
    if !path.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(path);
    }
    let quoted = serde_json::to_string(path).unwrap_or_default();
    std::borrow::Cow::Owned(quoted[1..quoted.len().saturating_sub(1)].to_string())
}

/// The header of one hit, without the `[n] ` prefix.
pub fn hit_header(hit: &Hit) -> String {
    hit_header_as(hit, hit.path())
}

/// [`hit_header`] with the path shown as `shown` (`[folder] path` at the root endpoint).
fn hit_header_as(hit: &Hit, shown: &str) -> String {
    let doc = &hit.document;
    let tags = tag_list(&doc.tags);
    let agent = doc
        .created_by
        .as_ref()
        .map(|by| format!(", written by an agent with {by}"))
        .unwrap_or_default();
    format!(
        "{}:{}-{} — {}{tags} (similarity {:.2}, changed {}{agent})",
        escaped(shown),
        hit.line_start,
        hit.line_end,
        hit.breadcrumb,
        hit.similarity,
        day(doc.mtime_ns)
    )
}

/// The hit's text, clipped to `max_chars` characters (0 = never) with the call that reads the
/// rest (of the document shown as `shown`).
fn clipped_text(hit: &Hit, shown: &str, max_chars: usize) -> String {
    let len = hit.text.chars().count();
    if max_chars == 0 || len <= max_chars {
        return hit.text.clone();
    }
    let head: String = hit.text.chars().take(max_chars).collect();
    format!(
        "{head}… [clipped: {max_chars} of {len} characters — ragdown_read_doc {{path: {}, start_line: {}, end_line: {}}}]",
        serde_json::to_string(shown).unwrap_or_default(),
        hit.line_start,
        hit.line_end
    )
}

/// One hit block: header, newline, text.
pub fn hit_block(hit: &Hit, max_chars: usize) -> String {
    hit_block_as(hit, hit.path(), max_chars)
}

fn hit_block_as(hit: &Hit, shown: &str, max_chars: usize) -> String {
    format!(
        "{}\n{}",
        hit_header_as(hit, shown),
        clipped_text(hit, shown, max_chars)
    )
}

/// `ragdown_recall`'s text output; while a sync runs, a last line says so.
pub fn recall_text(recall: &Recall, max_chars: usize) -> String {
    if recall.hits.is_empty() {
        return match &recall.indexing {
            None => "No matching documents.".into(),
            Some(p) => format!(
                "No matching documents yet ({}): try again when indexing is done.",
                p.describe()
            ),
        };
    }
    let mut text = recall
        .hits
        .iter()
        .enumerate()
        .map(|(i, found)| {
            let shown = found.shown_path();
            format!(
                "[{}] {}",
                i + 1,
                hit_block_as(&found.hit, &shown, max_chars)
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    if let Some(p) = &recall.indexing {
        text.push_str(&format!(
            "\n\n({}; results may be incomplete)",
            p.describe()
        ));
    }
    if let Some(why) = &recall.keyword_only {
        text = format!("({why})\n\n{text}");
    }
    text
}

/// A typed answer as compact JSON text, keys in name order (as the tools have always
/// written them: through a `serde_json::Value`, whose maps are sorted).
pub fn json_text<T: Serialize>(value: &T) -> String {
    // A `Serialize` of plain data with string keys cannot fail to become a `Value`; were it to,
    // the answer is an empty object rather than a panic.
    serde_json::to_value(value)
        .unwrap_or_else(|_| Value::Object(Default::default()))
        .to_string()
}

/// `ragdown_read_doc`'s text: a header naming the range, the hash and what else is known,
/// then the lines.
pub fn read_doc_text(doc: &ReadDoc) -> String {
    let mut header = format!(
        "{}:{}-{} of {} (hash {}",
        doc.path, doc.line_start, doc.line_end, doc.total_lines, doc.hash
    );
    if let Some(format) = doc.converted_from {
        header.push_str(&format!(
            ", converted from {format} for search: lines are the converted text's; read-only"
        ));
    }
    if let Some(from) = &doc.resolved_from {
        header.push_str(&format!(
            ", resolved from {}",
            serde_json::to_string(from).unwrap_or_default()
        ));
    }
    if !doc.superseded_by.is_empty() {
        header.push_str(&format!(", superseded by {}", doc.superseded_by.join(", ")));
    }
    header.push(')');
    format!("{header}\n{}", doc.text)
}

/// `ragdown_list`'s text: a count, then one line per document (`[folder] ` first where
/// several folders answered).
pub fn listing_text(listing: &Listing) -> String {
    if listing.documents.is_empty() {
        return "No documents.".into();
    }
    let shown = listing.documents.len();
    let mut out = vec![if shown < listing.total {
        format!("documents: {shown} of {}", listing.total)
    } else {
        format!("documents: {}", listing.total)
    }];
    for d in &listing.documents {
        let folder = d
            .folder
            .as_ref()
            .map(|f| format!("[{f}] "))
            .unwrap_or_default();
        let mut line = format!(
            "{folder}{} — {}{}",
            escaped(&d.path),
            d.title,
            tag_list(&d.tags)
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
        if !d.superseded_by.is_empty() {
            line.push_str(&format!(", superseded by {}", d.superseded_by.join(", ")));
        }
        line.push(')');
        if let Some(desc) = &d.description {
            line.push_str(&format!(": {desc}"));
        }
        out.push(line);
    }
    out.join("\n")
}

/// `ragdown_move`'s text.
pub fn moved_text(moved: &Moved) -> String {
    if moved.updated.is_empty() {
        format!("moved {} to {}", moved.from, moved.to)
    } else {
        format!(
            "moved {} to {}; links updated in {}",
            moved.from,
            moved.to,
            moved.updated.join(", ")
        )
    }
}

/// `ragdown_folders`' text.
pub fn folders_text(list: &FolderList) -> String {
    if list.folders.is_empty() {
        return "No folders with MCP on. ragdown_create_folder makes one.".into();
    }
    list.folders
        .iter()
        .map(|f| format!("{} — {} ({} documents)", f.name, f.title, f.documents))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Any answer as the MCP text content a client gets.
pub fn answer_text(answer: &Answer) -> String {
    match answer {
        Answer::Recall(recall, RecallView::Text { max_chars }) => recall_text(recall, *max_chars),
        Answer::Recall(recall, RecallView::Json) => json_text(recall),
        Answer::Context(block) => block.clone(),
        Answer::ReadDoc(doc) => read_doc_text(doc),
        Answer::Backlinks(b) => json_text(b),
        Answer::Listing(l) => listing_text(l),
        Answer::Stats(s) => json_text(s),
        Answer::AllStats(s) => json_text(s),
        Answer::Reindexed(r) => json_text(r),
        Answer::Saved(s) if s.supersedes.is_empty() => format!("saved {}", s.path),
        Answer::Saved(s) => format!("saved {} (supersedes {})", s.path, s.supersedes.join(", ")),
        Answer::Ingested(i) => format!(
            "{} {} ({} lines) from {}",
            if i.replaced { "replaced" } else { "ingested" },
            i.path,
            i.lines,
            i.source
        ),
        Answer::Written(w) => format!(
            "{} {} (hash {})",
            if w.created { "created" } else { "wrote" },
            w.path,
            w.hash
        ),
        Answer::Edited(e) => format!(
            "edited {} (replaced {}, hash {})",
            e.path, e.replaced, e.hash
        ),
        Answer::Deleted(d) => format!("deleted {}", d.path),
        Answer::Moved(m) => moved_text(m),
        Answer::Folders(f) => folders_text(f),
        Answer::FolderCreated(f) => format!(
            "created folder {} with MCP on; pass folder: {:?} to the other tools",
            f.name, f.name
        ),
    }
}

/// First 12 hex digits of the SHA-256 of a file's bytes (ragdown's `base_hash`).
pub fn short_hash(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// Full SHA-256 hex.
pub fn full_hash(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_iso() {
        let ns = 1_777_629_600_000_000_000; // 2026-05-01T10:00:00Z
        assert_eq!(day(ns), "2026-05-01");
        assert_eq!(iso(ns), "2026-05-01T10:00:00.000Z");
    }

    #[test]
    fn control_characters_in_paths_are_escaped() {
        assert_eq!(escaped("notes/a b.md"), "notes/a b.md");
        assert_eq!(escaped("notes/a\nb.md"), "notes/a\\nb.md");
        assert_eq!(escaped("x\r\t\u{1}.md"), "x\\r\\t\\u0001.md");
        assert_eq!(escaped("caf\u{e9}/\"q\".md"), "caf\u{e9}/\"q\".md");
    }

    #[test]
    fn hashes() {
        assert_eq!(short_hash(b""), "e3b0c44298fc");
        assert_eq!(full_hash(b"").len(), 64);
    }
}
