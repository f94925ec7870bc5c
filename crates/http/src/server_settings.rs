//! The tunable server settings of `serve`: what the environment says, what Settings → Server
//! saved in `.ragdown-server.json` (in the docs dir; each saved value wins over its variable at
//! once and after restarts, `null` gives it back), and the two laid together. The docs dir,
//! read-only and the token stay variables only. Validation of a `PATCH /api/settings` body
//! lives here; applying it (reloading an embedder, reopening folders) is the caller's.

use std::path::{Path, PathBuf};

use ragdown_server::hook_patch::{self, HookPatch};
use ragdown_server::{HookSettings, ServerSettings, ToolError};
use serde_json::{Map, Value, json};

pub const FILE_NAME: &str = ".ragdown-server.json";

/// The settings the web UI may change while the server runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Tunables {
    pub embedder: String,
    pub watch: bool,
    pub root_mcp: bool,
    pub text_limit: usize,
    pub max_per_document: usize,
    pub follow_links: usize,
    pub query_log: bool,
    pub hook: HookSettings,
}

const KEYS: [&str; 8] = [
    "embedder",
    "watch",
    "root_mcp",
    "text_limit",
    "max_per_document",
    "follow_links",
    "query_log",
    "hook",
];

fn invalid(key: &str, want: &str, v: &Value) -> ToolError {
    ToolError::invalid(format!("{key} must be {want}, not {v}"))
}

/// Checks one top-level value (the hook object's are checked by `hook_patch`).
fn check_value(key: &str, v: &Value) -> Result<(), ToolError> {
    let (ok, want) = match key {
        "embedder" => (
            v.as_str().is_some_and(|s| !s.trim().is_empty()),
            "an embedder name",
        ),
        "watch" | "root_mcp" | "query_log" => (v.is_boolean(), "true or false"),
        "text_limit" | "max_per_document" | "follow_links" => {
            (v.as_u64().is_some(), "a non-negative integer")
        }
        _ => (false, "a server setting"),
    };
    if ok {
        Ok(())
    } else {
        Err(invalid(key, want, v))
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

    /// These values with the saved ones laid over them (saved values were validated).
    pub fn with_saved(&self, saved: &Map<String, Value>) -> Self {
        let mut t = self.clone();
        for (k, v) in saved {
            match k.as_str() {
                "embedder" => t.embedder = v.as_str().unwrap_or(&t.embedder).to_string(),
                "watch" => t.watch = v.as_bool().unwrap_or(t.watch),
                "root_mcp" => t.root_mcp = v.as_bool().unwrap_or(t.root_mcp),
                "query_log" => t.query_log = v.as_bool().unwrap_or(t.query_log),
                "text_limit" => t.text_limit = v.as_u64().map_or(t.text_limit, |n| n as usize),
                "max_per_document" => {
                    t.max_per_document = v.as_u64().map_or(t.max_per_document, |n| n as usize)
                }
                "follow_links" => {
                    t.follow_links = v.as_u64().map_or(t.follow_links, |n| n as usize)
                }
                "hook" => {
                    // Saved hook values were checked when read.
                    if let Some(Ok(patch)) = v.as_object().map(HookPatch::from_json) {
                        t.hook = patch.over(&t.hook);
                    }
                }
                _ => {}
            }
        }
        t
    }

    /// Lays the tunable values into the engines' settings.
    pub fn apply_to(&self, server: &mut ServerSettings) {
        server.text_limit = self.text_limit;
        server.max_per_document = self.max_per_document;
        server.follow_links = self.follow_links;
        server.query_log = self.query_log;
        server.hook = self.hook.clone();
    }

    pub fn to_json(&self) -> Value {
        json!({
            "embedder": self.embedder,
            "watch": self.watch,
            "root_mcp": self.root_mcp,
            "text_limit": self.text_limit,
            "max_per_document": self.max_per_document,
            "follow_links": self.follow_links,
            "query_log": self.query_log,
            "hook": {
                "top_k": self.hook.top_k,
                "min_score": self.hook.min_score.map(round),
                "min_ratio": round(self.hook.min_ratio),
                "max_chars": self.hook.max_chars,
            },
        })
    }
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
    pub fn read(&self) -> Map<String, Value> {
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return Map::new();
        };
        let Ok(Value::Object(raw)) = serde_json::from_str::<Value>(&text) else {
            tracing::warn!(
                "{} is not a JSON object: ignored (save the settings again to replace it)",
                self.path.display()
            );
            return Map::new();
        };
        let mut out = Map::new();
        for (k, v) in raw {
            let valid = if k == "hook" {
                v.as_object()
                    .map(|h| {
                        h.iter()
                            .filter(|(hk, hv)| hook_patch::check_value(hk, hv).is_ok())
                            .map(|(hk, hv)| (hk.clone(), hv.clone()))
                            .collect::<Map<_, _>>()
                    })
                    .filter(|h| !h.is_empty())
                    .map(Value::Object)
            } else if KEYS.contains(&k.as_str()) && check_value(&k, &v).is_ok() {
                Some(v)
            } else {
                None
            };
            match valid {
                Some(v) => {
                    out.insert(k, v);
                }
                None => tracing::warn!(
                    "{}: {k} is not a valid setting: skipped",
                    self.path.display()
                ),
            }
        }
        out
    }

    /// The saved values after `patch` (validated whole before anything is written).
    pub fn patched(&self, patch: &Map<String, Value>) -> Result<Map<String, Value>, ToolError> {
        let mut saved = self.read();
        for (k, v) in patch {
            if !KEYS.contains(&k.as_str()) {
                return Err(ToolError::invalid(format!(
                    "{k} is not a server setting: use {}",
                    KEYS.join(", ")
                )));
            }
            if v.is_null() {
                saved.remove(k);
                continue;
            }
            if k == "hook" {
                let Some(changes) = v.as_object() else {
                    return Err(invalid("hook", "an object", v));
                };
                let stored = saved.get("hook").and_then(Value::as_object);
                let hook = hook_patch::patched(stored, changes).map_err(ToolError::invalid)?;
                if hook.is_empty() {
                    saved.remove("hook");
                } else {
                    saved.insert("hook".into(), Value::Object(hook));
                }
                continue;
            }
            check_value(k, v)?;
            saved.insert(k.clone(), v.clone());
        }
        Ok(saved)
    }

    /// Writes the saved values; deletes the file when nothing is saved.
    pub fn write(&self, saved: &Map<String, Value>) -> Result<(), ToolError> {
        if saved.is_empty() {
            return match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(ToolError::internal(format!("{FILE_NAME}: {e}")))
                }
                _ => Ok(()),
            };
        }
        let text = serde_json::to_string_pretty(&Value::Object(saved.clone()))
            .map_err(|e| ToolError::internal(e.to_string()))?;
        ragdown_server::documents::atomic_write(&self.path, FILE_NAME, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_values_win_and_null_gives_them_back() {
        let dir = tempfile::tempdir().unwrap();
        let saved = SavedSettings::new(dir.path());
        let env = Tunables::from_env("minilm", true, false, &ServerSettings::default());
        let patch = json!({"text_limit": 500, "hook": {"top_k": 2}, "root_mcp": true});
        let next = saved.patched(patch.as_object().unwrap()).unwrap();
        saved.write(&next).unwrap();
        let effective = env.with_saved(&saved.read());
        assert_eq!(effective.text_limit, 500);
        assert_eq!(effective.hook.top_k, 2);
        assert!(effective.root_mcp);
        assert_eq!(effective.hook.max_chars, env.hook.max_chars);

        for bad in [
            json!({"text_limit": -1}),
            json!({"watch": "yes"}),
            json!({"hook": {"min_ratio": 3}}),
            json!({"colour": 1}),
        ] {
            assert!(saved.patched(bad.as_object().unwrap()).is_err(), "{bad}");
        }

        let reset = json!({"text_limit": null, "hook": {"top_k": null}, "root_mcp": null});
        let next = saved.patched(reset.as_object().unwrap()).unwrap();
        saved.write(&next).unwrap();
        assert!(
            !dir.path().join(FILE_NAME).exists(),
            "nothing saved: no file"
        );
        assert_eq!(env.with_saved(&saved.read()), env);
    }
}
