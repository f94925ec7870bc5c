//! A folder's own settings, `.ragdown.json` at its root: `title`, `mcp` (default false: a
//! human-only folder), `hook` (the folder's `ragdown_context` defaults) and `created_by`, with
//! every unknown key kept when the file is rewritten. Read on every use, so an edit applies
//! without a restart; an invalid file counts as defaults and is logged once per content.
//!
//! The file is read and written as [`FolderConfig`], a change to it as [`FolderPatch`]; both
//! are checked by their types as they are read. Owns the settings, not the folder's
//! directory: creating, renaming and deleting folders is the HTTP layer's job.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::HookPatch;
use crate::ToolError;
use crate::patch::{self, Change};

/// The file name, at the folder's root (a dot-file: never indexed).
pub const FILE_NAME: &str = ".ragdown.json";

/// A folder's `.ragdown.json`, read and written as this type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FolderConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Always written; a missing or `null` value is `false` (a human-only folder).
    #[serde(default, deserialize_with = "null_is_false")]
    pub mcp: bool,
    /// The folder's hook values over the server's `RAGDOWN_HOOK_*`.
    #[serde(default, skip_serializing_if = "HookPatch::is_empty")]
    pub hook: HookPatch,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Every other key of the file, so a rewrite keeps them.
    #[serde(flatten)]
    rest: Map<String, Value>,
}

/// A change to a folder's settings (the web UI's, or an agent's new folder): a key left out
/// keeps its value, `null` removes it (`"hook": null` every hook value), a value sets it;
/// each value is checked as it is read.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct FolderPatch {
    pub title: Change<String>,
    pub mcp: Change<bool>,
    #[serde(deserialize_with = "HookPatch::or_reset_all")]
    pub hook: HookPatch,
}

impl FolderPatch {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

fn null_is_false<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(false))
}

fn config_path(folder: &Path) -> PathBuf {
    folder.join(FILE_NAME)
}

/// Logs an invalid file once per distinct content, not on every read.
fn warn_once(path: &Path, text: &str, why: &str) {
    static SEEN: Mutex<Option<HashSet<u64>>> = Mutex::new(None);
    let mut hasher = DefaultHasher::new();
    (path, text).hash(&mut hasher);
    let key = hasher.finish();
    let Ok(mut seen) = SEEN.lock() else { return };
    if seen.get_or_insert_with(HashSet::new).insert(key) {
        tracing::warn!(
            "{}: {why}; using the defaults (fix the file or save the folder's settings again)",
            path.display()
        );
    }
}

impl FolderConfig {
    /// The file's values as ragdown keeps them: a blank title is none, and a file holds no
    /// resets (a `null` hook value there is a value not set).
    fn normalised(mut self) -> Self {
        self.title = self
            .title
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        self.hook = HookPatch::default().then(self.hook);
        self
    }

    /// Reads `folder/.ragdown.json`; a missing or invalid file gives the defaults.
    pub fn read(folder: &Path) -> Self {
        let path = config_path(folder);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Self::default();
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(value @ Value::Object(_)) => match patch::read::<Self>(value) {
                Ok(config) => config.normalised(),
                Err(why) => {
                    warn_once(&path, &text, &why.to_string());
                    Self::default()
                }
            },
            Ok(_) => {
                warn_once(&path, &text, "not a JSON object");
                Self::default()
            }
            Err(e) => {
                warn_once(&path, &text, &format!("invalid JSON ({e})"));
                Self::default()
            }
        }
    }

    /// The title shown for the folder: its own, else the directory name.
    pub fn title_or<'a>(&'a self, name: &'a str) -> &'a str {
        self.title.as_deref().unwrap_or(name)
    }

    /// Applies a settings change (already checked as it was read).
    pub fn apply(&mut self, change: FolderPatch) {
        match change.title {
            Change::Keep => {}
            Change::Reset => self.title = None,
            Change::Set(title) => self.title = Some(title),
        }
        match change.mcp {
            Change::Keep => {}
            Change::Reset => self.mcp = false,
            Change::Set(on) => self.mcp = on,
        }
        self.hook = std::mem::take(&mut self.hook).then(change.hook);
        *self = std::mem::take(self).normalised();
    }

    /// Marks the folder as made by `by` (an agent's `ragdown_create_folder`).
    pub fn set_created_by(&mut self, by: &str) {
        self.created_by = Some(by.to_string());
    }

    /// Writes the file atomically, keeping unknown keys; `mcp` is always written.
    pub fn write(&self, folder: &Path) -> Result<(), ToolError> {
        let text =
            serde_json::to_string_pretty(self).map_err(|e| ToolError::internal(e.to_string()))?;
        crate::documents::atomic_write(&config_path(folder), FILE_NAME, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_when_missing_or_invalid() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(FolderConfig::read(dir.path()), FolderConfig::default());
        std::fs::write(dir.path().join(FILE_NAME), "{not json").unwrap();
        let c = FolderConfig::read(dir.path());
        assert!(!c.mcp);
        std::fs::write(dir.path().join(FILE_NAME), r#"{"mcp": "yes"}"#).unwrap();
        assert!(!FolderConfig::read(dir.path()).mcp);
    }

    #[test]
    fn patch_validates_keeps_unknown_keys_and_removes_nulls() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE_NAME),
            r#"{"title": "Work", "mcp": true, "color": "blue", "hook": {"top_k": 2}}"#,
        )
        .unwrap();
        let mut c = FolderConfig::read(dir.path());
        assert_eq!(c.title.as_deref(), Some("Work"));
        assert!(c.mcp);
        assert_eq!(c.hook.top_k, patch::Change::Set(2));

        for (bad, says) in [
            (
                json!({"hook": {"min_ratio": 2}}),
                "hook.min_ratio: must be a number from 0 to 1",
            ),
            (json!({"hook": {"depth": 2}}), "unknown field `depth`"),
            (json!({"mcp": "yes"}), "mcp: invalid type: string"),
        ] {
            let why = patch::read::<FolderPatch>(bad).unwrap_err().to_string();
            assert!(why.contains(says), "{why}");
        }

        let change: FolderPatch =
            patch::read(json!({"hook": {"top_k": null, "min_score": 0.5}, "title": null})).unwrap();
        c.apply(change);
        c.write(dir.path()).unwrap();
        let again = FolderConfig::read(dir.path());
        assert_eq!(again.title, None);
        assert_eq!(again.hook.top_k, patch::Change::Keep);
        assert_eq!(again.hook.min_score, patch::Change::Set(patch::Score(0.5)));
        let text = std::fs::read_to_string(dir.path().join(FILE_NAME)).unwrap();
        assert!(text.contains("\"color\": \"blue\""), "{text}");

        let server = crate::HookSettings::default();
        let merged = again.hook.over(&server);
        assert_eq!(merged.top_k, server.top_k);
        assert_eq!(merged.min_score, Some(0.5));
    }
}
