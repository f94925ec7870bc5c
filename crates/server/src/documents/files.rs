//! The file-system side of documents: atomic replacement, exclusive creation, the per-document
//! write lock, leftover temporary files, and a document's text as indexed (converted formats
//! included, with a small cache). Knows paths and bytes only — no index, no tool semantics.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use crate::ToolError;

/// An I/O failure on `path`, as a tool reports it.
pub(crate) fn io_error(path: &str, e: std::io::Error) -> ToolError {
    ToolError::internal(format!("{path}: {e}"))
}

/// Replaces `abs` with `bytes` atomically: a temporary dot-file beside it, renamed over it.
pub fn atomic_write(abs: &Path, rel: &str, bytes: &[u8]) -> Result<(), ToolError> {
    let dir = abs
        .parent()
        .ok_or_else(|| ToolError::invalid(format!("{rel} has no folder")))?;
    let tmp = dir.join(ragdown_index::walk::temp_file_name(
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    ));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, abs)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(|e| io_error(rel, e))
}

/// Removes the temporary files writers killed mid-write left behind (their documents are
/// whole: the rename never happened). A file is a leftover when its writer is no longer
/// running, or, where that cannot be told, when it is over a minute old (a write takes
/// milliseconds). Returns how many were removed.
pub fn remove_leftover_temp_files(root: &Path) -> usize {
    let mut removed = 0;
    for (path, pid, age) in ragdown_index::walk::temp_files(root) {
        let writer_gone = if cfg!(target_os = "linux") {
            pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
        } else {
            false
        };
        if (writer_gone || age > std::time::Duration::from_secs(60))
            && fs::remove_file(&path).is_ok()
        {
            tracing::info!(
                "removed {}, left by a write that was interrupted",
                path.display()
            );
            removed += 1;
        }
    }
    removed
}

/// The write lock of one document, held from reading its current bytes until the new ones are
/// renamed into place, so a check (its `base_hash`, an edit's `old_text`) and the write that
/// follows are one critical section. It is an advisory lock (`flock`) on the document file
/// itself: every open file description conflicts with every other, so it orders threads of one
/// process and separate processes (two `ragdown stdio`, a CLI `delete`) alike. Dropping it
/// unlocks.
pub struct DocumentLock {
    _file: Option<fs::File>,
}

/// Locks the document at `abs` and reads it: `None` when there is no such file (a creator then
/// relies on [`create_new`]'s exclusive create instead). A writer that renamed a new version in
/// while this one waited leaves the lock on the old, unlinked file; that is detected (the path
/// names another file now) and the lock is taken again on the current one, so a waiting
/// writer always checks against what is on disk at the moment it writes.
pub fn lock_document(abs: &Path, rel: &str) -> Result<(DocumentLock, Option<Vec<u8>>), ToolError> {
    use std::io::Read;
    loop {
        let mut file = match fs::File::open(abs) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((DocumentLock { _file: None }, None));
            }
            Err(e) => return Err(io_error(rel, e)),
        };
        file.lock().map_err(|e| io_error(rel, e))?;
        let held = file.metadata().map_err(|e| io_error(rel, e))?;
        match fs::metadata(abs) {
            Ok(now) if same_file(&held, &now) => {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes).map_err(|e| io_error(rel, e))?;
                return Ok((DocumentLock { _file: Some(file) }, Some(bytes)));
            }
            // Replaced or removed while this writer waited: look again.
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((DocumentLock { _file: None }, None));
            }
            Err(e) => return Err(io_error(rel, e)),
        }
    }
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    // Windows refuses to rename over an open file, so the file locked is still the one named.
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// Creates `abs` with `bytes`, failing if it exists (never overwrites).
pub fn create_new(abs: &Path, rel: &str, bytes: &[u8]) -> Result<bool, ToolError> {
    if let Some(dir) = abs.parent() {
        fs::create_dir_all(dir).map_err(|e| io_error(rel, e))?;
    }
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(abs)
    {
        Ok(mut f) => {
            f.write_all(bytes).map_err(|e| io_error(rel, e))?;
            f.sync_all().map_err(|e| io_error(rel, e))?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io_error(rel, e)),
    }
}

/// A `base_hash` names this version when it has 12+ hex digits and prefixes the full hash.
pub fn is_version(full: &str, base: &str) -> bool {
    let base = base.trim().to_lowercase();
    base.len() >= 12 && full.starts_with(&base)
}

pub(crate) fn lines_of(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

pub(crate) fn read_existing(abs: &Path, rel: &str) -> Result<Vec<u8>, ToolError> {
    match fs::read(abs) {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(ToolError::not_found(format!("no such document: {rel}")))
        }
        Err(e) => Err(io_error(rel, e)),
    }
}

/// Locks an existing document and reads it ([`lock_document`]); a missing one is not found.
pub(crate) fn lock_existing(abs: &Path, rel: &str) -> Result<(DocumentLock, Vec<u8>), ToolError> {
    match lock_document(abs, rel)? {
        (lock, Some(bytes)) => Ok((lock, bytes)),
        (_, None) => Err(ToolError::not_found(format!("no such document: {rel}"))),
    }
}

/// A document's text as indexed: Markdown as it is, other formats converted (the same bytes
/// always convert to the same text, so hits' line numbers hold). The second value names the
/// format a converted text came from.
pub fn document_text(rel: &str, bytes: &[u8]) -> (String, Option<&'static str>) {
    match ragdown_convert::Format::from_path(rel) {
        None => (String::from_utf8_lossy(bytes).into_owned(), None),
        Some(format) => (converted_text(format, bytes), Some(format.name())),
    }
}

/// How many converted texts are kept: an agent reads one long PDF in several line ranges, and a
/// large PDF takes seconds to convert.
pub(super) const CONVERTED_KEPT: usize = 8;

/// Converted texts by the BLAKE3 of their bytes, most recent last. Keyed by content, an entry
/// can never be stale.
pub(super) static CONVERTED: Mutex<Vec<([u8; 32], String)>> = Mutex::new(Vec::new());

/// The Markdown of a converted document (or a line saying why it could not be converted),
/// converting each distinct content once while it stays among the last [`CONVERTED_KEPT`].
fn converted_text(format: ragdown_convert::Format, bytes: &[u8]) -> String {
    let key = *blake3::hash(bytes).as_bytes();
    let cached = |kept: &mut Vec<([u8; 32], String)>| {
        let at = kept.iter().position(|(k, _)| *k == key)?;
        let entry = kept.remove(at);
        let text = entry.1.clone();
        kept.push(entry);
        Some(text)
    };
    if let Some(text) = CONVERTED.lock().ok().as_deref_mut().and_then(cached) {
        return text;
    }
    match ragdown_convert::convert(format, bytes) {
        Ok(text) => {
            if let Ok(mut kept) = CONVERTED.lock() {
                if kept.len() >= CONVERTED_KEPT {
                    kept.remove(0);
                }
                kept.push((key, text.clone()));
            }
            text
        }
        // Failures are not kept: a timeout may pass on a quieter machine.
        Err(e) => format!("(this {} could not be converted: {e})", format.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::full_hash;

    fn kept(bytes: &[u8]) -> bool {
        let key = *blake3::hash(bytes).as_bytes();
        CONVERTED.lock().unwrap().iter().any(|(k, _)| *k == key)
    }

    #[test]
    fn converted_texts_are_kept_by_content_and_the_oldest_goes_first() {
        let first = b"kept text, first of nine\n";
        let (text, from) = document_text("notes/a.txt", first);
        assert_eq!(from, Some("text"));
        assert!(kept(first));
        // Same bytes under another name: the same text, from the cache.
        assert_eq!(document_text("b.txt", first).0, text);
        // Markdown is never converted, so never kept.
        document_text("c.md", b"# plain markdown, not kept\n");
        assert!(!kept(b"# plain markdown, not kept\n"));
        for i in 0..CONVERTED_KEPT {
            document_text("d.txt", format!("other text {i} of this test\n").as_bytes());
        }
        assert!(!kept(first), "the oldest entry is dropped");
        assert!(CONVERTED.lock().unwrap().len() <= CONVERTED_KEPT);
        assert_eq!(document_text("a.txt", first).0, text);
    }

    #[test]
    fn versions_need_twelve_hex() {
        let full = full_hash(b"x");
        assert!(is_version(&full, &full[..12]));
        assert!(is_version(&full, &full));
        assert!(!is_version(&full, &full[..6]));
    }
}
