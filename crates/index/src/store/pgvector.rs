//! A folder's dense pool from a pgvector HNSW index, for folders too large to hold their
//! vectors in every server's memory (`RAGDOWN_DENSE_POOL=pgvector`, records in PostgreSQL).
//!
//! The table `section_vectors` (one row per chunk: its id, its document, its vector as
//! pgvector's `vector`) sits beside the chunks in the folder's schema, with an HNSW index on
//! cosine distance. It exists only once a server asked for it ([`VectorIndex::open`], which
//! creates the extension, fills the table from the records and builds the index), and from
//! then on every server's writes keep it in step inside the same transaction that replaces a
//! document ([`index_document`]) — whether or not that server reads from it — and chunks'
//! deletion removes its rows by cascade. The vectors also stay in the `vectors` cache as blobs:
//! that remains the truth, this table is derived and dropped or rebuilt at will.
//!
//! Searches ask [`VectorIndex::nearest`] on a connection of their own (never the one a sync
//! holds). A filter that leaves few documents is answered by an exact scan of their rows: an
//! HNSW walk filters after it has found its `ef_search` candidates, so with a 2% filter it
//! returned 1–2 rows of 10. Knows nothing of ranking beyond distance.

use std::collections::HashMap;
use std::sync::Mutex;

use pgvector::Vector;
use postgres::{Client, Transaction};

use super::{blob_to_vector, redact_url};
use crate::{IndexError, Result};

/// Rows read and written per statement while the table is first filled (about 15 MB of
/// 384-dimension vectors).
const FILL_BATCH: i64 = 10_000;

/// Below this share of the folder's documents, a filtered search scans the allowed rows
/// exactly instead of filtering an HNSW walk's candidates.
const EXACT_BELOW_SHARE: f64 = 0.1;

/// The most candidates one HNSW walk is asked for when a filter drops some of them.
const MAX_WALK: usize = 2_000;

/// The documents a search may return, as the dense pool needs them.
pub enum Allowed<'a> {
    /// Every document the records hold.
    All,
    /// These documents (ids), of `total` the folder holds.
    Only { ids: &'a [i64], total: usize },
}

/// A chunk's vector and its pieces' vectors, in order.
pub type SectionVectors = (Vec<f32>, Vec<Vec<f32>>);

/// A folder's HNSW index in PostgreSQL, on a connection of its own.
pub struct VectorIndex {
    client: Mutex<Client>,
    url: String,
    schema: String,
    /// The schema pgvector's types live in, quoted for SQL.
    types: String,
    ef_search: u32,
}

impl VectorIndex {
    /// Connects for searches, creating the extension, the table and its HNSW index when
    /// missing (a table for another dimension is rebuilt). Errors say what the database lacks.
    pub fn open(url: &str, schema: &str, dim: usize, ef_search: u32) -> Result<Self> {
        let mut client = super::connect_in(url, schema)?;
        let types = enable(&mut client, url, schema, dim)?;
        Ok(Self {
            client: Mutex::new(client),
            url: url.to_string(),
            schema: schema.to_string(),
            types,
            ef_search: ef_search.max(1),
        })
    }

    /// Makes the table and its index again when they are missing (a reset of the records
    /// dropped them).
    pub fn ensure(&self, dim: usize) -> Result<()> {
        let mut client = self.client()?;
        enable(&mut client, &self.url, &self.schema, dim).map(|_| ())
    }

    /// The `n` chunks closest to `query` by cosine (best first, with their cosine) among the
    /// allowed documents. The HNSW walk considers `max(ef_search, n)` candidates; a filter that
    /// allows under 10% of the documents, or drops too many of a walk's candidates, is
    /// answered exactly from the allowed rows.
    pub fn nearest(
        &self,
        query: &[f32],
        n: usize,
        allowed: Allowed<'_>,
    ) -> Result<Vec<(i64, f32)>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut client = self.client()?;
        let query = Vector::from(query.to_vec());
        let types = &self.types;
        match allowed {
            Allowed::All => self.walk(&mut client, &query, n, None),
            Allowed::Only { ids: [], .. } => Ok(Vec::new()),
            Allowed::Only { ids, total } => {
                let share = ids.len() as f64 / total.max(1) as f64;
                if share >= EXACT_BELOW_SHARE {
                    // Ask for enough candidates that about `n` pass the filter.
                    let wanted = ((n as f64 / share) * 1.5).ceil() as usize;
                    let walked = self.walk(&mut client, &query, wanted.min(MAX_WALK), Some(ids))?;
                    if walked.len() >= n {
                        return Ok(walked.into_iter().take(n).collect());
                    }
                }
                // `+ 0` keeps the planner off the HNSW index: an exact scan of the rows the
                // document index finds.
                let rows = client.query(
                    &format!(
                        "SELECT chunk_id, (embedding OPERATOR({types}.<=>) $1) + 0 AS distance
                             FROM section_vectors WHERE document_id = ANY($2)
                             ORDER BY distance, chunk_id LIMIT $3"
                    ),
                    &[&query, &ids, &(n as i64)],
                )?;
                rows.iter().map(cosine_row).collect()
            }
        }
    }

    /// One HNSW walk for `n` candidates, kept to `only` documents when given.
    fn walk(
        &self,
        client: &mut Client,
        query: &Vector,
        n: usize,
        only: Option<&[i64]>,
    ) -> Result<Vec<(i64, f32)>> {
        let types = &self.types;
        let mut tx = client.transaction()?;
        // The walk returns at most `ef_search` rows: it must be at least the rows wanted.
        tx.batch_execute(&format!(
            "SET LOCAL hnsw.ef_search = {}",
            (self.ef_search as usize).max(n).min(1000)
        ))?;
        let rows = tx.query(
            &format!(
                "SELECT chunk_id, embedding OPERATOR({types}.<=>) $1 AS distance, document_id
                     FROM section_vectors
                     ORDER BY embedding OPERATOR({types}.<=>) $1 LIMIT $2"
            ),
            &[query, &(n as i64)],
        )?;
        tx.commit()?;
        let only: Option<std::collections::HashSet<i64>> =
            only.map(|ids| ids.iter().copied().collect());
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let document: i64 = row.try_get(2)?;
            if only.as_ref().is_none_or(|ids| ids.contains(&document)) {
                out.push(cosine_row(row)?);
            }
        }
        // The walk's order among equal distances is its own: ties go by chunk id, as in the
        // in-memory scan and the exact query.
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(out)
    }

    /// The vectors of `chunks` and of their pieces (in order), as the records hold them;
    /// chunks no longer there are missing from the answer.
    pub fn vectors(&self, chunks: &[i64]) -> Result<HashMap<i64, SectionVectors>> {
        let mut out: HashMap<i64, SectionVectors> = HashMap::new();
        if chunks.is_empty() {
            return Ok(out);
        }
        let mut client = self.client()?;
        for row in client.query(
            "SELECT c.id, v.vector FROM chunks c JOIN vectors v ON v.key = c.vector_key
                 WHERE c.id = ANY($1)",
            &[&chunks],
        )? {
            let id: i64 = row.try_get(0)?;
            out.insert(id, (blob_to_vector(row.try_get(1)?), Vec::new()));
        }
        for row in client.query(
            "SELECT p.chunk_id, v.vector FROM pieces p JOIN vectors v ON v.key = p.vector_key
                 WHERE p.chunk_id = ANY($1) ORDER BY p.chunk_id, p.ord",
            &[&chunks],
        )? {
            let id: i64 = row.try_get(0)?;
            if let Some((_, pieces)) = out.get_mut(&id) {
                pieces.push(blob_to_vector(row.try_get(1)?));
            }
        }
        Ok(out)
    }

    /// The connection, opened again when the database went away and came back.
    fn client(&self) -> Result<std::sync::MutexGuard<'_, Client>> {
        // A search that panicked while holding it left a connection that is still usable.
        let mut client = self
            .client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if client.is_closed() {
            *client = super::connect_in(&self.url, &self.schema)?;
        }
        Ok(client)
    }
}

/// `(chunk id, cosine)` from a row of `(chunk_id, cosine distance)`.
fn cosine_row(row: &postgres::Row) -> Result<(i64, f32)> {
    let distance: f64 = row.try_get(1)?;
    Ok((row.try_get(0)?, (1.0 - distance) as f32))
}

/// Makes sure the extension, `section_vectors` for `dim` and its HNSW index exist, filling
/// the table from the records when it is new. Returns the quoted schema of pgvector's types.
fn enable(client: &mut Client, url: &str, schema: &str, dim: usize) -> Result<String> {
    let mut tx = client.transaction()?;
    // Servers enabling it together take turns; the second finds it done.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext($1))",
        &[&format!("ragdown pgvector {schema}")],
    )?;
    let types = match extension_schema(&mut tx)? {
        Some(types) => types,
        None => {
            tx.batch_execute("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public")
                .map_err(|e| IndexError::Database {
                    url: redact_url(url),
                    reason: format!(
                        "RAGDOWN_DENSE_POOL=pgvector needs the pgvector extension, which \
                         could not be created ({e}); install pgvector on the database server \
                         and run `CREATE EXTENSION vector` as its owner, or unset \
                         RAGDOWN_DENSE_POOL to keep vectors in memory"
                    ),
                })?;
            extension_schema(&mut tx)?.ok_or_else(|| IndexError::Database {
                url: redact_url(url),
                reason: "the pgvector extension was created but cannot be found".into(),
            })?
        }
    };
    let current: Option<i32> = tx
        .query_opt(
            "SELECT a.atttypmod FROM pg_attribute a
                 WHERE a.attrelid = to_regclass('section_vectors') AND a.attname = 'embedding'",
            &[],
        )?
        .map(|r| r.try_get(0))
        .transpose()?;
    if current == Some(dim as i32) {
        tx.commit()?;
        return Ok(types);
    }
    if current.is_some() {
        tracing::info!("rebuilding the pgvector index of {schema} for dimension {dim}");
        tx.batch_execute("DROP TABLE section_vectors")?;
    }
    // Writers wait until the filled table is committed, then keep it in step themselves
    // (they look for it after inserting their chunks): no chunk is left out of it.
    tx.batch_execute(&format!(
        "LOCK TABLE chunks IN SHARE MODE;
         CREATE TABLE section_vectors(
             chunk_id BIGINT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
             document_id BIGINT NOT NULL,
             embedding {types}.vector({dim}) NOT NULL
         );
         CREATE INDEX section_vectors_document ON section_vectors(document_id);"
    ))?;
    let mut after = 0_i64;
    let mut filled = 0_usize;
    loop {
        let rows = tx.query(
            "SELECT c.id, c.document_id, v.vector FROM chunks c
                 JOIN vectors v ON v.key = c.vector_key
                 WHERE c.id > $1 ORDER BY c.id LIMIT $2",
            &[&after, &FILL_BATCH],
        )?;
        let Some(last) = rows.last() else { break };
        after = last.try_get(0)?;
        let mut ids = Vec::with_capacity(rows.len());
        let mut documents = Vec::with_capacity(rows.len());
        let mut vectors = Vec::with_capacity(rows.len());
        for row in &rows {
            let vector = blob_to_vector(row.try_get(2)?);
            // A vector of another length (an interrupted rebuild) is left out, not an error.
            if vector.len() == dim {
                ids.push(row.try_get::<_, i64>(0)?);
                documents.push(row.try_get::<_, i64>(1)?);
                vectors.push(Vector::from(vector));
            }
        }
        filled += ids.len();
        tx.execute(
            &format!(
                "INSERT INTO section_vectors(chunk_id, document_id, embedding)
                     SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::{types}.vector[])"
            ),
            &[&ids, &documents, &vectors],
        )?;
    }
    // Built after the rows are in (faster than growing the graph row by row), with room to
    // build it in memory: at least 1 GB (a server configured for more keeps its own).
    tx.batch_execute(&format!(
        "SELECT set_config('maintenance_work_mem', '1GB', true)
             WHERE pg_size_bytes(current_setting('maintenance_work_mem')) < 1073741824;
         CREATE INDEX section_vectors_hnsw ON section_vectors
             USING hnsw (embedding {types}.vector_cosine_ops);"
    ))?;
    tx.commit()?;
    tracing::info!("built the pgvector HNSW index of {schema}: {filled} sections");
    Ok(types)
}

/// The quoted schema pgvector is installed in, when it is.
fn extension_schema(tx: &mut Transaction<'_>) -> Result<Option<String>> {
    extension_schema_where(tx, "true")
}

/// [`extension_schema`], when `condition` (SQL) also holds.
fn extension_schema_where(tx: &mut Transaction<'_>, condition: &str) -> Result<Option<String>> {
    Ok(tx
        .query_opt(
            &format!(
                "SELECT quote_ident(n.nspname) FROM pg_extension e
                     JOIN pg_namespace n ON n.oid = e.extnamespace
                     WHERE e.extname = 'vector' AND {condition}"
            ),
            &[],
        )?
        .map(|r| r.try_get(0))
        .transpose()?)
}

/// Adds the new chunks of document `document_id` to `section_vectors` when the folder has one
/// (called inside the transaction that replaced them; their old rows went by cascade).
pub(crate) fn index_document(tx: &mut Transaction<'_>, document_id: i64) -> Result<()> {
    // One catalog lookup per write: another server may have made the table since this one
    // opened its records.
    let Some(types) = extension_schema_where(tx, "to_regclass('section_vectors') IS NOT NULL")?
    else {
        return Ok(());
    };
    let rows = tx.query(
        "SELECT c.id, v.vector FROM chunks c JOIN vectors v ON v.key = c.vector_key
             WHERE c.document_id = $1",
        &[&document_id],
    )?;
    let mut ids = Vec::with_capacity(rows.len());
    let mut vectors = Vec::with_capacity(rows.len());
    for row in &rows {
        ids.push(row.try_get::<_, i64>(0)?);
        vectors.push(Vector::from(blob_to_vector(row.try_get(1)?)));
    }
    // A vector of another length than the column's fails the write (and its transaction)
    // loudly rather than leaving the pgvector index behind the records.
    tx.execute(
        &format!(
            "INSERT INTO section_vectors(chunk_id, document_id, embedding)
                 SELECT id, $1, embedding FROM unnest($2::bigint[], $3::{types}.vector[])
                     AS t(id, embedding)"
        ),
        &[&document_id, &ids, &vectors],
    )?;
    Ok(())
}
