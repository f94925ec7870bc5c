//! The real `ragdown` binary, run as a user would: indexing, querying, status, and the errors
//! a user meets first (a missing directory, no ONNX Runtime library, no model).

use assert_cmd::Command;

use crate::harness::ragdown_cmd as ragdown;

/// Serves `body` at `path` (404 elsewhere) on a local port; returns the base URL and a
/// counter of the requests answered with the body.
fn serve_file(
    path: String,
    body: Vec<u8>,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let found = request.split_whitespace().nth(1) == Some(path.as_str());
            let (status, bytes): (&str, &[u8]) = if found {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                ("200 OK", &body)
            } else {
                ("404 Not Found", b"no such file")
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                bytes.len()
            );
            let _ = stream.write_all(bytes);
        }
    });
    (base, served)
}

/// The real `onnxruntime` wheel kept by `scripts/fetch-test-model.sh`.
fn onnxruntime_wheel() -> std::path::PathBuf {
    std::path::PathBuf::from(std::env::var("RAGDOWN_TEST_ORT_WHEEL").expect(
        "RAGDOWN_TEST_ORT_WHEEL is not set: run `scripts/fetch-test-model.sh .test-model` and source .test-model/env",
    ))
}

/// Serves `bytes` where ragdown downloads the `onnxruntime` wheel from (PyPI's path).
fn serve_wheel(bytes: Vec<u8>) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let wheel = onnxruntime_wheel();
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    serve_file(format!("/packages/cp312/o/onnxruntime/{name}"), bytes)
}

/// A models folder holding the test model but no runtime.
fn models_with_minilm() -> tempfile::TempDir {
    let models = tempfile::tempdir().unwrap();
    let real = std::path::PathBuf::from(std::env::var("RAGDOWN_MODELS").unwrap()).join("minilm");
    std::os::unix::fs::symlink(real, models.path().join("minilm")).unwrap();
    models
}

/// `ragdown` on MiniLM with no ONNX Runtime configured, downloading it from `ort_url`.
fn minilm_without_runtime(
    data: &std::path::Path,
    models: &std::path::Path,
    ort_url: &str,
) -> Command {
    let mut cmd = ragdown(data);
    cmd.env("RAGDOWN_EMBEDDER", "minilm")
        .env("RAGDOWN_MODELS", models)
        .env("RAGDOWN_ORT_URL", ort_url)
        .env_remove("ORT_DYLIB_PATH");
    cmd
}

#[test]
fn a_machine_without_onnx_runtime_downloads_it_once_checks_it_and_runs_on_it() {
    let (base, served) = serve_wheel(std::fs::read(onnxruntime_wheel()).unwrap());
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let models = models_with_minilm();
    let run = |args: &[&str]| {
        let out = minilm_without_runtime(data.path(), models.path(), &base)
            .args(args)
            .arg(docs.path())
            .args(if args[0] == "query" {
                vec!["how do I restore a dump?"]
            } else {
                vec![]
            })
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let stdout = run(&["index"]);
    assert!(stdout.contains("indexed 2 documents"), "{stdout}");
    let library = models.path().join("onnxruntime-1.32.0/libonnxruntime.so");
    assert!(library.is_file());
    // Only the library is kept, not the wheel.
    assert_eq!(
        std::fs::read_dir(library.parent().unwrap())
            .unwrap()
            .count(),
        1
    );
    let stdout = run(&["query"]);
    assert!(stdout.starts_with("[1] ops/backups.md:10-10"), "{stdout}");
    assert_eq!(
        served.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "downloaded once"
    );
}

/// What the container image's build runs: `ragdown model` fetches the runtime (and the model)
/// a first start needs, checks they embed, and a later start downloads nothing.
#[test]
fn ragdown_model_fetches_what_a_first_start_needs_ahead_of_time() {
    let (base, served) = serve_wheel(std::fs::read(onnxruntime_wheel()).unwrap());
    let data = tempfile::tempdir().unwrap();
    let models = models_with_minilm();
    let run = || {
        let out = minilm_without_runtime(data.path(), models.path(), &base)
            .arg("model")
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let stdout = run();
    assert!(
        stdout.starts_with("model all-minilm-l6-v2-q8 ready: 384 dimensions"),
        "{stdout}"
    );
    assert!(
        models
            .path()
            .join("onnxruntime-1.32.0/libonnxruntime.so")
            .is_file()
    );
    run();
    assert_eq!(
        served.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the second run found everything in place"
    );
}

#[test]
fn a_tampered_onnx_runtime_download_is_refused_with_what_to_do() {
    let mut bytes = std::fs::read(onnxruntime_wheel()).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    let (base, served) = serve_wheel(bytes);
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let models = models_with_minilm();
    let out = minilm_without_runtime(data.path(), models.path(), &base)
        .arg("index")
        .arg(docs.path())
        .assert()
        .failure();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("checksum mismatch"), "{stderr}");
    assert!(stderr.contains("ORT_DYLIB_PATH"), "{stderr}");
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 1);
    let kept = std::fs::read_dir(models.path().join("onnxruntime-1.32.0"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(kept, 0, "nothing half-downloaded is left");
}

fn notes() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ops")).unwrap();
    std::fs::write(
        dir.path().join("ops/backups.md"),
        "---\ntags: [ops]\n---\n# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("weather.md"),
        "# Weather\n\nSunny in Paris.\n",
    )
    .unwrap();
    dir
}

#[test]
fn index_then_query_as_text_and_json() {
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let out = ragdown(data.path())
        .arg("index")
        .arg(docs.path())
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("indexed 2 documents, 3 chunks"), "{stdout}");

    let out = ragdown(data.path())
        .args(["query"])
        .arg(docs.path())
        .arg("pg_restore restore")
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        stdout.starts_with("[1] ops/backups.md:10-10 — Backups › Restore (similarity "),
        "{stdout}"
    );
    assert!(stdout.contains("Run pg_restore twice."), "{stdout}");

    let out = ragdown(data.path())
        .args(["query", "--json", "--tag", "ops", "--top-k", "5"])
        .arg(docs.path())
        .arg("snapshots")
        .assert()
        .success();
    let value: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let hits = value["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h["path"] == "ops/backups.md"));
    assert_eq!(hits[0]["line_start"], 6);

    let out = ragdown(data.path())
        .args(["status", "--json"])
        .arg(docs.path())
        .assert()
        .success();
    let value: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(value["documents"], 2);
    assert_eq!(value["embedder"], "hash-384");
}

#[test]
fn a_missing_directory_says_what_to_give() {
    let data = tempfile::tempdir().unwrap();
    let out = ragdown(data.path())
        .args(["index", "/nonexistent/notes"])
        .assert()
        .failure();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("/nonexistent/notes does not exist"),
        "{stderr}"
    );
}

#[test]
fn no_onnx_runtime_names_the_variable() {
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    let model_dir = models.path().join("minilm");
    std::fs::create_dir_all(&model_dir).unwrap();
    std::fs::write(model_dir.join("model.onnx"), b"x").unwrap();
    std::fs::write(model_dir.join("tokenizer.json"), b"{}").unwrap();
    let out = ragdown(data.path())
        .env("RAGDOWN_EMBEDDER", "minilm")
        .env("RAGDOWN_MODELS", models.path())
        .env("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so")
        .arg("index")
        .arg(docs.path())
        .assert()
        .failure();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("ORT_DYLIB_PATH"), "{stderr}");
    assert!(stderr.contains("onnxruntime"), "{stderr}");
}

#[test]
fn no_model_and_no_network_is_a_clear_error() {
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    let out = ragdown(data.path())
        .env("RAGDOWN_EMBEDDER", "granite-small")
        .env("RAGDOWN_MODELS", models.path())
        .env("HF_ENDPOINT", "http://127.0.0.1:9")
        .arg("index")
        .arg(docs.path())
        .assert()
        .failure();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("download of http://127.0.0.1:9/onnx-community/granite-embedding-small-english-r2-ONNX/resolve/main/onnx/model_quantized.onnx failed"), "{stderr}");
}

/// An offline first start with no ONNX Runtime installed: one short message that says what
/// failed, from where, and the one variable to set — once.
#[test]
fn an_offline_first_start_says_what_failed_once() {
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let models = models_with_minilm();
    let out = minilm_without_runtime(data.path(), models.path(), "http://127.0.0.1:9")
        .arg("index")
        .arg(docs.path())
        .assert()
        .failure();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("ONNX Runtime is not installed here and its download failed (http://127.0.0.1:9/packages/")
            && stderr.contains("the server could not be reached"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("ORT_DYLIB_PATH").count(), 1, "{stderr}");
    // Was over 600, the advice twice; the URL alone is ~120.
    assert!(stderr.len() < 450, "{} characters: {stderr}", stderr.len());
}

#[test]
fn an_unknown_embedder_lists_the_choices() {
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let out = ragdown(data.path())
        .env("RAGDOWN_EMBEDDER", "nope")
        .arg("index")
        .arg(docs.path())
        .assert()
        .failure();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("granite-small, bge-small, embeddinggemma, minilm"),
        "{stderr}"
    );
}

#[test]
fn query_and_status_fall_back_to_keyword_search_when_the_model_no_longer_loads() {
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let minilm = |cmd: &mut Command| {
        cmd.env("RAGDOWN_EMBEDDER", "minilm");
    };
    let mut index = ragdown(data.path());
    minilm(&mut index);
    index.arg("index").arg(docs.path()).assert().success();
    let broken = || {
        let mut cmd = ragdown(data.path());
        minilm(&mut cmd);
        cmd.env("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so");
        cmd
    };
    let out = broken()
        .arg("query")
        .arg(docs.path())
        .arg("pg_restore")
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    // The hits say first that they are keyword matches, and why.
    assert!(
        stdout.starts_with(
            "(keyword (BM25) matches only, with no similarity: the embedding model could not load"
        ) && stdout.contains("\n[1] ops/backups.md:10-10"),
        "{stdout}"
    );
    assert!(stderr.contains("keyword (BM25) searches only"), "{stderr}");
    let out = broken().arg("status").arg(docs.path()).assert().success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("keyword (BM25) only"), "{stdout}");
    // Indexing needs the model: it fails and says why.
    let out = broken().arg("index").arg(docs.path()).assert().failure();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("ORT_DYLIB_PATH"), "{stderr}");
}

#[test]
fn reading_with_another_embedder_refuses_instead_of_emptying_the_index() {
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    ragdown(data.path())
        .arg("index")
        .arg(docs.path())
        .assert()
        .success();
    for command in [vec!["status"], vec!["query", "--json"]] {
        let mut cmd = ragdown(data.path());
        cmd.env("RAGDOWN_EMBEDDER", "minilm")
            .args(&command)
            .arg(docs.path());
        if command[0] == "query" {
            cmd.arg("pg_restore");
        }
        let out = cmd.assert().failure();
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(
            stderr.contains("was built with the embedder hash-384")
                && stderr.contains("ragdown index"),
            "{command:?}: {stderr}"
        );
    }
    // The index built with the hash embedder is whole.
    let out = ragdown(data.path())
        .args(["status", "--json"])
        .arg(docs.path())
        .assert()
        .success();
    let value: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        (value["documents"].clone(), value["chunks"].clone()),
        (2.into(), 3.into())
    );
}

#[test]
fn eval_reports_misses_the_hook_and_the_off_topic_prompts_it_injected_into() {
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let prompts = tempfile::tempdir().unwrap();
    let questions = prompts.path().join("questions.jsonl");
    std::fs::write(
        &questions,
        concat!(
            "{\"query\": \"how do I run pg_restore for the nightly snapshots\", \"path\": \"ops/backups.md\", \"line\": 10}\n",
            "{\"query\": \"is it sunny in Paris\", \"path\": \"ops/backups.md\", \"line\": 10}\n",
        ),
    )
    .unwrap();
    let offtopic = prompts.path().join("offtopic.jsonl");
    std::fs::write(
        &offtopic,
        concat!(
            "{\"query\": \"run pg_restore twice on my laptop please\"}\n",
            "{\"query\": \"how many moons does the planet have\"}\n",
        ),
    )
    .unwrap();
    let eval = |json: bool| {
        let mut cmd = ragdown(data.path());
        cmd.arg("eval")
            .arg(docs.path())
            .arg("--questions")
            .arg(&questions)
            .arg("--offtopic")
            .arg(&offtopic);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.assert().success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let text = eval(false);
    assert!(text.contains("overall           top-1 50.0%"), "{text}");
    assert!(
        text.contains("is it sunny in Paris — want ops/backups.md:10")
            && text.contains("above: weather.md:3 Weather"),
        "the miss names what ranked above it: {text}"
    );
    assert!(
        text.contains("  off-topic, injected: run pg_restore twice on my laptop please — first: ops/backups.md:10 Backups › Restore"),
        "{text}"
    );
    assert!(!text.contains("moons does the planet"), "{text}");
    assert!(text.contains("calibration       with your prompts, RAGDOWN_HOOK_MIN_EVIDENCE="));

    let report: serde_json::Value = serde_json::from_str(&eval(true)).unwrap();
    let intruded = report["hook"]["off_topic_injected"].as_array().unwrap();
    assert_eq!(intruded.len(), 1, "{report}");
    assert_eq!(
        intruded[0]["query"],
        "run pg_restore twice on my laptop please"
    );
    assert_eq!(report["hook"]["off_topic_injected_pct"], 50.0);
    // Three sections: every answer is among the candidates the gate chooses from, whatever
    // the gate then lets through.
    assert_eq!(report["hook"]["answer_in_reach_pct"], 100.0, "{report}");
    assert!(
        report["hook"]["answer_injected_pct"].as_f64().unwrap() < 100.0,
        "{report}"
    );
    assert!(text.contains("(within reach 100.0%)"), "{text}");
}
