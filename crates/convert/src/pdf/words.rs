//! Typesetting undone where it splits words: a word hyphenated across a line end is joined
//! again (`config-` / `uration` → `configuration`, while `long-` / `term` stays `long-term`
//! when the document writes it so), soft hyphens are dropped and ligature characters (`ﬁ`)
//! become their letters, so BM25 and the embedder see the words a reader sees.

use std::collections::HashSet;

use super::lines::Line;

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
pub fn unfold(line: &str) -> String {
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
pub fn vocabulary(pages: &[Vec<Line>]) -> HashSet<String> {
    pages
        .iter()
        .flatten()
        .flat_map(|line| line.text.split_whitespace().map(word))
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
pub fn join_broken_words(lines: &mut Vec<Line>, words: &HashSet<String>) {
    let mut i = 0;
    while i + 1 < lines.len() {
        let Some(hyphen) = breaking_hyphen(&lines[i].text) else {
            i += 1;
            continue;
        };
        let next = lines[i + 1].text.trim_start();
        let tail_len = next.find(char::is_whitespace).unwrap_or(next.len());
        let tail = &next[..tail_len];
        if !tail.chars().next().is_some_and(char::is_alphanumeric) {
            i += 1;
            continue;
        }
        let head_line = &lines[i].text[..lines[i].text.len() - hyphen.len_utf8()];
        let head = head_line.rsplit(char::is_whitespace).next().unwrap_or("");
        let keep = !hyphen_is_typesetting(head, tail, hyphen, words);
        let mut joined = head_line.to_string();
        if keep {
            joined.push(hyphen);
        }
        joined.push_str(tail);
        let rest = next[tail_len..].trim_start().to_string();
        lines[i].text = joined;
        if rest.is_empty() {
            lines.remove(i + 1);
        } else {
            lines[i + 1].text = rest;
        }
        // The moved token may itself end broken: look at this line again.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[&str]) -> Vec<Line> {
        text.iter().map(|l| Line::plain(l)).collect()
    }

    fn joined(text: &[&str], elsewhere: &[&str]) -> Vec<String> {
        let mut page = lines(text);
        let words = vocabulary(&[page.clone(), lines(elsewhere)]);
        join_broken_words(&mut page, &words);
        page.into_iter().map(|l| l.text).collect()
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
        let kept = |text: &[&str]| assert_eq!(joined(text, &[]), text);
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
        let broken = unfold("the Repli\u{AD}");
        assert_eq!(
            joined(&[&broken, "Cation set"], &[]),
            ["the RepliCation", "set"]
        );
    }
}
