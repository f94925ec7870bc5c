//! Records in PostgreSQL (`RAGDOWN_DATABASE_URL`) through the real binary: data dirs sharing
//! one database share its vector cache, an index moves from SQLite without embedding again, a
//! served folder's records follow its rename, and an unreachable database is a clear error
//! that never shows the password. Needs `RAGDOWN_TEST_DATABASE_URL` (`scripts/test.sh` starts
//! a throwaway cluster); without it each test says so and passes.

use std::process::Output;

use crate::harness::ragdown_in;

/// The test database, and a schema of this test's own that is dropped when it ends.
struct Database {
    url: String,
    schema: String,
}

impl Database {
    fn new(test: &str) -> Option<Self> {
        let Some(url) = std::env::var("RAGDOWN_TEST_DATABASE_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
        else {
            eprintln!(
                "skipping {test}: RAGDOWN_TEST_DATABASE_URL is unset (scripts/test.sh starts a \
                 PostgreSQL cluster and sets it)"
            );
            return None;
        };
        Some(Self {
            url,
            schema: format!("cli_{test}_{}", std::process::id()),
        })
    }

    /// `ragdown` with its data dir at `data` and its records in this database.
    fn ragdown(&self, data: &std::path::Path) -> std::process::Command {
        let mut cmd = ragdown_in(data);
        cmd.env("RAGDOWN_DATABASE_URL", &self.url)
            .env("RAGDOWN_DATABASE_SCHEMA", &self.schema);
        cmd
    }

    fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).unwrap()
    }

    fn count(&self, schema: &str, table: &str) -> i64 {
        self.client()
            .query_one(&format!("SELECT count(*) FROM \"{schema}\".{table}"), &[])
            .unwrap()
            .get(0)
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.url, postgres::NoTls) {
            let _ = client.batch_execute(&format!(
                "DROP SCHEMA IF EXISTS \"{}\" CASCADE",
                self.schema
            ));
        }
    }
}

fn notes() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ops")).unwrap();
    std::fs::write(
        dir.path().join("ops/backups.md"),
        "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("weather.md"),
        "# Weather\n\nSunny in Paris.\n",
    )
    .unwrap();
    dir
}

fn stdout_of(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn data_dirs_on_one_database_share_its_records_and_embed_nothing_twice() {
    let Some(db) = Database::new("shared") else {
        return;
    };
    let docs = notes();
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let out = stdout_of(
        db.ragdown(first.path())
            .arg("index")
            .arg(docs.path())
            .output()
            .unwrap(),
    );
    assert!(out.contains("indexed 2 documents, 3 chunks"), "{out}");
    assert!(
        out.contains("3 chunks and"),
        "the first index embeds: {out}"
    );
    assert_eq!(db.count(&db.schema, "documents"), 2);
    assert_eq!(db.count(&db.schema, "chunks"), 3);
    // Nothing is kept in the data dir's SQLite file.
    assert!(!first.path().join("records.sqlite").exists());

    // Another server's data dir over the same documents embeds nothing: every vector is in
    // the shared cache, and its own BM25 index is built from the shared records.
    let out = stdout_of(
        db.ragdown(second.path())
            .arg("index")
            .arg(docs.path())
            .output()
            .unwrap(),
    );
    assert!(out.contains("0 chunks and 0 pieces embedded"), "{out}");
    let out = stdout_of(
        db.ragdown(second.path())
            .args(["query", "--json"])
            .arg(docs.path())
            .arg("pg_restore restore")
            .output()
            .unwrap(),
    );
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["hits"][0]["path"], "ops/backups.md", "{out}");
    assert_eq!(value["hits"][0]["line_start"], 7, "{out}");

    // A change made through one data dir is in the records the other reads.
    std::fs::remove_file(docs.path().join("weather.md")).unwrap();
    stdout_of(
        db.ragdown(first.path())
            .arg("index")
            .arg(docs.path())
            .output()
            .unwrap(),
    );
    assert_eq!(db.count(&db.schema, "documents"), 1);
    let out = stdout_of(
        db.ragdown(second.path())
            .args(["status", "--json"])
            .arg(docs.path())
            .output()
            .unwrap(),
    );
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["documents"], 1, "{out}");
    assert_eq!(value["records"], "postgres", "{out}");
}

#[test]
fn migrate_moves_an_index_from_sqlite_without_embedding_again() {
    let Some(db) = Database::new("migrate") else {
        return;
    };
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let out = stdout_of(
        ragdown_in(data.path())
            .arg("index")
            .arg(docs.path())
            .output()
            .unwrap(),
    );
    assert!(out.contains("3 chunks and"), "{out}");

    // Without a database to move to, it says what to set.
    let out = ragdown_in(data.path())
        .args(["migrate", "--to", "postgres"])
        .arg(docs.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("set RAGDOWN_DATABASE_URL"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = stdout_of(
        db.ragdown(data.path())
            .args(["migrate", "--to", "postgres"])
            .arg(docs.path())
            .output()
            .unwrap(),
    );
    assert!(out.contains("copied 3 cached vectors"), "{out}");
    assert!(
        out.contains("indexed 2 documents, 3 chunks")
            && out.contains("0 chunks and 0 pieces embedded"),
        "{out}"
    );
    assert_eq!(db.count(&db.schema, "chunks"), 3);
    let out = stdout_of(
        db.ragdown(data.path())
            .arg("query")
            .arg(docs.path())
            .arg("sunny paris")
            .output()
            .unwrap(),
    );
    assert!(out.starts_with("[1] weather.md"), "{out}");
}

#[test]
fn an_unreachable_database_is_named_without_its_password() {
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let out = ragdown_in(data.path())
        .env(
            "RAGDOWN_DATABASE_URL",
            "postgres://ann:s3cret@127.0.0.1:1/kb",
        )
        .arg("index")
        .arg(docs.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("postgres://ann:***@127.0.0.1:1/kb") && stderr.contains("cannot connect"),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cret"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("s3cret"));
}

/// The schemas of this database whose names start with `prefix`, sorted. (The blocking
/// client may not run on an async worker: it is moved off it.)
fn schemas(db: &Database, prefix: &str) -> Vec<String> {
    tokio::task::block_in_place(|| schemas_now(db, prefix))
}

fn schemas_now(db: &Database, prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = db
        .client()
        .query(
            "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)",
            &[&prefix],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn served_folders_keep_a_schema_each_that_follows_a_rename_and_goes_with_a_delete() {
    let Some(db) = Database::new("serve") else {
        return;
    };
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("home/garden.md", "# Garden\n\nTomatoes need sun.\n"),
        ("work/backups.md", "# Backups\n\nRun pg_restore twice.\n"),
    ] {
        let full = docs.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let prefix = db.schema.clone();
    let (mut child, base, log) = crate::harness::spawn_serve(
        docs.path(),
        data.path(),
        "t0ken",
        &[
            ("RAGDOWN_DATABASE_URL", db.url.as_str()),
            ("RAGDOWN_DATABASE_SCHEMA", prefix.as_str()),
        ],
    );
    let http = reqwest::Client::new();
    let call = |method: reqwest::Method, path: &str, body: Option<serde_json::Value>| {
        let mut req = http
            .request(method, format!("{base}{path}"))
            .bearer_auth("t0ken");
        if let Some(body) = body {
            req = req
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        async move {
            let resp = req.send().await.unwrap();
            let code = resp.status();
            (
                code,
                resp.json::<serde_json::Value>().await.unwrap_or_default(),
            )
        }
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (_, status) = call(reqwest::Method::GET, "/api/status", None).await;
        if status["files"] == 2 && status["syncing"] == false {
            assert_eq!(status["records"], "postgres", "{status}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never synced: {}",
            log.lock().unwrap()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (home, work) = (format!("{prefix}_home"), format!("{prefix}_work"));
    assert_eq!(schemas(&db, &prefix), [home.clone(), work.clone()]);
    let count = |schema: &str, table: &str| tokio::task::block_in_place(|| db.count(schema, table));
    assert_eq!(count(&home, "documents"), 1);

    let (code, renamed) = call(
        reqwest::Method::PATCH,
        "/api/folders/home",
        Some(serde_json::json!({"name": "house"})),
    )
    .await;
    assert!(code.is_success(), "{renamed}");
    let house = format!("{prefix}_house");
    assert_eq!(schemas(&db, &prefix), [house.clone(), work.clone()]);
    assert_eq!(count(&house, "documents"), 1);
    assert_eq!(
        count(&house, "vectors"),
        1,
        "the cache moved with it: nothing re-embedded"
    );

    let (code, deleted) = call(
        reqwest::Method::DELETE,
        "/api/folders/work?confirm=work",
        None,
    )
    .await;
    assert!(code.is_success(), "{deleted}");
    assert_eq!(schemas(&db, &prefix), vec![house.clone()]);
    let _ = child.kill();
    let _ = child.wait();
    // The test's own schemas go with it.
    tokio::task::block_in_place(|| {
        db.client()
            .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{house}\" CASCADE"))
            .unwrap();
        drop(db);
    });
}
