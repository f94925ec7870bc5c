use std::sync::Arc;

use ragdown_embed::TextKind;
use ragdown_embed::hash::HashEmbedder;

use super::*;

struct Fixture {
    docs: tempfile::TempDir,
    data: tempfile::TempDir,
    /// The PostgreSQL schema of the records, when they are not in the data dir.
    schema: Option<store::test_db::TestSchema>,
}

impl Fixture {
    fn new() -> Self {
        Self {
            docs: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
            schema: None,
        }
    }

    fn on_postgres(url: String) -> Self {
        Self {
            schema: Some(store::test_db::TestSchema::new(url)),
            ..Self::new()
        }
    }

    fn records(&self) -> store::RecordsLocation {
        self.schema
            .as_ref()
            .map_or(store::RecordsLocation::DataDir, |s| s.location())
    }

    fn settings(&self, max_file_bytes: u64) -> IndexSettings {
        IndexSettings {
            root: self.docs.path().to_path_buf(),
            data_dir: self.data.path().to_path_buf(),
            max_file_bytes,
            records: self.records(),
        }
    }

    fn write(&self, rel: &str, text: &str) {
        let full = self.docs.path().join(rel);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }

    fn open_with(&self, dim: usize) -> Index {
        Index::open(self.settings(65536), Arc::new(HashEmbedder::new(dim))).unwrap()
    }

    fn open(&self) -> Index {
        self.open_with(64)
    }

    fn open_documents_only(&self) -> Index {
        Index::open_holding(
            self.settings(65536),
            Arc::new(HashEmbedder::new(64)),
            Holding::DocumentsOnly,
        )
        .unwrap()
    }
}

/// Runs `test` on records in the data dir (SQLite), then on PostgreSQL when the tests have
/// one: one test body, both stores.
fn on_every_backend(test: impl Fn(Fixture)) {
    test(Fixture::new());
    if let Some(url) = store::test_db::url() {
        test(Fixture::on_postgres(url));
    }
}

fn all_bm25(index: &Index, query: &str) -> Vec<i64> {
    index
        .bm25_search(query, 50, Arc::new(|_| true))
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

/// A vector as the snapshot keeps it: its int8 components and scale.
fn int8(vector: &[f32]) -> (Vec<i8>, f32) {
    let mut values = Vec::new();
    let scale = ragdown_embed::int8::quantize(vector, &mut values);
    (values, scale)
}

fn owned(vector: ragdown_embed::int8::Int8Vector) -> (Vec<i8>, f32) {
    (vector.values.to_vec(), vector.scale)
}

/// The snapshot must hold exactly what the records hold (as int8).
fn assert_snapshot_matches_records(index: &Index) {
    let snap = index.snapshot();
    let mut store = index.store().unwrap();
    let stored = store.chunks(None).unwrap();
    let live: Vec<i64> = snap.chunks().map(|(c, _)| c.id).collect();
    assert_eq!(live, stored.iter().map(|c| c.record.id).collect::<Vec<_>>());
    for c in &stored {
        let (_, vector) = snap.chunk(c.record.id).unwrap();
        assert_eq!(owned(vector), int8(&c.vector));
        let pieces: Vec<(Vec<i8>, f32)> = snap.pieces(c.record.id).map(owned).collect();
        let want: Vec<(Vec<i8>, f32)> = c.pieces.chunks_exact(snap.dim).map(int8).collect();
        assert_eq!(pieces, want, "pieces of chunk {}", c.record.id);
    }
    assert_eq!(snap.document_count(), store.documents().unwrap().len());
}

const SETTINGS_TABLE: &str = "# Svc\n\n## Settings\n\nKeys live in svc.yaml and are read once at start.\n\n\
| Key | Default | Meaning |\n|---|---|---|\n| `retry_ms` | `2000` | Initial delay between retries |\n\
| `port` | `9630` | Port the server binds to |\n\n## Owner\n\nThe platform team.\n";

#[test]
fn pieces_of_a_section_are_embedded_stored_and_reloaded() {
    on_every_backend(|f| {
        f.write("svc.md", SETTINGS_TABLE);
        let index = f.open();
        let report = index.sync().unwrap();
        // Two chunks; `Settings` has a paragraph and two table rows, `Owner` one paragraph.
        assert_eq!((report.embedded, report.embedded_pieces), (2, 3));
        let snap = index.snapshot();
        let counts: Vec<(String, usize)> = snap
            .chunks()
            .map(|(c, _)| (c.heading.clone(), snap.pieces(c.id).count()))
            .collect();
        assert_eq!(
            counts,
            vec![
                ("Svc › Settings".to_string(), 3),
                ("Svc › Owner".to_string(), 0)
            ]
        );
        // Each piece vector is the embedder's vector of the piece text, in block order.
        let settings = snap.chunks().next().unwrap().0.clone();
        let texts = ragdown_markdown::pieces::piece_texts("Svc", &settings.text);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let want = index.embedder().embed(&refs, TextKind::Document).unwrap();
        let got: Vec<(Vec<i8>, f32)> = snap.pieces(settings.id).map(owned).collect();
        assert_eq!(got, want.iter().map(|v| int8(v)).collect::<Vec<_>>());
        assert_snapshot_matches_records(&index);

        // Editing one row embeds the chunk and that row's piece; the other pieces are cached.
        f.write("svc.md", &SETTINGS_TABLE.replace("`9630`", "`9631`"));
        let report = index.sync().unwrap();
        assert_eq!((report.embedded, report.embedded_pieces), (1, 1));
        assert_snapshot_matches_records(&index);
        drop(index);
        let index = f.open();
        assert_eq!(index.snapshot().pieces(settings.id + 2).count(), 3);
        assert_snapshot_matches_records(&index);
    });
}

/// The whole-index load (sequential scans joined in memory) returns what the per-document
/// reads (joins in SQL) return: the same chunks in id order, each with its vector and pieces,
/// including two sections whose identical text shares one cached vector.
#[test]
fn loading_every_chunk_at_once_matches_loading_each_document() {
    on_every_backend(|f| {
        f.write("svc.md", SETTINGS_TABLE);
        f.write(
            "twin.md",
            "# Twin\n\n## A\n\nSame words.\n\n## B\n\nSame words.\n",
        );
        f.write("other.md", &long_document(5, None));
        let index = f.open();
        index.sync().unwrap();
        std::fs::remove_file(f.docs.path().join("other.md")).unwrap();
        f.write("other.md", &long_document(5, Some(2)));
        index.sync().unwrap();
        let mut store = index.store().unwrap();
        let all = store.chunks(None).unwrap();
        let mut documents: Vec<i64> = store.documents().unwrap().iter().map(|d| d.id).collect();
        documents.sort_unstable();
        let mut one_by_one: Vec<_> = documents
            .iter()
            .flat_map(|d| store.chunks(Some(*d)).unwrap())
            .collect();
        one_by_one.sort_by_key(|c| c.record.id);
        assert!(all.len() >= 9, "{} chunks", all.len());
        assert!(all.iter().any(|c| !c.pieces.is_empty()));
        assert_eq!(all.len(), one_by_one.len());
        for (a, b) in all.iter().zip(&one_by_one) {
            assert_eq!(a.record.id, b.record.id);
            assert_eq!(a.record.text, b.record.text);
            assert_eq!(a.vector, b.vector, "vector of chunk {}", a.record.id);
            assert_eq!(a.pieces, b.pieces, "pieces of chunk {}", a.record.id);
        }
        // A snapshot opened from the records (vectors rounded as they are read) holds what
        // the sync's own snapshot (rounded as they were embedded) holds.
        let live = index.snapshot();
        let opened = crate::Snapshot::from_records(&mut **store, live.dim, true).unwrap();
        assert_eq!(opened.chunk_count(), live.chunk_count());
        for (c, v) in live.chunks() {
            let (_, w) = opened.chunk(c.id).unwrap();
            assert_eq!(v, w, "vector of chunk {}", c.id);
            let pieces =
                |s: &crate::Snapshot| s.pieces(c.id).map(|p| p.to_f32()).collect::<Vec<_>>();
            assert_eq!(pieces(&live), pieces(&opened), "pieces of chunk {}", c.id);
        }
    });
}

#[test]
fn a_new_store_layout_rebuilds_but_keeps_the_vector_cache() {
    on_every_backend(|f| {
        f.write("svc.md", SETTINGS_TABLE);
        let index = f.open();
        index.sync().unwrap();
        index
            .store()
            .unwrap()
            .set_meta("store_version", "0")
            .unwrap();
        drop(index);
        let index = f.open();
        assert!(
            index
                .rebuilt_because()
                .is_some_and(|r| r.contains("store_version")),
            "{:?}",
            index.rebuilt_because()
        );
        let report = index.sync().unwrap();
        assert_eq!(report.added, 1);
        assert_eq!((report.embedded, report.embedded_pieces), (0, 0));
        assert_eq!(index.snapshot().chunk_count(), 2);
        assert_snapshot_matches_records(&index);
    });
}

fn long_document(sections: usize, edited: Option<usize>) -> String {
    let mut text = String::from("# Big\n\n");
    for i in 0..sections {
        let body = if Some(i) == edited {
            "changed words here"
        } else {
            "original words"
        };
        text.push_str(&format!("## Section {i}\n\nSection {i} has {body}.\n\n"));
    }
    text
}

#[test]
fn a_process_that_writes_and_exits_keeps_its_bm25_merges() {
    let f = Fixture::new();
    // Each new document a segment of its own, left unmerged.
    let words = [
        "alder", "birch", "cedar", "dogwood", "elm", "fir", "ginkgo", "hazel", "ivy",
    ];
    for (i, word) in words.iter().enumerate() {
        f.write(
            &format!("{i}.md"),
            &format!("# Tree {i}\n\nThe {word} grows here.\n"),
        );
        let index = f.open();
        index.bm25.stop_merging();
        index.sync().unwrap();
    }
    let segments = f.open().bm25.segment_count();
    assert_eq!(segments, words.len(), "a segment a document");
    // One process per re-sync, as the CLI runs them. Re-editing the first document empties
    // its old segment; the merge its commit plans still names that segment and is thrown
    // away unless planned again.
    for round in 0..3 {
        f.write(
            "0.md",
            &format!("# Tree 0\n\nThe alder grows here, round {round}.\n"),
        );
        let index = f.open();
        index.sync().unwrap();
        index.finish_merges().unwrap();
    }
    let index = f.open();
    let after = index.bm25.segment_count();
    assert!(
        after < segments / 2,
        "{segments} segments before, {after} after"
    );
    for word in words {
        assert_eq!(all_bm25(&index, word).len(), 1, "{word}");
    }
}

#[test]
fn sync_indexes_then_skips_unchanged_files() {
    on_every_backend(|f| {
        f.write(
            "ops/backups.md",
            "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n",
        );
        f.write("b.md", "plain text");
        let index = f.open();
        let report = index.sync().unwrap();
        assert_eq!((report.added, report.embedded), (2, 3));
        assert_eq!(index.snapshot().chunk_count(), 3);
        let again = index.sync().unwrap();
        assert_eq!(
            (again.added, again.updated, again.unchanged, again.embedded),
            (0, 0, 2, 0)
        );
        let hits = all_bm25(&index, "pg_restore");
        assert_eq!(hits.len(), 1);
        let snap = index.snapshot();
        let (chunk, _) = snap.chunk(hits[0]).unwrap();
        assert_eq!(chunk.breadcrumb, "Backups › Restore");
        assert_eq!((chunk.line_start, chunk.line_end), (7, 7));
        assert_snapshot_matches_records(&index);
    });
}

/// The sections holding every term of a name: counted, and listed up to a limit.
#[test]
fn the_sections_holding_all_of_a_names_words_are_counted_and_listed() {
    let f = Fixture::new();
    f.write(
        "rooms.md",
        "# Rooms\n\nRoom version 10 is the default.\n\n## Old\n\nVersion 9 and room 11.\n\n\
         ## Other\n\nNo such words.\n",
    );
    let index = f.open();
    index.sync().unwrap();
    assert_eq!(index.chunks_holding_all("room version").unwrap(), 2);
    let mut all = index.chunk_ids_holding_all("Room Version", 10).unwrap();
    all.sort_unstable();
    assert_eq!(all.len(), 2);
    let snap = index.snapshot();
    let breadcrumbs: Vec<&str> = all
        .iter()
        .map(|id| snap.chunk(*id).unwrap().0.breadcrumb.as_str())
        .collect();
    assert_eq!(breadcrumbs, ["Rooms", "Rooms › Old"]);
    assert_eq!(
        index
            .chunk_ids_holding_all("room version", 1)
            .unwrap()
            .len(),
        1
    );
    assert!(
        index
            .chunk_ids_holding_all("room lobby", 10)
            .unwrap()
            .is_empty()
    );
    // Stop words alone are no term: nothing holds them.
    assert!(
        index
            .chunk_ids_holding_all("the of", 10)
            .unwrap()
            .is_empty()
    );
}

/// A search between a writer's opening and its first sync's file count is told the index
/// is being built, not that nothing matches; once a sync finished, or when documents are
/// already indexed, a search is told nothing.
#[test]
fn a_first_index_is_reported_before_its_files_are_counted() {
    let f = Fixture::new();
    f.write("a.md", "# A\n\nLighthouse lamps.\n");
    let index = f.open();
    let pending = index.sync_progress().expect("the first sync is owed");
    assert_eq!(pending.files_total, 0);
    assert!(pending.describe().contains("0 files read"), "{pending:?}");
    index.sync().unwrap();
    assert_eq!(index.sync_progress(), None, "synced");

    let reopened = f.open();
    assert_eq!(
        reopened.sync_progress(),
        None,
        "documents are already indexed"
    );

    let empty = Fixture::new();
    let index = empty.open();
    assert!(index.sync_progress().is_some());
    index.sync().unwrap();
    assert_eq!(
        index.sync_progress(),
        None,
        "an empty folder, synced, has nothing coming"
    );
}

#[test]
fn editing_one_section_of_200_embeds_one_chunk() {
    on_every_backend(|f| {
        f.write("big.md", &long_document(200, None));
        let index = f.open();
        let first = index.sync().unwrap();
        assert_eq!(first.embedded, 200);
        // Same size and mtime would be skipped; the edit changes the bytes.
        f.write("big.md", &long_document(200, Some(117)));
        let before = index.embedded_chunks();
        let report = index.sync().unwrap();
        assert_eq!(report.updated, 1);
        assert_eq!(index.embedded_chunks() - before, 1);
        assert_eq!(index.snapshot().chunk_count(), 200);
        assert_snapshot_matches_records(&index);
    });
}

#[test]
fn a_renamed_file_embeds_nothing_and_the_old_path_goes() {
    on_every_backend(|f| {
        f.write("a.md", "# A\n\nalpha text\n\n## B\n\nbeta text\n");
        let index = f.open();
        index.sync().unwrap();
        std::fs::rename(f.docs.path().join("a.md"), f.docs.path().join("renamed.md")).unwrap();
        let report = index.sync().unwrap();
        assert_eq!((report.added, report.removed, report.embedded), (1, 1, 0));
        let snap = index.snapshot();
        assert!(snap.document_by_path("a.md").is_none());
        assert!(snap.document_by_path("renamed.md").is_some());
        assert_eq!(all_bm25(&index, "beta").len(), 1);
        assert_snapshot_matches_records(&index);
    });
}

#[test]
fn deleted_files_are_dropped_everywhere() {
    on_every_backend(|f| {
        f.write("a.md", "gamma");
        f.write("b.md", "delta");
        let index = f.open();
        index.sync().unwrap();
        std::fs::remove_file(f.docs.path().join("a.md")).unwrap();
        let report = index.sync().unwrap();
        assert_eq!(report.removed, 1);
        assert!(all_bm25(&index, "gamma").is_empty());
        assert_eq!(index.snapshot().document_count(), 1);
        assert_snapshot_matches_records(&index);
    });
}

/// A folder's directory that went away (renamed by another server with its records, a volume
/// unmounted) is not read as every document deleted: syncs refuse with a message and keep
/// every record, and a sync once it is back removes nothing.
#[test]
fn a_missing_folder_directory_removes_nothing() {
    on_every_backend(|f| {
        let root = f.docs.path().join("notes");
        f.write("notes/a.md", "gamma");
        f.write("notes/b.md", "delta");
        let index = Index::open(
            IndexSettings {
                root: root.clone(),
                ..f.settings(65536)
            },
            Arc::new(HashEmbedder::new(64)),
        )
        .unwrap();
        index.sync().unwrap();
        let away = f.docs.path().join("away");
        std::fs::rename(&root, &away).unwrap();
        for refused in [
            index.sync().err(),
            index.sync_paths(&["a.md".to_string()]).err(),
        ] {
            assert!(
                matches!(refused, Some(crate::IndexError::FolderMissing(_))),
                "{refused:?}"
            );
        }
        assert_eq!(index.snapshot().document_count(), 2);
        std::fs::rename(&away, &root).unwrap();
        let report = index.sync().unwrap();
        assert_eq!(report.removed, 0);
        assert_eq!(all_bm25(&index, "gamma").len(), 1);
        assert_snapshot_matches_records(&index);
    });
}

#[test]
fn metadata_is_recorded() {
    on_every_backend(|f| {
        f.write(
        "notes/new.md",
        "---\ntitle: New\ntags: [ops]\naliases: [Neo]\nsupersedes: ../old.md\ncreated_by: ragdown_remember\nsession: s1\n---\nBody #inline [[old]]\n",
    );
        f.write("old.md", "old body");
        let index = f.open();
        index.sync().unwrap();
        let snap = index.snapshot();
        let doc = snap.document_by_path("notes/new.md").unwrap();
        assert_eq!(doc.title, "New");
        assert_eq!(doc.tags, vec!["inline", "ops"]);
        assert_eq!(doc.aliases, vec!["Neo"]);
        assert_eq!(doc.supersedes, vec!["old.md"]);
        assert_eq!(doc.created_by.as_deref(), Some("ragdown_remember"));
        assert_eq!(doc.links[0].target, "old");
        assert!(snap.superseded().contains("old.md"));
        // Aliases are searchable through their own BM25 field.
        assert_eq!(all_bm25(&index, "neo").len(), 1);
    });
}

#[test]
fn bad_files_are_skipped_without_aborting_the_sync() {
    on_every_backend(|f| {
        f.write("good.md", "fine text");
        f.write("huge.md", &"x".repeat(70_000));
        std::fs::write(f.docs.path().join("junk.md"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
        std::fs::write(f.docs.path().join("latin1.md"), b"caf\xe9 au lait").unwrap();
        f.write("empty.md", "");
        let index = f.open();
        let report = index.sync().unwrap();
        let skipped: Vec<&str> = report.skipped.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(skipped, vec!["huge.md", "junk.md"]);
        assert!(report.skipped[0].1.contains("RAGDOWN_MAX_FILE_BYTES"));
        assert_eq!(report.added, 3);
        assert_eq!(all_bm25(&index, "lait").len(), 1);
    });
}

#[test]
fn a_changed_embedder_rebuilds_with_a_reason() {
    on_every_backend(|f| {
        f.write("a.md", "text");
        {
            let index = f.open_with(64);
            index.sync().unwrap();
        }
        let index = f.open_with(32);
        assert!(
            index.rebuilt_because().unwrap().contains("hash-64"),
            "{:?}",
            index.rebuilt_because()
        );
        assert_eq!(index.snapshot().chunk_count(), 0);
        index.sync().unwrap();
        assert_eq!(index.snapshot().chunk_count(), 1);
        assert_eq!(index.snapshot().dim, 32);
    });
}

#[test]
fn corrupt_records_are_rebuilt_not_fatal() {
    let f = Fixture::new();
    f.write("a.md", "text");
    std::fs::write(
        crate::data_dir::records(f.data.path()),
        b"this is not sqlite at all, just junk bytes....",
    )
    .unwrap();
    let index = f.open();
    index.sync().unwrap();
    assert_eq!(index.snapshot().chunk_count(), 1);
}

#[test]
fn a_lost_bm25_index_is_rebuilt_from_the_records() {
    on_every_backend(|f| {
        f.write("a.md", "epsilon words");
        {
            let index = f.open();
            index.sync().unwrap();
        }
        std::fs::remove_dir_all(f.records().bm25_dir(f.data.path())).unwrap();
        let index = f.open();
        assert_eq!(all_bm25(&index, "epsilon").len(), 1);
    });
}

#[test]
fn a_bm25_index_behind_the_records_is_caught_up_from_the_journal() {
    on_every_backend(|f| {
        f.write("a.md", "zeta words");
        let index = f.open();
        index.sync().unwrap();
        // Simulate a crash after the records commit but before the BM25 commit.
        let doc = index
            .snapshot()
            .document_by_path("a.md")
            .unwrap()
            .as_ref()
            .clone();
        let chunk = ragdown_markdown::parse("b.md", "eta words")
            .chunks
            .remove(0);
        let key = sync::vector_key("hash-64", &chunk.search_text());
        {
            let mut store = index.store().unwrap();
            store.put_vectors(&[(key, vec![0.0; 64])]).unwrap();
            let record = DocumentRecord {
                id: 0,
                path: "b.md".into(),
                ..doc
            };
            store
                .replace_document(
                    &record,
                    &[store::NewChunk {
                        chunk: &chunk,
                        vector_key: key,
                        piece_keys: &[],
                    }],
                )
                .unwrap();
        }
        drop(index);
        // Catching up re-reads sections from memory: a documents-only opening holds them all.
        let index = f.open_documents_only();
        assert_eq!(index.holding(), Holding::Everything);
        assert_eq!(all_bm25(&index, "eta").len(), 1);
        assert_eq!(all_bm25(&index, "zeta").len(), 1);
    });
}

/// A one-shot sync reads the documents, not every section, and writes what a sync of a fully
/// loaded index writes: added, edited and removed files, their sections, BM25 and counts.
#[test]
fn a_sync_holding_documents_only_writes_what_a_full_one_does() {
    on_every_backend(|f| {
        f.write("a.md", "# A\n\nAlpha lamps.\n\n## B\n\nBeta lamps.\n");
        f.write("b.md", "# B\n\nGamma words.\n");
        f.write("c.md", "# C\n\nDelta words.\n");
        f.open().sync().unwrap();
        f.write(
            "a.md",
            "# A\n\nAlpha lamps, edited.\n\n## B\n\nBeta lamps.\n\n## New\n\nEpsilon words.\n",
        );
        std::fs::remove_file(f.docs.path().join("c.md")).unwrap();
        f.write("d.md", "# D\n\nZeta words.\n");
        let index = f.open_documents_only();
        assert_eq!(index.holding(), Holding::DocumentsOnly);
        assert_eq!(index.snapshot().document_count(), 3);
        assert_eq!(index.snapshot().chunk_count(), 0, "no section was read");
        let report = index.sync().unwrap();
        assert_eq!(
            (
                report.added,
                report.updated,
                report.removed,
                report.unchanged
            ),
            (1, 1, 1, 1)
        );
        let counts = index.chunk_counts().unwrap();
        assert_eq!(counts.values().sum::<usize>(), 5, "{counts:?}");
        drop(index);

        let full = f.open();
        assert_eq!(full.chunk_counts().unwrap(), counts);
        assert_snapshot_matches_records(&full);
        assert_eq!(all_bm25(&full, "epsilon").len(), 1);
        assert_eq!(all_bm25(&full, "delta").len(), 0);
        assert_eq!(all_bm25(&full, "beta").len(), 1);
        let again = full.sync().unwrap();
        assert_eq!((again.updated, again.unchanged), (0, 3));
    });
}

#[test]
fn unchanged_bytes_with_a_new_mtime_are_only_touched() {
    on_every_backend(|f| {
        f.write("a.md", "same");
        let index = f.open();
        index.sync().unwrap();
        let path = f.docs.path().join("a.md");
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        let report = index.sync().unwrap();
        assert_eq!((report.touched, report.updated, report.embedded), (1, 0, 0));
        let again = index.sync().unwrap();
        assert_eq!(again.touched, 0);
    });
}

/// A file an older converter converted is converted again, once, though its bytes are the
/// same: its record's hash does not carry this converter's version.
#[test]
fn files_an_older_converter_converted_are_read_again() {
    let f = Fixture::new();
    f.write("notes.txt", "Rotate the keys every ninety days.\n");
    f.write("a.md", "# A\n\nPlain Markdown.\n");
    let index = f.open();
    index.sync().unwrap();
    drop(index);
    // The records as a converter before CONVERTER_VERSION wrote them: a bare BLAKE3 hash.
    let records = rusqlite::Connection::open(data_dir::records(f.data.path())).unwrap();
    let bare = records
        .execute(
            "UPDATE documents SET hash = substr(hash, instr(hash, ':') + 1) \
             WHERE path = 'notes.txt'",
            [],
        )
        .unwrap();
    assert_eq!(bare, 1);
    drop(records);
    let index = f.open();
    let report = index.sync().unwrap();
    assert_eq!(
        (report.updated, report.unchanged, report.embedded),
        (1, 1, 0),
        "converted again, its vectors from the cache: {report:?}"
    );
    let hash = index
        .snapshot()
        .document_by_path("notes.txt")
        .unwrap()
        .hash
        .clone();
    assert!(
        hash.starts_with(&format!("c{}:", ragdown_convert::CONVERTER_VERSION)),
        "{hash}"
    );
    let again = index.sync().unwrap();
    assert_eq!((again.updated, again.unchanged), (0, 2));
}

#[test]
fn links_resolve_like_obsidian() {
    on_every_backend(|f| {
        f.write("a/Note.md", "beside");
        f.write("b/c/Note.md", "deeper");
        f.write("Note.md", "top");
        f.write("x/Other.md", "---\naliases: [Big Other]\n---\nother");
        f.write("a/linker.md", "links");
        let index = f.open();
        index.sync().unwrap();
        let snap = index.snapshot();
        let path = |t: &str, from: Option<&str>| snap.resolve(t, from).map(|d| d.path.clone());
        assert_eq!(path("a/Note.md", None).as_deref(), Some("a/Note.md"));
        assert_eq!(path("a/Note", None).as_deref(), Some("a/Note.md"));
        assert_eq!(
            path("Note", Some("b/c/x.md")).as_deref(),
            Some("b/c/Note.md")
        );
        assert_eq!(path("Note", Some("x/Other.md")).as_deref(), Some("Note.md"));
        assert_eq!(
            path("Other", Some("a/linker.md")).as_deref(),
            Some("x/Other.md")
        );
        assert_eq!(path("c/Note", None).as_deref(), Some("b/c/Note.md"));
        assert_eq!(path("big other", None).as_deref(), Some("x/Other.md"));
        assert_eq!(
            path("../Note.md", Some("a/linker.md")).as_deref(),
            Some("Note.md")
        );
        assert_eq!(path("missing", None), None);
    });
}

#[test]
fn reset_then_sync_re_embeds_everything() {
    on_every_backend(|f| {
        f.write("a.md", "# A\n\nalpha\n\n## B\n\nbeta");
        let index = f.open();
        index.sync().unwrap();
        index.reset().unwrap();
        assert_eq!(index.snapshot().chunk_count(), 0);
        assert!(all_bm25(&index, "alpha").is_empty());
        let report = index.sync().unwrap();
        assert_eq!((report.added, report.embedded), (1, 2));
        assert_eq!(all_bm25(&index, "alpha").len(), 1);
    });
}

/// Waits (bounded) until `check` holds.
fn eventually(what: &str, check: impl Fn() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("timed out waiting for: {what}");
}

#[test]
fn the_watcher_follows_edits_creates_renames_and_deletes() {
    on_every_backend(|f| {
        f.write("a.md", "# A\n\nalpha words");
        let index = Arc::new(f.open());
        index.sync().unwrap();
        let syncs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = syncs.clone();
        let _follower = watch::Follower::start(index.clone(), true, move |r| {
            r.unwrap();
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        let has = |path: &str| index.snapshot().document_by_path(path).is_some();
        f.write("a.md", "# A\n\nbeta words");
        eventually("the edit is searchable", || {
            all_bm25(&index, "beta").len() == 1
        });
        f.write("sub/new.md", "# New\n\ngamma");
        eventually("the new file is indexed", || has("sub/new.md"));
        std::fs::rename(
            f.docs.path().join("sub/new.md"),
            f.docs.path().join("sub/renamed.md"),
        )
        .unwrap();
        eventually("the rename is followed", || {
            has("sub/renamed.md") && !has("sub/new.md")
        });
        std::fs::remove_file(f.docs.path().join("a.md")).unwrap();
        eventually("the delete is followed", || !has("a.md"));
        // Dot-folders do not wake the watcher (once the syncs above have settled).
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let before = syncs.load(std::sync::atomic::Ordering::SeqCst);
        f.write(".obsidian/workspace.md", "noise");
        std::thread::sleep(std::time::Duration::from_millis(1500));
        assert_eq!(syncs.load(std::sync::atomic::Ordering::SeqCst), before);
    });
}

#[test]
fn polling_follows_changes_when_watching_is_off() {
    on_every_backend(|f| {
        let index = Arc::new(f.open());
        index.sync().unwrap();
        let _follower = watch::Follower::start_with_poll(
            index.clone(),
            false,
            std::time::Duration::from_millis(200),
            |r| {
                r.unwrap();
            },
        );
        f.write("polled.md", "delta");
        eventually("polling picks up the file", || {
            index.snapshot().document_by_path("polled.md").is_some()
        });
    });
}

#[test]
fn a_reader_sees_the_primary_commits_and_can_take_over() {
    on_every_backend(|f| {
        f.write("a.md", "# A\n\nalpha words");
        let primary = f.open();
        primary.sync().unwrap();
        let settings = primary.settings().clone();
        let reader = Index::open_reader(settings, Arc::new(HashEmbedder::new(64))).unwrap();
        assert!(!reader.is_writable());
        assert_eq!(reader.snapshot().document_count(), 1);
        assert!(matches!(reader.sync(), Err(IndexError::Reader)));
        assert!(!reader.refresh().unwrap(), "nothing changed yet");
        f.write("b.md", "# B\n\nbeta words");
        primary.sync().unwrap();
        assert!(reader.refresh().unwrap());
        assert_eq!(reader.snapshot().document_count(), 2);
        assert_eq!(
            all_bm25(&reader, "beta").len(),
            1,
            "the reader sees the primary's BM25 commit"
        );
        drop(primary);
        reader.promote().unwrap();
        f.write("c.md", "# C\n\ngamma words");
        let report = reader.sync().unwrap();
        assert_eq!(report.added, 1);
        assert_eq!(all_bm25(&reader, "gamma").len(), 1);
    });
}

#[test]
fn a_reader_refuses_records_of_another_embedder() {
    on_every_backend(|f| {
        f.write("a.md", "text");
        f.open_with(64).sync().unwrap();
        let err = Index::open_reader(f.settings(65536), Arc::new(HashEmbedder::new(32)))
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("start the primary server first"),
            "{err}"
        );
    });
}

/// The hash embedder, made slow: each text takes `per_text`.
struct SlowEmbedder {
    inner: HashEmbedder,
    per_text: std::time::Duration,
}

impl ragdown_embed::Embedder for SlowEmbedder {
    fn id(&self) -> &str {
        self.inner.id()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn min_score(&self) -> f32 {
        self.inner.min_score()
    }
    fn embed(&self, texts: &[&str], kind: TextKind) -> ragdown_embed::Result<Vec<Vec<f32>>> {
        std::thread::sleep(self.per_text * texts.len() as u32);
        self.inner.embed(texts, kind)
    }
}

/// A write is indexed while a long sync runs, without waiting for it, and the long sync
/// neither loses it nor writes back what it had read of the same file before.
#[test]
fn a_write_is_indexed_at_once_while_a_long_sync_runs() {
    use std::time::{Duration, Instant};
    on_every_backend(|f| {
        f.write("a.md", "# A\n\nThe first version of a.\n");
        let sections: String = (0..300)
            .map(|i| format!("## Part {i}\n\nPart {i} says something about subject {i}.\n\n"))
            .collect();
        f.write("big.md", &format!("# Big\n\n{sections}"));
        let index = Arc::new(
            Index::open(
                f.settings(1 << 20),
                Arc::new(SlowEmbedder {
                    inner: HashEmbedder::new(64),
                    per_text: Duration::from_millis(10),
                }),
            )
            .unwrap(),
        );
        let long = {
            let index = index.clone();
            std::thread::spawn(move || index.sync())
        };
        // a.md is read first; then big.md fills the batch, whose slow embedding starts.
        let deadline = Instant::now() + Duration::from_secs(10);
        while index
            .status()
            .files_done
            .load(std::sync::atomic::Ordering::Relaxed)
            < 1
        {
            assert!(Instant::now() < deadline, "the long sync never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(200));
        f.write(
            "a.md",
            "# A\n\nThe lighthouse keeper wrote the second version.\n",
        );
        f.write("new.md", "# New\n\nA zeppelin over the harbour.\n");
        let started = Instant::now();
        let report = index
            .sync_paths(&["a.md".to_string(), "new.md".to_string()])
            .unwrap();
        let waited = started.elapsed();
        assert!(!long.is_finished(), "the long sync was still running");
        assert!(
            waited < Duration::from_secs(2),
            "the write waited {waited:?}"
        );
        // a.md too is new to the records: the long sync had read it but not yet written it.
        assert_eq!(report.added + report.updated, 2, "{report:?}");
        assert!(!all_bm25(&index, "zeppelin").is_empty());
        assert!(!all_bm25(&index, "lighthouse").is_empty());
        let long_report = long.join().unwrap().unwrap();
        assert_eq!(long_report.added, 1, "big.md: {long_report:?}");
        let snap = index.snapshot();
        let a = snap.document_by_path("a.md").unwrap();
        let a_text: String = snap
            .chunks_of(a.id)
            .iter()
            .map(|c| c.text.clone())
            .collect();
        assert!(a_text.contains("second version"), "{a_text}");
        assert!(snap.document_by_path("new.md").is_some());
        assert!(snap.document_by_path("big.md").is_some());
        assert!(
            all_bm25(&index, "first").is_empty(),
            "the stale reading of a.md is gone"
        );
        assert_snapshot_matches_records(&index);
        // With no sync running the same call works on its own, deletions included.
        std::fs::remove_file(f.docs.path().join("new.md")).unwrap();
        let report = index.sync_paths(&["new.md".to_string()]).unwrap();
        assert_eq!(report.removed, 1);
        assert!(index.snapshot().document_by_path("new.md").is_none());
        assert_snapshot_matches_records(&index);
    });
}

/// Servers sharing records in PostgreSQL: one holds the folder's primary lock and writes;
/// another, with a data dir of its own, follows — its snapshot and its own BM25 index caught
/// up from the journal (adds, edits, deletes) — takes over when the lock is free, and the
/// old primary's writes are refused once it has.
#[test]
fn a_follower_on_shared_records_catches_up_takes_over_and_fences_the_old_primary() {
    use crate::database_lock::DatabaseLock;
    let Some(url) = store::test_db::url() else {
        return;
    };
    let f = Fixture::on_postgres(url.clone());
    let schema = f.schema.as_ref().unwrap().name.clone();
    let first_lock = DatabaseLock::try_take(&url, &schema, f.docs.path())
        .unwrap()
        .expect("the first server is primary");
    assert!(
        DatabaseLock::try_take(&url, &schema, f.docs.path())
            .unwrap()
            .is_none(),
        "one primary per folder"
    );
    f.write("a.md", "# A\n\nalpha words");
    let primary = f.open();
    primary.fence(first_lock.epoch()).unwrap();
    primary.sync().unwrap();

    let other_data = tempfile::tempdir().unwrap();
    let follower_settings = IndexSettings {
        data_dir: other_data.path().to_path_buf(),
        ..f.settings(65536)
    };
    let follower =
        Index::open_follower(follower_settings, Arc::new(HashEmbedder::new(64))).unwrap();
    assert!(follower.is_follower() && !follower.is_writable());
    assert_eq!(follower.snapshot().document_count(), 1);
    assert_eq!(
        all_bm25(&follower, "alpha").len(),
        1,
        "its own BM25, built at open"
    );
    assert!(!follower.refresh().unwrap(), "nothing changed yet");

    f.write("b.md", "# B\n\nbeta words");
    f.write("a.md", "# A\n\nomega words");
    primary.sync().unwrap();
    assert!(follower.refresh().unwrap());
    assert_eq!(follower.snapshot().document_count(), 2);
    assert_eq!(all_bm25(&follower, "beta").len(), 1);
    assert_eq!(all_bm25(&follower, "omega").len(), 1, "the edit followed");
    assert!(all_bm25(&follower, "alpha").is_empty(), "the old text went");
    assert_snapshot_matches_records(&follower);
    std::fs::remove_file(f.docs.path().join("b.md")).unwrap();
    primary.sync().unwrap();
    assert!(follower.refresh().unwrap());
    assert_eq!(follower.snapshot().document_count(), 1);
    assert!(
        all_bm25(&follower, "beta").is_empty(),
        "the delete followed"
    );

    // The primary's session ends (its process died): the follower takes over.
    drop(first_lock);
    let second_lock = DatabaseLock::try_take(&url, &schema, f.docs.path())
        .unwrap()
        .expect("the lock is free once its session ends");
    follower.promote().unwrap();
    follower.fence(second_lock.epoch()).unwrap();
    f.write("c.md", "# C\n\ngamma words");
    assert_eq!(follower.sync().unwrap().added, 1);
    assert_eq!(all_bm25(&follower, "gamma").len(), 1);

    // The old primary did not notice: its next write is refused, not mixed in.
    f.write("d.md", "# D\n\ndelta words");
    let err = primary.sync().expect_err("a fenced write fails");
    assert!(
        err.to_string()
            .contains("another server became the primary"),
        "{err}"
    );
    assert!(follower.sync().is_ok());
    assert_snapshot_matches_records(&follower);
}

/// The database goes away under a follower: searches go on answering from its memory, and
/// once the database is back the follower reconnects and catches up with what was written.
#[test]
fn a_follower_answers_from_memory_while_the_database_is_gone_then_catches_up() {
    let Some(url) = store::test_db::url() else {
        return;
    };
    let f = Fixture::on_postgres(url.clone());
    f.write("a.md", "# A\n\nalpha words");
    let primary = f.open();
    primary.sync().unwrap();
    let door = crate::test_support::CuttableDoor::to(&url);
    let other_data = tempfile::tempdir().unwrap();
    let schema = f.schema.as_ref().unwrap().name.clone();
    let follower = Index::open_follower(
        IndexSettings {
            data_dir: other_data.path().to_path_buf(),
            records: store::RecordsLocation::Postgres {
                url: door.url(),
                schema,
                dense: store::DensePool::Memory,
            },
            ..f.settings(65536)
        },
        Arc::new(HashEmbedder::new(64)),
    )
    .unwrap();
    assert_eq!(all_bm25(&follower, "alpha").len(), 1);

    door.set_open(false);
    f.write("b.md", "# B\n\nbeta words");
    primary.sync().unwrap();
    assert!(
        !follower
            .refresh()
            .expect("no error while the database is gone"),
        "nothing new can be read"
    );
    assert_eq!(
        follower.snapshot().document_count(),
        1,
        "memory still answers"
    );
    assert_eq!(all_bm25(&follower, "alpha").len(), 1);

    door.set_open(true);
    assert!(follower.refresh().unwrap(), "reconnected and caught up");
    assert_eq!(follower.snapshot().document_count(), 2);
    assert_eq!(all_bm25(&follower, "beta").len(), 1);
}

/// The primary rebuilt the shared records for another embedder: a follower still on the old
/// one keeps answering from what it holds instead of mixing two models' vectors.
#[test]
fn a_follower_never_follows_records_rebuilt_for_another_embedder() {
    let Some(url) = store::test_db::url() else {
        return;
    };
    let f = Fixture::on_postgres(url);
    f.write("a.md", "# A\n\nalpha words");
    f.open_with(64).sync().unwrap();
    let other_data = tempfile::tempdir().unwrap();
    let follower = Index::open_follower(
        IndexSettings {
            data_dir: other_data.path().to_path_buf(),
            ..f.settings(65536)
        },
        Arc::new(HashEmbedder::new(64)),
    )
    .unwrap();
    assert_eq!(all_bm25(&follower, "alpha").len(), 1);
    f.write("b.md", "# B\n\nbeta words");
    f.open_with(32).sync().unwrap();
    assert!(!follower.refresh().unwrap(), "nothing followed");
    assert_eq!(follower.snapshot().document_count(), 1);
    assert_eq!(follower.snapshot().dim, 64);
    assert!(all_bm25(&follower, "beta").is_empty());
    assert_eq!(
        all_bm25(&follower, "alpha").len(),
        1,
        "memory still answers"
    );
}

#[test]
fn pending_changes_counts_new_and_edited_files_from_the_records_alone() {
    on_every_backend(|f| {
        let id = ragdown_embed::Embedder::id(&HashEmbedder::new(64)).to_string();
        f.write("a.md", "# A\n\nalpha\n");
        f.write("b.md", "# B\n\nbeta\n");
        // No records yet: everything will be embedded, no count.
        if f.schema.is_none() {
            assert_eq!(crate::pending_changes(&f.settings(65536), &id), None);
        }
        let index = f.open();
        index.sync().unwrap();
        drop(index);
        assert_eq!(crate::pending_changes(&f.settings(65536), &id), Some(0));
        f.write("b.md", "# B\n\nbeta, longer now\n");
        f.write("c.md", "# C\n\ngamma\n");
        std::fs::remove_file(f.docs.path().join("a.md")).unwrap();
        // b edited and c new; a deleted needs no embedding.
        assert_eq!(crate::pending_changes(&f.settings(65536), &id), Some(2));
        // Records of another embedder are rebuilt whole: no count.
        assert_eq!(crate::pending_changes(&f.settings(65536), "other"), None);
    });
}

/// The records' exact answer: the `n` chunks closest to `query` by cosine among `documents`
/// (all when `None`), best first.
fn exact_nearest(
    index: &Index,
    query: &[f32],
    n: usize,
    documents: Option<&[i64]>,
) -> Vec<(i64, f32)> {
    let mut store = index.store().unwrap();
    let mut scored: Vec<(i64, f32)> = store
        .chunks(None)
        .unwrap()
        .iter()
        .filter(|c| documents.is_none_or(|d| d.contains(&c.record.document_id)))
        .map(|c| {
            let dot: f32 = c.vector.iter().zip(query).map(|(a, b)| a * b).sum();
            (c.record.id, dot)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(n);
    scored
}

/// Whether a pool's answer is the exact one: the same cosines best first (ties may come in
/// any order), each hit's cosine its own.
fn same_answer(pooled: &[(i64, f32)], exact: &[(i64, f32)], all: &[(i64, f32)]) -> bool {
    pooled.len() == exact.len()
        && pooled
            .iter()
            .zip(exact)
            .all(|(p, e)| (p.1 - e.1).abs() < 1e-4)
        && pooled.iter().all(|(id, cosine)| {
            all.iter()
                .any(|(other, c)| other == id && (c - cosine).abs() < 1e-4)
        })
}

#[test]
fn a_pgvector_pool_is_filled_from_the_records_and_follows_every_write() {
    use ragdown_embed::Embedder;
    use store::{Allowed, DensePool};
    let Some(url) = store::test_db::url() else {
        return;
    };
    let f = Fixture::on_postgres(url);
    let topics = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
    for (i, topic) in topics.iter().enumerate() {
        f.write(
            &format!("d{i}.md"),
            &format!("# {topic}\n\n{topic} words {i}\n\n## More {topic}\n\nanother {topic} part"),
        );
    }
    // Indexed with vectors in memory first: the pgvector table is made and filled later.
    f.open().sync().unwrap();
    let embedder = Arc::new(HashEmbedder::new(64));
    let settings = IndexSettings {
        records: f
            .schema
            .as_ref()
            .unwrap()
            .location_with(DensePool::Pgvector { ef_search: 100 }),
        ..f.settings(65536)
    };
    let index = Index::open(settings, embedder.clone()).unwrap();
    assert!(!index.snapshot().holds_vectors());
    assert!(
        index.snapshot().chunks().all(|(_, v)| v.values.is_empty()),
        "a snapshot over a pgvector pool holds no vectors"
    );
    let pool = index.vector_index().unwrap();
    let ids = |hits: Vec<(i64, f32)>| hits.into_iter().map(|(id, _)| id).collect::<Vec<_>>();
    let query = embedder.embed_query("gamma words").unwrap();
    let check = |n: usize, allowed: Allowed<'_>, documents: Option<&[i64]>| {
        let pooled = pool.nearest(&query, n, allowed).unwrap();
        let exact = exact_nearest(&index, &query, n, documents);
        let all = exact_nearest(&index, &query, usize::MAX, None);
        assert!(
            same_answer(&pooled, &exact, &all),
            "pool {pooled:?}\nexact {exact:?}"
        );
        if let Some(documents) = documents {
            let snap = index.snapshot();
            assert!(pooled.iter().all(|(id, _)| {
                snap.chunk(*id)
                    .is_some_and(|(c, _)| documents.contains(&c.document_id))
            }));
        }
    };
    check(5, Allowed::All, None);
    // A filter of one document in six: the exact scan of its rows.
    let gamma = index.snapshot().document_by_path("d2.md").unwrap().id;
    let only = [gamma];
    check(
        5,
        Allowed::Only {
            ids: &only,
            total: 6,
        },
        Some(&only),
    );
    // Half the documents: an HNSW walk whose candidates are filtered.
    let half: Vec<i64> = ["d0.md", "d2.md", "d4.md"]
        .iter()
        .map(|p| index.snapshot().document_by_path(p).unwrap().id)
        .collect();
    check(
        4,
        Allowed::Only {
            ids: &half,
            total: 6,
        },
        Some(&half),
    );

    // Edits and removals reach it in the same transaction as the records.
    f.write("d2.md", "# gamma\n\nrewritten gamma text\n");
    std::fs::remove_file(f.docs.path().join("d3.md")).unwrap();
    f.write("d9.md", "# theta\n\ntheta words\n");
    index.sync().unwrap();
    let live: std::collections::HashSet<i64> =
        index.snapshot().chunks().map(|(c, _)| c.id).collect();
    let pooled: std::collections::HashSet<i64> =
        ids(pool.nearest(&query, 100, Allowed::All).unwrap())
            .into_iter()
            .collect();
    assert_eq!(pooled, live);
    check(5, Allowed::All, None);
    // The vectors a search fetches are the records' own.
    let first = *live.iter().min().unwrap();
    let fetched = pool.vectors(&[first, -1]).unwrap();
    assert_eq!(fetched.len(), 1);
    let stored = index.store().unwrap().chunks(None).unwrap();
    let record = stored.iter().find(|c| c.record.id == first).unwrap();
    assert_eq!(fetched[&first].0, record.vector);

    // A full reset drops the table (typed for one dimension); it is made again at once.
    index.reset().unwrap();
    assert!(pool.nearest(&query, 5, Allowed::All).unwrap().is_empty());
    index.sync().unwrap();
    check(5, Allowed::All, None);
}

/// Progress is a fraction whose whole is counted before any file is read (the bytes to
/// index), and it moves while one large file's sections are embedded, instead of showing
/// "0 of N" until the file is done.
#[test]
fn progress_moves_within_a_large_file_and_its_whole_is_known_first() {
    use std::time::Duration;
    let f = Fixture::new();
    let sections: String = (0..200)
        .map(|i| format!("## Part {i}\n\nPart {i} says something about subject {i}.\n\n"))
        .collect();
    f.write("big.md", &format!("# Big\n\n{sections}"));
    f.write("small.md", "# Small\n\nA line.\n");
    let bytes: u64 = ["big.md", "small.md"]
        .iter()
        .map(|p| std::fs::metadata(f.docs.path().join(p)).unwrap().len())
        .sum();
    let index = Arc::new(
        Index::open(
            f.settings(1 << 20),
            Arc::new(SlowEmbedder {
                inner: HashEmbedder::new(64),
                per_text: Duration::from_millis(3),
            }),
        )
        .unwrap(),
    );
    let sync = {
        let index = index.clone();
        std::thread::spawn(move || index.sync())
    };
    let mut seen = Vec::new();
    while !sync.is_finished() {
        if let Some(p) = index.sync_progress()
            && p.files_total > 0
        {
            assert_eq!(p.bytes_total, bytes, "the whole is counted first: {p:?}");
            seen.push(p);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    sync.join().unwrap().unwrap();
    // Both files make one batch: while it was embedded, the share done and the sections
    // indexed rose step by step (before, both jumped from nothing to all at its end).
    let percents: Vec<u8> = seen.iter().filter_map(|p| p.percent()).collect();
    let between: std::collections::BTreeSet<u8> = percents
        .iter()
        .copied()
        .filter(|p| (1..100).contains(p))
        .collect();
    assert!(between.len() >= 3, "{between:?} in {} samples", seen.len());
    assert!(
        percents.windows(2).all(|w| w[0] <= w[1]),
        "never backwards: {percents:?}"
    );
    let sections: std::collections::BTreeSet<usize> = seen
        .iter()
        .filter(|p| p.sections_done > 0 && p.sections_done < p.sections_total)
        .map(|p| p.sections_done)
        .collect();
    assert!(sections.len() >= 3, "{sections:?}");
    assert!(seen.iter().all(|p| p.bytes_done <= p.bytes_total));
}
