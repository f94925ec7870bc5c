//! The mcp-local-rag-style commands (`sync`, `ingest`, `list`, `read`, `delete`) through the
//! real binary: several docs dirs at once, JSON on stdout, converted documents, refusals, and
//! sharing the index with a running `ragdown stdio` primary.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

use crate::harness;

/// `ragdown` with a private cache root, so each docs dir gets its own default data dir.
fn ragdown(cache: &Path) -> Command {
    let mut cmd = harness::ragdown();
    cmd.env("XDG_CACHE_HOME", cache);
    Command::from_std(cmd)
}

fn json_of(cmd: &mut Command) -> Value {
    let out = cmd.assert().success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

fn docs() -> (tempfile::TempDir, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("ops")).unwrap();
    std::fs::write(
        work.path().join("ops/backups.md"),
        "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n\n## Verify\n\nCheck the checksums.\n",
    )
    .unwrap();
    std::fs::write(
        work.path().join("handbook.pdf"),
        ragdown_convert::fixtures::handbook_pdf(),
    )
    .unwrap();
    let specs = tempfile::tempdir().unwrap();
    std::fs::write(specs.path().join("api.md"), "# API\n\nAuth uses tokens.\n").unwrap();
    (work, specs)
}

#[test]
fn sync_list_read_delete_across_docs_dirs() {
    let cache = tempfile::tempdir().unwrap();
    let (work, specs) = docs();
    let synced = json_of(ragdown(cache.path()).args([
        "sync",
        "--json",
        "--docs-dir",
        work.path().to_str().unwrap(),
        "--docs-dir",
        specs.path().to_str().unwrap(),
    ]));
    let roots = synced["roots"].as_array().unwrap();
    assert_eq!(roots.len(), 2, "{synced}");
    assert_eq!(roots[0]["documents"], 2);
    assert_eq!(roots[1]["documents"], 1);

    let listed = json_of(ragdown(cache.path()).args([
        "list",
        work.path().to_str().unwrap(),
        "--docs-dir",
        specs.path().to_str().unwrap(),
        "--json",
    ]));
    let paths: Vec<&str> = listed["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["handbook.pdf", "ops/backups.md", "api.md"],
        "{listed}"
    );
    let text = ragdown(cache.path())
        .args(["list", work.path().to_str().unwrap()])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).to_string();
    assert!(
        text.starts_with("documents: 2") && text.contains("ops/backups.md — Backups"),
        "{text}"
    );

    let read = json_of(ragdown(cache.path()).args([
        "read",
        work.path().to_str().unwrap(),
        "ops/backups.md",
        "--lines",
        "7:7",
        "--json",
    ]));
    assert_eq!(read["line_start"], 7);
    assert_eq!(read["text"], "Run pg_restore twice.");
    assert_eq!(read["hash"].as_str().unwrap().len(), 12);
    let wider = json_of(ragdown(cache.path()).args([
        "read",
        work.path().to_str().unwrap(),
        "ops/backups.md",
        "--lines",
        "7:7",
        "--after",
        "1",
        "--json",
    ]));
    assert!(
        wider["text"]
            .as_str()
            .unwrap()
            .contains("Check the checksums."),
        "{wider}"
    );
    let pdf = json_of(ragdown(cache.path()).args([
        "read",
        work.path().to_str().unwrap(),
        "handbook.pdf",
        "--json",
    ]));
    assert_eq!(pdf["converted_from"], "PDF");
    assert!(
        pdf["text"].as_str().unwrap().contains("## Key rotation"),
        "{pdf}"
    );
    ragdown(cache.path())
        .args(["read", work.path().to_str().unwrap(), "../etc/passwd"])
        .assert()
        .failure();
    ragdown(cache.path())
        .args([
            "read",
            work.path().to_str().unwrap(),
            "ops/backups.md",
            "--lines",
            "a:b",
        ])
        .assert()
        .failure();

    let deleted = json_of(ragdown(cache.path()).args([
        "delete",
        work.path().to_str().unwrap(),
        "handbook.pdf",
        "--json",
    ]));
    assert_eq!(deleted["deleted"], "handbook.pdf");
    assert!(!work.path().join("handbook.pdf").exists());
    ragdown(cache.path())
        .args(["delete", work.path().to_str().unwrap(), "nope.md"])
        .assert()
        .failure();
    let listed =
        json_of(ragdown(cache.path()).args(["list", work.path().to_str().unwrap(), "--json"]));
    assert_eq!(listed["documents"].as_array().unwrap().len(), 1);
}

#[test]
fn ingest_paths_inside_docs_dirs_only() {
    let cache = tempfile::tempdir().unwrap();
    let (work, specs) = docs();
    let out = json_of(ragdown(cache.path()).args([
        "ingest",
        work.path().join("handbook.pdf").to_str().unwrap(),
        specs.path().to_str().unwrap(),
        "--docs-dir",
        work.path().to_str().unwrap(),
        "--docs-dir",
        specs.path().to_str().unwrap(),
        "--json",
    ]));
    let ingested = out["ingested"].as_array().unwrap();
    assert_eq!(ingested[0]["documents"][0]["path"], "handbook.pdf", "{out}");
    assert!(ingested[0]["documents"][0]["chunks"].as_u64().unwrap() >= 3);
    assert_eq!(ingested[1]["documents"][0]["path"], "api.md", "{out}");

    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("x.md"), "# X\n").unwrap();
    let refused = ragdown(cache.path())
        .args([
            "ingest",
            elsewhere.path().join("x.md").to_str().unwrap(),
            "--docs-dir",
            work.path().to_str().unwrap(),
        ])
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
    assert!(err.contains("outside every docs dir"), "{err}");
    std::fs::write(work.path().join("image.png"), "png").unwrap();
    let refused = ragdown(cache.path())
        .args([
            "ingest",
            work.path().join("image.png").to_str().unwrap(),
            "--docs-dir",
            work.path().to_str().unwrap(),
        ])
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
    assert!(err.contains("not a format ragdown indexes"), "{err}");
}

#[test]
fn the_cli_reads_the_index_a_running_server_owns() {
    let cache = tempfile::tempdir().unwrap();
    let (work, _specs) = docs();
    // A primary: `ragdown stdio` on the same docs dir and (default) data dir.
    let mut server = harness::ragdown()
        .arg("stdio")
        .env("XDG_CACHE_HOME", cache.path())
        .env("RAGDOWN_DOCS_DIR", work.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    std::fs::write(work.path().join("new.md"), "# New\n\nFresh text.\n").unwrap();
    let out = json_of(ragdown(cache.path()).args([
        "ingest",
        work.path().join("new.md").to_str().unwrap(),
        "--docs-dir",
        work.path().to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(
        out["ingested"][0]["documents"][0]["path"], "new.md",
        "{out}"
    );
    let status =
        json_of(ragdown(cache.path()).args(["status", work.path().to_str().unwrap(), "--json"]));
    assert_eq!(
        status["role"], "reader",
        "the server holds the index: {status}"
    );
    assert_eq!(status["documents"], 3);
    let _ = server.kill();
    let _ = server.wait();
}
