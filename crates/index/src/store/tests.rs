//! The record store's contract, one test body run on each engine: SQLite in a temp dir and,
//! when the tests have one, a PostgreSQL schema of the test's own.

use super::test_db::TestSchema;
use super::*;
use crate::LinkRecord;

/// A store of each engine the tests can reach, with what keeps it alive.
fn every_store(test: impl Fn(&mut dyn RecordStore)) {
    let dir = tempfile::tempdir().unwrap();
    let mut sqlite = open(&RecordsLocation::DataDir, dir.path(), Creating::Always).unwrap();
    test(sqlite.as_mut());
    if let Some(url) = test_db::url() {
        let schema = TestSchema::new(url);
        let mut postgres = open(&schema.location(), dir.path(), Creating::Always).unwrap();
        assert_eq!(postgres.backend(), "postgres");
        test(postgres.as_mut());
    }
}

fn document(path: &str) -> DocumentRecord {
    DocumentRecord {
        id: 0,
        path: path.to_string(),
        size: 42,
        mtime_ns: 1_700_000_000_123_456_789,
        hash: "abc".into(),
        title: format!("Title of {path}"),
        tags: vec!["ops".into(), "db".into()],
        aliases: vec!["alias".into()],
        description: Some("what it is".into()),
        supersedes: vec!["old.md".into()],
        created_by: None,
        session: Some("s1".into()),
        links: vec![LinkRecord {
            kind: "wiki".into(),
            target: "other".into(),
            heading: Some("Part".into()),
            line: 7,
        }],
        total_lines: 12,
    }
}

fn chunk(text: &str, line: usize) -> ragdown_markdown::Chunk {
    ragdown_markdown::Chunk {
        heading: format!("H {line}"),
        breadcrumb: format!("Doc › H {line}"),
        text: text.to_string(),
        line_start: line,
        line_end: line + 2,
    }
}

fn key(n: u8) -> [u8; 32] {
    [n; 32]
}

fn vector(n: u8) -> Vec<f32> {
    vec![f32::from(n), -0.5, 0.25]
}

/// Writes `path` with two chunks: the first with vector `a` and pieces `a + 10`, `a + 11`,
/// the second with vector `a + 1`.
fn write(store: &mut dyn RecordStore, path: &str, a: u8) -> (i64, Vec<i64>, u64) {
    store
        .put_vectors(&[
            (key(a), vector(a)),
            (key(a + 1), vector(a + 1)),
            (key(a + 10), vector(a + 10)),
            (key(a + 11), vector(a + 11)),
        ])
        .unwrap();
    let (first, second) = (chunk(&format!("first {a}"), 1), chunk("second", 5));
    let pieces = [key(a + 10), key(a + 11)];
    store
        .replace_document(
            &document(path),
            &[
                NewChunk {
                    chunk: &first,
                    vector_key: key(a),
                    piece_keys: &pieces,
                },
                NewChunk {
                    chunk: &second,
                    vector_key: key(a + 1),
                    piece_keys: &[],
                },
            ],
        )
        .unwrap()
}

#[test]
fn documents_and_chunks_read_back_as_written() {
    every_store(|store| {
        let (id, chunk_ids, generation) = write(store, "a.md", 1);
        assert_eq!(generation, 1);
        assert_eq!(store.generation().unwrap(), 1);
        let documents = store.documents().unwrap();
        assert_eq!(
            documents,
            vec![DocumentRecord {
                id,
                ..document("a.md")
            }]
        );
        assert_eq!(store.document_id("a.md").unwrap(), Some(id));
        assert_eq!(store.document_id("b.md").unwrap(), None);
        let all = store.chunks(None).unwrap();
        let one = store.chunks(Some(id)).unwrap();
        for chunks in [&all, &one] {
            let ids: Vec<i64> = chunks.iter().map(|c| c.record.id).collect();
            assert_eq!(ids, chunk_ids);
            assert_eq!(chunks[0].record.text, "first 1");
            assert_eq!(chunks[0].record.ord, 0);
            assert_eq!(
                (chunks[1].record.line_start, chunks[1].record.line_end),
                (5, 7)
            );
            assert_eq!(chunks[1].record.breadcrumb, "Doc › H 5");
            assert_eq!(chunks[0].vector, vector(1));
            assert_eq!(chunks[0].pieces, [vector(11), vector(12)].concat());
            assert!(chunks[1].pieces.is_empty());
        }
    });
}

#[test]
fn replacing_a_document_keeps_its_id_and_journals_each_change() {
    every_store(|store| {
        let (id, old_chunks, _) = write(store, "a.md", 1);
        write(store, "b.md", 20);
        let (same_id, new_chunks, generation) = write(store, "a.md", 40);
        assert_eq!((same_id, generation), (id, 3));
        assert!(new_chunks.iter().all(|c| !old_chunks.contains(c)));
        let texts: Vec<String> = store
            .chunks(Some(id))
            .unwrap()
            .into_iter()
            .map(|c| c.record.text)
            .collect();
        assert_eq!(texts, ["first 40", "second"]);
        assert_eq!(
            store.journal_since(1).unwrap(),
            Some(vec!["a.md".to_string(), "b.md".to_string()])
        );
        assert_eq!(
            store.journal_since(2).unwrap(),
            Some(vec!["a.md".to_string()])
        );
        assert_eq!(store.journal_since(3).unwrap(), Some(vec![]));
        assert_eq!(store.remove_document("b.md").unwrap(), 4);
        assert_eq!(store.documents().unwrap().len(), 1);
        assert_eq!(
            store.chunks(None).unwrap().len(),
            2,
            "b.md's chunks went with it"
        );
    });
}

#[test]
fn sections_that_share_a_vector_each_load_it() {
    every_store(|store| {
        // Two documents with the same sections: every vector has two users.
        write(store, "a.md", 1);
        write(store, "c.md", 1);
        let chunks = store.chunks(None).unwrap();
        assert_eq!(chunks.len(), 4);
        for pair in chunks.chunks(2) {
            assert_eq!(pair[0].vector, vector(1));
            assert_eq!(pair[0].pieces, [vector(11), vector(12)].concat());
            assert_eq!(pair[1].vector, vector(2));
            assert!(pair[1].pieces.is_empty());
        }
    });
}

#[test]
fn a_snapshot_reads_each_vector_rounded_as_the_f32_records_would_round() {
    use ragdown_embed::int8::OwnedInt8;
    every_store(|store| {
        // Shared vectors (two users each) and a document of its own.
        write(store, "a.md", 1);
        write(store, "c.md", 1);
        write(store, "d.md", 30);
        let stored = store.chunks(None).unwrap();
        let read = |store: &mut dyn RecordStore, vectors: bool| {
            let mut chunks = Vec::new();
            store
                .snapshot_chunks(vectors, &mut |c| chunks.push(c))
                .unwrap();
            chunks
        };
        let rounded = read(store, true);
        assert_eq!(rounded.len(), stored.len());
        for (r, s) in rounded.iter().zip(&stored) {
            assert_eq!(r.record.id, s.record.id);
            assert_eq!(r.record.text, s.record.text);
            assert_eq!(r.vector, Some(OwnedInt8::new(&s.vector)));
            let pieces: Vec<OwnedInt8> = s.pieces.chunks(3).map(OwnedInt8::new).collect();
            assert_eq!(r.pieces, pieces);
        }
        assert_eq!(rounded[0].pieces.len(), 2, "the first section's two pieces");
        let bare = read(store, false);
        let ids = |c: &[SnapshotChunk]| c.iter().map(|c| c.record.id).collect::<Vec<_>>();
        assert_eq!(ids(&bare), ids(&rounded));
        assert!(
            bare.iter()
                .all(|c| c.vector.is_none() && c.pieces.is_empty())
        );
    });
}

#[test]
fn a_released_sweep_drops_only_what_replaced_and_removed_documents_no_longer_use() {
    every_store(|store| {
        // a.md uses 1, 2, 11, 12; b.md 30, 31, 40, 41; c.md 1 (shared with a.md), 2, 11, 12.
        write(store, "a.md", 1);
        write(store, "b.md", 30);
        write(store, "c.md", 1);
        // Cached but never used: only a whole sweep finds it.
        store.put_vectors(&[(key(99), vector(99))]).unwrap();
        // a.md is rewritten with 50, 51, 60, 61: its old keys are still c.md's.
        write(store, "a.md", 50);
        assert_eq!(store.collect_unused_vectors(Sweep::Released).unwrap(), 0);
        // b.md goes: its four keys are released and used by nothing else.
        store.remove_document("b.md").unwrap();
        assert_eq!(store.collect_unused_vectors(Sweep::Released).unwrap(), 4);
        let left = |store: &mut dyn RecordStore, keys: &[u8]| {
            let keys: Vec<[u8; 32]> = keys.iter().map(|k| key(*k)).collect();
            store.cached_vectors(&keys).unwrap().len()
        };
        assert_eq!(left(store, &[30, 31, 40, 41]), 0);
        assert_eq!(left(store, &[1, 2, 11, 12, 50, 51, 60, 61]), 8);
        // Collecting forgets what it looked at: nothing more is released.
        assert_eq!(store.collect_unused_vectors(Sweep::Released).unwrap(), 0);
        assert_eq!(left(store, &[99]), 1);
        assert_eq!(store.collect_unused_vectors(Sweep::All).unwrap(), 1);
        assert_eq!(left(store, &[99]), 0);
    });
}

#[test]
fn the_vector_cache_keeps_the_first_vector_and_drops_unused_ones() {
    every_store(|store| {
        write(store, "a.md", 1);
        store
            .put_vectors(&[(key(1), vec![9.0; 3]), (key(99), vector(99))])
            .unwrap();
        let cached = store.cached_vectors(&[key(1), key(99), key(200)]).unwrap();
        assert_eq!(cached.len(), 2);
        assert_eq!(cached[&key(1)], vector(1), "a cached key keeps its vector");
        assert_eq!(cached[&key(99)], vector(99));
        // 99 is used by no chunk or piece; 1, 2, 11 and 12 are.
        assert_eq!(store.collect_unused_vectors(Sweep::All).unwrap(), 1);
        assert_eq!(
            store
                .cached_vectors(&[key(1), key(2), key(11), key(12), key(99)])
                .unwrap()
                .len(),
            4
        );
    });
}

#[test]
fn clearing_keeps_meta_and_optionally_the_vectors() {
    every_store(|store| {
        store.set_meta("embedder", "e1").unwrap();
        store.set_meta("embedder", "e2").unwrap();
        write(store, "a.md", 1);
        store.clear(true).unwrap();
        assert!(store.documents().unwrap().is_empty());
        assert!(store.chunks(None).unwrap().is_empty());
        assert_eq!(store.meta("embedder").unwrap().as_deref(), Some("e2"));
        assert_eq!(store.cached_vectors(&[key(1)]).unwrap().len(), 1);
        store.clear(false).unwrap();
        assert!(store.cached_vectors(&[key(1)]).unwrap().is_empty());
        // The generation goes on counting up: readers compare it for change.
        assert_eq!(write(store, "a.md", 1).2, 2);
    });
}

#[test]
fn a_pruned_journal_says_so_instead_of_answering_short() {
    every_store(|store| {
        write(store, "a.md", 1);
        write(store, "b.md", 20);
        store.prune_journal(2).unwrap();
        write(store, "c.md", 40);
        match store.backend() {
            // One BM25 index per SQLite index: it committed at 2, so only what follows counts.
            "sqlite" => {
                assert_eq!(store.journal_since(0).unwrap(), None);
                assert_eq!(
                    store.journal_since(2).unwrap(),
                    Some(vec!["c.md".to_string()])
                );
            }
            // Every server keeps a BM25 index of its own: recent entries stay for them.
            _ => assert_eq!(
                store.journal_since(0).unwrap(),
                Some(vec!["a.md".into(), "b.md".into(), "c.md".into()])
            ),
        }
        let id = store.document_id("a.md").unwrap().unwrap();
        store.touch_document(id, 7, 8).unwrap();
        let documents = store.documents().unwrap();
        let touched = documents.iter().find(|d| d.id == id).unwrap();
        assert_eq!((touched.size, touched.mtime_ns), (7, 8));
        assert!(documents.iter().all(|d| d.id == id || d.size == 42));
    });
}

#[test]
fn folders_in_one_database_do_not_see_each_other() {
    let Some(url) = test_db::url() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (TestSchema::new(url.clone()), TestSchema::new(url));
    let mut first = open(&one.location(), dir.path(), Creating::Always).unwrap();
    write(first.as_mut(), "a.md", 1);
    let mut second = open(&two.location(), dir.path(), Creating::Always).unwrap();
    assert!(second.documents().unwrap().is_empty());
    assert_eq!(second.generation().unwrap(), 0);
    // Reopening finds the records where they were, without migrating again.
    drop(first);
    let mut again = open(&one.location(), dir.path(), Creating::Always).unwrap();
    assert_eq!(again.documents().unwrap().len(), 1);
}

#[test]
fn a_schema_from_a_newer_ragdown_is_refused_with_the_fix() {
    let Some(url) = test_db::url() else { return };
    let schema = TestSchema::new(url.clone());
    drop(open(&schema.location(), Path::new("."), Creating::Always).unwrap());
    let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
    client
        .batch_execute(&format!(
            "INSERT INTO \"{}\".schema_version(version) VALUES (999)",
            schema.name
        ))
        .unwrap();
    let err = open(&schema.location(), Path::new("."), Creating::Always)
        .err()
        .unwrap();
    let message = err.to_string();
    assert!(
        message.contains("version 999") && message.contains("upgrade ragdown"),
        "{message}"
    );
}

#[test]
fn an_unreachable_database_is_named_without_its_password() {
    // Nothing listens on port 1; the connection is refused at once.
    let url = "postgres://ann:s3cret@127.0.0.1:1/kb";
    let err = open(
        &RecordsLocation::Postgres {
            url: url.into(),
            schema: "ragdown_x".into(),
            dense: DensePool::Memory,
        },
        Path::new("."),
        Creating::Always,
    )
    .err()
    .unwrap();
    let message = err.to_string();
    assert!(
        message.contains("postgres://ann:***@127.0.0.1:1/kb") && !message.contains("s3cret"),
        "{message}"
    );
    assert!(message.contains("cannot connect"), "{message}");
}
