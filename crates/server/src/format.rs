//! Output formats, exactly as ragdown writes them: recall hits as text or JSON, the hit header
//! shared with the hook block, clipping with the `ragdown_read_doc` call that returns the rest,
//! and UTC days.

use ragdown_index::SyncProgress;
use ragdown_search::Hit;
use serde_json::json;
use time::OffsetDateTime;
use time::macros::format_description;

fn datetime(mtime_ns: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(mtime_ns))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// `YYYY-MM-DD`, UTC.
pub fn day(mtime_ns: i64) -> String {
    datetime(mtime_ns)
        .format(format_description!("[year]-[month]-[day]"))
        .unwrap_or_default()
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, UTC.
pub fn iso(mtime_ns: i64) -> String {
    datetime(mtime_ns)
        .format(format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        ))
        .unwrap_or_default()
}

/// ` [#a #b]`, or nothing for no tags.
pub fn tag_list(tags: &[String]) -> String {
    if tags.is_empty() {
        return String::new();
    }
    let marked: Vec<String> = tags.iter().map(|t| format!("#{t}")).collect();
    format!(" [{}]", marked.join(" "))
}

/// `x` rounded to `places` decimals, widened first: an `f32` rounded and then widened prints
/// as `0.7488999962806702` in JSON.
pub fn rounded(x: f32, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (f64::from(x) * scale).round() / scale
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
    let doc = &hit.document;
    let tags = tag_list(&doc.tags);
    let agent = doc
        .created_by
        .as_ref()
        .map(|by| format!(", written by an agent with {by}"))
        .unwrap_or_default();
    format!(
        "{}:{}-{} — {}{tags} (similarity {:.2}, changed {}{agent})",
        escaped(&doc.path),
        hit.line_start,
        hit.line_end,
        hit.breadcrumb,
        hit.similarity,
        day(doc.mtime_ns)
    )
}

/// The hit's text, clipped to `max_chars` characters (0 = never) with the call that reads the
/// rest.
pub fn clipped_text(hit: &Hit, max_chars: usize) -> String {
    let len = hit.text.chars().count();
    if max_chars == 0 || len <= max_chars {
        return hit.text.clone();
    }
    let head: String = hit.text.chars().take(max_chars).collect();
    format!(
        "{head}… [clipped: {max_chars} of {len} characters — ragdown_read_doc {{path: {}, start_line: {}, end_line: {}}}]",
        serde_json::to_string(&hit.document.path).unwrap_or_default(),
        hit.line_start,
        hit.line_end
    )
}

/// One hit block: header, newline, text.
pub fn hit_block(hit: &Hit, max_chars: usize) -> String {
    format!("{}\n{}", hit_header(hit), clipped_text(hit, max_chars))
}

/// `ragdown_recall`'s text output; while a sync runs (`indexing`), a last line says so.
pub fn recall_text(hits: &[Hit], max_chars: usize, indexing: Option<&SyncProgress>) -> String {
    if hits.is_empty() {
        return match indexing {
            None => "No matching documents.".into(),
            Some(p) => format!(
                "No matching documents yet ({}): try again when indexing is done.",
                p.describe()
            ),
        };
    }
    let mut text = hits
        .iter()
        .enumerate()
        .map(|(i, hit)| format!("[{}] {}", i + 1, hit_block(hit, max_chars)))
        .collect::<Vec<_>>()
        .join("\n\n");
    if let Some(p) = indexing {
        text.push_str(&format!(
            "\n\n({}; results may be incomplete)",
            p.describe()
        ));
    }
    text
}

/// `ragdown_recall`'s JSON output; `indexing` (files and sections done and in all) while a
/// sync runs.
pub fn recall_json(hits: &[Hit], indexing: Option<&SyncProgress>) -> String {
    let hits: Vec<serde_json::Value> = hits
        .iter()
        .map(|hit| {
            let mut v = json!({
                "path": hit.document.path,
                "title": hit.document.title,
                "heading": hit.heading,
                "line_start": hit.line_start,
                "line_end": hit.line_end,
                "similarity": rounded(hit.similarity, 4),
                "score": rounded(hit.score, 5),
                "sources": hit.sources.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                "tags": hit.document.tags,
                "modified": iso(hit.document.mtime_ns),
                "text": hit.text,
            });
            if let Some(by) = &hit.document.created_by {
                v["created_by"] = json!(by);
            }
            v
        })
        .collect();
    let mut out = json!({ "hits": hits });
    if let Some(p) = indexing {
        out["indexing"] = json!(p);
    }
    out.to_string()
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
