use std::sync::Arc;

use ragdown_embed::hash::HashEmbedder;
use ragdown_index::{Index, IndexSettings};

use super::*;

fn index_of(files: &[(&str, &str)]) -> (Index, tempfile::TempDir, tempfile::TempDir) {
    let docs = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let full = docs.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let index = synced(docs.path(), data.path(), Arc::new(HashEmbedder::new(256)));
    (index, docs, data)
}

/// The index of `docs` kept in `data`, synced.
fn synced(
    docs: &std::path::Path,
    data: &std::path::Path,
    embedder: Arc<dyn ragdown_embed::Embedder>,
) -> Index {
    let index = Index::open(
        IndexSettings {
            root: docs.to_path_buf(),
            data_dir: data.to_path_buf(),
            max_file_bytes: 1 << 20,
            records: ragdown_index::store::RecordsLocation::DataDir,
        },
        embedder,
    )
    .unwrap();
    index.sync().unwrap();
    index
}

fn paths(hits: &[Hit]) -> Vec<String> {
    hits.iter()
        .map(|h| format!("{}:{}", h.path(), h.line_start))
        .collect()
}

#[test]
fn finds_by_breadcrumb_and_reports_lines() {
    let (index, _d, _x) = index_of(&[
        (
            "ops/backups.md",
            "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun it twice.\n",
        ),
        ("other.md", "# Weather\n\nSunny in Paris.\n"),
    ]);
    let hits = search(&index, "restore backups", &SearchOptions::default()).unwrap();
    assert_eq!(hits[0].path(), "ops/backups.md");
    assert_eq!(hits[0].breadcrumb, "Backups › Restore");
    assert_eq!((hits[0].line_start, hits[0].line_end), (7, 7));
    assert!(hits[0].sources.contains(&Source::Lexical));
    assert!(hits[0].similarity > 0.0);
}

#[test]
fn filters_by_prefix_tag_and_author() {
    let (index, _d, _x) = index_of(&[
        (
            "projects/alpha/a.md",
            "---\ntags: [project/alpha]\n---\nshared words here",
        ),
        ("projects/alpha-old/b.md", "shared words here"),
        (
            "notes/c.md",
            "---\ncreated_by: ragdown_remember\n---\nshared words here",
        ),
    ]);
    let q = "shared words";
    let with = |o: SearchOptions| paths(&search(&index, q, &o).unwrap());
    let prefix = with(SearchOptions {
        path_prefix: Some("projects/alpha".into()),
        ..Default::default()
    });
    assert_eq!(prefix, vec!["projects/alpha/a.md:4"]);
    let tag = with(SearchOptions {
        tag: Some("project".into()),
        ..Default::default()
    });
    assert_eq!(tag, vec!["projects/alpha/a.md:4"]);
    assert!(
        with(SearchOptions {
            tag: Some("proj".into()),
            ..Default::default()
        })
        .is_empty()
    );
    let agent = with(SearchOptions {
        written_by: Some(WrittenBy::Agent),
        ..Default::default()
    });
    assert_eq!(agent, vec!["notes/c.md:4"]);
    let user = with(SearchOptions {
        written_by: Some(WrittenBy::User),
        ..Default::default()
    });
    assert_eq!(user.len(), 2);
}

#[test]
fn superseded_documents_are_hidden() {
    let (index, _d, _x) = index_of(&[
        ("old.md", "the deploy procedure uses ftp"),
        (
            "new.md",
            "---\nsupersedes: old.md\n---\nthe deploy procedure uses rsync",
        ),
    ]);
    let hits = search(&index, "deploy procedure", &SearchOptions::default()).unwrap();
    assert_eq!(paths(&hits), vec!["new.md:4"]);
}

#[test]
fn alias_named_in_query_lifts_its_document() {
    let (index, _d, _x) = index_of(&[
        (
            "vault.md",
            "---\naliases: [Charon]\n---\n# Vault\n\n## Escalation\n\nPage the vault team.",
        ),
        (
            "queue.md",
            "# Queue\n\n## Escalation\n\nPage the queue team when it breaks down badly.",
        ),
    ]);
    let q = "who gets paged when charon breaks down badly";
    let naive = search(
        &index,
        q,
        &SearchOptions {
            mode: Mode::NaiveRrf,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        naive[0].path(),
        "queue.md",
        "the fixture must need the boost"
    );
    let hits = search(&index, q, &SearchOptions::default()).unwrap();
    assert_eq!(hits[0].path(), "vault.md");
}

#[test]
fn per_document_cap_fills_from_other_documents() {
    let (index, _d, _x) = index_of(&[
        (
            "a.md",
            "# A\n\n## One\n\nalpha beta\n\n## Two\n\nalpha beta gamma\n\n## Three\n\nalpha beta delta",
        ),
        ("b.md", "# B\n\nalpha"),
    ]);
    let opts = SearchOptions {
        max_per_document: 1,
        limit: 3,
        ..Default::default()
    };
    let hits = search(&index, "alpha beta", &opts).unwrap();
    assert_eq!(hits.iter().filter(|h| h.path() == "a.md").count(), 1);
    assert!(hits.iter().any(|h| h.path() == "b.md"));
}

#[test]
fn follow_links_places_linked_sections_after_the_hit() {
    let (index, _d, _x) = index_of(&[
        (
            "incident.md",
            "# Incident\n\nThe outage was recovered with [[procedure]] yesterday.",
        ),
        (
            "procedure.md",
            "# Procedure\n\n## Steps\n\nFirst command: drain.\n\n## Notes\n\nnothing",
        ),
        ("noise.md", "# Noise\n\nunrelated"),
    ]);
    let q = "outage recovered yesterday";
    let off = search(
        &index,
        q,
        &SearchOptions {
            limit: 3,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(off[0].path(), "incident.md");
    let on = search(
        &index,
        q,
        &SearchOptions {
            limit: 3,
            follow_links: 1,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(on[0].path(), "incident.md");
    assert_eq!(on[1].path(), "procedure.md");
    assert_eq!(on[1].sources, vec![Source::Link]);
    assert_eq!(on[1].score, on[0].score);
    assert_eq!(on.len(), 3);
}

#[test]
fn identifier_queries_lean_on_bm25() {
    let files: Vec<(String, String)> = (0..12)
        .map(|i| (format!("svc{i}.md"), format!("# Service {i}\n\n## Retries\n\nThe service retries failed jobs with backoff and jitter {i}.")))
        .chain([("cfg.md".to_string(), "# Config\n\n## Keys\n\nSet `retry_budget_ms` to bound retries.".to_string())])
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (index, _d, _x) = index_of(&refs);
    let hits = search(
        &index,
        "how do retries work with retry_budget_ms",
        &SearchOptions::default(),
    )
    .unwrap();
    assert_eq!(hits[0].path(), "cfg.md");
}

/// A settings table of six rows: one row answers a question the table as a whole is far from.
const SETTINGS_TABLE: &str = "| Key | What it sets |\n|---|---|\n\
    | `pool_size` | open database connections kept warm for bursts |\n\
    | `retry_ms` | initial delay between retries |\n\
    | `cdn_ttl_s` | cache lifetime of product images on edge nodes |\n\
    | `flush_ms` | how often buffered writes reach the disk |\n\
    | `port` | socket number the server binds to on startup |\n\
    | `log_level` | verbosity of messages printed to standard output |";

#[test]
fn a_named_documents_sections_are_ranked_by_their_best_piece_too() {
    let text = format!(
        "---\naliases: [Ursa]\n---\n# Svc\n\n## Settings\n\n{SETTINGS_TABLE}\n\n\
         ## Retries\n\nRetries and their delay show on the dashboard.\n"
    );
    let (index, _d, _x) = index_of(&[("svc.md", &text), ("other.md", "# Other\n\nUnrelated.")]);
    let rest = "what is the initial delay between retries for";
    // The fixture must need the pieces: by whole-section cosine, `Retries` is closer.
    let snap = index.snapshot();
    let rest_vector = index.embedder().embed_query(rest).unwrap();
    let whole: Vec<(String, f32)> = snap
        .chunks()
        .filter(|(c, _)| c.heading.starts_with("Svc › "))
        .map(|(c, v)| (c.heading.clone(), v.dot(&rest_vector)))
        .collect();
    assert!(
        whole[0].0.ends_with("Settings") && whole[0].1 < whole[1].1,
        "{whole:?}"
    );
    let hits = search(&index, &format!("{rest} ursa"), &SearchOptions::default()).unwrap();
    assert_eq!(hits[0].heading, "Svc › Settings", "{:?}", paths(&hits));
    assert!(hits[0].sources.contains(&Source::Section));
}

#[test]
fn a_hits_rise_reads_its_best_piece_too() {
    let text = format!("# Svc\n\n## Settings\n\n{SETTINGS_TABLE}\n");
    let (index, _d, _x) = index_of(&[("svc.md", &text), ("other.md", "# Other\n\nUnrelated.")]);
    let query = "what is the initial delay between retries";
    let hits = search(&index, query, &SearchOptions::default()).unwrap();
    let settings_hit = hits
        .iter()
        .find(|h| h.heading == "Svc › Settings")
        .expect("the settings section is found");
    let calibration = calibration::Calibration::of(&index).expect("a calibrated index");
    let vector = index.embedder().embed_query(query).unwrap();
    let best_piece = index
        .snapshot()
        .pieces(settings_hit.chunk_id)
        .map(|piece| PIECE_WEIGHT * piece.dot(&vector))
        .fold(f32::MIN, f32::max);
    // The fixture must need the piece: the row is closer than the whole table.
    assert!(
        best_piece > settings_hit.similarity,
        "{best_piece} vs {}",
        settings_hit.similarity
    );
    let rise = settings_hit.rise.expect("a rise with a model");
    assert!((rise - calibration.rise(best_piece)).abs() < 1e-4, "{rise}");
    assert!(rise > calibration.rise(settings_hit.similarity));
}

/// The exact dense scan split over threads finds what one thread finds, in the same order,
/// removed chunks (an edited document's old sections) and filtered-out documents included.
#[test]
fn a_scan_split_over_threads_finds_what_one_thread_finds() {
    let files: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("notes/n{i}.md"),
                format!(
                    "# Note {i}\n\nbackup restore {}\n\n## Part\n\nrotation keys {}\n",
                    "alpha ".repeat(i % 7),
                    "beta ".repeat(i % 5)
                ),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let (index, docs, _x) = index_of(&refs);
    std::fs::write(
        docs.path().join("notes/n3.md"),
        "# Note 3\n\nedited backup words\n",
    )
    .unwrap();
    index.sync().unwrap();
    let snap = index.snapshot();
    let mut allowed = vec![true; snap.max_document_id() as usize + 1];
    allowed[1] = false;
    let embedder = HashEmbedder::new(256);
    for query in ["backup restore", "rotation keys beta", "edited words"] {
        let vector = ragdown_embed::Embedder::embed_query(&embedder, query).unwrap();
        let one = hybrid::dense_pool_on(&snap, &vector, &allowed, 7, 1);
        assert_eq!(one.len(), 7);
        for threads in [2, 3, 8] {
            let split = hybrid::dense_pool_on(&snap, &vector, &allowed, 7, threads);
            assert_eq!(split, one, "{query} on {threads} threads");
        }
        let ids: std::collections::HashSet<i64> = snap.chunks().map(|(c, _)| c.id).collect();
        assert!(
            one.iter().all(|(id, _)| ids.contains(id)),
            "only live chunks"
        );
        assert!(
            one.iter()
                .all(|(id, _)| snap.chunk(*id).is_some_and(|(c, _)| c.document_id != 1)),
            "only allowed documents"
        );
    }
}

#[test]
fn a_pgvector_pool_gives_the_hits_the_in_memory_scan_gives() {
    use ragdown_index::store::DensePool;
    use ragdown_index::store::test_db::{TestSchema, url};
    let Some(url) = url() else {
        return;
    };
    let schema = TestSchema::new(url);
    let docs = tempfile::tempdir().unwrap();
    let files = [
        (
            "ops/backups.md",
            "# Backups\n\nNightly snapshots of every volume.\n\n## Restore\n\nRun the restore \
             twice and compare checksums. See [vault](../security/vault.md).\n",
        ),
        (
            "security/vault.md",
            "---\naliases: [Charon]\n---\n# Vault\n\n## Rotation\n\nCredentials are rotated \
             weekly.\n\n## Escalation\n\nPage the vault team.\n",
        ),
        (
            "queue.md",
            "# Queue\n\n## Escalation\n\nPage the queue team when messages pile up.\n\n\
             ## Retention\n\nMessages are kept for seven days.\n",
        ),
        (
            "weather.md",
            "# Weather\n\nSunny in Paris, rain in Brest.\n",
        ),
    ];
    for (path, text) in files {
        let full = docs.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let open = |dense: DensePool, data: &std::path::Path| {
        let index = Index::open(
            IndexSettings {
                root: docs.path().to_path_buf(),
                data_dir: data.to_path_buf(),
                max_file_bytes: 1 << 20,
                records: schema.location_with(dense),
            },
            Arc::new(HashEmbedder::new(256)),
        )
        .unwrap();
        index.sync().unwrap();
        index
    };
    let (memory_data, pgvector_data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let memory = open(DensePool::Memory, memory_data.path());
    let pgvector = open(DensePool::Pgvector { ef_search: 100 }, pgvector_data.path());
    assert!(!pgvector.snapshot().holds_vectors());
    // The pool's cosines are exact where the in-memory scan's are int8: within 0.01.
    let described = |index: &Index, query: &str, opts: &SearchOptions| -> Vec<(String, f32)> {
        search(index, query, opts)
            .unwrap()
            .iter()
            .map(|h| (format!("{}:{}", h.path(), h.line_start), h.similarity))
            .collect()
    };
    let cases = [
        ("restore the backups", SearchOptions::default()),
        ("Charon escalation", SearchOptions::default()),
        ("who gets paged", SearchOptions::default()),
        (
            "escalation",
            SearchOptions {
                path_prefix: Some("security".into()),
                ..Default::default()
            },
        ),
        (
            "restore checksums",
            SearchOptions {
                follow_links: 1,
                ..Default::default()
            },
        ),
    ];
    for (query, opts) in &cases {
        let from_memory = described(&memory, query, opts);
        assert!(!from_memory.is_empty(), "{query}");
        let from_pool = described(&pgvector, query, opts);
        assert!(
            from_pool.len() == from_memory.len()
                && from_pool
                    .iter()
                    .zip(&from_memory)
                    .all(|(p, m)| p.0 == m.0 && (p.1 - m.1).abs() < 0.01),
            "{query}:\n{from_pool:?}\n{from_memory:?}"
        );
    }
    // The calibration reads the pool too: the same levels either way.
    let measured = |index: &Index| {
        crate::calibration::Calibration::measure(index)
            .unwrap()
            .unwrap()
    };
    let (from_memory, from_pool) = (measured(&memory), measured(&pgvector));
    assert!((from_memory.background - from_pool.background).abs() < 0.01);
    assert!((from_memory.answer - from_pool.answer).abs() < 0.01);
    assert_eq!(from_memory.probes, from_pool.probes);
}

#[test]
fn foreign_names_are_the_prompts_names_no_document_mentions() {
    let (index, _d, _x) = index_of(&[
        (
            "synapse.md",
            "# Synapse\n\nFederation lets this homeserver talk to others over Matrix. Element \
             and other clients connect; X-Forwarded-For names them.\n",
        ),
        (
            "rooms.md",
            "# Rooms\n\nNew rooms use room version 10.2 unless configured. Version 3 was \
             the first of this kind. Release 11 changed the defaults for 1 in 4 servers.\n",
        ),
        (
            "ember.md",
            "---\naliases: [ember-deploy]\n---\n# Ember Deploy\n\nRolls releases out.\n",
        ),
    ]);
    let foreign = |prompt| {
        let snap = index.snapshot();
        let all = vec![true; snap.max_document_id() as usize + 1];
        let named = named::named_documents(&snap, prompt, &all);
        let code_names = evidence::code_name_sections(&index, prompt).unwrap();
        evidence::foreign_names(&index, prompt, &named, &code_names).unwrap()
    };
    assert_eq!(
        foreign("how do I configure federation on a Dendrite homeserver?"),
        ["Dendrite"]
    );
    // Names the documents hold (any case, stemmed as BM25 stems them) are not foreign.
    assert!(foreign("does federation work between Matrix homeservers").is_empty());
    // A prompt that names one of the documents is about it, whatever else it mentions.
    assert!(foreign("can ember-deploy roll out to Kubernetes").is_empty());
    assert_eq!(foreign("can it roll out to Kubernetes"), ["Kubernetes"]);
    // A key written as code whose words no section holds together is another program's.
    assert_eq!(
        foreign("nginx limit_req example to rate limit federation"),
        ["limit_req"]
    );
    assert!(foreign("does the federation_homeserver key exist").is_empty());
    assert!(foreign("can ember-deploy use limit_req").is_empty());
    // A version the documents never write is another release's, though they hold its words
    // ("version", "11") apart; one they write (in any case, or as the start of a longer one)
    // is theirs.
    assert_eq!(
        foreign("what changed in Matrix room version 11?"),
        ["version 11"]
    );
    assert_eq!(foreign("what is new in room version 1"), ["version 1"]);
    assert!(foreign("what is new in room version 10").is_empty());
    assert!(foreign("what did version 3 add to rooms").is_empty());
    // So is a name of several words the documents hold only apart; one they write in a row,
    // in any case or punctuation, is theirs.
    assert_eq!(
        foreign("how can a phone running Element X federate with this Matrix homeserver of ours"),
        ["Element X"]
    );
    assert!(foreign("does the Ember Deploy rollout use federation").is_empty());
    assert!(
        foreign(
            "which clients can create Room Version 3 rooms and use federation with this server"
        )
        .is_empty()
    );
}

#[test]
fn rare_code_names_are_the_ones_a_few_sections_hold() {
    let service = |name: &str| {
        format!(
            "# {name}\n\n## Settings\n\nSet `max_connections` to the pool size.\n\n## Flags\n\nPass --dry-run to preview.\n"
        )
    };
    let (index, _d, _x) = index_of(&[
        ("a.md", &service("Alpha")),
        ("b.md", &service("Bravo")),
        ("c.md", &service("Charlie")),
        ("d.md", &service("Delta")),
        (
            "vault.md",
            "# Vault\n\n## Dedup\n\nWith allowParallelDedup on, leases renew twice.\n",
        ),
    ]);
    let rare = |prompt| -> Vec<String> {
        evidence::code_name_sections(&index, prompt)
            .unwrap()
            .into_iter()
            .filter(|(_, sections)| evidence::is_rare(*sections))
            .map(|(name, _)| name)
            .collect()
    };
    assert_eq!(
        rare("what happens when allowParallelDedup is turned on"),
        ["allowparalleldedup"]
    );
    // Four sections hold it: a common word of this folder.
    assert!(rare("what is max_connections for").is_empty());
    assert!(rare("when would I pass --dry-run").is_empty());
    // No section holds it: nothing to point at (the foreign-name gate's business).
    assert!(rare("what does keep_alive_secs do").is_empty());
    assert!(rare("how do I restore the backup").is_empty());
}

#[test]
fn a_title_names_its_document_where_the_folder_does_not_use_its_words_everywhere() {
    let service = |name: &str| {
        format!(
            "# {name}\n\n## Configuration\n\nThe configuration lives in one file.\n\n## Deploy\n\nCheck the configuration first.\n"
        )
    };
    let (index, _d, _x) = index_of(&[
        ("a.md", &service("Alpha")),
        ("b.md", &service("Bravo")),
        ("c.md", &service("Charlie")),
        (
            "vault.md",
            "# Gable Vault\n\n## Leases\n\nLeases renew hourly.\n\n## Rotation\n\nKeys rotate daily.\n",
        ),
        (
            "billing.md",
            "# Billing\n\n## Secrets\n\nBilling reads its keys from Gable Vault.\n",
        ),
        (
            "configuration.md",
            "# Configuration\n\nSee each service's page.\n",
        ),
        (
            "ember.md",
            "---\naliases: [ember-deploy]\n---\n# Ember Deploy\n\n## Rollback\n\nRolls releases back.\n",
        ),
    ]);
    let snap = index.snapshot();
    let all = vec![true; snap.max_document_id() as usize + 1];
    let id = |path| snap.document_by_path(path).unwrap().id;
    let by_title = |prompt| {
        let named = named::named_documents(&snap, prompt, &all);
        assert!(!named.documents.is_empty(), "{prompt:?} names a document");
        evidence::named_by_title(&index, &snap, &named).unwrap()
    };
    // A service's name: its own sections hold it, and one of another service's.
    assert_eq!(
        by_title("how often does gable vault renew leases"),
        [id("vault.md")]
    );
    // A page titled with a word every service's page uses names nothing.
    assert!(by_title("redis sentinel automatic failover configuration").is_empty());
    // Named by its alias: the alias's business, not the title's.
    assert!(by_title("can ember-deploy roll a release back").is_empty());
}

/// A model that says it is still loading (a server's first moments).
struct StillLoading(HashEmbedder);

impl ragdown_embed::Embedder for StillLoading {
    fn id(&self) -> &str {
        self.0.id()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn min_score(&self) -> f32 {
        self.0.min_score()
    }
    fn embed(
        &self,
        texts: &[&str],
        kind: ragdown_embed::TextKind,
    ) -> ragdown_embed::Result<Vec<Vec<f32>>> {
        self.0.embed(texts, kind)
    }
    fn loading(&self) -> bool {
        true
    }
}

#[test]
fn a_search_while_the_model_loads_says_it_is_keyword_only() {
    let (hybrid, docs, _x) =
        index_of(&[("ops/backups.md", "# Backups\n\nRun pg_restore twice.\n")]);
    assert_eq!(keyword_only(&hybrid), None);
    let data = tempfile::tempdir().unwrap();
    let loading = synced(
        docs.path(),
        data.path(),
        Arc::new(StillLoading(HashEmbedder::new(256))),
    );
    let why = keyword_only(&loading).unwrap();
    assert!(why.contains("still loading"), "{why}");
    let hits = search(&loading, "pg_restore twice", &SearchOptions::default()).unwrap();
    assert_eq!(paths(&hits), ["ops/backups.md:3"]);
    assert_eq!(
        hits[0].similarity, 0.0,
        "keyword matches carry no similarity"
    );
}

#[test]
fn a_section_holding_the_names_written_as_code_outranks_one_holding_their_words() {
    let (index, _d, _x) = index_of(&[
        (
            "retention.md",
            "# Retention\n\n## Default policy\n\nThe default retention policy of a room sets \
             the max lifetime of events in the room, in a unit of days, for every room event \
             without its own retention. Set `max_lifetime` here.\n\n\
             ## Room configuration\n\nSend a state event of type `m.room.retention` whose \
             `max_lifetime` is in milliseconds; moderators of a space may send it too.\n",
        ),
        ("rooms.md", "# Rooms\n\nA room holds events.\n"),
        ("events.md", "# Events\n\nAn event has a type.\n"),
        ("units.md", "# Units\n\nDurations take a unit.\n"),
        ("other.md", "# Weather\n\nSunny in Paris, rain in Lisbon.\n"),
    ]);
    let query = "what unit is max_lifetime in, in an m.room.retention event for a room's retention";
    let hits = search(&index, query, &SearchOptions::default()).unwrap();
    assert_eq!(
        hits[0].breadcrumb,
        "Retention › Room configuration",
        "{:?}",
        hits.iter()
            .map(|h| (&h.breadcrumb, h.score))
            .collect::<Vec<_>>()
    );
}

/// The closeness list gives its rank shares to each of the [`CLOSENESS_LIST`] candidates
/// closest to the query, a section's best piece included, in that order, and to no other.
#[test]
fn the_closeness_list_lifts_the_sections_a_piece_of_which_answers() {
    let settings = format!("# Svc\n\n## Settings\n\n{SETTINGS_TABLE}\n");
    let mut files: Vec<(String, String)> = vec![("svc.md".into(), settings)];
    let lines = [
        "Retries back off and the delay doubles each time.",
        "The initial screen shows the delay of every job.",
        "Retries between regions are logged.",
        "A delay on the queue raises an alert.",
        "Initial setup takes a day.",
        "Between releases the freeze is lifted.",
        "Retries are counted per client.",
    ];
    for (k, line) in lines.iter().enumerate() {
        files.push((format!("n{k}.md"), format!("# Note {k}\n\n{line}\n")));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let (index, _d, _x) = index_of(&refs);
    let query = index
        .embedder()
        .embed_query("what is the initial delay between retries")
        .unwrap();
    let snap = index.snapshot();
    let vectors = crate::vectors::SectionVectors::new(&index, &snap);
    let mut candidates: std::collections::HashMap<i64, crate::hybrid::Candidate> = snap
        .chunks()
        .map(|(c, _)| (c.id, crate::hybrid::Candidate::new(0.0)))
        .collect();
    let settings = snap
        .chunks()
        .find(|(c, _)| c.heading == "Svc › Settings")
        .map(|(c, v)| (c.id, v.dot(&query)))
        .unwrap();
    // The fixture must need the piece: by whole cosine, another section is closer.
    assert!(
        snap.chunks()
            .any(|(c, v)| c.id != settings.0 && v.dot(&query) > settings.1),
        "{settings:?}"
    );
    crate::hybrid::add_closeness_list(&vectors, &query, &mut candidates);
    let share = |rank: usize| CLOSENESS_LIST_WEIGHT / (RRF_K + rank as f32 + 1.0);
    assert_eq!(candidates[&settings.0].score, share(0));
    let mut by_closeness: Vec<(f32, f32)> = candidates
        .values()
        .map(|c| (c.closeness.unwrap(), c.score))
        .collect();
    by_closeness.sort_by(|a, b| b.0.total_cmp(&a.0));
    let scores: Vec<f32> = by_closeness.iter().map(|x| x.1).collect();
    let expected: Vec<f32> = (0..scores.len())
        .map(|rank| {
            if rank < CLOSENESS_LIST {
                share(rank)
            } else {
                0.0
            }
        })
        .collect();
    assert_eq!(scores, expected, "{by_closeness:?}");
}
