//! One primary per data dir. The primary holds an exclusive lock on `<data dir>/primary.lock`
//! for its whole life (the kernel drops it when the process dies, even on `kill -9`, so a dead
//! primary never blocks a takeover) and listens on `<data dir>/primary.sock`, where readers
//! forward sync requests. Everyone else is a reader of the same records.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Held by the primary for as long as it lives.
pub struct PrimaryLock {
    _lock: File,
    pub listener: UnixListener,
    socket: PathBuf,
    stopped: Arc<AtomicBool>,
}

impl PrimaryLock {
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
    }))
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

/// Serves sync requests on the primary's socket: each connection sends `sync` (the whole
/// folder: `handle(None)`) or `sync-paths <JSON list>` (`handle(Some(paths))`) and gets the
/// answer as one line. Runs until the lock is dropped (`stopped`). Each request is answered on
/// its own thread, so a write's paths are not held up by a whole-folder sync another reader
/// asked for (the index serves them inside it).
pub fn serve_requests(
    listener: &UnixListener,
    stopped: &AtomicBool,
    handle: impl Fn(Option<Vec<String>>) -> String + Send + Sync + 'static,
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
            let request = request.trim();
            let asked = if request == "sync" {
                Some(None)
            } else {
                request
                    .strip_prefix("sync-paths ")
                    .and_then(|list| serde_json::from_str::<Vec<String>>(list).ok())
                    .map(Some)
            };
            if let Some(paths) = asked {
                let answer = handle(paths);
                let _ = (&stream).write_all(format!("{answer}\n").as_bytes());
            }
        });
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
            serve_requests(&listener, &stopped, |paths| match paths {
                None => "{\"added\":1}".into(),
                Some(p) => format!("{{\"paths\":{}}}", p.len()),
            })
        });
        let answer = request_sync(dir.path(), Duration::from_secs(5)).unwrap();
        assert_eq!(answer, "{\"added\":1}");
        let paths = ["a.md".to_string(), "b c.md".to_string()];
        let answer = request_sync_paths(dir.path(), &paths, Duration::from_secs(5)).unwrap();
        assert_eq!(answer, "{\"paths\":2}");
        drop(first);
        server
            .join()
            .expect("dropping the lock stops serving requests");
        assert!(
            try_become_primary(dir.path()).unwrap().is_some(),
            "the lock is free again"
        );
    }
}
