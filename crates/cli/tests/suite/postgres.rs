//! Records in PostgreSQL (`RAGDOWN_DATABASE_URL`) through the real binary: data dirs sharing
//! one database share its vector cache, an index moves from SQLite without embedding again, the
//! dense pool can come from a pgvector index, a
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
        // On a thread of its own: the blocking client may not run on an async worker (a
        // test that panics drops this there).
        let (url, schema) = (self.url.clone(), self.schema.clone());
        let _ = std::thread::spawn(move || {
            if let Ok(mut client) = postgres::Client::connect(&url, postgres::NoTls) {
                let _ =
                    client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"));
                for folder in ["work", "house"] {
                    let _ = client.batch_execute(&format!(
                        "DROP SCHEMA IF EXISTS \"{schema}_{folder}\" CASCADE"
                    ));
                }
            }
        })
        .join();
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

/// Runs `cmd`, which must fail with `words` in its stderr.
fn fails_saying(cmd: &mut std::process::Command, words: &str) {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains(words), "{stderr}");
}

fn stdout_of(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Asks `ragdown query` (as `cmd` is set up) about restoring in [`notes`]; the restore section
/// must come first. Returns the answer, parsed and as printed.
fn restore_is_found_first(
    cmd: &mut std::process::Command,
    docs: &std::path::Path,
) -> (serde_json::Value, String) {
    let out = stdout_of(
        cmd.args(["query", "--json"])
            .arg(docs)
            .arg("pg_restore restore")
            .output()
            .unwrap(),
    );
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["hits"][0]["path"], "ops/backups.md", "{out}");
    assert_eq!(value["hits"][0]["line_start"], 7, "{out}");
    (value, out)
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
    restore_is_found_first(&mut db.ragdown(second.path()), docs.path());

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
fn a_pgvector_dense_pool_answers_from_the_database_and_follows_edits() {
    let Some(db) = Database::new("pgvector") else {
        return;
    };
    let docs = notes();
    let data = tempfile::tempdir().unwrap();
    let ragdown = || {
        let mut cmd = db.ragdown(data.path());
        cmd.env("RAGDOWN_DENSE_POOL", "pgvector");
        cmd
    };
    stdout_of(ragdown().arg("index").arg(docs.path()).output().unwrap());
    assert_eq!(db.count(&db.schema, "section_vectors"), 3);
    let (value, out) = restore_is_found_first(&mut ragdown(), docs.path());
    assert!(
        value["hits"][0]["similarity"].as_f64().unwrap() > 0.2,
        "the pool's cosine is reported: {out}"
    );
    let out = stdout_of(
        ragdown()
            .args(["status", "--json"])
            .arg(docs.path())
            .output()
            .unwrap(),
    );
    assert!(out.contains("\"dense_pool\":\"pgvector"), "{out}");

    // A removed document leaves the pool with its records.
    std::fs::remove_file(docs.path().join("weather.md")).unwrap();
    stdout_of(ragdown().arg("index").arg(docs.path()).output().unwrap());
    assert_eq!(db.count(&db.schema, "section_vectors"), 2);

    // Without a database, or with a value it does not know, it says what to set.
    fails_saying(
        ragdown_in(data.path())
            .env("RAGDOWN_DENSE_POOL", "pgvector")
            .env_remove("RAGDOWN_DATABASE_URL")
            .arg("index")
            .arg(docs.path()),
        "set RAGDOWN_DATABASE_URL",
    );
    fails_saying(
        ragdown()
            .env("RAGDOWN_DENSE_POOL", "hnsw")
            .arg("status")
            .arg(docs.path()),
        "use `memory` or `pgvector`",
    );
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
    fails_saying(
        ragdown_in(data.path())
            .args(["migrate", "--to", "postgres"])
            .arg(docs.path()),
        "set RAGDOWN_DATABASE_URL",
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

/// One served folder's base URL and token for the two-server test.
struct Served {
    child: std::process::Child,
    base: String,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Served {
    fn start(docs: &std::path::Path, data: &std::path::Path, db: &Database) -> Self {
        Self::start_at(docs, data, db, &db.url)
    }

    /// A server reaching the database at `url` (the test's own, or a door to it).
    fn start_at(docs: &std::path::Path, data: &std::path::Path, db: &Database, url: &str) -> Self {
        let (child, base, log) = crate::harness::spawn_serve(
            docs,
            data,
            "t0ken",
            &[
                ("RAGDOWN_DATABASE_URL", url),
                ("RAGDOWN_DATABASE_SCHEMA", db.schema.as_str()),
                ("RAGDOWN_TAKEOVER_MS", "1000"),
            ],
        );
        Self { child, base, log }
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> (reqwest::StatusCode, serde_json::Value) {
        let mut req = reqwest::Client::new()
            .request(method, format!("{}{path}", self.base))
            .bearer_auth("t0ken");
        if let Some(body) = body {
            req = req
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let resp = req.send().await.unwrap();
        let code = resp.status();
        (code, resp.json().await.unwrap_or_default())
    }

    /// Writes a new document through this server (`/api/doc`), answered once it is indexed.
    async fn write(&self, path: &str, text: &str) {
        let body = serde_json::json!({"path": path, "text": text});
        let (code, made) = self
            .call(reqwest::Method::POST, "/api/doc", Some(body))
            .await;
        assert_eq!(code, reqwest::StatusCode::CREATED, "{made}");
    }

    /// The folder `work` as `/api/folders` shows it.
    async fn folder(&self) -> serde_json::Value {
        self.folder_named("work").await
    }

    /// The folder `name` as `/api/folders` shows it (null when it is not listed).
    async fn folder_named(&self, name: &str) -> serde_json::Value {
        let (_, folders) = self.call(reqwest::Method::GET, "/api/folders", None).await;
        folders["folders"]
            .as_array()
            .and_then(|list| list.iter().find(|f| f["name"] == name).cloned())
            .unwrap_or_default()
    }

    /// Waits until the folder `work` satisfies `ok`, for at most `within`.
    async fn wait_for(
        &self,
        what: &str,
        within: Duration,
        ok: impl Fn(&serde_json::Value) -> bool,
    ) {
        self.wait_for_folder("work", what, within, ok).await
    }

    /// Waits until the folder `name` (null when unlisted) satisfies `ok`, for at most `within`.
    async fn wait_for_folder(
        &self,
        name: &str,
        what: &str,
        within: Duration,
        ok: impl Fn(&serde_json::Value) -> bool,
    ) {
        let deadline = Instant::now() + within;
        loop {
            let folder = self.folder_named(name).await;
            if ok(&folder) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what} within {within:?}: {folder}\n{}",
                self.log.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The path of the best hit `/api/search` finds for `q` in the folder `work`.
    async fn found(&self, q: &str) -> String {
        self.found_in("work", q).await
    }

    /// The path of the best hit `/api/search` finds for `q` in the folder `folder`.
    async fn found_in(&self, folder: &str, q: &str) -> String {
        let (code, hits) = self
            .call(
                reqwest::Method::GET,
                &format!("/api/search?folder={folder}&q={q}"),
                None,
            )
            .await;
        assert!(code.is_success(), "{hits}");
        hits["hits"][0]["path"]
            .as_str()
            .unwrap_or("nothing found")
            .to_string()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

use std::time::{Duration, Instant};

/// The docs dir of the two-server tests: the folder `work` with one runbook.
struct TwoServers {
    a: Served,
    b: Served,
    _dirs: [tempfile::TempDir; 3],
}

/// Starts the first server (reaching the database at `url_a`) and waits for it to index as
/// primary, then the second (reaching it directly) and waits for it to follow.
async fn two_servers(db: &Database, url_a: &str) -> TwoServers {
    let docs = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(docs.path().join("work")).unwrap();
    std::fs::write(
        docs.path().join("work/backups.md"),
        "# Backups\n\nRun pg_restore twice.\n",
    )
    .unwrap();
    let (data_a, data_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Served::start_at(docs.path(), data_a.path(), db, url_a);
    a.wait_for(
        "the first server indexes as primary",
        Duration::from_secs(30),
        |f| f["role"] == "primary" && f["files"] == 1,
    )
    .await;
    let b = Served::start(docs.path(), data_b.path(), db);
    b.wait_for("the second server follows", Duration::from_secs(30), |f| {
        f["role"] == "follower" && f["files"] == 1 && f["records"] == "postgres"
    })
    .await;
    TwoServers {
        a,
        b,
        _dirs: [docs, data_a, data_b],
    }
}

/// Two `ragdown serve` processes with data dirs of their own, on one database and one docs
/// dir, behave as one server: one primary writes, the other follows without embedding; a
/// write through either is searchable through both at once; when the primary is killed the
/// follower takes over within seconds and goes on writing.
#[tokio::test(flavor = "multi_thread")]
async fn two_servers_on_one_database_are_one_knowledge_base() {
    let Some(db) = Database::new("two") else {
        return;
    };
    let TwoServers { a, b, _dirs } = two_servers(&db, &db.url).await;
    assert_eq!(b.folder().await["behind"], 0, "caught up");
    let (_, status) = b.call(reqwest::Method::GET, "/api/status", None).await;
    assert_eq!(status["role"], "follower", "{status}");
    assert_eq!(status["records"], "postgres", "{status}");
    assert_eq!(status["behind"], 0, "{status}");
    assert_eq!(a.found("pg_restore").await, "work/backups.md");
    assert_eq!(
        b.found("pg_restore").await,
        "work/backups.md",
        "its own BM25"
    );

    // A write through the follower: the primary indexes it, both find it at once.
    b.write(
        "work/tides.md",
        "# Tides\n\nSpring tides at the full moon.\n",
    )
    .await;
    assert_eq!(b.found("tides").await, "work/tides.md");
    assert_eq!(a.found("tides").await, "work/tides.md");
    // And through the primary: the follower finds it at its next search.
    a.write("work/comets.md", "# Comets\n\nHalley returns in 2061.\n")
        .await;
    assert_eq!(b.found("halley").await, "work/comets.md");

    // A settings change through the follower: saved in the shared docs dir, followed by the
    // primary within a second or two.
    let (code, patched) = b
        .call(
            reqwest::Method::PATCH,
            "/api/settings",
            Some(serde_json::json!({"max_per_document": 2, "query_log": true})),
        )
        .await;
    assert!(code.is_success(), "{patched}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, status) = a.call(reqwest::Method::GET, "/api/status", None).await;
        if status["settings"]["max_per_document"] == 2 {
            break;
        }
        assert!(Instant::now() < deadline, "not followed: {status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // One query log for both, in the database: Usage on either sums up the searches of all.
    assert_eq!(a.found("halley").await, "work/comets.md");
    assert_eq!(b.found("tides").await, "work/tides.md");
    let (code, log) = a.call(reqwest::Method::GET, "/api/query-log", None).await;
    assert!(code.is_success(), "{log}");
    assert_eq!(log["searches"]["web"], 2, "{log}");

    // kill -9 of the primary: its session ends, the follower takes over.
    let mut a = a;
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let killed = Instant::now();
    b.wait_for("the follower takes over", Duration::from_secs(10), |f| {
        f["role"] == "primary"
    })
    .await;
    eprintln!("takeover after kill -9: {:?}", killed.elapsed());
    b.write("work/orbits.md", "# Orbits\n\nKepler wrote three laws.\n")
        .await;
    assert_eq!(b.found("kepler").await, "work/orbits.md");
    tokio::task::block_in_place(|| {
        db.client()
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS \"{}_work\" CASCADE",
                db.schema
            ))
            .unwrap();
        drop(db);
    });
}

/// The primary is cut off from the database (every connection of its own fails) while the
/// other server still reaches it: the other takes over and writes; the cut-off one steps down
/// to follower, answers searches from memory meanwhile, and follows the new primary once the
/// database is back.
#[tokio::test(flavor = "multi_thread")]
async fn a_primary_cut_off_from_the_database_steps_down_and_follows_once_it_is_back() {
    let Some(db) = Database::new("cut") else {
        return;
    };
    let door = ragdown_index::test_support::CuttableDoor::to(&db.url);
    let TwoServers { a, b, _dirs } = two_servers(&db, &door.url()).await;

    door.set_open(false);
    b.wait_for(
        "the server that still reaches the database takes over",
        Duration::from_secs(15),
        |f| f["role"] == "primary",
    )
    .await;
    a.wait_for(
        "the cut-off primary steps down",
        Duration::from_secs(15),
        |f| f["role"] == "follower",
    )
    .await;
    assert_eq!(
        a.found("pg_restore").await,
        "work/backups.md",
        "memory answers"
    );
    b.write(
        "work/tides.md",
        "# Tides\n\nSpring tides at the full moon.\n",
    )
    .await;
    assert_eq!(b.found("tides").await, "work/tides.md");

    door.set_open(true);
    a.wait_for(
        "the old primary follows the new one",
        Duration::from_secs(15),
        |f| f["files"] == 2 && f["behind"] == 0,
    )
    .await;
    assert_eq!(a.found("tides").await, "work/tides.md");
    drop((a, b));
}

/// A folder renamed through the follower is renamed for both servers: both list the new name
/// and not the old, one of them is its primary, its records moved (nothing re-embedded, no
/// schema left under the old name), and a write through either is found through both.
#[tokio::test(flavor = "multi_thread")]
async fn a_folder_renamed_through_one_server_is_renamed_for_both() {
    let Some(db) = Database::new("rename") else {
        return;
    };
    let TwoServers { a, b, _dirs } = two_servers(&db, &db.url).await;
    let (code, renamed) = b
        .call(
            reqwest::Method::PATCH,
            "/api/folders/work",
            Some(serde_json::json!({"name": "house"})),
        )
        .await;
    assert!(
        code.is_success(),
        "{renamed}\nfirst server:\n{}\nsecond server:\n{}",
        a.log.lock().unwrap(),
        b.log.lock().unwrap()
    );
    for server in [&a, &b] {
        server
            .wait_for_folder(
                "house",
                "the new name is served",
                Duration::from_secs(10),
                |f| f["files"] == 1 && f["behind"] == 0,
            )
            .await;
        server
            .wait_for("the old name is gone", Duration::from_secs(5), |f| {
                f.is_null()
            })
            .await;
        assert_eq!(
            server.found_in("house", "pg_restore").await,
            "house/backups.md"
        );
    }
    let roles = [
        a.folder_named("house").await["role"].clone(),
        b.folder_named("house").await["role"].clone(),
    ];
    assert_eq!(
        roles.iter().filter(|r| *r == "primary").count(),
        1,
        "one primary: {roles:?}"
    );
    let house = format!("{}_house", db.schema);
    assert_eq!(
        schemas(&db, &format!("{}_", db.schema)),
        std::slice::from_ref(&house),
        "the schema moved, none left or made again under the old name"
    );
    let count = |table: &str| tokio::task::block_in_place(|| db.count(&house, table));
    assert_eq!(count("documents"), 1);
    assert_eq!(count("vectors"), 1, "nothing embedded again");

    a.write(
        "house/tides.md",
        "# Tides\n\nSpring tides at the full moon.\n",
    )
    .await;
    b.write("house/comets.md", "# Comets\n\nHalley returns in 2061.\n")
        .await;
    for server in [&a, &b] {
        assert_eq!(server.found_in("house", "tides").await, "house/tides.md");
        assert_eq!(server.found_in("house", "halley").await, "house/comets.md");
    }

    // And back through the other server.
    let (code, renamed) = a
        .call(
            reqwest::Method::PATCH,
            "/api/folders/house",
            Some(serde_json::json!({"name": "work"})),
        )
        .await;
    assert!(code.is_success(), "{renamed}");
    for server in [&a, &b] {
        server
            .wait_for("renamed back", Duration::from_secs(10), |f| {
                f["files"] == 3 && f["behind"] == 0
            })
            .await;
        assert_eq!(server.found("halley").await, "work/comets.md");
    }
    assert_eq!(
        schemas(&db, &format!("{}_", db.schema)),
        [format!("{}_work", db.schema)]
    );
    drop((a, b));
}
