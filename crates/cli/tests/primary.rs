//! One primary per data dir, with real processes: two `ragdown stdio` servers on one data dir
//! (one primary, one reader), a write through the reader synced by the primary, and a reader
//! that takes over after the primary is killed with SIGKILL.

mod common;

use std::path::Path;

use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

async fn spawn(docs: &Path, data: &Path) -> (RunningService<RoleClient, ()>, u32) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_ragdown"));
    cmd.arg("stdio")
        .env("RAGDOWN_DOCS_DIR", docs)
        .env("RAGDOWN_DATA_DIR", data)
        .env("RAGDOWN_EMBEDDER", "hash")
        .env("RAGDOWN_TAKEOVER_MS", "300")
        .stderr(std::process::Stdio::null());
    let transport = TokioChildProcess::new(cmd).unwrap();
    let pid = transport.id().unwrap();
    (().serve(transport).await.unwrap(), pid)
}

async fn call(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> (bool, String) {
    common::call_tool(client, name, args).await
}

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

#[tokio::test]
async fn roles_forwarding_and_takeover_after_sigkill() {
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(docs.path().join("a.md"), "# A\n\nalpha words\n").unwrap();
    let (primary, primary_pid) = spawn(docs.path(), data.path()).await;
    eventually(
        &primary,
        "ragdown_list",
        json!({}),
        "the primary indexes",
        |t| t.starts_with("documents: 1"),
    )
    .await;
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
