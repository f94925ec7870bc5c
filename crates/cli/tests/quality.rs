//! Retrieval and hook quality on two real models — all-MiniLM-L6-v2 (int8) and
//! all-mpnet-base-v2 (fp32, 5× larger, another scale) — on the repository's corpora
//! (`bench/`): synth30-dev (tuned on), synth30-val (same generator, another seed) and real-dev
//! (Synapse's documentation, hand-written questions, near-topic off-topic prompts). Floors, so a
//! change that makes search or the hook worse on any of them fails here. Each floor is 3 points
//! under this test's own measurement (a debug build: float sums round differently from release,
//! which reorders near-ties); unrelated prompts may never be injected into, and near-topic ones
//! at most one in eight. Needs the variables of `scripts/fetch-test-model.sh`'s env file, and
//! for mpnet the model `scripts/fetch-mpnet-model.sh` builds beside it.

use std::path::PathBuf;
use std::sync::Arc;

use ragdown_embed::{EmbedderSettings, download::Silent};
use ragdown_index::{Index, IndexSettings};
use ragdown_search::{SearchOptions, search};
use ragdown_server::context::ContextArgs;

struct Floors {
    top1: f64,
    recall5: f64,
    /// Share of questions whose answering section the hook injects.
    hook_answer: f64,
    /// Most near-topic prompts (`"kind": "near"`) the hook may inject into; unrelated ones
    /// (`far`) never.
    hook_near: usize,
    /// Most sections the hook injects per question, on average.
    hook_sections: f64,
}

fn bench_dir(corpus: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench")
        .join(corpus)
}

fn settings(model: &str) -> EmbedderSettings {
    let var = |k: &str| {
        std::env::var(k).unwrap_or_else(|_| {
            panic!("{k} is not set: run `scripts/fetch-test-model.sh .test-model` and source .test-model/env")
        })
    };
    let models = PathBuf::from(var("RAGDOWN_MODELS"));
    assert!(
        models.join(model).join("model.onnx").is_file(),
        "{model} is not in {}: run scripts/fetch-test-model.sh and scripts/fetch-mpnet-model.sh on .test-model",
        models.display()
    );
    EmbedderSettings {
        name: model.into(),
        models_dir: models,
        threads: 0,
        ort_library: Some(PathBuf::from(var("ORT_DYLIB_PATH"))),
        hub_endpoint: "http://127.0.0.1:9".into(),
        ort_endpoint: "http://127.0.0.1:9".into(),
        openai_url: String::new(),
        openai_key: None,
        one_shot: false,
    }
}

fn lines(path: PathBuf) -> Vec<serde_json::Value> {
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn check(model: &str, corpus: &str, floors: Floors) {
    let bench = bench_dir(corpus);
    assert!(
        bench.join("corpus").is_dir(),
        "{} is missing",
        bench.display()
    );
    let embedder = ragdown_embed::load(&settings(model), &Silent).unwrap();
    let data = tempfile::tempdir().unwrap();
    let index = Arc::new(
        Index::open(
            IndexSettings {
                root: bench.join("corpus"),
                data_dir: data.path().to_path_buf(),
                max_file_bytes: ragdown_index::DEFAULT_MAX_FILE_BYTES,
                records: ragdown_index::store::RecordsLocation::DataDir,
            },
            Arc::clone(&embedder),
        )
        .unwrap(),
    );
    index.sync().unwrap();
    let engine = ragdown_server::Engine::new(
        corpus.into(),
        index.clone(),
        ragdown_server::ServerSettings::default(),
    );
    let inject = |prompt: &str| {
        let args = ContextArgs {
            prompt: prompt.into(),
            ..Default::default()
        };
        ragdown_server::context::inject(&engine, &args)
            .unwrap()
            .map(|i| i.sections)
            .unwrap_or_default()
            .into_iter()
            .map(|hit| (hit.path().to_string(), hit.line_start, hit.line_end))
            .collect::<Vec<_>>()
    };

    let questions = lines(bench.join("questions.jsonl"));
    let (mut top1, mut top5, mut answered, mut sections) = (0usize, 0usize, 0usize, 0usize);
    for q in &questions {
        let query = q["query"].as_str().unwrap();
        let start = q["answer_start_line"].as_u64().unwrap() as u32;
        let end = q["answer_end_line"].as_u64().unwrap() as u32;
        let path = q["answer_path"].as_str().unwrap();
        let answers = |p: &str, s: u32, e: u32| p == path && s <= end && e >= start;
        let hits = search(
            &index,
            query,
            &SearchOptions {
                limit: 5,
                ..SearchOptions::default()
            },
        )
        .unwrap();
        let rank = hits
            .iter()
            .position(|h| answers(h.path(), h.line_start, h.line_end));
        top1 += usize::from(rank == Some(0));
        top5 += usize::from(rank.is_some());
        let injected = inject(query);
        sections += injected.len();
        answered += usize::from(injected.iter().any(|(p, s, e)| answers(p, *s, *e)));
    }
    let off_topic = lines(bench.join("offtopic.jsonl"));
    let intruded = |kind: &str| -> Vec<&str> {
        off_topic
            .iter()
            .filter(|p| p["kind"].as_str().unwrap_or("far") == kind)
            .map(|p| p["query"].as_str().unwrap())
            .filter(|p| !inject(p).is_empty())
            .collect()
    };
    let (far, near) = (intruded("far"), intruded("near"));
    let near_total = off_topic.iter().filter(|p| p["kind"] == "near").count();

    let total = questions.len() as f64;
    let (t1, r5, hook, per_prompt) = (
        top1 as f64 / total,
        top5 as f64 / total,
        answered as f64 / total,
        sections as f64 / total,
    );
    eprintln!(
        "{model} on {corpus}: top-1 {:.1}%, recall@5 {:.1}%; hook injects the answer for {:.1}% at {per_prompt:.2} sections a prompt; unrelated prompts injected {far:?}, near-topic {} of {near_total} {near:?}",
        t1 * 100.0,
        r5 * 100.0,
        hook * 100.0,
        near.len(),
    );
    assert!(
        t1 >= floors.top1,
        "top-1 {t1:.3} fell below {}",
        floors.top1
    );
    assert!(
        r5 >= floors.recall5,
        "recall@5 {r5:.3} fell below {}",
        floors.recall5
    );
    assert!(
        hook >= floors.hook_answer,
        "the hook injected the answer for {hook:.3}, under {}",
        floors.hook_answer
    );
    assert!(
        far.is_empty(),
        "the hook injected into unrelated prompts: {far:?}"
    );
    assert!(
        near.len() <= floors.hook_near && near.len() * 8 <= near_total.max(8),
        "the hook injected into near-topic prompts: {near:?}"
    );
    assert!(
        per_prompt <= floors.hook_sections,
        "{per_prompt:.2} sections a prompt"
    );
}

#[test]
fn synth30_dev_stays_above_its_floors() {
    check(
        "minilm",
        "synth30-dev",
        // Measured (release): top-1 77.7%, recall@5 91.9%, hook 88.5% at 3.26 sections, none of
        // the 33 off-topic prompts (25 unrelated, 8 near-topic).
        Floors {
            top1: 0.728,
            recall5: 0.885,
            hook_answer: 0.855,
            hook_near: 0,
            hook_sections: 3.5,
        },
    );
}

#[test]
fn synth30_val_stays_above_its_floors() {
    check(
        "minilm",
        "synth30-val",
        // Measured (release): top-1 77.3%, recall@5 92.3%, hook 87.3% at 3.34 sections, none of
        // the 33 off-topic prompts.
        Floors {
            top1: 0.743,
            recall5: 0.893,
            hook_answer: 0.843,
            hook_near: 0,
            hook_sections: 3.5,
        },
    );
}

#[test]
fn real_dev_stays_above_its_floors() {
    check(
        "minilm",
        "real-dev",
        // Measured (release): top-1 71.4%, recall@5 88.9%, hook 73.0% at 2.70 sections, near-topic
        // 0 of 15 (every term of "what changed in Matrix room version 11" is in the Synapse
        // docs, but no section writes that version; "configure federation on a Dendrite
        // homeserver" names a server they never mention). The floor allows the 1 in 8 asked.
        Floors {
            top1: 0.684,
            recall5: 0.859,
            hook_answer: 0.700,
            hook_near: 1,
            hook_sections: 3.5,
        },
    );
}

/// The larger model, on the corpus ranking was tuned on: every weight and floor reads its
/// cosines through the calibration measured on the corpus, none fitted to it.
#[test]
fn mpnet_synth30_dev_stays_above_its_floors() {
    check(
        "mpnet",
        "synth30-dev",
        // Measured (release): top-1 76.9%, recall@5 90.4%, hook 86.5% at 3.45 sections, none of
        // the 33 off-topic prompts.
        Floors {
            top1: 0.739,
            recall5: 0.874,
            hook_answer: 0.835,
            hook_near: 0,
            hook_sections: 3.5,
        },
    );
}
