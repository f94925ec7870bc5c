//! Finding the documents of a folder: Markdown files and the formats `convert` turns into
//! Markdown (PDF, DOCX, HTML, text), skipping dot-folders, `node_modules` and symlinks (a link
//! could lead out of the folder or loop). Reads metadata only.

use std::path::Path;
use std::time::UNIX_EPOCH;

use walkdir::WalkDir;

/// File extensions indexed as Markdown (compared case-insensitively).
pub const MARKDOWN_EXTENSIONS: &[&str] = &["md", "markdown", "mdx"];

/// A document file found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// Root-relative, `/`-separated.
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
}

/// Whether a directory or file name is one the index never enters.
pub fn is_skipped_name(name: &str) -> bool {
    name.starts_with('.') || name == "node_modules"
}

/// Whether `path` is a Markdown document (the only kind ragdown writes).
pub fn is_markdown_path(path: &str) -> bool {
    path.rsplit_once('.').is_some_and(|(_, ext)| {
        MARKDOWN_EXTENSIONS
            .iter()
            .any(|e| e.eq_ignore_ascii_case(ext))
    })
}

/// Whether `path` is indexed: Markdown, or a format converted to it.
pub fn is_document_path(path: &str) -> bool {
    is_markdown_path(path) || ragdown_convert::Format::from_path(path).is_some()
}

/// The name of a temporary file ragdown writes a document's new version into before renaming
/// it into place: a dot-file (never indexed, never a change the watcher reports) carrying the
/// writer's process id, so a leftover of a killed writer can be told from a live one's.
pub fn temp_file_name(pid: u32, nanos: u128) -> String {
    format!(".ragdown-{pid}-{nanos}.tmp")
}

/// The process id in a [`temp_file_name`], if `name` is one.
pub fn temp_file_pid(name: &str) -> Option<u32> {
    let middle = name.strip_prefix(".ragdown-")?.strip_suffix(".tmp")?;
    let (pid, nanos) = middle.split_once('-')?;
    nanos.bytes().all(|b| b.is_ascii_digit()).then_some(())?;
    pid.parse().ok()
}

/// The temporary files ([`temp_file_name`]) under `root`, where documents live (dot-folders
/// and `node_modules` are not entered): with their writer's pid and age.
pub fn temp_files(root: &Path) -> Vec<(std::path::PathBuf, u32, std::time::Duration)> {
    WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0 || !is_skipped_name(&name) || temp_file_pid(&name).is_some()
        })
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let pid = temp_file_pid(&e.file_name().to_string_lossy())?;
            let age = e
                .metadata()
                .ok()?
                .modified()
                .ok()?
                .elapsed()
                .unwrap_or_default();
            Some((e.into_path(), pid, age))
        })
        .collect()
}

/// Says once per process why a file is not indexed (the walk runs on every change).
fn skipped_once(path: &Path, why: &str) {
    static TOLD: std::sync::Mutex<Option<std::collections::HashSet<std::path::PathBuf>>> =
        std::sync::Mutex::new(None);
    let Ok(mut told) = TOLD.lock() else { return };
    if told
        .get_or_insert_with(Default::default)
        .insert(path.to_path_buf())
    {
        tracing::warn!("not indexed: {}: {why}", path.display());
    }
}

/// Walks `root`; unreadable entries are logged and skipped, never fatal.
pub fn walk(root: &Path) -> Vec<FileEntry> {
    let mut out = Vec::new();
    let entries = WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !is_skipped_name(&e.file_name().to_string_lossy()));
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!("skipping an unreadable entry: {e}");
                continue;
            }
        };
        if entry.file_type().is_symlink() {
            if is_document_path(&entry.file_name().to_string_lossy()) || entry.path().is_dir() {
                skipped_once(
                    entry.path(),
                    "it is a symbolic link, and links are never followed (one could lead out of the folder or loop): move or copy the file itself into the folder",
                );
            }
            continue;
        }
        if !entry.file_type().is_file() {
            continue; // directories
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(parts) = rel
            .components()
            .map(|c| c.as_os_str().to_str())
            .collect::<Option<Vec<_>>>()
        else {
            if is_document_path(&entry.file_name().to_string_lossy()) {
                skipped_once(
                    entry.path(),
                    "its name is not valid UTF-8, which paths in results cannot carry: rename it",
                );
            }
            continue;
        };
        let path = parts.join("/");
        if !is_document_path(&path) {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue; // vanished since listing
        };
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64);
        out.push(FileEntry {
            path,
            size: meta.len(),
            mtime_ns,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_dot_folders_node_modules_symlinks_and_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for p in [
            "a.md",
            "sub/b.markdown",
            "sub/c.MDX",
            ".obsidian/x.md",
            "node_modules/y.md",
            "sub/.hidden/z.md",
            "notes.txt",
            "scan.pdf",
            "image.png",
            "old.doc",
        ] {
            let full = root.join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, "# x").unwrap();
        }
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "# secret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("link.md")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("linkdir")).unwrap();
        let paths: Vec<String> = walk(root).into_iter().map(|e| e.path).collect();
        assert_eq!(
            paths,
            vec![
                "a.md",
                "notes.txt",
                "scan.pdf",
                "sub/b.markdown",
                "sub/c.MDX"
            ]
        );
    }

    #[test]
    fn names_that_are_not_utf8_are_skipped_and_temp_files_found() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("ok.md"), "# ok").unwrap();
        let bad = std::ffi::OsStr::from_bytes(b"caf\xe9.md");
        std::fs::write(root.join(bad), "# latin-1 name").unwrap();
        let paths: Vec<String> = walk(root).into_iter().map(|e| e.path).collect();
        assert_eq!(
            paths,
            vec!["ok.md"],
            "a lossy name could never be read back"
        );
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub").join(temp_file_name(4242, 17)), "x").unwrap();
        std::fs::write(root.join(".ragdown-x.tmp"), "not ours").unwrap();
        let temps = temp_files(root);
        assert_eq!(temps.len(), 1);
        assert_eq!(temps[0].1, 4242);
        assert_eq!(temp_file_pid(".ragdown-12-345.tmp"), Some(12));
        assert_eq!(temp_file_pid(".ragdown-12-x.tmp"), None);
    }
}
