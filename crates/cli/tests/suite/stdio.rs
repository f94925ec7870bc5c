//! `ragdown stdio` driven by rmcp's client over real stdio: every tool behaviour and refusal,
//! against a fixture folder, with the hash embedder (fast; retrieval quality is tested
//! elsewhere with the real model).

use crate::harness;

use std::path::Path;

use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

struct Server {
    client: RunningService<RoleClient, ()>,
    docs: tempfile::TempDir,
    _data: tempfile::TempDir,
}

fn fixture(docs: &Path) {
    let files: &[(&str, &str)] = &[
        (
            "ops/backups.md",
            "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n",
        ),
        (
            "ops/pg.md",
            "---\naliases: [Postgres Guide]\ntags: [db]\n---\n# PG\n\n## Vacuum\n\nRun vacuum weekly.\n",
        ),
        (
            "notes/links.md",
            "# Links\n\nSee [[ops/pg#Vacuum|vacuum]], [[pg]], ![[pg.md]] and [pg](../ops/pg.md).\n",
        ),
        ("old.md", "# Old\n\nThe deploy uses ftp.\n"),
    ];
    for (path, text) in files {
        let full = docs.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
}

async fn start_with(env: &[(&str, &str)]) -> Server {
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    fixture(docs.path());
    let mut cmd = harness::stdio(docs.path(), data.path());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let client = harness::connect(cmd).await.0;
    let server = Server {
        client,
        docs,
        _data: data,
    };
    // Wait (bounded) for the first sync.
    for _ in 0..100 {
        let (disabled, stats) = server.call("ragdown_stats", json!({})).await;
        if disabled {
            // Without stats, wait until a document is listed.
            if server
                .call("ragdown_list", json!({}))
                .await
                .1
                .starts_with("documents:")
            {
                return server;
            }
        } else if !serde_json::from_str::<Value>(&stats).unwrap()["last_sync"].is_null() {
            return server;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the first sync did not finish");
}

async fn start() -> Server {
    start_with(&[]).await
}

impl Server {
    /// Calls a tool: (is it an error, its text).
    async fn call(&self, name: &str, args: Value) -> (bool, String) {
        harness::call_tool(&self.client, name, args).await
    }

    async fn ok(&self, name: &str, args: Value) -> String {
        let (err, text) = self.call(name, args).await;
        assert!(!err, "{name} failed: {text}");
        text
    }

    async fn err(&self, name: &str, args: Value) -> String {
        let (err, text) = self.call(name, args).await;
        assert!(err, "{name} should have failed: {text}");
        text
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.docs.path().join(path)).unwrap()
    }

    async fn hash_of(&self, path: &str) -> String {
        let text = self.ok("ragdown_read_doc", json!({"path": path})).await;
        let start = text.find("(hash ").unwrap() + 6;
        text[start..start + 12].to_string()
    }
}

#[tokio::test]
async fn lists_every_tool_with_annotations_and_instructions() {
    let s = start().await;
    let tools = s.client.list_all_tools().await.unwrap();
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ragdown_backlinks",
            "ragdown_context",
            "ragdown_delete",
            "ragdown_edit",
            "ragdown_ingest",
            "ragdown_list",
            "ragdown_move",
            "ragdown_read_doc",
            "ragdown_recall",
            "ragdown_reindex",
            "ragdown_remember",
            "ragdown_stats",
            "ragdown_write"
        ]
    );
    let recall = tools.iter().find(|t| t.name == "ragdown_recall").unwrap();
    let a = recall.annotations.as_ref().unwrap();
    assert_eq!(
        (a.read_only_hint, a.open_world_hint),
        (Some(true), Some(false))
    );
    let delete = tools.iter().find(|t| t.name == "ragdown_delete").unwrap();
    assert_eq!(
        delete.annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );
    assert!(
        recall
            .input_schema
            .get("properties")
            .unwrap()
            .get("query")
            .is_some()
    );
    let info = s.client.peer_info().unwrap();
    assert!(
        info.instructions
            .as_deref()
            .unwrap()
            .contains("ragdown_recall")
    );
    assert!(
        info.server_info
            .as_ref()
            .unwrap()
            .name
            .starts_with("ragdown-")
    );
}

#[tokio::test]
async fn read_only_and_disabled_tools_are_neither_listed_nor_accepted() {
    let s = start_with(&[
        ("RAGDOWN_READ_ONLY", "true"),
        (
            "RAGDOWN_DISABLED_TOOLS",
            "ragdown_context, ragdown_stats,ragdown_reindex",
        ),
    ])
    .await;
    let mut names: Vec<String> = s
        .client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ragdown_backlinks",
            "ragdown_list",
            "ragdown_read_doc",
            "ragdown_recall"
        ]
    );
    let msg = s
        .err("ragdown_write", json!({"path": "x.md", "text": "hi"}))
        .await;
    assert!(msg.contains("read-only"), "{msg}");
    s.err(
        "ragdown_context",
        json!({"prompt": "how do I restore backups"}),
    )
    .await;
    assert!(!s.docs.path().join("x.md").exists());
}

#[tokio::test]
async fn every_tool_listed_answers_and_no_other_does() {
    let every = harness::listed_tools(&start().await.client).await;
    assert_eq!(
        every.len(),
        ragdown_server::tools::in_folder().count(),
        "{every:?}"
    );
    let read_only = start_with(&[("RAGDOWN_READ_ONLY", "true")]).await;
    harness::walk_tool_table(&read_only.client, &every, |_, writes| !writes).await;
    let disabled = start_with(&[("RAGDOWN_DISABLED_TOOLS", "ragdown_list,ragdown_edit")]).await;
    harness::walk_tool_table(&disabled.client, &every, |name, _| {
        name != "ragdown_list" && name != "ragdown_edit"
    })
    .await;
    // The write tools the read-only server hid are the ones annotated as writing.
    let writes: Vec<&str> = every
        .iter()
        .filter(|(_, w)| *w)
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(
        writes,
        [
            "ragdown_delete",
            "ragdown_edit",
            "ragdown_ingest",
            "ragdown_move",
            "ragdown_reindex",
            "ragdown_remember",
            "ragdown_write"
        ]
    );
    let all = start().await;
    harness::walk_tool_table(&all.client, &every, |_, _| true).await;
}

#[tokio::test]
async fn recall_text_json_and_clipping() {
    let s = start().await;
    let text = s
        .ok(
            "ragdown_recall",
            json!({"query": "restore pg_restore backups", "max_chars": 5}),
        )
        .await;
    let header = regex::Regex::new(r"^\[1\] ops/backups\.md:7-7 — Backups › Restore \(similarity \d\.\d\d, changed \d{4}-\d{2}-\d{2}\)\n").unwrap();
    assert!(header.is_match(&text), "{text}");
    assert!(text.contains("Run p… [clipped: 5 of 21 characters — ragdown_read_doc {path: \"ops/backups.md\", start_line: 7, end_line: 7}]"), "{text}");
    let json_text = s
        .ok(
            "ragdown_recall",
            json!({"query": "restore pg_restore backups", "format": "json", "top_k": 2}),
        )
        .await;
    let v: Value = serde_json::from_str(&json_text).unwrap();
    assert_eq!(v["hits"][0]["path"], "ops/backups.md");
    assert_eq!(v["hits"][0]["heading"], "Backups › Restore");
    assert!(v["hits"][0]["modified"].as_str().unwrap().ends_with('Z'));
    assert!(v["hits"].as_array().unwrap().len() <= 2);
    let tagged = s
        .ok("ragdown_recall", json!({"query": "vacuum", "tag": "db"}))
        .await;
    assert!(
        tagged.contains("ops/pg.md") && !tagged.contains("ops/backups.md"),
        "{tagged}"
    );
    let none = s
        .ok(
            "ragdown_recall",
            json!({"query": "restore", "path_prefix": "nowhere"}),
        )
        .await;
    assert_eq!(none, "No matching documents.");
}

#[tokio::test]
async fn bad_input_is_an_error_result_and_the_connection_stays() {
    let s = start().await;
    let msg = s
        .err(
            "ragdown_recall",
            json!({"query": "x", "path_prefix": "../.."}),
        )
        .await;
    assert!(msg.contains("outside the docs folder"), "{msg}");
    let msg = s
        .err("ragdown_recall", json!({"query": "x", "top_k": "many"}))
        .await;
    assert!(msg.contains("invalid arguments"), "{msg}");
    let msg = s
        .err("ragdown_read_doc", json!({"path": "../../etc/passwd"}))
        .await;
    assert!(msg.contains("outside the docs folder"), "{msg}");
    let msg = s
        .err("ragdown_read_doc", json!({"path": "/etc/passwd"}))
        .await;
    assert!(msg.contains("outside the docs folder"), "{msg}");
    let msg = s
        .err(
            "ragdown_write",
            json!({"path": ".obsidian/x.md", "text": "x"}),
        )
        .await;
    assert!(msg.contains("dot-folders"), "{msg}");
    let msg = s
        .err(
            "ragdown_write",
            json!({"path": "node_modules/x.md", "text": "x"}),
        )
        .await;
    assert!(msg.contains("node_modules"), "{msg}");
    let msg = s
        .err("ragdown_write", json!({"path": "image.png", "text": "x"}))
        .await;
    assert!(msg.contains("not a Markdown document"), "{msg}");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.path(), s.docs.path().join("escape")).unwrap();
    let msg = s
        .err("ragdown_read_doc", json!({"path": "escape/secret.md"}))
        .await;
    assert!(
        msg.contains("symlink") || msg.contains("no such document"),
        "{msg}"
    );
    let msg = s
        .err(
            "ragdown_write",
            json!({"path": "escape/new.md", "text": "x"}),
        )
        .await;
    assert!(msg.contains("symlink"), "{msg}");
    assert!(!outside.path().join("new.md").exists());
    s.err("ragdown_nonexistent", json!({})).await;
    // Unknown extra arguments are ignored, as upstream does, so existing hook configs keep working.
    s.ok(
        "ragdown_recall",
        json!({"query": "restore", "some_future_option": true}),
    )
    .await;
    // Still answering.
    s.ok("ragdown_stats", json!({})).await;
}

#[tokio::test]
async fn read_doc_ranges_wikilinks_and_headings() {
    let s = start().await;
    let text = s
        .ok(
            "ragdown_read_doc",
            json!({"path": "ops/backups.md", "start_line": 5, "end_line": 7}),
        )
        .await;
    let re = regex::Regex::new(
        r"^ops/backups\.md:5-7 of 8 \(hash [0-9a-f]{12}\)\n## Restore\n\nRun pg_restore twice\.$",
    )
    .unwrap();
    assert!(re.is_match(&text), "{text}");
    let by_name = s.ok("ragdown_read_doc", json!({"path": "pg#Vacuum"})).await;
    assert!(
        by_name.starts_with("ops/pg.md:7-10 of 10 (hash "),
        "{by_name}"
    );
    assert!(by_name.contains("resolved from \"pg#Vacuum\""), "{by_name}");
    assert!(
        by_name.ends_with("## Vacuum\n\nRun vacuum weekly.\n"),
        "{by_name}"
    );
    let by_alias = s
        .ok("ragdown_read_doc", json!({"path": "postgres guide"}))
        .await;
    assert!(by_alias.starts_with("ops/pg.md:1-10 of 10"), "{by_alias}");
    let msg = s
        .err("ragdown_read_doc", json!({"path": "Nothing Like This"}))
        .await;
    assert!(msg.contains("no such document"), "{msg}");
}

#[tokio::test]
async fn context_gates_remembers_and_formats() {
    let s = start_with(&[("RAGDOWN_HOOK_MIN_SCORE", "0.05")]).await;
    assert_eq!(s.ok("ragdown_context", json!({"prompt": "ok"})).await, "");
    assert_eq!(
        s.ok("ragdown_context", json!({"prompt": "/compact please now"}))
            .await,
        ""
    );
    let args =
        json!({"prompt": "how do I restore the backups with pg_restore", "session_id": "s1"});
    let first = s.ok("ragdown_context", args.clone()).await;
    assert!(first.starts_with("<ragdown-context "), "{first}");
    assert!(
        first.contains("ops/backups.md:7-7 — Backups › Restore"),
        "{first}"
    );
    assert!(
        !first.contains(s.docs.path().to_str().unwrap()),
        "the block must not reveal absolute paths"
    );
    let second = s.ok("ragdown_context", args.clone()).await;
    assert!(
        !second.contains("ops/backups.md:7-7"),
        "a section is injected once per session: {second}"
    );
    let other = s
        .ok(
            "ragdown_context",
            json!({"prompt": "how do I restore the backups with pg_restore", "session_id": "s2"}),
        )
        .await;
    assert_eq!(other, first, "sessions are independent");
    assert_eq!(
        s.ok(
            "ragdown_context",
            json!({"prompt": "", "session_id": "s1", "reset": true})
        )
        .await,
        ""
    );
    assert_eq!(s.ok("ragdown_context", args).await, first);
    let wrapped = s.ok("ragdown_context", json!({"prompt": "how do I restore the backups with pg_restore", "format": "claude-code"})).await;
    let v: Value = serde_json::from_str(&wrapped).unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    assert_eq!(v["hookSpecificOutput"]["additionalContext"], first);
    let strict = s
        .ok(
            "ragdown_context",
            json!({"prompt": "weather in paris tomorrow please", "min_score": 0.99}),
        )
        .await;
    assert_eq!(strict, "");
}

#[tokio::test]
async fn remember_writes_provenance_and_never_overwrites() {
    let s = start().await;
    let msg = s
        .err(
            "ragdown_remember",
            json!({"title": "X", "content": "y", "supersedes": ["missing.md"]}),
        )
        .await;
    assert!(msg.contains("supersedes names no document"), "{msg}");
    let saved = s.ok("ragdown_remember", json!({"title": "Kafka retention", "content": "Retention is seven days.\n\n", "tags": ["ops"], "supersedes": ["old.md"], "session_id": "session-1", "name": "kafka"})).await;
    assert_eq!(saved, "saved notes/kafka.md (supersedes old.md)");
    let text = s.read("notes/kafka.md");
    let re = regex::Regex::new("^---\ntitle: \"Kafka retention\"\ndate: \\d{4}-\\d{2}-\\d{2}\ntags: \\[\"ops\"\\]\nsupersedes: \\[\"../old.md\"\\]\ncreated_by: ragdown_remember\nsession: \"session-1\"\n---\nRetention is seven days.\n$").unwrap();
    assert!(re.is_match(&text), "{text}");
    let again = s
        .ok(
            "ragdown_remember",
            json!({"title": "Kafka retention", "content": "Second.", "name": "kafka"}),
        )
        .await;
    assert_eq!(again, "saved notes/kafka-2.md");
    // Indexed before returning; the superseded document is hidden from recall.
    let hits = s
        .ok(
            "ragdown_recall",
            json!({"query": "kafka retention seven days"}),
        )
        .await;
    assert!(hits.contains("notes/kafka.md"), "{hits}");
    assert!(
        hits.contains("written by an agent with ragdown_remember"),
        "{hits}"
    );
    let deploy = s.ok("ragdown_recall", json!({"query": "deploy ftp"})).await;
    assert!(!deploy.contains("old.md"), "{deploy}");
    let read = s.ok("ragdown_read_doc", json!({"path": "old.md"})).await;
    assert!(
        read.lines()
            .next()
            .unwrap()
            .ends_with(", superseded by notes/kafka.md)"),
        "{read}"
    );
    let listed = s.ok("ragdown_list", json!({"written_by": "agent"})).await;
    assert!(
        listed.starts_with("documents: 2\nnotes/kafka-2.md — Kafka retention"),
        "{listed}"
    );
    // The listing says what supersedes a document, as read_doc does.
    let all = s.ok("ragdown_list", json!({})).await;
    assert!(
        all.lines()
            .any(|l| l.starts_with("old.md — ") && l.ends_with(", superseded by notes/kafka.md)")),
        "{all}"
    );
}

#[tokio::test]
async fn write_creates_replaces_with_hash_and_appends() {
    let s = start().await;
    let created = s.ok("ragdown_write", json!({"path": "new/doc.md", "text": "# Doc\n\n## One\n\nfirst\n\n## Two\n\nsecond\n", "session_id": "w1"})).await;
    assert!(
        created.starts_with("created new/doc.md (hash "),
        "{created}"
    );
    assert!(
        s.read("new/doc.md")
            .starts_with("---\ncreated_by: ragdown_write\nsession: \"w1\"\n---\n# Doc")
    );
    let msg = s
        .err("ragdown_write", json!({"path": "new/doc.md", "text": "x"}))
        .await;
    assert!(
        msg.contains("pass the hash ragdown_read_doc returned as base_hash"),
        "{msg}"
    );
    let msg = s
        .err(
            "ragdown_write",
            json!({"path": "new/doc.md", "text": "x", "base_hash": "000000000000"}),
        )
        .await;
    assert!(msg.contains("changed on disk"), "{msg}");
    let hash = s.hash_of("new/doc.md").await;
    s.ok("ragdown_write", json!({"path": "new/doc.md", "text": "more", "append": true, "heading": "One", "base_hash": hash})).await;
    assert!(s.read("new/doc.md").contains("first\n\nmore\n\n## Two"));
    let hash = s.hash_of("new/doc.md").await;
    let wrote = s
        .ok(
            "ragdown_write",
            json!({"path": "new/doc.md", "text": "# Replaced\n", "base_hash": hash}),
        )
        .await;
    assert!(wrote.starts_with("wrote new/doc.md"), "{wrote}");
    assert!(
        s.read("new/doc.md").contains("created_by: ragdown_write"),
        "an agent's document stays an agent's"
    );
    // CRLF files keep CRLF.
    std::fs::write(s.docs.path().join("crlf.md"), "# A\r\n\r\nline\r\n").unwrap();
    s.ok("ragdown_reindex", json!({})).await;
    let hash = s.hash_of("crlf.md").await;
    s.ok(
        "ragdown_write",
        json!({"path": "crlf.md", "text": "# B\nnew line\n", "base_hash": hash}),
    )
    .await;
    assert_eq!(s.read("crlf.md"), "# B\r\nnew line\r\n");
}

#[tokio::test]
async fn edit_is_exact_ordered_and_all_or_nothing() {
    let s = start().await;
    let edited = s
        .ok(
            "ragdown_edit",
            json!({"path": "ops/backups.md", "edits": [
                {"old_text": "Nightly snapshots.", "new_text": "Hourly snapshots."},
                {"old_text": "Hourly", "new_text": "Half-hourly"}
            ]}),
        )
        .await;
    assert!(
        edited.starts_with("edited ops/backups.md (replaced 2, hash "),
        "{edited}"
    );
    assert!(s.read("ops/backups.md").contains("Half-hourly snapshots."));
    let before = s.read("ops/backups.md");
    let msg = s
        .err(
            "ragdown_edit",
            json!({"path": "ops/backups.md", "edits": [
                {"old_text": "Run pg_restore twice.", "new_text": "Run it once."},
                {"old_text": "Run   pg_restore  twice", "new_text": "x"}
            ]}),
        )
        .await;
    assert!(
        msg.starts_with("edit 2 of 2: old_text is not in the document, so nothing was written."),
        "{msg}"
    );
    assert_eq!(s.read("ops/backups.md"), before, "all or nothing");
    let msg = s.err("ragdown_edit", json!({"path": "ops/backups.md", "edits": [{"old_text": "Run  pg_restore twice", "new_text": "x"}]})).await;
    assert!(msg.contains("The nearest passage (lines 7-7) follows; copy old_text from it exactly:\nRun pg_restore twice"), "{msg}");
    let msg = s
        .err(
            "ragdown_edit",
            json!({"path": "ops/backups.md", "edits": [{"old_text": "s", "new_text": "z"}]}),
        )
        .await;
    assert!(msg.contains("times, so nothing was written"), "{msg}");
    let msg = s
        .err(
            "ragdown_edit",
            json!({"path": "ops/backups.md", "edits": [{"old_text": "a", "new_text": "a"}]}),
        )
        .await;
    assert!(msg.contains("are the same"), "{msg}");
    let hits = s
        .ok("ragdown_recall", json!({"query": "half-hourly snapshots"}))
        .await;
    assert!(
        hits.contains("Half-hourly"),
        "indexed before returning: {hits}"
    );
}

#[tokio::test]
async fn move_rewrites_links_and_never_overwrites() {
    let s = start().await;
    let msg = s
        .err("ragdown_move", json!({"from": "ops/pg.md", "to": "old.md"}))
        .await;
    assert!(msg.contains("already exists: old.md"), "{msg}");
    let moved = s
        .ok(
            "ragdown_move",
            json!({"from": "ops/pg.md", "to": "db/postgres.md"}),
        )
        .await;
    assert_eq!(
        moved,
        "moved ops/pg.md to db/postgres.md; links updated in notes/links.md"
    );
    assert_eq!(
        s.read("notes/links.md"),
        "# Links\n\nSee [[postgres#Vacuum|vacuum]], [[postgres]], ![[postgres.md]] and [pg](../db/postgres.md).\n"
    );
    let back = s
        .ok("ragdown_backlinks", json!({"path": "db/postgres.md"}))
        .await;
    let v: Value = serde_json::from_str(&back).unwrap();
    assert_eq!(v["backlinks"][0]["path"], "notes/links.md");
    assert_eq!(v["backlinks"][0]["lines"][0]["line"], 3);
    let msg = s
        .err("ragdown_move", json!({"from": "nothing.md", "to": "x.md"}))
        .await;
    assert!(msg.contains("no such document or folder"), "{msg}");
}

#[tokio::test]
async fn delete_needs_recursive_for_folders_and_checks_hash() {
    let s = start().await;
    let msg = s.err("ragdown_delete", json!({"path": "ops"})).await;
    assert!(msg.contains("pass recursive: true"), "{msg}");
    let msg = s
        .err(
            "ragdown_delete",
            json!({"path": "old.md", "base_hash": "0123456789ab"}),
        )
        .await;
    assert!(msg.contains("changed since it was read"), "{msg}");
    assert!(s.docs.path().join("old.md").exists());
    let hash = s.hash_of("old.md").await;
    assert_eq!(
        s.ok(
            "ragdown_delete",
            json!({"path": "old.md", "base_hash": hash})
        )
        .await,
        "deleted old.md"
    );
    assert_eq!(
        s.ok("ragdown_delete", json!({"path": "ops", "recursive": true}))
            .await,
        "deleted ops"
    );
    let stats: Value =
        serde_json::from_str(&s.ok("ragdown_stats", json!({"include_files": true})).await).unwrap();
    assert_eq!(stats["files"], 1);
    assert_eq!(stats["file_list"][0]["path"], "notes/links.md");
    assert_eq!(stats["role"], "primary");
}

#[tokio::test]
async fn list_and_reindex() {
    // Without the watcher, so only ragdown_reindex picks up the new file.
    let s = start_with(&[("RAGDOWN_WATCH", "false")]).await;
    let listed = s.ok("ragdown_list", json!({"tag": "db"})).await;
    let re = regex::Regex::new(r"^documents: 1\nops/pg\.md — PG \[#db\] \(changed \d{4}-\d{2}-\d{2}, aliases Postgres Guide\)$").unwrap();
    assert!(re.is_match(&listed), "{listed}");
    assert_eq!(
        s.ok("ragdown_list", json!({"limit": 1}))
            .await
            .lines()
            .next(),
        Some("documents: 1 of 4")
    );
    std::fs::write(s.docs.path().join("fresh.md"), "# Fresh\n\nnew words").unwrap();
    let report: Value = serde_json::from_str(&s.ok("ragdown_reindex", json!({})).await).unwrap();
    assert_eq!(report["added"], 1);
    let full: Value =
        serde_json::from_str(&s.ok("ragdown_reindex", json!({"full": true})).await).unwrap();
    assert_eq!(full["added"], 5);
}

#[tokio::test]
async fn context_injects_quoted_names_and_aliases_whatever_their_cosine() {
    let s = start_with(&[("RAGDOWN_HOOK_MIN_SCORE", "0.99")]).await;
    let plain = s
        .ok(
            "ragdown_context",
            json!({"prompt": "what should I run to get the data back"}),
        )
        .await;
    assert_eq!(plain, "", "nothing passes a 0.99 floor");
    let quoted = s
        .ok(
            "ragdown_context",
            json!({"prompt": "what should I run after `pg_restore` finishes"}),
        )
        .await;
    assert!(quoted.contains("ops/backups.md:7-7"), "{quoted}");
    // Written as code, a name only a few sections hold pins them unquoted too.
    let unquoted = s
        .ok(
            "ragdown_context",
            json!({"prompt": "what should I run after pg_restore finishes"}),
        )
        .await;
    assert!(unquoted.contains("ops/backups.md:7-7"), "{unquoted}");
    let weak = s
        .ok(
            "ragdown_context",
            json!({"prompt": "what should I do about `typescript` here"}),
        )
        .await;
    assert_eq!(weak, "", "a plain word in backticks is not a strong name");
    let alias = s
        .ok(
            "ragdown_context",
            json!({"prompt": "what does the postgres guide say about it"}),
        )
        .await;
    assert!(alias.contains("ops/pg.md"), "{alias}");
}

#[tokio::test]
async fn more_refusals_and_folder_moves() {
    let s = start().await;
    let msg = s
        .err(
            "ragdown_write",
            json!({"path": "../escape.md", "text": "x"}),
        )
        .await;
    assert!(msg.contains("outside the docs folder"), "{msg}");
    let msg = s
        .err("ragdown_write", json!({"path": "/tmp/abs.md", "text": "x"}))
        .await;
    assert!(msg.contains("outside the docs folder"), "{msg}");
    let msg = s
        .err(
            "ragdown_write",
            json!({"path": "missing.md", "text": "x", "append": true}),
        )
        .await;
    assert!(msg.contains("no such document"), "{msg}");
    let msg = s
        .err(
            "ragdown_write",
            json!({"path": "x.md", "text": "x", "heading": "One"}),
        )
        .await;
    assert!(msg.contains("heading is for append: true"), "{msg}");
    std::fs::write(s.docs.path().join("ops/diagram.png"), b"png").unwrap();
    let msg = s
        .err("ragdown_delete", json!({"path": "ops/diagram.png"}))
        .await;
    assert!(msg.contains("not a Markdown document"), "{msg}");
    let msg = s
        .err(
            "ragdown_edit",
            json!({"path": "missing.md", "edits": [{"old_text": "a", "new_text": "b"}]}),
        )
        .await;
    assert!(msg.contains("no such document"), "{msg}");
    let msg = s
        .err("ragdown_move", json!({"from": "ops", "to": "ops/inner"}))
        .await;
    assert!(msg.contains("into itself"), "{msg}");
    let msg = s
        .err(
            "ragdown_remember",
            json!({"title": "x", "content": "y", "name": "../../escape"}),
        )
        .await;
    assert!(msg.contains("escapes the documents folder"), "{msg}");
    // A whole subfolder moves, and links into it follow.
    let moved = s
        .ok("ragdown_move", json!({"from": "ops", "to": "runbooks/ops"}))
        .await;
    assert!(
        moved.starts_with("moved ops to runbooks/ops; links updated in notes/links.md"),
        "{moved}"
    );
    assert!(
        s.read("notes/links.md")
            .contains("[pg](../runbooks/ops/pg.md)"),
        "{}",
        s.read("notes/links.md")
    );
    let listed = s
        .ok(
            "ragdown_list",
            json!({"path_prefix": "runbooks", "sort": "recent"}),
        )
        .await;
    assert!(listed.starts_with("documents: 2\n"), "{listed}");
    let stats: Value = serde_json::from_str(&s.ok("ragdown_stats", json!({})).await).unwrap();
    for key in [
        "folder",
        "files",
        "chunks",
        "embedder",
        "role",
        "syncing",
        "last_sync",
    ] {
        assert!(stats.get(key).is_some(), "stats lacks {key}: {stats}");
    }
    assert_eq!(stats["embedder"], "hash-384");
}

#[tokio::test]
async fn an_edit_saved_on_disk_is_searchable_within_two_seconds() {
    let s = start().await;
    std::fs::write(
        s.docs.path().join("ops/backups.md"),
        "# Backups\n\n## Restore\n\nUse zstd-compressed archives.\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    loop {
        let hits = s
            .ok(
                "ragdown_recall",
                json!({"query": "zstd compressed archives", "top_k": 1}),
            )
            .await;
        if hits.contains("zstd-compressed") {
            break;
        }
        // Bounded: the watcher debounces 750 ms; a loaded CI machine gets some slack.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the edit never became searchable"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn converted_documents_are_read_as_markdown_and_never_written() {
    let s = start().await;
    std::fs::write(
        s.docs.path().join("handbook.pdf"),
        ragdown_convert::fixtures::handbook_pdf(),
    )
    .unwrap();
    let (err, text) = s.call("ragdown_reindex", json!({})).await;
    assert!(!err, "{text}");
    let (_, hits) = s
        .call(
            "ragdown_recall",
            json!({"query": "rotate the signing keys", "format": "json", "top_k": 3}),
        )
        .await;
    let hits: Value = serde_json::from_str(&hits).unwrap();
    let hit = hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"] == "handbook.pdf")
        .unwrap_or_else(|| panic!("{hits}"))
        .clone();
    let (start, end) = (
        hit["line_start"].as_u64().unwrap(),
        hit["line_end"].as_u64().unwrap(),
    );
    let (err, read) = s
        .call(
            "ragdown_read_doc",
            json!({"path": "handbook.pdf", "start_line": start, "end_line": end}),
        )
        .await;
    assert!(!err, "{read}");
    let (header, body) = read.split_once('\n').unwrap();
    assert!(header.contains("converted from PDF"), "{header}");
    assert!(
        body.contains(hit["text"].as_str().unwrap().lines().next().unwrap()),
        "the hit's lines are the converted text's lines:\n{read}\n{hit}"
    );
    for (tool, args) in [
        (
            "ragdown_write",
            json!({"path": "handbook.pdf", "text": "x", "base_hash": "000000000000"}),
        ),
        (
            "ragdown_edit",
            json!({"path": "handbook.pdf", "edits": [{"old_text": "a", "new_text": "b"}]}),
        ),
        (
            "ragdown_move",
            json!({"from": "handbook.pdf", "to": "moved.pdf"}),
        ),
        ("ragdown_delete", json!({"path": "handbook.pdf"})),
    ] {
        let (err, text) = s.call(tool, args).await;
        assert!(
            err && text.contains("writes only Markdown"),
            "{tool}: {text}"
        );
    }
    assert!(s.docs.path().join("handbook.pdf").exists());
}

#[tokio::test]
async fn ingest_keeps_fetched_content_and_replaces_by_source() {
    let s = start().await;
    let html = ragdown_convert::fixtures::ARTICLE_HTML;
    let source = "https://example.com/blog/tls-rotation";
    let (err, text) = s
        .call(
            "ragdown_ingest",
            json!({"content": html, "format": "html", "source": source}),
        )
        .await;
    assert!(!err, "{text}");
    assert!(text.starts_with("ingested notes/ingested/"), "{text}");
    let rel = text.split_whitespace().nth(1).unwrap().to_string();
    let saved = std::fs::read_to_string(s.docs.path().join(&rel)).unwrap();
    assert!(saved.contains(&format!("source: \"{source}\"")), "{saved}");
    assert!(
        saved.contains("title: \"Rotating TLS certificates\""),
        "{saved}"
    );
    assert!(
        saved.contains("## Manual renewal") && !saved.contains("Buy CloudWidgets"),
        "{saved}"
    );
    let (_, hits) = s
        .call("ragdown_recall", json!({"query": "certbot renew force"}))
        .await;
    assert!(hits.contains(&rel), "searchable at once: {hits}");

    let (err, again) = s
        .call(
            "ragdown_ingest",
            json!({"content": "Updated: rotation is now automatic.", "format": "text", "source": source, "title": "TLS"}),
        )
        .await;
    assert!(
        !err && again.starts_with(&format!("replaced {rel}")),
        "{again}"
    );
    let saved = std::fs::read_to_string(s.docs.path().join(&rel)).unwrap();
    assert!(
        saved.contains("rotation is now automatic") && !saved.contains("Manual renewal"),
        "{saved}"
    );

    let (err, msg) = s
        .call(
            "ragdown_ingest",
            json!({"content": "x", "format": "pdf", "source": "a"}),
        )
        .await;
    assert!(err, "{msg}");
    let (err, msg) = s
        .call(
            "ragdown_ingest",
            json!({"content": " ", "format": "text", "source": "a"}),
        )
        .await;
    assert!(err && msg.contains("must not be empty"), "{msg}");
}

#[tokio::test]
async fn read_doc_widens_a_hit_by_whole_sections() {
    let s = start().await;
    // backups.md: "# Backups" (1), "Nightly snapshots." (3), "## Restore" (5), "Run pg_restore twice." (7)
    let (_, one) = s
        .call(
            "ragdown_read_doc",
            json!({"path": "ops/backups.md", "start_line": 7, "end_line": 7}),
        )
        .await;
    assert!(one.starts_with("ops/backups.md:7-7 of 8"), "{one}");
    let (_, wider) = s
        .call(
            "ragdown_read_doc",
            json!({"path": "ops/backups.md", "start_line": 7, "end_line": 7, "before": 1}),
        )
        .await;
    assert!(wider.starts_with("ops/backups.md:1-8 of 8"), "{wider}");
    assert!(
        wider.contains("Nightly snapshots.") && wider.contains("Run pg_restore"),
        "{wider}"
    );
    let (_, after) = s
        .call(
            "ragdown_read_doc",
            json!({"path": "ops/backups.md", "start_line": 3, "end_line": 3, "after": 1}),
        )
        .await;
    assert!(after.starts_with("ops/backups.md:1-8 of 8"), "{after}");
}

/// `initialize` and `tools/list` answer while the model is still loading (here: an embedding
/// endpoint that never answers), and a model that cannot load is a tool error saying why.
#[tokio::test]
async fn mcp_answers_before_the_model_has_loaded() {
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    fixture(docs.path());
    let stalled = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let spawn = |url: String| {
        let mut cmd = harness::stdio(docs.path(), data.path());
        cmd.env("RAGDOWN_EMBEDDER", "openai:stalled")
            .env("RAGDOWN_EMBEDDING_URL", url);
        cmd
    };
    let started = std::time::Instant::now();
    let url = format!("http://{}/v1", stalled.local_addr().unwrap());
    let client = ().serve(TokioChildProcess::new(spawn(url)).unwrap()).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), ragdown_server::tools::in_folder().count());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "answered without waiting for the model"
    );
    client.cancel().await.unwrap();

    // Nothing listens on port 9: the model cannot load, and a call says so.
    let client =
        ().serve(TokioChildProcess::new(spawn("http://127.0.0.1:9/v1".into())).unwrap())
            .await
            .unwrap();
    let (err, text) =
        harness::call_tool(&client, "ragdown_recall", json!({"query": "backups"})).await;
    assert!(err && text.contains("could not start its index"), "{text}");
    client.cancel().await.unwrap();
    drop(stalled);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_no_longer_loads_leaves_keyword_search_over_what_was_indexed() {
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    fixture(docs.path());
    // Indexed with the real model (the test environment points at MiniLM)…
    let indexed = harness::ragdown_in(data.path())
        .arg("index")
        .arg(docs.path())
        .env("RAGDOWN_EMBEDDER", "minilm")
        .output()
        .unwrap();
    assert!(indexed.status.success(), "{indexed:?}");
    // …then the runtime library goes missing, one document changes and one is added.
    std::fs::write(
        docs.path().join("ops/pg.md"),
        "# PG\n\n## Vacuum\n\nRun vacuum daily now.\n",
    )
    .unwrap();
    std::fs::write(docs.path().join("new.md"), "# New\n\nZeppelin hangar.\n").unwrap();
    let mut cmd = harness::stdio(docs.path(), data.path());
    cmd.env("RAGDOWN_EMBEDDER", "minilm")
        .env("ORT_DYLIB_PATH", "/nonexistent/libonnxruntime.so");
    let client = harness::connect(cmd).await.0;
    let mut stats = Value::Null;
    for _ in 0..200 {
        let (err, text) = harness::call_tool(&client, "ragdown_stats", json!({})).await;
        if !err {
            stats = serde_json::from_str(&text).unwrap();
            if !stats["last_sync"].is_null() {
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let search = stats["search"].as_str().unwrap_or_default();
    assert!(
        search.starts_with("keyword (BM25) only") && search.contains("ORT_DYLIB_PATH"),
        "{stats}"
    );
    assert_eq!(stats["files"], 4, "nothing indexed before is lost: {stats}");
    let (err, hits) = harness::call_tool(
        &client,
        "ragdown_recall",
        json!({"query": "pg_restore twice"}),
    )
    .await;
    assert!(!err && hits.contains("ops/backups.md"), "{hits}");
    // Its hits say they are keyword matches, and why, rather than "similarity 0.00" alone.
    assert!(
        hits.starts_with(
            "(keyword (BM25) matches only, with no similarity: the embedding model could not load"
        ),
        "{hits}"
    );
    let (_, json_hits) = harness::call_tool(
        &client,
        "ragdown_recall",
        json!({"query": "pg_restore twice", "format": "json"}),
    )
    .await;
    let json_hits: Value = serde_json::from_str(&json_hits).unwrap();
    assert!(
        json_hits["keyword_only"]
            .as_str()
            .is_some_and(|why| why.contains("ORT_DYLIB_PATH")),
        "{json_hits}"
    );
    // The changed document keeps its indexed text; the new one waits for the model.
    let (_, hits) = harness::call_tool(&client, "ragdown_recall", json!({"query": "weekly"})).await;
    assert!(hits.contains("ops/pg.md"), "{hits}");
    let (_, hits) =
        harness::call_tool(&client, "ragdown_recall", json!({"query": "zeppelin"})).await;
    assert!(!hits.contains("new.md"), "{hits}");
    client.cancel().await.unwrap();
}

/// During a first index (a slow model here), a recall says how far indexing is instead of a
/// bare "No matching documents.", and `ragdown query` without a terminal prints its progress
/// every few seconds instead of nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_index_says_how_far_it_is() {
    let docs = harness::lighthouse_notes(240);
    let url = harness::slow_embedding_service(std::time::Duration::from_millis(800));
    let data = tempfile::tempdir().unwrap();
    let mut cmd = harness::stdio(docs.path(), data.path());
    cmd.env("RAGDOWN_EMBEDDER", "openai:slow")
        .env("RAGDOWN_EMBEDDING_URL", &url);
    let client = harness::connect(cmd).await.0;
    let mut said = None;
    for attempt in 0..20 {
        let (err, text) = harness::call_tool(
            &client,
            "ragdown_recall",
            json!({"query": "lighthouse lamp"}),
        )
        .await;
        assert!(!err, "{text}");
        // Even a search right after `initialize`, before the first sync has started or
        // counted its files, is told the index is being built.
        assert!(
            attempt > 0 || text.contains("indexing: "),
            "the first search: {text}"
        );
        // Before the files are counted it says it is listing the folder (see the index's
        // `a_first_index_is_reported_before_its_files_are_counted`); wait for the count.
        if text.contains("indexing: ") && text.contains(" of 240 files read") {
            said = Some(text);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let said = said.expect("a recall during the first index says so");
    assert!(
        said.contains("files read")
            && (said.contains("results may be incomplete")
                || said.starts_with("No matching documents yet")),
        "{said}"
    );
    let (_, as_json) = harness::call_tool(
        &client,
        "ragdown_recall",
        json!({"query": "lighthouse lamp", "format": "json"}),
    )
    .await;
    let v: Value = serde_json::from_str(&as_json).unwrap();
    assert_eq!(v["indexing"]["files_total"], 240, "{as_json}");
    client.cancel().await.unwrap();

    let other = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::from(harness::ragdown_in(other.path()))
        .args(["query", &docs.path().to_string_lossy(), "lighthouse lamp"])
        .env("RAGDOWN_EMBEDDER", "openai:slow")
        .env("RAGDOWN_EMBEDDING_URL", &url)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("ragdown: indexing: ") && stderr.contains("of 240 files read"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "no colour codes in a redirected log: {stderr}"
    );
}

/// A newline in a file name never splits a hit or a listing line: it is shown escaped.
#[tokio::test]
async fn control_characters_in_file_names_are_escaped_in_text_output() {
    let s = start().await;
    std::fs::write(
        s.docs.path().join("two\nlines.md"),
        "# Quokka\n\nThe quokka smiles at visitors.\n",
    )
    .unwrap();
    s.ok("ragdown_reindex", json!({})).await;
    let hits = s
        .ok("ragdown_recall", json!({"query": "quokka smiles"}))
        .await;
    let first = hits.lines().next().unwrap();
    assert!(first.starts_with("[1] two\\nlines.md:"), "{hits}");
    let listed = s.ok("ragdown_list", json!({})).await;
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("two\\nlines.md — Quokka")),
        "{listed}"
    );
    let json_hits = s
        .ok(
            "ragdown_recall",
            json!({"query": "quokka smiles", "format": "json"}),
        )
        .await;
    let v: Value = serde_json::from_str(&json_hits).unwrap();
    assert_eq!(v["hits"][0]["path"], "two\nlines.md");
}
