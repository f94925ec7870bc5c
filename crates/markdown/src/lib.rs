//! Reading one Markdown document: frontmatter, heading sections, chunks with the 1-based line
//! ranges they came from, inline `#tags`, wikilinks and relative links.
//!
//! Pure: no I/O, no async, no knowledge of storage or embedders. The caller hands in the file's
//! text and name; everything returned is derived from those two alone.

mod chunk;
pub mod frontmatter;
pub mod links;
pub mod pieces;
mod scan;
pub mod tags;

pub use chunk::MAX_CHUNK_CHARS;
pub use links::{Link, LinkKind};

/// Bumped whenever chunk boundaries or texts change, so stored indexes are rebuilt.
pub const CHUNKER_VERSION: u32 = 1;

/// Separator between breadcrumb parts (U+203A with spaces), as ragdown writes it.
pub const BREADCRUMB_SEPARATOR: &str = " › ";

/// A document's metadata, from its frontmatter and body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata {
    /// Frontmatter `title`, else the first H1, else the file name without extension.
    pub title: String,
    /// Frontmatter and inline tags, normalised, sorted, de-duplicated.
    pub tags: Vec<String>,
    pub aliases: Vec<String>,
    pub description: Option<String>,
    /// As written in the frontmatter, relative to the document's directory.
    pub supersedes: Vec<String>,
    pub created_by: Option<String>,
    pub session: Option<String>,
}

/// The unit that is embedded and searched: one section, or one packed part of a long one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Heading path (`Backups › Restore`), empty for text before the first heading.
    pub heading: String,
    /// `Title › H2 › H3`: the heading path with the document title in front.
    pub breadcrumb: String,
    /// The chunk's own text, without breadcrumb.
    pub text: String,
    /// 1-based inclusive lines of the original file (frontmatter counted).
    pub line_start: usize,
    pub line_end: usize,
}

impl Chunk {
    /// What the embedder and BM25 read: breadcrumb, blank line, text.
    pub fn search_text(&self) -> String {
        format!("{}\n\n{}", self.breadcrumb, self.text)
    }
}

/// One heading and the lines its section spans (up to the next heading of the same or a
/// higher level), for reading a section by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadingSpan {
    pub level: usize,
    pub name: String,
    /// 1-based line of the heading itself.
    pub line: usize,
    /// 1-based last line of its section, sub-sections included.
    pub end_line: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document {
    pub meta: Metadata,
    pub chunks: Vec<Chunk>,
    pub headings: Vec<HeadingSpan>,
    pub links: Vec<Link>,
    /// Problems worth a log line (malformed frontmatter); the document is indexed anyway.
    pub warnings: Vec<String>,
    /// Lines in the file, counting the empty line after a trailing newline.
    pub total_lines: usize,
}

/// `breadcrumb(title, heading)`: the heading path with the title in front, unless the heading
/// is empty, is the title, or already starts with it.
pub fn breadcrumb(title: &str, heading: &str) -> String {
    if heading.is_empty() || heading == title {
        title.to_string()
    } else if heading
        .strip_prefix(title)
        .is_some_and(|rest| rest.starts_with(BREADCRUMB_SEPARATOR))
    {
        heading.to_string()
    } else {
        format!("{title}{BREADCRUMB_SEPARATOR}{heading}")
    }
}

/// Parses a document. `file_name` is its base name (extension included or not); it is the
/// title of last resort.
pub fn parse(file_name: &str, text: &str) -> Document {
    let line_index = scan::LineIndex::new(text);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut warnings = Vec::new();

    let span = frontmatter::find_span(&lines);
    let (front, body_first_line, preamble_first_line) = match span {
        None => (frontmatter::Frontmatter::default(), 0, 0),
        Some(span) => {
            let yaml = lines[1..span.closing_line].join("\n");
            match frontmatter::parse(&yaml) {
                Ok(front) => (front, span.closing_line + 1, span.closing_line + 1),
                Err(reason) => {
                    warnings.push(format!(
                        "frontmatter is not valid YAML ({reason}); the document is indexed \
                         as plain text — fix the block between the `---` lines"
                    ));
                    // Scan Markdown after the block, but keep its lines as plain text.
                    (
                        frontmatter::Frontmatter::default(),
                        span.closing_line + 1,
                        0,
                    )
                }
            }
        }
    };
    let body_start = line_index.start_of(body_first_line).min(text.len());
    let scanned = scan::scan(text, body_start, &line_index);

    let title = front
        .title
        .clone()
        .or_else(|| {
            scanned
                .headings
                .iter()
                .find(|h| h.level == 1 && !h.name.is_empty())
                .map(|h| h.name.clone())
        })
        .unwrap_or_else(|| stem(file_name).to_string());

    let mut chunks = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    // (heading path, first line, end line exclusive) for every section.
    let mut sections: Vec<(String, usize, usize)> = Vec::new();
    let first_heading_line = scanned
        .headings
        .first()
        .map_or(lines.len(), |h| h.first_line);
    sections.push((String::new(), preamble_first_line, first_heading_line));
    for (i, heading) in scanned.headings.iter().enumerate() {
        stack.truncate(heading.level.saturating_sub(1));
        stack.resize(heading.level.saturating_sub(1), String::new());
        stack.push(heading.name.clone());
        let path = stack
            .iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join(BREADCRUMB_SEPARATOR);
        let end = scanned
            .headings
            .get(i + 1)
            .map_or(lines.len(), |h| h.first_line);
        sections.push((path, heading.last_line + 1, end));
    }
    for (path, first, end) in sections {
        if first >= end {
            continue;
        }
        let paragraphs =
            chunk::paragraphs(&lines, &scanned.code_lines, first..end, MAX_CHUNK_CHARS);
        for piece in chunk::pack(paragraphs, MAX_CHUNK_CHARS) {
            chunks.push(Chunk {
                breadcrumb: breadcrumb(&title, &path),
                heading: path.clone(),
                text: piece.text,
                line_start: piece.first_line + 1,
                line_end: piece.last_line + 1,
            });
        }
    }
    if chunks.is_empty() {
        // A document with no text still gets one chunk, or it would look new on every sync.
        let body = lines[body_first_line.min(lines.len())..].join("\n");
        let body = body.trim();
        // Inside the file even when nothing follows the frontmatter (`---\n---`).
        let line_start = (body_first_line + 1).min(lines.len().max(1));
        chunks.push(Chunk {
            heading: String::new(),
            breadcrumb: title.clone(),
            text: if body.is_empty() {
                title.clone()
            } else {
                body.to_string()
            },
            line_start,
            line_end: lines.len().max(line_start),
        });
    }

    let headings = heading_spans(&scanned.headings, lines.len());
    let mut tags: Vec<String> = front
        .tags
        .iter()
        .filter_map(|t| tags::normalize(t))
        .chain(scanned.inline_tags)
        .collect();
    tags.sort();
    tags.dedup();

    Document {
        meta: Metadata {
            title,
            tags,
            aliases: front.aliases,
            description: front.description,
            supersedes: front.supersedes,
            created_by: front.created_by,
            session: front.session,
        },
        chunks,
        headings,
        links: scanned.links,
        warnings,
        total_lines: lines.len(),
    }
}

fn heading_spans(headings: &[scan::HeadingMark], total_lines: usize) -> Vec<HeadingSpan> {
    headings
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let end = headings[i + 1..]
                .iter()
                .find(|next| next.level <= h.level)
                .map_or(total_lines, |next| next.first_line);
            HeadingSpan {
                level: h.level,
                name: h.name.clone(),
                line: h.first_line + 1,
                end_line: end.max(h.first_line + 1),
            }
        })
        .collect()
}

/// File name without directory and Markdown extension.
pub fn stem(file_name: &str) -> &str {
    let base = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
    match base.rsplit_once('.') {
        Some((s, _)) if !s.is_empty() => s,
        _ => base,
    }
}

#[cfg(test)]
mod tests;
