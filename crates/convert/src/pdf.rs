//! PDF: the text of each page (pdf-extract), with the lines that repeat at the top or bottom of
//! most pages — running headers, footers, page numbers — removed. Every page starts with a
//! `Page N` heading so a hit cites its page; when the PDF has an outline, its entries become
//! the headings above the pages they point at (`Guide › Installation › Page 3`).
//!
//! Typesetting is undone where it splits words: a word hyphenated across a line end is joined
//! again (`config-` / `uration` → `configuration`, while `long-` / `term` stays `long-term`
//! when the document writes it so), soft hyphens are dropped and ligature characters (`ﬁ`)
//! become their letters, so BM25 and the embedder see the words a reader sees.

use std::collections::{HashMap, HashSet};

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

/// Latin ligatures a typeset PDF may carry as one character (U+FB00–FB06), and their letters.
const LIGATURES: [(char, &str); 7] = [
    ('\u{FB00}', "ff"),
    ('\u{FB01}', "fi"),
    ('\u{FB02}', "fl"),
    ('\u{FB03}', "ffi"),
    ('\u{FB04}', "ffl"),
    ('\u{FB05}', "st"),
    ('\u{FB06}', "st"),
];

/// The soft hyphen: where a word may break, invisible unless it does.
const SOFT_HYPHEN: char = '\u{00AD}';

/// `line` with its ligatures spelled out and its soft hyphens dropped, except one ending the
/// line, which marks a word broken there.
fn unfold(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let last = line.char_indices().last().map(|(i, _)| i);
    for (i, c) in line.char_indices() {
        match LIGATURES.iter().find(|(l, _)| *l == c) {
            Some((_, letters)) => out.push_str(letters),
            None if c == SOFT_HYPHEN && Some(i) != last => {}
            None => out.push(c),
        }
    }
    out
}

/// What is left of a token once the punctuation around it is trimmed (inner hyphens stay,
/// so `long-term` is one word).
fn core(token: &str) -> &str {
    token.trim_matches(|c: char| !c.is_alphanumeric())
}

/// A word as the document writes it, lower-cased ([`core`]).
fn word(token: &str) -> String {
    core(token).to_lowercase()
}

/// Every word of the document's lines ([`word`]), the evidence for how a word broken at a
/// line end is written whole.
fn vocabulary(pages: &[Vec<String>]) -> HashSet<String> {
    pages
        .iter()
        .flatten()
        .flat_map(|line| line.split_whitespace().map(word))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The hyphen ending `line` when it breaks a word there: right after a letter, so a dash
/// (`see below -`, `--`) is left alone.
fn breaking_hyphen(line: &str) -> Option<char> {
    let mut chars = line.chars().rev();
    let hyphen = chars
        .next()
        .filter(|c| matches!(*c, '-' | '\u{2010}' | SOFT_HYPHEN))?;
    chars.next().filter(|c| c.is_alphabetic())?;
    Some(hyphen)
}

/// Whether `head` + `tail`, split at a line end by `hyphen`, is one word whose hyphen only
/// the line break put there. The document decides when it writes either form elsewhere;
/// otherwise only a plain word breaks by typesetting (`manip-ulation`, `Docu-ment`: letters,
/// lower case after a first capital), and anything else keeps its hyphen (`Wi-Fi`,
/// `state-of-the-art`, `YYMMDDhhmm-hh'mm'`).
fn hyphen_is_typesetting(head: &str, tail: &str, hyphen: char, words: &HashSet<String>) -> bool {
    if hyphen == SOFT_HYPHEN {
        return true;
    }
    let (head, tail) = (core(head), core(tail));
    let (head_word, tail_word) = (head.to_lowercase(), tail.to_lowercase());
    if words.contains(&format!("{head_word}{tail_word}")) {
        return true;
    }
    if words.contains(&format!("{head_word}-{tail_word}")) {
        return false;
    }
    let lower = |part: &str| part.chars().all(|c| c.is_alphabetic() && c.is_lowercase());
    let mut head_chars = head.chars();
    head_chars.next().is_some_and(char::is_alphabetic)
        && lower(head_chars.as_str())
        && !tail.is_empty()
        && lower(tail)
}

/// Joins the words a page's lines break with a hyphen: the next line's first token moves up
/// behind the broken word (a next line left empty goes), and the hyphen stays only in a
/// compound ([`hyphen_is_typesetting`]). Lines are otherwise kept as they are.
fn join_broken_words(lines: &mut Vec<String>, words: &HashSet<String>) {
    let mut i = 0;
    while i + 1 < lines.len() {
        let Some(hyphen) = breaking_hyphen(&lines[i]) else {
            i += 1;
            continue;
        };
        let next = lines[i + 1].trim_start();
        let tail_len = next.find(char::is_whitespace).unwrap_or(next.len());
        let tail = &next[..tail_len];
        if !tail.chars().next().is_some_and(char::is_alphanumeric) {
            i += 1;
            continue;
        }
        let head_line = &lines[i][..lines[i].len() - hyphen.len_utf8()];
        let head = head_line.rsplit(char::is_whitespace).next().unwrap_or("");
        let keep = !hyphen_is_typesetting(head, tail, hyphen, words);
        let mut joined = head_line.to_string();
        if keep {
            joined.push(hyphen);
        }
        joined.push_str(tail);
        let rest = next[tail_len..].trim_start().to_string();
        lines[i] = joined;
        if rest.is_empty() {
            lines.remove(i + 1);
        } else {
            lines[i + 1] = rest;
        }
        // The moved token may itself end broken: look at this line again.
    }
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
    let mut pages: Vec<Vec<String>> = strip_running_lines(&pages)
        .into_iter()
        .map(|lines| lines.iter().map(|l| unfold(l)).collect())
        .collect();
    let words = vocabulary(&pages);
    for lines in &mut pages {
        join_broken_words(lines, &words);
    }
    let mut out = Vec::new();
    for (i, lines) in pages.iter().enumerate() {
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

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|l| l.to_string()).collect()
    }

    fn joined(text: &[&str], elsewhere: &[&str]) -> Vec<String> {
        let mut page = lines(text);
        let words = vocabulary(&[page.clone(), lines(elsewhere)]);
        join_broken_words(&mut page, &words);
        page
    }

    #[test]
    fn a_word_broken_by_typesetting_is_whole_again() {
        assert_eq!(
            joined(
                &[
                    "Check the config-",
                    "uration of the replica-",
                    "tion service."
                ],
                &[]
            ),
            ["Check the configuration", "of the replication", "service."]
        );
        // A next line holding only the rest of the word goes.
        assert_eq!(
            joined(&["the manip-", "ulation", "", "Next paragraph."], &[]),
            ["the manipulation", "", "Next paragraph."]
        );
        // Punctuation after the word moves with it.
        assert_eq!(
            joined(&["see the appen-", "dix, then stop"], &[]),
            ["see the appendix,", "then stop"]
        );
    }

    #[test]
    fn compounds_keep_their_hyphen() {
        // The document writes the compound whole elsewhere.
        assert_eq!(
            joined(&["a long-", "term plan"], &["Long-term support."]),
            ["a long-term", "plan"]
        );
        // ... or the joined word, which wins over the default.
        assert_eq!(
            joined(&["a Post-", "greSQL mirror"], &["Run PostgreSQL 16."]),
            ["a PostgreSQL", "mirror"]
        );
        // Without evidence: a capital or a hyphen already in the word marks a compound.
        assert_eq!(
            joined(&["the Wi-", "Fi router"], &[]),
            ["the Wi-Fi", "router"]
        );
        assert_eq!(
            joined(&["a state-of-the-", "art index"], &[]),
            ["a state-of-the-art", "index"]
        );
    }

    #[test]
    fn dashes_and_paragraph_ends_are_left_alone() {
        let kept = |text: &[&str]| assert_eq!(joined(text, &[]), lines(text));
        kept(&["see below -", "then stop"]);
        kept(&["options --", "verbose"]);
        kept(&["rate 10-", "20 per cent"]);
        kept(&["a broken-", "", "paragraph"]);
        kept(&["last line of the page-"]);
        kept(&["a hyphen-", "(aside)"]);
    }

    #[test]
    fn identifiers_keep_their_hyphen_unless_the_document_writes_them_whole() {
        assert_eq!(
            joined(&["format \"YYMMDDhhmm-", "hh'mm'\" only"], &[]),
            ["format \"YYMMDDhhmm-hh'mm'\"", "only"]
        );
        assert_eq!(
            joined(
                &["formats: \"YYM-", "MDDhhmmss\" and"],
                &["like \"YYMMDDhhmmss\""]
            ),
            ["formats: \"YYMMDDhhmmss\"", "and"]
        );
    }

    #[test]
    fn ligatures_and_soft_hyphens_become_plain_letters() {
        assert_eq!(
            unfold("the \u{FB01}rst con\u{FB01}g\u{FB02}ag"),
            "the first configflag"
        );
        assert_eq!(unfold("o\u{FB03}ce e\u{FB00}ort"), "office effort");
        assert_eq!(unfold("repli\u{AD}cation"), "replication");
        // A soft hyphen ending the line breaks the word there, whatever its letters.
        let page = lines(&[&unfold("the Repli\u{AD}"), "Cation set"]);
        assert_eq!(
            joined(&page.iter().map(String::as_str).collect::<Vec<_>>(), &[]),
            ["the RepliCation", "set"]
        );
    }
}
