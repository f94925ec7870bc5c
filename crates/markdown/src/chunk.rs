//! Sections → chunks: paragraphs (blank-line separated, a code block never split), long
//! paragraphs hard-split at line boundaries, then greedy packing up to [`MAX_CHUNK_CHARS`].
//!
//! Lengths are counted in Unicode scalar values (`char`s), not UTF-16 units as upstream did;
//! the two differ only for text outside the Basic Multilingual Plane.

/// The most characters a chunk holds, unless one code block alone is longer.
pub const MAX_CHUNK_CHARS: usize = 1500;

/// A run of lines that is packed as one unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Paragraph {
    pub text: String,
    /// 0-based, inclusive.
    pub first_line: usize,
    pub last_line: usize,
}

/// A packed piece of one section, with 0-based inclusive line indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    pub text: String,
    pub first_line: usize,
    pub last_line: usize,
}

/// Splits lines `range` of a section into paragraphs. `code_lines[i]` marks lines inside a
/// code block: their blank lines do not split, and a paragraph holding one is never
/// hard-split.
pub(crate) fn paragraphs(
    lines: &[&str],
    code_lines: &[bool],
    range: std::ops::Range<usize>,
    max_chars: usize,
) -> Vec<Paragraph> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut has_code = false;
    let is_code = |i: usize| code_lines.get(i).copied().unwrap_or(false);
    let flush = |start: usize, end: usize, has_code: bool, out: &mut Vec<Paragraph>| {
        let para_lines = &lines[start..=end];
        let text = para_lines.join("\n");
        if has_code || text.chars().count() <= max_chars {
            out.push(Paragraph {
                text,
                first_line: start,
                last_line: end,
            });
        } else {
            hard_split(para_lines, start, max_chars, out);
        }
    };
    for i in range.clone() {
        let blank = lines[i].trim().is_empty() && !is_code(i);
        match (blank, start) {
            (false, None) => {
                start = Some(i);
                has_code = is_code(i);
            }
            (false, Some(_)) => has_code |= is_code(i),
            (true, Some(s)) => {
                flush(s, i - 1, has_code, &mut out);
                start = None;
            }
            (true, None) => {}
        }
    }
    if let Some(s) = start {
        flush(s, range.end - 1, has_code, &mut out);
    }
    out
}

/// Cuts a long prose paragraph at line boundaries; a single line longer than `max_chars` is
/// cut into `max_chars`-character slices that all carry that line's number.
fn hard_split(lines: &[&str], first_line: usize, max_chars: usize, out: &mut Vec<Paragraph>) {
    let mut open: Option<Paragraph> = None;
    for (offset, line) in lines.iter().enumerate() {
        let line_no = first_line + offset;
        let line_len = line.chars().count();
        if line_len > max_chars {
            out.extend(open.take());
            let chars: Vec<char> = line.chars().collect();
            out.extend(chars.chunks(max_chars).map(|slice| Paragraph {
                text: slice.iter().collect(),
                first_line: line_no,
                last_line: line_no,
            }));
            continue;
        }
        match &mut open {
            Some(p) if p.text.chars().count() + 1 + line_len <= max_chars => {
                p.text.push('\n');
                p.text.push_str(line);
                p.last_line = line_no;
            }
            _ => {
                out.extend(open.take());
                open = Some(Paragraph {
                    text: (*line).to_string(),
                    first_line: line_no,
                    last_line: line_no,
                });
            }
        }
    }
    out.extend(open);
}

/// Packs paragraphs greedily, joined by one blank line, while the piece stays within
/// `max_chars`.
pub(crate) fn pack(paragraphs: Vec<Paragraph>, max_chars: usize) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut open: Option<(Piece, usize)> = None;
    for p in paragraphs {
        let len = p.text.chars().count();
        match &mut open {
            Some((piece, piece_len)) if *piece_len + 2 + len <= max_chars => {
                piece.text.push_str("\n\n");
                piece.text.push_str(&p.text);
                piece.last_line = p.last_line;
                *piece_len += 2 + len;
            }
            _ => {
                out.extend(open.take().map(|(piece, _)| piece));
                open = Some((
                    Piece {
                        text: p.text,
                        first_line: p.first_line,
                        last_line: p.last_line,
                    },
                    len,
                ));
            }
        }
    }
    out.extend(open.map(|(piece, _)| piece));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_within_the_limit() {
        let lines = ["aaaa", "", "bbbb", "", "cccc"];
        let paras = paragraphs(&lines, &[false; 5], 0..5, 10);
        assert_eq!(paras.len(), 3);
        let pieces = pack(paras, 10);
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[0].text, "aaaa\n\nbbbb");
        assert_eq!((pieces[0].first_line, pieces[0].last_line), (0, 2));
        assert_eq!((pieces[1].first_line, pieces[1].last_line), (4, 4));
    }

    #[test]
    fn code_is_never_split_even_when_long() {
        let lines = ["```", "x = 1", "", "y = 2", "```"];
        let code = [true; 5];
        let paras = paragraphs(&lines, &code, 0..5, 5);
        assert_eq!(paras.len(), 1);
        assert_eq!((paras[0].first_line, paras[0].last_line), (0, 4));
    }

    #[test]
    fn long_lines_are_sliced() {
        let long = "x".repeat(25);
        let lines = [long.as_str()];
        let paras = paragraphs(&lines, &[false], 0..1, 10);
        assert_eq!(paras.len(), 3);
        assert!(paras.iter().all(|p| p.first_line == 0 && p.last_line == 0));
    }
}
