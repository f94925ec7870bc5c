//! What a process owes an index it is the primary of, for `stdio` and for each folder `serve`
//! opens: answering readers' forwarded syncs from the moment the lock is taken, and following
//! the folder (first sync, watcher, polling) on the follower's thread. A reader keeps trying to
//! take over, and takes these duties on when the primary is gone (even killed).
//!
//! Transport-free: it never answers a tool; it keeps the index following the files.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ragdown_index::Index;
use ragdown_index::lock::{self, PrimaryLock};

use crate::Engine;

/// A primary answers readers' sync requests for as long as it runs (a `ragdown stdio` reader
/// writing a document while `ragdown index` holds the index waits for this, not a timeout).
pub fn answer_forwarded_syncs(index: &Arc<Index>, lock: &PrimaryLock) {
    let Ok(listener) = lock.listener.try_clone() else {
        return;
    };
    let index = index.clone();
    let stopped = lock.stopped();
    std::thread::spawn(move || {
        lock::serve_requests(&listener, &stopped, move |request| {
            let outcome = match request {
                lock::Request::Sync => index.sync(),
                lock::Request::SyncPaths(paths) => index.sync_paths(&paths),
                // A reader's one-shot query, embedded by the model loaded here. Never for this
                // very process: a reader that took over still asks through its old socket.
                lock::Request::EmbedQuery { pid, text } => {
                    if pid == std::process::id() {
                        return "asked by the primary itself".into();
                    }
                    return match index.embedder().embed_query(&text) {
                        Ok(vector) => serde_json::to_string(&vector).unwrap_or_default(),
                        Err(e) => e.to_string(),
                    };
                }
            };
            match outcome {
                Ok(report) => serde_json::to_string(&report).unwrap_or_default(),
                Err(e) => e.to_string(),
            }
        });
    });
}

/// What the primary does besides answering tools: follow the folder. Dropping it stops the
/// watcher and frees the lock.
pub struct PrimaryDuties {
    follower: ragdown_index::watch::Follower,
    _lock: PrimaryLock,
}

impl PrimaryDuties {
    pub fn start(engine: &Arc<Engine>, lock: PrimaryLock, watch: bool) -> Self {
        crate::documents::remove_leftover_temp_files(engine.folder_root());
        // The first sync and every later one run on the follower's thread, so searches answer
        // from what is indexed meanwhile.
        let recorder = engine.clone();
        let follower =
            ragdown_index::watch::Follower::start(engine.index.clone(), watch, move |outcome| {
                match outcome {
                    Ok(report) => recorder.record_sync(&report),
                    Err(e) => tracing::error!("sync of {} failed: {e}", recorder.name),
                }
            });
        follower.nudge();
        Self {
            follower,
            _lock: lock,
        }
    }

    /// Asks for a sync soon (a change the watcher cannot see, such as a settings change).
    pub fn nudge(&self) {
        self.follower.nudge();
    }
}

/// The duties a process holds for one index: none while it is a reader.
pub type SharedDuties = Arc<Mutex<Option<PrimaryDuties>>>;

/// A reader tries to take the primary's place every `every`: when the primary is gone (even
/// killed), the next attempt gets its lock and this process starts indexing and watching.
/// Stops when `duties` is dropped by everyone else (the folder was closed).
pub fn watch_for_takeover(engine: Arc<Engine>, duties: SharedDuties, watch: bool, every: Duration) {
    let weak = Arc::downgrade(&duties);
    drop(duties);
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(every);
            let Some(duties) = weak.upgrade() else {
                return;
            };
            let data_dir = engine.index.settings().data_dir.clone();
            match lock::try_become_primary(&data_dir) {
                Ok(Some(lock)) => {
                    if let Err(e) = engine.index.promote() {
                        tracing::error!("taking over as primary failed: {e}");
                        continue;
                    }
                    tracing::info!(
                        "the primary is gone: this process now indexes {}",
                        data_dir.display()
                    );
                    answer_forwarded_syncs(&engine.index, &lock);
                    if let Ok(mut d) = duties.lock() {
                        *d = Some(PrimaryDuties::start(&engine, lock, watch));
                    }
                    return;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!("checking for the primary failed: {e}"),
            }
        }
    });
}

/// Takes on the role this process has for `engine`'s index: with the lock, the primary's
/// duties (the caller has already started answering forwarded syncs); without it, a reader
/// watching for the chance to take over.
pub fn take_role(
    engine: &Arc<Engine>,
    lock: Option<PrimaryLock>,
    duties: &SharedDuties,
    watch: bool,
    takeover_every: Duration,
) {
    match lock {
        Some(lock) => {
            if let Ok(mut d) = duties.lock() {
                *d = Some(PrimaryDuties::start(engine, lock, watch));
            }
        }
        None => watch_for_takeover(engine.clone(), duties.clone(), watch, takeover_every),
    }
}
