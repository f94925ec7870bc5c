//! A PDF page's lines as pdf-extract lays them out, each with the size its type is set in,
//! and the running headers, footers and page numbers dropped.
//!
//! [`LineCollector`] breaks lines and spaces words exactly as pdf-extract's own plain-text
//! output does (same positions, same thresholds), so a PDF's text is what it always was; it
//! only also keeps each line's type size, which [`super::headings`] reads.

use std::collections::HashMap;

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

/// One line of a page: its text (right-trimmed) and the mean size of its characters in
/// points on the page (0 for a blank line).
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub text: String,
    pub size: f32,
}

impl Line {
    #[cfg(test)]
    pub fn plain(text: &str) -> Self {
        Self {
            text: text.to_string(),
            size: 0.0,
        }
    }
}

/// Collects one page's text the way `pdf_extract::PlainTextOutput` writes it, and per line
/// the sizes of its characters.
pub struct LineCollector {
    text: String,
    /// Per line so far: the sum and count of its characters' sizes.
    sizes: Vec<(f64, usize)>,
    last_end: f64,
    last_y: f64,
    first_char: bool,
    /// The page's height: positions are flipped so y grows downwards, as pdf-extract does.
    height: f64,
}

impl Default for LineCollector {
    fn default() -> Self {
        Self {
            text: String::new(),
            sizes: vec![(0.0, 0)],
            // pdf-extract's starting value: far right, so the first character adds no space.
            last_end: 100_000.0,
            last_y: 0.0,
            first_char: false,
            height: 0.0,
        }
    }
}

impl LineCollector {
    fn write(&mut self, text: &str) {
        self.text.push_str(text);
        for _ in text.matches('\n') {
            self.sizes.push((0.0, 0));
        }
    }

    /// The page's lines, right-trimmed, with their mean type size.
    pub fn finish(self) -> Vec<Line> {
        self.text
            .split('\n')
            .zip(self.sizes)
            .map(|(text, (sum, count))| Line {
                text: text.trim_end().to_string(),
                size: if count == 0 {
                    0.0
                } else {
                    (sum / count as f64) as f32
                },
            })
            .collect()
    }
}

impl OutputDev for LineCollector {
    fn begin_page(
        &mut self,
        _page_num: u32,
        media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.height = media_box.ury - media_box.lly;
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        // The text matrix flipped to y-down (pdf-extract multiplies by the flip matrix; these
        // are its two translation terms, to the bit) and the font size scaled by it.
        let (x, y) = (trm.m31, self.height - trm.m32);
        let scaled = (font_size * trm.m11 + font_size * trm.m21)
            * (font_size * trm.m12 + font_size * trm.m22);
        let size = scaled.sqrt();
        if self.first_char {
            if (y - self.last_y).abs() > size * 1.5 {
                self.write("\n");
            }
            // Moved left and down: a new line.
            if x < self.last_end && (y - self.last_y).abs() > size * 0.5 {
                self.write("\n");
            }
            if x > self.last_end + size * 0.1 {
                self.write(" ");
            }
        }
        self.write(char);
        if size.is_finite()
            && !char.trim().is_empty()
            && let Some(line) = self.sizes.last_mut()
        {
            line.0 += size;
            line.1 += 1;
        }
        self.first_char = false;
        self.last_y = y;
        self.last_end = x + width * size;
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.first_char = true;
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
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
pub fn strip_running_lines(pages: Vec<Vec<Line>>) -> Vec<Vec<Line>> {
    if pages.len() < 3 {
        return pages;
    }
    let edges = |page: &[Line]| -> Vec<usize> {
        let filled: Vec<usize> = (0..page.len())
            .filter(|&i| !page[i].text.trim().is_empty())
            .collect();
        let n = edge_lines(filled.len());
        let mut idx: Vec<usize> = filled.iter().take(n).copied().collect();
        idx.extend(filled.iter().rev().take(n).copied());
        idx.sort_unstable();
        idx.dedup();
        idx
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for page in &pages {
        let mut seen: Vec<String> = edges(page).iter().map(|&i| shape(&page[i].text)).collect();
        seen.sort();
        seen.dedup();
        for s in seen {
            *counts.entry(s).or_default() += 1;
        }
    }
    let needed = ((pages.len() as f64) * 0.6).ceil() as usize;
    pages
        .into_iter()
        .map(|page| {
            let drop: Vec<usize> = edges(&page)
                .into_iter()
                .filter(|&i| {
                    counts
                        .get(&shape(&page[i].text))
                        .is_some_and(|&n| n >= needed)
                })
                .collect();
            page.into_iter()
                .enumerate()
                .filter(|(i, _)| !drop.contains(i))
                .map(|(_, l)| l)
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_lines_are_dropped_and_body_kept() {
        let topics = ["apples", "pears", "plums", "figs"];
        let pages: Vec<Vec<Line>> = (1..=4)
            .map(|n| {
                let topic = topics[n - 1];
                format!(
                    "ACME Handbook\n\nBody text about {topic}.\nMore on {topic}.\n\nPage {n} of 4"
                )
                .split('\n')
                .map(Line::plain)
                .collect()
            })
            .collect();
        let stripped = strip_running_lines(pages);
        for (i, page) in stripped.iter().enumerate() {
            let text: Vec<&str> = page.iter().map(|l| l.text.as_str()).collect();
            let text = text.join("\n");
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
