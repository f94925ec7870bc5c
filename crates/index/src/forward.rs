//! Forwarding a sync to whoever writes an index's records: the primary process on this host
//! through its socket (`lock`), or, for a follower of records shared in PostgreSQL, the
//! primary server through the database (`database_lock`).

use std::time::Duration;

use crate::lock::{request_sync, request_sync_paths};
use crate::store::RecordsLocation;
use crate::{Index, IndexError, Result};

/// Asks whoever writes `index`'s records to sync (`paths`, or the whole folder) and returns
/// its one-line JSON answer: the primary process on this host through its socket, or — for a
/// follower of shared records — the primary server through the database.
pub fn forward_sync(index: &Index, paths: Option<&[String]>, timeout: Duration) -> Result<String> {
    if index.is_follower()
        && let RecordsLocation::Postgres { url, schema, .. } = &index.settings().records
    {
        return crate::database_lock::request_sync(url, schema, paths, timeout);
    }
    let data_dir = &index.settings().data_dir;
    match paths {
        None => request_sync(data_dir, timeout),
        Some(paths) => request_sync_paths(data_dir, paths, timeout),
    }
    .map_err(|e| {
        IndexError::Primary(format!(
            "the primary ragdown process could not be reached ({e}); it may be restarting: \
             try again in a few seconds"
        ))
    })
}

/// [`forward_sync`], its answer read as the primary's report, then this index caught up with
/// what the primary committed.
pub fn forward_sync_report(
    index: &Index,
    paths: Option<&[String]>,
    timeout: Duration,
) -> Result<crate::SyncReport> {
    let answer = forward_sync(index, paths, timeout)?;
    let report = serde_json::from_str(&answer)
        .map_err(|_| IndexError::Primary(format!("the primary could not sync: {answer}")))?;
    index.refresh()?;
    Ok(report)
}
