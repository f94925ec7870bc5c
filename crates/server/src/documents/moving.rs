//! Moving a document or subfolder within its folder, and rewriting every link that pointed
//! at what moved (wikilinks to their shortest unambiguous form, Markdown links to the new
//! relative path). Only Markdown is ever rewritten, and a document edited during the move keeps
//! its text (a broken link is the lesser harm).

use std::collections::BTreeMap;
use std::fs;

use super::files::{atomic_write, io_error, lock_document, lock_existing};
use crate::answers::Moved;
use crate::{Engine, ToolError, paths};

/// The relative path from the directory of `from` to `to` (both root-relative).
pub(super) fn relative_path(from: &str, to: &str) -> String {
    let from_dir: Vec<&str> = from
        .split('/')
        .collect::<Vec<_>>()
        .split_last()
        .map_or(Vec::new(), |(_, d)| d.to_vec());
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dir
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = vec!["..".into(); from_dir.len() - common];
    parts.extend(to_parts[common..].iter().map(|s| s.to_string()));
    parts.join("/")
}

fn encode_url_path(path: &str) -> String {
    path.replace('%', "%25")
        .replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

/// Moves a document or subfolder and rewrites the links that pointed at it.
pub fn move_paths(engine: &Engine, from: &str, to: &str) -> Result<Moved, ToolError> {
    let root = engine.folder_root().to_path_buf();
    let (from_shown, to_shown) = (paths::normalize(from)?, paths::normalize(to)?);
    if from_shown.is_empty() || to_shown.is_empty() {
        return Err(ToolError::invalid(
            "from and to must name a document or subfolder, not the folder itself",
        ));
    }
    paths::check_indexed_segments(&from_shown)?;
    paths::check_indexed_segments(&to_shown)?;
    // The scope's own directory is checked too (no symlink on the way to it).
    paths::inside(&root, &engine.scope)?;
    let (from_rel, to_rel) = (engine.scoped(&from_shown), engine.scoped(&to_shown));
    let from_abs = paths::inside(&root, &from_rel)?;
    let to_abs = paths::inside(&root, &to_rel)?;
    let meta = fs::symlink_metadata(&from_abs)
        .map_err(|_| ToolError::not_found(format!("no such document or folder: {from_shown}")))?;
    if from_rel == to_rel {
        return Err(ToolError::invalid(format!("{to_shown} is already there")));
    }
    let is_dir = meta.is_dir();
    if is_dir && to_rel.starts_with(&format!("{from_rel}/")) {
        return Err(ToolError::invalid(format!(
            "cannot move {from_rel} into itself"
        )));
    }
    if !is_dir {
        paths::check_markdown(&from_rel)?;
        paths::check_markdown(&to_rel)?;
    }
    if fs::symlink_metadata(&to_abs).is_ok() {
        return Err(ToolError::conflict(format!("already exists: {to_shown}")));
    }
    // Old path → new path of every document that moves.
    let snap = engine.index.snapshot();
    let moved: BTreeMap<String, String> = snap
        .documents()
        .filter_map(|d| {
            if is_dir {
                d.path
                    .strip_prefix(&format!("{from_rel}/"))
                    .map(|rest| (d.path.clone(), format!("{to_rel}/{rest}")))
            } else {
                (d.path == from_rel).then(|| (d.path.clone(), to_rel.clone()))
            }
        })
        .collect();
    // Links that point at a moved document, per linking document (by its old path).
    // With the hash of the text they were found in: link offsets hold only for that text.
    type Found = (blake3::Hash, Vec<(ragdown_markdown::Link, String)>);
    let mut affected: BTreeMap<String, Found> = BTreeMap::new();
    // Only Markdown is ever rewritten: a converted PDF or DOCX is never touched.
    for doc in snap
        .documents()
        .filter(|d| ragdown_index::walk::is_markdown_path(&d.path))
    {
        let text = match fs::read_to_string(root.join(&doc.path)) {
            Ok(t) => t,
            Err(_) => continue,
        };
        let parsed = ragdown_markdown::parse(&doc.path, &text);
        for link in parsed.links {
            let resolved = if link.kind == ragdown_markdown::LinkKind::Markdown {
                ragdown_markdown::links::join_relative(&doc.path, &link.target)
            } else {
                snap.resolve(&link.target, Some(&doc.path))
                    .map(|d| d.path.clone())
            };
            let Some(old_target) = resolved else { continue };
            let source_moves = moved.contains_key(&doc.path);
            if moved.contains_key(&old_target)
                || (source_moves && link.kind == ragdown_markdown::LinkKind::Markdown)
            {
                affected
                    .entry(doc.path.clone())
                    .or_insert_with(|| (blake3::hash(text.as_bytes()), Vec::new()))
                    .1
                    .push((link, old_target));
            }
        }
    }
    if let Some(parent) = to_abs.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error(&to_rel, e))?;
    }
    {
        // A document being edited moves after the edit is written, never under it (the edit
        // would otherwise write the old path back).
        let _lock = if is_dir {
            None
        } else {
            Some(lock_existing(&from_abs, &from_shown)?.0)
        };
        fs::rename(&from_abs, &to_abs).map_err(|e| io_error(&from_rel, e))?;
    }
    if is_dir {
        engine.sync()?;
    } else {
        engine.sync_paths(&[from_rel.clone(), to_rel.clone()])?;
    }
    let after = engine.index.snapshot();
    let mut updated = Vec::new();
    for (old_path, (scanned, links)) in affected {
        let new_path = moved
            .get(&old_path)
            .cloned()
            .unwrap_or_else(|| old_path.clone());
        let abs = root.join(&new_path);
        let Ok((_lock, Some(bytes))) = lock_document(&abs, &new_path) else {
            continue;
        };
        if blake3::hash(&bytes) != scanned {
            // Edited between the scan and now: its offsets are stale, and a wrong rewrite
            // would damage it. A broken link is the lesser harm; say so.
            tracing::warn!(
                "[ragdown] {new_path} changed during the move of {from_shown}: its links to it were not rewritten"
            );
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        for (link, old_target) in links {
            let new_target = moved.get(&old_target).cloned().unwrap_or(old_target);
            let source = &text[link.byte_range.clone()];
            let replacement = if link.kind == ragdown_markdown::LinkKind::Markdown {
                let dest = relative_path(&new_path, &new_target);
                if ragdown_markdown::links::join_relative(&new_path, &link.target).as_deref()
                    == Some(new_target.as_str())
                {
                    continue; // still resolves: links between files that moved together
                }
                let Some(open) = source.rfind("](") else {
                    continue;
                };
                let anchor = link
                    .heading
                    .as_ref()
                    .map(|h| format!("#{}", h.replace(' ', "%20")))
                    .unwrap_or_default();
                format!("{}]({}{anchor})", &source[..open], encode_url_path(&dest))
            } else {
                if after
                    .resolve(&link.target, Some(&new_path))
                    .map(|d| d.path.as_str())
                    == Some(new_target.as_str())
                {
                    continue;
                }
                let keep_ext = link.target.ends_with(".md");
                let stem_path = if keep_ext {
                    new_target.clone()
                } else {
                    new_target
                        .rsplit_once('.')
                        .map_or(new_target.clone(), |(s, _)| s.to_string())
                };
                let parts: Vec<&str> = stem_path.split('/').collect();
                let shortest = (1..=parts.len())
                    .map(|k| parts[parts.len() - k..].join("/"))
                    .find(|candidate| {
                        after
                            .resolve(candidate, Some(&new_path))
                            .map(|d| d.path.as_str())
                            == Some(new_target.as_str())
                    })
                    .unwrap_or(stem_path.clone());
                let bang = if link.kind == ragdown_markdown::LinkKind::Embed {
                    "!"
                } else {
                    ""
                };
                let heading = link
                    .heading
                    .as_ref()
                    .map(|h| format!("#{h}"))
                    .unwrap_or_default();
                let label = link
                    .label
                    .as_ref()
                    .map(|l| format!("|{l}"))
                    .unwrap_or_default();
                format!("{bang}[[{shortest}{heading}{label}]]")
            };
            edits.push((link.byte_range.clone(), replacement));
        }
        if edits.is_empty() {
            continue;
        }
        edits.sort_by_key(|e| std::cmp::Reverse(e.0.start));
        let mut new_text = text.clone();
        for (range, replacement) in edits {
            new_text.replace_range(range, &replacement);
        }
        atomic_write(&abs, &new_path, new_text.as_bytes())?;
        updated.push(new_path);
    }
    if !updated.is_empty() {
        engine.sync_paths(&updated)?;
    }
    // Documents outside the scope whose links were rewritten are shown folder-relative.
    let updated = updated
        .iter()
        .map(|p| engine.unscoped(p).unwrap_or(p).to_string())
        .collect();
    Ok(Moved {
        from: from_shown,
        to: to_shown,
        updated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(relative_path("a/b.md", "a/c.md"), "c.md");
        assert_eq!(
            relative_path("x/deep/b.md", "run/book.md"),
            "../../run/book.md"
        );
        assert_eq!(relative_path("b.md", "db/postgres.md"), "db/postgres.md");
    }
}
