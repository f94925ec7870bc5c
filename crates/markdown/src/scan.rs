//! One pulldown-cmark pass over a document body: headings, code-block lines, inline `#tags`
//! and links, each tied to 0-based line indexes of the original file.
//!
//! Owns the CommonMark reading; it does not decide how sections are cut or packed
//! (that is `chunk`'s job).

use std::ops::Range;

use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd, TextMergeWithOffset};

use crate::links::{Link, LinkKind, parse_wikilink};
use crate::tags;

/// A heading as written, with the lines it occupies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadingMark {
    pub level: usize,
    /// The heading's source text without its markers (`## Foo ##` → `Foo`), inline markup kept.
    pub name: String,
    pub first_line: usize,
    pub last_line: usize,
}

#[derive(Debug, Default)]
pub struct Scan {
    pub headings: Vec<HeadingMark>,
    /// `true` for every line inside a fenced or indented code block (fence lines included).
    pub code_lines: Vec<bool>,
    pub inline_tags: Vec<String>,
    pub links: Vec<Link>,
}

/// Maps byte offsets of the whole file to 0-based line indexes.
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { starts }
    }

    pub fn line_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// Number of lines, counting the empty line after a trailing newline.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn start_of(&self, line: usize) -> usize {
        self.starts[line.min(self.starts.len() - 1)]
    }
}

/// Scans `text[body_start..]`; offsets and lines reported are those of the whole `text`.
pub fn scan(text: &str, body_start: usize, lines: &LineIndex) -> Scan {
    let body = &text[body_start..];
    let mut out = Scan {
        code_lines: vec![false; lines.len()],
        ..Scan::default()
    };
    let options = Options::ENABLE_WIKILINKS
        | Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    let parser = Parser::new_ext(body, options).into_offset_iter();
    let mut in_code_block = 0usize;
    let mut heading_start: Option<(usize, Range<usize>)> = None;
    for (event, range) in TextMergeWithOffset::new(parser) {
        let abs = (range.start + body_start)..(range.end + body_start);
        match event {
            Event::Start(Tag::CodeBlock(_)) => {
                in_code_block += 1;
                mark_lines(&mut out.code_lines, lines, &abs);
            }
            Event::End(TagEnd::CodeBlock) => in_code_block = in_code_block.saturating_sub(1),
            Event::Start(Tag::Heading { level, .. }) => {
                heading_start = Some((level as usize, abs));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, span)) = heading_start.take() {
                    out.headings.push(heading_mark(text, level, span, lines));
                }
            }
            Event::Text(t) if in_code_block == 0 => {
                tags::scan_inline(&t, &mut out.inline_tags);
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) => push_link(
                &mut out.links,
                text,
                &abs,
                link_type,
                &dest_url,
                false,
                lines,
            ),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                ..
            }) => push_link(
                &mut out.links,
                text,
                &abs,
                link_type,
                &dest_url,
                true,
                lines,
            ),
            _ => {}
        }
    }
    out
}

fn mark_lines(code_lines: &mut [bool], lines: &LineIndex, range: &Range<usize>) {
    let first = lines.line_of(range.start);
    let last = lines
        .line_of(range.end.saturating_sub(1).max(range.start))
        .min(code_lines.len() - 1);
    for flag in &mut code_lines[first..=last] {
        *flag = true;
    }
}

fn heading_mark(text: &str, level: usize, span: Range<usize>, lines: &LineIndex) -> HeadingMark {
    let first_line = lines.line_of(span.start);
    let last_line = lines.line_of(span.end.saturating_sub(1).max(span.start));
    let source = text[span].trim_end_matches(['\n', '\r']);
    let source_lines: Vec<&str> = source.lines().collect();
    let name = if source.trim_start().starts_with('#') {
        atx_name(source_lines.first().copied().unwrap_or(""))
    } else {
        // Setext: every line but the underline, joined.
        let content = &source_lines[..source_lines.len().saturating_sub(1)];
        content
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ")
    };
    HeadingMark {
        level,
        name,
        first_line,
        last_line,
    }
}

/// `## Foo ##` → `Foo`: strips the opening run of `#`, and a closing run preceded by a space.
fn atx_name(line: &str) -> String {
    let rest = line.trim_start().trim_start_matches('#').trim();
    let without_closing = rest.trim_end_matches('#');
    if without_closing.is_empty() {
        String::new()
    } else if without_closing.len() != rest.len() && without_closing.ends_with([' ', '\t']) {
        without_closing.trim_end().to_string()
    } else {
        rest.to_string()
    }
}

fn push_link(
    links: &mut Vec<Link>,
    text: &str,
    abs: &Range<usize>,
    link_type: LinkType,
    dest_url: &str,
    image: bool,
    lines: &LineIndex,
) {
    let line = lines.line_of(abs.start) + 1;
    match link_type {
        LinkType::WikiLink { .. } => {
            let source = &text[abs.clone()];
            // `[[inner]]`, or `![[inner]]` for an embed.
            let inner = source
                .trim_start_matches('!')
                .trim_start_matches("[[")
                .trim_end_matches("]]");
            if let Some(mut link) = parse_wikilink(inner) {
                link.kind = if image {
                    LinkKind::Embed
                } else {
                    LinkKind::Wiki
                };
                link.line = line;
                link.byte_range = abs.clone();
                links.push(link);
            }
        }
        LinkType::Inline | LinkType::Reference | LinkType::Collapsed | LinkType::Shortcut => {
            if let Some(mut link) = crate::links::parse_relative(dest_url) {
                link.line = line;
                link.byte_range = abs.clone();
                links.push(link);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atx_names() {
        assert_eq!(atx_name("## Foo ##"), "Foo");
        assert_eq!(atx_name("# C#"), "C#");
        assert_eq!(atx_name("### `ERR_X`"), "`ERR_X`");
        assert_eq!(atx_name("# Title #tag"), "Title #tag");
    }

    #[test]
    fn line_index_maps_offsets() {
        let idx = LineIndex::new("ab\ncd\n");
        assert_eq!(idx.len(), 3);
        assert_eq!(idx.line_of(0), 0);
        assert_eq!(idx.line_of(2), 0);
        assert_eq!(idx.line_of(3), 1);
        assert_eq!(idx.line_of(6), 2);
    }
}
