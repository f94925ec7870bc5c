//! The BM25 index (tantivy): one tantivy document per chunk, with the breadcrumb and text in
//! `body` and the title, aliases and tags in fields of their own. Derived from the records: its
//! commit payload holds the records' generation, and on open it is caught up from the journal
//! or rebuilt when that does not match.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tantivy::collector::{Count, DocSetCollector, FilterCollector, TopDocs};
use tantivy::indexer::MergeCandidate;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions, Value,
};
use tantivy::tokenizer::{
    Language, LowerCaser, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer,
};
use tantivy::{DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::{IndexError, Result};

const ANALYZER: &str = "ragdown";
/// Bumped when the schema or analyzer changes; a mismatch rebuilds the BM25 index.
pub const BM25_VERSION: u32 = 3;

#[derive(Clone, Copy)]
struct Fields {
    chunk_id: Field,
    document_id: Field,
    path: Field,
    body: Field,
    title: Field,
    aliases: Field,
    tags: Field,
}

/// What one chunk contributes to the BM25 index.
pub struct Bm25Chunk<'a> {
    pub chunk_id: i64,
    pub document_id: i64,
    pub path: &'a str,
    pub body: &'a str,
    pub title: &'a str,
    pub aliases: &'a str,
    pub tags: &'a str,
}

/// Analysed query terms with the number of chunks holding each, out of `chunks`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TermFrequencies {
    pub terms: Vec<(String, u64)>,
    pub chunks: u64,
}

pub struct Bm25 {
    index: Index,
    reader: IndexReader,
    /// `None` in a reader process.
    writer: Mutex<Option<IndexWriter>>,
    fields: Fields,
    analyzer: TextAnalyzer,
}

fn analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(SimpleTokenizer::default()).filter(LowerCaser);
    // English stop words carry no topic; without them "how are" matches every heading.
    match StopWordFilter::new(Language::English) {
        Some(stop) => builder
            .filter(stop)
            .filter(Stemmer::new(Language::English))
            .build(),
        None => builder.filter(Stemmer::new(Language::English)).build(),
    }
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        chunk_id: b.add_u64_field("chunk_id", INDEXED | FAST | STORED),
        document_id: b.add_u64_field("document_id", FAST),
        path: b.add_text_field("path", STRING),
        body: b.add_text_field("body", text.clone()),
        title: b.add_text_field("title", text.clone()),
        aliases: b.add_text_field("aliases", text.clone()),
        tags: b.add_text_field("tags", text),
    };
    (b.build(), fields)
}

fn new_writer(index: &Index) -> Result<IndexWriter> {
    index
        .writer_with_num_threads(1, 50_000_000)
        .map_err(IndexError::from)
}

impl Bm25 {
    /// Opens the index in `dir`, creating it when absent; a corrupt one is wiped and recreated.
    pub fn open(dir: &Path) -> Result<Self> {
        match Self::open_inner(dir) {
            Ok(b) => Ok(b),
            Err(e) => {
                tracing::warn!("rebuilding the BM25 index: it could not be opened ({e})");
                let _ = std::fs::remove_dir_all(dir);
                Self::open_inner(dir)
            }
        }
    }

    /// Opens the index without a writer (another process writes it).
    pub fn open_reader(dir: &Path) -> Result<Self> {
        Self::open_with(dir, false)
    }

    fn open_inner(dir: &Path) -> Result<Self> {
        Self::open_with(dir, true)
    }

    fn open_with(dir: &Path, write: bool) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|source| IndexError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let (schema, fields) = schema();
        let directory =
            tantivy::directory::MmapDirectory::open(dir).map_err(tantivy::TantivyError::from)?;
        let index = Index::open_or_create(directory, schema)?;
        index.tokenizers().register(ANALYZER, analyzer());
        let writer = if write {
            Some(new_writer(&index)?)
        } else {
            None
        };
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            index,
            reader,
            writer: Mutex::new(writer),
            fields,
            analyzer: analyzer(),
        })
    }

    /// The records' generation this index last committed, and its layout version.
    pub fn committed(&self) -> Option<(u32, u64)> {
        let payload = self.index.load_metas().ok()?.payload?;
        let (version, generation) = payload.split_once(':')?;
        Some((version.parse().ok()?, generation.parse().ok()?))
    }

    /// Runs `f` with the writer; a reader process has none.
    fn with_writer<T>(&self, f: impl FnOnce(&mut IndexWriter) -> Result<T>) -> Result<T> {
        let mut guard = self.writer.lock().map_err(|_| IndexError::Poisoned)?;
        f(guard.as_mut().ok_or(IndexError::Reader)?)
    }

    /// Takes the writer (this process became the primary).
    pub fn promote(&self) -> Result<()> {
        let mut guard = self.writer.lock().map_err(|_| IndexError::Poisoned)?;
        if guard.is_none() {
            *guard = Some(new_writer(&self.index)?);
        }
        Ok(())
    }

    /// Lets the merges the last commits started finish, then runs the merges the committed
    /// segments still call for, for a process about to exit. A dropped writer abandons its
    /// merges, and a commit plans its merges before it drops the segments whose every chunk
    /// it deleted (a re-edited document's segment from the last run), so that merge is thrown
    /// away when it ends. A CLI re-sync on real-dev merged the first index's eight segments,
    /// ~35 ms, and lost the result, on every run; planned again over what is committed, the
    /// merge is kept and the next runs have nothing to merge.
    pub fn finish_merges(&self) -> Result<()> {
        let mut guard = self.writer.lock().map_err(|_| IndexError::Poisoned)?;
        let plan = |writer: &IndexWriter| -> Result<Vec<MergeCandidate>> {
            let segments = self.index.searchable_segment_metas()?;
            Ok(writer
                .get_merge_policy()
                .compute_merge_candidates(&segments))
        };
        // Nothing committed calls for a merge (the usual case): whatever merge may still run
        // was planned over segments that are gone, and is not waited for.
        let Some(writer) = guard.take_if(|w| plan(w).is_ok_and(|c| !c.is_empty())) else {
            return Ok(());
        };
        writer.wait_merging_threads()?;
        let mut writer = new_writer(&self.index)?;
        for candidate in plan(&writer)? {
            writer.merge(&candidate.0).wait()?;
        }
        *guard = Some(writer);
        Ok(())
    }

    /// Makes this writer merge nothing (tests: segments that stay as written).
    #[cfg(test)]
    pub(crate) fn stop_merging(&self) {
        if let Ok(mut guard) = self.writer.lock()
            && let Some(writer) = guard.as_mut()
        {
            writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        }
    }

    /// How many segments the committed index has (tests: merges kept or lost).
    #[cfg(test)]
    pub(crate) fn segment_count(&self) -> usize {
        self.index
            .searchable_segment_ids()
            .map_or(0, |ids| ids.len())
    }

    /// Picks up another process's commits.
    pub fn reload(&self) -> Result<()> {
        self.reader.reload().map_err(IndexError::from)
    }

    pub fn remove_path(&self, path: &str) -> Result<()> {
        let term = Term::from_field_text(self.fields.path, path);
        self.with_writer(|w| {
            w.delete_term(term);
            Ok(())
        })
    }

    pub fn clear(&self) -> Result<()> {
        self.with_writer(|w| {
            w.delete_all_documents()
                .map(|_| ())
                .map_err(IndexError::from)
        })
    }

    pub fn add(&self, c: &Bm25Chunk<'_>) -> Result<()> {
        let f = self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_u64(f.chunk_id, c.chunk_id as u64);
        doc.add_u64(f.document_id, c.document_id as u64);
        doc.add_text(f.path, c.path);
        doc.add_text(f.body, c.body);
        doc.add_text(f.title, c.title);
        doc.add_text(f.aliases, c.aliases);
        doc.add_text(f.tags, c.tags);
        self.with_writer(|w| w.add_document(doc).map(|_| ()).map_err(IndexError::from))
    }

    /// Commits pending writes, recording `generation`, and makes them visible to searches.
    pub fn commit(&self, generation: u64) -> Result<()> {
        self.with_writer(|w| {
            let mut prepared = w.prepare_commit()?;
            prepared.set_payload(&format!("{BM25_VERSION}:{generation}"));
            prepared.commit().map(|_| ()).map_err(IndexError::from)
        })?;
        self.reader.reload().map_err(IndexError::from)
    }

    /// Query terms as the index analyses them.
    pub fn terms(&self, query: &str) -> Vec<String> {
        let mut analyzer = self.analyzer.clone();
        let mut stream = analyzer.token_stream(query);
        let mut out = Vec::new();
        while let Some(token) = stream.next() {
            if !out.contains(&token.text) {
                out.push(token.text.clone());
            }
        }
        out
    }

    /// The distinct terms of `text` as the index analyses them (stemmed, stop words dropped).
    pub fn term_set(&self, text: &str) -> std::collections::HashSet<String> {
        let mut analyzer = self.analyzer.clone();
        let mut stream = analyzer.token_stream(text);
        let mut out = std::collections::HashSet::new();
        while let Some(token) = stream.next() {
            out.insert(token.text.clone());
        }
        out
    }

    /// How many chunks hold each analysed term of `query` (in their body — breadcrumb and
    /// text —, their document's title or aliases; the most of the three), and how many chunks
    /// there are: the rarity lexical evidence weighs terms by.
    pub fn term_frequencies(&self, query: &str) -> Result<TermFrequencies> {
        let searcher = self.reader.searcher();
        let mut terms = Vec::new();
        for term in self.terms(query) {
            // A name only an alias or a title holds is still the corpus's word.
            let mut chunks = 0;
            for field in [self.fields.body, self.fields.title, self.fields.aliases] {
                let held = searcher.doc_freq(&Term::from_field_text(field, &term))?;
                chunks = chunks.max(held);
            }
            terms.push((term, chunks));
        }
        Ok(TermFrequencies {
            terms,
            chunks: searcher.num_docs(),
        })
    }

    /// How many chunks hold every analysed term of `name` in their body (breadcrumb and
    /// text): at least as many as hold `name` itself, so a count of a few bounds how many
    /// can. 0 when `name` analyses to no term.
    pub fn chunks_holding_all(&self, name: &str) -> Result<usize> {
        match self.holding_all(name) {
            Some(query) => Ok(self.reader.searcher().search(&query, &Count)?),
            None => Ok(0),
        }
    }

    /// The ids of up to `limit` of the chunks [`Self::chunks_holding_all`] counts: those
    /// whose body holds every analysed term of `name`, in no particular order.
    pub fn chunk_ids_holding_all(&self, name: &str, limit: usize) -> Result<Vec<i64>> {
        let Some(query) = self.holding_all(name) else {
            return Ok(Vec::new());
        };
        let searcher = self.reader.searcher();
        let mut ids = Vec::new();
        // Only the ids read are fetched from the store; the matching itself is cheap.
        for address in searcher
            .search(&query, &DocSetCollector)?
            .into_iter()
            .take(limit)
        {
            let doc: TantivyDocument = searcher.doc(address)?;
            if let Some(id) = doc.get_first(self.fields.chunk_id).and_then(|v| v.as_u64()) {
                ids.push(id as i64);
            }
        }
        Ok(ids)
    }

    /// A query matching the chunks whose body holds every analysed term of `name`; `None`
    /// when `name` analyses to no term.
    fn holding_all(&self, name: &str) -> Option<BooleanQuery> {
        let terms = self.terms(name);
        if terms.is_empty() {
            return None;
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = terms
            .iter()
            .map(|term| {
                let q: Box<dyn Query> = Box::new(TermQuery::new(
                    Term::from_field_text(self.fields.body, term),
                    IndexRecordOption::Basic,
                ));
                (Occur::Must, q)
            })
            .collect();
        Some(BooleanQuery::new(clauses))
    }

    /// BM25 top `limit` chunks for `query` among documents `allowed` accepts, best first.
    /// Each term is scored in the body and, more lightly, in title, aliases and tags.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        allowed: Arc<dyn Fn(u64) -> bool + Send + Sync>,
    ) -> Result<Vec<(i64, f32)>> {
        let terms = self.terms(query);
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for term in &terms {
            for (field, boost) in [
                (f.body, 1.0),
                (f.title, 0.3),
                (f.aliases, 1.0),
                (f.tags, 0.3),
            ] {
                let q = TermQuery::new(
                    Term::from_field_text(field, term),
                    IndexRecordOption::WithFreqs,
                );
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
            }
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let predicate = move |document_id: u64| allowed(document_id);
        let collector = FilterCollector::new(
            "document_id".to_string(),
            predicate,
            TopDocs::with_limit(limit).order_by_score(),
        );
        let top: Vec<(f32, DocAddress)> = searcher.search(&query, &collector)?;
        let mut out = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address)?;
            if let Some(id) = doc.get_first(f.chunk_id).and_then(|v| v.as_u64()) {
                out.push((id as i64, score));
            }
        }
        Ok(out)
    }
}
