//! The layout of a data dir, owned here and nowhere else: one index's files (`records.sqlite`,
//! `bm25/`, `primary.lock`, `primary.sock`) and, for `serve`, one index per folder under
//! `folders/<name>/` beside the shared `query-log.jsonl`. Moving and removing a folder's index
//! happen here too, so no other crate builds a path inside a data dir. Derived data only: any
//! of it can be deleted and is rebuilt from the documents.

use std::path::{Path, PathBuf};

/// The records file of one index.
pub fn records(data_dir: &Path) -> PathBuf {
    data_dir.join("records.sqlite")
}

/// The BM25 (tantivy) directory of one index.
pub fn bm25(data_dir: &Path) -> PathBuf {
    data_dir.join("bm25")
}

/// The lock file whose holder is the index's primary.
pub fn primary_lock(data_dir: &Path) -> PathBuf {
    data_dir.join("primary.lock")
}

/// The socket the primary answers sync requests on.
pub fn primary_socket(data_dir: &Path) -> PathBuf {
    data_dir.join("primary.sock")
}

/// The data dir of a server over several folders: an index per folder, one query log.
#[derive(Debug, Clone)]
pub struct FoldersDataDir {
    root: PathBuf,
}

impl FoldersDataDir {
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    /// The data dir of folder `name`'s index.
    pub fn folder(&self, name: &str) -> PathBuf {
        self.root.join("folders").join(name)
    }

    /// The data dirs of every folder's index there is, sorted.
    pub fn folder_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(self.root.join("folders"))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        dirs
    }

    /// Where the server's query log is kept.
    pub fn query_log(&self) -> PathBuf {
        self.root.join("query-log.jsonl")
    }

    /// Moves folder `from`'s index to `to` (a renamed folder keeps its index), replacing
    /// whatever `to` had. Nothing to move is not an error.
    pub fn move_folder(&self, from: &str, to: &str) -> std::io::Result<()> {
        let (from, to) = (self.folder(from), self.folder(to));
        if !from.is_dir() {
            return Ok(());
        }
        match std::fs::remove_dir_all(&to) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        std::fs::rename(from, to)
    }

    /// Removes folder `name`'s index. Nothing to remove is not an error.
    pub fn remove_folder(&self, name: &str) -> std::io::Result<()> {
        match std::fs::remove_dir_all(self.folder(name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folders_index_moves_and_goes_with_it() {
        let root = tempfile::tempdir().unwrap();
        let data = FoldersDataDir::new(root.path().to_path_buf());
        std::fs::create_dir_all(data.folder("work")).unwrap();
        std::fs::write(records(&data.folder("work")), b"x").unwrap();
        std::fs::create_dir_all(data.folder("home")).unwrap();
        data.move_folder("work", "home").unwrap();
        assert!(!data.folder("work").exists());
        assert!(
            records(&data.folder("home")).is_file(),
            "replaced by the moved one"
        );
        data.move_folder("nothing", "else").unwrap();
        assert_eq!(data.folder_dirs(), vec![data.folder("home")]);
        data.remove_folder("home").unwrap();
        assert!(!data.folder("home").exists());
        assert!(data.folder_dirs().is_empty());
        data.remove_folder("home").unwrap();
        assert_eq!(data.query_log(), root.path().join("query-log.jsonl"));
    }
}
