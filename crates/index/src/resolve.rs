//! Resolving a link target or a path-like name to a document, the way Obsidian does within one
//! folder: an exact path, then a document of that name (the one beside the linking document,
//! then the shortest path), then an alias. Pure lookups over a [`Snapshot`].

use std::sync::Arc;

use ragdown_markdown::links::join_relative;

use crate::walk::MARKDOWN_EXTENSIONS;
use crate::{DocumentRecord, Snapshot};

fn strip_extension(path: &str) -> &str {
    match path.rsplit_once('.') {
        Some((stem, ext))
            if MARKDOWN_EXTENSIONS
                .iter()
                .any(|e| e.eq_ignore_ascii_case(ext)) =>
        {
            stem
        }
        _ => path,
    }
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

impl Snapshot {
    /// The document `target` names, seen from the document at `from` (if any).
    pub fn resolve(&self, target: &str, from: Option<&str>) -> Option<&Arc<DocumentRecord>> {
        let target = target.trim().trim_start_matches("./").replace('\\', "/");
        if target.is_empty() {
            return None;
        }
        // 1. An exact path: root-relative, or relative to the linking document.
        let mut exact = vec![target.clone()];
        if let Some(from) = from
            && let Some(joined) = join_relative(from, &target)
        {
            exact.insert(0, joined);
        }
        for candidate in &exact {
            if let Some(doc) = self.document_by_path(candidate) {
                return Some(doc);
            }
            for ext in MARKDOWN_EXTENSIONS {
                if let Some(doc) = self.document_by_path(&format!("{candidate}.{ext}")) {
                    return Some(doc);
                }
            }
        }
        // 2. A document whose path ends with the target's name (`sub/Note` → `x/sub/Note.md`).
        let wanted = strip_extension(&target).to_lowercase();
        let mut named: Vec<&Arc<DocumentRecord>> = self
            .documents()
            .filter(|d| {
                let stem = strip_extension(&d.path).to_lowercase();
                stem == wanted || stem.ends_with(&format!("/{wanted}"))
            })
            .collect();
        if !named.is_empty() {
            named.sort_by(|a, b| a.path.len().cmp(&b.path.len()).then(a.path.cmp(&b.path)));
            if let Some(from) = from
                && let Some(beside) = named.iter().find(|d| dir_of(&d.path) == dir_of(from))
            {
                return Some(beside);
            }
            return named.first().copied();
        }
        // 3. An alias.
        let lowered = target.to_lowercase();
        let mut by_alias: Vec<&Arc<DocumentRecord>> = self
            .documents()
            .filter(|d| d.aliases.iter().any(|a| a.to_lowercase() == lowered))
            .collect();
        by_alias.sort_by(|a, b| a.path.cmp(&b.path));
        by_alias.first().copied()
    }
}
