//! The PostgreSQL the tests run against: `RAGDOWN_TEST_DATABASE_URL` (set by
//! `scripts/test.sh`, which starts a throwaway cluster), and a schema of each test's own that
//! is dropped when the test ends. Without the variable, PostgreSQL tests are skipped with a
//! message; CI always sets it.

use std::sync::atomic::{AtomicU32, Ordering};

/// The test database's URL, or `None` (with a message on stderr) when none is configured.
pub fn url() -> Option<String> {
    let url = std::env::var("RAGDOWN_TEST_DATABASE_URL")
        .ok()
        .filter(|u| !u.trim().is_empty());
    if url.is_none() {
        eprintln!(
            "skipping the PostgreSQL half of this test: RAGDOWN_TEST_DATABASE_URL is unset \
             (scripts/test.sh starts a cluster and sets it)"
        );
    }
    url
}

/// A schema no other test uses, dropped with everything in it when this goes.
pub struct TestSchema {
    pub url: String,
    pub name: String,
}

impl TestSchema {
    pub fn new(url: String) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "test_{}_{}_{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        Self { url, name }
    }

    pub fn location(&self) -> super::RecordsLocation {
        self.location_with(super::DensePool::Memory)
    }

    /// The records in this schema, with the dense pool `dense`.
    pub fn location_with(&self, dense: super::DensePool) -> super::RecordsLocation {
        super::RecordsLocation::Postgres {
            url: self.url.clone(),
            schema: self.name.clone(),
            dense,
        }
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.url, postgres::NoTls) {
            let _ =
                client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name));
        }
    }
}
