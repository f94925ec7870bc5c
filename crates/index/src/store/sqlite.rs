//! The records in SQLite (WAL mode) in the index's data dir: the default engine, for one
//! machine. Readers on the same host open the same file.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::{
    KeyedRows, NewChunk, RecordStore, StoredChunk, Sweep, attach_pieces, blob_to_vector, json_list,
    list_json, vector_to_blob,
};
use crate::{ChunkRecord, DocumentRecord, IndexError, Result};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,
    title TEXT NOT NULL,
    tags TEXT NOT NULL,
    aliases TEXT NOT NULL,
    description TEXT,
    supersedes TEXT NOT NULL,
    created_by TEXT,
    session TEXT,
    links TEXT NOT NULL,
    total_lines INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    heading TEXT NOT NULL,
    breadcrumb TEXT NOT NULL,
    text TEXT NOT NULL,
    vector_key BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_document ON chunks(document_id);
CREATE INDEX IF NOT EXISTS chunks_vector ON chunks(vector_key);
CREATE TABLE IF NOT EXISTS pieces(
    chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    vector_key BLOB NOT NULL,
    PRIMARY KEY(chunk_id, ord)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pieces_vector ON pieces(vector_key);
CREATE TABLE IF NOT EXISTS vectors(key BLOB PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal(generation INTEGER PRIMARY KEY, path TEXT NOT NULL);
";

/// One index's records in `records.sqlite`.
pub struct SqliteStore {
    conn: Connection,
    /// Vector keys of the chunks and pieces replaced or removed since the last collection.
    released: HashSet<[u8; 32]>,
}

/// A chunk's record from the first eight columns of `row`: id, document_id, ord,
/// line_start, line_end, heading, breadcrumb, text.
fn chunk_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<ChunkRecord> {
    Ok(ChunkRecord {
        id: r.get(0)?,
        document_id: r.get(1)?,
        ord: r.get(2)?,
        line_start: r.get(3)?,
        line_end: r.get(4)?,
        heading: r.get(5)?,
        breadcrumb: r.get(6)?,
        text: r.get(7)?,
    })
}

/// Column `i` of `row` as the bytes of a BLOB.
fn blob<'a>(row: &'a rusqlite::Row<'_>, i: usize) -> rusqlite::Result<&'a [u8]> {
    row.get_ref(i)?.as_blob().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Blob, Box::new(e))
    })
}

impl SqliteStore {
    /// Opens (creating) the database and checks it is ours and readable.
    pub fn open(path: &Path) -> Result<Self> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.execute_batch(SCHEMA)?;
        // A quick read proves the file is a database of ours, not foreign bytes.
        conn.query_row("SELECT count(*) FROM documents", [], |r| r.get::<_, i64>(0))?;
        Ok(Self {
            conn,
            released: HashSet::new(),
        })
    }

    /// One document's chunks with their vectors, in id order.
    fn document_chunks(&self, document_id: i64) -> Result<Vec<StoredChunk>> {
        let mut stmt = self.conn.prepare(
            "SELECT c.id, c.document_id, c.ord, c.line_start, c.line_end, c.heading,
                        c.breadcrumb, c.text, v.vector
                 FROM chunks c JOIN vectors v ON v.key = c.vector_key
                 WHERE c.document_id = ?1
                 ORDER BY c.id",
        )?;
        let rows = stmt.query_map([document_id], |r| {
            Ok(StoredChunk {
                record: chunk_record(r)?,
                vector: blob_to_vector(blob(r, 8)?),
                pieces: Vec::new(),
            })
        })?;
        let mut chunks = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        let mut stmt = self.conn.prepare(
            "SELECT p.chunk_id, v.vector
                 FROM pieces p JOIN chunks c ON c.id = p.chunk_id
                     JOIN vectors v ON v.key = p.vector_key
                 WHERE c.document_id = ?1
                 ORDER BY p.chunk_id, p.ord",
        )?;
        let pieces = stmt
            .query_map([document_id], |r| {
                Ok((r.get::<_, i64>(0)?, Some(blob_to_vector(blob(r, 1)?))))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        attach_pieces(&mut chunks, pieces.into_iter());
        Ok(chunks)
    }
}

impl RecordStore for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn meta(&mut self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(IndexError::from)
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        set_meta(&self.conn, key, value)
    }

    fn clear(&mut self, keep_vectors: bool) -> Result<()> {
        let vectors = if keep_vectors {
            ""
        } else {
            "DELETE FROM vectors;"
        };
        self.conn
            .execute_batch(&format!(
                "BEGIN; DELETE FROM pieces; DELETE FROM chunks; DELETE FROM documents; {vectors}
                 DELETE FROM journal; DELETE FROM meta WHERE key = 'journal_floor'; COMMIT;"
            ))
            .map_err(IndexError::from)
    }

    fn documents(&mut self) -> Result<Vec<DocumentRecord>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, path, size, mtime_ns, hash, title, tags, aliases, description,
                        supersedes, created_by, session, links, total_lines
                 FROM documents",
        )?;
        let rows = stmt.query_map([], |r| {
            let json = |i: usize| -> rusqlite::Result<String> { r.get(i) };
            Ok(DocumentRecord {
                id: r.get(0)?,
                path: r.get(1)?,
                size: r.get::<_, i64>(2)? as u64,
                mtime_ns: r.get(3)?,
                hash: r.get(4)?,
                title: r.get(5)?,
                tags: json_list(&json(6)?),
                aliases: json_list(&json(7)?),
                description: r.get(8)?,
                supersedes: json_list(&json(9)?),
                created_by: r.get(10)?,
                session: r.get(11)?,
                links: json_list(&json(12)?),
                total_lines: r.get::<_, i64>(13)? as u32,
            })
        })?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(IndexError::from)
    }

    fn chunks(&mut self, document_id: Option<i64>) -> Result<Vec<StoredChunk>> {
        if let Some(document_id) = document_id {
            return self.document_chunks(document_id);
        }
        super::stored_chunks(self)
    }

    /// Read, not mapped: a mapped file's pages count as the process's own while it loads (a
    /// million sections: 2.9 GB peak mapped, 1.4 GB read, and the read was a second faster;
    /// real-dev's whole open, 10k vectors, 46–52 ms a process either way: sequential scans
    /// make few reads).
    fn scan_rows(&mut self, vector: &mut dyn FnMut([u8; 32], &[u8])) -> Result<KeyedRows> {
        let mut stmt = self.conn.prepare("SELECT key, vector FROM vectors")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            if let Some(key) = super::key_of(blob(row, 0)?) {
                vector(key, blob(row, 1)?);
            }
        }
        let mut stmt = self.conn.prepare(
            "SELECT id, document_id, ord, line_start, line_end, heading, breadcrumb, text,
                    vector_key
                 FROM chunks ORDER BY id",
        )?;
        let chunks = stmt
            .query_map([], |r| Ok((chunk_record(r)?, blob(r, 8)?.to_vec())))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut stmt = self
            .conn
            .prepare("SELECT chunk_id, vector_key FROM pieces ORDER BY chunk_id, ord")?;
        let pieces = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, blob(r, 1)?.to_vec())))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok((chunks, pieces))
    }

    fn scan_chunk_records(&mut self, each: &mut dyn FnMut(ChunkRecord)) -> Result<()> {
        let mut stmt = self.conn.prepare(
            "SELECT id, document_id, ord, line_start, line_end, heading, breadcrumb, text
                 FROM chunks ORDER BY id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            each(chunk_record(row)?);
        }
        Ok(())
    }

    fn chunk_counts(&mut self) -> Result<HashMap<i64, usize>> {
        let mut stmt = self
            .conn
            .prepare("SELECT document_id, COUNT(*) FROM chunks GROUP BY document_id")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as usize)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn cached_vectors(&mut self, keys: &[[u8; 32]]) -> Result<HashMap<[u8; 32], Vec<f32>>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT vector FROM vectors WHERE key = ?1")?;
        let mut out = HashMap::new();
        for key in keys {
            if let Some(blob) = stmt
                .query_row([&key[..]], |r| r.get::<_, Vec<u8>>(0))
                .optional()?
            {
                out.insert(*key, blob_to_vector(&blob));
            }
        }
        Ok(out)
    }

    fn vectors(&mut self) -> Result<Vec<([u8; 32], Vec<f32>)>> {
        let mut stmt = self.conn.prepare("SELECT key, vector FROM vectors")?;
        let rows = stmt.query_map([], |r| {
            Ok((super::key_of(blob(r, 0)?), blob_to_vector(blob(r, 1)?)))
        })?;
        let mut out = Vec::new();
        for row in rows {
            if let (Some(key), vector) = row? {
                out.push((key, vector));
            }
        }
        Ok(out)
    }

    fn put_vectors(&mut self, entries: &[([u8; 32], Vec<f32>)]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut stmt =
                tx.prepare_cached("INSERT OR IGNORE INTO vectors(key, vector) VALUES (?1, ?2)")?;
            for (key, vector) in entries {
                stmt.execute(params![&key[..], vector_to_blob(vector)])?;
            }
        }
        tx.commit().map_err(IndexError::from)
    }

    fn replace_document(
        &mut self,
        doc: &DocumentRecord,
        chunks: &[NewChunk<'_>],
    ) -> Result<(i64, Vec<i64>, u64)> {
        let tx = self.conn.transaction()?;
        let generation = next_generation(&tx, &doc.path)?;
        let id: i64 = tx.query_row(
            "INSERT INTO documents(path, size, mtime_ns, hash, title, tags, aliases,
                     description, supersedes, created_by, session, links, total_lines)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                 ON CONFLICT(path) DO UPDATE SET size = excluded.size,
                     mtime_ns = excluded.mtime_ns, hash = excluded.hash, title = excluded.title,
                     tags = excluded.tags, aliases = excluded.aliases,
                     description = excluded.description, supersedes = excluded.supersedes,
                     created_by = excluded.created_by, session = excluded.session,
                     links = excluded.links, total_lines = excluded.total_lines
                 RETURNING id",
            params![
                doc.path,
                doc.size as i64,
                doc.mtime_ns,
                doc.hash,
                doc.title,
                list_json(&doc.tags),
                list_json(&doc.aliases),
                doc.description,
                list_json(&doc.supersedes),
                doc.created_by,
                doc.session,
                list_json(&doc.links),
                doc.total_lines,
            ],
            |r| r.get(0),
        )?;
        let released = used_keys(&tx, &doc.path)?;
        tx.execute("DELETE FROM chunks WHERE document_id = ?1", [id])?;
        let mut ids = Vec::with_capacity(chunks.len());
        {
            let mut piece_stmt = tx.prepare_cached(
                "INSERT INTO pieces(chunk_id, ord, vector_key) VALUES (?1, ?2, ?3)",
            )?;
            let mut stmt = tx.prepare_cached(
                "INSERT INTO chunks(document_id, ord, line_start, line_end, heading,
                         breadcrumb, text, vector_key)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
            )?;
            for (ord, c) in chunks.iter().enumerate() {
                let chunk_id: i64 = stmt.query_row(
                    params![
                        id,
                        ord as i64,
                        c.chunk.line_start as i64,
                        c.chunk.line_end as i64,
                        c.chunk.heading,
                        c.chunk.breadcrumb,
                        c.chunk.text,
                        &c.vector_key[..],
                    ],
                    |r| r.get(0),
                )?;
                for (piece, key) in c.piece_keys.iter().enumerate() {
                    piece_stmt.execute(params![chunk_id, piece as i64, &key[..]])?;
                }
                ids.push(chunk_id);
            }
        }
        tx.commit()?;
        self.released.extend(released);
        Ok((id, ids, generation))
    }

    fn touch_document(&mut self, id: i64, size: u64, mtime_ns: i64) -> Result<()> {
        self.conn
            .execute(
                "UPDATE documents SET size = ?2, mtime_ns = ?3 WHERE id = ?1",
                params![id, size as i64, mtime_ns],
            )
            .map(|_| ())
            .map_err(IndexError::from)
    }

    fn remove_document(&mut self, path: &str) -> Result<u64> {
        let tx = self.conn.transaction()?;
        let generation = next_generation(&tx, path)?;
        let released = used_keys(&tx, path)?;
        tx.execute("DELETE FROM documents WHERE path = ?1", [path])?;
        tx.commit()?;
        self.released.extend(released);
        Ok(generation)
    }

    fn journal_since(&mut self, since: u64) -> Result<Option<Vec<String>>> {
        if since < self.journal_floor()? {
            return Ok(None);
        }
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT path FROM journal WHERE generation > ?1 ORDER BY path")?;
        let rows = stmt.query_map([since as i64], |r| r.get(0))?;
        Ok(Some(rows.collect::<rusqlite::Result<Vec<String>>>()?))
    }

    /// The one BM25 index of a SQLite index (readers share the primary's) needs nothing
    /// before its commit: all of it goes.
    fn prune_journal(&mut self, upto: u64) -> Result<()> {
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM journal WHERE generation <= ?1", [upto as i64])?;
        set_meta(&tx, "journal_floor", &upto.to_string())?;
        tx.commit().map_err(IndexError::from)
    }

    fn collect_unused_vectors(&mut self, sweep: Sweep) -> Result<usize> {
        let released = std::mem::take(&mut self.released);
        if sweep == Sweep::Released && released.is_empty() {
            return Ok(0);
        }
        if sweep == Sweep::All {
            return self
                .conn
                .execute(
                    "DELETE FROM vectors WHERE key NOT IN (SELECT vector_key FROM chunks)
                         AND key NOT IN (SELECT vector_key FROM pieces)",
                    [],
                )
                .map_err(IndexError::from);
        }
        let tx = self.conn.transaction()?;
        let mut dropped = 0;
        {
            let mut stmt = tx.prepare_cached(
                "DELETE FROM vectors WHERE key = ?1
                     AND NOT EXISTS (SELECT 1 FROM chunks WHERE vector_key = ?1)
                     AND NOT EXISTS (SELECT 1 FROM pieces WHERE vector_key = ?1)",
            )?;
            for key in &released {
                dropped += stmt.execute([&key[..]])?;
            }
        }
        tx.commit()?;
        Ok(dropped)
    }

    fn document_id(&mut self, path: &str) -> Result<Option<i64>> {
        self.conn
            .query_row("SELECT id FROM documents WHERE path = ?1", [path], |r| {
                r.get(0)
            })
            .optional()
            .map_err(IndexError::from)
    }
}

/// The vector keys the chunks and pieces of the document at `path` use (read before they are
/// deleted); none when there is no such document.
fn used_keys(conn: &Connection, path: &str) -> Result<Vec<[u8; 32]>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.vector_key FROM chunks c JOIN documents d ON d.id = c.document_id
             WHERE d.path = ?1
         UNION SELECT p.vector_key FROM pieces p JOIN chunks c ON c.id = p.chunk_id
             JOIN documents d ON d.id = c.document_id WHERE d.path = ?1",
    )?;
    let keys = stmt
        .query_map([path], |r| r.get::<_, Vec<u8>>(0))?
        .filter_map(|key| key.map(|k| super::key_of(&k)).transpose())
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(keys)
}

fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )
    .map(|_| ())
    .map_err(IndexError::from)
}

/// The `embedder` and `dim` meta values of the records at `path`, opened read-only.
pub fn recorded_embedder(path: &Path) -> Option<(String, usize)> {
    let conn =
        Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
    let meta = |key: &str| -> Option<String> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .ok()
    };
    Some((meta("embedder")?, meta("dim")?.parse().ok()?))
}

fn next_generation(tx: &rusqlite::Transaction<'_>, path: &str) -> Result<u64> {
    let current: u64 = tx
        .query_row("SELECT value FROM meta WHERE key = 'generation'", [], |r| {
            r.get::<_, String>(0)
        })
        .optional()?
        .and_then(|g| g.parse().ok())
        .unwrap_or(0);
    let next = current + 1;
    tx.execute(
        "INSERT INTO meta(key, value) VALUES ('generation', ?1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [next.to_string()],
    )?;
    tx.execute(
        "INSERT INTO journal(generation, path) VALUES (?1, ?2)",
        params![next as i64, path],
    )?;
    Ok(next)
}
