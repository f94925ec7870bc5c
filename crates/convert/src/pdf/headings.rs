//! Headings read from type sizes, for a PDF without an outline: a short line set clearly
//! larger than the body text is a heading, and larger sizes rank higher. Without this such a
//! PDF is one section per page, whose breadcrumb names only the page; with it a section is a
//! topic, and its heading is searched with it.
//!
//! Conservative on purpose: a document whose body size is unclear, or where "headings" would
//! be a large share of the lines, gets none, and the page headings stay as they were.

use std::collections::HashMap;

use super::lines::Line;

/// How much larger than the body a line's type must be to be a heading (1.15: 11 pt body,
/// 12.65 pt; a bold heading in the body's size is not found, which is the safe side).
const LARGER: f32 = 1.15;
/// Most lines one heading may wrap over; more in a row of the same size is large text.
const MOST_LINES: usize = 3;
/// Longest a heading line may be, in characters, and most words it may have.
const MOST_CHARS: usize = 120;
const MOST_WORDS: usize = 16;
/// Largest share of a document's lines headings may take: above it, sizes mark something
/// else (a slide deck, a poster) and no heading is read.
const MOST_SHARE: f32 = 0.25;
/// Most distinct heading ranks; smaller heading sizes share the last one.
const MOST_RANKS: usize = 3;

/// What a line of a page is, when it is part of a heading.
#[derive(Debug, Clone, PartialEq)]
pub enum Mark {
    /// The first line of a heading: its rank (1 is the largest type) and whole text.
    Heading { rank: usize, text: String },
    /// A further line of the heading above it.
    Continued,
}

/// Headings of a document: (page index, line index) → mark, and the deepest rank used
/// (0 when there are none).
#[derive(Debug, Default)]
pub struct Headings {
    pub marks: HashMap<(usize, usize), Mark>,
    pub deepest: usize,
}

/// A size in half points, so type set at 10.98 and 11.02 pt counts as one size.
fn bucket(size: f32) -> i32 {
    (size * 2.0).round() as i32
}

/// Whether `text` reads like a heading: short, a few words, with letters, not a clause that
/// runs on.
fn heading_like(text: &str) -> bool {
    let text = text.trim();
    let letters = text.chars().filter(|c| c.is_alphabetic()).count();
    (2..=MOST_CHARS).contains(&text.chars().count())
        && letters >= 2
        && text.split_whitespace().count() <= MOST_WORDS
        && !text.ends_with([',', ';'])
}

/// The headings of `pages` ([`Mark`]), or none (see the module's doc).
pub fn by_size(pages: &[Vec<Line>]) -> Headings {
    // The body size: the one most characters are set in.
    let mut characters: HashMap<i32, usize> = HashMap::new();
    let mut filled = 0usize;
    for line in pages.iter().flatten() {
        let text = line.text.trim();
        if text.is_empty() || line.size <= 0.0 {
            continue;
        }
        filled += 1;
        *characters.entry(bucket(line.size)).or_default() += text.chars().count();
    }
    let Some(body) = characters
        .iter()
        .max_by_key(|(size, count)| (**count, -**size))
        .map(|(size, _)| *size)
    else {
        return Headings::default();
    };
    let threshold = body as f32 * LARGER;
    // Runs of consecutive large, heading-like lines of one size: (page, first line, lines,
    // size).
    let mut runs: Vec<(usize, usize, usize, i32)> = Vec::new();
    for (p, page) in pages.iter().enumerate() {
        let mut i = 0;
        while i < page.len() {
            let size = bucket(page[i].size);
            let large = |line: &Line| bucket(line.size) == size && heading_like(&line.text);
            if (size as f32) < threshold || !large(&page[i]) {
                i += 1;
                continue;
            }
            let mut end = i + 1;
            while end < page.len() && large(&page[end]) {
                end += 1;
            }
            runs.push((p, i, end - i, size));
            i = end;
        }
    }
    runs.retain(|(_, _, lines, _)| *lines <= MOST_LINES);
    let heading_lines: usize = runs.iter().map(|(_, _, lines, _)| lines).sum();
    if runs.is_empty() || heading_lines as f32 > MOST_SHARE * filled as f32 {
        return Headings::default();
    }
    let mut sizes: Vec<i32> = runs.iter().map(|(_, _, _, size)| *size).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.dedup();
    let mut headings = Headings::default();
    for (p, first, lines, size) in runs {
        let rank = sizes.iter().position(|s| *s == size).unwrap_or(0) + 1;
        let rank = rank.min(MOST_RANKS);
        headings.deepest = headings.deepest.max(rank);
        let text: Vec<&str> = pages[p][first..first + lines]
            .iter()
            .map(|l| l.text.trim())
            .collect();
        headings.marks.insert(
            (p, first),
            Mark::Heading {
                rank,
                text: text.join(" "),
            },
        );
        for line in first + 1..first + lines {
            headings.marks.insert((p, line), Mark::Continued);
        }
    }
    headings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, size: f32) -> Line {
        Line {
            text: text.to_string(),
            size,
        }
    }

    fn body(n: usize) -> Vec<Line> {
        (0..n)
            .map(|i| {
                line(
                    &format!("Body text line {i} of the guide, in plain words."),
                    11.0,
                )
            })
            .collect()
    }

    fn heading(headings: &Headings, page: usize, line: usize) -> Option<(usize, &str)> {
        match headings.marks.get(&(page, line)) {
            Some(Mark::Heading { rank, text }) => Some((*rank, text.as_str())),
            _ => None,
        }
    }

    #[test]
    fn larger_short_lines_are_headings_ranked_by_size() {
        let mut first = vec![line("Operations Guide", 20.0), line("Installation", 15.0)];
        first.extend(body(12));
        let mut second = vec![line("Upgrading from an older", 15.0), line("release", 15.0)];
        second.extend(body(4));
        second.push(line("Rolling back", 13.0));
        second.extend(body(4));
        let headings = by_size(&[first, second]);
        assert_eq!(heading(&headings, 0, 0), Some((1, "Operations Guide")));
        assert_eq!(heading(&headings, 0, 1), Some((2, "Installation")));
        assert_eq!(
            heading(&headings, 1, 0),
            Some((2, "Upgrading from an older release"))
        );
        assert_eq!(headings.marks.get(&(1, 1)), Some(&Mark::Continued));
        assert_eq!(heading(&headings, 1, 6), Some((3, "Rolling back")));
        assert_eq!(headings.deepest, 3);
        assert!(heading(&headings, 0, 2).is_none());
    }

    #[test]
    fn no_headings_where_sizes_do_not_mark_them() {
        // One size throughout.
        assert!(by_size(&[body(10)]).marks.is_empty());
        // Large text that runs on: a paragraph, not a heading.
        let mut page: Vec<Line> = (0..5)
            .map(|i| line(&format!("A large introduction, line {i}"), 16.0))
            .collect();
        page.extend(body(10));
        assert!(by_size(&[page]).marks.is_empty());
        // Large lines that are not heading-like: a long sentence, a lone number.
        let mut page = vec![
            line(
                "This sentence is set large but runs on far too long to be any heading of a section, so it is text",
                16.0,
            ),
            line("42", 16.0),
        ];
        page.extend(body(10));
        assert!(by_size(&[page]).marks.is_empty());
        // Too many "headings": a slide deck.
        let slides: Vec<Vec<Line>> = (0..4)
            .map(|i| vec![line(&format!("Slide {i}"), 24.0), line("one point", 11.0)])
            .collect();
        assert!(by_size(&slides).marks.is_empty());
    }
}
