//! Rendering one Markdown document to safe HTML for the web UI: CommonMark (tables, task lists,
//! strikethrough) with `[[wikilinks]]`, `![[embeds]]`, relative links and images resolved by the
//! caller's [`Resolve`] (in the server that is the index's resolver — the one resolver ragdown
//! has), headings anchored and tagged with the line ranges search hits cite, the frontmatter
//! returned as a property table, and everything passed through `ammonia`.
//!
//! Documents are untrusted (an agent writes them): what comes out holds no script, no event
//! handler, no `javascript:`/`data:` URL and no remote image, whatever the Markdown or its raw
//! HTML says. Pure: no I/O; it must not know folders, the index or HTTP — the caller's resolver
//! answers every "which document is this?".

mod tame;

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};
use ragdown_markdown::frontmatter;
use ragdown_markdown::links::{parse_relative, parse_wikilink};
use serde::Serialize;

/// Answers what a link names. Paths are the ones the UI opens (`work/notes/a.md`: folder first).
pub trait Resolve {
    /// The document `target` (as written in the link, without `#heading`) names.
    fn document(&self, target: &str) -> Option<String>;
    /// The file (an image, an attachment) `target` names.
    fn file(&self, target: &str) -> Option<String>;
}

/// A heading of the rendered document: its anchor (`id` is `h-` + anchor) and the 1-based lines
/// its section spans, sub-sections included — the range a search hit in it cites.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RenderedHeading {
    pub anchor: String,
    pub level: usize,
    pub name: String,
    pub line: usize,
    pub end_line: usize,
}

/// One frontmatter key and its value as one display line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Property {
    pub key: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rendered {
    /// Sanitised HTML of the body (the frontmatter is in `properties`, not here).
    pub html: String,
    pub headings: Vec<RenderedHeading>,
    pub properties: Vec<Property>,
    /// Why the frontmatter could not be read, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frontmatter_error: Option<String>,
}

/// The prefix `ammonia` puts before every `id`, so a document cannot clobber the app's own ids.
pub const ID_PREFIX: &str = "h-";

const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp", "svg", "avif", "bmp"];

/// What a path segment keeps unencoded in a `/f/…` URL.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\'');

/// The app's URL of a document: `/f/<folder>/<path>`, each segment percent-encoded.
pub fn document_url(path: &str) -> String {
    let encoded: Vec<String> = path
        .split('/')
        .map(|segment| utf8_percent_encode(segment, SEGMENT).to_string())
        .collect();
    format!("/f/{}", encoded.join("/"))
}

/// A heading's anchor: lower-case words joined by `-`, punctuation and markup dropped
/// (`## Restore **fast**!` → `restore-fast`). Letters of any script are kept.
pub fn slug(heading: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    for c in heading.chars() {
        if c.is_alphanumeric() || c == '_' || c == '-' {
            if gap && !out.is_empty() {
                out.push('-');
            }
            gap = false;
            out.extend(c.to_lowercase());
        } else if c.is_whitespace() {
            gap = true;
        }
    }
    out
}

/// Renders `text` (the whole file, frontmatter included: line numbers count it).
pub fn render(text: &str, resolve: &dyn Resolve) -> Rendered {
    let lines: Vec<&str> = text.split('\n').collect();
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let (body_start, properties, frontmatter_error) = match frontmatter::find_span(&lines) {
        Some(span) => {
            let yaml_start = line_starts.get(1).copied().unwrap_or(text.len());
            let body_start = line_starts
                .get(span.closing_line + 1)
                .copied()
                .unwrap_or(text.len());
            let yaml_end = line_starts
                .get(span.closing_line)
                .copied()
                .unwrap_or(text.len());
            let yaml = &text[yaml_start.min(yaml_end)..yaml_end];
            match frontmatter::properties(yaml) {
                Ok(props) => (body_start, props, None),
                Err(why) => (body_start, Vec::new(), Some(why)),
            }
        }
        None => (0, Vec::new(), None),
    };
    let spans = ragdown_markdown::parse("", text).headings;
    let mut headings = Vec::new();
    let mut taken: HashMap<String, usize> = HashMap::new();
    let line_of = |offset: usize| match line_starts.binary_search(&offset) {
        Ok(i) => i + 1,
        Err(i) => i,
    };

    let options = Options::ENABLE_WIKILINKS
        | Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    let mut events = Parser::new_ext(&text[body_start..], options).into_offset_iter();
    let mut out: Vec<Event> = Vec::new();
    while let Some((event, range)) = events.next() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let line = line_of(range.start + body_start);
                let level = level as usize;
                let (name, end_line) = spans
                    .iter()
                    .find(|s| s.line == line)
                    .map_or((String::new(), line), |s| (s.name.clone(), s.end_line));
                let mut anchor = slug(&name);
                if anchor.is_empty() {
                    anchor = format!("line-{line}");
                }
                let seen = taken.entry(anchor.clone()).or_insert(0);
                if *seen > 0 {
                    anchor = format!("{anchor}-{seen}");
                }
                *seen += 1;
                out.push(Event::Html(
                    format!(
                        "<h{level} id=\"{}\" data-line=\"{line}\" data-end-line=\"{end_line}\">",
                        attr(&anchor)
                    )
                    .into(),
                ));
                headings.push(RenderedHeading {
                    anchor,
                    level,
                    name,
                    line,
                    end_line,
                });
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) => out.push(Event::Html(link_open(link_type, &dest_url, resolve).into())),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                ..
            }) => {
                // The alt text is everything up to the image's end; it is read here, not emitted.
                let mut alt = String::new();
                let mut depth = 1usize;
                for (inner, _) in events.by_ref() {
                    match inner {
                        Event::Start(Tag::Image { .. }) => depth += 1,
                        Event::End(TagEnd::Image) => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Event::Text(t) | Event::Code(t) => alt.push_str(&t),
                        _ => {}
                    }
                }
                out.push(Event::Html(
                    image(link_type, &dest_url, &alt, resolve).into(),
                ));
            }
            other => out.push(other),
        }
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, out.into_iter());
    Rendered {
        html: SANITIZER.clean(&tame::tame(&html)).to_string(),
        headings,
        properties: properties
            .into_iter()
            .map(|(key, value)| Property { key, value })
            .collect(),
        frontmatter_error,
    }
}

/// The sanitiser every rendered document goes through: ammonia's defaults (no script, no
/// event handlers, only safe URL schemes, `rel="noopener noreferrer"` on links) plus the
/// attributes and classes this renderer itself writes.
static SANITIZER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut builder = ammonia::Builder::default();
    builder
        .add_tags(["input"])
        .add_tag_attributes("input", ["type", "checked", "disabled"])
        // No `src` a document could point anywhere: the app fills images from `data-file`.
        .rm_tag_attributes("img", &["src"])
        .add_tag_attributes("img", ["data-file"])
        .add_tag_attributes("a", ["data-file"])
        .add_tag_attributes("span", ["data-embed", "data-anchor"])
        .id_prefix(Some(ID_PREFIX))
        // A task list's box is the only input a document shows.
        .attribute_filter(|element, attribute, value| {
            if element == "input" && attribute == "type" && value != "checkbox" {
                None
            } else {
                Some(value.into())
            }
        });
    for h in ["h1", "h2", "h3", "h4", "h5", "h6"] {
        builder.add_tag_attributes(h, ["id", "data-line", "data-end-line"]);
    }
    let classes: HashMap<&str, HashSet<&str>> = HashMap::from([
        (
            "a",
            HashSet::from(["wikilink", "unresolved", "external", "file"]),
        ),
        ("span", HashSet::from(["embed", "unresolved"])),
    ]);
    builder.allowed_classes(classes);
    builder
});

/// Escapes text for a double-quoted attribute value or element content.
fn attr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn is_image(target: &str) -> bool {
    target
        .rsplit_once('.')
        .is_some_and(|(_, ext)| IMAGE_EXTENSIONS.iter().any(|e| e.eq_ignore_ascii_case(ext)))
}

/// `href` of a resolved document, with `#anchor` when a heading was named.
fn document_href(path: &str, heading: Option<&str>) -> String {
    match heading.map(slug).filter(|s| !s.is_empty()) {
        Some(anchor) => format!("{}#{anchor}", document_url(path)),
        None => document_url(path),
    }
}

/// The opening `<a …>` of a link.
fn link_open(link_type: LinkType, dest: &CowStr, resolve: &dyn Resolve) -> String {
    let unresolved = |target: &str| {
        format!(
            "<a class=\"unresolved\" title=\"{}\">",
            attr(&format!("no document or file named {target}"))
        )
    };
    let (target, heading) = if let LinkType::WikiLink { .. } = link_type {
        match parse_wikilink(dest) {
            Some(link) => (link.target, link.heading),
            None => return unresolved(dest),
        }
    } else if let Some(link) = parse_relative(dest) {
        (link.target, link.heading)
    } else if let Some(anchor) = dest.strip_prefix('#') {
        return format!("<a href=\"#{}\">", attr(&slug(anchor)));
    } else {
        // An absolute URL: ammonia keeps it only with a safe scheme.
        return format!("<a class=\"external\" href=\"{}\">", attr(dest));
    };
    if target.is_empty() {
        let anchor = heading.as_deref().map(slug).unwrap_or_default();
        return format!("<a href=\"#{}\">", attr(&anchor));
    }
    if let Some(path) = resolve.document(&target) {
        return format!(
            "<a class=\"wikilink\" href=\"{}\">",
            attr(&document_href(&path, heading.as_deref()))
        );
    }
    match resolve.file(&target) {
        Some(path) => format!(
            "<a class=\"file\" href=\"#\" data-file=\"{}\">",
            attr(&path)
        ),
        None => unresolved(&target),
    }
}

/// An image or an embed: a local image becomes `<img data-file>` (the app fetches it with the
/// token), an embedded document a `<span class="embed">` the app fills in; a remote image is
/// shown as a link, never loaded (it would tell a stranger the document was opened).
fn image(link_type: LinkType, dest: &CowStr, alt: &str, resolve: &dyn Resolve) -> String {
    let (target, heading) = if let LinkType::WikiLink { .. } = link_type {
        match parse_wikilink(dest) {
            Some(link) => (link.target, link.heading),
            None => (String::new(), None),
        }
    } else if let Some(link) = parse_relative(dest) {
        (link.target, link.heading)
    } else {
        return format!(
            "<a class=\"external\" href=\"{}\">{}</a>",
            attr(dest),
            attr(if alt.is_empty() { dest } else { alt })
        );
    };
    let shown = if alt.is_empty() { &target } else { alt };
    if !target.is_empty() && !is_image(&target) {
        if let Some(path) = resolve.document(&target) {
            let anchor = heading.as_deref().map(slug).unwrap_or_default();
            return format!(
                "<span class=\"embed\" data-embed=\"{}\" data-anchor=\"{}\"><a class=\"wikilink\" href=\"{}\">{}</a></span>",
                attr(&path),
                attr(&anchor),
                attr(&document_href(&path, heading.as_deref())),
                attr(shown)
            );
        }
    } else if let Some(path) = resolve.file(&target) {
        return format!(
            "<img data-file=\"{}\" alt=\"{}\">",
            attr(&path),
            attr(shown)
        );
    }
    format!(
        "<span class=\"unresolved\" title=\"{}\">{}</span>",
        attr(&format!("no document or file named {target}")),
        attr(shown)
    )
}

#[cfg(test)]
mod tests;
