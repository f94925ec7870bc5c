//! The records in PostgreSQL, for several servers sharing one knowledge base: the same tables
//! as SQLite's, one schema per folder (so folders stay isolated and a folder's records go
//! with one `DROP SCHEMA`), created and upgraded by numbered migrations. Vectors are stored as
//! the same little-endian `bytea` blobs as in SQLite: ranking stays in each process's memory,
//! so the database never computes on them — except the dense pool of a folder too large for
//! memory, from a pgvector index derived from these blobs (`pgvector.rs`).
//!
//! Knows nothing of which server is primary: that is coordination, not records.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls, Row, Transaction};

use super::{
    KeyedRows, NewChunk, RecordStore, StoredChunk, Sweep, attach_pieces, blob_to_vector, json_list,
    list_json, vector_to_blob,
};
use crate::{ChunkRecord, DocumentRecord, IndexError, Result};

/// The schema's migrations, oldest first; the schema's version is how many have run. A
/// migration is never edited once released: a change of shape is a new entry.
const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents(
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size BIGINT NOT NULL,
    mtime_ns BIGINT NOT NULL,
    hash TEXT NOT NULL,
    title TEXT NOT NULL,
    tags TEXT NOT NULL,
    aliases TEXT NOT NULL,
    description TEXT,
    supersedes TEXT NOT NULL,
    created_by TEXT,
    session TEXT,
    links TEXT NOT NULL,
    total_lines BIGINT NOT NULL
);
CREATE TABLE chunks(
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id BIGINT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ord BIGINT NOT NULL,
    line_start BIGINT NOT NULL,
    line_end BIGINT NOT NULL,
    heading TEXT NOT NULL,
    breadcrumb TEXT NOT NULL,
    text TEXT NOT NULL,
    vector_key BYTEA NOT NULL
);
CREATE INDEX chunks_document ON chunks(document_id);
CREATE INDEX chunks_vector ON chunks(vector_key);
CREATE TABLE pieces(
    chunk_id BIGINT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    ord BIGINT NOT NULL,
    vector_key BYTEA NOT NULL,
    PRIMARY KEY(chunk_id, ord)
);
CREATE INDEX pieces_vector ON pieces(vector_key);
CREATE TABLE vectors(key BYTEA PRIMARY KEY, vector BYTEA NOT NULL);
CREATE TABLE journal(generation BIGINT PRIMARY KEY, path TEXT NOT NULL);
",
    "
CREATE TABLE requests(
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    paths TEXT,
    taken BOOLEAN NOT NULL DEFAULT false,
    answer TEXT,
    asked_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
",
];

/// Journal entries kept behind the newest generation when it is pruned: every server keeps its
/// own BM25 index caught up from the journal, so pruning to one server's commit would make
/// the others rebuild theirs. A server further behind than this rebuilds.
const JOURNAL_KEEP: u64 = 10_000;

/// How long connecting may take before the server is called unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The advisory lock that orders a folder's schema being made against folders being renamed
/// or deleted (by any server of the database): opening takes it shared, a rename or delete
/// exclusively while it moves both the schema and the directory. So a server that sees a
/// renamed directory opens the schema already renamed, and one still serving the old name
/// never makes an empty schema under it again.
const FOLDERS_LOCK: &str = "ragdown: folders";

/// Whether opening records may make their schema.
#[derive(Debug, Clone, Copy)]
pub enum Creating<'a> {
    /// Made when missing (a docs dir indexed by the CLI, `ragdown migrate`).
    Always,
    /// Made when missing only while the folder's directory exists: a folder renamed or deleted
    /// by another server meanwhile is not brought back as empty records.
    WhileDirExists(&'a Path),
    /// Never made: the records must exist (reading them, coordinating over them).
    Never,
}

/// One folder's records in its schema of a PostgreSQL database.
pub struct PostgresStore {
    client: Client,
    url: String,
    schema: String,
    /// The primary's epoch its writes are fenced at (see `database_lock`): a write is refused
    /// once another server has become the primary. `None` writes unfenced (the CLI alone, tests).
    epoch: Option<i64>,
    /// Vector keys of the chunks and pieces replaced or removed since the last collection.
    released: HashSet<[u8; 32]>,
}

impl PostgresStore {
    /// Connects to `url` (a `postgres://` URL or libpq key/value string) and opens the records
    /// in `schema`, creating it or running the migrations it lacks; refuses a schema written
    /// by a newer ragdown.
    pub fn open(url: &str, schema: &str) -> Result<Self> {
        Self::open_with(url, schema, Creating::Always)
    }

    /// Opens the records in `schema`, making it only as `creating` allows (an error naming
    /// the schema when it may not and it is missing).
    pub fn open_with(url: &str, schema: &str, creating: Creating<'_>) -> Result<Self> {
        check_schema_name(schema)?;
        let client = connect(url)?;
        let mut store = Self {
            client,
            url: url.to_string(),
            schema: schema.to_string(),
            epoch: None,
            released: HashSet::new(),
        };
        store.migrate(creating)?;
        Ok(store)
    }

    /// The connection, its search path on this schema, for coordination's own statements.
    pub fn into_client(self) -> Client {
        self.client
    }

    /// The connection, opened again when the database went away and came back: searches
    /// answer from memory meanwhile, and the next statement after its return succeeds.
    fn client(&mut self) -> Result<&mut Client> {
        if self.client.is_closed() {
            let mut client = connect(&self.url)?;
            client.batch_execute(&format!("SET search_path TO \"{}\"", self.schema))?;
            tracing::info!(
                "reconnected to PostgreSQL at {} (schema {})",
                redact_url(&self.url),
                self.schema
            );
            self.client = client;
        }
        Ok(&mut self.client)
    }

    /// The schema this store's records are in.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// Creates the schema (as `creating` allows) and runs the migrations it lacks, under a
    /// transaction-scoped advisory lock so servers starting together do not race each other,
    /// and under [`FOLDERS_LOCK`] shared so no folder is renamed or deleted meanwhile.
    fn migrate(&mut self, creating: Creating<'_>) -> Result<()> {
        let schema = self.schema.clone();
        let mut tx = self.client.transaction()?;
        tx.execute(
            "SELECT pg_advisory_xact_lock_shared(hashtext($1))",
            &[&FOLDERS_LOCK],
        )?;
        tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&schema])?;
        if !schema_exists(&mut tx, &schema)? {
            let allowed = match creating {
                Creating::Always => true,
                Creating::WhileDirExists(dir) => dir.is_dir(),
                Creating::Never => false,
            };
            if !allowed {
                return Err(IndexError::Schema(format!(
                    "there are no records in PostgreSQL schema {schema}: its folder was \
                     renamed or deleted"
                )));
            }
        }
        tx.batch_execute(&format!(
            "CREATE SCHEMA IF NOT EXISTS \"{schema}\";
             SET LOCAL search_path TO \"{schema}\";
             CREATE TABLE IF NOT EXISTS schema_version(version BIGINT NOT NULL);"
        ))?;
        let have: i64 = tx
            .query_opt("SELECT max(version) FROM schema_version", &[])?
            .and_then(|r| r.get::<_, Option<i64>>(0))
            .unwrap_or(0);
        let known = MIGRATIONS.len() as i64;
        if have > known {
            return Err(IndexError::Schema(format!(
                "the records in PostgreSQL schema {schema} are at version {have}, written by a \
                 newer ragdown (this one knows up to {known}): upgrade ragdown, or give this \
                 one a schema of its own"
            )));
        }
        for (at, migration) in MIGRATIONS.iter().enumerate().skip(have as usize) {
            tx.batch_execute(migration)?;
            tx.execute(
                "INSERT INTO schema_version(version) VALUES ($1)",
                &[&(at as i64 + 1)],
            )?;
        }
        tx.commit()?;
        // Session-wide from here on: every statement of this connection reads this schema.
        self.client
            .batch_execute(&format!("SET search_path TO \"{schema}\""))?;
        Ok(())
    }

    fn document_chunks(&mut self, document_id: i64) -> Result<Vec<StoredChunk>> {
        let mut chunks = self
            .client()?
            .query(
                "SELECT c.id, c.document_id, c.ord, c.line_start, c.line_end, c.heading,
                        c.breadcrumb, c.text, v.vector
                     FROM chunks c JOIN vectors v ON v.key = c.vector_key
                     WHERE c.document_id = $1
                     ORDER BY c.id",
                &[&document_id],
            )?
            .iter()
            .map(|r| {
                Ok(StoredChunk {
                    record: chunk_record(r)?,
                    vector: blob_to_vector(r.try_get::<_, &[u8]>(8)?),
                    pieces: Vec::new(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let pieces = self
            .client()?
            .query(
                "SELECT p.chunk_id, v.vector
                     FROM pieces p JOIN chunks c ON c.id = p.chunk_id
                         JOIN vectors v ON v.key = p.vector_key
                     WHERE c.document_id = $1
                     ORDER BY p.chunk_id, p.ord",
                &[&document_id],
            )?
            .iter()
            .map(|r| {
                Ok((
                    r.try_get::<_, i64>(0)?,
                    Some(blob_to_vector(r.try_get::<_, &[u8]>(1)?)),
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        attach_pieces(&mut chunks, pieces.into_iter());
        Ok(chunks)
    }
}

impl RecordStore for PostgresStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn fence(&mut self, epoch: u64) {
        self.epoch = Some(epoch as i64);
    }

    fn meta(&mut self, key: &str) -> Result<Option<String>> {
        Ok(self
            .client()?
            .query_opt("SELECT value FROM meta WHERE key = $1", &[&key])?
            .map(|r| r.try_get(0))
            .transpose()?)
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        set_meta(self.client()?, key, value)
    }

    fn clear(&mut self, keep_vectors: bool) -> Result<()> {
        let vectors = if keep_vectors { "" } else { ", vectors" };
        let mut tx = self.client()?.transaction()?;
        // CASCADE empties the pgvector index's rows too (`pgvector.rs`); under another
        // embedder its table, typed for the old dimension, goes: a server reading from it
        // makes it again for the new one.
        let pool = if keep_vectors {
            ""
        } else {
            "DROP TABLE IF EXISTS section_vectors;"
        };
        tx.batch_execute(&format!(
            "{pool}
             TRUNCATE pieces, chunks, documents, journal{vectors} CASCADE;
             DELETE FROM meta WHERE key = 'journal_floor';"
        ))?;
        tx.commit()?;
        Ok(())
    }

    fn documents(&mut self) -> Result<Vec<DocumentRecord>> {
        self.client()?
            .query(
                "SELECT id, path, size, mtime_ns, hash, title, tags, aliases, description,
                        supersedes, created_by, session, links, total_lines
                     FROM documents",
                &[],
            )?
            .iter()
            .map(|r| {
                let json = |i: usize| r.try_get::<_, &str>(i);
                Ok(DocumentRecord {
                    id: r.try_get(0)?,
                    path: r.try_get(1)?,
                    size: r.try_get::<_, i64>(2)? as u64,
                    mtime_ns: r.try_get(3)?,
                    hash: r.try_get(4)?,
                    title: r.try_get(5)?,
                    tags: json_list(json(6)?),
                    aliases: json_list(json(7)?),
                    description: r.try_get(8)?,
                    supersedes: json_list(json(9)?),
                    created_by: r.try_get(10)?,
                    session: r.try_get(11)?,
                    links: json_list(json(12)?),
                    total_lines: r.try_get::<_, i64>(13)? as u32,
                })
            })
            .collect()
    }

    fn chunks(&mut self, document_id: Option<i64>) -> Result<Vec<StoredChunk>> {
        match document_id {
            Some(id) => self.document_chunks(id),
            None => super::stored_chunks(self),
        }
    }

    fn scan_rows(&mut self, vector: &mut dyn FnMut([u8; 32], &[u8])) -> Result<KeyedRows> {
        // Streamed: the cache is the bulk of the records, so it is never held twice.
        {
            let mut rows = self
                .client()?
                .query_raw("SELECT key, vector FROM vectors", no_params())?;
            while let Some(row) = rows.next()? {
                if let Some(key) = super::key_of(row.try_get::<_, &[u8]>(0)?) {
                    vector(key, row.try_get::<_, &[u8]>(1)?);
                }
            }
        }
        let chunks = self
            .client()?
            .query(
                "SELECT id, document_id, ord, line_start, line_end, heading, breadcrumb, text,
                        vector_key
                     FROM chunks ORDER BY id",
                &[],
            )?
            .iter()
            .map(|r| Ok((chunk_record(r)?, r.try_get::<_, Vec<u8>>(8)?)))
            .collect::<Result<Vec<_>>>()?;
        let pieces = self
            .client()?
            .query(
                "SELECT chunk_id, vector_key FROM pieces ORDER BY chunk_id, ord",
                &[],
            )?
            .iter()
            .map(|r| Ok((r.try_get::<_, i64>(0)?, r.try_get::<_, Vec<u8>>(1)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok((chunks, pieces))
    }

    fn scan_chunk_records(&mut self, each: &mut dyn FnMut(ChunkRecord)) -> Result<()> {
        let mut rows = self.client()?.query_raw(
            "SELECT id, document_id, ord, line_start, line_end, heading, breadcrumb, text
                 FROM chunks ORDER BY id",
            no_params(),
        )?;
        while let Some(row) = rows.next()? {
            each(chunk_record(&row)?);
        }
        Ok(())
    }

    fn chunk_counts(&mut self) -> Result<HashMap<i64, usize>> {
        let mut counts = HashMap::new();
        for row in self.client()?.query(
            "SELECT document_id, COUNT(*) FROM chunks GROUP BY document_id",
            &[],
        )? {
            counts.insert(row.try_get(0)?, row.try_get::<_, i64>(1)? as usize);
        }
        Ok(counts)
    }

    fn cached_vectors(&mut self, keys: &[[u8; 32]]) -> Result<HashMap<[u8; 32], Vec<f32>>> {
        let keys: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let mut out = HashMap::new();
        for row in self.client()?.query(
            "SELECT key, vector FROM vectors WHERE key = ANY($1)",
            &[&keys],
        )? {
            if let Some(key) = super::key_of(row.try_get::<_, &[u8]>(0)?) {
                out.insert(key, blob_to_vector(row.try_get::<_, &[u8]>(1)?));
            }
        }
        Ok(out)
    }

    fn vectors(&mut self) -> Result<Vec<([u8; 32], Vec<f32>)>> {
        let mut out = Vec::new();
        for row in self
            .client()?
            .query("SELECT key, vector FROM vectors", &[])?
        {
            if let Some(key) = super::key_of(row.try_get::<_, &[u8]>(0)?) {
                out.push((key, blob_to_vector(row.try_get::<_, &[u8]>(1)?)));
            }
        }
        Ok(out)
    }

    fn put_vectors(&mut self, entries: &[([u8; 32], Vec<f32>)]) -> Result<()> {
        let keys: Vec<&[u8]> = entries.iter().map(|(k, _)| &k[..]).collect();
        let blobs: Vec<Vec<u8>> = entries.iter().map(|(_, v)| vector_to_blob(v)).collect();
        // One statement for the batch; a key another server cached meanwhile keeps its vector
        // (the same text under the same embedder: the same vector).
        self.client()?.execute(
            "INSERT INTO vectors(key, vector) SELECT * FROM unnest($1::bytea[], $2::bytea[])
                 ON CONFLICT (key) DO NOTHING",
            &[&keys, &blobs],
        )?;
        Ok(())
    }

    fn replace_document(
        &mut self,
        doc: &DocumentRecord,
        chunks: &[NewChunk<'_>],
    ) -> Result<(i64, Vec<i64>, u64)> {
        let epoch = self.epoch;
        let mut tx = self.client()?.transaction()?;
        let generation = next_generation(&mut tx, &doc.path, epoch)?;
        let id: i64 = tx
            .query_one(
                "INSERT INTO documents(path, size, mtime_ns, hash, title, tags, aliases,
                         description, supersedes, created_by, session, links, total_lines)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
                     ON CONFLICT (path) DO UPDATE SET size = excluded.size,
                         mtime_ns = excluded.mtime_ns, hash = excluded.hash,
                         title = excluded.title, tags = excluded.tags,
                         aliases = excluded.aliases, description = excluded.description,
                         supersedes = excluded.supersedes, created_by = excluded.created_by,
                         session = excluded.session, links = excluded.links,
                         total_lines = excluded.total_lines
                     RETURNING id",
                &[
                    &doc.path,
                    &(doc.size as i64),
                    &doc.mtime_ns,
                    &doc.hash,
                    &doc.title,
                    &list_json(&doc.tags),
                    &list_json(&doc.aliases),
                    &doc.description,
                    &list_json(&doc.supersedes),
                    &doc.created_by,
                    &doc.session,
                    &list_json(&doc.links),
                    &i64::from(doc.total_lines),
                ],
            )?
            .try_get(0)?;
        let released = used_keys(&mut tx, &doc.path)?;
        tx.execute("DELETE FROM chunks WHERE document_id = $1", &[&id])?;
        // One statement for the chunks and one for their pieces, whatever their number: a
        // round trip per row cost ~1 ms each (a 1,000-section document: over a second).
        let column = |f: &dyn Fn(&NewChunk<'_>) -> i64| chunks.iter().map(f).collect::<Vec<i64>>();
        let ords: Vec<i64> = (0..chunks.len() as i64).collect();
        let starts = column(&|c| c.chunk.line_start as i64);
        let ends = column(&|c| c.chunk.line_end as i64);
        let headings: Vec<&str> = chunks.iter().map(|c| c.chunk.heading.as_str()).collect();
        let breadcrumbs: Vec<&str> = chunks.iter().map(|c| c.chunk.breadcrumb.as_str()).collect();
        let texts: Vec<&str> = chunks.iter().map(|c| c.chunk.text.as_str()).collect();
        let keys: Vec<&[u8]> = chunks.iter().map(|c| &c.vector_key[..]).collect();
        let mut by_ord: Vec<(i64, i64)> = tx
            .query(
                "INSERT INTO chunks(document_id, ord, line_start, line_end, heading, breadcrumb,
                         text, vector_key)
                     SELECT $1, t.* FROM unnest($2::bigint[], $3::bigint[], $4::bigint[],
                         $5::text[], $6::text[], $7::text[], $8::bytea[])
                         AS t(ord, line_start, line_end, heading, breadcrumb, text, vector_key)
                     ORDER BY t.ord
                     RETURNING ord, id",
                &[
                    &id,
                    &ords,
                    &starts,
                    &ends,
                    &headings,
                    &breadcrumbs,
                    &texts,
                    &keys,
                ],
            )?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_>>()?;
        by_ord.sort_unstable();
        let ids: Vec<i64> = by_ord.into_iter().map(|(_, id)| id).collect();
        let (mut piece_chunks, mut piece_ords, mut piece_keys) =
            (Vec::new(), Vec::new(), Vec::new());
        for (chunk_id, c) in ids.iter().zip(chunks) {
            for (piece, key) in c.piece_keys.iter().enumerate() {
                piece_chunks.push(*chunk_id);
                piece_ords.push(piece as i64);
                piece_keys.push(&key[..]);
            }
        }
        if !piece_chunks.is_empty() {
            tx.execute(
                "INSERT INTO pieces(chunk_id, ord, vector_key)
                     SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[])",
                &[&piece_chunks, &piece_ords, &piece_keys],
            )?;
        }
        super::pgvector::index_document(&mut tx, id)?;
        tx.commit()?;
        self.released.extend(released);
        Ok((id, ids, generation))
    }

    fn touch_document(&mut self, id: i64, size: u64, mtime_ns: i64) -> Result<()> {
        self.client()?.execute(
            "UPDATE documents SET size = $2, mtime_ns = $3 WHERE id = $1",
            &[&id, &(size as i64), &mtime_ns],
        )?;
        Ok(())
    }

    fn remove_document(&mut self, path: &str) -> Result<u64> {
        let epoch = self.epoch;
        let mut tx = self.client()?.transaction()?;
        let generation = next_generation(&mut tx, path, epoch)?;
        let released = used_keys(&mut tx, path)?;
        tx.execute("DELETE FROM documents WHERE path = $1", &[&path])?;
        tx.commit()?;
        self.released.extend(released);
        Ok(generation)
    }

    fn journal_since(&mut self, since: u64) -> Result<Option<Vec<String>>> {
        if since < self.journal_floor()? {
            return Ok(None);
        }
        let rows = self.client()?.query(
            "SELECT DISTINCT path FROM journal WHERE generation > $1 ORDER BY path",
            &[&(since as i64)],
        )?;
        Ok(Some(
            rows.iter()
                .map(|r| r.try_get(0).map_err(IndexError::from))
                .collect::<Result<_>>()?,
        ))
    }

    /// Keeps the last [`JOURNAL_KEEP`] generations for the other servers' BM25 indexes.
    fn prune_journal(&mut self, upto: u64) -> Result<()> {
        let Some(floor) = upto.checked_sub(JOURNAL_KEEP).filter(|f| *f > 0) else {
            return Ok(());
        };
        let mut tx = self.client()?.transaction()?;
        tx.execute(
            "DELETE FROM journal WHERE generation <= $1",
            &[&(floor as i64)],
        )?;
        set_meta(&mut tx, "journal_floor", &floor.to_string())?;
        tx.commit()?;
        Ok(())
    }

    fn collect_unused_vectors(&mut self, sweep: Sweep) -> Result<usize> {
        let released: Vec<Vec<u8>> = std::mem::take(&mut self.released)
            .into_iter()
            .map(|key| key.to_vec())
            .collect();
        let dropped = match sweep {
            Sweep::All => self.client()?.execute(
                "DELETE FROM vectors v WHERE NOT EXISTS
                         (SELECT 1 FROM chunks c WHERE c.vector_key = v.key)
                     AND NOT EXISTS (SELECT 1 FROM pieces p WHERE p.vector_key = v.key)",
                &[],
            )?,
            Sweep::Released if released.is_empty() => 0,
            Sweep::Released => self.client()?.execute(
                "DELETE FROM vectors v WHERE v.key = ANY($1)
                     AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.vector_key = v.key)
                     AND NOT EXISTS (SELECT 1 FROM pieces p WHERE p.vector_key = v.key)",
                &[&released],
            )?,
        };
        Ok(dropped as usize)
    }

    fn document_id(&mut self, path: &str) -> Result<Option<i64>> {
        Ok(self
            .client()?
            .query_opt("SELECT id FROM documents WHERE path = $1", &[&path])?
            .map(|r| r.try_get(0))
            .transpose()?)
    }
}

/// Renames a folder's schema (its records follow a renamed folder; nothing is re-embedded)
/// and runs `move_files` (the directory's rename) inside the same exclusive hold of
/// [`FOLDERS_LOCK`]: no server opens either name between the two moves. The schema's rename
/// is undone when `move_files` fails. A schema already at `to` is replaced: it can only be the
/// stale records of an old folder.
pub fn rename_schema<E>(
    url: &str,
    from: &str,
    to: &str,
    move_files: impl FnOnce() -> std::result::Result<(), E>,
) -> Result<std::result::Result<(), E>> {
    check_schema_name(from)?;
    check_schema_name(to)?;
    holding_folders(url, |tx| {
        if schema_exists(tx, from)? && from != to {
            tx.batch_execute(&format!(
                "DROP SCHEMA IF EXISTS \"{to}\" CASCADE; \
                 ALTER SCHEMA \"{from}\" RENAME TO \"{to}\";"
            ))?;
        }
        Ok(move_files())
    })
}

/// Runs `remove_files` (the directory's delete) and drops a folder's schema with every record
/// in it, inside one exclusive hold of [`FOLDERS_LOCK`]; the schema stays when `remove_files`
/// fails.
pub fn drop_schema<E>(
    url: &str,
    schema: &str,
    remove_files: impl FnOnce() -> std::result::Result<(), E>,
) -> Result<std::result::Result<(), E>> {
    check_schema_name(schema)?;
    holding_folders(url, |tx| {
        let removed = remove_files();
        if removed.is_ok() {
            tx.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))?;
        }
        Ok(removed)
    })
}

/// Runs `change` in a transaction holding [`FOLDERS_LOCK`] exclusively, committed only when
/// the files' part of it succeeded.
fn holding_folders<E>(
    url: &str,
    change: impl FnOnce(&mut Transaction<'_>) -> Result<std::result::Result<(), E>>,
) -> Result<std::result::Result<(), E>> {
    let mut client = connect(url)?;
    let mut tx = client.transaction()?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext($1))",
        &[&FOLDERS_LOCK],
    )?;
    let outcome = change(&mut tx)?;
    if outcome.is_ok() {
        tx.commit()?;
    }
    Ok(outcome)
}

fn schema_exists(tx: &mut Transaction<'_>, schema: &str) -> Result<bool> {
    Ok(tx
        .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])?
        .is_some())
}

/// A connection whose statements read and write `schema`, created when absent.
pub(crate) fn connect_in(url: &str, schema: &str) -> Result<Client> {
    check_schema_name(schema)?;
    let mut client = connect(url)?;
    client.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS \"{schema}\"; SET search_path TO \"{schema}\""
    ))?;
    Ok(client)
}

/// A connection to `url`, or an error naming it without its password.
fn connect(url: &str) -> Result<Client> {
    let mut config: postgres::Config = url.parse().map_err(|e| IndexError::Database {
        url: redact_url(url),
        reason: format!("not a PostgreSQL connection string ({e})"),
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    config.application_name("ragdown");
    config.connect(NoTls).map_err(|e| IndexError::Database {
        url: redact_url(url),
        reason: format!("cannot connect ({e}); check that the server runs and accepts it"),
    })
}

/// A chunk's record from the first eight columns of `row`.
fn chunk_record(r: &Row) -> Result<ChunkRecord> {
    let number = |i: usize| -> Result<u32> { Ok(r.try_get::<_, i64>(i)? as u32) };
    Ok(ChunkRecord {
        id: r.try_get(0)?,
        document_id: r.try_get(1)?,
        ord: number(2)?,
        line_start: number(3)?,
        line_end: number(4)?,
        heading: r.try_get(5)?,
        breadcrumb: r.try_get(6)?,
        text: r.try_get(7)?,
    })
}

fn no_params() -> std::iter::Empty<&'static (dyn postgres::types::ToSql + Sync)> {
    std::iter::empty()
}

/// The vector keys the chunks and pieces of the document at `path` use (read before they are
/// deleted); none when there is no such document.
fn used_keys(tx: &mut Transaction<'_>, path: &str) -> Result<Vec<[u8; 32]>> {
    let rows = tx.query(
        "SELECT c.vector_key FROM chunks c JOIN documents d ON d.id = c.document_id
             WHERE d.path = $1
         UNION SELECT p.vector_key FROM pieces p JOIN chunks c ON c.id = p.chunk_id
             JOIN documents d ON d.id = c.document_id WHERE d.path = $1",
        &[&path],
    )?;
    let mut keys = Vec::with_capacity(rows.len());
    for row in rows {
        let key: Vec<u8> = row.try_get(0)?;
        keys.extend(super::key_of(&key));
    }
    Ok(keys)
}

fn set_meta(client: &mut impl postgres::GenericClient, key: &str, value: &str) -> Result<()> {
    client.execute(
        "INSERT INTO meta(key, value) VALUES ($1, $2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        &[&key, &value],
    )?;
    Ok(())
}

/// Bumps the generation and journals `path` under it, inside the caller's transaction. The
/// update locks the generation row, so concurrent writers (several servers) take generations
/// in commit order.
fn next_generation(tx: &mut Transaction<'_>, path: &str, epoch: Option<i64>) -> Result<u64> {
    if let Some(mine) = epoch {
        // Shares the epoch row with other writers; a new primary's bump waits for this write
        // to commit, and every write after it sees the new epoch.
        let current: Option<i64> = tx
            .query_opt(
                "SELECT value::bigint FROM meta WHERE key = 'epoch' FOR SHARE",
                &[],
            )?
            .map(|r| r.try_get(0))
            .transpose()?;
        if current != Some(mine) {
            return Err(IndexError::Primary(format!(
                "another server became the primary of these records (epoch {}, this one \
                 wrote at {mine}): this server no longer writes them",
                current.unwrap_or(0)
            )));
        }
    }
    let next = bump_counter(tx, "generation")?;
    tx.execute(
        "INSERT INTO journal(generation, path) VALUES ($1, $2)",
        &[&next, &path],
    )?;
    Ok(next as u64)
}

/// Adds one to the meta counter `key` (1 when absent) inside the caller's transaction and
/// returns it; the row stays locked until the transaction ends.
pub(crate) fn bump_counter(tx: &mut Transaction<'_>, key: &str) -> Result<i64> {
    Ok(tx
        .query_one(
            "INSERT INTO meta(key, value) VALUES ($1, '1')
                 ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text
                 RETURNING value::bigint",
            &[&key],
        )?
        .try_get(0)?)
}

/// Schema names are spliced into SQL (identifiers cannot be bound), so only plain ones pass.
fn check_schema_name(schema: &str) -> Result<()> {
    let plain = !schema.is_empty()
        && schema.len() <= 63
        && schema
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !schema.starts_with("pg_");
    if plain {
        Ok(())
    } else {
        Err(IndexError::Schema(format!(
            "{schema:?} is not a usable PostgreSQL schema name: it must be 1-63 lowercase \
             letters, digits or _, not starting with pg_"
        )))
    }
}

/// The schema a folder's records live in: `<prefix>_` and the folder's name made into a plain
/// identifier, with a short hash of the name when that lost anything (two names never share
/// a schema).
pub fn folder_schema(prefix: &str, folder: &str) -> String {
    let plain: String = folder
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let lossless = plain == folder;
    let mut schema = format!("{prefix}_{plain}");
    if !lossless || schema.len() > 63 {
        let hash = blake3::hash(folder.as_bytes()).to_hex();
        schema.truncate(63 - 9);
        schema.push('_');
        schema.push_str(&hash[..8]);
    }
    schema
}

/// `url` with its password replaced by `***`, for messages and logs: both the URL form
/// (`postgres://user:secret@host/db`, `?password=secret`) and libpq's key/value form
/// (`password=secret`).
pub fn redact_url(url: &str) -> String {
    let mut out = url.to_string();
    if let Some(scheme_end) = out.find("://") {
        let authority_start = scheme_end + 3;
        let authority_end = out[authority_start..]
            .find(['/', '?'])
            .map_or(out.len(), |i| authority_start + i);
        if let Some(at) = out[authority_start..authority_end].rfind('@') {
            let userinfo = &out[authority_start..authority_start + at];
            if let Some(colon) = userinfo.find(':') {
                let from = authority_start + colon + 1;
                out.replace_range(from..authority_start + at, "***");
            }
        }
    }
    // `password=` as a query parameter or a key/value pair, up to the next separator.
    let mut search_from = 0;
    while let Some(found) = out[search_from..].find("password=") {
        let start = search_from + found + "password=".len();
        let end = out[start..]
            .find(['&', ' '])
            .map_or(out.len(), |i| start + i);
        out.replace_range(start..end, "***");
        search_from = start + 3;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schema left by an older ragdown (only the first migration run, records in it) is
    /// brought up to date in place: its records stay, and what later migrations add works.
    #[test]
    fn an_older_schema_is_migrated_in_place_keeping_its_records() {
        let Some(url) = super::super::test_db::url() else {
            return;
        };
        let schema = super::super::test_db::TestSchema::new(url.clone());
        let mut old = connect_in(&url, &schema.name).unwrap();
        old.batch_execute(MIGRATIONS[0]).unwrap();
        old.batch_execute(
            "CREATE TABLE schema_version(version BIGINT NOT NULL);
             INSERT INTO schema_version VALUES (1);
             INSERT INTO documents(path, size, mtime_ns, hash, title, tags, aliases,
                 supersedes, links, total_lines)
             VALUES ('kept.md', 1, 0, 'h', 'Kept', '[]', '[]', '[]', '[]', 1);",
        )
        .unwrap();
        drop(old);
        let mut store = PostgresStore::open(&url, &schema.name).unwrap();
        let documents = store.documents().unwrap();
        assert_eq!(documents.len(), 1);
        assert_eq!(documents[0].path, "kept.md");
        let version: i64 = store
            .client()
            .unwrap()
            .query_one("SELECT max(version) FROM schema_version", &[])
            .unwrap()
            .get(0);
        assert_eq!(version, MIGRATIONS.len() as i64);
        drop(store);
        let lock = crate::database_lock::DatabaseLock::try_take(&url, &schema.name, Path::new("."))
            .unwrap()
            .expect("the requests table of the second migration is there");
        assert_eq!(lock.epoch(), 1);
    }

    /// A folder's schema is made only while its directory exists (a server still serving a
    /// folder another one renamed or deleted never brings it back empty), and it moves or goes
    /// only together with its directory: when the directory's move fails, it stays.
    #[test]
    fn a_schema_is_made_for_an_existing_folder_and_moves_only_with_its_directory() {
        let Some(url) = super::super::test_db::url() else {
            return;
        };
        let (from, to) = (
            super::super::test_db::TestSchema::new(url.clone()),
            super::super::test_db::TestSchema::new(url.clone()),
        );
        let exists = |schema: &str| {
            let mut client = connect(&url).unwrap();
            let mut tx = client.transaction().unwrap();
            schema_exists(&mut tx, schema).unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("renamed-away");
        for creating in [Creating::Never, Creating::WhileDirExists(&gone)] {
            let refused = PostgresStore::open_with(&url, &from.name, creating).err();
            assert!(
                refused.is_some_and(|e| e.to_string().contains("renamed or deleted")),
                "{creating:?}"
            );
            assert!(!exists(&from.name), "{creating:?} made it");
        }
        let mut store =
            PostgresStore::open_with(&url, &from.name, Creating::WhileDirExists(dir.path()))
                .unwrap();
        store.set_meta("kept", "yes").unwrap();
        drop(store);

        let failed = rename_schema(&url, &from.name, &to.name, || Err("the disk said no")).unwrap();
        assert_eq!(failed, Err("the disk said no"));
        assert!(
            exists(&from.name) && !exists(&to.name),
            "the rename was undone"
        );
        rename_schema(&url, &from.name, &to.name, || Ok::<(), ()>(()))
            .unwrap()
            .unwrap();
        assert!(!exists(&from.name) && exists(&to.name));
        let mut moved = PostgresStore::open_with(&url, &to.name, Creating::Never).unwrap();
        assert_eq!(moved.meta("kept").unwrap().as_deref(), Some("yes"));
        drop(moved);

        let failed = drop_schema(&url, &to.name, || Err("busy")).unwrap();
        assert_eq!(failed, Err("busy"));
        assert!(exists(&to.name), "kept while its files are");
        drop_schema(&url, &to.name, || Ok::<(), ()>(()))
            .unwrap()
            .unwrap();
        assert!(!exists(&to.name));
    }

    #[test]
    fn passwords_never_show_in_a_redacted_url() {
        for (url, want) in [
            (
                "postgres://ann:s3cret@db.example:5432/kb",
                "postgres://ann:***@db.example:5432/kb",
            ),
            (
                "postgresql://ann@db/kb?password=s3cret&sslmode=disable",
                "postgresql://ann@db/kb?password=***&sslmode=disable",
            ),
            (
                "host=/tmp/pg user=ann password=s3cret dbname=kb",
                "host=/tmp/pg user=ann password=*** dbname=kb",
            ),
            ("postgres://ann@db/kb", "postgres://ann@db/kb"),
        ] {
            assert_eq!(redact_url(url), want);
        }
    }

    #[test]
    fn folder_names_become_distinct_plain_schemas() {
        assert_eq!(folder_schema("ragdown", "work"), "ragdown_work");
        let a = folder_schema("ragdown", "Team Notes");
        let b = folder_schema("ragdown", "team_notes");
        assert_ne!(a, b);
        for name in ["Team Notes", "ünïcode", &"x".repeat(100)] {
            let schema = folder_schema("kb", name);
            check_schema_name(&schema).unwrap();
        }
        assert!(check_schema_name("bad\"; DROP").is_err());
    }
}
