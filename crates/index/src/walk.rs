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
        if !entry.file_type().is_file() {
            continue; // directories, and symlinks (never followed)
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let path = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
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
}
