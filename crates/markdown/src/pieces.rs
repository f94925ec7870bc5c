//! A chunk's pieces: its top-level blocks (paragraphs, list items, table rows with the
//! table's header, code blocks, quotes), each embedded on its own beside the whole chunk.
//!
//! A section's vector averages everything in it, so one table row or one paragraph among many
//! ("`retry_backoff_ms` … Initial delay between retries") is drowned by the rest, and a small
//! model also truncates long sections. Searches that already know the document compare a
//! question with a section's best piece as well as with the whole section ("small to big":
//! match the small unit, return the section it belongs to).
//!
//! Pure: derived from the chunk text alone; it never changes chunk boundaries.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// Bumped whenever pieces change, so stored indexes re-embed them.
pub const PIECES_VERSION: u32 = 2;

/// A block needs this many words to be a piece: a lead-in ("The usual sequence is:") or a
/// two-word list item says little on its own, and the section's own vector already holds it.
/// Swept on synth30-dev (top-1, texts embedded): every block 73.1% / 2,239; at least 8 words
/// 74.2% / 1,838; 12 words 73.8% / 1,499 (table rows start to drop out).
pub const MIN_PIECE_WORDS: usize = 8;

/// What is embedded for each piece of a chunk of the document titled `title`: the title (so
/// a row of one service's settings table is not mistaken for another's), a blank line, the
/// block's source. Blocks under [`MIN_PIECE_WORDS`] words are left out; empty when fewer than
/// two blocks remain: the whole chunk already says it.
pub fn piece_texts(title: &str, text: &str) -> Vec<String> {
    let mut pieces: Vec<(usize, String)> = Vec::new();
    let mut table_head: Option<Range<usize>> = None;
    // Containers open around the current event: blocks are taken at depth 0, list items and
    // table rows at depth 1 (directly inside their list or table).
    let mut depth = 0usize;
    let mut in_container = false;
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                match tag {
                    Tag::List(_) | Tag::Table(_) if depth == 0 => in_container = true,
                    Tag::Item if depth == 1 && in_container => {
                        pieces.push((range.start, slice(text, &range).to_string()));
                    }
                    Tag::TableHead if depth == 1 => table_head = Some(range),
                    Tag::TableRow if depth == 1 => {
                        let head = table_head.as_ref().map_or("", |h| slice(text, h));
                        pieces.push((range.start, format!("{head}\n{}", slice(text, &range))));
                    }
                    _ if depth == 0 => pieces.push((range.start, slice(text, &range).to_string())),
                    _ => {}
                }
                depth += 1;
            }
            Event::End(tag) => {
                depth = depth.saturating_sub(1);
                if depth == 0 && matches!(tag, TagEnd::List(_) | TagEnd::Table) {
                    in_container = false;
                    table_head = None;
                }
            }
            // Leaf events at the top level (a rule, top-level HTML) hold no prose of note.
            _ => {}
        }
    }
    pieces.retain(|(_, p)| words(p) >= MIN_PIECE_WORDS);
    if pieces.len() < 2 {
        return Vec::new();
    }
    pieces
        .into_iter()
        .map(|(_, p)| format!("{title}\n\n{p}"))
        .collect()
}

/// Words of a block: whitespace-separated runs holding a letter or digit (table pipes and
/// list markers are not words).
fn words(block: &str) -> usize {
    block
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
}

fn slice<'a>(text: &'a str, range: &Range<usize>) -> &'a str {
    text.get(range.clone()).unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::piece_texts;

    #[test]
    fn splits_paragraphs_items_rows_and_code() {
        let text = "Intro paragraph that is\nwrapped over two lines here.\n\n\
- first item of the list,\n  continued on its next line\n- second item\n  - nested item stays with it, all of it\n\n\
| Setting | Default | Meaning |\n|---|---|---|\n| `a` | `1` | the first of two settings |\n\
| `b` | `2` | the second of two settings |\n\n\
```bash\nmake image for the release\n\nrun the tests once more\n```\n\n\
> quoted words from someone\n> and more of their words\n\nToo short to stand alone.\n";
        let pieces = piece_texts("Svc", text);
        assert_eq!(
            pieces,
            vec![
                "Svc\n\nIntro paragraph that is\nwrapped over two lines here.",
                "Svc\n\n- first item of the list,\n  continued on its next line",
                "Svc\n\n- second item\n  - nested item stays with it, all of it",
                "Svc\n\n| Setting | Default | Meaning |\n| `a` | `1` | the first of two settings |",
                "Svc\n\n| Setting | Default | Meaning |\n| `b` | `2` | the second of two settings |",
                "Svc\n\n```bash\nmake image for the release\n\nrun the tests once more\n```",
                "Svc\n\n> quoted words from someone\n> and more of their words",
            ]
        );
    }

    #[test]
    fn one_block_has_no_pieces() {
        assert!(piece_texts("T", "Just one paragraph.\nTwo lines.").is_empty());
        assert!(piece_texts("T", "```\na\n\nb\n```").is_empty());
        assert!(piece_texts("T", "").is_empty());
        // Two blocks, one too short to count: no pieces.
        assert!(
            piece_texts(
                "T",
                "Short lead-in:\n\n- one item long enough to be a piece here"
            )
            .is_empty()
        );
    }
}
