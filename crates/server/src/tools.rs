//! The table of the tools — name, description, argument schema (from [`crate::args`]),
//! annotations, and how each runs: its work in one folder and what the root `/mcp` (every
//! folder at once) does with it, or, for the two root-only tools, its work over every folder.
//! A definition that leaves out how it behaves across folders does not compile.
//! Transport-free: the MCP adapters list [`definitions`] and call [`call`] or [`run`]; the
//! root endpoint (in `http`) is an [`EveryFolder`].

use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::answers::{
    AllStats, Answer, FolderCreated, FolderList, Listed, Listing, Recall, Reindexed,
};
use crate::args::{
    ContextArgs, CreateFolderArgs, DeleteArgs, EditArgs, FoldersArgs, IngestArgs, ListArgs,
    MoveArgs, PathArgs, ReadArgs, RecallArgs, RecallFormat, ReindexArgs, RememberArgs, StatsArgs,
    WriteArgs,
};
use crate::context::ContextSource;
use crate::folder_config::{FolderConfig, FolderPatch};
use crate::patch::Change;
use crate::query_log::{Entry, Read};
use crate::recall::Asker;
use crate::{Engine, ServerSettings, ToolError, documents, format};

/// Whether a tool reads, writes, and what its annotations say.
#[derive(Debug, Clone, Copy)]
pub struct ToolKind {
    pub write: bool,
    pub destructive: bool,
    pub idempotent: bool,
}

/// A tool's work in one folder: its arguments in, its typed answer out. Blocking.
pub type Work = fn(&Engine, Value) -> Result<Answer, ToolError>;
/// Joins the answers every folder gave to one call (their names beside them) into the root's
/// answer; the call's arguments, without `folder`, come along.
pub type Merge = fn(Vec<(String, Answer)>, &Value) -> Result<Answer, ToolError>;
/// A tool's work at the root, over every folder at once. Blocking.
pub type RootWork = fn(&dyn EveryFolder, Value) -> Result<Answer, ToolError>;

/// What the root `/mcp` does with a tool that runs in a folder.
#[derive(Clone, Copy)]
pub enum AcrossFolders {
    /// It works on one document: the root needs a `folder`.
    NeedsFolder,
    /// It takes an optional `folder`; without one, it runs in every folder and the answers
    /// are merged.
    Merges(Merge),
    /// It takes no `folder` at the root: it runs in every folder, answers merged.
    EveryFolder(Merge),
    /// It takes an optional `folder`; without one, the root answers with this (the hook: one
    /// session memory over every folder).
    OwnForm(RootWork),
}

/// Where a tool runs.
#[derive(Clone, Copy)]
pub enum Runs {
    /// In one folder's engine (stdio, `/mcp/<folder>`, and the root with a `folder`), and
    /// across folders at the root as `across` says.
    InFolder { work: Work, across: AcrossFolders },
    /// Only at the root `/mcp`, over every folder.
    AtRoot(RootWork),
}

/// What a tool acts on, which decides whether the root `/mcp` asks for a `folder`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One document: at the root it needs a `folder`.
    Document,
    /// A folder's index: at the root, every folder when `folder` is left out.
    Folder,
    /// The whole server: at the root it takes no `folder` and runs once over every folder.
    Server,
}

/// One tool, defined once: every endpoint (stdio, `/mcp/<folder>`, the root `/mcp`) lists and
/// dispatches from these, and `RAGDOWN_READ_ONLY` / `RAGDOWN_DISABLED_TOOLS` filter them.
#[derive(Clone)]
pub struct Definition {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: serde_json::Map<String, Value>,
    /// The JSON schema of the tool's `structuredContent` ([`Answer::structured`]); `None` for
    /// a tool whose answer is text for a prompt (`ragdown_context`).
    pub output: Option<serde_json::Map<String, Value>>,
    pub kind: ToolKind,
    pub runs: Runs,
}

impl Definition {
    /// What the tool acts on, from how it runs.
    pub fn scope(&self) -> Scope {
        match self.runs {
            Runs::InFolder {
                across: AcrossFolders::NeedsFolder,
                ..
            } => Scope::Document,
            Runs::InFolder {
                across: AcrossFolders::Merges(_) | AcrossFolders::OwnForm(_),
                ..
            } => Scope::Folder,
            Runs::InFolder {
                across: AcrossFolders::EveryFolder(_),
                ..
            }
            | Runs::AtRoot(_) => Scope::Server,
        }
    }

    /// Whether a folder's endpoint (stdio, `/mcp/<folder>`) serves it.
    pub fn in_folder(&self) -> bool {
        matches!(self.runs, Runs::InFolder { .. })
    }
}

/// The root endpoint over every folder, as the root-only tools and the every-folder forms see
/// it. `http`'s root host is the one; its context source is the hook's over every folder.
pub trait EveryFolder: ContextSource {
    /// The folders an agent may see here (MCP on), by name.
    fn engines(&self) -> Vec<(String, Arc<Engine>)>;
    /// Those folders with their titles and sizes.
    fn folder_list(&self) -> FolderList;
    /// Makes a folder from `config`; answers its name.
    fn create_folder(&self, name: &str, config: &FolderConfig) -> Result<String, ToolError>;
}

/// The JSON schema of `T`, as a tool's input or output schema.
pub fn schema<T: JsonSchema>() -> serde_json::Map<String, Value> {
    let mut map = match serde_json::to_value(schemars::schema_for!(T)) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    // An object of no arguments still lists its (no) properties: some clients read them.
    if map.get("type") == Some(&Value::from("object")) && !map.contains_key("properties") {
        map.insert("properties".into(), Value::Object(serde_json::Map::new()));
    }
    map
}

/// Reads only.
pub const READ: ToolKind = ToolKind {
    write: false,
    destructive: false,
    idempotent: true,
};
/// Writes what was there before (a rewrite, an edit, a delete): destructive, and not to be
/// repeated blindly.
pub const REPLACES: ToolKind = ToolKind {
    write: true,
    destructive: true,
    idempotent: false,
};
/// Writes, and the same call again changes nothing more (an ingest of one source, a reindex).
pub const SAME_AGAIN: ToolKind = ToolKind {
    write: true,
    destructive: false,
    idempotent: true,
};
/// Writes something new (a note, a moved path, a folder), never over anything.
pub const ADDS: ToolKind = ToolKind {
    write: true,
    destructive: false,
    idempotent: false,
};

/// Every tool, in name order, root-only ones included: the table, built once (schemas are
/// generated from the argument types, so not on every call).
pub fn definitions() -> &'static [Definition] {
    static TABLE: std::sync::LazyLock<Vec<Definition>> = std::sync::LazyLock::new(table);
    &TABLE
}

/// The tools a folder's endpoint serves (stdio, `/mcp/<folder>`).
pub fn in_folder() -> impl Iterator<Item = &'static Definition> {
    definitions().iter().filter(|d| d.in_folder())
}

/// The tool named `name`, served or not.
pub fn definition(name: &str) -> Option<&'static Definition> {
    definitions().iter().find(|d| d.name == name)
}

fn table() -> Vec<Definition> {
    let mut table = vec![
        Definition {
            name: "ragdown_backlinks",
            description: "The documents that link to a document (wikilinks, aliases, relative Markdown links), with the lines the links are on. Call it before changing, moving or superseding a document. Returns JSON {path, backlinks: [{path, title, lines: [{line, text}]}]}.",
            schema: schema::<PathArgs>(),
            output: Some(schema::<crate::answers::Backlinks>()),
            kind: READ,
            runs: Runs::InFolder {
                work: backlinks,
                across: AcrossFolders::NeedsFolder,
            },
        },
        Definition {
            name: "ragdown_context",
            description: "For hooks that run before a turn: the user's documents related to the prompt, as a ready-to-inject <ragdown-context> block, or empty text when nothing is related enough. Unlike ragdown_recall it gates on similarity, skips short prompts and slash commands, and never repeats a section for the same session_id. reset forgets the session (call it with an empty prompt after a compaction). format claude-code wraps the block for a UserPromptSubmit hook.",
            schema: schema::<ContextArgs>(),
            output: None,
            kind: READ,
            runs: Runs::InFolder {
                work: context,
                across: AcrossFolders::OwnForm(context_everywhere),
            },
        },
        Definition {
            name: "ragdown_delete",
            description: "Delete a document, or a subfolder with recursive: true. Permanent: no trash, no undo; links to it are left dangling, so call ragdown_backlinks first. For an outdated document prefer ragdown_remember with supersedes. base_hash deletes only the version you read.",
            schema: schema::<DeleteArgs>(),
            output: Some(schema::<crate::answers::Deleted>()),
            kind: REPLACES,
            runs: Runs::InFolder {
                work: delete,
                across: AcrossFolders::NeedsFolder,
            },
        },
        Definition {
            name: "ragdown_edit",
            description: "Change part of a document without sending the rest: each edit swaps one exact passage (old_text must match character for character, and once unless replace_all). Edits apply in order, all or nothing; an empty new_text deletes. A miss is answered with the nearest passage the document has.",
            schema: schema::<EditArgs>(),
            output: Some(schema::<crate::answers::Edited>()),
            kind: REPLACES,
            runs: Runs::InFolder {
                work: edit,
                across: AcrossFolders::NeedsFolder,
            },
        },
        Definition {
            name: "ragdown_ingest",
            description: "Keep content the client fetched (a web page's HTML, text, Markdown) as a searchable document under ingested/, converted to Markdown with its source in the frontmatter. The same source again replaces it. Use it for pages worth finding later; use ragdown_remember for your own notes.",
            schema: schema::<IngestArgs>(),
            output: Some(schema::<crate::answers::Ingested>()),
            kind: SAME_AGAIN,
            runs: Runs::InFolder {
                work: ingest,
                across: AcrossFolders::NeedsFolder,
            },
        },
        Definition {
            name: "ragdown_list",
            description: "Browse rather than search: one line per document with path, title, tags, last change, who wrote it and its description. Filter by subfolder, tag, author or session; sort recent lists the last changed first.",
            schema: schema::<ListArgs>(),
            output: Some(schema::<crate::answers::Listing>()),
            kind: READ,
            runs: Runs::InFolder {
                work: list,
                across: AcrossFolders::Merges(list_merged),
            },
        },
        Definition {
            name: "ragdown_move",
            description: "Rename or move a document or subfolder within the folder, rewriting every wikilink and relative link that pointed at it. Never overwrites. to is the whole new path, name included; missing folders are created. Use it instead of write + delete.",
            schema: schema::<MoveArgs>(),
            output: Some(schema::<crate::answers::Moved>()),
            kind: ADDS,
            runs: Runs::InFolder {
                work: move_paths,
                across: AcrossFolders::NeedsFolder,
            },
        },
        Definition {
            name: "ragdown_read_doc",
            description: "Read a Markdown document, whole or by line range, straight from disk; never clipped. Use it to see around a ragdown_recall hit or to follow a [[wikilink]] (path may be a link target: Note, Note#Heading, sub/Note, an alias). The first line is 'path:start-end of total_lines (hash …)'; the hash is the whole file's, for base_hash. The text follows exactly as in the file.",
            schema: schema::<ReadArgs>(),
            output: Some(schema::<crate::answers::ReadDoc>()),
            kind: READ,
            runs: Runs::InFolder {
                work: read_doc,
                across: AcrossFolders::NeedsFolder,
            },
        },
        Definition {
            name: "ragdown_recall",
            description: "Hybrid (semantic + keyword) search over the user's Markdown documents. Returns sections with path, line range, heading breadcrumb, cosine similarity and the day the file changed, and says when an agent wrote one. Call it before answering anything the documents may cover (decisions, how-tos, runbooks, notes), then read around a hit with ragdown_read_doc.",
            schema: schema::<RecallArgs>(),
            output: Some(schema::<crate::answers::Recall>()),
            kind: READ,
            runs: Runs::InFolder {
                work: recall,
                across: AcrossFolders::Merges(recall_merged),
            },
        },
        Definition {
            name: "ragdown_reindex",
            description: "Bring the index up to date now (changes are normally picked up on their own); use after bulk edits made while no server ran. full re-embeds everything. Returns the sync report as JSON.",
            schema: schema::<ReindexArgs>(),
            output: Some(schema::<crate::answers::Reindexed>()),
            kind: SAME_AGAIN,
            runs: Runs::InFolder {
                work: reindex,
                across: AcrossFolders::EveryFolder(reindex_merged),
            },
        },
        Definition {
            name: "ragdown_remember",
            description: "Save something worth keeping (a decision, a fix, a how-to) as a new document, indexed at once; never overwrites. Pass supersedes with the paths of documents it replaces when a fact changed (not merely when writing about the same topic).",
            schema: schema::<RememberArgs>(),
            output: Some(schema::<crate::answers::Saved>()),
            kind: ADDS,
            runs: Runs::InFolder {
                work: remember,
                across: AcrossFolders::NeedsFolder,
            },
        },
        Definition {
            name: "ragdown_stats",
            description: "The documents folder, index size (files, chunks), the embedder, whether this process is the indexing primary, and the last sync.",
            schema: schema::<StatsArgs>(),
            output: Some(schema::<crate::answers::Stats>()),
            kind: READ,
            runs: Runs::InFolder {
                work: stats,
                across: AcrossFolders::Merges(stats_merged),
            },
        },
        Definition {
            name: "ragdown_write",
            description: "Rewrite or append to a document, or create one at a chosen path. Prefer ragdown_edit for partial changes. Replacing needs the base_hash from ragdown_read_doc; if the file changed since, nothing is written. Created documents get created_by: ragdown_write.",
            schema: schema::<WriteArgs>(),
            output: Some(schema::<crate::answers::Written>()),
            kind: REPLACES,
            runs: Runs::InFolder {
                work: write,
                across: AcrossFolders::NeedsFolder,
            },
        },
        Definition {
            name: "ragdown_create_folder",
            description: "Make an empty folder of documents, with MCP on, from a name (letters, digits, spaces, '_', '.', '-'; up to 64) and an optional title. Never overwrites.",
            schema: schema::<CreateFolderArgs>(),
            output: Some(schema::<FolderCreated>()),
            kind: ADDS,
            runs: Runs::AtRoot(create_folder),
        },
        Definition {
            name: "ragdown_folders",
            description: "The folders of documents: one line each with its name, title and how many documents it holds. Pass a name as folder to the other tools.",
            schema: schema::<FoldersArgs>(),
            output: Some(schema::<FolderList>()),
            kind: READ,
            runs: Runs::AtRoot(folders),
        },
    ];
    table.sort_by_key(|d| d.name);
    table
}

/// Whether `name` is served under these settings.
pub fn enabled(engine: &Engine, def: &Definition) -> bool {
    enabled_by(&engine.settings(), def)
}

/// Whether `def` is served under `settings` (read-only hides write tools; disabled ones go).
pub fn enabled_by(settings: &ServerSettings, def: &Definition) -> bool {
    let hidden_by_read_only = settings.read_only && def.kind.write;
    let disabled = settings.disabled_tools.iter().any(|d| d == def.name);
    !(hidden_by_read_only || disabled)
}

pub fn parse<T: for<'de> Deserialize<'de>>(tool: &str, args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args)
        .map_err(|e| ToolError::invalid(format!("{tool}: invalid arguments: {e}")))
}

/// Runs one tool and renders its answer as the MCP text a client gets. Blocking: the caller
/// runs it off the async executor.
pub fn call(engine: &Engine, name: &str, args: Value) -> Result<String, ToolError> {
    run(engine, name, args).map(|answer| format::answer_text(&answer))
}

/// The tool `name` as served by `settings`, or why not.
pub fn served(settings: &ServerSettings, name: &str) -> Result<&'static Definition, ToolError> {
    definition(name)
        .filter(|d| enabled_by(settings, d))
        .ok_or_else(|| {
            let why = if settings.read_only {
                " (this server is read-only)"
            } else {
                ""
            };
            ToolError::not_found(format!("unknown tool: {name}{why}"))
        })
}

/// Runs one tool in one folder: its typed answer, for callers that merge or re-shape answers
/// (the root endpoint over every folder). Blocking.
pub fn run(engine: &Engine, name: &str, args: Value) -> Result<Answer, ToolError> {
    let def = served(&engine.settings(), name)?;
    let Runs::InFolder { work, .. } = def.runs else {
        return Err(ToolError::not_found(format!(
            "unknown tool: {name} (it is the root /mcp endpoint's)"
        )));
    };
    // A reader first picks up whatever the primary committed meanwhile.
    engine.index.refresh()?;
    let args = if args.is_null() {
        Value::Object(Default::default())
    } else {
        args
    };
    work(engine, args)
}

// ------------------------------------------------------------- each tool's work in a folder

fn recall(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: RecallArgs = parse("ragdown_recall", args)?;
    let settings = engine.settings();
    let options = crate::recall::options(&a, &settings)?;
    // `run` has picked up the primary's commits already.
    let found = engine.recall_current(&a.query, &options, Asker::Agent, Instant::now())?;
    Ok(Answer::Recall(found, recall_view(&a, &settings)))
}

fn context(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: ContextArgs = parse("ragdown_context", args)?;
    Ok(Answer::Context(crate::context::context(engine, &a)?))
}

fn read_doc(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: ReadArgs = parse("ragdown_read_doc", args)?;
    let doc = documents::read_doc(
        engine,
        &a.path,
        documents::LineRange {
            start_line: a.start_line,
            end_line: a.end_line,
            before: a.before.unwrap_or(0).min(100),
            after: a.after.unwrap_or(0).min(100),
        },
    )?;
    engine.log_query(Entry::Read(Read {
        path: doc.path.clone(),
        lines: Some([a.start_line, a.end_line]),
        via: None,
    }));
    Ok(Answer::ReadDoc(doc))
}

fn backlinks(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: PathArgs = parse("ragdown_backlinks", args)?;
    Ok(Answer::Backlinks(documents::backlinks(engine, &a.path)?))
}

fn list(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let mut a: ListArgs = parse("ragdown_list", args)?;
    a.limit = Some(a.limit.unwrap_or(100).clamp(1, 1000));
    Ok(Answer::Listing(documents::list(engine, &a)?))
}

fn stats(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: StatsArgs = parse("ragdown_stats", args)?;
    Ok(Answer::Stats(Box::new(documents::stats(
        engine,
        a.include_files,
    )?)))
}

fn remember(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: RememberArgs = parse("ragdown_remember", args)?;
    Ok(Answer::Saved(documents::remember(engine, &a)?))
}

fn ingest(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: IngestArgs = parse("ragdown_ingest", args)?;
    Ok(Answer::Ingested(documents::ingest(engine, &a)?))
}

fn write(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: WriteArgs = parse("ragdown_write", args)?;
    Ok(Answer::Written(documents::write(engine, &a)?))
}

fn edit(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: EditArgs = parse("ragdown_edit", args)?;
    Ok(Answer::Edited(documents::edit(engine, &a)?))
}

fn move_paths(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: MoveArgs = parse("ragdown_move", args)?;
    Ok(Answer::Moved(documents::move_paths(
        engine, &a.from, &a.to,
    )?))
}

fn delete(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: DeleteArgs = parse("ragdown_delete", args)?;
    Ok(Answer::Deleted(documents::delete(
        engine,
        &a.path,
        a.recursive,
        a.base_hash.as_deref(),
    )?))
}

fn reindex(engine: &Engine, args: Value) -> Result<Answer, ToolError> {
    let a: ReindexArgs = parse("ragdown_reindex", args)?;
    if a.full {
        engine.index.reset()?;
    }
    Ok(Answer::Reindexed(Reindexed::from(&engine.sync()?)))
}

// ------------------------------------------------------------- across folders, at the root

/// An answer of another kind than the tool gives: a slip in this file, never a client's.
fn mismatch(name: &str, answer: &Answer) -> ToolError {
    ToolError::internal(format!(
        "{name} answered {:?} in a folder",
        std::mem::discriminant(answer)
    ))
}

/// Every folder's hits as one recall, best first; the view is the call's.
fn recall_merged(answers: Vec<(String, Answer)>, args: &Value) -> Result<Answer, ToolError> {
    let a: RecallArgs = parse("ragdown_recall", args.clone())?;
    let mut recalls = Vec::new();
    let mut view = None;
    for (folder, answer) in answers {
        let Answer::Recall(recall, shown) = answer else {
            return Err(mismatch("ragdown_recall", &answer));
        };
        view.get_or_insert(shown);
        recalls.push((folder, recall));
    }
    let merged: Recall = crate::recall::merge(recalls, crate::recall::limit(&a));
    // No folder answered: no hits, so no text for the server's limit to clip.
    let view = view.unwrap_or_else(|| recall_view(&a, &ServerSettings::default()));
    Ok(Answer::Recall(merged, view))
}

/// Each folder's listing, one after another, each line naming its folder.
fn list_merged(answers: Vec<(String, Answer)>, _: &Value) -> Result<Answer, ToolError> {
    let mut all = Listing {
        total: 0,
        documents: Vec::new(),
    };
    for (folder, answer) in answers {
        let Answer::Listing(listing) = answer else {
            return Err(mismatch("ragdown_list", &answer));
        };
        all.total += listing.total;
        all.documents
            .extend(listing.documents.into_iter().map(|d| Listed {
                folder: Some(folder.clone()),
                ..d
            }));
    }
    Ok(Answer::Listing(all))
}

/// Every folder's stats, and their sums.
fn stats_merged(answers: Vec<(String, Answer)>, _: &Value) -> Result<Answer, ToolError> {
    let mut all = AllStats {
        files: 0,
        chunks: 0,
        folders: Vec::new(),
    };
    for (_, answer) in answers {
        let Answer::Stats(stats) = answer else {
            return Err(mismatch("ragdown_stats", &answer));
        };
        all.files += stats.files;
        all.chunks += stats.chunks;
        all.folders.push(*stats);
    }
    Ok(Answer::AllStats(all))
}

/// Every folder's sync report, summed.
fn reindex_merged(answers: Vec<(String, Answer)>, _: &Value) -> Result<Answer, ToolError> {
    let mut all = Reindexed::default();
    for (_, answer) in answers {
        let Answer::Reindexed(one) = answer else {
            return Err(mismatch("ragdown_reindex", &answer));
        };
        all += one;
    }
    Ok(Answer::Reindexed(all))
}

/// The hook over every folder: one session memory, sections from any folder.
fn context_everywhere(root: &dyn EveryFolder, args: Value) -> Result<Answer, ToolError> {
    let a: ContextArgs = parse("ragdown_context", args)?;
    Ok(Answer::Context(crate::context::context_from(root, &a)?))
}

fn folders(root: &dyn EveryFolder, args: Value) -> Result<Answer, ToolError> {
    let _: FoldersArgs = parse("ragdown_folders", args)?;
    Ok(Answer::Folders(root.folder_list()))
}

fn create_folder(root: &dyn EveryFolder, args: Value) -> Result<Answer, ToolError> {
    let a: CreateFolderArgs = parse("ragdown_create_folder", args)?;
    let mut config = FolderConfig::default();
    config.apply(FolderPatch {
        mcp: Change::Set(true),
        title: a.title.map_or(Change::Keep, Change::Set),
        ..FolderPatch::default()
    });
    config.set_created_by("ragdown_create_folder");
    let name = root.create_folder(&a.name, &config)?;
    Ok(Answer::FolderCreated(FolderCreated { name }))
}

/// Runs a tool at the root over every folder (`folder` left out, or a tool that takes none).
/// A folder named in the call is the caller's to resolve ([`run`] in that folder's engine).
pub fn run_everywhere(
    root: &dyn EveryFolder,
    def: &Definition,
    args: Value,
) -> Result<Answer, ToolError> {
    let merge = match def.runs {
        Runs::AtRoot(work)
        | Runs::InFolder {
            across: AcrossFolders::OwnForm(work),
            ..
        } => return work(root, args),
        Runs::InFolder {
            across: AcrossFolders::NeedsFolder,
            ..
        } => {
            return Err(ToolError::invalid(format!(
                "{} needs a folder here: pass folder (ragdown_folders lists them)",
                def.name
            )));
        }
        Runs::InFolder {
            across: AcrossFolders::Merges(merge) | AcrossFolders::EveryFolder(merge),
            ..
        } => merge,
    };
    let mut answers = Vec::new();
    for (name, engine) in root.engines() {
        answers.push((name, run(&engine, def.name, args.clone())?));
    }
    merge(answers, &args)
}

/// How a recall's hits are shown: its `format`, clipped to `max_chars` (default the server's
/// text limit).
pub fn recall_view(a: &RecallArgs, settings: &ServerSettings) -> crate::answers::RecallView {
    match a.format {
        RecallFormat::Json => crate::answers::RecallView::Json,
        RecallFormat::Text => crate::answers::RecallView::Text {
            max_chars: a.max_chars.unwrap_or(settings.text_limit),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An agent picks arguments from the schema alone: each one says what it is for.
    #[test]
    fn every_tool_argument_has_a_description() {
        let mut missing = Vec::new();
        for tool in definitions() {
            let properties = tool.schema.get("properties").and_then(Value::as_object);
            for (name, property) in properties.into_iter().flatten() {
                let described = property
                    .get("description")
                    .and_then(Value::as_str)
                    .is_some_and(|d| !d.trim().is_empty());
                if !described {
                    missing.push(format!("{}.{name}", tool.name));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "arguments without a description: {missing:?}"
        );
    }

    /// The bounds the descriptions give are in the schema too, so a client (or a model)
    /// checking its arguments knows them: every documented "(1–50…)" has its numbers.
    #[test]
    fn documented_bounds_are_in_the_schema() {
        let bounds = |tool: &str, argument: &str| {
            let property = &definition(tool).unwrap().schema["properties"][argument];
            (property["minimum"].as_f64(), property["maximum"].as_f64())
        };
        assert_eq!(bounds("ragdown_recall", "top_k"), (Some(1.0), Some(50.0)));
        assert_eq!(bounds("ragdown_context", "top_k"), (Some(1.0), Some(50.0)));
        assert_eq!(
            bounds("ragdown_context", "min_ratio"),
            (Some(0.0), Some(1.0))
        );
        assert_eq!(bounds("ragdown_context", "min_evidence"), (Some(0.0), None));
        assert_eq!(bounds("ragdown_list", "limit"), (Some(1.0), Some(1000.0)));
        assert_eq!(bounds("ragdown_read_doc", "start_line"), (Some(1.0), None));
        // Every "(A–B" range written in a description is the schema's.
        for tool in definitions() {
            let properties = tool.schema.get("properties").and_then(Value::as_object);
            for (name, property) in properties.into_iter().flatten() {
                let description = property["description"].as_str().unwrap_or_default();
                let Some((low, high)) = description
                    .split_once('(')
                    .and_then(|(_, rest)| rest.split_once('–'))
                else {
                    continue;
                };
                let high: String = high.chars().take_while(char::is_ascii_digit).collect();
                if let (Ok(low), Ok(high)) = (low.trim().parse::<f64>(), high.parse::<f64>()) {
                    assert_eq!(
                        (property["minimum"].as_f64(), property["maximum"].as_f64()),
                        (Some(low), Some(high)),
                        "{}.{name}: {description}",
                        tool.name
                    );
                }
            }
        }
    }
}
