//! Diff sync: walk the folder, skip files whose size and mtime are unchanged, re-read the rest,
//! let the content hash decide, re-chunk what changed, embed only chunks the vector cache has
//! not seen (so editing one section embeds one chunk and a renamed file embeds nothing), and
//! write each document in its own transaction. Deleted files are dropped.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ragdown_embed::TextKind;
use ragdown_markdown::links::join_relative;
use ragdown_markdown::{Chunk, LinkKind};

use crate::changes::{converted_hash_prefix, may_have_changed};
use crate::snapshot::Snapshot;
use crate::store::{self, NewChunk, StoredChunk};
use crate::sync_report::{SyncReport, UrgentState};
use crate::walk::{FileEntry, walk};
use crate::{ChunkRecord, DocumentRecord, Index, LinkRecord, Result};

/// Texts to embed (sections and their pieces) gathered before the embedder runs and the
/// batch is written: large enough for full embedder slices, small enough that searches and
/// the progress line see a first index move every few seconds. Counting pieces matters: a
/// folder of long sections has three or four pieces per section, and a batch counted in
/// sections alone then embedded for twenty seconds before anything showed.
const BATCH_TEXTS: usize = 256;
/// A sync that added, replaced or removed more files than this sweeps the whole vector
/// cache for unused vectors (~10 ms per 10,000 cached vectors); fewer, only those released.
const SWEEP_ALL_CHANGES: usize = 16;
/// How often a long sync makes its progress visible to searches.
const PUBLISH_EVERY: Duration = Duration::from_secs(1);
const BM25_COMMIT_EVERY: Duration = Duration::from_secs(5);
/// Texts per embedder call inside a sync: between calls a running sync serves the paths
/// writers are waiting on, so a write waits for at most one such call (under a second with
/// MiniLM on two cores), not for a whole batch or a huge document.
const EMBED_SLICE: usize = 32;

/// A changed document, parsed and ready to embed and write.
struct Prepared {
    record: DocumentRecord,
    chunks: Vec<Chunk>,
    keys: Vec<[u8; 32]>,
    /// Per chunk, the cache key and text of each of its pieces.
    pieces: Vec<Vec<([u8; 32], String)>>,
    is_new: bool,
}

enum Outcome {
    Unchanged(Box<DocumentRecord>),
    Changed(Box<Prepared>),
}

/// State of one sync in progress.
struct Run {
    working: Snapshot,
    last_publish: Instant,
    last_commit: Instant,
    report: SyncReport,
    /// Paths indexed for writers during this run: what the run read of them before is stale.
    urgent_done: HashSet<String>,
}

impl Run {
    fn new(working: Snapshot) -> Self {
        Self {
            working,
            last_publish: Instant::now(),
            last_commit: Instant::now(),
            report: SyncReport::default(),
            urgent_done: HashSet::new(),
        }
    }
}

impl Index {
    /// Says a sync is under way before it starts (a server's first sync, queued behind
    /// setting up the watcher): status answers `syncing` from the moment the folder opens,
    /// never `ready` with a part of the files. The sync itself clears it when it ends.
    pub fn sync_ahead(&self) {
        if self.is_writable() {
            self.status.syncing.store(true, Ordering::Relaxed);
        }
    }

    /// Brings the index level with the folder. Syncs never overlap: a second caller waits
    /// for the first to finish, then runs its own (cheap when nothing changed).
    pub fn sync(&self) -> Result<SyncReport> {
        if !self.is_writable() {
            return Err(crate::IndexError::Reader);
        }
        let _one_at_a_time = self
            .sync_lock
            .lock()
            .map_err(|_| crate::IndexError::Poisoned)?;
        let started = Instant::now();
        self.status.syncing.store(true, Ordering::Relaxed);
        let result = self.sync_inner(started);
        self.status.syncing.store(false, Ordering::Relaxed);
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.status.last_sync_ms.store(now_ms, Ordering::Relaxed);
        result
    }

    /// Indexes `paths` (root-relative; created, changed or deleted) and answers as soon as
    /// they are searchable. When a sync is running, the paths are handed to it and served
    /// between two embedder calls, so a write never waits behind a whole-folder sync.
    pub fn sync_paths(&self, paths: &[String]) -> Result<SyncReport> {
        if !self.is_writable() {
            return Err(crate::IndexError::Reader);
        }
        self.check_root()?;
        let mut ticket = None;
        loop {
            match self.sync_lock.try_lock() {
                Ok(_one_at_a_time) => {
                    // A sync that took this ticket answered it before letting the lock go.
                    if let Some(t) = ticket
                        && let Some(answer) = self.take_answer(t)?
                    {
                        return answer;
                    }
                    if let Some(t) = ticket {
                        self.withdraw(t)?;
                    }
                    let started = Instant::now();
                    let mut run = Run::new((*self.snapshot()).clone());
                    let set: BTreeSet<String> = paths.iter().cloned().collect();
                    self.embedder.plan(set.len());
                    let mut report = self.index_paths(&mut run, &set)?;
                    self.finish_urgent(&mut run)?;
                    report.elapsed = started.elapsed();
                    return Ok(report);
                }
                Err(std::sync::TryLockError::Poisoned(_)) => {
                    return Err(crate::IndexError::Poisoned);
                }
                Err(std::sync::TryLockError::WouldBlock) => {}
            }
            let t = match ticket {
                Some(t) => t,
                None => {
                    let mut state = self.urgent_state()?;
                    state.next_ticket += 1;
                    let t = state.next_ticket;
                    state.waiting.push((t, paths.to_vec()));
                    ticket = Some(t);
                    t
                }
            };
            // Wait for the running sync to answer, looking at the lock now and then in case
            // it ended before reaching a point where it serves writers.
            let state = self.urgent_state()?;
            let (mut state, _) = self
                .urgent
                .answered
                .wait_timeout_while(state, Duration::from_millis(50), |s| {
                    !s.answers.contains_key(&t)
                })
                .map_err(|_| crate::IndexError::Poisoned)?;
            if let Some(answer) = state.answers.remove(&t) {
                return answer.map_err(crate::IndexError::Urgent);
            }
        }
    }

    fn urgent_state(&self) -> Result<std::sync::MutexGuard<'_, UrgentState>> {
        self.urgent
            .state
            .lock()
            .map_err(|_| crate::IndexError::Poisoned)
    }

    fn take_answer(&self, ticket: u64) -> Result<Option<Result<SyncReport>>> {
        Ok(self
            .urgent_state()?
            .answers
            .remove(&ticket)
            .map(|a| a.map_err(crate::IndexError::Urgent)))
    }

    fn withdraw(&self, ticket: u64) -> Result<()> {
        self.urgent_state()?.waiting.retain(|(t, _)| *t != ticket);
        Ok(())
    }

    /// Indexes every path writers are waiting on, inside the running sync `run`, makes them
    /// searchable and answers the writers.
    fn serve_urgent(&self, run: &mut Run) -> Result<()> {
        let waiting = std::mem::take(&mut self.urgent_state()?.waiting);
        if waiting.is_empty() {
            return Ok(());
        }
        let paths: BTreeSet<String> = waiting.iter().flat_map(|(_, p)| p.clone()).collect();
        let outcome = self
            .index_paths(run, &paths)
            .and_then(|report| self.finish_urgent(run).map(|()| report));
        let mut state = self.urgent_state()?;
        for (ticket, _) in waiting {
            let answer = match &outcome {
                Ok(report) => Ok(report.clone()),
                Err(e) => Err(e.to_string()),
            };
            state.answers.insert(ticket, answer);
        }
        drop(state);
        self.urgent.answered.notify_all();
        outcome.map(|_| ())
    }

    /// Makes what `run` wrote for writers searchable at once (BM25 committed, snapshot
    /// published).
    fn finish_urgent(&self, run: &mut Run) -> Result<()> {
        let generation = self.store()?.generation()?;
        self.bm25.commit(generation)?;
        run.last_commit = Instant::now();
        run.working.seal();
        run.working.refresh_superseded();
        self.publish(Arc::new(run.working.clone()));
        run.last_publish = Instant::now();
        Ok(())
    }

    /// Brings `paths` level with the disk inside `run`: re-indexed, added, or dropped when
    /// gone. The work is reported apart from the run's own.
    fn index_paths(&self, run: &mut Run, paths: &BTreeSet<String>) -> Result<SyncReport> {
        let outer = std::mem::take(&mut run.report);
        let mut batch = Vec::new();
        for path in paths {
            let full = self.settings.root.join(path);
            let meta = std::fs::symlink_metadata(&full)
                .ok()
                .filter(|m| m.is_file() && crate::walk::is_document_path(path));
            let Some(meta) = meta else {
                if run.working.document_by_path(path).is_some() {
                    self.remove_path(run, path)?;
                }
                continue;
            };
            let entry = FileEntry {
                path: path.clone(),
                size: meta.len(),
                mtime_ns: meta
                    .modified()
                    .ok()
                    .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos() as i64),
            };
            self.take_prepared(run, &entry, &mut batch, None)?;
        }
        self.write_batch(run, batch, false)?;
        run.urgent_done.extend(paths.iter().cloned());
        Ok(std::mem::replace(&mut run.report, outer))
    }

    fn remove_path(&self, run: &mut Run, path: &str) -> Result<()> {
        self.store()?.remove_document(path)?;
        self.bm25.remove_path(path)?;
        run.working.remove_document(path);
        run.report.removed += 1;
        Ok(())
    }

    /// Reads and parses one file into `batch` (or records it unchanged, or skipped with the
    /// reason: its old record is then queued in `to_remove`, or dropped at once without one).
    /// Returns the sections it added to `batch`, and the texts they bring to embed (each
    /// section and each of its pieces).
    fn take_prepared(
        &self,
        run: &mut Run,
        entry: &FileEntry,
        batch: &mut Vec<Prepared>,
        to_remove: Option<&mut Vec<String>>,
    ) -> Result<(usize, usize)> {
        match self.prepare(entry, &run.working) {
            Ok(Outcome::Unchanged(record)) => {
                let record = *record;
                self.store()?
                    .touch_document(record.id, record.size, record.mtime_ns)?;
                run.working.put_document(record);
                run.report.touched += 1;
                Ok((0, 0))
            }
            Ok(Outcome::Changed(prepared)) => {
                let chunks = prepared.chunks.len();
                let texts = chunks + prepared.pieces.iter().map(Vec::len).sum::<usize>();
                batch.push(*prepared);
                Ok((chunks, texts))
            }
            Err(reason) => {
                tracing::warn!("skipping {}: {reason}", entry.path);
                if run.working.document_by_path(&entry.path).is_some() {
                    match to_remove {
                        Some(later) => later.push(entry.path.clone()),
                        None => self.remove_path(run, &entry.path)?,
                    }
                }
                run.report.skipped.push((entry.path.clone(), reason));
                Ok((0, 0))
            }
        }
    }

    /// Refuses to sync a folder whose directory is gone: walking it would find no file and
    /// remove every document, where another server may be moving the folder with its records
    /// (a rename) or a volume be briefly unmounted.
    fn check_root(&self) -> Result<()> {
        if self.settings.root.is_dir() {
            Ok(())
        } else {
            Err(crate::IndexError::FolderMissing(self.settings.root.clone()))
        }
    }

    fn sync_inner(&self, started: Instant) -> Result<SyncReport> {
        self.check_root()?;
        let files = walk(&self.settings.root);
        let mut run = Run::new((*self.snapshot()).clone());
        let on_disk: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        let mut to_remove: Vec<String> = run
            .working
            .documents()
            .filter(|d| !on_disk.contains(d.path.as_str()))
            .map(|d| d.path.clone())
            .collect();
        let candidates: Vec<&FileEntry> = files
            .iter()
            .filter(|f| may_have_changed(f, run.working.document_by_path(&f.path).map(|d| &**d)))
            .collect();
        run.report.unchanged = files.len() - candidates.len();
        self.embedder.plan(candidates.len());
        self.status
            .files_total
            .store(candidates.len(), Ordering::Relaxed);
        self.status.files_done.store(0, Ordering::Relaxed);
        self.status.sections_total.store(0, Ordering::Relaxed);
        self.status.sections_done.store(0, Ordering::Relaxed);
        let bytes_total: u64 = candidates.iter().map(|f| f.size).sum();
        self.status
            .bytes_total
            .store(bytes_total, Ordering::Relaxed);
        self.status.bytes_done.store(0, Ordering::Relaxed);

        let mut batch: Vec<Prepared> = Vec::new();
        let mut batch_texts = 0;
        for entry in candidates {
            self.serve_urgent(&mut run)?;
            let waiting = batch.len();
            // A path indexed for a writer meanwhile is already level with the disk.
            if !run.urgent_done.contains(&entry.path) {
                let (sections, texts) =
                    self.take_prepared(&mut run, entry, &mut batch, Some(&mut to_remove))?;
                batch_texts += texts;
                self.status
                    .sections_total
                    .fetch_add(sections, Ordering::Relaxed);
            }
            // A file that needs no embedding is done once read; one in the batch is done as
            // its sections are embedded (`write_batch`).
            if batch.len() == waiting {
                self.status
                    .bytes_done
                    .fetch_add(entry.size, Ordering::Relaxed);
            }
            if batch_texts >= BATCH_TEXTS {
                self.write_batch(&mut run, std::mem::take(&mut batch), true)?;
                batch_texts = 0;
            }
            self.status.files_done.fetch_add(1, Ordering::Relaxed);
        }
        self.write_batch(&mut run, batch, true)?;
        self.serve_urgent(&mut run)?;

        for path in &to_remove {
            // Indexed for a writer meanwhile: what the walk saw of it is stale.
            if run.urgent_done.contains(path) {
                continue;
            }
            self.remove_path(&mut run, path)?;
        }
        let changed = run.report.added + run.report.updated + run.report.removed;
        if changed > 0 || run.report.touched > 0 {
            let generation = self.store()?.generation()?;
            if changed > 0 {
                self.bm25.commit(generation)?;
                self.store()?.prune_journal(generation)?;
            }
            run.working.compact();
            run.working.refresh_superseded();
            self.publish(Arc::new(run.working));
            // A sync of a few edits looks only at the vectors its replaced sections used; one
            // that changed many files (a first index, a rebuild that kept the cache, a branch
            // switch) sweeps the whole cache, which also finds what an interrupted sync left.
            let sweep_all = changed > SWEEP_ALL_CHANGES;
            if run.report.updated + run.report.removed > 0 || sweep_all {
                let sweep = if sweep_all {
                    store::Sweep::All
                } else {
                    store::Sweep::Released
                };
                let dropped = self.store()?.collect_unused_vectors(sweep)?;
                tracing::debug!(dropped, ?sweep, "dropped unused cached vectors");
            }
        }
        run.report.elapsed = started.elapsed();
        Ok(run.report)
    }

    /// Reads and parses one file. `Err` is a reason to skip it.
    fn prepare(
        &self,
        entry: &FileEntry,
        working: &Snapshot,
    ) -> std::result::Result<Outcome, String> {
        if entry.size > self.settings.max_file_bytes {
            return Err(format!(
                "{} bytes is over the {}-byte limit (raise RAGDOWN_MAX_FILE_BYTES to index it)",
                entry.size, self.settings.max_file_bytes
            ));
        }
        let full = self.settings.root.join(&entry.path);
        let bytes = std::fs::read(&full).map_err(|e| format!("could not be read ({e})"))?;
        if bytes.len() as u64 > self.settings.max_file_bytes {
            return Err(format!(
                "grew past the {}-byte limit while being read",
                self.settings.max_file_bytes
            ));
        }
        let converted = ragdown_convert::Format::from_path(&entry.path);
        if converted.is_none()
            && let Some(why) = binary_evidence(&bytes)
        {
            return Err(format!(
                "looks binary ({why}), not Markdown: give it another extension, or move it out of the folder"
            ));
        }
        let hash = content_hash(converted.is_some(), &bytes);
        let known = working.document_by_path(&entry.path);
        if let Some(known) = known
            && known.hash == hash
        {
            let mut record = (**known).clone();
            record.size = entry.size;
            record.mtime_ns = entry.mtime_ns;
            return Ok(Outcome::Unchanged(Box::new(record)));
        }
        let text = match converted {
            Some(format) => ragdown_convert::convert(format, &bytes)
                .map_err(|e| format!("{} not indexed: {e}", format.name()))?,
            None => markdown_text(&entry.path, bytes),
        };
        let doc = ragdown_markdown::parse(&entry.path, &text);
        for warning in &doc.warnings {
            tracing::warn!("{}: {warning}", entry.path);
        }
        let supersedes = doc
            .meta
            .supersedes
            .iter()
            .filter_map(|s| {
                let resolved = join_relative(&entry.path, s);
                if resolved.is_none() {
                    tracing::warn!(
                        "{}: supersedes {s:?} leaves the folder; ignored",
                        entry.path
                    );
                }
                resolved
            })
            .collect();
        let links = doc
            .links
            .iter()
            .map(|l| LinkRecord {
                kind: match l.kind {
                    LinkKind::Wiki => "wiki",
                    LinkKind::Embed => "embed",
                    LinkKind::Markdown => "markdown",
                }
                .into(),
                target: l.target.clone(),
                heading: l.heading.clone(),
                line: l.line as u32,
            })
            .collect();
        let embedder_id = self.embedder.id();
        let keys = doc
            .chunks
            .iter()
            .map(|c| vector_key(embedder_id, &c.search_text()))
            .collect();
        let pieces = doc
            .chunks
            .iter()
            .map(|c| {
                ragdown_markdown::pieces::piece_texts(&doc.meta.title, &c.text)
                    .into_iter()
                    .map(|text| (vector_key(embedder_id, &text), text))
                    .collect()
            })
            .collect();
        Ok(Outcome::Changed(Box::new(Prepared {
            record: DocumentRecord {
                id: known.map_or(0, |k| k.id),
                path: entry.path.clone(),
                size: entry.size,
                mtime_ns: entry.mtime_ns,
                hash,
                title: doc.meta.title,
                tags: doc.meta.tags,
                aliases: doc.meta.aliases,
                description: doc.meta.description,
                supersedes,
                created_by: doc.meta.created_by,
                session: doc.meta.session,
                links,
                total_lines: doc.total_lines as u32,
            },
            chunks: doc.chunks,
            keys,
            pieces,
            is_new: known.is_none(),
        })))
    }

    /// Embeds the batch's cache misses, then writes each document in its own transaction.
    fn write_batch(&self, run: &mut Run, batch: Vec<Prepared>, serve_writers: bool) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let piece_keys = |p: &Prepared| -> Vec<Vec<[u8; 32]>> {
            p.pieces
                .iter()
                .map(|ps| ps.iter().map(|(k, _)| *k).collect())
                .collect()
        };
        let all_keys: Vec<[u8; 32]> = batch
            .iter()
            .flat_map(|p| {
                p.keys
                    .iter()
                    .chain(p.pieces.iter().flatten().map(|(k, _)| k))
                    .copied()
            })
            .collect();
        let mut vectors = self.store()?.cached_vectors(&all_keys)?;
        let mut missing: Vec<([u8; 32], String)> = Vec::new();
        let mut queued: HashSet<[u8; 32]> = HashSet::new();
        for p in &batch {
            for (chunk, key) in p.chunks.iter().zip(&p.keys) {
                if !vectors.contains_key(key) && queued.insert(*key) {
                    missing.push((*key, chunk.search_text()));
                }
            }
        }
        let missing_chunks = missing.len();
        for p in &batch {
            for (key, text) in p.pieces.iter().flatten() {
                if !vectors.contains_key(key) && queued.insert(*key) {
                    missing.push((*key, text.clone()));
                }
            }
        }
        // Set when the model could not load: documents needing new vectors keep their old
        // records (or stay out) until it is back.
        let mut embedding_off: Option<String> = None;
        // The batch's sections and bytes count as done in step with its texts embedded, so a
        // single large file moves the progress too; what is left is counted below.
        let mut sections_credit = Credit::new(batch.iter().map(|p| p.chunks.len() as u64).sum());
        let mut bytes_credit = Credit::new(batch.iter().map(|p| p.record.size).sum());
        let texts_to_embed = missing.len() as u64;
        let mut texts_embedded = 0u64;
        if !missing.is_empty() {
            let missing_pieces = missing.len() - missing_chunks;
            // Similar lengths together: each slice pads little, as one big call would.
            missing.sort_by_key(|(_, t)| t.len());
            for slice in missing.chunks(EMBED_SLICE) {
                let texts: Vec<&str> = slice.iter().map(|(_, t)| t.as_str()).collect();
                match self.embedder.embed(&texts, TextKind::Document) {
                    Ok(embedded) => {
                        let entries: Vec<([u8; 32], Vec<f32>)> =
                            slice.iter().map(|(k, _)| *k).zip(embedded).collect();
                        self.store()?.put_vectors(&entries)?;
                        vectors.extend(entries);
                    }
                    Err(ragdown_embed::EmbedError::Unavailable(reason)) => {
                        embedding_off = Some(reason);
                        break;
                    }
                    Err(e) => return Err(e.into()),
                }
                texts_embedded += slice.len() as u64;
                if serve_writers {
                    // Kept short of the whole: the batch is done when it is written.
                    let share = (texts_embedded, texts_to_embed + 1);
                    self.status
                        .sections_done
                        .fetch_add(sections_credit.to(share) as usize, Ordering::Relaxed);
                    self.status
                        .bytes_done
                        .fetch_add(bytes_credit.to(share), Ordering::Relaxed);
                    self.serve_urgent(run)?;
                }
            }
            if embedding_off.is_none() {
                self.embedded_chunks
                    .fetch_add(missing_chunks as u64, Ordering::Relaxed);
                self.embedded_pieces
                    .fetch_add(missing_pieces as u64, Ordering::Relaxed);
                run.report.embedded += missing_chunks;
                run.report.embedded_pieces += missing_pieces;
            }
        }
        if serve_writers {
            self.status
                .sections_done
                .fetch_add(sections_credit.rest() as usize, Ordering::Relaxed);
            self.status
                .bytes_done
                .fetch_add(bytes_credit.rest(), Ordering::Relaxed);
        }
        for p in batch {
            // Indexed for a writer while this batch was embedded: this reading is stale.
            if run.urgent_done.contains(&p.record.path) {
                continue;
            }
            if let Some(reason) = &embedding_off {
                let all_cached = p
                    .keys
                    .iter()
                    .chain(p.pieces.iter().flatten().map(|(k, _)| k))
                    .all(|k| vectors.contains_key(k));
                if !all_cached {
                    tracing::warn!("{} not indexed: the model could not load", p.record.path);
                    run.report.skipped.push((
                        p.record.path.clone(),
                        format!("not indexed until the embedding model loads again ({reason})"),
                    ));
                    continue;
                }
            }
            let piece_keys = piece_keys(&p);
            let new_chunks: Vec<NewChunk<'_>> = p
                .chunks
                .iter()
                .zip(&p.keys)
                .zip(&piece_keys)
                .map(|((chunk, key), piece_keys)| NewChunk {
                    chunk,
                    vector_key: *key,
                    piece_keys,
                })
                .collect();
            let (id, chunk_ids, _generation) =
                self.store()?.replace_document(&p.record, &new_chunks)?;
            let mut record = p.record;
            record.id = id;
            run.working.retire_chunks(id);
            self.bm25.remove_path(&record.path)?;
            self.add_bm25(
                &record,
                p.chunks
                    .iter()
                    .zip(&chunk_ids)
                    .map(|(c, id)| (*id, c.breadcrumb.as_str(), c.text.as_str())),
            )?;
            for (ord, (((chunk, key), chunk_id), piece_keys)) in p
                .chunks
                .into_iter()
                .zip(&p.keys)
                .zip(chunk_ids)
                .zip(&piece_keys)
                .enumerate()
            {
                run.working.push_chunk(StoredChunk {
                    record: ChunkRecord {
                        id: chunk_id,
                        document_id: id,
                        ord: ord as u32,
                        line_start: chunk.line_start as u32,
                        line_end: chunk.line_end as u32,
                        heading: chunk.heading,
                        breadcrumb: chunk.breadcrumb,
                        text: chunk.text,
                    },
                    vector: vectors.get(key).cloned().unwrap_or_default(),
                    pieces: piece_keys
                        .iter()
                        .filter_map(|k| vectors.get(k))
                        .flatten()
                        .copied()
                        .collect(),
                });
            }
            run.working.put_document(record);
            if p.is_new {
                run.report.added += 1;
            } else {
                run.report.updated += 1;
            }
        }
        run.working.seal();
        if run.last_commit.elapsed() >= BM25_COMMIT_EVERY {
            let generation = self.store()?.generation()?;
            self.bm25.commit(generation)?;
            run.last_commit = Instant::now();
        }
        if run.last_publish.elapsed() >= PUBLISH_EVERY {
            run.working.refresh_superseded();
            self.publish(Arc::new(run.working.clone()));
            run.last_publish = Instant::now();
        }
        Ok(())
    }
}

/// The vector cache key of a text under an embedder.
pub fn vector_key(embedder_id: &str, text: &str) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(embedder_id.as_bytes());
    hasher.update(&[0]);
    hasher.update(text.as_bytes());
    *hasher.finalize().as_bytes()
}

/// Why `bytes` are not text, if they are not: a NUL byte, control characters text never has
/// (more than 1 in 200 bytes), or mostly invalid UTF-8 (more than 1 in 4 bytes; a Latin-1
/// note has far fewer). The whole file counts, so binary data after a text-like start is
/// found too.
pub fn binary_evidence(bytes: &[u8]) -> Option<&'static str> {
    if bytes.is_empty() {
        return None;
    }
    if bytes.contains(&0) {
        return Some("it holds NUL bytes");
    }
    // Tab, line feed, vertical tab, form feed, carriage return and escape occur in text.
    let controls = bytes
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1b))
        .count();
    if controls * 200 > bytes.len() {
        return Some("it holds control characters");
    }
    let invalid: usize = bytes.utf8_chunks().map(|chunk| chunk.invalid().len()).sum();
    if invalid * 4 > bytes.len() {
        return Some("most of it is not UTF-8 text");
    }
    None
}

/// A Markdown file's text; invalid UTF-8 is replaced (and logged), never fatal.
fn markdown_text(path: &str, bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!("{path}: not valid UTF-8; invalid bytes are replaced");
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    }
}

/// The hash a document's record keeps: its bytes' BLAKE3, behind the converter's version
/// (`c2:…`) when ragdown converted it, so a converter that now writes other text finds the
/// records it wrote out of date.
fn content_hash(converted: bool, bytes: &[u8]) -> String {
    let digest = blake3::hash(bytes).to_hex();
    if converted {
        format!("{}{digest}", converted_hash_prefix())
    } else {
        digest.to_string()
    }
}

/// A quantity (a batch's sections or bytes) counted as done in steps: `to` moves it to a share
/// of the whole and returns the step, `rest` what is left; the steps add up to the whole.
struct Credit {
    whole: u64,
    given: u64,
}

impl Credit {
    fn new(whole: u64) -> Self {
        Self { whole, given: 0 }
    }

    /// The step up to `done / of` of the whole (never past it, never back).
    fn to(&mut self, (done, of): (u64, u64)) -> u64 {
        let target = if of == 0 {
            0
        } else {
            (self.whole as u128 * done.min(of) as u128 / of as u128) as u64
        };
        let step = target.saturating_sub(self.given);
        self.given += step;
        step
    }

    fn rest(&mut self) -> u64 {
        let step = self.whole - self.given;
        self.given = self.whole;
        step
    }
}

#[cfg(test)]
mod binary_tests {
    use super::binary_evidence;

    #[test]
    fn text_is_text_and_binary_is_found_anywhere() {
        assert_eq!(binary_evidence(b""), None);
        assert_eq!(
            binary_evidence("# Notes\n\tcaf\u{e9} \x1b[1mbold\r\n".as_bytes()),
            None
        );
        // Latin-1 French: a few invalid bytes among text.
        let latin1: Vec<u8> =
            b"Le caf\xe9 est pr\xeat, la r\xe9union commence \xe0 midi.\n".repeat(20);
        assert_eq!(binary_evidence(&latin1), None);
        // Binary after a clean 8 KiB start, with no NUL anywhere.
        let mut late = b"# Title\n\n".repeat(1000);
        late.extend((0u32..20_000).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 | 1));
        assert!(binary_evidence(&late).is_some());
        assert_eq!(binary_evidence(b"a\0b"), Some("it holds NUL bytes"));
        let high: Vec<u8> = (0..4000).map(|i| 0x80 + (i % 64) as u8).collect();
        assert_eq!(binary_evidence(&high), Some("most of it is not UTF-8 text"));
    }
}
