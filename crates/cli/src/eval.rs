//! `ragdown eval`: how well search and the hook work on the user's own documents. Takes
//! questions whose answer is known (a document, optionally a line or a heading), reports top-1,
//! recall@5 and MRR@10, lists each miss with what ranked above it, and — with off-topic
//! prompts — what the hook injects for both kinds of prompt and a calibration line the user
//! can apply with one variable. `ragdown bench` reuses the question format and tallies here
//! and adds speed.
//!
//! Measures through the same search and hook code the servers run; holds no ranking logic.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use ragdown_index::{Index, IndexSettings};
use ragdown_search::{Hit, SearchOptions};
use ragdown_server::context::{Candidates, ContextSource};
use serde::Deserialize;
use serde_json::json;

use crate::progress::DownloadBar;
use crate::settings::{Settings, docs_dir};

#[derive(Args)]
pub struct EvalArgs {
    /// The folder of documents.
    dir: PathBuf,
    /// Questions, one JSON object a line: `query`, `path` (relative to the folder), and
    /// optionally `line` (the answer's first line; `end_line` its last) or `heading`.
    #[arg(long)]
    questions: PathBuf,
    /// Prompts the documents do not answer, one JSON object a line with `query`: measures how
    /// often the hook injects where it should stay silent, and calibrates its gate.
    #[arg(long)]
    offtopic: Option<PathBuf>,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Keep the index here (reused by the next run) instead of a fresh temporary one.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Write each prompt's hook candidates (similarity, lexical coverage, sources, whether it
    /// answers) as JSON lines to this file, for studying the gate.
    #[arg(long)]
    features: Option<PathBuf>,
}

/// A question with a known answer. Also reads the benchmark's field names.
#[derive(Deserialize, Clone)]
pub struct Question {
    pub query: String,
    /// The kind of question, for a per-kind breakdown (optional).
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(alias = "answer_path")]
    pub path: String,
    #[serde(alias = "answer_start_line", default)]
    pub line: Option<u32>,
    #[serde(alias = "answer_end_line", default)]
    pub end_line: Option<u32>,
    #[serde(default)]
    pub heading: Option<String>,
}

impl Question {
    /// Does a section `path:start-end` under `heading` answer this question?
    pub fn answered_by(&self, path: &str, start: u32, end: u32, heading: &str) -> bool {
        if path != self.path {
            return false;
        }
        if let Some(line) = self.line {
            let last = self.end_line.unwrap_or(line).max(line);
            return start <= last && end >= line;
        }
        if let Some(wanted) = &self.heading {
            let wanted = wanted.trim().trim_start_matches('#').trim().to_lowercase();
            return heading
                .rsplit('›')
                .next()
                .is_some_and(|h| h.trim().to_lowercase() == wanted);
        }
        true
    }

    pub fn answered_by_hit(&self, hit: &Hit) -> bool {
        self.answered_by(hit.path(), hit.line_start, hit.line_end, &hit.heading)
    }

    /// Where the answer is, as the report names it.
    pub fn wanted(&self) -> String {
        match (&self.line, &self.heading) {
            (Some(line), _) => format!("{}:{line}", self.path),
            (None, Some(h)) => format!("{} › {h}", self.path),
            (None, None) => self.path.clone(),
        }
    }
}

/// Reads JSON lines, naming the line that does not parse.
pub fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| {
                format!(
                    "{} line {}: expected a JSON object with \"query\" and \"path\"",
                    path.display(),
                    i + 1
                )
            })
        })
        .collect()
}

/// The questions, and the off-topic prompts when a file is given.
pub fn read_prompts(
    questions: &Path,
    offtopic: Option<&Path>,
) -> Result<(Vec<Question>, Vec<Prompt>)> {
    let offtopic = match offtopic {
        Some(path) => read_lines(path)?,
        None => Vec::new(),
    };
    Ok((read_lines(questions)?, offtopic))
}

/// Opens (without syncing) the index of `root` kept in `data_dir`.
pub fn open_index(
    settings: &Settings,
    root: PathBuf,
    data_dir: &Path,
    embedder: Arc<dyn ragdown_embed::Embedder>,
) -> Result<Arc<Index>> {
    Ok(Arc::new(Index::open(
        IndexSettings {
            root,
            data_dir: data_dir.to_path_buf(),
            max_file_bytes: settings.max_file_bytes,
            records: ragdown_index::store::RecordsLocation::DataDir,
        },
        embedder,
    )?))
}

#[derive(Deserialize)]
pub struct Prompt {
    pub query: String,
    /// `far` (unrelated to the documents' field) or `near` (the same field, not answered by
    /// these documents), when the file marks it: the report counts the two apart.
    #[serde(default)]
    pub kind: Option<String>,
}

impl Prompt {
    /// The kind the report counts this prompt under.
    fn kind(&self) -> &'static str {
        match self.kind.as_deref() {
            Some("near") => "near",
            Some("far") => "far",
            _ => "unmarked",
        }
    }
}

#[derive(Default, Clone, Copy)]
pub struct Tally {
    pub questions: usize,
    pub top1: usize,
    pub top5: usize,
    pub reciprocal_rank: f64,
}

impl Tally {
    pub fn add(&mut self, rank: Option<usize>) {
        self.questions += 1;
        if rank == Some(0) {
            self.top1 += 1;
        }
        if rank.is_some_and(|r| r < 5) {
            self.top5 += 1;
        }
        if let Some(r) = rank.filter(|r| *r < 10) {
            self.reciprocal_rank += 1.0 / (r as f64 + 1.0);
        }
    }
    pub fn pct(&self, n: usize) -> f64 {
        100.0 * n as f64 / self.questions.max(1) as f64
    }
    pub fn mrr(&self) -> f64 {
        self.reciprocal_rank / self.questions.max(1) as f64
    }
    pub fn json(&self) -> serde_json::Value {
        json!({
            "questions": self.questions,
            "top1": self.pct(self.top1) / 100.0,
            "recall_at_5": self.pct(self.top5) / 100.0,
            "mrr_at_10": self.mrr(),
        })
    }
    pub fn line(&self, name: &str) -> String {
        format!(
            "{name:<17} top-1 {:.1}%  recall@5 {:.1}%  MRR@10 {:.3}  ({} questions)",
            self.pct(self.top1),
            self.pct(self.top5),
            self.mrr(),
            self.questions
        )
    }
}

/// Retrieval quality over `questions`: overall, per kind, and the misses with what ranked
/// above the answer.
pub struct Retrieval {
    pub overall: Tally,
    pub by_kind: BTreeMap<String, Tally>,
    pub misses: Vec<serde_json::Value>,
    /// Each question's best cosine, for the hook's calibration.
    pub best_similarities: Vec<f64>,
    /// Milliseconds per search.
    pub latencies: Vec<f64>,
}

pub fn retrieval(
    index: &Index,
    questions: &[Question],
    options: &SearchOptions,
) -> Result<Retrieval> {
    let mut out = Retrieval {
        overall: Tally::default(),
        by_kind: BTreeMap::new(),
        misses: Vec::new(),
        best_similarities: Vec::new(),
        latencies: Vec::new(),
    };
    for q in questions {
        let started = std::time::Instant::now();
        let hits = ragdown_search::search(index, &q.query, options)?;
        out.latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        out.best_similarities.push(
            hits.iter()
                .map(|h| f64::from(h.similarity))
                .fold(0.0, f64::max),
        );
        let rank = hits.iter().position(|h| q.answered_by_hit(h));
        out.overall.add(rank);
        if let Some(kind) = &q.kind {
            out.by_kind.entry(kind.clone()).or_default().add(rank);
        }
        if rank != Some(0) {
            let above: Vec<String> = hits
                .iter()
                .take(rank.unwrap_or(3).min(3))
                .map(|h| format!("{}:{} {}", h.path(), h.line_start, h.breadcrumb))
                .collect();
            out.misses.push(json!({
                "type": q.kind,
                "query": q.query,
                "rank": rank.map(|r| r + 1),
                "want": q.wanted(),
                "above": above,
            }));
        }
    }
    Ok(out)
}

/// What the hook (`ragdown_context`, with the settings in effect) injects for the questions
/// and for the off-topic prompts.
#[derive(Default)]
pub struct HookTally {
    pub on_topic: usize,
    pub on_topic_injected: usize,
    pub answer_injected: usize,
    /// On-topic prompts whose answer is among the candidates the gate chooses from (twice
    /// `top_k`, [`Candidates::find`]): the most the hook could inject the answer for with
    /// this ranking, whatever its gate. What lies between this and `answer_injected` is lost
    /// by the gate; the rest by the ranking.
    pub answer_in_reach: usize,
    pub sections: usize,
    pub off_topic: usize,
    /// Off-topic prompts by kind (`far`, `near`, `unmarked`): how many there are.
    pub off_topic_by_kind: BTreeMap<&'static str, usize>,
    /// Each off-topic prompt the hook injected into, with the first section it injected
    /// (`path:line breadcrumb`) and the prompt's kind: what to look at before raising the gate.
    pub intruded: Vec<(String, String, &'static str)>,
    /// Milliseconds per hook call, sorted.
    pub latencies: Vec<f64>,
}

impl HookTally {
    pub fn pct(&self, n: usize, of: usize) -> f64 {
        100.0 * n as f64 / of.max(1) as f64
    }
    pub fn json(&self) -> serde_json::Value {
        json!({
            "on_topic": self.on_topic,
            "answer_injected_pct": self.pct(self.answer_injected, self.on_topic),
            "answer_in_reach_pct": self.pct(self.answer_in_reach, self.on_topic),
            "on_topic_injected_pct": self.pct(self.on_topic_injected, self.on_topic),
            "sections_per_prompt": self.sections as f64 / self.on_topic.max(1) as f64,
            "off_topic": self.off_topic,
            "off_topic_injected_pct": self.pct(self.intruded.len(), self.off_topic),
            "off_topic_injected": self.intruded.iter().map(|(prompt, first, kind)| json!({
                "query": prompt,
                "kind": kind,
                "first_section": first,
            })).collect::<Vec<_>>(),
            "off_topic_by_kind": self.off_topic_by_kind.iter().map(|(kind, total)| (kind.to_string(), json!({
                "prompts": total,
                "injected": self.injected_of(kind),
            }))).collect::<serde_json::Map<_, _>>(),
            "latency_ms_p50": self.p50(),
        })
    }
    /// How many off-topic prompts of `kind` the hook injected into.
    pub fn injected_of(&self, kind: &str) -> usize {
        self.intruded.iter().filter(|(_, _, k)| *k == kind).count()
    }
    /// `far 0 of 15, near 1 of 15` (kinds the file marks; nothing when it marks none).
    pub fn by_kind_line(&self) -> String {
        if self.off_topic_by_kind.keys().all(|k| *k == "unmarked") {
            return String::new();
        }
        let parts: Vec<String> = self
            .off_topic_by_kind
            .iter()
            .map(|(kind, total)| format!("{kind} {} of {total}", self.injected_of(kind)))
            .collect();
        format!(" [{}]", parts.join(", "))
    }
    pub fn p50(&self) -> f64 {
        self.latencies
            .get(self.latencies.len() / 2)
            .copied()
            .unwrap_or(0.0)
    }
    pub fn line(&self) -> String {
        format!(
            "hook              on-topic: answer injected {:.1}% (within reach {:.1}%), something injected {:.1}%, {:.2} sections a prompt; off-topic injected {:.1}% ({} of {}{}); p50 {:.1} ms",
            self.pct(self.answer_injected, self.on_topic),
            self.pct(self.answer_in_reach, self.on_topic),
            self.pct(self.on_topic_injected, self.on_topic),
            self.sections as f64 / self.on_topic.max(1) as f64,
            self.pct(self.intruded.len(), self.off_topic),
            self.intruded.len(),
            self.off_topic,
            self.by_kind_line(),
            self.p50()
        )
    }
}

pub fn hook_evaluation(
    settings: &Settings,
    index: &Arc<Index>,
    questions: &[Question],
    offtopic: &[Prompt],
) -> Result<HookTally> {
    let engine = ragdown_server::Engine::new("eval".into(), index.clone(), settings.server.clone());
    let mut latencies = Vec::new();
    let mut inject = |prompt: &str| -> Result<Vec<Hit>> {
        let args = ragdown_server::context::ContextArgs {
            prompt: prompt.to_string(),
            ..Default::default()
        };
        let started = std::time::Instant::now();
        let injection = ragdown_server::context::inject(&engine, &args)?;
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        Ok(injection.map(|i| i.sections).unwrap_or_default())
    };
    let mut tally = HookTally::default();
    for q in questions {
        let sections = inject(&q.query)?;
        tally.on_topic += 1;
        tally.sections += sections.len();
        tally.on_topic_injected += usize::from(!sections.is_empty());
        tally.answer_injected += usize::from(sections.iter().any(|hit| q.answered_by_hit(hit)));
        let top_k = engine.hook().top_k;
        let candidates = Candidates::find(&engine, &q.query, top_k)?;
        tally.answer_in_reach +=
            usize::from(candidates.hits.iter().any(|hit| q.answered_by_hit(hit)));
    }
    for p in offtopic {
        let sections = inject(&p.query)?;
        tally.off_topic += 1;
        *tally.off_topic_by_kind.entry(p.kind()).or_default() += 1;
        if let Some(first) = sections.first() {
            tally.intruded.push((
                p.query.clone(),
                format!("{}:{} {}", first.path(), first.line_start, first.breadcrumb),
                p.kind(),
            ));
        }
    }
    latencies.sort_by(f64::total_cmp);
    tally.latencies = latencies;
    Ok(tally)
}

/// What one `min_evidence` would do with the user's prompts.
#[derive(Debug, Clone, Copy)]
pub struct GatePoint {
    pub min_evidence: f32,
    pub answer_injected_pct: f64,
    pub sections_per_prompt: f64,
    pub off_topic_injected_pct: f64,
}

/// Runs the hook's own choice ([`ragdown_server::context::Candidates::choose`]) over every
/// prompt for evidence floors from 0.3 to 1.5, and picks the floor that injects into no
/// off-topic prompt (or, when none does, into the fewest) and, among those, finds the most
/// answers. Returns every point swept and the pick.
pub fn calibrate(
    engine: &ragdown_server::Engine,
    questions: &[Question],
    offtopic: &[Prompt],
) -> Result<(Vec<GatePoint>, GatePoint)> {
    use ragdown_server::context::{Candidates, ContextSource, Gate};
    let hook = engine.hook();
    let find = |prompt: &str| Candidates::find(engine, prompt, hook.top_k);
    let on: Vec<(Candidates, &Question)> = questions
        .iter()
        .map(|q| Ok((find(&q.query)?, q)))
        .collect::<Result<_>>()?;
    let off: Vec<Candidates> = offtopic
        .iter()
        .map(|p| find(&p.query))
        .collect::<Result<_, _>>()?;
    let none = std::collections::HashSet::new();
    let pct = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
    let points: Vec<GatePoint> = (6..=30)
        .map(|step| {
            let gate = Gate {
                top_k: hook.top_k,
                min_score: hook.min_score,
                min_evidence: step as f32 * 0.05,
                min_ratio: hook.min_ratio,
            };
            let mut answered = 0;
            let mut sections = 0;
            for (candidates, q) in &on {
                let chosen = candidates.choose(&gate, &none);
                sections += chosen.len();
                answered += usize::from(chosen.iter().any(|h| q.answered_by_hit(h)));
            }
            let injected = off
                .iter()
                .filter(|c| !c.choose(&gate, &none).is_empty())
                .count();
            GatePoint {
                min_evidence: gate.min_evidence,
                answer_injected_pct: pct(answered, on.len()),
                sections_per_prompt: sections as f64 / on.len().max(1) as f64,
                off_topic_injected_pct: pct(injected, off.len()),
            }
        })
        .collect();
    let fewest = points
        .iter()
        .map(|p| p.off_topic_injected_pct)
        .fold(f64::INFINITY, f64::min);
    let pick = points
        .iter()
        .filter(|p| p.off_topic_injected_pct <= fewest)
        .max_by(|a, b| {
            a.answer_injected_pct
                .total_cmp(&b.answer_injected_pct)
                // Of equals, the lower floor: it leaves more room to the user's next prompt.
                .then(b.min_evidence.total_cmp(&a.min_evidence))
        })
        .copied()
        .ok_or_else(|| anyhow::anyhow!("no gate to calibrate"))?;
    Ok((points, pick))
}

/// Writes the hook's candidates for every prompt as JSON lines.
fn write_features(
    settings: &Settings,
    index: &Index,
    questions: &[Question],
    offtopic: &[Prompt],
    out: &Path,
) -> Result<()> {
    let options = SearchOptions {
        limit: settings.server.hook.top_k * 2,
        max_per_document: settings.server.max_per_document,
        ..SearchOptions::default()
    };
    let calibration = ragdown_search::calibration::Calibration::of(index);
    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    let prompts = questions
        .iter()
        .map(|q| (q.query.as_str(), Some(q)))
        .chain(offtopic.iter().map(|p| (p.query.as_str(), None)));
    for (prompt, question) in prompts {
        let hits = ragdown_search::search(index, prompt, &options)?;
        let frequencies = index.term_frequencies(prompt)?;
        let unknown = ragdown_search::evidence::QueryTerms::new(&frequencies).unknown(&frequencies);
        let hits: Vec<serde_json::Value> = hits
            .iter()
            .map(|h| {
                // The prompt's terms this section holds: what its coverage counts.
                let section =
                    ragdown_search::evidence::section_terms(index, &h.breadcrumb, &h.text);
                let held: Vec<&str> = frequencies
                    .terms
                    .iter()
                    .filter(|(term, _)| section.contains(term))
                    .map(|(term, _)| term.as_str())
                    .collect();
                json!({
                    "similarity": h.similarity,
                    "rise": h.rise,
                    "score": h.score,
                    "coverage": h.coverage,
                    "sources": h.sources.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                    "answer": question.is_some_and(|q| q.answered_by_hit(h)),
                    "section": format!("{}:{} {}", h.path(), h.line_start, h.breadcrumb),
                    "held": held,
                })
            })
            .collect();
        writeln!(
            file,
            "{}",
            json!({"query": prompt, "on_topic": question.is_some(), "hits": hits,
                "calibration": calibration.as_deref(), "unknown": unknown,
                "terms": frequencies.terms})
        )?;
    }
    file.flush()?;
    Ok(())
}

/// The model's levels on this corpus, as `ragdown eval` and `ragdown status` print them.
pub fn scale_line(c: &ragdown_search::calibration::Calibration) -> String {
    format!(
        "model on corpus   unrelated prompts at cosine {:.3}, answers at {:.3} (median of {} probes over {} sections, measured in {} ms)",
        c.background, c.answer, c.probes, c.sections, c.millis
    )
}

fn point_json(p: &GatePoint) -> serde_json::Value {
    json!({
        "min_evidence": ragdown_server::format::rounded(p.min_evidence, 2),
        "answer_injected_pct": p.answer_injected_pct,
        "sections_per_prompt": p.sections_per_prompt,
        "off_topic_injected_pct": p.off_topic_injected_pct,
    })
}

pub fn run(settings: &Settings, args: &EvalArgs) -> Result<()> {
    let root = docs_dir(&args.dir)?;
    let (questions, offtopic) = read_prompts(&args.questions, args.offtopic.as_deref())?;
    let embedder = ragdown_embed::load(&settings.embedder, &DownloadBar::new())?;
    let temporary = tempfile::tempdir()?;
    let index = open_index(
        settings,
        root,
        args.data_dir.as_deref().unwrap_or(temporary.path()),
        embedder.clone(),
    )?;
    index.sync()?;
    let scale = ragdown_search::calibration::Calibration::of(&index);
    let options = SearchOptions {
        limit: 10,
        max_per_document: settings.server.max_per_document,
        follow_links: settings.server.follow_links,
        ..SearchOptions::default()
    };
    let found = retrieval(&index, &questions, &options)?;
    let (hook, calibration) = if args.offtopic.is_some() {
        let engine =
            ragdown_server::Engine::new("eval".into(), index.clone(), settings.server.clone());
        (
            Some(hook_evaluation(settings, &index, &questions, &offtopic)?),
            Some(calibrate(&engine, &questions, &offtopic)?),
        )
    } else {
        (None, None)
    };
    if let Some(path) = &args.features {
        write_features(settings, &index, &questions, &offtopic, path)?;
    }
    if args.json {
        println!(
            "{}",
            json!({
                "embedder": embedder.id(),
                "model_on_corpus": scale.as_deref(),
                "overall": found.overall.json(),
                "by_type": found.by_kind.iter().map(|(k, v)| (k.clone(), v.json())).collect::<serde_json::Map<_, _>>(),
                "hook": hook.as_ref().map(HookTally::json),
                "calibration": calibration.as_ref().map(|(points, pick)| json!({
                    "variable": "RAGDOWN_HOOK_MIN_EVIDENCE",
                    "pick": point_json(pick),
                    "points": points.iter().map(point_json).collect::<Vec<_>>(),
                })),
                "misses": found.misses,
            })
        );
        return Ok(());
    }
    println!("embedder          {}", embedder.id());
    if let Some(scale) = &scale {
        println!("{}", scale_line(scale));
    }
    println!("{}", found.overall.line("overall"));
    for (kind, tally) in &found.by_kind {
        println!("{}", tally.line(kind));
    }
    if let Some(hook) = &hook {
        println!("{}", hook.line());
        for (prompt, first, kind) in &hook.intruded {
            let kind = match *kind {
                "unmarked" => String::new(),
                marked => format!(" ({marked})"),
            };
            println!("  off-topic{kind}, injected: {prompt} — first: {first}");
        }
    }
    if let Some((_, pick)) = &calibration {
        println!(
            "calibration       with your prompts, RAGDOWN_HOOK_MIN_EVIDENCE={:.2} would inject the answer for {:.1}% of questions ({:.2} sections a prompt) and inject into {:.1}% of off-topic prompts (now {:.2})",
            pick.min_evidence,
            pick.answer_injected_pct,
            pick.sections_per_prompt,
            pick.off_topic_injected_pct,
            settings.server.hook.min_evidence
        );
    }
    if !found.misses.is_empty() {
        println!("\nmisses (rank of the answer in the top 10, what ranked above it):");
        for miss in &found.misses {
            let rank = miss["rank"]
                .as_u64()
                .map_or("not in top 10".to_string(), |r| format!("rank {r}"));
            println!(
                "  {} — want {} ({rank})",
                miss["query"].as_str().unwrap_or_default(),
                miss["want"].as_str().unwrap_or_default()
            );
            for above in miss["above"].as_array().into_iter().flatten() {
                println!("      above: {}", above.as_str().unwrap_or_default());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(line: &str) -> Question {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn a_question_names_a_line_a_heading_or_a_document() {
        let by_line = question(r#"{"query":"q","path":"a.md","line":10,"end_line":12}"#);
        assert!(by_line.answered_by("a.md", 12, 20, "A › B"));
        assert!(!by_line.answered_by("a.md", 13, 20, "A › B"));
        assert!(!by_line.answered_by("b.md", 10, 12, "A › B"));
        let by_heading = question(r###"{"query":"q","path":"a.md","heading":"## Restore"}"###);
        assert!(by_heading.answered_by("a.md", 1, 2, "Backups › Restore"));
        assert!(!by_heading.answered_by("a.md", 1, 2, "Restore › Verify"));
        let by_document = question(r#"{"query":"q","path":"a.md"}"#);
        assert!(by_document.answered_by("a.md", 1, 2, "Anything"));
        let bench = question(
            r#"{"query":"q","type":"alias","answer_path":"a.md","answer_start_line":3,"answer_end_line":4}"#,
        );
        assert!(bench.answered_by("a.md", 4, 9, ""));
        assert_eq!(bench.kind.as_deref(), Some("alias"));
    }
}
