//! The query log of servers that share their records in PostgreSQL: one table in the schema
//! named by the prefix alone (each folder's records are in `<prefix>_<folder>`, so no folder
//! can take it), so Settings → Usage on any server sums up the searches of all. Entries
//! are stored as the JSON text the caller made; this module never reads inside them.
//!
//! Knows nothing of what an entry means (that is `server::query_log`'s).

use std::sync::Mutex;

use postgres::Client;

use crate::Result;

/// Most entries kept: past it the oldest go, as a log file rotates.
const MAX_ENTRIES: i64 = 100_000;

/// The shared query log of the servers whose folders' schemas start with `<schema>_`.
pub struct SharedLog {
    url: String,
    schema: String,
    /// One connection, opened on first use and again after a failure.
    client: Mutex<Option<Client>>,
}

impl SharedLog {
    pub fn new(url: &str, schema: &str) -> Self {
        Self {
            url: url.to_string(),
            schema: schema.to_string(),
            client: Mutex::new(None),
        }
    }

    /// Runs `f` on the connection, opening it (and the table) when there is none; a failed
    /// statement drops the connection so the next call opens a fresh one.
    fn with_client<T>(&self, f: impl FnOnce(&mut Client) -> Result<T>) -> Result<T> {
        let mut held = self
            .client
            .lock()
            .map_err(|_| crate::IndexError::Poisoned)?;
        let client = match held.as_mut() {
            Some(client) if !client.is_closed() => client,
            _ => {
                let mut client = crate::store::connect_in(&self.url, &self.schema)?;
                client.batch_execute(
                    "CREATE TABLE IF NOT EXISTS query_log(
                         id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                         entry TEXT NOT NULL)",
                )?;
                held.insert(client)
            }
        };
        let result = f(client);
        if result.is_err() {
            *held = None;
        }
        result
    }

    /// Appends one entry (JSON text); every thousandth id trims the oldest past the limit.
    pub fn append(&self, entry: &str) -> Result<()> {
        self.with_client(|client| {
            let id: i64 = client
                .query_one(
                    "INSERT INTO query_log(entry) VALUES ($1) RETURNING id",
                    &[&entry],
                )?
                .try_get(0)?;
            if id % 1000 == 0 {
                client.execute(
                    "DELETE FROM query_log WHERE id <= $1",
                    &[&(id - MAX_ENTRIES)],
                )?;
            }
            Ok(())
        })
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> Result<Vec<String>> {
        self.with_client(|client| {
            client
                .query("SELECT entry FROM query_log ORDER BY id", &[])?
                .iter()
                .map(|r| r.try_get(0).map_err(crate::IndexError::from))
                .collect()
        })
    }

    /// Empties the log.
    pub fn clear(&self) -> Result<()> {
        self.with_client(|client| {
            client.batch_execute("TRUNCATE query_log")?;
            Ok(())
        })
    }
}
