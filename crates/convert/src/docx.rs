//! DOCX: `word/document.xml` read as a stream of paragraphs — Word's heading styles become
//! Markdown headings, numbered and bulleted paragraphs list items, tables Markdown tables (the
//! first row as the header). Parts are inflated with a byte limit, so a zip bomb stops at the
//! limit.
//!
//! A heading style is known by what `word/styles.xml` says of it, not by its id: Word stores
//! the built-in names in English (`heading 2`, `Title`) whatever the language of the
//! document, while the ids are localised (`berschrift2` in German, `Titre2` in French, `2` in
//! Japanese). A style with an outline level, or based on a heading style, is a heading too,
//! and so is a paragraph given an outline level of its own.

use std::collections::HashMap;
use std::io::Read;

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::{ConvertError, Limits};

fn malformed(detail: impl std::fmt::Display) -> ConvertError {
    ConvertError::Malformed {
        format: "DOCX",
        detail: detail.to_string(),
    }
}

type Archive<'a> = zip::ZipArchive<std::io::Cursor<&'a [u8]>>;

/// The XML of the part `name`, inflated to at most `limit` bytes; `None` when the file has no
/// such part.
fn part_xml(
    archive: &mut Archive,
    name: &str,
    limit: u64,
) -> Result<Option<Vec<u8>>, ConvertError> {
    let mut part = match archive.by_name(name) {
        Ok(part) => part,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(malformed(e)),
    };
    if part.encrypted() {
        return Err(ConvertError::Encrypted);
    }
    if part.size() > limit {
        return Err(ConvertError::TooLarge(format!(
            "its text part inflates to {} bytes (the limit is {limit})",
            part.size()
        )));
    }
    let mut xml = Vec::new();
    // The declared size can lie: read one byte past the limit to tell.
    (&mut part)
        .take(limit + 1)
        .read_to_end(&mut xml)
        .map_err(malformed)?;
    if xml.len() as u64 > limit {
        return Err(ConvertError::TooLarge(format!(
            "its text part inflates past {limit} bytes"
        )));
    }
    Ok(Some(xml))
}

/// What `styles.xml` says of one paragraph style.
#[derive(Default)]
struct Style {
    name: String,
    based_on: Option<String>,
    outline: Option<usize>,
}

/// Heading level of an outline level (`w:outlineLvl`, 0-based; 9 is body text).
fn outline_level(value: &str) -> Option<usize> {
    let level: usize = value.parse().ok()?;
    (level < 9).then_some((level + 1).min(6))
}

/// The heading level of each paragraph style id that `styles_xml` makes a heading: by its
/// built-in name (`heading 2` → 2, `Title` → 0), its outline level, or the style it is
/// based on.
fn heading_styles(styles_xml: &[u8]) -> Result<HashMap<String, usize>, ConvertError> {
    let mut reader = Reader::from_reader(styles_xml);
    let mut styles: HashMap<String, Style> = HashMap::new();
    let mut current: Option<(String, Style)> = None;
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf).map_err(malformed)? {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                b"style" => {
                    current = (attr(&e, b"w:type").as_deref() == Some("paragraph"))
                        .then(|| attr(&e, b"w:styleId"))
                        .flatten()
                        .map(|id| (id, Style::default()));
                }
                b"name" => {
                    if let (Some((_, style)), Some(name)) = (current.as_mut(), attr(&e, b"w:val")) {
                        style.name = name;
                    }
                }
                b"basedOn" => {
                    if let Some((_, style)) = current.as_mut() {
                        style.based_on = attr(&e, b"w:val");
                    }
                }
                b"outlineLvl" => {
                    if let Some((_, style)) = current.as_mut() {
                        style.outline = attr(&e, b"w:val").as_deref().and_then(outline_level);
                    }
                }
                _ => {}
            },
            Event::End(e) if e.local_name().as_ref() == b"style" => {
                if let Some((id, style)) = current.take() {
                    styles.insert(id, style);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    let own_level = |style: &Style| heading_level(&style.name.replace(' ', "")).or(style.outline);
    let mut levels = HashMap::new();
    for (id, style) in &styles {
        // Follow `basedOn` a few steps (a cycle in a broken file ends there).
        let mut at = style;
        for _ in 0..8 {
            if let Some(level) = own_level(at) {
                levels.insert(id.clone(), level);
                break;
            }
            match at.based_on.as_ref().and_then(|b| styles.get(b)) {
                Some(parent) => at = parent,
                None => break,
            }
        }
    }
    Ok(levels)
}

#[derive(Default)]
struct Paragraph {
    text: String,
    heading: Option<usize>,
    list_level: Option<usize>,
}

/// One block of the converted text, in document order.
enum Block {
    /// A heading: its level (0 for the document's `Title`, 1 for `heading 1`…) and text.
    Heading(usize, String),
    /// A list item, as Markdown (indented by its level).
    Item(String),
    /// A paragraph or a table, as Markdown.
    Text(String),
}

impl Paragraph {
    fn block(&self) -> Option<Block> {
        let text = self.text.trim();
        if text.is_empty() {
            return None;
        }
        Some(match (self.heading, self.list_level) {
            (Some(level), _) => Block::Heading(level, text.to_string()),
            (None, Some(level)) => Block::Item(format!("{}- {text}", "  ".repeat(level))),
            // A paragraph that starts like a Markdown block (`# not a heading`) stays text.
            (None, None) => Block::Text(crate::text::to_markdown(text.as_bytes())),
        })
    }
}

/// Heading level of a Word paragraph style id or name without spaces (`Heading2` → 2,
/// `Title` → 0: the document's title, above every heading).
fn heading_level(style: &str) -> Option<usize> {
    let lower = style.to_ascii_lowercase();
    if lower == "title" {
        return Some(0);
    }
    let n = lower
        .strip_prefix("heading")?
        .trim()
        .parse::<usize>()
        .ok()?;
    (1..=6).contains(&n).then_some(n)
}

fn attr(e: &quick_xml::events::BytesStart, name: &[u8]) -> Option<String> {
    e.attributes()
        .filter_map(Result::ok)
        .find(|a| a.key.as_ref() == name)
        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
}

fn table_markdown(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    if width == 0 {
        return String::new();
    }
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let line = |row: &Vec<String>| {
        let mut cells: Vec<String> = row.iter().map(|c| cell(c.trim())).collect();
        cells.resize(width, String::new());
        format!("| {} |", cells.join(" | "))
    };
    let mut out = vec![line(&rows[0]), format!("|{}", " --- |".repeat(width))];
    out.extend(rows[1..].iter().map(line));
    out.join("\n")
}

/// The walk over the XML: the paragraph being read, the table being read, the blocks done.
#[derive(Default)]
struct Walk {
    /// Heading level of each paragraph style id `styles.xml` makes a heading.
    heading_styles: HashMap<String, usize>,
    blocks: Vec<Block>,
    paragraph: Option<Paragraph>,
    /// Tables: rows of cells; a cell's paragraphs are joined with spaces. Nested tables are
    /// flattened into their cell.
    table_depth: usize,
    rows: Vec<Vec<String>>,
    in_text: bool,
}

impl Walk {
    fn open(&mut self, e: &quick_xml::events::BytesStart, empty: bool) {
        match e.local_name().as_ref() {
            b"p" if !empty => self.paragraph = Some(Paragraph::default()),
            b"pStyle" => {
                if let (Some(p), Some(style)) = (self.paragraph.as_mut(), attr(e, b"w:val")) {
                    p.heading = self
                        .heading_styles
                        .get(&style)
                        .copied()
                        .or_else(|| heading_level(&style));
                }
            }
            b"outlineLvl" => {
                if let Some(p) = self.paragraph.as_mut()
                    && let Some(level) = attr(e, b"w:val").as_deref().and_then(outline_level)
                {
                    p.heading = Some(level);
                }
            }
            b"ilvl" => {
                if let Some(p) = self.paragraph.as_mut() {
                    p.list_level =
                        Some(attr(e, b"w:val").and_then(|v| v.parse().ok()).unwrap_or(0));
                }
            }
            b"numPr" => {
                if let Some(p) = self.paragraph.as_mut() {
                    p.list_level.get_or_insert(0);
                }
            }
            b"t" if !empty => self.in_text = true,
            b"tab" => self.push_text("\t"),
            // Word keeps a hyphen that must not break a line as an element of its own; a soft
            // hyphen (`softHyphen`) marks where a word may break and is no text.
            b"noBreakHyphen" => self.push_text("-"),
            b"br" | b"cr" => self.push_text(" "),
            b"tbl" if !empty => {
                self.table_depth += 1;
                if self.table_depth == 1 {
                    self.rows.clear();
                }
            }
            b"tr" if self.table_depth == 1 && !empty => self.rows.push(Vec::new()),
            b"tc" if self.table_depth == 1 && !empty => {
                if let Some(row) = self.rows.last_mut() {
                    row.push(String::new());
                }
            }
            _ => {}
        }
    }

    fn push_text(&mut self, text: &str) {
        if let Some(p) = self.paragraph.as_mut() {
            p.text.push_str(text);
        }
    }

    fn close(&mut self, name: &[u8]) {
        match name {
            b"t" => self.in_text = false,
            b"p" => {
                let Some(p) = self.paragraph.take() else {
                    return;
                };
                if self.table_depth > 0 {
                    if let Some(cell) = self.rows.last_mut().and_then(|r| r.last_mut()) {
                        if !cell.is_empty() {
                            cell.push(' ');
                        }
                        cell.push_str(p.text.trim());
                    }
                } else if let Some(block) = p.block() {
                    self.blocks.push(block);
                }
            }
            b"tbl" => {
                self.table_depth = self.table_depth.saturating_sub(1);
                if self.table_depth == 0 {
                    let table = table_markdown(&self.rows);
                    if !table.is_empty() {
                        self.blocks.push(Block::Text(table));
                    }
                    self.rows.clear();
                }
            }
            _ => {}
        }
    }
}

pub fn to_markdown(bytes: &[u8], limits: &Limits) -> Result<String, ConvertError> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(malformed)?;
    let xml = part_xml(&mut archive, "word/document.xml", limits.max_inflated_bytes)?
        .ok_or_else(|| malformed("it has no word/document.xml"))?;
    // A file without styles (or with ones that do not parse) still has its text; its
    // headings then go by the English style ids alone.
    let heading_styles = match part_xml(&mut archive, "word/styles.xml", limits.max_inflated_bytes)?
    {
        Some(styles) => heading_styles(&styles).unwrap_or_default(),
        None => HashMap::new(),
    };
    let mut reader = Reader::from_reader(xml.as_slice());
    let mut walk = Walk {
        heading_styles,
        ..Walk::default()
    };
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf).map_err(malformed)? {
            Event::Start(e) => walk.open(&e, false),
            Event::Empty(e) => walk.open(&e, true),
            Event::End(e) => walk.close(e.local_name().as_ref()),
            Event::Text(t) if walk.in_text => {
                let text = t.decode().map_err(malformed)?;
                walk.push_text(&text);
            }
            Event::GeneralRef(r) if walk.in_text => {
                // Entities inside <w:t>: the five XML ones and character references.
                let name = r.decode().map_err(malformed)?;
                let ch = match name.as_ref() {
                    "amp" => Some('&'),
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "quot" => Some('"'),
                    "apos" => Some('\''),
                    _ => r.resolve_char_ref().ok().flatten(),
                };
                if let Some(c) = ch {
                    walk.push_text(c.encode_utf8(&mut [0u8; 4]));
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    let blocks = walk.blocks;
    // A document with a Title puts it at `#` and its headings one level below it, so every
    // section's breadcrumb starts with the title.
    let below_title = usize::from(blocks.iter().any(|b| matches!(b, Block::Heading(0, _))));
    // Consecutive list items stay together; everything else is a paragraph of its own.
    let mut out = String::new();
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            let both_items = matches!((&blocks[i - 1], block), (Block::Item(_), Block::Item(_)));
            out.push_str(if both_items { "\n" } else { "\n\n" });
        }
        match block {
            Block::Heading(level, text) => {
                let level = (level + below_title).clamp(1, 6);
                out.push_str(&format!("{} {text}", "#".repeat(level)));
            }
            Block::Item(md) | Block::Text(md) => out.push_str(md),
        }
    }
    out.push('\n');
    Ok(out)
}
