//! Hook settings laid over others: the one type for the `hook` object of a folder's
//! `.ragdown.json` and of the saved server settings (`.ragdown-server.json`,
//! `PATCH /api/settings`). Each value is checked by its type as it is read (`patch`); a `null`
//! gives the value back to what lies beneath.

use serde::{Deserialize, Deserializer, Serialize};

use crate::HookSettings;
use crate::patch::{Change, NonNegative, Ratio, Score};

/// Hook values set over another layer's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HookPatch {
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub top_k: Change<usize>,
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub min_score: Change<Score>,
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub min_ratio: Change<Ratio>,
    /// The main gate (`RAGDOWN_HOOK_MIN_EVIDENCE`).
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub min_evidence: Change<NonNegative>,
    #[serde(skip_serializing_if = "Change::is_keep")]
    pub max_chars: Change<usize>,
}

impl HookPatch {
    /// Every value given back (a `null` hook object).
    pub fn reset_all() -> Self {
        Self {
            top_k: Change::Reset,
            min_score: Change::Reset,
            min_ratio: Change::Reset,
            min_evidence: Change::Reset,
            max_chars: Change::Reset,
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// This layer with `later` laid over it (what a file holds after a patch).
    pub fn then(self, later: Self) -> Self {
        Self {
            top_k: self.top_k.then(later.top_k),
            min_score: self.min_score.then(later.min_score),
            min_ratio: self.min_ratio.then(later.min_ratio),
            min_evidence: self.min_evidence.then(later.min_evidence),
            max_chars: self.max_chars.then(later.max_chars),
        }
    }

    /// `base` with this patch's values laid over it.
    pub fn over(&self, base: &HookSettings) -> HookSettings {
        HookSettings {
            top_k: self.top_k.or(base.top_k),
            min_score: self
                .min_score
                .value()
                .map(|s| s.0 as f32)
                .or(base.min_score),
            min_ratio: self
                .min_ratio
                .value()
                .map_or(base.min_ratio, |r| r.0 as f32),
            min_evidence: self
                .min_evidence
                .value()
                .map_or(base.min_evidence, |e| e.0 as f32),
            max_chars: self.max_chars.or(base.max_chars),
        }
    }

    /// Reads a `hook` key where `null` gives every value back (serde's `deserialize_with`).
    pub fn or_reset_all<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Option::<Self>::deserialize(d)?.unwrap_or_else(Self::reset_all))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::read;
    use serde_json::json;

    #[test]
    fn one_type_checks_every_hook_object() {
        let ok = json!({"top_k": 2, "min_ratio": 0.5, "min_score": -0.1, "max_chars": 0});
        let hook: HookPatch = read(ok).unwrap();
        assert_eq!(hook.top_k, Change::Set(2));
        assert_eq!(hook.min_score, Change::Set(Score(-0.1)));
        for (bad, says) in [
            (json!({"top_k": -1}), "top_k: invalid value: integer `-1`"),
            (
                json!({"min_ratio": 2}),
                "min_ratio: must be a number from 0 to 1",
            ),
            (
                json!({"min_score": "high"}),
                "min_score: invalid type: string",
            ),
            (json!({"depth": 1}), "unknown field `depth`"),
        ] {
            let err = read::<HookPatch>(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{err}");
        }
        let stored: HookPatch = read(json!({"top_k": 2, "max_chars": 10})).unwrap();
        let changes: HookPatch = read(json!({"top_k": null, "min_ratio": 0.2})).unwrap();
        assert_eq!(
            serde_json::to_value(stored.then(changes)).unwrap(),
            json!({"max_chars": 10, "min_ratio": 0.2})
        );
        let base = HookSettings::default();
        let over = HookPatch {
            max_chars: Change::Set(5),
            ..Default::default()
        }
        .over(&base);
        assert_eq!((over.top_k, over.max_chars), (base.top_k, 5));
        assert!(HookPatch::default().then(HookPatch::reset_all()).is_empty());
    }
}
