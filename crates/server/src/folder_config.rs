//! A folder's own settings, `.ragdown.json` at its root: `title`, `mcp` (default false: a
//! human-only folder), `hook` (the folder's `ragdown_context` defaults) and `created_by`, with
//! every unknown key kept when the file is rewritten. Read on every use, so an edit applies
//! without a restart; an invalid file counts as defaults and is logged once per content.
//!
//! Owns the validation of a settings patch (the web UI's and an agent's), not the folder's
//! directory: creating, renaming and deleting folders is the HTTP layer's job.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use crate::ToolError;
use crate::hook_patch::HookPatch;
use crate::patch;

/// The file name, at the folder's root (a dot-file: never indexed).
pub const FILE_NAME: &str = ".ragdown.json";

/// A folder's `.ragdown.json`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FolderConfig {
    pub title: Option<String>,
    pub mcp: bool,
    /// The folder's hook values over the server's `RAGDOWN_HOOK_*`.
    pub hook: HookPatch,
    pub created_by: Option<String>,
    /// The whole object as read, unknown keys included, so a rewrite keeps them.
    raw: Map<String, Value>,
}

/// A `hook` value: an object of changes, `null` giving every value back; what a file holds
/// after it is normalised (no resets kept).
fn read_hook(v: &Value) -> Result<HookPatch, String> {
    let changes = patch::read::<Option<HookPatch>>(v.clone())
        .map_err(|why| format!("hook.{why}"))?
        .unwrap_or_else(HookPatch::reset_all);
    Ok(changes)
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
    fn from_object(raw: Map<String, Value>) -> Result<Self, String> {
        let title = match raw.get("title") {
            None | Some(Value::Null) => None,
            Some(Value::String(t)) => Some(t.trim().to_string()).filter(|t| !t.is_empty()),
            Some(other) => return Err(format!("title must be a string, not {other}")),
        };
        let mcp = match raw.get("mcp") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => return Err(format!("mcp must be true or false, not {other}")),
        };
        let hook = match raw.get("hook") {
            None => HookPatch::default(),
            // A file keeps no resets: a `null` there is a value not set.
            Some(v) => HookPatch::default().then(read_hook(v)?),
        };
        let created_by = raw
            .get("created_by")
            .and_then(Value::as_str)
            .map(str::to_string);
        Ok(Self {
            title,
            mcp,
            hook,
            created_by,
            raw,
        })
    }

    /// Reads `folder/.ragdown.json`; a missing or invalid file gives the defaults.
    pub fn read(folder: &Path) -> Self {
        let path = config_path(folder);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Self::default();
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(raw)) => match Self::from_object(raw) {
                Ok(config) => config,
                Err(why) => {
                    warn_once(&path, &text, &why);
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

    /// Applies a settings patch (`title`, `mcp`, `hook`; `null` removes a value), validating
    /// every value before changing anything.
    pub fn apply_patch(&mut self, patch: &Map<String, Value>) -> Result<(), ToolError> {
        let mut raw = self.raw.clone();
        for key in ["title", "mcp"] {
            match patch.get(key) {
                None => {}
                Some(Value::Null) => {
                    raw.remove(key);
                }
                Some(v) => {
                    raw.insert(key.into(), v.clone());
                }
            }
        }
        if let Some(changes) = patch.get("hook") {
            let hook = self
                .hook
                .clone()
                .then(read_hook(changes).map_err(ToolError::invalid)?);
            if hook.is_empty() {
                raw.remove("hook");
            } else {
                let hook =
                    serde_json::to_value(&hook).map_err(|e| ToolError::internal(e.to_string()))?;
                raw.insert("hook".into(), hook);
            }
        }
        let next = Self::from_object(raw).map_err(ToolError::invalid)?;
        *self = next;
        Ok(())
    }

    /// Marks the folder as made by `by` (an agent's `ragdown_create_folder`).
    pub fn set_created_by(&mut self, by: &str) {
        self.created_by = Some(by.to_string());
        self.raw.insert("created_by".into(), json!(by));
    }

    /// Writes the file atomically, keeping unknown keys; `mcp` is always written.
    pub fn write(&self, folder: &Path) -> Result<(), ToolError> {
        let mut raw = self.raw.clone();
        raw.insert("mcp".into(), json!(self.mcp));
        let text = serde_json::to_string_pretty(&Value::Object(raw))
            .map_err(|e| ToolError::internal(e.to_string()))?;
        crate::documents::atomic_write(&config_path(folder), FILE_NAME, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

        let bad = json!({"hook": {"min_ratio": 2}});
        assert!(c.apply_patch(bad.as_object().unwrap()).is_err());
        let bad = json!({"hook": {"depth": 2}});
        assert!(c.apply_patch(bad.as_object().unwrap()).is_err());
        assert_eq!(
            c.hook.top_k,
            patch::Change::Set(2),
            "a refused patch changes nothing"
        );

        let patch = json!({"hook": {"top_k": null, "min_score": 0.5}, "title": null});
        c.apply_patch(patch.as_object().unwrap()).unwrap();
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
