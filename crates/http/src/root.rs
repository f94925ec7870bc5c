//! The root endpoint `/mcp` (`RAGDOWN_ROOT_MCP`): one MCP server, named `ragdown`, over every
//! folder with MCP on. Every tool but `ragdown_reindex` takes a `folder`; the ones that work
//! on a document need it, while recall, list, context and stats cover every folder when it is
//! left out and name each result's folder (`[work] backups.md:7-9`). Adds `ragdown_folders`
//! and `ragdown_create_folder` (the only place an agent can make a folder).
//!
//! A human-only folder does not exist here: naming it answers as a missing folder would.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use ragdown_search::{Hit, SearchOptions};
use ragdown_server::answers::{
    AllStats, Answer, FolderCreated, FolderEntry, FolderList, FoundHit, Listed, Listing, Recall,
    Reindexed, best_first,
};
use ragdown_server::args::RecallArgs;
use ragdown_server::context::{ContextArgs, ContextSource, PromptNames, Sessions, context_from};
use ragdown_server::folder_config::FolderConfig;
use ragdown_server::mcp::ToolHost;
use ragdown_server::tools::{self, ADDS, Definition, READ, Scope};
use ragdown_server::{HookSettings, ToolError};
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
    fn search_all(&self, query: &str, options: &SearchOptions) -> Result<Vec<FoundHit>, ToolError> {
        let mut hits = Vec::new();
        for folder in self.mcp_folders() {
            folder.engine.index.refresh()?;
            let found = ragdown_search::search(&folder.engine.index, query, options)?;
            hits.extend(
                found
                    .into_iter()
                    .map(|hit| FoundHit::in_folder(&folder.name, hit)),
            );
        }
        best_first(&mut hits, options.limit);
        Ok(hits)
    }

    fn recall_all(&self, args: Value) -> Result<Answer, ToolError> {
        let a: RecallArgs = tools::parse("ragdown_recall", args)?;
        let settings = self.settings();
        let options = tools::recall_options(&a, &settings)?;
        let hits = self.search_all(&a.query, &options)?;
        let recall = Recall {
            hits,
            indexing: ragdown_index::SyncProgress::total(
                self.mcp_folders()
                    .iter()
                    .filter_map(|f| f.engine.indexing()),
            ),
            // Every folder shares one embedder: any folder's answer is all of theirs.
            keyword_only: self
                .mcp_folders()
                .iter()
                .find_map(|f| ragdown_search::keyword_only(&f.engine.index)),
        };
        Ok(Answer::Recall(recall, tools::recall_view(&a, &settings)))
    }

    /// Each folder's listing, one after another, each line naming its folder.
    fn list_all(&self, args: Value) -> Result<Answer, ToolError> {
        let mut all = Listing {
            total: 0,
            documents: Vec::new(),
        };
        for folder in self.mcp_folders() {
            let Answer::Listing(listing) =
                tools::run(&folder.engine, "ragdown_list", args.clone())?
            else {
                return Err(no_root_form("ragdown_list"));
            };
            all.total += listing.total;
            all.documents
                .extend(listing.documents.into_iter().map(|d| Listed {
                    folder: Some(folder.name.clone()),
                    ..d
                }));
        }
        Ok(Answer::Listing(all))
    }

    fn stats_all(&self, args: Value) -> Result<Answer, ToolError> {
        let mut all = AllStats {
            files: 0,
            chunks: 0,
            folders: Vec::new(),
        };
        for folder in self.mcp_folders() {
            let Answer::Stats(stats) = tools::run(&folder.engine, "ragdown_stats", args.clone())?
            else {
                return Err(no_root_form("ragdown_stats"));
            };
            all.files += stats.files;
            all.chunks += stats.chunks;
            all.folders.push(*stats);
        }
        Ok(Answer::AllStats(all))
    }

    fn folders_tool(&self) -> Answer {
        let folders = self
            .mcp_folders()
            .iter()
            .map(|f| FolderEntry {
                name: f.name.clone(),
                title: f.config().title_or(&f.name).to_string(),
                documents: f.engine.index.snapshot().document_count(),
            })
            .collect();
        Answer::Folders(FolderList { folders })
    }

    fn create_folder(&self, args: Value) -> Result<Answer, ToolError> {
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
        Ok(Answer::FolderCreated(FolderCreated {
            name: folder.name.clone(),
        }))
    }

    fn reindex_all(&self, args: Value) -> Result<Answer, ToolError> {
        let mut all = Reindexed::default();
        for folder in self.mcp_folders() {
            let Answer::Reindexed(one) =
                tools::run(&folder.engine, "ragdown_reindex", args.clone())?
            else {
                return Err(no_root_form("ragdown_reindex"));
            };
            all += one;
        }
        Ok(Answer::Reindexed(all))
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
    fn search(&self, prompt: &str, options: &SearchOptions) -> Result<Vec<Hit>, ToolError> {
        // The hook's block names each hit's folder in its path; its session memory needs ids
        // unique across folders.
        Ok(self
            .search_all(prompt, options)?
            .into_iter()
            .map(|found| match found.folder {
                Some(folder) => labelled(&folder, found.hit),
                None => found.hit,
            })
            .collect())
    }
    fn prompt_names(&self, prompt: &str) -> Result<PromptNames, ToolError> {
        let mut all = PromptNames::default();
        // Foreign to every folder: a name one folder mentions (or a document it names) may
        // be what the prompt asks that folder.
        let mut foreign: Option<Vec<String>> = None;
        for folder in self.mcp_folders() {
            let names = folder.engine.prompt_names(prompt)?;
            all.aliased
                .extend(names.aliased.iter().map(|id| global_id(&folder.name, *id)));
            foreign = Some(match foreign {
                None => names.foreign,
                Some(before) => before
                    .into_iter()
                    .filter(|n| names.foreign.contains(n))
                    .collect(),
            });
        }
        all.foreign = foreign.unwrap_or_default();
        Ok(all)
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
                // Without a folder, stats are every folder's.
                if d.name == "ragdown_stats" {
                    let mut either = tools::schema::<ragdown_server::answers::StatsAnswer>();
                    either.insert("type".into(), json!("object"));
                    d.output = Some(either);
                }
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
            output: Some(tools::schema::<ragdown_server::answers::FolderList>()),
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
            output: Some(tools::schema::<ragdown_server::answers::FolderCreated>()),
            kind: ADDS,
            scope: Scope::Server,
        });
        defs.retain(|d| tools::enabled_by(&settings, d));
        defs.sort_by_key(|d| d.name);
        defs
    }

    fn resources(&self) -> Result<Vec<ragdown_server::resources::DocResource>, ToolError> {
        let mut all = Vec::new();
        for folder in self.mcp_folders() {
            all.extend(ragdown_server::resources::of_engine(&folder.engine)?);
        }
        all.sort_by(|a, b| a.uri.cmp(&b.uri));
        Ok(all)
    }

    fn read_resource(&self, uri: &str) -> Result<String, ToolError> {
        // A human-only folder's documents answer as missing ones.
        let folder = ragdown_server::resources::parse(uri)
            .and_then(|(name, _)| self.mcp_folders().into_iter().find(|f| f.name == name))
            .ok_or_else(|| ToolError::not_found(format!("no such resource here: {uri}")))?;
        ragdown_server::resources::read(&folder.engine, uri)
    }

    fn resource_templates(&self) -> Vec<(String, String)> {
        vec![(
            format!("{}{{folder}}/{{+path}}", ragdown_server::resources::SCHEME),
            "A document of an MCP folder".into(),
        )]
    }

    fn call(&self, name: &str, args: Value) -> Result<Answer, ToolError> {
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
        let answer = match (scope, folder) {
            (Scope::Server, _) => match name {
                "ragdown_folders" => self.folders_tool(),
                "ragdown_create_folder" => self.create_folder(args)?,
                "ragdown_reindex" => self.reindex_all(args)?,
                other => return Err(no_root_form(other)),
            },
            (_, Some(f)) => tools::run(&self.folder(&f)?.engine, name, args)?,
            (Scope::Document, None) => {
                return Err(ToolError::invalid(format!(
                    "{name} needs a folder here: pass folder (ragdown_folders lists them)"
                )));
            }
            (Scope::Folder, None) => match name {
                "ragdown_recall" => self.recall_all(args)?,
                "ragdown_list" => self.list_all(args)?,
                "ragdown_stats" => self.stats_all(args)?,
                "ragdown_context" => Answer::Context(context_from(
                    self,
                    &tools::parse::<ContextArgs>(name, args)?,
                )?),
                other => return Err(no_root_form(other)),
            },
        };
        Ok(answer)
    }
}
