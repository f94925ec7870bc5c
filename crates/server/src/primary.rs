//! What a process owes an index it is the primary of, for `stdio` and for each folder `serve`
//! opens: answering readers' forwarded syncs from the moment the lock is taken, and following
//! the folder (first sync, watcher, polling) on the follower's thread. A reader keeps trying to
//! take over, and takes these duties on when the primary is gone (even killed). With the
//! records in a shared database (`RAGDOWN_DATABASE_URL`) the data dir's holder is primary only
//! while it holds the folder's lock there; else it follows the server that does, forwards its
//! writes' syncs to it, and takes over when that server dies.
//!
//! Transport-free: it never answers a tool; it keeps the index following the files.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ragdown_index::Index;
use ragdown_index::database_lock::{DatabaseLock, LockTrier};
use ragdown_index::lock::{self, PrimaryLock, Role};

use crate::Engine;

/// The one-line answer to a forwarded request: the primary runs it; a follower (shared
/// records, another server writes them) passes it on to that server and catches up.
fn answer(index: &Index, request: lock::Request) -> String {
    let outcome = match request {
        lock::Request::Sync if !index.is_writable() => {
            ragdown_index::forward::forward_sync_report(index, None, crate::SYNC_REQUEST_TIMEOUT)
        }
        lock::Request::SyncPaths(paths) if !index.is_writable() => {
            ragdown_index::forward::forward_sync_report(
                index,
                Some(&paths),
                crate::SYNC_REQUEST_TIMEOUT,
            )
        }
        lock::Request::Sync => index.sync(),
        lock::Request::SyncPaths(paths) => index.sync_paths(&paths),
        // A reader's one-shot query, embedded by the model loaded here. Never for this very
        // process: a reader that took over still asks through its old socket.
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
}

/// The holder of a data dir's lock answers the sync requests of readers on this host for as
/// long as it holds it (a `ragdown stdio` reader writing a document while `ragdown index`
/// holds the index waits for this, not a timeout).
pub fn answer_forwarded_syncs(index: &Arc<Index>, lock: &PrimaryLock) {
    if !lock.start_answering() {
        return;
    }
    let Ok(listener) = lock.listener.try_clone() else {
        return;
    };
    let index = index.clone();
    let stopped = lock.stopped();
    std::thread::spawn(move || {
        lock::serve_requests(&listener, &stopped, move |request| answer(&index, request));
    });
}

/// What the primary does besides answering tools: follow the folder, and with shared records
/// answer the other servers' requests. Dropping it stops the watcher and frees the locks.
pub struct PrimaryDuties {
    follower: ragdown_index::watch::Follower,
    local: PrimaryLock,
    database: Option<DatabaseLock>,
}

impl PrimaryDuties {
    pub fn start(
        engine: &Arc<Engine>,
        local: PrimaryLock,
        mut database: Option<DatabaseLock>,
        watch: bool,
    ) -> Self {
        crate::documents::remove_leftover_temp_files(engine.folder_root());
        if let Some(database) = &mut database {
            let index = engine.index.clone();
            database.serve_requests(move |request| answer(&index, request));
        }
        // The first sync and every later one run on the follower's thread, so searches answer
        // from what is indexed meanwhile; status says it is under way from now on.
        engine.index.sync_ahead();
        let recorder = engine.clone();
        let follower =
            ragdown_index::watch::Follower::start(engine.index.clone(), watch, move |outcome| {
                match outcome {
                    Ok(report) => {
                        recorder.record_sync(&report);
                        // Measured here, after a sync, so no search waits for it (kept while
                        // the folder's size holds; see `ragdown_search::calibration`).
                        let _ = ragdown_search::calibration::Calibration::of(&recorder.index);
                    }
                    Err(e) => tracing::error!("sync of {} failed: {e}", recorder.name),
                }
            });
        follower.nudge();
        Self {
            follower,
            local,
            database,
        }
    }

    /// Asks for a sync soon (a change the watcher cannot see, such as a settings change).
    pub fn nudge(&self) {
        self.follower.nudge();
    }

    /// Whether the session holding the database's primary lock failed.
    fn lost_database(&self) -> bool {
        self.database
            .as_ref()
            .is_some_and(|d| d.lost().load(std::sync::atomic::Ordering::SeqCst))
    }

    /// Stops following the folder and lets the database lock go, keeping the data dir's.
    fn step_down(self) -> PrimaryLock {
        let Self {
            follower,
            local,
            database,
        } = self;
        drop(follower);
        drop(database);
        local
    }
}

/// The duties a process holds for one index (none while it reads or follows), and whether
/// the index was closed (its folder went): the takeover loops end then.
#[derive(Default)]
pub struct Duties {
    pub primary: Option<PrimaryDuties>,
    /// A follower's hold on its data dir (it answers this host's readers): kept here, not in
    /// its thread, so that closing the index frees it at once — a folder renamed by this
    /// process is opened again under its new name right after, and must get the lock.
    following: Option<PrimaryLock>,
    closed: bool,
}

impl Duties {
    /// Drops the primary's duties and a follower's hold (freeing their locks) and ends any
    /// takeover loop.
    pub fn close(&mut self) {
        self.primary = None;
        self.following = None;
        self.closed = true;
    }
}

pub type SharedDuties = Arc<Mutex<Duties>>;

/// The duties of an index still open, or `None` when it was closed.
fn open_duties(weak: &std::sync::Weak<Mutex<Duties>>) -> Option<SharedDuties> {
    let duties = weak.upgrade()?;
    let closed = duties.lock().map_or(true, |d| d.closed);
    (!closed).then_some(duties)
}

/// A reader tries to take the primary's place every `every`: when the process holding the
/// data dir is gone (even killed), the next attempt gets its lock and this process starts
/// indexing and watching — or, with shared records another server writes, following them.
/// Stops when `duties` is closed or dropped by everyone else (the folder was closed).
pub fn watch_for_takeover(engine: Arc<Engine>, duties: SharedDuties, watch: bool, every: Duration) {
    let weak = Arc::downgrade(&duties);
    drop(duties);
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(every);
            let Some(duties) = open_duties(&weak) else {
                return;
            };
            let role = match lock::claim(engine.index.settings()) {
                Ok(Role::Reader) => continue,
                Ok(role) => role,
                Err(e) => {
                    tracing::warn!("checking for the primary failed: {e}");
                    continue;
                }
            };
            let taken = match &role {
                Role::Follower { .. } => engine.index.become_follower(),
                _ => engine.index.promote(),
            };
            if let Err(e) = taken {
                tracing::error!("taking over from the primary process failed: {e}");
                continue;
            }
            tracing::info!(
                "the primary process is gone: this one now keeps {}",
                engine.index.settings().data_dir.display()
            );
            take_role(&engine, role, &duties, watch, every);
            return;
        }
    });
}

/// With the records in a shared database, this process's part changes while it runs: a
/// follower takes over when the primary server's lock is free (it died, even killed); a
/// primary whose lock session failed steps down to follower. One thread per index looks
/// every `every`, and catches a follower up with the records meanwhile.
fn follow_database(
    engine: Arc<Engine>,
    duties: SharedDuties,
    local: Option<PrimaryLock>,
    watch: bool,
    every: Duration,
) {
    if let Ok(mut held) = duties.lock() {
        held.following = local;
    }
    let weak = Arc::downgrade(&duties);
    drop(duties);
    let ragdown_index::store::RecordsLocation::Postgres { url, schema, .. } =
        engine.index.settings().records.clone()
    else {
        return;
    };
    let dir = engine.index.settings().root.clone();
    // Catching up is one query when nothing changed; trying the lock opens a connection.
    let tick = every.min(Duration::from_secs(1));
    std::thread::spawn(move || {
        let mut last_try = std::time::Instant::now();
        let mut trier = LockTrier::new(&url, &schema, &dir);
        loop {
            std::thread::sleep(tick);
            let Some(duties) = open_duties(&weak) else {
                return;
            };
            let Ok(mut held) = duties.lock() else {
                return;
            };
            if held
                .primary
                .as_ref()
                .is_some_and(PrimaryDuties::lost_database)
            {
                tracing::warn!("{}: stepping down to follower", engine.name);
                engine.index.demote();
                held.following = held.primary.take().map(PrimaryDuties::step_down);
            }
            if held.primary.is_some() {
                continue;
            }
            drop(held);
            if let Err(e) = engine.index.refresh() {
                tracing::warn!("{}: following the records failed: {e}", engine.name);
            }
            if last_try.elapsed() < every {
                continue;
            }
            last_try = std::time::Instant::now();
            let database = match trier.try_take() {
                Ok(Some(database)) => database,
                Ok(None) => continue,
                Err(e) => {
                    tracing::debug!("{}: the primary lock could not be tried: {e}", engine.name);
                    continue;
                }
            };
            let promoted = engine
                .index
                .promote()
                .and_then(|()| engine.index.fence(database.epoch()));
            if let Err(e) = promoted {
                tracing::error!("{}: taking over as primary failed: {e}", engine.name);
                continue;
            }
            let Ok(mut held) = duties.lock() else {
                return;
            };
            let Some(local) = held.following.take() else {
                return;
            };
            tracing::info!(
                "{}: the primary server is gone: this one now writes the records",
                engine.name
            );
            held.primary = Some(PrimaryDuties::start(&engine, local, Some(database), watch));
        }
    });
}

/// Takes on the role this process has for `engine`'s index: the primary's duties, a
/// follower's catching up, or a reader's watch for the chance to take over. The holder of the
/// data dir's lock (primary or follower) answers this host's readers from now on.
pub fn take_role(
    engine: &Arc<Engine>,
    role: Role,
    duties: &SharedDuties,
    watch: bool,
    takeover_every: Duration,
) {
    match role {
        Role::Primary { local, database } => {
            answer_forwarded_syncs(&engine.index, &local);
            let shared = database.is_some();
            if let Ok(mut d) = duties.lock() {
                d.primary = Some(PrimaryDuties::start(
                    engine,
                    local,
                    database.map(|d| *d),
                    watch,
                ));
            }
            if shared {
                follow_database(engine.clone(), duties.clone(), None, watch, takeover_every);
            }
        }
        Role::Follower { local } => {
            answer_forwarded_syncs(&engine.index, &local);
            follow_database(
                engine.clone(),
                duties.clone(),
                Some(local),
                watch,
                takeover_every,
            );
        }
        Role::Reader => watch_for_takeover(engine.clone(), duties.clone(), watch, takeover_every),
    }
}
