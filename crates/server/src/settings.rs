//! The server's settings, each declared once, in the two `settings!` lists below: its field,
//! type, default, variable and the type a change of it is checked as. From that one line
//! come the field of [`ServerSettings`] (or [`HookSettings`]), its default, reading its
//! variable ([`ServerSettings::with_variables`], given the binary's reader: this crate never
//! reads the environment), its key in [`ServerPatch`] (the saved `.ragdown-server.json` and the
//! `PATCH /api/settings` body) or [`HookPatch`] (also a folder's `.ragdown.json` `hook`), and
//! how Settings → Server shows it (`Serialize`, as people wrote it). A new setting is one line
//! there, plus its row in the web UI's Settings.
//!
//! A variable is checked by the same type as a change: `RAGDOWN_HOOK_MIN_RATIO=2` is refused
//! at start as `PATCH {"hook": {"min_ratio": 2}}` is.

use std::sync::{Arc, RwLock};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::patch::{self, Change, Name, NonNegative, Ratio, Score};

/// Lowest evidence the prompt's strongest section needs for anything to be injected
/// (`RAGDOWN_HOOK_MIN_EVIDENCE`); measured before `context::FOLLOW_SHARE`, every section then
/// needing it. At weight 1.25: 0.7 → 74/0, 76/0, 73%/4 off-topic; 0.75 → 70/0, 70/0, 71%/2;
/// 0.8 → 64/0, 65/0, 68%/2.
pub const MIN_EVIDENCE: f32 = 0.75;

/// What a checked change of type `Self` sets a setting of type `T` to.
pub trait Sets<T> {
    fn sets(&self) -> T;
}

impl Sets<usize> for usize {
    fn sets(&self) -> usize {
        *self
    }
}

impl Sets<bool> for bool {
    fn sets(&self) -> bool {
        *self
    }
}

impl Sets<String> for Name {
    fn sets(&self) -> String {
        self.0.clone()
    }
}

impl Sets<f32> for Ratio {
    fn sets(&self) -> f32 {
        self.0 as f32
    }
}

impl Sets<f32> for NonNegative {
    fn sets(&self) -> f32 {
        self.0 as f32
    }
}

/// A `min_score` set is a floor; none is the embedder's own.
impl Sets<Option<f32>> for Score {
    fn sets(&self) -> Option<f32> {
        Some(self.0 as f32)
    }
}

impl Sets<Vec<String>> for ToolNames {
    fn sets(&self) -> Vec<String> {
        self.0.clone()
    }
}

/// A setting as Settings → Server shows it: as people wrote it (0.95, not 0.949999988).
pub trait Shown {
    type As: Serialize;
    fn shown(&self) -> Self::As;
}

impl Shown for usize {
    type As = usize;
    fn shown(&self) -> usize {
        *self
    }
}

impl Shown for bool {
    type As = bool;
    fn shown(&self) -> bool {
        *self
    }
}

impl Shown for String {
    type As = String;
    fn shown(&self) -> String {
        self.clone()
    }
}

impl Shown for f32 {
    type As = f64;
    fn shown(&self) -> f64 {
        crate::values::rounded(*self, 4)
    }
}

impl Shown for Option<f32> {
    type As = Option<f64>;
    fn shown(&self) -> Option<f64> {
        self.map(|x| crate::values::rounded(x, 4))
    }
}

/// A comma-separated list of tool names (`RAGDOWN_DISABLED_TOOLS`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolNames(pub Vec<String>);

impl<'de> Deserialize<'de> for ToolNames {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let list = String::deserialize(d)?;
        Ok(Self(
            list.split(',')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect(),
        ))
    }
}

/// A variable's text as a value of `P`, checked by the same rules as a change: a number or
/// `true`/`false` (also `yes`/`no`, `on`/`off`, `1`/`0`) where `P` takes one, else the text.
pub fn from_variable<P: DeserializeOwned>(name: &str, text: &str) -> Result<P, String> {
    let text = text.trim();
    let mut readings = Vec::new();
    if let Ok(scalar @ (Value::Number(_) | Value::Bool(_))) = serde_json::from_str(text) {
        readings.push(scalar);
    }
    match text.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => readings.push(Value::Bool(true)),
        "0" | "false" | "no" | "off" => readings.push(Value::Bool(false)),
        _ => {}
    }
    readings.push(Value::String(text.to_string()));
    let mut first_error = None;
    for reading in readings {
        match patch::read::<P>(reading) {
            Ok(value) => return Ok(value),
            Err(why) => {
                first_error.get_or_insert(why);
            }
        }
    }
    let why = first_error.map(|e| e.to_string()).unwrap_or_default();
    Err(format!("{name}={text:?} is not a valid value: {why}"))
}

/// A group of settings' changes, for the helpers serde calls on a nested group.
pub trait PatchGroup: Default + PartialEq {
    /// Every value given back (a `null` group).
    fn reset_all() -> Self;
}

fn is_empty_group<P: PatchGroup>(p: &P) -> bool {
    *p == P::default()
}

/// Reads a group where `null` gives every value back.
fn group_or_reset_all<'de, D: Deserializer<'de>, P: PatchGroup + Deserialize<'de>>(
    d: D,
) -> Result<P, D::Error> {
    Ok(Option::<P>::deserialize(d)?.unwrap_or_else(P::reset_all))
}

/// Declares a group of settings: the settings type and its change type, from one line per
/// setting — `field: Type = default, "VARIABLE", ChangeType;` — under `fixed` (read from the
/// variable only) or `tunable` (also changed by a saved file or a patch, and shown), and an
/// optional nested group.
macro_rules! settings {
    (
        $(#[$settings_doc:meta])*
        $settings:ident;
        $(#[$patch_doc:meta])*
        $patch:ident;
        fixed {
            $( $(#[$fixed_doc:meta])* $fixed:ident: $fixed_ty:ty = $fixed_default:expr, $fixed_var:literal, $fixed_change:ty; )*
        }
        tunable {
            $( $(#[$doc:meta])* $field:ident: $ty:ty = $default:expr, $var:literal, $change:ty; )*
        }
        $( nested $nested:ident: $nested_settings:ident / $nested_patch:ident; )?
    ) => {
        $(#[$settings_doc])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $settings {
            $( $(#[$fixed_doc])* pub $fixed: $fixed_ty, )*
            $( $(#[$doc])* pub $field: $ty, )*
            $( pub $nested: $nested_settings, )?
        }

        impl Default for $settings {
            fn default() -> Self {
                Self {
                    $( $fixed: $fixed_default, )*
                    $( $field: $default, )*
                    $( $nested: $nested_settings::default(), )?
                }
            }
        }

        /// The tunable settings as Settings → Server shows them.
        impl Serialize for $settings {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(None)?;
                $( map.serialize_entry(stringify!($field), &Shown::shown(&self.$field))?; )*
                $( map.serialize_entry(stringify!($nested), &self.$nested)?; )?
                map.end()
            }
        }

        impl $settings {
            /// Every variable the group reads.
            pub const VARIABLES: &[&str] = &[$( $fixed_var, )* $( $var, )*];

            /// These settings with the variables `read` finds laid over them (`read` answers
            /// `None` for a variable unset or blank).
            pub fn with_variables(
                mut self,
                read: &dyn Fn(&str) -> Option<String>,
            ) -> Result<Self, String> {
                $(
                    if let Some(text) = read($fixed_var) {
                        self.$fixed = Sets::<$fixed_ty>::sets(&from_variable::<$fixed_change>($fixed_var, &text)?);
                    }
                )*
                $(
                    if let Some(text) = read($var) {
                        self.$field = Sets::<$ty>::sets(&from_variable::<$change>($var, &text)?);
                    }
                )*
                $( self.$nested = self.$nested.with_variables(read)?; )?
                Ok(self)
            }
        }

        $(#[$patch_doc])*
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $patch {
            $(
                #[serde(skip_serializing_if = "Change::is_keep")]
                pub $field: Change<$change>,
            )*
            $(
                #[serde(
                    skip_serializing_if = "is_empty_group",
                    deserialize_with = "group_or_reset_all"
                )]
                pub $nested: $nested_patch,
            )?
        }

        impl PatchGroup for $patch {
            fn reset_all() -> Self {
                Self {
                    $( $field: Change::Reset, )*
                    $( $nested: $nested_patch::reset_all(), )?
                }
            }
        }

        impl $patch {
            /// Every value given back (a `null` group).
            pub fn reset_all() -> Self {
                <Self as PatchGroup>::reset_all()
            }

            pub fn is_empty(&self) -> bool {
                *self == Self::default()
            }

            /// These changes with `later` laid over them (what a file holds after a patch: a
            /// reset leaves nothing saved).
            pub fn then(self, later: Self) -> Self {
                Self {
                    $( $field: self.$field.then(later.$field), )*
                    $( $nested: self.$nested.then(later.$nested), )?
                }
            }

            /// `base` with these changes laid over it.
            pub fn over(&self, base: &$settings) -> $settings {
                $settings {
                    $( $fixed: base.$fixed.clone(), )*
                    $( $field: self.$field.value().map_or_else(|| base.$field.clone(), Sets::sets), )*
                    $( $nested: self.$nested.over(&base.$nested), )?
                }
            }

            /// Reads a group where `null` gives every value back (serde's
            /// `deserialize_with`).
            pub fn or_reset_all<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                group_or_reset_all(d)
            }
        }
    };
}

settings! {
    /// `ragdown_context` defaults (`RAGDOWN_HOOK_*`).
    HookSettings;
    /// Hook values set over another layer's: the `hook` of a folder's `.ragdown.json`, of the
    /// saved server settings and of `PATCH /api/settings`.
    HookPatch;
    fixed {}
    tunable {
        /// Most sections a prompt gets.
        top_k: usize = 4, "RAGDOWN_HOOK_TOP_K", usize;
        /// Lowest cosine injected; `None`: the embedder's own MIN_SCORE.
        min_score: Option<f32> = None, "RAGDOWN_HOOK_MIN_SCORE", Score;
        /// Lowest share of the best injected hit's similarity.
        min_ratio: f32 = 0.0, "RAGDOWN_HOOK_MIN_RATIO", Ratio;
        /// Lowest evidence (lexical coverage plus dense closeness above the background) the
        /// strongest section needs; see [`MIN_EVIDENCE`].
        min_evidence: f32 = MIN_EVIDENCE, "RAGDOWN_HOOK_MIN_EVIDENCE", NonNegative;
        /// Most characters of the block.
        max_chars: usize = 6000, "RAGDOWN_HOOK_MAX_CHARS", usize;
    }
}

settings! {
    /// The server's settings: what the binary read once from the environment, with `serve`'s
    /// saved settings laid over the tunable ones.
    ServerSettings;
    /// What `.ragdown-server.json` saves, and what a `PATCH /api/settings` body changes.
    ServerPatch;
    fixed {
        /// Where `ragdown_remember` writes, relative to the folder.
        notes_dir: String = "notes".into(), "RAGDOWN_NOTES_DIR", Name;
        /// Write tools hidden, the web UI read-only.
        read_only: bool = false, "RAGDOWN_READ_ONLY", bool;
        /// Tools not served.
        disabled_tools: Vec<String> = Vec::new(), "RAGDOWN_DISABLED_TOOLS", ToolNames;
    }
    tunable {
        /// The embedding model (a change re-embeds every folder).
        embedder: String = "granite-small".into(), "RAGDOWN_EMBEDDER", Name;
        /// Follow edits on disk.
        watch: bool = true, "RAGDOWN_WATCH", bool;
        /// The root `/mcp` endpoint over every MCP folder (`serve`).
        root_mcp: bool = false, "RAGDOWN_ROOT_MCP", bool;
        /// Characters per hit in text output (0 = never clip).
        text_limit: usize = 2000, "RAGDOWN_TEXT_LIMIT", usize;
        /// Hits per document at most (0 = no limit).
        max_per_document: usize = 0, "RAGDOWN_MAX_PER_DOCUMENT", usize;
        /// Linked sections added per search.
        follow_links: usize = 0, "RAGDOWN_FOLLOW_LINKS", usize;
        /// Record searches and reads in the query log.
        query_log: bool = false, "RAGDOWN_QUERY_LOG", bool;
    }
    nested hook: HookSettings / HookPatch;
}

impl ServerPatch {
    /// A request body's changes, each value checked; the message names a wrong key.
    pub fn read(body: Value) -> Result<Self, crate::ToolError> {
        patch::read(body).map_err(|why| crate::ToolError::invalid(why.to_string()))
    }
}

/// Settings shared by every folder's engine and changed at once by `PATCH /api/settings`.
pub type SharedSettings = Arc<RwLock<ServerSettings>>;

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
        assert_eq!(over.max_chars, 5);
        assert_eq!(over.top_k, base.top_k);
    }

    /// Each variable is read by its declaration, checked as a change of it would be.
    #[test]
    fn variables_are_read_and_checked_as_changes_are() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let read = vars(&[
            ("RAGDOWN_TEXT_LIMIT", " 12 "),
            ("RAGDOWN_WATCH", "off"),
            ("RAGDOWN_EMBEDDER", "minilm"),
            ("RAGDOWN_DISABLED_TOOLS", "ragdown_list, ragdown_edit,"),
            ("RAGDOWN_HOOK_MIN_SCORE", "0.3"),
            ("RAGDOWN_HOOK_MIN_EVIDENCE", "1.2"),
        ]);
        let s = ServerSettings::default().with_variables(&read).unwrap();
        assert_eq!(s.text_limit, 12);
        assert!(!s.watch);
        assert_eq!(s.embedder, "minilm");
        assert_eq!(s.disabled_tools, ["ragdown_list", "ragdown_edit"]);
        assert_eq!(s.hook.min_score, Some(0.3));
        assert_eq!(s.hook.min_evidence, 1.2);
        assert_eq!(s.hook.top_k, HookSettings::default().top_k);
        for (bad, says) in [
            (
                vars(&[("RAGDOWN_HOOK_MIN_RATIO", "2")]),
                "RAGDOWN_HOOK_MIN_RATIO=\"2\" is not a valid value: must be a number from 0 to 1",
            ),
            (
                vars(&[("RAGDOWN_TEXT_LIMIT", "lots")]),
                "RAGDOWN_TEXT_LIMIT=\"lots\" is not a valid value",
            ),
            (
                vars(&[("RAGDOWN_READ_ONLY", "maybe")]),
                "RAGDOWN_READ_ONLY=\"maybe\"",
            ),
        ] {
            let why = ServerSettings::default().with_variables(&bad).unwrap_err();
            assert!(why.contains(says), "{why}");
        }
    }

    /// Settings → Server shows the tunable settings as written, the fixed ones not at all;
    /// a saved change lays over the environment's and a reset gives it back.
    #[test]
    fn shown_saved_and_laid_over() {
        let env = ServerSettings {
            read_only: true,
            ..ServerSettings::default()
        };
        let shown = serde_json::to_value(&env).unwrap();
        assert_eq!(shown["hook"]["min_evidence"], json!(0.75));
        assert_eq!(shown["text_limit"], json!(2000));
        assert!(shown.get("read_only").is_none(), "{shown}");
        let saved =
            ServerPatch::read(json!({"text_limit": 7, "hook": {"min_ratio": 0.95}})).unwrap();
        let effective = saved.over(&env);
        assert_eq!(effective.text_limit, 7);
        assert!(effective.read_only, "fixed settings stay the environment's");
        assert_eq!(
            serde_json::to_value(&effective).unwrap()["hook"]["min_ratio"],
            json!(0.95)
        );
        let reset =
            saved.then(ServerPatch::read(json!({"text_limit": null, "hook": null})).unwrap());
        assert!(reset.is_empty(), "{reset:?}");
        assert!(ServerPatch::read(json!({"read_only": true})).is_err());
    }
}
