//! `serve`'s saved settings: `.ragdown-server.json` in the docs dir, which Settings → Server
//! writes (each saved value wins over its variable at once and after restarts, `null` gives
//! it back), and how `/api/status` shows the settings. Which settings there are, and
//! `ServerPatch` — at once the file and a `PATCH /api/settings` body — are declared in
//! `ragdown_server::settings`; applying a change (reloading an embedder, reopening folders)
//! is the caller's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use ragdown_server::ServerPatch;
use ragdown_server::patch;
use ragdown_server::{ServerSettings, ToolError};
use serde::Serialize;
use serde_json::Value;

pub const FILE_NAME: &str = ".ragdown-server.json";

/// The settings as `/api/status` and `PATCH /api/settings` show them: those in effect, with
/// what is saved, and (in the status) the environment's and each embedder's off-topic floor.
#[derive(Debug, Serialize)]
pub struct SettingsShape {
    #[serde(flatten)]
    pub effective: ServerSettings,
    pub saved: ServerPatch,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<ServerSettings>,
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

    fn env() -> ServerSettings {
        ServerSettings {
            embedder: "minilm".into(),
            ..ServerSettings::default()
        }
    }

    fn changes(body: Value) -> ServerPatch {
        ServerPatch::read(body).unwrap()
    }

    #[test]
    fn saved_values_win_and_null_gives_them_back() {
        let dir = tempfile::tempdir().unwrap();
        let saved = SavedSettings::new(dir.path());
        let env = env();
        let next = saved.patched(changes(
            json!({"text_limit": 500, "hook": {"top_k": 2}, "root_mcp": true}),
        ));
        saved.write(&next).unwrap();
        let effective = saved.read().over(&env);
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
        assert_eq!(saved.read().over(&env), env);
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
        let env = env();
        let saved = changes(json!({"hook": {"min_ratio": 0.95}}));
        let shape = SettingsShape {
            effective: saved.over(&env),
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
