//! The folders of the docs dir: every top-level real directory with an indexable name, found
//! as it appears. Each open folder has its own index (in `<data dir>/folders/<name>`), an
//! [`Engine`] over it, and — when this process is its primary — a follower keeping it in sync.
//! All folders share one embedder, one settings value and one query log.
//!
//! Owns creating, renaming and deleting folder directories (and their derived data); never
//! answers HTTP itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use ragdown_embed::Embedder;
use ragdown_index::data_dir::FoldersDataDir;
use ragdown_index::store::{RecordsLocation, SharedDatabase};
use ragdown_index::walk::{is_markdown_path, is_skipped_name};
use ragdown_index::{Index, IndexSettings, lock};
use ragdown_server::folder_config::FolderConfig;
use ragdown_server::primary::{self, SharedDuties};
use ragdown_server::query_log::QueryLog;
use ragdown_server::{Engine, SharedSettings, ToolError};

/// One open folder.
pub struct Folder {
    pub name: String,
    pub dir: PathBuf,
    pub engine: Arc<Engine>,
    duties: SharedDuties,
    /// Engines narrowed to subfolders, one per endpoint so each keeps its own hook memory.
    scopes: Mutex<std::collections::HashMap<String, Arc<Engine>>>,
}

impl Folder {
    /// Its `.ragdown.json`, read now.
    pub fn config(&self) -> FolderConfig {
        FolderConfig::read(&self.dir)
    }

    pub fn is_primary(&self) -> bool {
        self.engine.is_primary()
    }

    /// The engine of `/mcp/<folder>/<sub>`: this folder narrowed to the subfolder `sub`
    /// (checked by the caller to be a real directory).
    pub fn scoped_engine(&self, sub: &str) -> Option<Arc<Engine>> {
        let mut scopes = self.scopes.lock().ok()?;
        // Bounded like the hook's sessions: a client cannot grow it without limit.
        if scopes.len() >= 1000 && !scopes.contains_key(sub) {
            scopes.clear();
        }
        Some(
            scopes
                .entry(sub.to_string())
                .or_insert_with(|| Arc::new(self.engine.narrowed(sub)))
                .clone(),
        )
    }
}

impl Folder {
    /// Stops the follower and frees the primary lock (a reader's takeover loop ends too),
    /// even while a request still holds this folder.
    pub fn close(&self) {
        if let Ok(mut d) = self.duties.lock() {
            d.close();
        }
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        self.close();
    }
}

/// How folder indexes are opened; swapped whole when the embedder or watching changes.
#[derive(Clone)]
pub struct OpenWith {
    pub embedder: Arc<dyn Embedder>,
    pub watch: bool,
}

pub struct Folders {
    docs_dir: PathBuf,
    /// Each folder's index and the query log (their layout is `index`'s).
    data_dir: FoldersDataDir,
    max_file_bytes: u64,
    /// Where the folders' records go: `None` for each folder's data dir.
    database: Option<SharedDatabase>,
    takeover_every: Duration,
    pub settings: SharedSettings,
    pub query_log: Arc<QueryLog>,
    open_with: RwLock<OpenWith>,
    open: Mutex<BTreeMap<String, Arc<Folder>>>,
    /// Folders that failed to open, so the once-a-second refresh logs each failure once.
    failed: Mutex<std::collections::HashSet<String>>,
}

/// Where folder `name`'s records are kept: its data dir, or its own schema of `database`.
pub fn records_of_folder(database: Option<&SharedDatabase>, name: &str) -> RecordsLocation {
    database.map_or(RecordsLocation::DataDir, |d| d.folder(name))
}

/// A folder name the web UI and agents may create or rename to.
pub fn valid_new_name(name: &str) -> Result<(), ToolError> {
    let pattern = regex::Regex::new(r"^[A-Za-z0-9_][A-Za-z0-9 _.-]{0,63}$")
        .map_err(|e| ToolError::internal(e.to_string()))?;
    if !pattern.is_match(name) || name != name.trim() || name == "node_modules" {
        return Err(ToolError::invalid(format!(
            "{name:?} is not a valid folder name: use up to 64 letters, digits, spaces, '_', '.' or '-', starting with a letter, digit or '_'"
        )));
    }
    Ok(())
}

fn poisoned() -> ToolError {
    ToolError::internal("the folder table was poisoned by a panic; restart ragdown")
}

impl Folders {
    pub fn new(
        docs_dir: PathBuf,
        data_dir: PathBuf,
        max_file_bytes: u64,
        database: Option<SharedDatabase>,
        takeover_every: Duration,
        settings: SharedSettings,
        open_with: OpenWith,
    ) -> Self {
        let data_dir = FoldersDataDir::new(data_dir);
        let query_log = Arc::new(match &database {
            Some(shared) => QueryLog::shared(ragdown_index::shared_log::SharedLog::new(
                &shared.url,
                &shared.prefix,
            )),
            None => QueryLog::new(data_dir.query_log()),
        });
        Self {
            docs_dir,
            data_dir,
            max_file_bytes,
            database,
            takeover_every,
            settings,
            query_log,
            open_with: RwLock::new(open_with),
            open: Mutex::new(BTreeMap::new()),
            failed: Mutex::new(std::collections::HashSet::new()),
        }
    }

    pub fn docs_dir(&self) -> &Path {
        &self.docs_dir
    }

    pub fn embedder(&self) -> Arc<dyn Embedder> {
        match self.open_with.read() {
            Ok(o) => o.embedder.clone(),
            Err(p) => p.into_inner().embedder.clone(),
        }
    }

    fn folder_data_dir(&self, name: &str) -> PathBuf {
        self.data_dir.folder(name)
    }

    /// The folder directories on disk now: real directories whose names are folder names by
    /// the rule the API creates them under ([`valid_new_name`]), sorted. A directory named
    /// otherwise (`<svg onload=…>` made on disk) is not served; its name is logged once.
    pub fn scan(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.docs_dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| !is_skipped_name(n))
            .filter(|n| {
                let valid = valid_new_name(n).is_ok();
                if !valid
                    && let Ok(mut failed) = self.failed.lock()
                    && failed.insert(format!("name:{n}"))
                {
                    tracing::warn!(
                        "the directory {n:?} in {} is not served as a folder: rename it to up to 64 letters, digits, spaces, '_', '.' or '-', starting with a letter, digit or '_'",
                        self.docs_dir.display()
                    );
                }
                valid
            })
            .collect();
        names.sort();
        names
    }

    /// Markdown files directly in the docs dir: not in any folder, so not indexed.
    pub fn loose_files(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.docs_dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| !is_skipped_name(n) && is_markdown_path(n))
            .collect();
        names.sort();
        names
    }

    /// Moves every loose Markdown file into the folder `name`, made when missing, so that it
    /// is indexed; nothing moves when one of them would replace a file there. Links between
    /// them keep working without a rewrite: they move together and keep their names. Returns
    /// the folder and the files moved.
    pub fn adopt_loose(&self, name: &str) -> Result<(Arc<Folder>, Vec<String>), ToolError> {
        let loose = self.loose_files();
        if loose.is_empty() {
            return Err(ToolError::not_found(
                "there are no loose Markdown files at the top of the docs directory",
            ));
        }
        let folder = match self.get(name) {
            Some(folder) => folder,
            None => self.create(name, &FolderConfig::default())?,
        };
        if let Some(taken) = loose.iter().find(|f| folder.dir.join(f).exists()) {
            return Err(ToolError::conflict(format!(
                "{name}/{taken} exists already, so nothing was moved: rename one of the two first"
            )));
        }
        for file in &loose {
            std::fs::rename(self.docs_dir.join(file), folder.dir.join(file))
                .map_err(|e| ToolError::internal(format!("moving {file} into {name}: {e}")))?;
        }
        folder.engine.sync_paths(&loose)?;
        Ok((folder, loose))
    }

    fn open_folder(&self, name: &str) -> Result<Arc<Folder>, ToolError> {
        let open_with = match self.open_with.read() {
            Ok(o) => o.clone(),
            Err(p) => p.into_inner().clone(),
        };
        let dir = self.docs_dir.join(name);
        let data_dir = self.folder_data_dir(name);
        let index_settings = IndexSettings {
            root: dir.clone(),
            data_dir: data_dir.clone(),
            max_file_bytes: self.max_file_bytes,
            records: records_of_folder(self.database.as_ref(), name),
        };
        let role = lock::claim(&index_settings).map_err(|e| {
            ToolError::internal(format!("taking the primary lock of folder {name}: {e}"))
        })?;
        let index = Index::open_as(&role, index_settings, open_with.embedder.clone())?;
        let mut engine = Engine::shared(name.to_string(), Arc::new(index), self.settings.clone());
        engine.folder_config = Some(dir.clone());
        engine.query_log = Some(self.query_log.clone());
        let engine = Arc::new(engine);
        let duties: SharedDuties = Arc::default();
        primary::take_role(&engine, role, &duties, open_with.watch, self.takeover_every);
        tracing::info!("folder {name} opened");
        Ok(Arc::new(Folder {
            name: name.to_string(),
            dir,
            engine,
            duties,
            scopes: Mutex::new(std::collections::HashMap::new()),
        }))
    }

    /// Opens folders that appeared and closes those that went.
    pub fn refresh(&self) -> Result<(), ToolError> {
        let on_disk = self.scan();
        let mut open = self.open.lock().map_err(|_| poisoned())?;
        open.retain(|name, folder| {
            let keep = on_disk.contains(name);
            if !keep {
                folder.close();
            }
            keep
        });
        for name in on_disk {
            if open.contains_key(&name) {
                continue;
            }
            match self.open_folder(&name) {
                Ok(folder) => {
                    if let Ok(mut failed) = self.failed.lock() {
                        failed.remove(&name);
                    }
                    open.insert(name, folder);
                }
                Err(e) => {
                    let first = self.failed.lock().is_ok_and(|mut f| f.insert(name.clone()));
                    if first {
                        tracing::error!(
                            "folder {name} could not be opened (retried every second): {e}"
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// Every folder, by name.
    pub fn list(&self) -> Vec<Arc<Folder>> {
        if let Err(e) = self.refresh() {
            tracing::error!("{e}");
        }
        match self.open.lock() {
            Ok(open) => open.values().cloned().collect(),
            Err(_) => Vec::new(),
        }
    }

    /// One folder by its exact name.
    pub fn get(&self, name: &str) -> Option<Arc<Folder>> {
        if name.is_empty() || is_skipped_name(name) {
            return None;
        }
        {
            let open = self.open.lock().ok()?;
            if let Some(f) = open.get(name)
                && f.dir.is_dir()
            {
                return Some(f.clone());
            }
        }
        self.refresh().ok()?;
        self.open.lock().ok()?.get(name).cloned()
    }

    /// Makes a folder directory with its `.ragdown.json`, then opens it.
    pub fn create(&self, name: &str, config: &FolderConfig) -> Result<Arc<Folder>, ToolError> {
        valid_new_name(name)?;
        let dir = self.docs_dir.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(ToolError::conflict(format!(
                    "a folder named {name} already exists"
                )));
            }
            Err(e) => return Err(ToolError::internal(format!("creating {name}: {e}"))),
        }
        config.write(&dir)?;
        self.get(name)
            .ok_or_else(|| ToolError::internal(format!("folder {name} was made but not opened")))
    }

    /// Renames a folder, keeping its index (renamed with it), then syncs it.
    pub fn rename(&self, name: &str, to: &str) -> Result<Arc<Folder>, ToolError> {
        valid_new_name(to)?;
        let from_dir = self.docs_dir.join(name);
        let to_dir = self.docs_dir.join(to);
        let case_only = name != to && name.eq_ignore_ascii_case(to);
        if name != to && to_dir.exists() && !case_only {
            return Err(ToolError::conflict(format!(
                "a folder named {to} already exists"
            )));
        }
        let mut open = self.open.lock().map_err(|_| poisoned())?;
        match open.remove(name) {
            Some(old) => old.close(),
            None if !from_dir.is_dir() => {
                return Err(ToolError::not_found(format!("no folder named {name}")));
            }
            None => {}
        }
        let records = |folder| records_of_folder(self.database.as_ref(), folder);
        let move_dir = || std::fs::rename(&from_dir, &to_dir);
        match ragdown_index::store::rename_records(&records(name), &records(to), move_dir) {
            Ok(moved) => {
                moved.map_err(|e| ToolError::internal(format!("renaming {name} to {to}: {e}")))?
            }
            Err(e) => {
                // The database is out of reach: the folder is not renamed, so that no server
                // sees its files under a name whose records are elsewhere.
                return Err(ToolError::internal(format!(
                    "renaming {name} to {to}: its records could not follow ({e}); try again \
                     once the database answers"
                )));
            }
        }
        if let Err(e) = self.data_dir.move_folder(name, to) {
            tracing::warn!("the index of {name} could not follow the rename ({e}): rebuilt");
        }
        let folder = self.open_folder(to)?;
        open.insert(to.to_string(), folder.clone());
        drop(open);
        folder.engine.sync()?;
        Ok(folder)
    }

    /// Deletes a folder and everything in it, and its index.
    pub fn delete(&self, name: &str) -> Result<(), ToolError> {
        let dir = self.docs_dir.join(name);
        let is_folder = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
        if is_skipped_name(name) || valid_new_name(name).is_err() || !is_folder {
            return Err(ToolError::not_found(format!("no folder named {name}")));
        }
        let mut open = self.open.lock().map_err(|_| poisoned())?;
        if let Some(old) = open.remove(name) {
            old.close();
        }
        let records = records_of_folder(self.database.as_ref(), name);
        let remove_dir = || std::fs::remove_dir_all(&dir);
        match ragdown_index::store::drop_records(&records, remove_dir) {
            Ok(removed) => {
                removed.map_err(|e| ToolError::internal(format!("deleting {name}: {e}")))?
            }
            Err(e) => {
                return Err(ToolError::internal(format!(
                    "deleting {name}: its records could not be dropped ({e}); nothing was \
                     deleted, try again once the database answers"
                )));
            }
        }
        if let Err(e) = self.data_dir.remove_folder(name) {
            // The folder is gone; its index is derived data, removed again at the next delete.
            tracing::warn!("the index of the deleted folder {name} could not be removed: {e}");
        }
        Ok(())
    }

    /// Closes every folder and opens them again with a new embedder or watch setting.
    pub fn reopen_all(&self, open_with: OpenWith) -> Result<(), ToolError> {
        let mut open = self.open.lock().map_err(|_| poisoned())?;
        for folder in open.values() {
            folder.close();
        }
        open.clear();
        match self.open_with.write() {
            Ok(mut o) => *o = open_with,
            Err(p) => *p.into_inner() = open_with,
        }
        drop(open);
        self.refresh()
    }

    /// Whether this process is the primary of every open folder.
    pub fn is_primary(&self) -> bool {
        self.list().iter().all(|f| f.is_primary())
    }

    /// Closes every folder (shutdown): followers stop after their running batch.
    pub fn close(&self) {
        if let Ok(mut open) = self.open.lock() {
            for folder in open.values() {
                folder.close();
            }
            open.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names() {
        assert!(valid_new_name("work").is_ok());
        assert!(valid_new_name("My notes 2.0").is_ok());
        assert!(valid_new_name(".hidden").is_err());
        assert!(valid_new_name(" work").is_err());
        assert!(valid_new_name("a/b").is_err());
        assert!(valid_new_name("node_modules").is_err());
        assert!(valid_new_name(&"x".repeat(65)).is_err());
    }
}
