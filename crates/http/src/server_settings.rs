//! The tunable server settings of `serve`: what the environment says, what Settings → Server
//! saved in `.ragdown-server.json` (in the docs dir; each saved value wins over its variable at
//! once and after restarts, `null` gives it back), and the two laid together. The docs dir,
//! read-only and the token stay variables only. One type, `ServerPatch`, is both the file and a
//! `PATCH /api/settings` body, checked as it is read; applying it (reloading an embedder,
//! reopening folders) is the caller's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ragdown_server::hook_patch::HookPatch;
use ragdown_server::patch::{self, Change, Name};
use ragdown_server::{HookSettings, ServerSettings, ToolError};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

pub const FILE_NAME: &str = ".ragdown-server.json";

/// The settings the web UI may change while the server runs, as they are in effect.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tunables {
    pub embedder: String,
    pub watch: bool,
    pub root_mcp: bool,
    pub text_limit: usize,
    pub max_per_document: usize,
    pub follow_links: usize,
    pub query_log: bool,
    #[serde(serialize_with = "hook_as_written")]
    pub hook: HookSettings,
}

/// The hook values a person can set, as they wrote them (0.95, not 0.949999988).
fn hook_as_written<S: Serializer>(hook: &HookSettings, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct HookShape {
        top_k: usize,
        min_score: Option<f64>,
        min_ratio: f64,
        min_evidence: f64,
        max_chars: usize,
    }
    HookShape {
        top_k: hook.top_k,
        min_score: hook.min_score.map(round),
        min_ratio: round(hook.min_ratio),
        min_evidence: round(hook.min_evidence),
        max_chars: hook.max_chars,
    }
    .serialize(s)
}

/// What `.ragdown-server.json` saves, and what a `PATCH /api/settings` body changes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerPatch {
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub embedder: Change<Name>,
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub watch: Change<bool>,
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub root_mcp: Change<bool>,
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub text_limit: Change<usize>,
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub max_per_document: Change<usize>,
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub follow_links: Change<usize>,
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub query_log: Change<bool>,
    #[serde(
        skip_serializing_if = "HookPatch::is_empty",
        deserialize_with = "HookPatch::or_reset_all"
    )]
    pub hook: HookPatch,
}

impl ServerPatch {
    /// A request body's changes, each value checked; the message names a wrong key.
    pub fn read(body: Value) -> Result<Self, ToolError> {
        patch::read(body).map_err(|why| ToolError::invalid(why.to_string()))
    }

    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// These saved values with `later` laid over them; a reset leaves nothing saved.
    pub fn then(self, later: Self) -> Self {
        Self {
            embedder: self.embedder.then(later.embedder),
            watch: self.watch.then(later.watch),
            root_mcp: self.root_mcp.then(later.root_mcp),
            text_limit: self.text_limit.then(later.text_limit),
            max_per_document: self.max_per_document.then(later.max_per_document),
            follow_links: self.follow_links.then(later.follow_links),
            query_log: self.query_log.then(later.query_log),
            hook: self.hook.then(later.hook),
        }
    }
}

impl Tunables {
    /// The environment's values.
    pub fn from_env(embedder: &str, watch: bool, root_mcp: bool, server: &ServerSettings) -> Self {
        Self {
            embedder: embedder.to_string(),
            watch,
            root_mcp,
            text_limit: server.text_limit,
            max_per_document: server.max_per_document,
            follow_links: server.follow_links,
            query_log: server.query_log,
            hook: server.hook.clone(),
        }
    }

    /// These values with the saved ones laid over them.
    pub fn with_saved(&self, saved: &ServerPatch) -> Self {
        Self {
            embedder: saved
                .embedder
                .value()
                .map_or_else(|| self.embedder.clone(), |n| n.0.clone()),
            watch: saved.watch.or(self.watch),
            root_mcp: saved.root_mcp.or(self.root_mcp),
            text_limit: saved.text_limit.or(self.text_limit),
            max_per_document: saved.max_per_document.or(self.max_per_document),
            follow_links: saved.follow_links.or(self.follow_links),
            query_log: saved.query_log.or(self.query_log),
            hook: saved.hook.over(&self.hook),
        }
    }

    /// Lays the tunable values into the engines' settings.
    pub fn apply_to(&self, server: &mut ServerSettings) {
        server.text_limit = self.text_limit;
        server.max_per_document = self.max_per_document;
        server.follow_links = self.follow_links;
        server.query_log = self.query_log;
        server.hook = self.hook.clone();
    }
}

/// The settings as `/api/status` and `PATCH /api/settings` show them: those in effect, with
/// what is saved, and (in the status) the environment's and each embedder's off-topic floor.
#[derive(Debug, Serialize)]
pub struct SettingsShape {
    #[serde(flatten)]
    pub effective: Tunables,
    pub saved: ServerPatch,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<Tunables>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedders: Option<BTreeMap<String, EmbedderFloor>>,
}

/// An embedder's own `MIN_SCORE`: a hook `min_score` at or under it lets off-topic prompts in.
#[derive(Debug, Serialize)]
pub struct EmbedderFloor {
    pub min_score: f64,
}

/// Every known embedder's floor, by name.
pub fn embedder_floors() -> BTreeMap<String, EmbedderFloor> {
    ragdown_embed::preset::presets()
        .into_iter()
        .map(|p| {
            let floor = EmbedderFloor {
                min_score: round(p.min_score),
            };
            (p.name, floor)
        })
        .collect()
}

/// An `f32` setting as people wrote it (0.95, not 0.949999988).
pub fn round(x: f32) -> f64 {
    ragdown_server::format::rounded(x, 4)
}

/// The saved settings file of a docs dir.
pub struct SavedSettings {
    path: PathBuf,
}

impl SavedSettings {
    pub fn new(docs_dir: &Path) -> Self {
        Self {
            path: docs_dir.join(FILE_NAME),
        }
    }

    /// The saved values; an invalid file or value is logged and skipped.
    pub fn read(&self) -> ServerPatch {
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return ServerPatch::default();
        };
        let file = self.path.display().to_string();
        match serde_json::from_str::<Value>(&text) {
            // A `null` in the file is a value not saved.
            Ok(Value::Object(raw)) => {
                ServerPatch::default().then(patch::read_leniently(&file, Value::Object(raw)))
            }
            _ => {
                tracing::warn!(
                    "{file} is not a JSON object: ignored (save the settings again to replace it)"
                );
                ServerPatch::default()
            }
        }
    }

    /// What identifies the file's present contents without reading it (modified time and
    /// length), `None` when there is none: a change of it means another server — all share
    /// the docs dir — or a hand edit saved new values.
    pub fn stamp(&self) -> Option<(std::time::SystemTime, u64)> {
        let meta = std::fs::metadata(&self.path).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    }

    /// The saved values after `changes`.
    pub fn patched(&self, changes: ServerPatch) -> ServerPatch {
        self.read().then(changes)
    }

    /// Writes the saved values; deletes the file when nothing is saved.
    pub fn write(&self, saved: &ServerPatch) -> Result<(), ToolError> {
        if saved.is_empty() {
            return match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(ToolError::internal(format!("{FILE_NAME}: {e}")))
                }
                _ => Ok(()),
            };
        }
        let text =
            serde_json::to_string_pretty(saved).map_err(|e| ToolError::internal(e.to_string()))?;
        ragdown_server::documents::atomic_write(&self.path, FILE_NAME, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn changes(body: Value) -> ServerPatch {
        ServerPatch::read(body).unwrap()
    }

    #[test]
    fn saved_values_win_and_null_gives_them_back() {
        let dir = tempfile::tempdir().unwrap();
        let saved = SavedSettings::new(dir.path());
        let env = Tunables::from_env("minilm", true, false, &ServerSettings::default());
        let next = saved.patched(changes(
            json!({"text_limit": 500, "hook": {"top_k": 2}, "root_mcp": true}),
        ));
        saved.write(&next).unwrap();
        let effective = env.with_saved(&saved.read());
        assert_eq!(effective.text_limit, 500);
        assert_eq!(effective.hook.top_k, 2);
        assert!(effective.root_mcp);
        assert_eq!(effective.hook.max_chars, env.hook.max_chars);

        for (bad, says) in [
            (json!({"text_limit": -1}), "text_limit: invalid value"),
            (json!({"watch": "yes"}), "watch: invalid type"),
            (json!({"hook": {"min_ratio": 3}}), "hook.min_ratio: must be"),
            (json!({"embedder": " "}), "embedder: must not be empty"),
            (json!({"colour": 1}), "unknown field `colour`"),
        ] {
            let err = ServerPatch::read(bad.clone()).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }

        let next = saved.patched(changes(
            json!({"text_limit": null, "hook": {"top_k": null}, "root_mcp": null}),
        ));
        saved.write(&next).unwrap();
        assert!(
            !dir.path().join(FILE_NAME).exists(),
            "nothing saved: no file"
        );
        assert_eq!(env.with_saved(&saved.read()), env);
    }

    #[test]
    fn a_hand_edited_file_keeps_its_good_values() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE_NAME),
            r#"{"text_limit": 7, "watch": "often", "colour": 1, "hook": {"top_k": 3, "min_ratio": 5}, "query_log": null}"#,
        )
        .unwrap();
        let saved = SavedSettings::new(dir.path()).read();
        assert_eq!(
            serde_json::to_value(&saved).unwrap(),
            json!({"text_limit": 7, "hook": {"top_k": 3}})
        );
    }

    #[test]
    fn the_shape_shows_effective_saved_and_env() {
        let env = Tunables::from_env("minilm", true, false, &ServerSettings::default());
        let saved = changes(json!({"hook": {"min_ratio": 0.95}}));
        let shape = SettingsShape {
            effective: env.with_saved(&saved),
            saved,
            env: Some(env),
            embedders: None,
        };
        let v = serde_json::to_value(&shape).unwrap();
        assert_eq!(v["hook"]["min_ratio"], json!(0.95));
        assert_eq!(v["saved"], json!({"hook": {"min_ratio": 0.95}}));
        assert_eq!(v["env"]["hook"]["min_ratio"], json!(0.0));
        assert_eq!(v["text_limit"], json!(2000));
        assert!(v.get("embedders").is_none());
    }
}
