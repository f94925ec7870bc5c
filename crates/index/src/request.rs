//! What a reader asks the primary ([`Request`]: a sync, a sync of paths, a query's vector),
//! and its one-line form on the primary's socket.

/// What a reader asks the primary.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `sync`: the whole folder.
    Sync,
    /// `sync-paths <JSON list>`: these paths (a reader's write).
    SyncPaths(Vec<String>),
    /// `embed-query <pid> <JSON string>`: the query's vector, from the model the primary
    /// has loaded, for the reader of process `pid`.
    EmbedQuery { pid: u32, text: String },
}

impl Request {
    pub(crate) fn parse(line: &str) -> Option<Self> {
        if line == "sync" {
            return Some(Self::Sync);
        }
        if let Some(list) = line.strip_prefix("sync-paths ") {
            return serde_json::from_str(list).ok().map(Self::SyncPaths);
        }
        let (pid, text) = line.strip_prefix("embed-query ")?.split_once(' ')?;
        Some(Self::EmbedQuery {
            pid: pid.parse().ok()?,
            text: serde_json::from_str(text).ok()?,
        })
    }
}
