//! The sandbox every tool path goes through: a path given by a client is normalised, must stay
//! inside the folder, may not name a dot-folder or `node_modules`, and may not leave the folder
//! through a symlink. Writes also need a Markdown extension.

use std::path::{Path, PathBuf};

use ragdown_index::walk::{is_markdown_path, is_skipped_name};

use crate::ToolError;

/// The longest file or folder name most file systems store.
pub const MAX_NAME_BYTES: usize = 255;
/// The longest path ragdown takes (well under every system's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 1024;

/// Normalises a client path to a root-relative `/`-separated path. Empty means the root.
pub fn normalize(input: &str) -> Result<String, ToolError> {
    let unified = input.trim().replace('\\', "/");
    let outside = || ToolError::invalid(format!("path is outside the docs folder: {input}"));
    if unified.starts_with('/') || unified.chars().nth(1) == Some(':') {
        return Err(outside());
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in unified.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or_else(outside)?;
            }
            p => parts.push(p),
        }
    }
    if parts.iter().any(|p| p.contains('\0')) {
        return Err(ToolError::invalid(format!(
            "path holds a NUL byte: {input:?}"
        )));
    }
    // File systems refuse longer names (ENAMETOOLONG); say so instead of failing on disk.
    if let Some(long) = parts.iter().find(|p| p.len() > MAX_NAME_BYTES) {
        return Err(ToolError::invalid(format!(
            "a name in the path is {} bytes long, over the {MAX_NAME_BYTES} bytes file systems allow: use a shorter name (it starts {:?})",
            long.len(),
            long.chars().take(40).collect::<String>()
        )));
    }
    let joined = parts.join("/");
    if joined.len() > MAX_PATH_BYTES {
        return Err(ToolError::invalid(format!(
            "the path is {} bytes long, over the {MAX_PATH_BYTES} allowed: use a shorter path",
            joined.len()
        )));
    }
    Ok(joined)
}

/// Refuses a path through a folder the index skips.
pub fn check_indexed_segments(rel: &str) -> Result<(), ToolError> {
    if let Some(bad) = rel.split('/').find(|s| is_skipped_name(s)) {
        return Err(ToolError::invalid(format!(
            "{rel} goes through {bad}: dot-folders and node_modules are not part of the documents; use a path outside them"
        )));
    }
    Ok(())
}

/// Refuses a write target that is not a Markdown document.
pub fn check_markdown(rel: &str) -> Result<(), ToolError> {
    if let Some(format) = ragdown_convert::Format::from_path(rel) {
        return Err(ToolError::invalid(format!(
            "{rel} is a {} document, indexed by converting it: ragdown writes only Markdown. Keep notes about it in a .md file beside it (ragdown_remember or ragdown_write)",
            format.name()
        )));
    }
    if !is_markdown_path(rel) {
        return Err(ToolError::invalid(format!(
            "{rel} is not a Markdown document: only .md, .markdown and .mdx files can be written"
        )));
    }
    Ok(())
}

/// The absolute path of `rel` under `root`, refusing any existing part of it that is a
/// symlink (a link could lead out of the folder).
pub fn inside(root: &Path, rel: &str) -> Result<PathBuf, ToolError> {
    let mut current = root.to_path_buf();
    for part in rel.split('/').filter(|p| !p.is_empty()) {
        current.push(part);
        if let Ok(meta) = std::fs::symlink_metadata(&current)
            && meta.file_type().is_symlink()
        {
            return Err(ToolError::invalid(format!(
                "{rel} goes through a symlink, which could lead outside the docs folder: use the real path"
            )));
        }
    }
    Ok(current)
}

/// Normalise + segment check + symlink check, for any document path a tool touches.
pub fn document(root: &Path, input: &str) -> Result<(String, PathBuf), ToolError> {
    let rel = normalize(input)?;
    if rel.is_empty() {
        return Err(ToolError::invalid(
            "path names the folder itself, not a document".to_string(),
        ));
    }
    check_indexed_segments(&rel)?;
    let abs = inside(root, &rel)?;
    Ok((rel, abs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_and_refuses_escapes() {
        assert_eq!(normalize("./a//b/../c.md").unwrap(), "a/c.md");
        assert_eq!(normalize("a\\b.md").unwrap(), "a/b.md");
        assert!(
            normalize("../x.md")
                .unwrap_err()
                .to_string()
                .contains("outside the docs folder")
        );
        assert!(normalize("/etc/passwd").is_err());
        assert!(normalize("C:/x").is_err());
        assert!(check_indexed_segments("a/.git/x.md").is_err());
        assert!(check_indexed_segments("node_modules/x.md").is_err());
        assert!(check_markdown("a.png").is_err());
        assert!(check_markdown("a.MD").is_ok());
    }

    #[test]
    fn over_long_names_are_refused_with_the_reason() {
        let long = format!("notes/{}.md", "n".repeat(5000));
        let e = normalize(&long).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Invalid);
        assert!(e.to_string().contains("5003 bytes long"), "{e}");
        assert!(normalize(&format!("{}.md", "n".repeat(252))).is_ok());
        let deep = vec!["dir"; 300].join("/");
        assert!(
            normalize(&deep)
                .unwrap_err()
                .to_string()
                .contains("shorter path")
        );
    }

    #[test]
    fn symlinks_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
        assert!(
            inside(root.path(), "link/x.md")
                .unwrap_err()
                .to_string()
                .contains("symlink")
        );
        assert!(inside(root.path(), "real/x.md").is_ok());
    }
}
