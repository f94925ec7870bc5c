//! How the model an index runs scores this corpus, measured from the corpus itself, so that
//! ranking and the hook read a cosine on no model's own scale. Two levels are measured:
//!
//! - the *background*: how close prompts about nothing in particular (cooking, weather,
//!   sport — [`FAR_PROMPTS`], shipped in the binary) come to the corpus, their best cosines'
//!   mean;
//! - the *answer level*: how close a query made from a section comes to that very section —
//!   its heading, and its first sentence — over [`PROBES`] sections spread over the corpus,
//!   the median.
//!
//! A cosine is then read as its [`Calibration::rise`]: 0 at the background, 1 at the answer
//! level. MiniLM puts unrelated prompts near 0.1–0.2 and answers near 0.5; a larger model
//! spreads them differently, and a weight fitted in one model's cosines meant something else
//! in the other's.
//!
//! The measurement is kept with the index in memory and in the records' meta table, and made
//! again when the embedder changes or the number of sections moves by half. Reads the index
//! and saves that one value; ranks nothing and decides nothing.

use std::sync::Arc;

use ragdown_embed::TextKind;
use ragdown_index::{ChunkRecord, Index, Snapshot};
use serde::{Deserialize, Serialize};

use crate::SearchError;
use crate::vectors::SectionVectors;

/// Everyday prompts that no knowledge base of documentation answers: their best cosines
/// against a corpus are its background. Varied in topic and form so no one of them decides.
pub const FAR_PROMPTS: [&str; 24] = [
    "what should I cook for dinner tonight with chicken and rice",
    "is it going to snow in the mountains tomorrow",
    "who scored the winning goal in last night's football match",
    "how do I get rid of aphids on my roses",
    "recommend a good mystery novel for a long flight",
    "what are some fun things to do with kids on a rainy day",
    "how long should I let bread dough rise",
    "tips for sleeping better when travelling across time zones",
    "what is the tallest mountain in Africa",
    "how do I teach my dog to stop pulling on the leash",
    "write a short poem about the sea at night",
    "best way to clean a cast iron pan",
    "how many players are on a basketball team",
    "what year did the first person walk on the moon",
    "ideas for a surprise anniversary gift",
    "how do I knit a simple scarf for beginners",
    "why is the sky blue during the day and red at sunset",
    "suggest a weekly workout plan for running a first marathon",
    "how to repot a houseplant without killing it",
    "what is a good name for a grey kitten",
    "how do I make cold brew coffee at home",
    "explain how bees make honey",
    "which wine goes well with grilled salmon",
    "how to fold a paper airplane that flies far",
];

/// Most sections probed: enough for a stable median, few enough that measuring costs a
/// fraction of a second with a small model (and a few seconds with a large one on 2 cores).
pub const PROBES: usize = 48;

/// Fewest probes an answer level is read from. A folder with fewer sections of prose takes
/// half the room above its background as the scale (`(1 - background) / 2`): where both test
/// models put answers on every corpus measured (0.37–0.43 of a room of 0.79–0.83).
pub const MIN_PROBES: usize = 6;

/// The smallest scale a cosine's rise is divided by: a corpus whose answers sit at the
/// background (a model that separates nothing) must not turn noise into evidence.
const MIN_SCALE: f32 = 0.05;

/// Words a sentence probe keeps: about a question's length.
const SENTENCE_WORDS: usize = 14;

/// One model's levels on one corpus.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Mean best cosine of [`FAR_PROMPTS`] over every section.
    pub background: f32,
    /// Median cosine of a probe (a section's heading or first sentence) with its section.
    pub answer: f32,
    /// Probes the answer level was read from.
    pub probes: usize,
    /// Sections the index held when measured.
    pub sections: usize,
    /// Milliseconds the measurement took.
    #[serde(default)]
    pub millis: u64,
}

impl Calibration {
    /// The distance from the background to the answer level, the unit of [`Calibration::rise`].
    pub fn scale(&self) -> f32 {
        if self.probes < MIN_PROBES {
            return ((1.0 - self.background) / 2.0).max(MIN_SCALE);
        }
        (self.answer - self.background).max(MIN_SCALE)
    }

    /// `cosine` on this corpus's scale: 0 where unrelated prompts land, 1 where a query made
    /// from a section lands against it.
    pub fn rise(&self, cosine: f32) -> f32 {
        (cosine - self.background) / self.scale()
    }

    /// Still a fair measurement for an index of `sections` sections: the count has not moved
    /// by half either way.
    pub fn holds_for(&self, sections: usize) -> bool {
        self.sections.abs_diff(sections) * 2 <= self.sections.max(1)
    }

    /// Measures `index` now: `None` when the model is not loaded or the index is empty.
    pub fn measure(index: &Index) -> Result<Option<Self>, SearchError> {
        let started = std::time::Instant::now();
        let embedder = index.embedder();
        let snap = index.snapshot();
        let sections = snap.chunk_count();
        if embedder.unavailable().is_some() || embedder.loading() || sections == 0 {
            return Ok(None);
        }
        let mut vectors = SectionVectors::new(index, &snap);
        let far = embedder.embed(&FAR_PROMPTS, TextKind::Query)?;
        let mut sum = 0.0;
        for query in &far {
            sum += best_cosine(&vectors, &snap, query)?;
        }
        let background = sum / far.len().max(1) as f32;

        let probes = probes(&snap);
        let texts: Vec<&str> = probes.iter().map(|(_, text)| text.as_str()).collect();
        let mut cosines = Vec::with_capacity(probes.len());
        if !texts.is_empty() {
            let embedded = embedder.embed(&texts, TextKind::Query)?;
            vectors.fetch(probes.iter().map(|(id, _)| *id))?;
            for ((id, _), query) in probes.iter().zip(&embedded) {
                if let Some((_, vector)) = vectors.chunk(*id) {
                    cosines.push(vector.dot(query));
                }
            }
        }
        cosines.sort_by(f32::total_cmp);
        let answer = cosines.get(cosines.len() / 2).copied().unwrap_or(1.0);
        Ok(Some(Self {
            background,
            answer,
            probes: cosines.len(),
            sections,
            millis: started.elapsed().as_millis() as u64,
        }))
    }

    /// The calibration a search reads: the one kept in memory even when the folder has grown
    /// since (a server measures again after each sync), else [`Calibration::of`]. So a search
    /// during a long first index never takes the records' lock nor embeds probes while the
    /// sync runs; only the first search of an index never calibrated measures.
    pub fn for_search(index: &Index) -> Option<Arc<Self>> {
        index.derived::<Self>().or_else(|| Self::of(index))
    }

    /// The calibration of `index` for its current size: kept in memory, else read from the
    /// records when it was measured for this embedder and still holds, else measured now and
    /// saved. `None` while the model cannot embed or the index is empty.
    pub fn of(index: &Index) -> Option<Arc<Self>> {
        let sections = index.snapshot().chunk_count();
        if let Some(kept) = index.derived::<Self>()
            && kept.holds_for(sections)
        {
            return Some(kept);
        }
        let embedder = index.embedder().id().to_string();
        let saved = index
            .saved_value(SAVED_KEY)
            .ok()
            .flatten()
            .and_then(|text| serde_json::from_str::<Saved>(&text).ok())
            .filter(|s| s.embedder == embedder && s.calibration.holds_for(sections));
        let calibration = match saved {
            Some(saved) => saved.calibration,
            None => {
                // A failed measurement is tried again on the next call, never kept.
                let measured = match Self::measure(index) {
                    Ok(measured) => measured?,
                    Err(e) => {
                        tracing::warn!("calibrating the model on this folder failed: {e}");
                        return None;
                    }
                };
                let saved = Saved {
                    embedder,
                    calibration: measured,
                };
                if let Ok(text) = serde_json::to_string(&saved)
                    && let Err(e) = index.save_value(SAVED_KEY, &text)
                {
                    tracing::warn!("keeping the calibration with the records failed: {e}");
                }
                measured
            }
        };
        let calibration = Arc::new(calibration);
        index.set_derived(calibration.clone());
        Some(calibration)
    }
}

/// The calibration saved with `index`'s records for its embedder, without measuring
/// (`ragdown status`, which does not load the model).
pub fn saved(index: &Index) -> Option<Calibration> {
    let embedder = index.embedder().id();
    index
        .saved_value(SAVED_KEY)
        .ok()
        .flatten()
        .and_then(|text| serde_json::from_str::<Saved>(&text).ok())
        .filter(|s| s.embedder == embedder)
        .map(|s| s.calibration)
}

/// The meta key the calibration is saved under.
const SAVED_KEY: &str = "calibration";

/// A calibration as saved beside the records: for which embedder it was measured.
#[derive(Serialize, Deserialize)]
struct Saved {
    embedder: String,
    #[serde(flatten)]
    calibration: Calibration,
}

/// The best cosine of `query` over every section.
fn best_cosine(
    vectors: &SectionVectors,
    snap: &Snapshot,
    query: &[f32],
) -> Result<f32, SearchError> {
    Ok(match vectors.pool() {
        // Without the snapshot's vectors the pgvector index answers (its best cosine).
        Some(records) => records
            .nearest(query, 1, ragdown_index::store::Allowed::All)?
            .first()
            .map_or(0.0, |(_, cosine)| *cosine),
        None => snap
            .chunks()
            .map(|(_, v)| v.dot(query))
            .fold(f32::MIN, f32::max),
    })
}

/// Up to [`PROBES`] sections spread evenly over the corpus (every n-th by id, so the same
/// corpus gives the same probes), each with two queries made from it: its own heading, and
/// the first words of its first sentence.
fn probes(snap: &Snapshot) -> Vec<(i64, String)> {
    let sections: Vec<&ChunkRecord> = snap
        .chunks()
        .map(|(chunk, _)| chunk)
        .filter(|chunk| first_sentence(&chunk.text).is_some())
        .collect();
    let step = sections.len().div_ceil(PROBES).max(1);
    let mut out = Vec::new();
    for chunk in sections.iter().step_by(step) {
        let heading = chunk.heading.rsplit('›').next().unwrap_or("").trim();
        if heading.split_whitespace().count() >= 2 {
            out.push((chunk.id, heading.to_string()));
        }
        if let Some(sentence) = first_sentence(&chunk.text) {
            out.push((chunk.id, sentence));
        }
    }
    out
}

/// The first prose sentence of a section's text, cut to [`SENTENCE_WORDS`] words and cleared
/// of Markdown marks; `None` when the section has no line of prose with four words or more
/// (only headings, code, tables or a list of names).
pub(crate) fn first_sentence(text: &str) -> Option<String> {
    let mut in_code = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_code = !in_code;
            continue;
        }
        let markup = ['#', '|', '<', '>', '!', '-', '*', '+', '='];
        if in_code || line.is_empty() || line.starts_with(markup) {
            continue;
        }
        let sentence = line.split_inclusive(['.', '?', '!']).next().unwrap_or(line);
        let words: Vec<String> = sentence
            .split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| "*_`[]()\"'".contains(c))
                    .to_string()
            })
            .filter(|w| w.chars().any(char::is_alphanumeric))
            .take(SENTENCE_WORDS)
            .collect();
        if words.len() >= 4 {
            return Some(words.join(" "));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibration(background: f32, answer: f32, probes: usize) -> Calibration {
        Calibration {
            background,
            answer,
            probes,
            sections: 100,
            millis: 0,
        }
    }

    #[test]
    fn a_rise_reads_the_same_on_two_scales() {
        // A small model: unrelated at 0.15, answers at 0.55. A larger one: 0.05 and 0.65.
        let small = calibration(0.15, 0.55, 48);
        let large = calibration(0.05, 0.65, 48);
        assert!((small.rise(0.35) - 0.5).abs() < 1e-6);
        assert!((large.rise(0.35) - 0.5).abs() < 1e-6);
        assert!(small.rise(0.15).abs() < 1e-6);
        assert!((large.rise(0.65) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn too_few_probes_or_no_separation_fall_back_to_safe_scales() {
        assert!((calibration(0.2, 0.9, 2).scale() - 0.4).abs() < 1e-6);
        assert!((calibration(0.3, 0.29, 48).scale() - MIN_SCALE).abs() < 1e-6);
    }

    #[test]
    fn holds_until_the_sections_move_by_half() {
        let c = calibration(0.1, 0.5, 48);
        assert!(c.holds_for(100) && c.holds_for(150) && c.holds_for(50));
        assert!(!c.holds_for(151) && !c.holds_for(49));
    }

    #[test]
    fn a_first_sentence_skips_headings_code_and_lists() {
        let text = "# Restore\n\n```sh\nrestic restore latest\n```\n- item one two three\n\
                    Restoring a **snapshot** takes the `restic` tool and about ten minutes. Then verify.";
        assert_eq!(
            first_sentence(text).as_deref(),
            Some("Restoring a snapshot takes the restic tool and about ten minutes.")
        );
        assert_eq!(first_sentence("# Only\n\n| a | b |\n"), None);
    }

    #[test]
    fn saved_form_names_its_embedder() {
        let saved = Saved {
            embedder: "m".into(),
            calibration: calibration(0.1, 0.5, 48),
        };
        let text = serde_json::to_string(&saved).unwrap();
        let back: Saved = serde_json::from_str(&text).unwrap();
        assert_eq!(back.embedder, "m");
        assert_eq!(back.calibration, saved.calibration);
    }
}
