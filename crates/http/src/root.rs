//! The root endpoint `/mcp` (`RAGDOWN_ROOT_MCP`): one MCP server, named `ragdown`, over every
//! folder with MCP on. Every tool but `ragdown_reindex` takes a `folder`; the ones that work
//! on a document need it, while recall, list, context and stats cover every folder when it is
//! left out and name each result's folder (`[work] backups.md:7-9`). Adds `ragdown_folders`
//! and `ragdown_create_folder` (the only place an agent can make a folder).
//!
//! A human-only folder does not exist here: naming it answers as a missing folder would.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use ragdown_search::{Hit, SearchOptions};
use ragdown_server::context::{ContextArgs, ContextSource, Sessions, context_from};
use ragdown_server::folder_config::FolderConfig;
use ragdown_server::mcp::ToolHost;
use ragdown_server::tools::{self, Definition, READ, RecallArgs, RecallFormat, Scope, ToolKind};
use ragdown_server::{HookSettings, ToolError, format};
use serde_json::{Value, json};

use crate::folders::{Folder, Folders};

pub struct RootHost {
    folders: Arc<Folders>,
    /// Hook memory of calls that name no folder.
    sessions: Sessions,
}

/// A tool of the table the root has no every-folder form of: a tool added to the table must
/// be given one here (the table-walk test in `crates/cli/tests/http.rs` finds it).
fn no_root_form(name: &str) -> ToolError {
    ToolError::internal(format!("{name} has no form for every folder: pass folder"))
}

/// An id unique across folders (chunk and document ids are per folder's index).
fn global_id(folder: &str, id: i64) -> i64 {
    let mut h = DefaultHasher::new();
    folder.hash(&mut h);
    ((h.finish() & 0x7_FFFF) as i64) << 40 | (id & ((1 << 40) - 1))
}

/// A hit relabelled for the root: `[folder] path`, ids unique across folders.
fn labelled(folder: &str, mut hit: Hit) -> Hit {
    let mut doc = (*hit.document).clone();
    doc.path = format!("[{folder}] {}", doc.path);
    doc.id = global_id(folder, doc.id);
    hit.document = Arc::new(doc);
    hit.chunk_id = global_id(folder, hit.chunk_id);
    hit
}

fn folder_property(required: bool) -> Value {
    json!({
        "type": "string",
        "description": if required {
            "The folder the document is in (ragdown_folders lists them); paths are relative to it."
        } else {
            "Only this folder (ragdown_folders lists them); every folder with MCP on when left out."
        }
    })
}

impl RootHost {
    pub fn new(folders: Arc<Folders>) -> Self {
        Self {
            folders,
            sessions: Sessions::new(200),
        }
    }

    fn settings(&self) -> ragdown_server::ServerSettings {
        match self.folders.settings.read() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// The folders an agent may see here: MCP on.
    fn mcp_folders(&self) -> Vec<Arc<Folder>> {
        self.folders
            .list()
            .into_iter()
            .filter(|f| f.config().mcp)
            .collect()
    }

    fn folder(&self, name: &str) -> Result<Arc<Folder>, ToolError> {
        self.folders
            .get(name)
            .filter(|f| f.config().mcp)
            .ok_or_else(|| {
                ToolError::not_found(format!(
                    "no folder named {name}: ragdown_folders lists the folders"
                ))
            })
    }

    /// Searches every MCP folder and merges the hits by fused score.
    fn search_all(&self, query: &str, options: &SearchOptions) -> Result<Vec<Hit>, ToolError> {
        let mut hits = Vec::new();
        for folder in self.mcp_folders() {
            folder.engine.index.refresh()?;
            let found = ragdown_search::search(&folder.engine.index, query, options)?;
            hits.extend(found.into_iter().map(|h| labelled(&folder.name, h)));
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.similarity.total_cmp(&a.similarity))
        });
        hits.truncate(options.limit);
        Ok(hits)
    }

    fn recall_all(&self, args: Value) -> Result<String, ToolError> {
        let a: RecallArgs = tools::parse("ragdown_recall", args)?;
        if a.query.trim().is_empty() {
            return Err(ToolError::invalid("query must not be empty"));
        }
        let settings = self.settings();
        let options = SearchOptions {
            limit: a.top_k.unwrap_or(8).clamp(1, 50),
            path_prefix: tools::prefix_of(a.path_prefix.as_deref())?,
            tag: a.tag.as_deref().and_then(ragdown_markdown::tags::normalize),
            written_by: a.written_by.map(Into::into),
            max_per_document: settings.max_per_document,
            follow_links: settings.follow_links,
            ..Default::default()
        };
        let hits = self.search_all(&a.query, &options)?;
        let indexing = ragdown_index::SyncProgress::total(
            self.mcp_folders()
                .iter()
                .filter_map(|f| f.engine.indexing()),
        );
        Ok(match a.format {
            RecallFormat::Text => format::recall_text(
                &hits,
                a.max_chars.unwrap_or(settings.text_limit),
                indexing.as_ref(),
            ),
            RecallFormat::Json => {
                // `[folder] path` becomes two fields.
                let mut v: Value =
                    serde_json::from_str(&format::recall_json(&hits, indexing.as_ref()))
                        .map_err(|e| ToolError::internal(e.to_string()))?;
                for hit in v["hits"].as_array_mut().into_iter().flatten() {
                    let labelled = hit["path"].as_str().unwrap_or("").to_string();
                    if let Some((folder, path)) =
                        labelled.strip_prefix('[').and_then(|l| l.split_once("] "))
                    {
                        hit["folder"] = json!(folder);
                        hit["path"] = json!(path);
                    }
                }
                v.to_string()
            }
        })
    }

    fn list_all(&self, args: Value) -> Result<String, ToolError> {
        let mut lines = Vec::new();
        let mut total = 0usize;
        for folder in self.mcp_folders() {
            let text = tools::call(&folder.engine, "ragdown_list", args.clone())?;
            let mut it = text.lines();
            let Some(head) = it.next().and_then(|h| h.strip_prefix("documents: ")) else {
                continue;
            };
            total += head
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            lines.extend(it.map(|l| format!("[{}] {l}", folder.name)));
        }
        if lines.is_empty() {
            return Ok("No documents.".into());
        }
        Ok(format!("documents: {total}\n{}", lines.join("\n")))
    }

    fn stats_all(&self, args: Value) -> Result<String, ToolError> {
        let mut each = Vec::new();
        let (mut files, mut chunks) = (0u64, 0u64);
        for folder in self.mcp_folders() {
            let text = tools::call(&folder.engine, "ragdown_stats", args.clone())?;
            let v: Value =
                serde_json::from_str(&text).map_err(|e| ToolError::internal(e.to_string()))?;
            files += v["files"].as_u64().unwrap_or(0);
            chunks += v["chunks"].as_u64().unwrap_or(0);
            each.push(v);
        }
        Ok(json!({ "files": files, "chunks": chunks, "folders": each }).to_string())
    }

    fn folders_tool(&self) -> String {
        let lines: Vec<String> = self
            .mcp_folders()
            .iter()
            .map(|f| {
                let config = f.config();
                let documents = f.engine.index.snapshot().document_count();
                format!(
                    "{} — {} ({documents} documents)",
                    f.name,
                    config.title_or(&f.name)
                )
            })
            .collect();
        if lines.is_empty() {
            return "No folders with MCP on. ragdown_create_folder makes one.".into();
        }
        lines.join("\n")
    }

    fn create_folder(&self, args: Value) -> Result<String, ToolError> {
        #[derive(serde::Deserialize)]
        struct CreateArgs {
            name: String,
            #[serde(default)]
            title: Option<String>,
        }
        let a: CreateArgs = tools::parse("ragdown_create_folder", args)?;
        let mut config = FolderConfig::default();
        let mut patch = serde_json::Map::new();
        patch.insert("mcp".into(), json!(true));
        if let Some(t) = a.title {
            patch.insert("title".into(), json!(t));
        }
        config.apply_patch(&patch)?;
        config.set_created_by("ragdown_create_folder");
        let folder = self.folders.create(&a.name, &config)?;
        Ok(format!(
            "created folder {} with MCP on; pass folder: {:?} to the other tools",
            folder.name, folder.name
        ))
    }

    fn reindex_all(&self, args: Value) -> Result<String, ToolError> {
        let (mut added, mut updated, mut removed, mut unchanged, mut chunks, mut ms) =
            (0, 0, 0, 0, 0, 0);
        for folder in self.mcp_folders() {
            let text = tools::call(&folder.engine, "ragdown_reindex", args.clone())?;
            let v: Value =
                serde_json::from_str(&text).map_err(|e| ToolError::internal(e.to_string()))?;
            added += v["added"].as_u64().unwrap_or(0);
            updated += v["updated"].as_u64().unwrap_or(0);
            removed += v["removed"].as_u64().unwrap_or(0);
            unchanged += v["unchanged"].as_u64().unwrap_or(0);
            chunks += v["chunks"].as_u64().unwrap_or(0);
            ms += v["ms"].as_u64().unwrap_or(0);
        }
        Ok(json!({
            "added": added, "updated": updated, "removed": removed,
            "unchanged": unchanged, "chunks": chunks, "ms": ms,
        })
        .to_string())
    }
}

impl ContextSource for RootHost {
    fn source_name(&self) -> &str {
        "ragdown"
    }
    fn sessions(&self) -> &Sessions {
        &self.sessions
    }
    fn hook(&self) -> HookSettings {
        self.settings().hook
    }
    fn max_per_document(&self) -> usize {
        self.settings().max_per_document
    }
    fn background(&self) -> Option<f32> {
        // The highest of the folders' backgrounds: the strictest reading of closeness.
        self.mcp_folders()
            .iter()
            .filter_map(|folder| folder.engine.background())
            .reduce(f32::max)
    }
    fn search(&self, prompt: &str, options: &SearchOptions) -> Result<Vec<Hit>, ToolError> {
        self.search_all(prompt, options)
    }
    fn aliased(&self, prompt: &str) -> HashSet<i64> {
        let mut ids = HashSet::new();
        for folder in self.mcp_folders() {
            for id in folder.engine.aliased(prompt) {
                ids.insert(global_id(&folder.name, id));
            }
        }
        ids
    }
    fn log(&self, entry: Value) {
        if self.settings().query_log {
            self.folders.query_log.record("*", entry);
        }
    }
}

impl ToolHost for RootHost {
    fn server_name(&self) -> String {
        "ragdown".into()
    }

    fn instructions(&self) -> String {
        "Search the user's Markdown documents, kept in folders (ragdown_folders lists them). Call ragdown_recall before answering a question the documents might cover, then ragdown_read_doc with the hit's folder and path to read around it before relying on it.".into()
    }

    fn definitions(&self) -> Vec<Definition> {
        let settings = self.settings();
        let mut defs: Vec<Definition> = tools::definitions()
            .iter()
            .cloned()
            .map(|mut d| {
                if d.scope != Scope::Server {
                    let required = d.scope == Scope::Document;
                    if let Some(Value::Object(props)) = d.schema.get_mut("properties") {
                        props.insert("folder".into(), folder_property(required));
                    }
                    if required {
                        let list = d
                            .schema
                            .entry("required")
                            .or_insert_with(|| Value::Array(Vec::new()));
                        if let Value::Array(list) = list {
                            list.push(json!("folder"));
                        }
                    }
                }
                d
            })
            .collect();
        defs.push(Definition {
            name: "ragdown_folders",
            description: "The folders of documents: one line each with its name, title and how many documents it holds. Pass a name as folder to the other tools.",
            schema: serde_json::from_value(json!({"type": "object", "properties": {}}))
                .unwrap_or_default(),
            kind: READ,
            scope: Scope::Server,
        });
        defs.push(Definition {
            name: "ragdown_create_folder",
            description: "Make an empty folder of documents, with MCP on, from a name (letters, digits, spaces, '_', '.', '-'; up to 64) and an optional title. Never overwrites.",
            schema: serde_json::from_value(json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The folder's directory name."},
                    "title": {"type": "string", "description": "A title to show instead of the name."}
                },
                "required": ["name"]
            }))
            .unwrap_or_default(),
            kind: ToolKind {
                write: true,
                destructive: false,
                idempotent: false,
            },
            scope: Scope::Server,
        });
        defs.retain(|d| tools::enabled_by(&settings, d));
        defs.sort_by_key(|d| d.name);
        defs
    }

    fn call(&self, name: &str, args: Value) -> Result<String, ToolError> {
        let Some(scope) = self
            .definitions()
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.scope)
        else {
            let why = if self.settings().read_only {
                " (this server is read-only)"
            } else {
                ""
            };
            return Err(ToolError::not_found(format!("unknown tool: {name}{why}")));
        };
        let mut args = if args.is_null() { json!({}) } else { args };
        let folder = match args.as_object_mut().and_then(|m| m.remove("folder")) {
            None | Some(Value::Null) => None,
            Some(Value::String(f)) if !f.trim().is_empty() => Some(f),
            Some(other) => {
                return Err(ToolError::invalid(format!(
                    "folder must be a folder name, not {other}"
                )));
            }
        };
        match (scope, folder) {
            (Scope::Server, _) => match name {
                "ragdown_folders" => Ok(self.folders_tool()),
                "ragdown_create_folder" => self.create_folder(args),
                "ragdown_reindex" => self.reindex_all(args),
                other => Err(no_root_form(other)),
            },
            (_, Some(f)) => tools::call(&self.folder(&f)?.engine, name, args),
            (Scope::Document, None) => Err(ToolError::invalid(format!(
                "{name} needs a folder here: pass folder (ragdown_folders lists them)"
            ))),
            (Scope::Folder, None) => match name {
                "ragdown_recall" => self.recall_all(args),
                "ragdown_list" => self.list_all(args),
                "ragdown_stats" => self.stats_all(args),
                "ragdown_context" => context_from(self, &tools::parse::<ContextArgs>(name, args)?),
                other => Err(no_root_form(other)),
            },
        }
    }
}
