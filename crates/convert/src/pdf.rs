//! PDF: the text of each page (pdf-extract), with the lines that repeat at the top or bottom of
//! most pages — running headers, footers, page numbers — removed. Every page starts with a
//! `Page N` heading so a hit cites its page; when the PDF has an outline, its entries become
//! the headings above the pages they point at (`Guide › Installation › Page 3`).

use std::collections::HashMap;

use crate::ConvertError;

fn malformed(detail: impl std::fmt::Display) -> ConvertError {
    ConvertError::Malformed {
        format: "PDF",
        detail: detail.to_string(),
    }
}

/// A line with its digits folded, so `Page 3 of 9` and `Page 4 of 9` count as one.
fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in line.trim().chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// How many lines at each end of a page can be running headers or footers: one, or two on a
/// page long enough that two lines at each end still leave a body.
fn edge_lines(filled: usize) -> usize {
    if filled >= 6 { 2 } else { 1 }
}

/// Drops lines that sit at the top or bottom of most pages (at least 3 pages, 60%).
fn strip_running_lines(pages: &[String]) -> Vec<Vec<String>> {
    let lines: Vec<Vec<String>> = pages
        .iter()
        .map(|p| {
            p.lines()
                .map(|l| l.trim_end().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let edges = |page: &Vec<String>| -> Vec<usize> {
        let filled: Vec<usize> = (0..page.len())
            .filter(|&i| !page[i].trim().is_empty())
            .collect();
        let n = edge_lines(filled.len());
        let mut idx: Vec<usize> = filled.iter().take(n).copied().collect();
        idx.extend(filled.iter().rev().take(n).copied());
        idx.sort_unstable();
        idx.dedup();
        idx
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for page in &lines {
        let mut seen: Vec<String> = edges(page).iter().map(|&i| shape(&page[i])).collect();
        seen.sort();
        seen.dedup();
        for s in seen {
            *counts.entry(s).or_default() += 1;
        }
    }
    let needed = ((lines.len() as f64) * 0.6).ceil() as usize;
    if lines.len() < 3 {
        return lines;
    }
    lines
        .iter()
        .map(|page| {
            let drop: Vec<usize> = edges(page)
                .into_iter()
                .filter(|&i| counts.get(&shape(&page[i])).is_some_and(|&n| n >= needed))
                .collect();
            page.iter()
                .enumerate()
                .filter(|(i, _)| !drop.contains(i))
                .map(|(_, l)| l.clone())
                .collect()
        })
        .collect()
}

/// A page's text as Markdown paragraphs: block markers escaped, runs of blank lines folded.
fn page_text(lines: &[String]) -> String {
    let mut out = Vec::new();
    let mut blank = true;
    for line in lines {
        if line.trim().is_empty() {
            if !blank {
                out.push(String::new());
            }
            blank = true;
        } else {
            out.push(crate::text::to_markdown(line.as_bytes()));
            blank = false;
        }
    }
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out.join("\n")
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
    let mut pages = Vec::with_capacity(page_count);
    for number in 1..=page_count {
        let mut text = String::new();
        {
            let mut output = pdf_extract::PlainTextOutput::new(&mut text);
            match pdf_extract::output_doc_page(&doc, &mut output, number as u32) {
                Ok(()) => {}
                Err(_) if encrypted => return Err(ConvertError::Encrypted),
                Err(e) => return Err(malformed(e)),
            }
        }
        pages.push(text);
    }
    if pages.iter().all(|p| p.trim().is_empty()) {
        return Err(if encrypted {
            ConvertError::Encrypted
        } else {
            ConvertError::NoText
        });
    }
    let page_level = if deepest == 0 {
        2
    } else {
        (deepest + 2).min(6)
    };
    let mut out = Vec::new();
    for (i, lines) in strip_running_lines(&pages).iter().enumerate() {
        let number = i + 1;
        if let Some(entries) = outline.get(&number) {
            for (level, title) in entries {
                out.push(format!("{} {title}", "#".repeat((level + 1).min(6))));
                out.push(String::new());
            }
        }
        out.push(format!("{} Page {number}", "#".repeat(page_level)));
        out.push(String::new());
        let text = page_text(lines);
        if !text.is_empty() {
            out.push(text);
            out.push(String::new());
        }
    }
    Ok(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_lines_are_dropped_and_body_kept() {
        let topics = ["apples", "pears", "plums", "figs"];
        let pages: Vec<String> = (1..=4)
            .map(|n| {
                let topic = topics[n - 1];
                format!(
                    "ACME Handbook\n\nBody text about {topic}.\nMore on {topic}.\n\nPage {n} of 4"
                )
            })
            .collect();
        let stripped = strip_running_lines(&pages);
        for (i, page) in stripped.iter().enumerate() {
            let text = page.join("\n");
            assert!(!text.contains("ACME Handbook"), "{text}");
            assert!(!text.contains("of 4"), "{text}");
            assert!(
                text.contains(&format!("Body text about {}", topics[i])),
                "{text}"
            );
            assert!(text.contains(&format!("More on {}", topics[i])), "{text}");
        }
    }
}
