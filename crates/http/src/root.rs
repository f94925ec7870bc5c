//! The root endpoint `/mcp` (`RAGDOWN_ROOT_MCP`): one MCP server, named `ragdown`, over every
//! folder with MCP on. Every tool but `ragdown_reindex` takes a `folder`; the ones that work
//! on a document need it, while recall, list, context and stats cover every folder when it is
//! left out and name each result's folder (`[work] backups.md:7-9`). Adds `ragdown_folders`
//! and `ragdown_create_folder` (the only place an agent can make a folder).
//!
//! How each tool behaves across folders is its definition's (`ragdown_server::tools`): this
//! host only says which folders there are ([`EveryFolder`]) and routes a call with a `folder`
//! to that folder's engine.
//!
//! A human-only folder does not exist here: naming it answers as a missing folder would.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use ragdown_search::{Hit, SearchOptions};
use ragdown_server::answers::Answer;
use ragdown_server::answers::{FolderEntry, FolderList};
use ragdown_server::context::{ContextSource, PromptNames, Sessions};
use ragdown_server::folder_config::FolderConfig;
use ragdown_server::mcp::ToolHost;
use ragdown_server::recall::merge_hits;
use ragdown_server::tools::{self, Definition, EveryFolder, Scope};
use ragdown_server::{Engine, HookSettings, ToolError};
use serde_json::{Value, json};

use crate::folders::{Folder, Folders};

pub struct RootHost {
    folders: Arc<Folders>,
    /// Hook memory of calls that name no folder.
    sessions: Sessions,
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
}

impl EveryFolder for RootHost {
    fn engines(&self) -> Vec<(String, Arc<Engine>)> {
        self.mcp_folders()
            .into_iter()
            .map(|f| (f.name.clone(), f.engine.clone()))
            .collect()
    }

    fn folder_list(&self) -> FolderList {
        let folders = self
            .mcp_folders()
            .iter()
            .map(|f| FolderEntry {
                name: f.name.clone(),
                title: f.config().title_or(&f.name).to_string(),
                documents: f.engine.index.snapshot().document_count(),
            })
            .collect();
        FolderList { folders }
    }

    fn create_folder(&self, name: &str, config: &FolderConfig) -> Result<String, ToolError> {
        Ok(self.folders.create(name, config)?.name.clone())
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
        let mut per_folder = Vec::new();
        for folder in self.mcp_folders() {
            per_folder.push((folder.name.clone(), folder.engine.search(prompt, options)?));
        }
        Ok(merge_hits(per_folder, options.limit)
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
            all.titled
                .extend(names.titled.iter().map(|id| global_id(&folder.name, *id)));
            // The root searches every folder at once, so a code name is rare when few sections
            // of them all hold it: one held by a single section here and by many elsewhere
            // points at none of them.
            for (name, sections) in names.code_names {
                match all.code_names.iter_mut().find(|(known, _)| *known == name) {
                    Some((_, total)) => *total += sections,
                    None => all.code_names.push((name, sections)),
                }
            }
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
    fn log(&self, entry: ragdown_server::query_log::Entry) {
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
        tools::definitions()
            .iter()
            .filter(|d| tools::enabled_by(&settings, d))
            .cloned()
            .map(|mut d| {
                // Without a folder, stats are every folder's.
                if d.name == "ragdown_stats" {
                    let mut either = tools::schema::<ragdown_server::answers::StatsAnswer>();
                    either.insert("type".into(), json!("object"));
                    d.output = Some(either);
                }
                let scope = d.scope();
                if scope != Scope::Server {
                    let required = scope == Scope::Document;
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
            .collect()
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
        let def = tools::served(&self.settings(), name)?;
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
        match folder {
            // A tool that takes no folder here ignores one, as before.
            Some(f) if def.scope() != Scope::Server => {
                tools::run(&self.folder(&f)?.engine, name, args)
            }
            _ => tools::run_everywhere(self, def, args),
        }
    }
}
