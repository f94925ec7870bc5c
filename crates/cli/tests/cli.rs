//! The real `ragdown` binary, run as a user would: indexing, querying, status, and the errors
//! a user meets first (a missing directory, no ONNX Runtime library, no model).

use assert_cmd::Command;

fn ragdown(data: &std::path::Path) -> Command {
    let mut cmd = Command::cargo_bin("ragdown").unwrap();
    cmd.env("RAGDOWN_EMBEDDER", "hash")
        .env("RAGDOWN_DATA_DIR", data)
        .env_remove("RAGDOWN_LOG");
    cmd
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
