//! One primary per data dir, with real processes: two `ragdown stdio` servers on one data dir
//! (one primary, one reader), a write through the reader synced by the primary, and a reader
//! that takes over after the primary is killed with SIGKILL.

use crate::harness;

use std::path::Path;

use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};

async fn spawn(docs: &Path, data: &Path) -> (RunningService<RoleClient, ()>, u32) {
    let mut cmd = harness::stdio(docs, data);
    cmd.env("RAGDOWN_TAKEOVER_MS", "300");
    harness::connect(cmd).await
}

use harness::call_tool as call;

async fn stats(client: &RunningService<RoleClient, ()>) -> Value {
    serde_json::from_str(&call(client, "ragdown_stats", json!({})).await.1).unwrap()
}

/// Waits (bounded) until `check` holds for `client`'s answer to `name`.
async fn eventually(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
    what: &str,
    check: impl Fn(&str) -> bool,
) {
    for _ in 0..300 {
        if check(&call(client, name, args.clone()).await.1) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for: {what}");
}

/// Waits until `client`'s primary has indexed the folder's one document.
async fn one_document_indexed(client: &RunningService<RoleClient, ()>) {
    eventually(
        client,
        "ragdown_list",
        json!({}),
        "the primary indexes",
        |t| t.starts_with("documents: 1"),
    )
    .await;
}

#[tokio::test]
async fn roles_forwarding_and_takeover_after_sigkill() {
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(docs.path().join("a.md"), "# A\n\nalpha words\n").unwrap();
    let (primary, primary_pid) = spawn(docs.path(), data.path()).await;
    one_document_indexed(&primary).await;
    let (reader, _) = spawn(docs.path(), data.path()).await;
    assert_eq!(stats(&primary).await["role"], "primary");
    assert_eq!(stats(&reader).await["role"], "reader");
    // The reader searches the primary's store.
    let (_, hits) = call(&reader, "ragdown_recall", json!({"query": "alpha words"})).await;
    assert!(hits.contains("a.md"), "{hits}");
    // A write through the reader is synced by the primary and visible to both at once.
    let (err, saved) = call(
        &reader,
        "ragdown_write",
        json!({"path": "b.md", "text": "# B\n\nbeta words\n"}),
    )
    .await;
    assert!(!err, "{saved}");
    let (_, hits) = call(&reader, "ragdown_recall", json!({"query": "beta words"})).await;
    assert!(
        hits.contains("b.md"),
        "indexed before the reader's write returned: {hits}"
    );
    let (_, hits) = call(&primary, "ragdown_recall", json!({"query": "beta words"})).await;
    assert!(hits.contains("b.md"), "{hits}");
    let (err, report) = call(&reader, "ragdown_reindex", json!({})).await;
    assert!(
        !err && report.contains("\"unchanged\""),
        "forwarded reindex: {report}"
    );

    // Kill the primary without a chance to clean up.
    std::process::Command::new("kill")
        .args(["-9", &primary_pid.to_string()])
        .status()
        .unwrap();
    drop(primary);
    let started = std::time::Instant::now();
    eventually(
        &reader,
        "ragdown_stats",
        json!({}),
        "the reader takes over",
        |t| t.contains("\"role\":\"primary\""),
    )
    .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    // As primary it now follows the folder itself.
    std::fs::write(docs.path().join("c.md"), "# C\n\ngamma words\n").unwrap();
    eventually(
        &reader,
        "ragdown_recall",
        json!({"query": "gamma words"}),
        "the new primary indexes a new file",
        |t| t.contains("c.md"),
    )
    .await;
}

/// Two processes editing one document at once with the same base_hash: the lock on the file
/// orders them, so one edit lands and the other gets the conflict — never both "edited" with
/// one change lost. And a temporary file a killed writer left behind is gone after a start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_never_lose_an_edit_and_leftover_temp_files_go() {
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let file = docs.path().join("race.md");
    let fresh = "# Race\n\nline A: zero\n\nline B: zero\n";
    std::fs::write(&file, fresh).unwrap();
    // A leftover of a writer that no longer runs (no process has pid 2^22 + 1 here).
    let leftover = docs.path().join(".ragdown-4194305-1.tmp");
    std::fs::write(&leftover, "half a document").unwrap();
    let (one, _) = spawn(docs.path(), data.path()).await;
    eventually(&one, "ragdown_list", json!({}), "indexed", |t| {
        t.starts_with("documents: 1")
    })
    .await;
    assert!(
        !leftover.exists(),
        "the leftover temporary file was removed"
    );
    let (two, _) = spawn(docs.path(), data.path()).await;
    for round in 0..15 {
        std::fs::write(&file, fresh).unwrap();
        let base = ragdown_server::format::full_hash(fresh.as_bytes());
        let (a_line, b_line) = (format!("line A: {round}"), format!("line B: {round}"));
        let (a, b) = tokio::join!(
            edit(&one, "line A: zero", &a_line, &base),
            edit(&two, "line B: zero", &b_line, &base)
        );
        let on_disk = std::fs::read_to_string(&file).unwrap();
        match (a.0, b.0) {
            (false, false) => panic!("round {round}: both edited with one base_hash: {on_disk}"),
            (true, true) => panic!("round {round}: both refused: {a:?} {b:?}"),
            (a_failed, _) => {
                let (loser, kept) = if a_failed {
                    (&a, &b_line)
                } else {
                    (&b, &a_line)
                };
                assert!(
                    loser.1.contains("changed on disk"),
                    "round {round}: {loser:?}"
                );
                assert!(on_disk.contains(kept.as_str()), "round {round}: {on_disk}");
            }
        }
    }
    one.cancel().await.unwrap();
    two.cancel().await.unwrap();
}

async fn edit(
    client: &RunningService<RoleClient, ()>,
    old: &str,
    new: &str,
    base: &str,
) -> (bool, String) {
    let args = json!({
        "path": "race.md",
        "edits": [{"old_text": old, "new_text": new}],
        "base_hash": base,
    });
    harness::call_tool(client, "ragdown_edit", args).await
}

/// A write through a reader while the primary runs a long first index (a slow model): the
/// reader forwards just its paths, which the primary serves inside that sync, so the write
/// answers long before the index is done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_readers_write_does_not_wait_for_the_primarys_long_sync() {
    let docs = harness::lighthouse_notes(400);
    let data = tempfile::tempdir().unwrap();
    let url = harness::slow_embedding_service(std::time::Duration::from_millis(600));
    let spawn_slow = || {
        let mut cmd = harness::stdio(docs.path(), data.path());
        cmd.env("RAGDOWN_EMBEDDER", "openai:slow")
            .env("RAGDOWN_EMBEDDING_URL", &url);
        cmd
    };
    let primary = harness::connect(spawn_slow()).await.0;
    assert_eq!(stats(&primary).await["role"], "primary");
    let reader = harness::connect(spawn_slow()).await.0;
    assert_eq!(stats(&reader).await["role"], "reader");
    eventually(
        &primary,
        "ragdown_stats",
        json!({}),
        "the first index starts",
        |t| t.contains("\"syncing\":true"),
    )
    .await;
    let started = std::time::Instant::now();
    let (err, saved) = call(
        &reader,
        "ragdown_write",
        json!({"path": "zeppelin.md", "text": "# Zeppelin\n\nA zeppelin over the harbour.\n"}),
    )
    .await;
    let took = started.elapsed();
    assert!(!err, "{saved}");
    let during = stats(&primary).await;
    assert_eq!(
        during["syncing"], true,
        "the first index is still running: {during}"
    );
    assert!(
        took < std::time::Duration::from_secs(5),
        "the write took {took:?}"
    );
    let (_, hits) = call(
        &reader,
        "ragdown_recall",
        json!({"query": "zeppelin harbour"}),
    )
    .await;
    assert!(hits.contains("zeppelin.md"), "{hits}");
    reader.cancel().await.unwrap();
    primary.cancel().await.unwrap();
}

/// A one-shot `ragdown query` beside a running primary asks it for the query's vector: the
/// query's own model could not load here (its ONNX Runtime library is junk), yet its hits are
/// ranked semantically, with the similarity only a model gives.
#[tokio::test]
async fn a_one_shot_query_gets_its_vector_from_the_primary() {
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        docs.path().join("backups.md"),
        "# Backups\n\n## Restore\n\nTo restore a backup, stop the service and copy the snapshot back.\n",
    )
    .unwrap();
    let mut cmd = harness::stdio(docs.path(), data.path());
    cmd.env("RAGDOWN_EMBEDDER", "minilm");
    let (primary, primary_pid) = harness::connect(cmd).await;
    one_document_indexed(&primary).await;
    let junk = tempfile::tempdir().unwrap();
    let library = junk.path().join("libonnxruntime.so");
    std::fs::write(&library, b"not a library").unwrap();
    let query = |library: &Path| {
        let mut cmd = harness::ragdown_in(data.path());
        cmd.env("RAGDOWN_EMBEDDER", "minilm")
            .env("ORT_DYLIB_PATH", library)
            .args(["query", "--json"])
            .arg(docs.path())
            .arg("how do I bring back a saved copy");
        let out = harness::json_output(&mut cmd);
        out["hits"][0]["similarity"].as_f64().unwrap_or(0.0)
    };
    let similarity = query(&library);
    assert!(
        similarity > 0.2,
        "a semantic hit through the primary: similarity {similarity}"
    );
    // Without the primary, the same query has only its own broken model: keywords alone.
    std::process::Command::new("kill")
        .args(["-9", &primary_pid.to_string()])
        .status()
        .unwrap();
    drop(primary);
    // A killed process's lock and socket are gone at once; give the kernel a moment.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let alone = query(&library);
    assert!(alone < 0.01, "keyword-only without a primary: {alone}");
}
