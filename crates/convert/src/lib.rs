//! Turns documents that are not Markdown — PDF, DOCX, HTML, plain text — into Markdown text
//! that the `markdown` crate chunks like any note: headings where the source has them (Word
//! heading styles, HTML headings, a PDF's outline or its larger type, and a heading per
//! page), lists and tables kept as Markdown. The same bytes always give the same text under
//! one [`CONVERTER_VERSION`], so a hit's line numbers can be read back by converting again.
//!
//! Pure: takes bytes, returns text or a [`ConvertError`] that says why a file cannot be
//! indexed. No file I/O. Parsers that can panic or run away (PDF above all) run on their own
//! thread under `catch_unwind` and a time limit, so a hostile file costs a warning, never the
//! process.

mod docx;
mod html;
mod pdf;
mod text;

use std::time::Duration;

/// Bumped whenever a converter writes other text for the same bytes, so indexes convert the
/// files they converted before again (their records carry it, see `ragdown_index`'s sync).
/// 2: PDF words hyphenated across a line end are joined and ligatures spelled out, and a PDF
/// without an outline gets headings from its type sizes; DOCX headings follow the style
/// names in `styles.xml`, sit one level under a `Title`, body text that looks like Markdown
/// is escaped and non-breaking hyphens are kept; HTML headings that link to themselves keep
/// only their words and needless escapes go; soft hyphens are dropped everywhere.
pub const CONVERTER_VERSION: u32 = 2;

/// A format ragdown converts, told by the file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pdf,
    Docx,
    Html,
    Text,
}

impl Format {
    /// The format of `path` by its extension (case-insensitive), if ragdown converts it.
    pub fn from_path(path: &str) -> Option<Self> {
        let (_, ext) = path.rsplit_once('.')?;
        match ext.to_ascii_lowercase().as_str() {
            "pdf" => Some(Self::Pdf),
            "docx" => Some(Self::Docx),
            "html" | "htm" => Some(Self::Html),
            "txt" => Some(Self::Text),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Pdf => "PDF",
            Self::Docx => "DOCX",
            Self::Html => "HTML",
            Self::Text => "text",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    #[error("it is encrypted: save an unencrypted copy to index it")]
    Encrypted,
    #[error(
        "it holds no text (a scanned or image-only file?): run OCR on it or add a Markdown summary beside it"
    )]
    NoText,
    #[error(
        "it is not a valid {format} file ({detail}): re-export it from the program that made it"
    )]
    Malformed {
        format: &'static str,
        detail: String,
    },
    #[error("{0}: it looks like a decompression bomb or is simply too big to convert")]
    TooLarge(String),
    #[error("converting it took longer than {0} s: split it or convert it to Markdown yourself")]
    Timeout(u64),
    #[error("the {0} converter failed on it unexpectedly: convert it to Markdown yourself")]
    Panicked(&'static str),
}

/// How much work one conversion may do.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most bytes a DOCX part may inflate to.
    pub max_inflated_bytes: u64,
    /// Longest a conversion may run.
    pub timeout: Duration,
    /// Deepest element nesting an HTML file may have.
    pub max_html_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_inflated_bytes: 64 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            max_html_depth: 512,
        }
    }
}

/// Converts `bytes` of `format` to Markdown text, with the default limits.
pub fn convert(format: Format, bytes: &[u8]) -> Result<String, ConvertError> {
    convert_with(format, bytes, &Limits::default())
}

/// Converts `bytes` of `format` to Markdown text on a guarded thread.
pub fn convert_with(format: Format, bytes: &[u8], limits: &Limits) -> Result<String, ConvertError> {
    if format == Format::Text {
        return Ok(text::to_markdown(bytes));
    }
    let owned = bytes.to_vec();
    let limits = *limits;
    let (tx, rx) = std::sync::mpsc::channel();
    // A big stack: HTML and PDF parsers recurse over nested input.
    let spawned = std::thread::Builder::new()
        .name(format!("convert-{}", format.name()))
        .stack_size(64 * 1024 * 1024)
        .spawn(move || {
            let outcome = std::panic::catch_unwind(|| match format {
                Format::Pdf => pdf::to_markdown(&owned),
                Format::Docx => docx::to_markdown(&owned, &limits),
                Format::Html => html::to_markdown(&owned, &limits),
                Format::Text => Ok(text::to_markdown(&owned)),
            });
            let _ = tx.send(outcome);
        });
    if spawned.is_err() {
        return Err(ConvertError::Panicked(format.name()));
    }
    match rx.recv_timeout(limits.timeout) {
        Ok(Ok(result)) => result.and_then(|md| {
            if md.trim().is_empty() {
                Err(ConvertError::NoText)
            } else {
                Ok(without_soft_hyphens(md))
            }
        }),
        Ok(Err(_panic)) => Err(ConvertError::Panicked(format.name())),
        // The thread is left to finish on its own; its result is dropped.
        Err(_) => Err(ConvertError::Timeout(limits.timeout.as_secs())),
    }
}

/// `text` without soft hyphens (U+00AD, HTML's `&shy;`): invisible where a word does not
/// break, they would split its every occurrence into two terms for BM25. (The PDF converter
/// has already joined the words they broke at a line end.)
fn without_soft_hyphens(text: String) -> String {
    if text.contains('\u{AD}') {
        text.replace('\u{AD}', "")
    } else {
        text
    }
}

#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
#[cfg(test)]
mod tests;
