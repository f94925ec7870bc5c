//! Tags: normalising a tag as written (`#Project/Alpha/` → `project/alpha`) and finding inline
//! `#tags` in text that is not code. Pure string work.

use std::sync::LazyLock;

use regex::Regex;

// The pattern is a literal checked by the unit tests below, so building it cannot fail.
static INLINE_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|\s)#([\p{L}\p{N}_\-/]+)").expect("literal pattern"));

/// Normalises a tag: trims, strips leading `#`s and trailing `/`s, lowercases. Returns `None`
/// for what is not a tag: empty, other characters, or only digits and slashes (`#2024`).
pub fn normalize(raw: &str) -> Option<String> {
    let tag = raw
        .trim()
        .trim_start_matches('#')
        .trim_end_matches('/')
        .to_lowercase();
    let valid = !tag.is_empty()
        && tag
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'))
        && !tag.chars().all(|c| c.is_ascii_digit() || c == '/');
    valid.then_some(tag)
}

/// Appends the inline tags of one run of non-code text.
pub fn scan_inline(text: &str, out: &mut Vec<String>) {
    for capture in INLINE_TAG.captures_iter(text) {
        if let Some(tag) = capture.get(1).and_then(|m| normalize(m.as_str())) {
            out.push(tag);
        }
    }
}

/// Whether `tags` holds `wanted` or a tag nested under it (`project` matches `project/alpha`).
pub fn matches(tags: &[String], wanted: &str) -> bool {
    tags.iter().any(|t| {
        t == wanted
            || (t.len() > wanted.len()
                && t.starts_with(wanted)
                && t.as_bytes()[wanted.len()] == b'/')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises() {
        assert_eq!(
            normalize("#Project/Alpha/").as_deref(),
            Some("project/alpha")
        );
        assert_eq!(normalize("2024"), None);
        assert_eq!(normalize("a.b"), None);
        assert_eq!(normalize(""), None);
    }

    #[test]
    fn finds_inline_tags_but_not_fragments() {
        let mut out = Vec::new();
        scan_inline(
            "#ops see a#b and http://x/#frag #project/alpha #2024",
            &mut out,
        );
        assert_eq!(out, vec!["ops", "project/alpha"]);
    }

    #[test]
    fn nested_match() {
        let tags = vec!["project/alpha".to_string()];
        assert!(matches(&tags, "project"));
        assert!(matches(&tags, "project/alpha"));
        assert!(!matches(&tags, "proj"));
    }
}
