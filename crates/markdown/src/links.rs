//! Links between documents: `[[Note]]`, `[[Note#Heading]]`, `[[Note|label]]`, `![[embed]]` and
//! relative Markdown links, plus the pure path arithmetic used to resolve them. No I/O: which
//! document a target names is decided by the index, which knows the files.

use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// `[[Note]]`
    Wiki,
    /// `![[Note]]`
    Embed,
    /// `[label](relative/path.md)`
    Markdown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub kind: LinkKind,
    /// The document named, as written (`Note`, `sub/Note`, `../a.md`), without the heading.
    pub target: String,
    pub heading: Option<String>,
    pub label: Option<String>,
    /// 1-based line of the link in the original file.
    pub line: usize,
    /// Byte range of the whole link in the original file.
    pub byte_range: Range<usize>,
}

/// Parses the inside of `[[...]]`: `target#heading|label`.
pub fn parse_wikilink(inner: &str) -> Option<Link> {
    let (reference, label) = match inner.split_once('|') {
        Some((r, l)) => (r, Some(l.trim().to_string()).filter(|l| !l.is_empty())),
        None => (inner, None),
    };
    let (target, heading) = split_heading(reference);
    if target.is_empty() && heading.is_none() {
        return None;
    }
    Some(Link {
        kind: LinkKind::Wiki,
        target,
        heading,
        label,
        line: 0,
        byte_range: 0..0,
    })
}

/// Parses a Markdown link destination; `None` unless it is a relative path (no scheme, not
/// absolute, not a bare `#anchor`).
pub fn parse_relative(dest: &str) -> Option<Link> {
    let dest = dest.trim();
    let has_scheme = dest.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if dest.is_empty() || has_scheme || dest.starts_with('/') || dest.starts_with('#') {
        return None;
    }
    let decoded = dest.replace("%20", " ");
    let (target, heading) = split_heading(&decoded);
    Some(Link {
        kind: LinkKind::Markdown,
        target,
        heading,
        label: None,
        line: 0,
        byte_range: 0..0,
    })
}

fn split_heading(reference: &str) -> (String, Option<String>) {
    match reference.split_once('#') {
        Some((t, h)) => (
            t.trim().to_string(),
            Some(h.trim().to_string()).filter(|h| !h.is_empty()),
        ),
        None => (reference.trim().to_string(), None),
    }
}

/// Joins `relative` onto the directory of `from` (both root-relative, `/`-separated) and
/// normalises `.` and `..`. `None` when the result would leave the root or `relative` is
/// absolute.
pub fn join_relative(from: &str, relative: &str) -> Option<String> {
    let relative = relative.replace('\\', "/");
    if relative.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop(); // the file name of `from`
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wikilink_parts() {
        let l = parse_wikilink("sub/Note#Restore|the restore").unwrap();
        assert_eq!(l.target, "sub/Note");
        assert_eq!(l.heading.as_deref(), Some("Restore"));
        assert_eq!(l.label.as_deref(), Some("the restore"));
        assert!(parse_wikilink("").is_none());
    }

    #[test]
    fn relative_links_only() {
        assert!(parse_relative("https://x.org/a.md").is_none());
        assert!(parse_relative("mailto:a@b").is_none());
        assert!(parse_relative("#top").is_none());
        let l = parse_relative("../ops/My%20Note.md#Restore").unwrap();
        assert_eq!(l.target, "../ops/My Note.md");
        assert_eq!(l.heading.as_deref(), Some("Restore"));
    }

    #[test]
    fn joins() {
        assert_eq!(
            join_relative("a/b/c.md", "../d.md").as_deref(),
            Some("a/d.md")
        );
        assert_eq!(join_relative("c.md", "x/./y.md").as_deref(), Some("x/y.md"));
        assert_eq!(join_relative("c.md", "../y.md"), None);
        assert_eq!(join_relative("c.md", "/etc/passwd"), None);
    }
}
