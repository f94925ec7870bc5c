//! One primary per data dir. The primary holds an exclusive lock on `<data dir>/primary.lock`
//! for its whole life (the kernel drops it when the process dies, even on `kill -9`, so a dead
//! primary never blocks a takeover) and listens on `<data dir>/primary.sock`, where readers
//! forward sync requests and ask for query vectors (so a one-shot reader never loads the
//! model: [`PrimaryQueries`]). Everyone else is a reader of the same records. With the records
//! in a shared database the data dir's holder is primary only when it also holds the
//! folder's lock there (`database_lock`); else it follows ([`Role`]).

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ragdown_embed::{Embedder, TextKind};

use crate::database_lock::DatabaseLock;
pub use crate::request::Request;
use crate::store::RecordsLocation;
use crate::{IndexError, IndexSettings, Result};

/// Held by the primary for as long as it lives.
pub struct PrimaryLock {
    _lock: File,
    pub listener: UnixListener,
    socket: PathBuf,
    stopped: Arc<AtomicBool>,
    answering: AtomicBool,
}

impl PrimaryLock {
    /// True the first time only: whoever gets it answers the socket's requests (one
    /// answerer per lock, however many places hand the lock on).
    pub fn start_answering(&self) -> bool {
        !self.answering.swap(true, Ordering::SeqCst)
    }

    /// Set when the lock is dropped: [`serve_requests`] then returns.
    pub fn stopped(&self) -> Arc<AtomicBool> {
        self.stopped.clone()
    }
}

impl Drop for PrimaryLock {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        // Wakes a `serve_requests` blocked in accept, so it sees the flag and returns.
        let _ = UnixStream::connect(&self.socket);
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// `<data dir>/primary.sock`, or a path in the temp dir when that is too long for a socket.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    let path = crate::data_dir::primary_socket(data_dir);
    if path.as_os_str().len() <= 100 {
        return path;
    }
    let digest = blake3::hash(data_dir.to_string_lossy().as_bytes()).to_hex();
    std::env::temp_dir().join(format!("ragdown-{}.sock", &digest[..16]))
}

/// Becomes the primary if no live process is: `Ok(None)` means another process is primary.
pub fn try_become_primary(data_dir: &Path) -> std::io::Result<Option<PrimaryLock>> {
    std::fs::create_dir_all(data_dir)?;
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(crate::data_dir::primary_lock(data_dir))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
        Err(std::fs::TryLockError::Error(e)) => return Err(e),
    }
    let socket = socket_path(data_dir);
    // A socket file left by a dead primary: we hold the lock, so nobody listens on it.
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket)?;
    Ok(Some(PrimaryLock {
        _lock: lock,
        listener,
        socket,
        stopped: Arc::new(AtomicBool::new(false)),
        answering: AtomicBool::new(false),
    }))
}

/// What a process is to one index, decided when it opens it (see [`claim`]).
pub enum Role {
    /// Writes the records: holds the data dir's lock and, when the records are in a shared
    /// database, that database's primary lock for the folder.
    Primary {
        local: PrimaryLock,
        /// Boxed: a database session is large beside the other roles.
        database: Option<Box<DatabaseLock>>,
    },
    /// Holds the data dir's lock while another server writes the shared records: keeps this
    /// data dir's BM25 index and its snapshot following them.
    Follower { local: PrimaryLock },
    /// Another process on this host holds the data dir's lock; this one reads what it writes.
    Reader,
}

impl Role {
    pub fn is_primary(&self) -> bool {
        matches!(self, Self::Primary { .. })
    }

    /// The data dir's lock, held by a primary and a follower.
    pub fn local(&self) -> Option<&PrimaryLock> {
        match self {
            Self::Primary { local, .. } | Self::Follower { local } => Some(local),
            Self::Reader => None,
        }
    }

    /// `primary`, `follower` or `reader`, as status reports show it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Primary { .. } => "primary",
            Self::Follower { .. } => "follower",
            Self::Reader => "reader",
        }
    }
}

/// Takes what locks are free for the index of `settings`: the data dir's, then — with the
/// records in a database — the folder's primary lock there.
pub fn claim(settings: &IndexSettings) -> Result<Role> {
    let io = |source| IndexError::Io {
        path: settings.data_dir.clone(),
        source,
    };
    let Some(local) = try_become_primary(&settings.data_dir).map_err(io)? else {
        return Ok(Role::Reader);
    };
    Ok(match &settings.records {
        RecordsLocation::DataDir => Role::Primary {
            local,
            database: None,
        },
        RecordsLocation::Postgres { url, schema, .. } => {
            match DatabaseLock::try_take(url, schema, &settings.root)? {
                Some(database) => Role::Primary {
                    local,
                    database: Some(Box::new(database)),
                },
                None => Role::Follower { local },
            }
        }
    })
}

/// Asks the primary to sync; returns its one-line JSON answer.
pub fn request_sync(data_dir: &Path, timeout: Duration) -> std::io::Result<String> {
    ask(data_dir, "sync\n", timeout)
}

/// Asks the primary to index `paths` (a reader's write) and waits for its answer: the
/// primary serves them inside a sync it may be running instead of after it.
pub fn request_sync_paths(
    data_dir: &Path,
    paths: &[String],
    timeout: Duration,
) -> std::io::Result<String> {
    let list = serde_json::to_string(paths).map_err(std::io::Error::other)?;
    ask(data_dir, &format!("sync-paths {list}\n"), timeout)
}

fn ask(data_dir: &Path, request: &str, timeout: Duration) -> std::io::Result<String> {
    let mut stream = UnixStream::connect(socket_path(data_dir))?;
    stream.set_read_timeout(Some(timeout))?;
    stream.write_all(request.as_bytes())?;
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line)?;
    Ok(line.trim_end().to_string())
}

/// Asks the primary for the vector of the query `text`; `None` when there is no primary, it
/// does not answer within `timeout`, or it cannot embed.
pub fn request_query_vector(data_dir: &Path, text: &str, timeout: Duration) -> Option<Vec<f32>> {
    let text = serde_json::to_string(text).ok()?;
    let request = format!("embed-query {} {text}\n", std::process::id());
    let answer = ask(data_dir, &request, timeout).ok()?;
    serde_json::from_str(&answer).ok()
}

/// Serves requests on the primary's socket: each connection sends one [`Request`] line and
/// gets `handle`'s answer as one line. Runs until the lock is dropped (`stopped`). Each
/// request is answered on its own thread, so a write's paths are not held up by a
/// whole-folder sync another reader asked for (the index serves them inside it).
pub fn serve_requests(
    listener: &UnixListener,
    stopped: &AtomicBool,
    handle: impl Fn(Request) -> String + Send + Sync + 'static,
) {
    let handle = Arc::new(handle);
    for stream in listener.incoming() {
        if stopped.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let handle = handle.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(&stream);
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                return;
            }
            if let Some(request) = Request::parse(request.trim()) {
                let answer = handle(request);
                let _ = (&stream).write_all(format!("{answer}\n").as_bytes());
            }
        });
    }
}

/// A reader's embedder that asks the primary for query vectors — its model is loaded and warm
/// — and embeds locally (loading its own model) only when the primary cannot answer.
/// Documents are never embedded by a reader, so they go to the local model as they come.
pub struct PrimaryQueries {
    data_dir: PathBuf,
    local: Arc<dyn Embedder>,
}

impl PrimaryQueries {
    pub fn new(data_dir: &Path, local: Arc<dyn Embedder>) -> Self {
        Self {
            data_dir: data_dir.to_path_buf(),
            local,
        }
    }

    fn forwarded(&self, text: &str) -> Option<Vec<f32>> {
        // Long enough for a primary busy indexing (a query goes before its next batch).
        let vector = request_query_vector(&self.data_dir, text, Duration::from_secs(5))?;
        (vector.len() == self.local.dim()).then_some(vector)
    }
}

impl Embedder for PrimaryQueries {
    fn id(&self) -> &str {
        self.local.id()
    }
    fn dim(&self) -> usize {
        self.local.dim()
    }
    fn min_score(&self) -> f32 {
        self.local.min_score()
    }
    fn embed(&self, texts: &[&str], kind: TextKind) -> ragdown_embed::Result<Vec<Vec<f32>>> {
        if kind == TextKind::Query {
            let forwarded: Option<Vec<Vec<f32>>> =
                texts.iter().map(|t| self.forwarded(t)).collect();
            if let Some(vectors) = forwarded {
                return Ok(vectors);
            }
        }
        self.local.embed(texts, kind)
    }
    fn embed_query(&self, text: &str) -> ragdown_embed::Result<Vec<f32>> {
        match self.forwarded(text) {
            Some(vector) => Ok(vector),
            None => self.local.embed_query(text),
        }
    }
    fn unavailable(&self) -> Option<&str> {
        self.local.unavailable()
    }
    fn loading(&self) -> bool {
        self.local.loading()
    }
    fn load_in_background(&self, answer_meanwhile: bool) {
        self.local.load_in_background(answer_meanwhile);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_primary_at_a_time_and_forwarding() {
        let dir = tempfile::tempdir().unwrap();
        let first = try_become_primary(dir.path())
            .unwrap()
            .expect("the first is primary");
        assert!(
            try_become_primary(dir.path()).unwrap().is_none(),
            "a second is a reader"
        );
        let listener = first.listener.try_clone().unwrap();
        let stopped = first.stopped();
        let server = std::thread::spawn(move || {
            serve_requests(&listener, &stopped, |request| match request {
                Request::Sync => "{\"added\":1}".into(),
                Request::SyncPaths(p) => format!("{{\"paths\":{}}}", p.len()),
                Request::EmbedQuery { text, .. } => format!("[{}.0, 0.5]", text.len()),
            })
        });
        let answer = request_sync(dir.path(), Duration::from_secs(5)).unwrap();
        assert_eq!(answer, "{\"added\":1}");
        let paths = ["a.md".to_string(), "b c.md".to_string()];
        let answer = request_sync_paths(dir.path(), &paths, Duration::from_secs(5)).unwrap();
        assert_eq!(answer, "{\"paths\":2}");
        let vector = request_query_vector(dir.path(), "a \"quoted\" query", Duration::from_secs(5));
        assert_eq!(vector, Some(vec![16.0, 0.5]));
        drop(first);
        server
            .join()
            .expect("dropping the lock stops serving requests");
        assert!(
            try_become_primary(dir.path()).unwrap().is_some(),
            "the lock is free again"
        );
        assert_eq!(
            request_query_vector(dir.path(), "q", Duration::from_secs(1)),
            None,
            "no primary, no vector"
        );
    }

    #[test]
    fn requests_parse_and_garbage_does_not() {
        assert_eq!(Request::parse("sync"), Some(Request::Sync));
        assert_eq!(
            Request::parse(r#"embed-query 42 "restore the backup""#),
            Some(Request::EmbedQuery {
                pid: 42,
                text: "restore the backup".into()
            })
        );
        assert_eq!(Request::parse("embed-query x \"q\""), None);
        assert_eq!(Request::parse("embed-query 1 not-json"), None);
        assert_eq!(Request::parse("sync-paths [1]"), None);
    }
}
