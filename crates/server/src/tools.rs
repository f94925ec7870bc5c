//! The thirteen tools: names, descriptions, argument schemas, annotations, which are write
//! tools, and dispatch from a tool name and JSON arguments to the engine. Transport-free: the
//! MCP adapter lists [`definitions`] and calls [`call`].

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::context::ContextArgs;
use crate::documents::{self, Edit, ListArgs, RememberArgs, WriteArgs};
use crate::{Engine, ToolError, format, paths};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WrittenBy {
    Agent,
    User,
}

impl From<WrittenBy> for ragdown_search::WrittenBy {
    fn from(w: WrittenBy) -> Self {
        match w {
            WrittenBy::Agent => Self::Agent,
            WrittenBy::User => Self::User,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecallFormat {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RecallArgs {
    /// What to look for, in words or with the exact name, error or flag.
    pub query: String,
    /// How many sections (1–50, default 8).
    #[serde(default)]
    pub top_k: Option<usize>,
    /// Only documents under this subfolder.
    #[serde(default)]
    pub path_prefix: Option<String>,
    /// Only documents with this tag (nested tags match: `project` matches `project/alpha`).
    #[serde(default)]
    pub tag: Option<String>,
    /// `agent`: documents an agent wrote (frontmatter created_by); `user`: the rest.
    #[serde(default)]
    pub written_by: Option<WrittenBy>,
    #[serde(default)]
    pub format: RecallFormat,
    /// Characters per hit in text output (default RAGDOWN_TEXT_LIMIT, 0 = never clip).
    #[serde(default)]
    pub max_chars: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// A document path relative to the folder, or a wikilink target (`Note`, `Note#Heading`, `sub/Note`, an alias).
    pub path: String,
    /// First line to return (1-based).
    #[serde(default)]
    pub start_line: Option<usize>,
    /// Last line to return.
    #[serde(default)]
    pub end_line: Option<usize>,
    /// Also this many whole sections before the lines asked for (widen a hit).
    #[serde(default)]
    pub before: Option<usize>,
    /// Also this many whole sections after them.
    #[serde(default)]
    pub after: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PathArgs {
    /// A document path relative to the folder.
    pub path: String,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ListSort {
    #[default]
    Path,
    Recent,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListToolArgs {
    #[serde(default)]
    pub path_prefix: Option<String>,
    #[serde(default)]
    pub tag: Option<String>,
    #[serde(default)]
    pub written_by: Option<WrittenBy>,
    /// Documents written in this session (frontmatter `session`).
    #[serde(default)]
    pub session_id: Option<String>,
    /// `path` (default) or `recent` (last changed first).
    #[serde(default)]
    pub sort: ListSort,
    /// Most documents (1–1000, default 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StatsArgs {
    /// Also list every document with its chunk count.
    #[serde(default)]
    pub include_files: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RememberToolArgs {
    pub title: String,
    /// The body, in Markdown.
    pub content: String,
    #[serde(default)]
    pub tags: Vec<String>,
    /// File name without `.md` (default `<date>-<title-slug>`).
    #[serde(default)]
    pub name: Option<String>,
    /// Paths of documents this one replaces because a fact changed.
    #[serde(default)]
    pub supersedes: Vec<String>,
    #[serde(default)]
    pub session_id: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IngestFormat {
    Text,
    Markdown,
    Html,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct IngestToolArgs {
    /// What the client fetched: a page's HTML, plain text, or Markdown.
    pub content: String,
    /// `html` (main content extracted, converted to Markdown), `text` or `markdown`.
    pub format: IngestFormat,
    /// Where it came from (a URL or a name). The same source again replaces the document.
    pub source: String,
    /// A title (default: the content's first heading, else the source).
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteToolArgs {
    /// A Markdown path (.md, .markdown, .mdx) relative to the folder.
    pub path: String,
    pub text: String,
    /// The hash ragdown_read_doc returned; required to replace an existing document.
    #[serde(default)]
    pub base_hash: Option<String>,
    /// Add the text at the end (or at the end of `heading`'s section) instead of replacing.
    #[serde(default)]
    pub append: bool,
    #[serde(default)]
    pub heading: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditItem {
    /// The exact passage to replace, character for character.
    pub old_text: String,
    /// Its replacement (empty deletes it).
    pub new_text: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditArgs {
    pub path: String,
    /// Applied in order, all or nothing.
    pub edits: Vec<EditItem>,
    #[serde(default)]
    pub base_hash: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MoveArgs {
    /// The document or subfolder to move.
    pub from: String,
    /// Its whole new path, name included.
    pub to: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteArgs {
    pub path: String,
    /// Needed to delete a non-empty subfolder.
    #[serde(default)]
    pub recursive: bool,
    /// Delete only the version that was read.
    #[serde(default)]
    pub base_hash: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReindexArgs {
    /// Drop everything and re-embed every document.
    #[serde(default)]
    pub full: bool,
}

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
    pub kind: ToolKind,
    pub scope: Scope,
}

fn schema<T: JsonSchema>() -> serde_json::Map<String, Value> {
    match serde_json::to_value(schemars::schema_for!(T)) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}

pub const READ: ToolKind = ToolKind {
    write: false,
    destructive: false,
    idempotent: true,
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
            kind: READ,
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_context",
            description: "For hooks that run before a turn: the user's documents related to the prompt, as a ready-to-inject <ragdown-context> block, or empty text when nothing is related enough. Unlike ragdown_recall it gates on similarity, skips short prompts and slash commands, and never repeats a section for the same session_id. reset forgets the session (call it with an empty prompt after a compaction). format claude-code wraps the block for a UserPromptSubmit hook.",
            schema: schema::<ContextArgs>(),
            kind: READ,
            scope: Scope::Folder,
        },
        Definition {
            name: "ragdown_delete",
            description: "Delete a document, or a subfolder with recursive: true. Permanent: no trash, no undo; links to it are left dangling, so call ragdown_backlinks first. For an outdated document prefer ragdown_remember with supersedes. base_hash deletes only the version you read.",
            schema: schema::<DeleteArgs>(),
            kind: ToolKind {
                write: true,
                destructive: true,
                idempotent: false,
            },
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_edit",
            description: "Change part of a document without sending the rest: each edit swaps one exact passage (old_text must match character for character, and once unless replace_all). Edits apply in order, all or nothing; an empty new_text deletes. A miss is answered with the nearest passage the document has.",
            schema: schema::<EditArgs>(),
            kind: ToolKind {
                write: true,
                destructive: true,
                idempotent: false,
            },
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_ingest",
            description: "Keep content the client fetched (a web page's HTML, text, Markdown) as a searchable document under ingested/, converted to Markdown with its source in the frontmatter. The same source again replaces it. Use it for pages worth finding later; use ragdown_remember for your own notes.",
            schema: schema::<IngestToolArgs>(),
            kind: ToolKind {
                write: true,
                destructive: false,
                idempotent: true,
            },
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_list",
            description: "Browse rather than search: one line per document with path, title, tags, last change, who wrote it and its description. Filter by subfolder, tag, author or session; sort recent lists the last changed first.",
            schema: schema::<ListToolArgs>(),
            kind: READ,
            scope: Scope::Folder,
        },
        Definition {
            name: "ragdown_move",
            description: "Rename or move a document or subfolder within the folder, rewriting every wikilink and relative link that pointed at it. Never overwrites. to is the whole new path, name included; missing folders are created. Use it instead of write + delete.",
            schema: schema::<MoveArgs>(),
            kind: ToolKind {
                write: true,
                destructive: false,
                idempotent: false,
            },
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_read_doc",
            description: "Read a Markdown document, whole or by line range, straight from disk; never clipped. Use it to see around a ragdown_recall hit or to follow a [[wikilink]] (path may be a link target: Note, Note#Heading, sub/Note, an alias). The first line is 'path:start-end of total_lines (hash …)'; the hash is the whole file's, for base_hash. The text follows exactly as in the file.",
            schema: schema::<ReadArgs>(),
            kind: READ,
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_recall",
            description: "Hybrid (semantic + keyword) search over the user's Markdown documents. Returns sections with path, line range, heading breadcrumb, cosine similarity and the day the file changed, and says when an agent wrote one. Call it before answering anything the documents may cover (decisions, how-tos, runbooks, notes), then read around a hit with ragdown_read_doc.",
            schema: schema::<RecallArgs>(),
            kind: READ,
            scope: Scope::Folder,
        },
        Definition {
            name: "ragdown_reindex",
            description: "Bring the index up to date now (changes are normally picked up on their own); use after bulk edits made while no server ran. full re-embeds everything. Returns the sync report as JSON.",
            schema: schema::<ReindexArgs>(),
            kind: ToolKind {
                write: true,
                destructive: false,
                idempotent: true,
            },
            scope: Scope::Server,
        },
        Definition {
            name: "ragdown_remember",
            description: "Save something worth keeping (a decision, a fix, a how-to) as a new document, indexed at once; never overwrites. Pass supersedes with the paths of documents it replaces when a fact changed (not merely when writing about the same topic).",
            schema: schema::<RememberToolArgs>(),
            kind: ToolKind {
                write: true,
                destructive: false,
                idempotent: false,
            },
            scope: Scope::Document,
        },
        Definition {
            name: "ragdown_stats",
            description: "The documents folder, index size (files, chunks), the embedder, whether this process is the indexing primary, and the last sync.",
            schema: schema::<StatsArgs>(),
            kind: READ,
            scope: Scope::Folder,
        },
        Definition {
            name: "ragdown_write",
            description: "Rewrite or append to a document, or create one at a chosen path. Prefer ragdown_edit for partial changes. Replacing needs the base_hash from ragdown_read_doc; if the file changed since, nothing is written. Created documents get created_by: ragdown_write.",
            schema: schema::<WriteToolArgs>(),
            kind: ToolKind {
                write: true,
                destructive: true,
                idempotent: false,
            },
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

/// Runs one tool. Blocking: the caller runs it off the async executor.
pub fn call(engine: &Engine, name: &str, args: Value) -> Result<String, ToolError> {
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
    match def.name {
        "ragdown_recall" => {
            let a: RecallArgs = parse(name, args)?;
            if a.query.trim().is_empty() {
                return Err(ToolError::invalid("query must not be empty"));
            }
            let options = ragdown_search::SearchOptions {
                limit: a.top_k.unwrap_or(8).clamp(1, 50),
                path_prefix: engine.scoped_prefix(prefix_of(a.path_prefix.as_deref())?),
                tag: a.tag.as_deref().and_then(ragdown_markdown::tags::normalize),
                written_by: a.written_by.map(Into::into),
                max_per_document: engine.settings().max_per_document,
                follow_links: engine.settings().follow_links,
                ..Default::default()
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
            let indexing = engine.indexing();
            Ok(match a.format {
                RecallFormat::Json => format::recall_json(&hits, indexing.as_ref()),
                RecallFormat::Text => format::recall_text(
                    &hits,
                    a.max_chars.unwrap_or(engine.settings().text_limit),
                    indexing.as_ref(),
                ),
            })
        }
        "ragdown_context" => crate::context::context(engine, &parse::<ContextArgs>(name, args)?),
        "ragdown_read_doc" => {
            let a: ReadArgs = parse(name, args)?;
            let text = documents::read_doc(
                engine,
                &a.path,
                documents::LineRange {
                    start_line: a.start_line,
                    end_line: a.end_line,
                    before: a.before.unwrap_or(0).min(100),
                    after: a.after.unwrap_or(0).min(100),
                },
            )?;
            // The path as read (a wikilink target resolves to one): the first line names it.
            let read = text
                .lines()
                .next()
                .and_then(|l| l.split(" of ").next())
                .and_then(|l| l.rsplit_once(':'))
                .map(|(path, _)| path.to_string());
            engine.log_query(serde_json::json!({
                "kind": "read",
                "path": read.unwrap_or_else(|| a.path.clone()),
                "lines": [a.start_line, a.end_line],
            }));
            Ok(text)
        }
        "ragdown_backlinks" => documents::backlinks(engine, &parse::<PathArgs>(name, args)?.path),
        "ragdown_list" => {
            let a: ListToolArgs = parse(name, args)?;
            documents::list(
                engine,
                &ListArgs {
                    path_prefix: a.path_prefix,
                    tag: a.tag,
                    written_by: a.written_by.map(Into::into),
                    session_id: a.session_id,
                    recent: matches!(a.sort, ListSort::Recent),
                    limit: a.limit.unwrap_or(100).clamp(1, 1000),
                },
            )
        }
        "ragdown_stats" => documents::stats(engine, parse::<StatsArgs>(name, args)?.include_files),
        "ragdown_remember" => {
            let a: RememberToolArgs = parse(name, args)?;
            documents::remember(
                engine,
                &RememberArgs {
                    title: a.title,
                    content: a.content,
                    tags: a.tags,
                    name: a.name,
                    supersedes: a.supersedes,
                    session_id: a.session_id,
                },
            )
        }
        "ragdown_ingest" => {
            let a: IngestToolArgs = parse(name, args)?;
            documents::ingest(
                engine,
                &documents::IngestArgs {
                    content: a.content,
                    format: match a.format {
                        IngestFormat::Text => "text",
                        IngestFormat::Markdown => "markdown",
                        IngestFormat::Html => "html",
                    }
                    .into(),
                    source: a.source,
                    title: a.title,
                },
            )
        }
        "ragdown_write" => {
            let a: WriteToolArgs = parse(name, args)?;
            documents::write(
                engine,
                &WriteArgs {
                    path: a.path,
                    text: a.text,
                    base_hash: a.base_hash,
                    append: a.append,
                    heading: a.heading,
                    session_id: a.session_id,
                },
            )
        }
        "ragdown_edit" => {
            let a: EditArgs = parse(name, args)?;
            let edits: Vec<Edit> = a
                .edits
                .into_iter()
                .map(|e| Edit {
                    old_text: e.old_text,
                    new_text: e.new_text,
                    replace_all: e.replace_all,
                })
                .collect();
            documents::edit(engine, &a.path, &edits, a.base_hash.as_deref())
        }
        "ragdown_move" => {
            let a: MoveArgs = parse(name, args)?;
            documents::move_document(engine, &a.from, &a.to)
        }
        "ragdown_delete" => {
            let a: DeleteArgs = parse(name, args)?;
            documents::delete(engine, &a.path, a.recursive, a.base_hash.as_deref())
        }
        "ragdown_reindex" => {
            let a: ReindexArgs = parse(name, args)?;
            if a.full {
                engine.index.reset()?;
            }
            let r = engine.sync()?;
            Ok(serde_json::json!({
                "added": r.added, "updated": r.updated, "removed": r.removed,
                "unchanged": r.unchanged, "chunks": r.embedded, "ms": r.elapsed.as_millis() as u64,
            })
            .to_string())
        }
        other => Err(ToolError::not_found(format!("unknown tool: {other}"))),
    }
}
