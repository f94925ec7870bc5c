//! Changes to saved settings, typed: the one way a settings file (`.ragdown.json`,
//! `.ragdown-server.json`) and a settings patch (`PATCH /api/settings`, a folder's settings) are
//! read. A key left out keeps what lies beneath, `null` gives it back, a value sets it; each
//! value is checked by its type while it is read, and the message names the key.
//!
//! Owns only the reading and layering of changes; which settings exist is declared once in
//! `settings`.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// What one settings layer says about one value.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Change<T> {
    /// Not mentioned: what lies beneath stands.
    #[default]
    Keep,
    /// `null`: give the value back to what lies beneath.
    Reset,
    Set(T),
}

impl<T> Change<T> {
    pub fn is_keep(&self) -> bool {
        matches!(self, Self::Keep)
    }

    /// The value this layer sets, if it sets one.
    pub fn value(&self) -> Option<&T> {
        match self {
            Self::Set(v) => Some(v),
            _ => None,
        }
    }

    /// This layer with a `later` one laid over it: the later change wins, and a reset leaves
    /// nothing saved.
    pub fn then(self, later: Self) -> Self {
        match later {
            Self::Keep => self,
            Self::Reset => Self::Keep,
            set => set,
        }
    }
}

impl<T: Clone> Change<T> {
    /// The value this layer sets, else `beneath`.
    pub fn or(&self, beneath: T) -> T {
        self.value().cloned().unwrap_or(beneath)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Change<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(d)? {
            None => Self::Reset,
            Some(v) => Self::Set(v),
        })
    }
}

impl<T: Serialize> Serialize for Change<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(s)
    }
}

/// A fraction from 0 to 1 (`min_ratio`), kept as written (an `f64`, so 0.95 saves as 0.95).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratio(pub f64);

impl<'de> Deserialize<'de> for Ratio {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let x = f64::deserialize(d)?;
        if (0.0..=1.0).contains(&x) {
            Ok(Self(x))
        } else {
            Err(D::Error::custom(format!(
                "must be a number from 0 to 1, not {x}"
            )))
        }
    }
}

/// A finite number (`min_score`: cosine scales differ by model, negatives included).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Score(pub f64);

impl<'de> Deserialize<'de> for Score {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let x = f64::deserialize(d)?;
        if x.is_finite() {
            Ok(Self(x))
        } else {
            Err(D::Error::custom("must be a finite number"))
        }
    }
}

/// A number of 0 or more (`min_evidence`: a share of the prompt's terms plus a weighted rise,
/// so it may pass 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NonNegative(pub f64);

impl<'de> Deserialize<'de> for NonNegative {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let x = f64::deserialize(d)?;
        if x.is_finite() && x >= 0.0 {
            Ok(Self(x))
        } else {
            Err(D::Error::custom(format!(
                "must be a number of 0 or more, not {x}"
            )))
        }
    }
}

/// A name that is not blank (an embedder's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Name(pub String);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        if name.trim().is_empty() {
            Err(D::Error::custom("must not be empty"))
        } else {
            Ok(Self(name.trim().to_string()))
        }
    }
}

/// Why a value could not be read: the key's path (`hook.min_ratio`) and what was wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// The key's path, segments in order (empty: the value as a whole).
    pub path: Vec<String>,
    pub message: String,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path.join("."), self.message)
        }
    }
}

/// Reads `value` as `T`, naming the key of a wrong value.
pub fn read<T: DeserializeOwned>(value: Value) -> Result<T, Invalid> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e
            .path()
            .iter()
            .filter_map(|segment| match segment {
                serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                serde_path_to_error::Segment::Enum { variant } => Some(variant.clone()),
                serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
                serde_path_to_error::Segment::Unknown => None,
            })
            .collect();
        Invalid {
            path,
            message: e.into_inner().to_string(),
        }
    })
}

/// Reads a settings file's object as `T`, leaving out each key whose value is wrong (logged
/// with `file`), so one bad hand edit does not lose every other saved value.
pub fn read_leniently<T: DeserializeOwned + Default>(file: &str, mut value: Value) -> T {
    // Each round removes one key, so this ends.
    loop {
        match read::<T>(value.clone()) {
            Ok(v) => return v,
            Err(why) => {
                tracing::warn!("{file}: {why}: skipped (save the settings again to replace it)");
                if !remove_path(&mut value, &why.path) {
                    return T::default();
                }
            }
        }
    }
}

/// Removes the key at `path`; false when there is none to remove.
fn remove_path(value: &mut Value, path: &[String]) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return false;
    };
    let mut at = value;
    for key in parents {
        match at.get_mut(key) {
            Some(next) => at = next,
            None => return false,
        }
    }
    at.as_object_mut()
        .is_some_and(|object| object.remove(last).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Default, PartialEq, Deserialize, Serialize)]
    #[serde(deny_unknown_fields, default)]
    struct Sample {
        #[serde(skip_serializing_if = "Change::is_keep")]
        limit: Change<usize>,
        #[serde(skip_serializing_if = "Change::is_keep")]
        ratio: Change<Ratio>,
    }

    #[test]
    fn left_out_null_and_value_are_three_changes() {
        let s: Sample = read(json!({"limit": null, "ratio": 0.5})).unwrap();
        assert_eq!(s.limit, Change::Reset);
        assert_eq!(s.ratio, Change::Set(Ratio(0.5)));
        let s: Sample = read(json!({})).unwrap();
        assert_eq!(s, Sample::default());
        assert_eq!(Change::Set(1).then(Change::Keep), Change::Set(1));
        assert_eq!(Change::Set(1).then(Change::Reset), Change::Keep);
        assert_eq!(Change::Keep.then(Change::Set(2)), Change::Set(2));
        assert_eq!(
            serde_json::to_value(Sample {
                limit: Change::Set(3),
                ratio: Change::Keep
            })
            .unwrap(),
            json!({"limit": 3})
        );
    }

    #[test]
    fn a_wrong_value_is_named_by_its_key() {
        let err = read::<Sample>(json!({"ratio": 3})).unwrap_err();
        assert_eq!(err.path, ["ratio"]);
        assert!(
            err.to_string()
                .starts_with("ratio: must be a number from 0 to 1"),
            "{err}"
        );
        let err = read::<Sample>(json!({"limit": -1})).unwrap_err();
        assert!(err.to_string().starts_with("limit: invalid value"), "{err}");
        let err = read::<Sample>(json!({"colour": 1})).unwrap_err();
        assert!(err.to_string().contains("unknown field `colour`"), "{err}");
    }

    #[test]
    fn a_file_keeps_its_good_values() {
        let s: Sample = read_leniently("t.json", json!({"limit": 4, "ratio": 9, "colour": 1}));
        assert_eq!(s.limit, Change::Set(4));
        assert_eq!(s.ratio, Change::Keep);
        let s: Sample = read_leniently("t.json", json!("not an object"));
        assert_eq!(s, Sample::default());
    }
}
