//! The real model: all-MiniLM-L6-v2 (int8 ONNX) on ONNX Runtime, fetched by
//! `scripts/fetch-test-model.sh` and pointed at by the variables in its `env` file.

use std::path::PathBuf;

use ragdown_embed::{EmbedderSettings, TextKind, dot, download::Silent, load};

fn settings() -> EmbedderSettings {
    let var = |k: &str| {
        std::env::var(k).unwrap_or_else(|_| {
            panic!("{k} is not set: run `scripts/fetch-test-model.sh .test-model && set -a && source .test-model/env && set +a` first")
        })
    };
    EmbedderSettings {
        name: var("RAGDOWN_EMBEDDER"),
        models_dir: PathBuf::from(var("RAGDOWN_MODELS")),
        threads: 1,
        ort_library: Some(PathBuf::from(var("ORT_DYLIB_PATH"))),
        // Nothing may be downloaded in tests: an unreachable hub makes a missing file an error.
        hub_endpoint: "http://127.0.0.1:9".into(),
        ort_endpoint: "http://127.0.0.1:9".into(),
        openai_url: String::new(),
        openai_key: None,
        one_shot: false,
    }
}

#[test]
fn minilm_matches_sentence_transformers() {
    let embedder = load(&settings(), &Silent).unwrap();
    assert_eq!(embedder.dim(), 384);
    let v = embedder
        .embed(
            &["A man is eating food.", "A man is eating a piece of bread."],
            TextKind::Document,
        )
        .unwrap();
    let cosine = dot(&v[0], &v[1]);
    assert!((cosine - 0.7553).abs() <= 0.002, "cosine {cosine}");
    assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-4);
}

#[test]
fn batching_and_sorting_do_not_change_vectors() {
    let embedder = load(&settings(), &Silent).unwrap();
    let texts: Vec<String> = (0..40)
        .map(|i| format!("document number {i} {}", "word ".repeat(i % 13)))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let together = embedder.embed(&refs, TextKind::Document).unwrap();
    for i in [0, 7, 39] {
        let alone = embedder.embed(&[refs[i]], TextKind::Document).unwrap();
        let cosine = dot(&alone[0], &together[i]);
        assert!(cosine > 0.9999, "text {i}: cosine {cosine}");
    }
    // Long texts are truncated, not rejected.
    let long = "restore the backup ".repeat(400);
    assert_eq!(embedder.embed_query(&long).unwrap().len(), 384);
}

#[test]
fn a_missing_runtime_library_names_the_variable() {
    let mut s = settings();
    s.ort_library = Some(PathBuf::from("/nonexistent/libonnxruntime.so"));
    // The runtime may already be loaded in this process by another test; only check the
    // message when loading actually had to happen.
    if let Err(e) = ragdown_embed::runtime::locate_or_download(
        s.ort_library.as_deref(),
        &s.models_dir,
        &s.ort_endpoint,
        &Silent,
    ) {
        assert!(e.to_string().contains("ORT_DYLIB_PATH"), "{e}");
    }
}

/// A one-shot process's quick, unoptimised session gives the vectors the optimised one does:
/// an index written by a server is searched by a CLI query without any drift.
#[test]
fn the_quick_session_gives_the_optimised_sessions_vectors() {
    let full = load(&settings(), &Silent).unwrap();
    let quick = load(
        &EmbedderSettings {
            one_shot: true,
            ..settings()
        },
        &Silent,
    )
    .unwrap();
    let texts = [
        "Restore the nightly backup with pg_restore.",
        "Tides are highest at the full moon.",
    ];
    let optimised = full.embed(&texts, TextKind::Document).unwrap();
    quick.plan(texts.len());
    let unoptimised = quick.embed(&texts, TextKind::Document).unwrap();
    for (a, b) in optimised.iter().zip(&unoptimised) {
        let cosine = dot(a, b);
        assert!(cosine > 0.999, "cosine {cosine}");
    }
    let query = "how do I restore a backup";
    let cosine = dot(
        &full.embed_query(query).unwrap(),
        &quick.embed_query(query).unwrap(),
    );
    assert!(cosine > 0.999, "cosine {cosine}");
}

/// A preset's weights split into `model.external.data` give exactly the vectors of its
/// `model.onnx`; split files damaged on disk fall back to the original, and the next load
/// splits it again.
#[test]
fn mapped_weights_give_the_originals_vectors_and_damage_falls_back() {
    use ragdown_embed::external::DATA;
    let base = settings();
    let source = base.models_dir.join(&base.name);
    let models = tempfile::tempdir().unwrap();
    let preset_dir = models.path().join(&base.name);
    std::fs::create_dir(&preset_dir).unwrap();
    for file in ["model.onnx", "tokenizer.json", "config.json"] {
        if source.join(file).is_file() {
            std::fs::copy(source.join(file), preset_dir.join(file)).unwrap();
        }
    }
    let copied = EmbedderSettings {
        models_dir: models.path().to_path_buf(),
        ..settings()
    };
    let texts = [
        "Restore the nightly backup with pg_restore.",
        "Tides are highest at the full moon.",
    ];
    let embed = |settings: &EmbedderSettings| {
        load(settings, &Silent)
            .unwrap()
            .embed(&texts, TextKind::Document)
            .unwrap()
    };
    let mapped = embed(&copied);
    let split_size = std::fs::metadata(preset_dir.join(DATA)).unwrap().len();
    assert!(
        split_size > 1_000_000,
        "split on first load: {split_size} bytes"
    );
    // The same folder named as a model directory loads `model.onnx` itself.
    let original = embed(&EmbedderSettings {
        name: preset_dir.to_string_lossy().into_owned(),
        ..copied.clone()
    });
    assert_eq!(
        mapped, original,
        "moving the weights changes no bit of a vector"
    );

    std::fs::write(preset_dir.join(DATA), b"cut short").unwrap();
    assert_eq!(embed(&copied), original, "damaged split files fall back");
    embed(&copied);
    assert_eq!(
        std::fs::metadata(preset_dir.join(DATA)).unwrap().len(),
        split_size,
        "split again"
    );
}
