//! HTML: the main content (navigation, ads and boilerplate dropped by dom_smoothie's port of
//! readability.js) as Markdown, under the page title. A page readability finds no article in is
//! converted whole. Nesting deeper than the limit is refused before parsing.

use dom_smoothie::{Config, Readability, TextMode};

use crate::{ConvertError, Limits};

/// The deepest element nesting, counted roughly from the tags (void and self-closing tags
/// don't nest). Enough to refuse megabytes of `<div><div><div>…` before a parser sees them.
fn nesting_depth(html: &str) -> usize {
    const VOID: [&str; 14] = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr",
    ];
    let (mut depth, mut max) = (0usize, 0usize);
    let bytes = html.as_bytes();
    let mut i = 0;
    while let Some(off) = bytes[i..].iter().position(|&b| b == b'<') {
        i += off + 1;
        let Some(&next) = bytes.get(i) else { break };
        if next == b'/' {
            depth = depth.saturating_sub(1);
            continue;
        }
        if !next.is_ascii_alphabetic() {
            continue; // comments, doctype, stray '<'
        }
        let name_end = bytes[i..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .map_or(bytes.len(), |p| i + p);
        let name = html[i..name_end].to_ascii_lowercase();
        let tag_end = bytes[name_end..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(bytes.len(), |p| name_end + p);
        let self_closing = tag_end > 0 && bytes.get(tag_end - 1) == Some(&b'/');
        if !VOID.contains(&name.as_str()) && !self_closing {
            depth += 1;
            max = max.max(depth);
        }
        i = tag_end.min(bytes.len());
    }
    max
}

pub fn to_markdown(bytes: &[u8], limits: &Limits) -> Result<String, ConvertError> {
    let html = String::from_utf8_lossy(bytes);
    let depth = nesting_depth(&html);
    if depth > limits.max_html_depth {
        return Err(ConvertError::TooLarge(format!(
            "its elements nest {depth} deep (the limit is {})",
            limits.max_html_depth
        )));
    }
    let config = Config {
        text_mode: TextMode::Markdown,
        ..Default::default()
    };
    let malformed = |e: dom_smoothie::ReadabilityError| ConvertError::Malformed {
        format: "HTML",
        detail: e.to_string(),
    };
    let mut readability = Readability::new(html.as_ref(), None, Some(config)).map_err(malformed)?;
    let (title, body) = match readability.parse() {
        Ok(article) => (
            article.title.trim().to_string(),
            article.text_content.to_string(),
        ),
        Err(_) => {
            // No article found: keep the whole page's text rather than nothing.
            let config = Config {
                text_mode: TextMode::Markdown,
                ..Default::default()
            };
            let mut whole =
                Readability::new(html.as_ref(), None, Some(config)).map_err(malformed)?;
            let title = whole.get_article_title().trim().to_string();
            match whole.parse_with_policy(dom_smoothie::ParsePolicy::Raw) {
                Ok(a) => (title, a.text_content.to_string()),
                Err(_) => return Err(ConvertError::NoText),
            }
        }
    };
    let body = unwrap_self_links(&drop_empty_links(&unescape_prose(body.trim())));
    let body = body.trim();
    if body.is_empty() {
        return Err(ConvertError::NoText);
    }
    // The page title is the document's title, unless the content already starts with it.
    let starts_with_title = body
        .lines()
        .next()
        .is_some_and(|l| l.trim_start_matches('#').trim() == title);
    Ok(if title.is_empty() || starts_with_title {
        format!("{body}\n")
    } else {
        format!("# {title}\n\n{body}\n")
    })
}

/// Links with no words — documentation generators' `¶` permalinks, icon-font glyphs — carry nothing
/// to search and clutter headings (`## Synopsis[](#synopsis "Permalink")`).
fn drop_empty_links(md: &str) -> String {
    static EMPTY_LINK: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"\[[^\]\w]*\]\([^)\s]*(?:\s+"[^"]*")?\)"#).ok()
    });
    match EMPTY_LINK.as_ref() {
        Some(re) => re.replace_all(md, "").into_owned(),
        None => md.to_string(),
    }
}

/// Headings that are nothing but a link to themselves — mdBook's and Docusaurus's
/// `## [Setup](#setup)` — keep their words and lose the link, which would otherwise sit in
/// every breadcrumb below them.
fn unwrap_self_links(md: &str) -> String {
    static SELF_LINK: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"(?m)^(#{1,6}) \[(.+)\]\(#[^)\s]*(?:\s+"[^"]*")?\)[ \t]*$"#).ok()
    });
    match SELF_LINK.as_ref() {
        Some(re) => re
            .replace_all(md, |caps: &regex::Captures| {
                // A heading holding two links (`[a](#x) and [b](#y)`) is not one self-link.
                if caps[2].contains("](") {
                    caps[0].to_string()
                } else {
                    format!("{} {}", &caps[1], &caps[2])
                }
            })
            .into_owned(),
        None => md.to_string(),
    }
}

/// dom_smoothie escapes every character Markdown might read as syntax (`morning\\.`,
/// `\\(see below\\)`, `html\\_root\\_url`, `\\#\\[cfg\\]`, `it works\\!`). Outside code,
/// most of these guard against nothing in a converted page, and they spoil snippets and
/// breadcrumbs, so an escape goes wherever the character cannot start syntax:
/// - `.` `(` `)`: always (a period after a number starting a line at worst makes a list);
/// - `!` unless a `[` follows (an image);
/// - `[`, and `]` unless a `(` follows (no link can form; converted pages have no reference
///   definitions);
/// - `#` followed by a character that is not a space or `#` (no heading marker);
/// - `>` after a character that is not a space (no quote marker);
/// - `_` inside a word (which never emphasises).
///
/// Other escapes (`*`, `` ` ``, `<`, `_` at a word's edge) stay.
fn unescape_prose(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut in_code = false;
    for line in md.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        if in_code {
            out.push_str(line);
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let at = |i: usize| chars.get(i).copied();
        let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        let spaced = |c: Option<char>| c.is_none_or(char::is_whitespace);
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let before = i.checked_sub(1).and_then(at);
            let drop = c == '\\'
                && match at(i + 1) {
                    Some('.' | '(' | ')' | '[') => true,
                    Some('!') => at(i + 2) != Some('['),
                    Some(']') => at(i + 2) != Some('('),
                    Some('#') => !spaced(at(i + 2)) && at(i + 2) != Some('#'),
                    Some('>') => !spaced(before),
                    Some('_') => word(before) && word(at(i + 2)),
                    _ => false,
                };
            if drop {
                i += 1;
                continue;
            }
            out.push(c);
            // A backslash that escapes another keeps it: `\\\\(` is a backslash and `(`.
            if c == '\\'
                && let Some(escaped) = at(i + 1)
            {
                out.push(escaped);
                i += 1;
            }
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_links_go() {
        assert_eq!(
            drop_empty_links(
                "## Synopsis[\u{f0c1}](#synopsis \"Permalink to this heading\")\nsee [x](y)[](#z)[¶](#a)"
            ),
            "## Synopsis\nsee [x](y)"
        );
    }

    #[test]
    fn self_linked_headings_keep_their_words() {
        assert_eq!(
            unwrap_self_links(
                "## [At the crate level](#at-the-crate-level)\n\ntext [link](#x)\n### [Setup](#setup \"Setup\")\n## [Docs](https://example.com)"
            ),
            "## At the crate level\n\ntext [link](#x)\n### Setup\n## [Docs](https://example.com)"
        );
        // Brackets inside the heading's words.
        assert_eq!(
            unwrap_self_links("## [#[cfg(doc)]: Documenting](#cfgdoc-documenting)"),
            "## #[cfg(doc)]: Documenting"
        );
        let two = "## [a](#x) and [b](#y)";
        assert_eq!(unwrap_self_links(two), two);
    }

    #[test]
    fn prose_escapes_go_but_code_and_word_edges_keep_theirs() {
        assert_eq!(
            unescape_prose(
                "In 2024\\. See \\(below\\) and html\\_root\\_url, not \\_private\\_ or a\\\\(b\n```\nx = a\\.b \\(c\\)\n```\n"
            ),
            "In 2024. See (below) and html_root_url, not \\_private\\_ or a\\\\(b\n```\nx = a\\.b \\(c\\)\n```\n"
        );
        assert_eq!(
            unescape_prose(
                "Try it\\! See \\![img](x) and \\[\\#45040\\]: \\#\\[cfg\\] a\\>b\n\\# heading-like \\> quote \\[x\\](y)\n"
            ),
            "Try it! See \\![img](x) and [#45040]: #[cfg] a>b\n\\# heading-like \\> quote [x\\](y)\n"
        );
    }

    #[test]
    fn depth_counts_nesting_not_siblings() {
        assert_eq!(nesting_depth("<div><p>a</p><p>b<br></p></div>"), 2);
        assert_eq!(nesting_depth(&"<div>".repeat(1000)), 1000);
        assert_eq!(nesting_depth("<img src=x/><hr><!-- <div> --><p>x</p>"), 2);
    }
}
