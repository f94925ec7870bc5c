//! `ragdown bench-system --pgvector URL`: the pgvector HNSW dense pool against the in-memory
//! exact scan over the same synthetic vectors — writing them as records, filling the pgvector
//! table and building its HNSW index, top-10 latency and recall@10 at several `ef_search`,
//! and what a server joining the index spends loading its snapshot with vectors (the
//! in-memory pool) and without (the pgvector pool). In a schema of its own, dropped after.

use std::time::Instant;

use anyhow::Result;
use ragdown_index::store::{self, Allowed, Creating, DensePool, RecordsLocation, VectorIndex};

use crate::bench::unsorted_percentile;
use crate::bench_vectors::{DIM, Synthetic, TOP};

/// The `ef_search` values measured.
const EF_SEARCH: [u32; 4] = [40, 100, 200, 400];

/// What the pgvector pool cost at one `ef_search`.
pub(crate) struct Walk {
    pub ef_search: u32,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub recall_at_10: f64,
}

pub(crate) struct PgvectorFigures {
    /// Writing the vector cache and the records (synthetic documents of 1,000 sections).
    pub write_s: f64,
    /// Filling `section_vectors` from the records and building its HNSW index.
    pub build_s: f64,
    pub walks: Vec<Walk>,
    /// Reading the records into a snapshot with every vector (in-memory pool), and without.
    pub join_with_vectors_s: f64,
    pub join_without_vectors_s: f64,
}

/// Drops the benchmark's schema however the measurement ends.
struct Scratch(RecordsLocation);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = store::drop_records(&self.0, || Ok::<(), ()>(()));
    }
}

pub(crate) fn measure(url: &str, synthetic: &Synthetic) -> Result<PgvectorFigures> {
    let schema = format!("ragdown_bench_pgvector_{}", std::process::id());
    let location = RecordsLocation::Postgres {
        url: url.to_string(),
        schema: schema.clone(),
        dense: DensePool::Memory,
    };
    let scratch = Scratch(location.clone());
    let work = tempfile::tempdir()?;
    let mut records = store::open(&scratch.0, work.path(), Creating::Always)?;

    let started = Instant::now();
    store::write_synthetic(records.as_mut(), &synthetic.vectors, DIM, 1000)?;
    let write_s = started.elapsed().as_secs_f64();

    let started = Instant::now();
    drop(VectorIndex::open(url, &schema, DIM, EF_SEARCH[0])?);
    let build_s = started.elapsed().as_secs_f64();

    let mut walks = Vec::new();
    for ef_search in EF_SEARCH {
        let pool = VectorIndex::open(url, &schema, DIM, ef_search)?;
        let (mut times, mut found, mut wanted) = (Vec::new(), 0usize, 0usize);
        for (query, exact) in synthetic.queries.iter().zip(&synthetic.exact) {
            let started = Instant::now();
            let best = pool.nearest(query, TOP, Allowed::All)?;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            wanted += exact.len();
            found += exact
                .iter()
                .filter(|id| best.iter().any(|(got, _)| got == *id))
                .count();
        }
        walks.push(Walk {
            ef_search,
            p50_ms: unsorted_percentile(times.clone(), 0.5),
            p95_ms: unsorted_percentile(times, 0.95),
            recall_at_10: found as f64 / wanted.max(1) as f64,
        });
    }

    let started = Instant::now();
    drop(ragdown_index::Snapshot::from_records(
        records.as_mut(),
        DIM,
        true,
    )?);
    let join_with_vectors_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    drop(ragdown_index::Snapshot::from_records(
        records.as_mut(),
        DIM,
        false,
    )?);
    let join_without_vectors_s = started.elapsed().as_secs_f64();
    drop(records);
    drop(scratch);
    Ok(PgvectorFigures {
        write_s,
        build_s,
        walks,
        join_with_vectors_s,
        join_without_vectors_s,
    })
}
