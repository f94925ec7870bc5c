//! PDF: the text of each page (pdf-extract), with the lines that repeat at the top or bottom of
//! most pages — running headers, footers, page numbers — removed ([`lines`]) and words that
//! typesetting split joined again ([`words`]). Every page has a `Page N` heading so a hit
//! cites its page. Above them go the document's own headings: its outline's entries, at the
//! pages they point at (`Guide › Installation › Page 3`), or, in a PDF without an outline,
//! the lines set in larger type, where they stand ([`headings`]).

mod headings;
mod lines;
mod words;

use std::collections::HashMap;

use headings::{Headings, Mark};
use lines::Line;

use crate::ConvertError;

fn malformed(detail: impl std::fmt::Display) -> ConvertError {
    ConvertError::Malformed {
        format: "PDF",
        detail: detail.to_string(),
    }
}

/// A page's body lines as Markdown paragraphs: block markers escaped, runs of blank lines
/// folded.
fn page_text(lines: &[&Line]) -> String {
    let mut out = Vec::new();
    let mut blank = true;
    for line in lines {
        if line.text.trim().is_empty() {
            if !blank {
                out.push(String::new());
            }
            blank = true;
        } else {
            out.push(crate::text::to_markdown(line.text.as_bytes()));
            blank = false;
        }
    }
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out.join("\n")
}

/// `text` under a heading of `level`, as a Markdown block followed by a blank line.
fn heading(out: &mut Vec<String>, level: usize, text: &str) {
    out.push(format!("{} {text}", "#".repeat(level.min(6))));
    out.push(String::new());
}

/// Appends the body lines gathered so far as paragraphs, and empties them.
fn flush(out: &mut Vec<String>, body: &mut Vec<&Line>) {
    let text = page_text(body);
    if !text.is_empty() {
        out.push(text);
        out.push(String::new());
    }
    body.clear();
}

pub fn to_markdown(bytes: &[u8]) -> Result<String, ConvertError> {
    let doc = pdf_extract::Document::load_mem(bytes).map_err(malformed)?;
    let encrypted = doc.is_encrypted();
    // Outline entries by page: (level from 1, title).
    let mut outline: HashMap<usize, Vec<(usize, String)>> = HashMap::new();
    let mut deepest = 0;
    if let Ok(toc) = doc.get_toc() {
        for entry in toc.toc {
            let title = entry.title.trim().replace('\n', " ");
            if title.is_empty() {
                continue;
            }
            deepest = deepest.max(entry.level);
            outline
                .entry(entry.page)
                .or_default()
                .push((entry.level, title));
        }
    }
    // lopdf opens a file encrypted with an empty user password on load; one that needs a
    // real password yields no readable text (or an error) here.
    let page_count = doc.get_pages().len();
    let mut pages: Vec<Vec<Line>> = Vec::with_capacity(page_count);
    for number in 1..=page_count {
        let mut collector = lines::LineCollector::default();
        match pdf_extract::output_doc_page(&doc, &mut collector, number as u32) {
            Ok(()) => {}
            Err(_) if encrypted => return Err(ConvertError::Encrypted),
            Err(e) => return Err(malformed(e)),
        }
        pages.push(collector.finish());
    }
    if pages.iter().flatten().all(|l| l.text.trim().is_empty()) {
        return Err(if encrypted {
            ConvertError::Encrypted
        } else {
            ConvertError::NoText
        });
    }
    let mut pages = lines::strip_running_lines(pages);
    for line in pages.iter_mut().flatten() {
        line.text = words::unfold(&line.text);
    }
    let vocabulary = words::vocabulary(&pages);
    for page in &mut pages {
        words::join_broken_words(page, &vocabulary);
    }
    // An outline is the author's own structure; type sizes stand in only without one.
    let sized = if outline.is_empty() {
        headings::by_size(&pages)
    } else {
        Headings::default()
    };
    let page_level = (deepest.max(sized.deepest) + 2).min(6);
    let mut out = Vec::new();
    for (p, lines) in pages.iter().enumerate() {
        let number = p + 1;
        for (level, title) in outline.get(&number).into_iter().flatten() {
            heading(&mut out, level + 1, title);
        }
        // Headings that open the page go above its page heading, so its text sits under both.
        let mut start = 0;
        while let Some(line) = lines.get(start) {
            match sized.marks.get(&(p, start)) {
                Some(Mark::Heading { rank, text }) => heading(&mut out, rank + 1, text),
                Some(Mark::Continued) => {}
                None if line.text.trim().is_empty() => {}
                None => break,
            }
            start += 1;
        }
        heading(&mut out, page_level, &format!("Page {number}"));
        let mut body: Vec<&Line> = Vec::new();
        for (i, line) in lines.iter().enumerate().skip(start) {
            match sized.marks.get(&(p, i)) {
                Some(Mark::Heading { rank, text }) => {
                    flush(&mut out, &mut body);
                    heading(&mut out, rank + 1, text);
                }
                Some(Mark::Continued) => {}
                None => body.push(line),
            }
        }
        flush(&mut out, &mut body);
    }
    Ok(out.join("\n"))
}
