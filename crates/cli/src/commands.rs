//! `ragdown index`, `query` and `status`: open a directory's index, sync it, search it, and
//! print results for people (text) or scripts (`--json`) on stdout.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use ragdown_index::data_dir::FoldersDataDir;
use ragdown_index::lock::{self, Role};
use ragdown_index::{Holding, Index, IndexSettings};
use ragdown_server::primary::{self, SharedDuties, answer_forwarded_syncs};
use serde_json::json;

use crate::progress::{DownloadBar, sync_with_bar};
use crate::settings::{Settings, docs_dir};

/// An opened index and what this process is to it, with the locks that say so.
pub struct Opened {
    pub index: Arc<Index>,
    pub role: Role,
}

/// What to do when the model cannot load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnModelError {
    /// Fail: the command needs embeddings (indexing).
    Fail,
    /// Answer from BM25 alone when an index built before exists (searching, reading).
    KeywordOnly,
}

/// When to load a preset's model, which otherwise loads when first needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preload {
    /// When first needed (a command that may need no vector at all).
    No,
    /// Now, beside opening the index; a search waits for it (a one-shot query).
    WaitForIt,
    /// Now, beside opening the index; searches answer from keywords until it is loaded (a
    /// server's first moments).
    AnswerMeanwhile,
    /// Now, beside opening the index, when the records show a few changed files that the
    /// sync to come will embed (a one-shot re-sync after an edit: the load overlaps reading
    /// the index instead of following it); else when first needed.
    ForSync,
}

/// Loads the embedder (downloading a preset on first use) and opens the index of `dir`: as
/// its primary when no other process is, else as a reader of the primary's store.
pub fn open_index(settings: &Settings, dir: &Path, on_model_error: OnModelError) -> Result<Opened> {
    open_index_preloading(settings, dir, on_model_error, Preload::No)
}

/// [`open_index`], starting the model's load as `preload` says.
pub fn open_index_preloading(
    settings: &Settings,
    dir: &Path,
    on_model_error: OnModelError,
    preload: Preload,
) -> Result<Opened> {
    open_with(
        settings,
        dir,
        on_model_error,
        preload,
        false,
        Holding::Everything,
    )
}

/// Opens `dir`'s index for a command that only reads it (`query`, `status`): like
/// [`open_index_preloading`] with keyword-only fallback, except that an index built with
/// another embedder is refused instead of rebuilt — a status check with the wrong
/// `RAGDOWN_EMBEDDER` must not empty the index.
pub fn open_index_for_reading(settings: &Settings, dir: &Path, preload: Preload) -> Result<Opened> {
    open_with(
        settings,
        dir,
        OnModelError::KeywordOnly,
        preload,
        true,
        Holding::Everything,
    )
}

fn open_with(
    settings: &Settings,
    dir: &Path,
    on_model_error: OnModelError,
    preload: Preload,
    keep_other_embedders: bool,
    holding: Holding,
) -> Result<Opened> {
    let root = docs_dir(dir)?;
    let data_dir = settings.data_dir_for(&root);
    let index_settings = IndexSettings {
        data_dir: data_dir.clone(),
        records: settings.records_for(&root),
        root: root.clone(),
        max_file_bytes: settings.max_file_bytes,
    };
    let role = lock::claim(&index_settings)
        .with_context(|| format!("taking the primary lock in {}", data_dir.display()))?;
    let embedder = match ragdown_embed::load(&settings.embedder, &DownloadBar::new()) {
        Ok(embedder) => embedder,
        Err(e) => match ragdown_index::recorded_embedder(&index_settings) {
            Some((id, dim)) if on_model_error == OnModelError::KeywordOnly => {
                tracing::warn!(
                    "the embedding model {:?} could not load ({e}); answering keyword (BM25) searches only from the index built before",
                    settings.embedder.name
                );
                Arc::new(ragdown_embed::keyword::KeywordOnly::new(
                    id,
                    dim,
                    e.to_string(),
                ))
            }
            _ => {
                return Err(anyhow::Error::new(e)
                    .context(format!("loading the embedder {:?}", settings.embedder.name)));
            }
        },
    };
    if keep_other_embedders
        && let Some((recorded, _)) = ragdown_index::recorded_embedder(&index_settings)
        && recorded != embedder.id()
    {
        anyhow::bail!(
            "the index in {} was built with the embedder {recorded}, but RAGDOWN_EMBEDDER selects {}: \
             reading it would rebuild it. Set RAGDOWN_EMBEDDER to that index's embedder, or run \
             `ragdown index {}` to rebuild it with {} (every section is embedded again)",
            data_dir.display(),
            embedder.id(),
            root.display(),
            embedder.id()
        );
    }
    let embedder: Arc<dyn ragdown_embed::Embedder> = match preload {
        // A one-shot reader asks the running primary, whose model is warm, for its query
        // vectors, and loads its own model only when the primary cannot answer.
        Preload::WaitForIt if matches!(role, Role::Reader) => {
            Arc::new(lock::PrimaryQueries::new(&data_dir, embedder))
        }
        Preload::WaitForIt => {
            embedder.load_in_background(false);
            embedder
        }
        Preload::AnswerMeanwhile => {
            embedder.load_in_background(true);
            embedder
        }
        Preload::ForSync => {
            let few = role.is_primary()
                && ragdown_index::pending_changes(&index_settings, embedder.id())
                    .is_some_and(|n| (1..=ragdown_embed::lazy::QUICK_DOCUMENTS).contains(&n));
            if few {
                embedder.load_in_background(false);
            }
            embedder
        }
        Preload::No => embedder,
    };
    // The primary may be creating the index right now: a reader or follower retries a while.
    let mut attempt = 0;
    loop {
        match Index::open_as_holding(&role, index_settings.clone(), embedder.clone(), holding) {
            Ok(index) => {
                let index = Arc::new(index);
                if let Some(local) = role.local() {
                    answer_forwarded_syncs(&index, local);
                }
                return Ok(Opened { index, role });
            }
            Err(e) if !role.is_primary() && attempt < 20 => {
                tracing::info!("waiting for the primary to create the index: {e}");
                attempt += 1;
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// `ragdown model`: downloads the configured model and ONNX Runtime when they are missing,
/// then loads the model and embeds one sentence, so that an image build (or a machine about to
/// go offline) holds everything a first start needs and a broken download fails here, not then.
pub fn model(settings: &Settings) -> Result<()> {
    let started = std::time::Instant::now();
    let embedder = ragdown_embed::load(&settings.embedder, &DownloadBar::new())
        .with_context(|| format!("loading the embedder {:?}", settings.embedder.name))?;
    let vector = embedder
        .embed_query("where is the model kept?")
        .with_context(|| format!("embedding with {}", embedder.id()))?;
    anyhow::ensure!(
        vector.len() == embedder.dim() && vector.iter().all(|x| x.is_finite()),
        "the model {} gave a vector of {} numbers where {} were expected",
        embedder.id(),
        vector.len(),
        embedder.dim()
    );
    println!(
        "model {} ready: {} dimensions, loaded and checked in {:.1} s (models in {})",
        embedder.id(),
        embedder.dim(),
        started.elapsed().as_secs_f64(),
        settings.embedder.models_dir.display()
    );
    Ok(())
}

/// Syncs the index of `dir` (as its primary, or through the running primary) and returns it
/// with the report. The primary's index holds documents only ([`Holding::DocumentsOnly`]):
/// count sections with [`Index::chunk_counts`], and do not search it.
pub fn sync_dir(
    settings: &Settings,
    dir: &Path,
) -> Result<(Arc<Index>, ragdown_index::SyncReport)> {
    let mut attempt = 0;
    let (index, report) = loop {
        // A sync searches nothing: the primary reads the documents, not every section.
        let Opened { index, role } = open_with(
            settings,
            dir,
            OnModelError::Fail,
            Preload::ForSync,
            false,
            Holding::DocumentsOnly,
        )?;
        if role.is_primary() {
            let report = sync_with_bar(&index)?;
            // A one-shot process keeps the BM25 merge its commit started (an exiting
            // writer would abandon it, and the next run would start it again).
            index.finish_merges()?;
            // The model loads on first use: indexing is when it must, so its failure fails
            // the command (a sync that needed no new vector never loads it).
            if let Some(why) = index.embedder().unavailable() {
                anyhow::bail!(
                    "loading the embedder {:?}: {why} ({} documents not indexed)",
                    settings.embedder.name,
                    report.skipped.len()
                );
            }
            break (index, report);
        }
        // Another process is the primary: it syncs, this process reports. If it exits while
        // answering, the lock is free: try again, as the primary this time.
        match ragdown_index::forward::forward_sync_report(
            &index,
            None,
            ragdown_server::SYNC_REQUEST_TIMEOUT,
        ) {
            Ok(report) => break (index, report),
            Err(_) if attempt < 5 => {
                attempt += 1;
                drop(index);
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => return Err(e.into()),
        }
    };
    Ok((index, report))
}

pub fn index(settings: &Settings, dir: &Path) -> Result<()> {
    let (index, report) = sync_dir(settings, dir)?;
    println!(
        "indexed {} documents, {} chunks in {:.2} s: {} added, {} updated, {} removed, {} unchanged, {} chunks and {} pieces embedded",
        index.snapshot().document_count(),
        index.chunk_counts()?.values().sum::<usize>(),
        report.elapsed.as_secs_f64(),
        report.added,
        report.updated,
        report.removed,
        report.unchanged,
        report.embedded,
        report.embedded_pieces
    );
    for (path, reason) in &report.skipped {
        println!("skipped {path}: {reason}");
    }
    Ok(())
}

/// `ragdown migrate DIR --to postgres`: copies the vector cache and what built it from the
/// data dir's SQLite records into the database, then indexes the docs dir there — every
/// section's vector comes from the copy, so nothing is embedded again.
pub fn migrate(settings: &Settings, dir: &Path) -> Result<()> {
    let root = docs_dir(dir)?;
    let target = settings.records_for(&root);
    let ragdown_index::store::RecordsLocation::Postgres { url, schema, .. } = &target else {
        anyhow::bail!(
            "set RAGDOWN_DATABASE_URL to the PostgreSQL database to move the index to (for \
             example postgres://user@host/db)"
        );
    };
    let data_dir = settings.data_dir_for(&root);
    let copied = ragdown_index::store::copy_vector_cache(&data_dir, &target)?;
    println!(
        "copied {copied} cached vectors from {} to schema {schema} of {}",
        data_dir.display(),
        ragdown_index::store::redact_url(url)
    );
    index(settings, dir)
}

pub struct QueryFlags {
    pub top_k: usize,
    pub json: bool,
    pub tag: Option<String>,
    pub path_prefix: Option<String>,
}

/// An excerpt of at most `max` characters on one line.
fn excerpt(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

/// `engine` recording its searches and reads in `<data dir>/query-log.jsonl` when
/// `RAGDOWN_QUERY_LOG` is on (`serve` keeps one log for all its folders instead).
fn with_query_log(
    mut engine: ragdown_server::Engine,
    settings: &Settings,
) -> ragdown_server::Engine {
    if settings.server.query_log {
        let at = engine
            .index
            .settings()
            .data_dir
            .join(ragdown_server::query_log::FILE_NAME);
        engine.query_log = Some(Arc::new(ragdown_server::query_log::QueryLog::new(at)));
    }
    engine
}

pub fn query(settings: &Settings, dir: &Path, question: &str, flags: QueryFlags) -> Result<()> {
    // The model loads while the index opens and syncs.
    let Opened { index, role } = open_index_for_reading(settings, dir, Preload::WaitForIt)?;
    if role.is_primary() {
        sync_with_bar(&index)?;
    }
    let engine = with_query_log(
        ragdown_server::Engine::new(folder_name(&index), index.clone(), settings.server.clone()),
        settings,
    );
    let asked = ragdown_server::args::RecallArgs {
        query: question.to_string(),
        top_k: Some(flags.top_k),
        tag: flags.tag,
        path_prefix: flags.path_prefix,
        ..Default::default()
    };
    let options = ragdown_server::recall::options(&asked, &engine.settings())?;
    let recall = engine.recall(question, &options, ragdown_server::recall::Asker::Agent)?;
    if flags.json {
        println!("{}", ragdown_server::format::json_text(&recall));
    } else {
        if let Some(why) = &recall.keyword_only {
            println!("({why})\n");
        }
        if recall.hits.is_empty() {
            println!("No matching documents.");
        }
        for (i, hit) in recall.hits.iter().map(|found| &found.hit).enumerate() {
            println!(
                "[{}] {}:{}-{} — {} (similarity {:.2})\n    {}\n",
                i + 1,
                ragdown_server::format::escaped(hit.path()),
                hit.line_start,
                hit.line_end,
                hit.breadcrumb,
                hit.similarity,
                excerpt(&hit.text, 300)
            );
        }
    }
    // After the answer is out: the start-up sync's BM25 merge is kept, not abandoned.
    index.finish_merges()?;
    Ok(())
}

pub fn status(settings: &Settings, dir: &Path, as_json: bool) -> Result<()> {
    let Opened { index, role } = open_index_for_reading(settings, dir, Preload::No)?;
    let role = role.name();
    let snap = index.snapshot();
    let embedder: &Arc<dyn ragdown_embed::Embedder> = index.embedder();
    // Where the records are, never with a password.
    let records = match &index.settings().records {
        ragdown_index::store::RecordsLocation::DataDir => "sqlite (in the data dir)".to_string(),
        ragdown_index::store::RecordsLocation::Postgres { url, schema, .. } => format!(
            "postgres (schema {schema} of {})",
            ragdown_index::store::redact_url(url)
        ),
    };
    let dense_pool = match index.settings().records.dense_pool() {
        ragdown_index::store::DensePool::Memory => "memory".to_string(),
        ragdown_index::store::DensePool::Pgvector { ef_search } => {
            format!("pgvector (HNSW, ef_search {ef_search})")
        }
    };
    let value = json!({
        "records": index.records_backend(),
        "dense_pool": dense_pool,
        "folder": index.settings().root,
        "data_dir": index.settings().data_dir,
        "documents": snap.document_count(),
        "chunks": snap.chunk_count(),
        "embedder": embedder.id(),
        "dim": embedder.dim(),
        "role": role,
        "keyword_only": embedder.unavailable(),
        "model_on_corpus": ragdown_search::calibration::saved(&index),
    });
    if as_json {
        println!("{value}");
    } else {
        println!(
            "folder    {}\ndata dir  {}\nrecords   {records}\ndense     {dense_pool}\ndocuments {}\nchunks    {}\nembedder  {} ({} dimensions)",
            index.settings().root.display(),
            index.settings().data_dir.display(),
            snap.document_count(),
            snap.chunk_count(),
            embedder.id(),
            embedder.dim()
        );
        if let Some(why) = embedder.unavailable() {
            println!("search    keyword (BM25) only: the model could not load ({why})");
        }
        match ragdown_search::calibration::saved(&index) {
            Some(c) => println!(
                "scale     unrelated prompts at cosine {:.3}, answers at {:.3} ({} probes over {} sections; ranking and the hook read cosines between the two)",
                c.background, c.answer, c.probes, c.sections
            ),
            None => println!(
                "scale     not measured yet: the next sync or search measures this model on these documents"
            ),
        }
    }
    Ok(())
}

/// The embedder id and dimension some folder's index in `data` was built with.
fn recorded_in_any_folder(
    data: &FoldersDataDir,
    database: Option<&ragdown_index::store::SharedDatabase>,
) -> Option<(String, usize)> {
    data.folder_dirs().iter().find_map(|dir| {
        let name = dir.file_name()?.to_string_lossy();
        ragdown_index::recorded_embedder(&IndexSettings {
            root: dir.clone(),
            data_dir: dir.clone(),
            max_file_bytes: 0,
            records: ragdown_http::folders::records_of_folder(database, &name),
        })
    })
}

/// The name a docs dir is served under: its directory name.
pub fn folder_name(index: &Index) -> String {
    index
        .settings()
        .root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "docs".into())
}

/// `ragdown stdio`: opens the index of `RAGDOWN_DOCS_DIR`, syncs it in the background (searches
/// answer from what is indexed meanwhile) and serves MCP on stdin/stdout.
pub fn stdio(settings: &Settings) -> Result<()> {
    let dir = settings.docs_dir.clone().context(
        "RAGDOWN_DOCS_DIR is not set: point it at the directory of Markdown files to serve",
    )?;
    // The index opens (and the model loads, perhaps downloading) while MCP already answers:
    // a client's start-up timeout never waits for a download.
    let root = docs_dir(&dir)?;
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "docs".into());
    let pending = Arc::new(ragdown_server::pending::PendingEngine::new(
        name,
        settings.server.clone(),
        Duration::from_secs(60),
    ));
    let duties: SharedDuties = Arc::default();
    {
        let (pending, duties, settings) = (pending.clone(), duties.clone(), settings.clone());
        std::thread::spawn(
            // Searches answer from keywords for the moment the model takes to load.
            move || match open_index_preloading(
                &settings,
                &root,
                OnModelError::KeywordOnly,
                Preload::AnswerMeanwhile,
            ) {
                Ok(Opened { index, role }) => {
                    let engine = Arc::new(with_query_log(
                        ragdown_server::Engine::new(
                            folder_name(&index),
                            index,
                            settings.server.clone(),
                        ),
                        &settings,
                    ));
                    primary::take_role(
                        &engine,
                        role,
                        &duties,
                        settings.server.watch,
                        settings.takeover_every,
                    );
                    pending.ready(engine);
                }
                Err(e) => {
                    tracing::error!("ragdown could not start its index: {e:#}");
                    pending.failed(format!("{e:#}"));
                }
            },
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let served = runtime
        .block_on(ragdown_server::mcp::serve_stdio(pending))
        .map_err(|e| anyhow::anyhow!("MCP over stdio: {e}"));
    if let Ok(mut d) = duties.lock() {
        d.close();
    }
    served
}

/// The most connections `serve` keeps open: `RAGDOWN_MAX_CONNECTIONS`, or else what the file
/// descriptor limit allows (raised to its hard limit first) minus headroom for the indexes,
/// the watcher and the model.
fn connection_cap(configured: usize) -> usize {
    let limit = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!("could not raise the open file limit: {e}");
            rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft)
        }
    };
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    // Headroom for the indexes, the watcher and the model; and an eighth of the rest for
    // connections asked to close that are still finishing (see `ragdown_http::serve`).
    let headroom = (limit / 4).clamp(32, 512);
    let fits = (limit.saturating_sub(headroom) * 7 / 8).max(16);
    if configured == 0 {
        return fits.min(16_384);
    }
    if configured > fits {
        tracing::warn!(
            "RAGDOWN_MAX_CONNECTIONS={configured} is more than the open file limit ({limit}) leaves room for: using {fits}"
        );
        return fits;
    }
    configured
}

/// `ragdown serve`: binds the port first (status answers `ready: false` meanwhile), loads the
/// embedder, then opens every folder of `RAGDOWN_DOCS_DIR` and serves HTTP until SIGTERM.
pub fn serve(settings: &Settings) -> Result<()> {
    let dir = settings.docs_dir.clone().context(
        "RAGDOWN_DOCS_DIR is not set: point it at the directory whose subdirectories are the folders to serve",
    )?;
    let docs = docs_dir(&dir)?;
    if settings.http.token.is_none() && !settings.http.secure_local_net {
        anyhow::bail!(
            "serve needs a token: set RAGDOWN_TOKEN (for example to the output of `openssl rand -hex 32`), or SECURE_LOCAL_NET=true to serve without one on a trusted network"
        );
    }
    let folders_data = FoldersDataDir::new(settings.data_dir_for(&docs));
    let config = ragdown_http::ServeConfig {
        data_dir: settings.data_dir_for(&docs),
        docs_dir: docs,
        embedder: settings.embedder.clone(),
        server: settings.server.clone(),
        max_file_bytes: settings.max_file_bytes,
        database: settings.shared_database(),
        takeover_every: settings.takeover_every,
        token: settings.http.token.clone(),
        keep_alive_ms: settings.http.keep_alive_ms,
        site: ragdown_http::policy::SitePolicy::from_lists(
            settings.http.allowed_hosts.as_deref(),
            settings.http.allowed_origins.as_deref(),
        ),
        body_timeout: std::time::Duration::from_millis(settings.http.body_timeout_ms.max(1)),
        max_connections: connection_cap(settings.http.max_connections),
    };
    let state = ragdown_http::AppState::new(config);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let port = settings.http.port;
    runtime.block_on(async move {
        let bind = settings.http.bind.trim_start_matches('[').trim_end_matches(']');
        let listener = tokio::net::TcpListener::bind((bind, port))
            .await
            .with_context(|| {
                format!("listening on {bind} port {port} (RAGDOWN_BIND, PORT)")
            })?;
        let addr = listener.local_addr().context("reading the bound address")?;
        eprintln!("ragdown: listening on http://{addr}");
        if addr.ip().is_loopback() {
            eprintln!(
                "ragdown: only this machine can connect (set RAGDOWN_BIND=0.0.0.0 to serve other machines)"
            );
        } else {
            eprintln!(
                "ragdown: other machines can connect on {}; browsers must use an IP address, localhost or a name in RAGDOWN_ALLOWED_HOSTS",
                addr.ip()
            );
        }
        let loading = state.clone();
        let embedder = state.embedder_settings(&state.tunables().embedder);
        let database = settings.shared_database();
        tokio::task::spawn_blocking(move || {
            match ragdown_embed::load(&embedder, &DownloadBar::new()) {
                Ok(e) => {
                    // Searches answer from keywords for the moment the model takes to load.
                    e.load_in_background(true);
                    loading.start_folders(e);
                    eprintln!("ragdown: ready");
                }
                Err(e) => match recorded_in_any_folder(&folders_data, database.as_ref()) {
                    Some((id, dim)) => {
                        tracing::warn!(
                            "the embedding model could not load ({e}); answering keyword (BM25) searches only from the folders' indexes"
                        );
                        let stand_in = ragdown_embed::keyword::KeywordOnly::new(id, dim, e.to_string());
                        loading.start_folders(Arc::new(stand_in));
                        eprintln!("ragdown: ready (keyword search only)");
                    }
                    None => loading.fail_loading(format!("{e:#}")),
                },
            }
        });
        ragdown_http::serve(state, listener)
            .await
            .context("serving HTTP")
    })
}
