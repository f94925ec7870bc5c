//! What a sync reports ([`SyncReport`]), and the paths writers hand to a sync that is running,
//! with the answers it leaves them ([`Urgent`]). Plain data; the sync itself is `sync.rs`.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Paths writers want indexed now, handed to the sync that is running (a write must not wait
/// for a whole-folder sync), with the answers for them.
#[derive(Default)]
pub(crate) struct Urgent {
    pub(crate) state: Mutex<UrgentState>,
    pub(crate) answered: Condvar,
}

#[derive(Default)]
pub(crate) struct UrgentState {
    pub(crate) next_ticket: u64,
    pub(crate) waiting: Vec<(u64, Vec<String>)>,
    pub(crate) answers: HashMap<u64, std::result::Result<SyncReport, String>>,
}

/// What one sync did.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct SyncReport {
    pub added: usize,
    pub updated: usize,
    pub removed: usize,
    /// Files whose size or mtime changed but whose bytes did not.
    pub touched: usize,
    pub unchanged: usize,
    /// Chunks sent to the embedder (vector cache misses).
    pub embedded: usize,
    /// Pieces of chunks sent to the embedder (vector cache misses).
    #[serde(default)]
    pub embedded_pieces: usize,
    /// `(path, reason)` for files not indexed.
    pub skipped: Vec<(String, String)>,
    pub elapsed: Duration,
}
