//! Hook settings laid over others: the one type and the one validator for the `hook` object of
//! a folder's `.ragdown.json` and of the saved server settings (`.ragdown-server.json`,
//! `PATCH /api/settings`). Each value is checked here and only here; a `null` in a patch
//! gives the value back to what lies beneath.

use serde_json::{Map, Value, json};

use crate::HookSettings;

/// The keys a hook object may hold.
pub const HOOK_KEYS: [&str; 4] = ["top_k", "min_score", "min_ratio", "max_chars"];

/// Hook values set over another layer's; `None` falls back to it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookPatch {
    pub top_k: Option<usize>,
    pub min_score: Option<f32>,
    pub min_ratio: Option<f32>,
    pub max_chars: Option<usize>,
}

/// Checks one hook value: a message naming the key and what it must be when it is wrong.
pub fn check_value(key: &str, v: &Value) -> Result<(), String> {
    let (ok, want) = match key {
        "top_k" | "max_chars" => (v.as_u64().is_some(), "a non-negative integer"),
        "min_ratio" => (
            v.as_f64().is_some_and(|r| (0.0..=1.0).contains(&r)),
            "a number from 0 to 1",
        ),
        "min_score" => (v.as_f64().is_some_and(f64::is_finite), "a number"),
        other => {
            return Err(format!(
                "hook.{other} is not a hook setting: use {}",
                HOOK_KEYS.join(", ")
            ));
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!("hook.{key} must be {want}, not {v}"))
    }
}

impl HookPatch {
    /// Reads a hook object; `null` values are unset.
    pub fn from_json(obj: &Map<String, Value>) -> Result<Self, String> {
        let mut hook = Self::default();
        for (key, v) in obj {
            if v.is_null() {
                continue;
            }
            check_value(key, v)?;
            // Checked above: each is the kind of number its key needs.
            let whole = v.as_u64().map(|n| n as usize);
            let fraction = v.as_f64().map(|x| x as f32);
            match key.as_str() {
                "top_k" => hook.top_k = whole,
                "max_chars" => hook.max_chars = whole,
                "min_ratio" => hook.min_ratio = fraction,
                _ => hook.min_score = fraction,
            }
        }
        Ok(hook)
    }

    /// `base` with this patch's values laid over it.
    pub fn over(&self, base: &HookSettings) -> HookSettings {
        HookSettings {
            top_k: self.top_k.unwrap_or(base.top_k),
            min_score: self.min_score.or(base.min_score),
            min_ratio: self.min_ratio.unwrap_or(base.min_ratio),
            min_evidence: base.min_evidence,
            max_chars: self.max_chars.unwrap_or(base.max_chars),
        }
    }

    /// The set values as a hook object.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        if let Some(v) = self.top_k {
            m.insert("top_k".into(), json!(v));
        }
        if let Some(v) = self.min_score {
            m.insert("min_score".into(), json!(v));
        }
        if let Some(v) = self.min_ratio {
            m.insert("min_ratio".into(), json!(v));
        }
        if let Some(v) = self.max_chars {
            m.insert("max_chars".into(), json!(v));
        }
        m
    }
}

/// A stored hook object after a patch's `changes`: each value checked, `null` removing its
/// key. Nothing changes when any value is wrong.
pub fn patched(
    stored: Option<&Map<String, Value>>,
    changes: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut hook = stored.cloned().unwrap_or_default();
    for (key, v) in changes {
        if v.is_null() {
            // Refuse an unknown key even when it is being removed.
            if !HOOK_KEYS.contains(&key.as_str()) {
                return Err(format!(
                    "hook.{key} is not a hook setting: use {}",
                    HOOK_KEYS.join(", ")
                ));
            }
            hook.remove(key);
        } else {
            check_value(key, v)?;
            hook.insert(key.clone(), v.clone());
        }
    }
    Ok(hook)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_validator_for_every_hook_object() {
        let ok = json!({"top_k": 2, "min_ratio": 0.5, "min_score": -0.1, "max_chars": 0});
        let hook = HookPatch::from_json(ok.as_object().unwrap()).unwrap();
        assert_eq!(hook.top_k, Some(2));
        assert_eq!(hook.min_score, Some(-0.1));
        for (bad, says) in [
            (
                json!({"top_k": -1}),
                "hook.top_k must be a non-negative integer",
            ),
            (
                json!({"min_ratio": 2}),
                "hook.min_ratio must be a number from 0 to 1",
            ),
            (
                json!({"min_score": "high"}),
                "hook.min_score must be a number",
            ),
            (json!({"depth": 1}), "hook.depth is not a hook setting"),
        ] {
            let err = HookPatch::from_json(bad.as_object().unwrap()).unwrap_err();
            assert!(err.starts_with(says), "{err}");
        }
        let stored = json!({"top_k": 2, "max_chars": 10});
        let next = patched(
            stored.as_object(),
            json!({"top_k": null, "min_ratio": 0.2})
                .as_object()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            Value::Object(next),
            json!({"max_chars": 10, "min_ratio": 0.2})
        );
        assert!(patched(None, json!({"min_ratio": 9}).as_object().unwrap()).is_err());
        let base = HookSettings::default();
        let over = HookPatch {
            max_chars: Some(5),
            ..Default::default()
        }
        .over(&base);
        assert_eq!((over.top_k, over.max_chars), (base.top_k, 5));
    }
}
