//! Following the folder: a recursive file watcher (notify; debounced 750 ms here, reads
//! ignored so a sync's own walk does not wake it) and a polling fallback
//! (every 60 s, and the only trigger when watching is off or fails) feed one worker thread that
//! runs the syncs. Syncs never overlap: changes that arrive during a sync are drained into a
//! single follow-up sync.

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::walk::is_skipped_name;
use crate::{Index, Result, SyncReport};

/// Quiet time after the last change before a sync starts.
pub const DEBOUNCE: Duration = Duration::from_millis(750);
/// How often the folder is re-synced without a watcher event.
pub const POLL_EVERY: Duration = Duration::from_secs(60);

enum Signal {
    Changed,
    Stop,
}

/// Keeps the index following the folder until dropped.
pub struct Follower {
    signals: mpsc::Sender<Signal>,
    worker: Option<JoinHandle<()>>,
    _watcher: Option<RecommendedWatcher>,
}

/// Whether a changed path can matter: not inside a dot-folder or `node_modules` (ragdown's own
/// temporary files are dot-files, so a write does not wake the watcher twice).
fn relevant(root: &Path, path: &Path) -> bool {
    let rel = path.strip_prefix(root).unwrap_or(path);
    !rel.components()
        .any(|c| is_skipped_name(&c.as_os_str().to_string_lossy()))
}

impl Follower {
    /// Starts following `index`'s folder. `watch: false` polls only. `on_sync` hears every
    /// sync's outcome (for stats and logs).
    pub fn start(
        index: Arc<Index>,
        watch: bool,
        on_sync: impl Fn(Result<SyncReport>) + Send + 'static,
    ) -> Self {
        Self::start_with_poll(index, watch, POLL_EVERY, on_sync)
    }

    pub fn start_with_poll(
        index: Arc<Index>,
        watch: bool,
        poll_every: Duration,
        on_sync: impl Fn(Result<SyncReport>) + Send + 'static,
    ) -> Self {
        let (signals, inbox) = mpsc::channel::<Signal>();
        let root = index.settings().root.clone();
        let watcher = if watch {
            let forward = signals.clone();
            let events_root = root.clone();
            let handler = move |result: notify::Result<Event>| match result {
                // Reads (our own syncs walk and read the folder) change nothing.
                Ok(event) if matches!(event.kind, EventKind::Access(_)) => {}
                Ok(event) => {
                    if event.paths.iter().any(|p| relevant(&events_root, p)) {
                        let _ = forward.send(Signal::Changed);
                    }
                }
                Err(e) => tracing::warn!("file watching reported an error: {e}"),
            };
            match notify::recommended_watcher(handler)
                .and_then(|mut w| w.watch(&root, RecursiveMode::Recursive).map(|_| w))
            {
                Ok(w) => Some(w),
                Err(e) => {
                    tracing::warn!(
                        "watching {} failed ({e}); polling every {} s instead",
                        root.display(),
                        poll_every.as_secs()
                    );
                    None
                }
            }
        } else {
            None
        };
        let worker = std::thread::Builder::new()
            .name("ragdown-follower".into())
            .spawn(move || {
                loop {
                    match inbox.recv_timeout(poll_every) {
                        Ok(Signal::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                        Ok(Signal::Changed) | Err(RecvTimeoutError::Timeout) => {}
                    }
                    // Debounce: wait for a quiet spell. Everything that arrives meanwhile, or
                    // during the sync, is covered by one sync.
                    loop {
                        match inbox.recv_timeout(DEBOUNCE) {
                            Ok(Signal::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                            Ok(Signal::Changed) => continue,
                            Err(RecvTimeoutError::Timeout) => break,
                        }
                    }
                    on_sync(index.sync());
                }
            })
            .ok();
        Self {
            signals,
            worker,
            _watcher: watcher,
        }
    }

    /// Asks for a sync soon (after the running one, if any).
    pub fn nudge(&self) {
        let _ = self.signals.send(Signal::Changed);
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.signals.send(Signal::Stop);
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}
