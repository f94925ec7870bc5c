//! One primary per folder across every server that keeps the folder's records in one
//! PostgreSQL database. The primary holds a session advisory lock on a connection of its own:
//! PostgreSQL frees it when that session ends, so a killed server (even `kill -9`) never
//! blocks a takeover. The other servers are followers: they read the records, keep their own
//! BM25 index caught up from the journal, and leave the syncs they need (a tool's write) in
//! the folder's `requests` table, where the primary answers them — woken by `NOTIFY`, and by
//! a poll every [`POLL`] should a notification be lost.
//!
//! Each new primary bumps the folder's `epoch`; its store is fenced at that epoch, and the
//! records refuse a write from an older one, so a primary that lost its lock without
//! noticing cannot write over the new primary's work. Knows nothing of files or embedders.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use postgres::Client;
use postgres::fallible_iterator::FallibleIterator;

use crate::request::Request;
use crate::store::{Creating, PostgresStore};
use crate::{IndexError, Result};

/// The channel every ragdown server listens on; the payload is the folder's schema.
const CHANNEL: &str = "ragdown_requests";

/// How often the primary looks for requests whose notification it missed, and how often an
/// asking server looks for its answer.
const POLL: Duration = Duration::from_millis(250);
const ANSWER_POLL: Duration = Duration::from_millis(10);

/// The advisory lock key of a folder's primary: stable, and apart from any other key a
/// schema could give (the first eight bytes of a hash of a tagged name).
fn lock_key(schema: &str) -> i64 {
    let hash = blake3::hash(format!("ragdown primary\0{schema}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash.as_bytes()[..8]);
    i64::from_le_bytes(first)
}

/// Held by the primary of a folder whose records are in PostgreSQL. Dropping it ends the
/// session that holds the lock, so another server can take over at once.
pub struct DatabaseLock {
    schema: String,
    epoch: u64,
    /// The session holding the lock, until [`DatabaseLock::serve_requests`] moves it to the
    /// thread that answers requests.
    client: Option<Client>,
    stopped: Arc<AtomicBool>,
    lost: Arc<AtomicBool>,
}

impl DatabaseLock {
    /// Takes the primary lock of the records in `schema` when no live server holds it:
    /// `Ok(None)` means another server is primary. The schema is migrated first, and created
    /// when missing while the folder's directory `dir` exists.
    pub fn try_take(url: &str, schema: &str, dir: &Path) -> Result<Option<Self>> {
        LockTrier::new(url, schema, dir).try_take()
    }

    /// The epoch this primary writes at (see [`crate::Index::fence`]).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Set when the session holding the lock failed (the database went away): this process
    /// may no longer be the primary, and its fenced writes will be refused if it is not.
    pub fn lost(&self) -> Arc<AtomicBool> {
        self.lost.clone()
    }

    /// Answers the other servers' requests on a thread of its own until the lock is dropped
    /// or its session fails: each request is handled on a thread of its own (a write's paths
    /// are not held up behind a whole-folder sync) and its one-line answer written back.
    pub fn serve_requests(&mut self, handle: impl Fn(Request) -> String + Send + Sync + 'static) {
        let Some(client) = self.client.take() else {
            return;
        };
        let schema = self.schema.clone();
        let stopped = self.stopped.clone();
        let lost = self.lost.clone();
        std::thread::spawn(move || {
            if let Err(e) = answer_requests(client, &schema, &stopped, handle)
                && !stopped.load(Ordering::SeqCst)
            {
                lost.store(true, Ordering::SeqCst);
                tracing::error!(
                    "the connection holding the primary lock of {schema} failed ({e}): \
                     another server may take over; this one's writes are fenced"
                );
            }
        });
    }
}

/// Tries a folder's primary lock again and again (a follower waiting to take over) on one
/// connection kept between tries, opened — and the schema migrated — only at the first try
/// and after a failure.
pub struct LockTrier {
    url: String,
    schema: String,
    /// The folder's directory: the schema is made only while it exists.
    dir: PathBuf,
    client: Option<Client>,
}

impl LockTrier {
    pub fn new(url: &str, schema: &str, dir: &Path) -> Self {
        Self {
            url: url.to_string(),
            schema: schema.to_string(),
            dir: dir.to_path_buf(),
            client: None,
        }
    }

    /// The lock when no live server holds it (see [`DatabaseLock::try_take`]).
    pub fn try_take(&mut self) -> Result<Option<DatabaseLock>> {
        let result = self.try_take_once();
        if result.is_err() {
            // A connection that failed is opened afresh next time.
            self.client = None;
        }
        result
    }

    fn try_take_once(&mut self) -> Result<Option<DatabaseLock>> {
        let mut client = match self.client.take() {
            Some(client) if !client.is_closed() => client,
            // Made only while the folder exists: one renamed away must not come back empty.
            _ => PostgresStore::open_with(
                &self.url,
                &self.schema,
                Creating::WhileDirExists(&self.dir),
            )?
            .into_client(),
        };
        let taken: bool = client
            .query_one(
                "SELECT pg_try_advisory_lock($1)",
                &[&lock_key(&self.schema)],
            )?
            .try_get(0)?;
        if !taken {
            self.client = Some(client);
            return Ok(None);
        }
        let mut tx = client.transaction()?;
        let epoch = crate::store::bump_counter(&mut tx, "epoch")?;
        // A dead primary's requests that it took but never answered are taken again.
        tx.execute(
            "UPDATE requests SET taken = false WHERE answer IS NULL",
            &[],
        )?;
        tx.execute(
            "DELETE FROM requests WHERE asked_at < now() - interval '1 hour'",
            &[],
        )?;
        tx.commit()?;
        Ok(Some(DatabaseLock {
            schema: self.schema.clone(),
            epoch: epoch as u64,
            client: Some(client),
            stopped: Arc::new(AtomicBool::new(false)),
            lost: Arc::new(AtomicBool::new(false)),
        }))
    }
}

impl Drop for DatabaseLock {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
    }
}

/// The primary's request loop: take unanswered requests, answer each on its own thread, write
/// the answers back, wait for a notification or the poll interval.
fn answer_requests(
    mut client: Client,
    schema: &str,
    stopped: &AtomicBool,
    handle: impl Fn(Request) -> String + Send + Sync + 'static,
) -> Result<()> {
    let handle = Arc::new(handle);
    let (answered, answers) = mpsc::channel::<(i64, String)>();
    client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
    while !stopped.load(Ordering::SeqCst) {
        for (id, answer) in answers.try_iter() {
            client.execute(
                "UPDATE requests SET answer = $2 WHERE id = $1",
                &[&id, &answer],
            )?;
        }
        let taken = client.query(
            "UPDATE requests SET taken = true WHERE NOT taken RETURNING id, paths",
            &[],
        )?;
        for row in taken {
            let id: i64 = row.try_get(0)?;
            let paths: Option<String> = row.try_get(1)?;
            let request = match paths {
                None => Some(Request::Sync),
                Some(list) => serde_json::from_str(&list).ok().map(Request::SyncPaths),
            };
            let handle = handle.clone();
            let answered = answered.clone();
            std::thread::spawn(move || {
                let answer = match request {
                    Some(request) => handle(request),
                    None => "the request could not be read".to_string(),
                };
                let _ = answered.send((id, answer));
            });
        }
        // Woken early by a notification for any folder (the payload is not worth filtering:
        // a spare look at the table costs one indexed query).
        let mut notifications = client.notifications();
        if notifications.timeout_iter(POLL).next()?.is_some() {
            // Drain what else arrived meanwhile, without waiting.
            let mut rest = notifications.iter();
            while rest.next()?.is_some() {}
        }
    }
    tracing::debug!("{schema}: the primary stopped answering requests");
    Ok(())
}

/// Asks the primary server of the records in `schema` to sync (`paths`, or the whole folder)
/// and waits up to `timeout` for its one-line answer.
pub fn request_sync(
    url: &str,
    schema: &str,
    paths: Option<&[String]>,
    timeout: Duration,
) -> Result<String> {
    let mut client = PostgresStore::open_with(url, schema, Creating::Never)?.into_client();
    let list = paths
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| IndexError::Primary(e.to_string()))?;
    let id: i64 = client
        .query_one(
            "INSERT INTO requests(paths) VALUES ($1) RETURNING id",
            &[&list],
        )?
        .try_get(0)?;
    client.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &schema])?;
    let started = Instant::now();
    let answer = loop {
        let answer: Option<String> = client
            .query_one("SELECT answer FROM requests WHERE id = $1", &[&id])?
            .try_get(0)?;
        if let Some(answer) = answer {
            break Ok(answer);
        }
        if started.elapsed() >= timeout {
            break Err(IndexError::Primary(format!(
                "no primary server answered within {} s (is one running for these records?)",
                timeout.as_secs()
            )));
        }
        std::thread::sleep(ANSWER_POLL);
    };
    client.execute("DELETE FROM requests WHERE id = $1", &[&id])?;
    answer
}
