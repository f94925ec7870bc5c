//! The table of the thirteen tools — name, description, argument schema (from [`crate::args`]),
//! annotations, whether each writes and its scope — and dispatch from a tool name and JSON
//! arguments to the engine: [`run`] gives the typed answer, [`call`] its MCP text.
//! Transport-free: the MCP adapters list [`definitions`] and call [`call`] or [`run`].

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::answers::{Answer, FoundHit, Recall, RecallView, Reindexed};
use crate::args::{
    DeleteArgs, EditArgs, IngestArgs, ListArgs, MoveArgs, PathArgs, ReadArgs, RecallArgs,
    RecallFormat, ReindexArgs, RememberArgs, StatsArgs, WriteArgs,
};
use crate::context::ContextArgs;
use crate::documents;
use crate::{Engine, ToolError, format, paths};

/// Whether a tool reads, writes, and what its annotations say.
#[derive(Debug, Clone, Copy)]
pub struct ToolKind {
    pub write: bool,
    pub destructive: bool,
    pub idempotent: bool,
}

/// What a tool acts on, which decides what the root `/mcp` (every folder at once) asks of it.
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
    pub scope: Scope,
}

/// The JSON schema of `T`, as a tool's input or output schema.
pub fn schema<T: JsonSchema>() -> serde_json::Map<String, Value> {
    match serde_json::to_value(schemars::schema_for!(T)) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
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

/// Every tool, in name order: the table, built once (schemas are generated from the argument
/// types, so not on every call).
pub fn definitions() -> &'static [Definition] {
    static TABLE: std::sync::LazyLock<Vec<Definition>> = std::sync::LazyLock::new(table);
    &TABLE
}

/// The tool named `name`, served or not.
pub fn definition(name: &str) -> Option<&'static Definition> {
    definitions().iter().find(|d| d.name == name)
}

fn table() -> Vec<Definition> {
    vec![
        Definition {
            name: "ragdown_backlinks",
            description: "The documents that link to a document (wikilinks, aliases, relative Markdown links), with the lines the links are on. Call it before changing, moving or superseding a document. Returns JSON {path, backlinks: [{path, title, lines: [{line, text}]}]}.",
            schema: schema::<PathArgs>(),
            output: Some(schema::<crate::answers::Backlinks>()),
            kind: READ,
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_context",
            description: "For hooks that run before a turn: the user's documents related to the prompt, as a ready-to-inject <ragdown-context> block, or empty text when nothing is related enough. Unlike ragdown_recall it gates on similarity, skips short prompts and slash commands, and never repeats a section for the same session_id. reset forgets the session (call it with an empty prompt after a compaction). format claude-code wraps the block for a UserPromptSubmit hook.",
            schema: schema::<ContextArgs>(),
            output: None,
            kind: READ,
            scope: Scope::Folder,
        },
        Definition {
            name: "ragdown_delete",
            description: "Delete a document, or a subfolder with recursive: true. Permanent: no trash, no undo; links to it are left dangling, so call ragdown_backlinks first. For an outdated document prefer ragdown_remember with supersedes. base_hash deletes only the version you read.",
            schema: schema::<DeleteArgs>(),
            output: Some(schema::<crate::answers::Deleted>()),
            kind: REPLACES,
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_edit",
            description: "Change part of a document without sending the rest: each edit swaps one exact passage (old_text must match character for character, and once unless replace_all). Edits apply in order, all or nothing; an empty new_text deletes. A miss is answered with the nearest passage the document has.",
            schema: schema::<EditArgs>(),
            output: Some(schema::<crate::answers::Edited>()),
            kind: REPLACES,
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_ingest",
            description: "Keep content the client fetched (a web page's HTML, text, Markdown) as a searchable document under ingested/, converted to Markdown with its source in the frontmatter. The same source again replaces it. Use it for pages worth finding later; use ragdown_remember for your own notes.",
            schema: schema::<IngestArgs>(),
            output: Some(schema::<crate::answers::Ingested>()),
            kind: SAME_AGAIN,
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_list",
            description: "Browse rather than search: one line per document with path, title, tags, last change, who wrote it and its description. Filter by subfolder, tag, author or session; sort recent lists the last changed first.",
            schema: schema::<ListArgs>(),
            output: Some(schema::<crate::answers::Listing>()),
            kind: READ,
            scope: Scope::Folder,
        },
        Definition {
            name: "ragdown_move",
            description: "Rename or move a document or subfolder within the folder, rewriting every wikilink and relative link that pointed at it. Never overwrites. to is the whole new path, name included; missing folders are created. Use it instead of write + delete.",
            schema: schema::<MoveArgs>(),
            output: Some(schema::<crate::answers::Moved>()),
            kind: ADDS,
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_read_doc",
            description: "Read a Markdown document, whole or by line range, straight from disk; never clipped. Use it to see around a ragdown_recall hit or to follow a [[wikilink]] (path may be a link target: Note, Note#Heading, sub/Note, an alias). The first line is 'path:start-end of total_lines (hash …)'; the hash is the whole file's, for base_hash. The text follows exactly as in the file.",
            schema: schema::<ReadArgs>(),
            output: Some(schema::<crate::answers::ReadDoc>()),
            kind: READ,
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_recall",
            description: "Hybrid (semantic + keyword) search over the user's Markdown documents. Returns sections with path, line range, heading breadcrumb, cosine similarity and the day the file changed, and says when an agent wrote one. Call it before answering anything the documents may cover (decisions, how-tos, runbooks, notes), then read around a hit with ragdown_read_doc.",
            schema: schema::<RecallArgs>(),
            output: Some(schema::<crate::answers::Recall>()),
            kind: READ,
            scope: Scope::Folder,
        },
        Definition {
            name: "ragdown_reindex",
            description: "Bring the index up to date now (changes are normally picked up on their own); use after bulk edits made while no server ran. full re-embeds everything. Returns the sync report as JSON.",
            schema: schema::<ReindexArgs>(),
            output: Some(schema::<crate::answers::Reindexed>()),
            kind: SAME_AGAIN,
            scope: Scope::Server,
        },
        Definition {
            name: "ragdown_remember",
            description: "Save something worth keeping (a decision, a fix, a how-to) as a new document, indexed at once; never overwrites. Pass supersedes with the paths of documents it replaces when a fact changed (not merely when writing about the same topic).",
            schema: schema::<RememberArgs>(),
            output: Some(schema::<crate::answers::Saved>()),
            kind: ADDS,
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_stats",
            description: "The documents folder, index size (files, chunks), the embedder, whether this process is the indexing primary, and the last sync.",
            schema: schema::<StatsArgs>(),
            output: Some(schema::<crate::answers::Stats>()),
            kind: READ,
            scope: Scope::Folder,
        },
        Definition {
            name: "ragdown_write",
            description: "Rewrite or append to a document, or create one at a chosen path. Prefer ragdown_edit for partial changes. Replacing needs the base_hash from ragdown_read_doc; if the file changed since, nothing is written. Created documents get created_by: ragdown_write.",
            schema: schema::<WriteArgs>(),
            output: Some(schema::<crate::answers::Written>()),
            kind: REPLACES,
            scope: Scope::Document,
        },
    ]
}

/// Whether `name` is served under these settings.
pub fn enabled(engine: &Engine, def: &Definition) -> bool {
    enabled_by(&engine.settings(), def)
}

/// Whether `def` is served under `settings` (read-only hides write tools; disabled ones go).
pub fn enabled_by(settings: &crate::ServerSettings, def: &Definition) -> bool {
    let hidden_by_read_only = settings.read_only && def.kind.write;
    let disabled = settings.disabled_tools.iter().any(|d| d == def.name);
    !(hidden_by_read_only || disabled)
}

pub fn parse<T: for<'de> Deserialize<'de>>(tool: &str, args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args)
        .map_err(|e| ToolError::invalid(format!("{tool}: invalid arguments: {e}")))
}

pub fn prefix_of(input: Option<&str>) -> Result<Option<String>, ToolError> {
    match input {
        None => Ok(None),
        Some(p) => {
            let n = paths::normalize(p).map_err(|_| {
                ToolError::invalid(format!("path_prefix is outside the docs folder: {p}"))
            })?;
            Ok((!n.is_empty()).then_some(n))
        }
    }
}

/// Runs one tool and renders its answer as the MCP text a client gets. Blocking: the caller
/// runs it off the async executor.
pub fn call(engine: &Engine, name: &str, args: Value) -> Result<String, ToolError> {
    run(engine, name, args).map(|answer| format::answer_text(&answer))
}

/// Runs one tool: its typed answer, for callers that merge or re-shape answers (the root
/// endpoint over every folder). Blocking.
pub fn run(engine: &Engine, name: &str, args: Value) -> Result<Answer, ToolError> {
    let Some(def) = definition(name).filter(|d| enabled(engine, d)) else {
        let why = if engine.settings().read_only {
            " (this server is read-only)"
        } else {
            ""
        };
        return Err(ToolError::not_found(format!("unknown tool: {name}{why}")));
    };
    // A reader first picks up whatever the primary committed meanwhile.
    engine.index.refresh()?;
    let args = if args.is_null() {
        Value::Object(Default::default())
    } else {
        args
    };
    Ok(match def.name {
        "ragdown_recall" => {
            let a: RecallArgs = parse(name, args)?;
            let options = recall_options(&a, &engine.settings())?;
            let options = ragdown_search::SearchOptions {
                path_prefix: engine.scoped_prefix(options.path_prefix),
                ..options
            };
            let started = std::time::Instant::now();
            let hits =
                engine.scope_hits(ragdown_search::search(&engine.index, &a.query, &options)?);
            engine.log_query(serde_json::json!({
                "kind": "recall",
                "query": a.query,
                "filters": {"path_prefix": options.path_prefix, "tag": options.tag, "top_k": options.limit},
                "hits": crate::query_log::hits_json(&hits),
                "min_score": crate::format::rounded(engine.index.embedder().min_score(), 4),
                "latency_ms": started.elapsed().as_secs_f64() * 1000.0,
            }));
            // During a first index (or any long sync) the answer says it may be incomplete.
            let recall = Recall {
                hits: hits.into_iter().map(FoundHit::alone).collect(),
                indexing: engine.indexing(),
                keyword_only: ragdown_search::keyword_only(&engine.index),
            };
            Answer::Recall(recall, recall_view(&a, &engine.settings()))
        }
        "ragdown_context" => Answer::Context(crate::context::context(
            engine,
            &parse::<ContextArgs>(name, args)?,
        )?),
        "ragdown_read_doc" => {
            let a: ReadArgs = parse(name, args)?;
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
            engine.log_query(serde_json::json!({
                "kind": "read",
                "path": doc.path,
                "lines": [a.start_line, a.end_line],
            }));
            Answer::ReadDoc(doc)
        }
        "ragdown_backlinks" => Answer::Backlinks(documents::backlinks(
            engine,
            &parse::<PathArgs>(name, args)?.path,
        )?),
        "ragdown_list" => {
            let mut a: ListArgs = parse(name, args)?;
            a.limit = Some(a.limit.unwrap_or(100).clamp(1, 1000));
            Answer::Listing(documents::list(engine, &a)?)
        }
        "ragdown_stats" => Answer::Stats(Box::new(documents::stats(
            engine,
            parse::<StatsArgs>(name, args)?.include_files,
        )?)),
        "ragdown_remember" => Answer::Saved(documents::remember(
            engine,
            &parse::<RememberArgs>(name, args)?,
        )?),
        "ragdown_ingest" => Answer::Ingested(documents::ingest(
            engine,
            &parse::<IngestArgs>(name, args)?,
        )?),
        "ragdown_write" => {
            Answer::Written(documents::write(engine, &parse::<WriteArgs>(name, args)?)?)
        }
        "ragdown_edit" => Answer::Edited(documents::edit(engine, &parse::<EditArgs>(name, args)?)?),
        "ragdown_move" => {
            let a: MoveArgs = parse(name, args)?;
            Answer::Moved(documents::move_paths(engine, &a.from, &a.to)?)
        }
        "ragdown_delete" => {
            let a: DeleteArgs = parse(name, args)?;
            Answer::Deleted(documents::delete(
                engine,
                &a.path,
                a.recursive,
                a.base_hash.as_deref(),
            )?)
        }
        "ragdown_reindex" => {
            let a: ReindexArgs = parse(name, args)?;
            if a.full {
                engine.index.reset()?;
            }
            Answer::Reindexed(Reindexed::from(&engine.sync()?))
        }
        other => return Err(ToolError::not_found(format!("unknown tool: {other}"))),
    })
}

/// The search a recall asks for under `settings` (the path prefix as the client gave it: an
/// endpoint narrows it to its scope). Refuses an empty query.
pub fn recall_options(
    a: &RecallArgs,
    settings: &crate::ServerSettings,
) -> Result<ragdown_search::SearchOptions, ToolError> {
    if a.query.trim().is_empty() {
        return Err(ToolError::invalid("query must not be empty"));
    }
    Ok(ragdown_search::SearchOptions {
        limit: a.top_k.unwrap_or(8).clamp(1, 50),
        path_prefix: prefix_of(a.path_prefix.as_deref())?,
        tag: a.tag.as_deref().and_then(ragdown_markdown::tags::normalize),
        written_by: a.written_by.map(Into::into),
        max_per_document: settings.max_per_document,
        follow_links: settings.follow_links,
        ..Default::default()
    })
}

/// How a recall's hits are shown: its `format`, clipped to `max_chars` (default the server's
/// text limit).
pub fn recall_view(a: &RecallArgs, settings: &crate::ServerSettings) -> RecallView {
    match a.format {
        RecallFormat::Json => RecallView::Json,
        RecallFormat::Text => RecallView::Text {
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
