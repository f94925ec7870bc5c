//! The MCP adapter: rmcp's `ServerHandler` over a [`ToolHost`] — one folder's [`Engine`], or
//! the root endpoint over every folder (in the HTTP crate). Lists the enabled tools with their
//! schemas and annotations, runs calls off the async executor, and turns every failure — bad
//! arguments, a refused path, even a panic inside a tool — into an error result, so the
//! connection never drops.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, SubscribeRequestMethod,
    SubscribeRequestParams, Tool, ToolAnnotations, UnsubscribeRequestMethod,
    UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::answers::Answer;
use crate::resources::{self, DocResource};
use crate::tools::{Definition, enabled, run};
use crate::{Engine, ToolError};

/// What an MCP server serves: its name, instructions, tools and how a call runs.
pub trait ToolHost: Send + Sync + 'static {
    /// The server name (`ragdown-<folder>`, or `ragdown` at the root).
    fn server_name(&self) -> String;
    fn instructions(&self) -> String;
    /// The tools offered now (read-only and disabled tools already left out).
    fn definitions(&self) -> Vec<Definition>;
    /// Runs one tool: its typed answer, which the adapter renders as text and as structured
    /// content. Blocking: the adapter runs it off the async executor.
    fn call(&self, name: &str, args: serde_json::Value) -> Result<Answer, ToolError>;
    /// The documents offered as resources, in URI order. Blocking.
    fn resources(&self) -> Result<Vec<DocResource>, ToolError>;
    /// A resource's Markdown. Blocking.
    fn read_resource(&self, uri: &str) -> Result<String, ToolError>;
    /// The URI templates naming any document here: (template, name).
    fn resource_templates(&self) -> Vec<(String, String)>;
}

impl ToolHost for Engine {
    fn server_name(&self) -> String {
        format!("ragdown-{}", self.name)
    }
    fn instructions(&self) -> String {
        instructions(&self.name)
    }
    fn definitions(&self) -> Vec<Definition> {
        crate::tools::in_folder()
            .filter(|d| enabled(self, d))
            .cloned()
            .collect()
    }
    fn call(&self, name: &str, args: serde_json::Value) -> Result<Answer, ToolError> {
        run(self, name, args)
    }
    fn resources(&self) -> Result<Vec<DocResource>, ToolError> {
        resources::of_engine(self)
    }
    fn read_resource(&self, uri: &str) -> Result<String, ToolError> {
        resources::read(self, uri)
    }
    fn resource_templates(&self) -> Vec<(String, String)> {
        vec![(
            resources::template(&self.name),
            format!("A document of {}", self.name),
        )]
    }
}

#[derive(Clone)]
pub struct McpServer {
    host: Arc<dyn ToolHost>,
    /// A session that outlives one request (stdio): it may subscribe to documents and hear of
    /// changes. `None` over stateless Streamable HTTP, where no message can reach the client
    /// between its requests, so neither is declared there.
    live: Option<Arc<Live>>,
}

/// A live session's subscriptions and the client to tell.
#[derive(Default)]
struct Live {
    subscribed: std::sync::Mutex<std::collections::BTreeSet<String>>,
    peer: std::sync::Mutex<Option<rmcp::Peer<RoleServer>>>,
    watching: std::sync::atomic::AtomicBool,
}

/// Resources per `resources/list` page.
const RESOURCE_PAGE: usize = 100;
/// How often a live session looks for changed documents (the index follows edits within a
/// second; this adds at most half of one).
const RESOURCE_LOOK_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

impl McpServer {
    /// A server answering one request at a time (stateless HTTP).
    pub fn new(host: Arc<dyn ToolHost>) -> Self {
        Self { host, live: None }
    }

    /// A server for one long session (stdio): resource subscriptions and list changes are
    /// announced.
    pub fn live(host: Arc<dyn ToolHost>) -> Self {
        Self {
            host,
            live: Some(Arc::new(Live::default())),
        }
    }

    /// Keeps the client to tell of changes, and starts looking for them once.
    fn watch(&self, peer: &rmcp::Peer<RoleServer>) {
        let Some(live) = &self.live else { return };
        if let Ok(mut kept) = live.peer.lock() {
            *kept = Some(peer.clone());
        }
        if live
            .watching
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let (host, live) = (self.host.clone(), live.clone());
        tokio::spawn(async move { announce_changes(host, live).await });
    }

    fn tools(&self) -> Vec<Tool> {
        self.host
            .definitions()
            .into_iter()
            .map(|d| {
                let annotations = ToolAnnotations::new()
                    .read_only(!d.kind.write)
                    .destructive(d.kind.destructive)
                    .idempotent(d.kind.idempotent)
                    .open_world(false);
                let tool = Tool::new(d.name, d.description, Arc::new(d.schema))
                    .with_annotations(annotations);
                match d.output {
                    Some(output) => tool.with_raw_output_schema(Arc::new(output)),
                    None => tool,
                }
            })
            .collect()
    }
}

pub fn instructions(name: &str) -> String {
    format!(
        "Search the \"{name}\" folder of the user's Markdown documents. Call ragdown_recall before answering a question the documents might cover (project decisions, how-tos, runbooks, personal notes), then ragdown_read_doc to read around a hit before relying on it."
    )
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources();
        let capabilities = if self.live.is_some() {
            capabilities
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .build()
        } else {
            capabilities.build()
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                self.host.server_name(),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(self.host.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|t| t.name == name)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.watch(&context.peer);
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor.parse::<usize>().map_err(|_| {
                ErrorData::invalid_params(format!("not a cursor of this server: {cursor}"), None)
            })?,
        };
        let all = blocking(self.host.clone(), |host| host.resources()).await?;
        let page: Vec<Resource> = all
            .iter()
            .skip(start)
            .take(RESOURCE_PAGE)
            .map(|d| {
                Resource::new(d.uri.clone(), d.path.clone())
                    .with_title(d.title.clone())
                    .with_mime_type("text/markdown")
                    .with_size(d.size)
            })
            .collect();
        let mut result = ListResourcesResult::with_all_items(page);
        if start + RESOURCE_PAGE < all.len() {
            result.next_cursor = Some((start + RESOURCE_PAGE).to_string());
        }
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = self
            .host
            .resource_templates()
            .into_iter()
            .map(|(template, name)| {
                let mut t = ResourceTemplate::new(template, name);
                t.mime_type = Some("text/markdown".into());
                t
            })
            .collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let text = blocking(self.host.clone(), move |host| host.read_resource(&uri)).await?;
        Ok(
            ReadResourceResult::new(vec![ResourceContents::TextResourceContents {
                uri: request.uri,
                mime_type: Some("text/markdown".into()),
                text,
                meta: None,
            }])
            .into(),
        )
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(live) = &self.live else {
            return Err(ErrorData::method_not_found::<SubscribeRequestMethod>());
        };
        // Only what can be read can be followed.
        let uri = request.uri.clone();
        blocking(self.host.clone(), move |host| host.read_resource(&uri)).await?;
        if let Ok(mut subscribed) = live.subscribed.lock() {
            subscribed.insert(request.uri);
        }
        self.watch(&context.peer);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(live) = &self.live else {
            return Err(ErrorData::method_not_found::<UnsubscribeRequestMethod>());
        };
        if let Ok(mut subscribed) = live.subscribed.lock() {
            subscribed.remove(&request.uri);
        }
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let host = self.host.clone();
        let name = request.name.to_string();
        let args = request
            .arguments
            .map(serde_json::Value::Object)
            .unwrap_or(serde_json::Value::Null);
        let outcome = tokio::task::spawn_blocking(move || host.call(&name, args)).await;
        let result = match outcome {
            Ok(Ok(answer)) => {
                // Today's text for clients that read text, and the same answer as data for
                // those that read `structuredContent` (declared by the tool's output schema).
                let mut result = CallToolResult::success(vec![ContentBlock::text(
                    crate::format::answer_text(&answer),
                )]);
                result.structured_content = answer.structured();
                result
            }
            Ok(Err(e)) => CallToolResult::error(vec![ContentBlock::text(e.message)]),
            Err(join) => {
                tracing::error!("a tool panicked: {join}");
                CallToolResult::error(vec![ContentBlock::text(
                    "internal error: the tool failed unexpectedly (logged on the server); the request was not completed",
                )])
            }
        };
        Ok(result.into())
    }
}

/// Runs `work` on the host off the async executor; a failure is the MCP error it names (a
/// missing document: resource not found, -32002), a panic an internal error.
async fn blocking<T: Send + 'static>(
    host: Arc<dyn ToolHost>,
    work: impl FnOnce(&dyn ToolHost) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ErrorData> {
    match tokio::task::spawn_blocking(move || work(host.as_ref())).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) if e.kind == crate::ErrorKind::NotFound => {
            Err(ErrorData::resource_not_found(e.message, None))
        }
        Ok(Err(e)) if e.kind == crate::ErrorKind::Invalid => {
            Err(ErrorData::invalid_params(e.message, None))
        }
        Ok(Err(e)) => Err(ErrorData::internal_error(e.message, None)),
        Err(join) => {
            tracing::error!("a resource read panicked: {join}");
            Err(ErrorData::internal_error(
                "the read failed unexpectedly",
                None,
            ))
        }
    }
}

/// A live session's look-out: every [`RESOURCE_LOOK_EVERY`], the documents and their stamps;
/// a document added or removed is `notifications/resources/list_changed`, a subscribed one
/// changed or gone `notifications/resources/updated`. Ends with the session.
async fn announce_changes(host: Arc<dyn ToolHost>, live: Arc<Live>) {
    let stamps = |host: Arc<dyn ToolHost>| async move {
        tokio::task::spawn_blocking(move || host.resources())
            .await
            .ok()
            .and_then(Result::ok)
            .map(|all| {
                all.into_iter()
                    .map(|d| (d.uri, d.mtime_ns))
                    .collect::<std::collections::BTreeMap<_, _>>()
            })
    };
    let Some(mut before) = stamps(host.clone()).await else {
        return;
    };
    loop {
        tokio::time::sleep(RESOURCE_LOOK_EVERY).await;
        let Some(now) = stamps(host.clone()).await else {
            continue;
        };
        let peer = match live.peer.lock() {
            Ok(peer) => peer.clone(),
            Err(_) => return,
        };
        let Some(peer) = peer else { continue };
        if peer.is_transport_closed() {
            return;
        }
        if !now.keys().eq(before.keys()) && peer.notify_resource_list_changed().await.is_err() {
            return;
        }
        let subscribed: Vec<String> = match live.subscribed.lock() {
            Ok(s) => s.iter().cloned().collect(),
            Err(_) => return,
        };
        for uri in subscribed {
            if now.get(&uri) != before.get(&uri)
                && peer
                    .notify_resource_updated(rmcp::model::ResourceUpdatedNotificationParam::new(
                        uri,
                    ))
                    .await
                    .is_err()
            {
                return;
            }
        }
        before = now;
    }
}

/// Serves `host` over stdin/stdout until the client disconnects. Each line of stdin that is
/// not JSON is answered with JSON-RPC's parse error (-32700, `id` null) instead of being
/// dropped unanswered, and a request whose params do not fit its method with -32602
/// ([`invalid_params`]); the answers and rmcp's messages reach stdout whole, one line each.
pub async fn serve_stdio(
    host: Arc<dyn ToolHost>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    // Lines for rmcp go through `to_rmcp`; rmcp's lines come back through `from_rmcp`.
    let (mut to_rmcp, rmcp_in) = tokio::io::duplex(1 << 16);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 16);
    let (refusals, mut refused) = tokio::sync::mpsc::unbounded_channel::<String>();
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
                let _ = refusals.send(parse_error(&line));
                continue;
            };
            if let Some(refusal) = invalid_params(&message) {
                let _ = refusals.send(refusal.to_string());
                continue;
            }
            if to_rmcp
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
        // End of input: rmcp sees it and the service ends.
        drop(to_rmcp);
    });
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        let mut answers = BufReader::new(from_rmcp).lines();
        loop {
            let line = tokio::select! {
                answer = answers.next_line() => match answer {
                    Ok(Some(line)) => line,
                    _ => break,
                },
                Some(refusal) = refused.recv() => refusal,
            };
            if stdout
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
                || stdout.flush().await.is_err()
            {
                break;
            }
        }
    });
    let service = McpServer::live(host).serve((rmcp_in, rmcp_out)).await?;
    service.waiting().await?;
    reader.abort();
    let _ = writer.await;
    Ok(())
}

/// JSON-RPC's answer to a line that is not JSON.
/// JSON-RPC's invalid-params error (-32602) for a request to a method ragdown serves whose
/// params do not fit it (`tools/call` without a tool name, `initialize` without its fields).
/// rmcp would read such a request as a method of its own (a custom request) and answer
/// "method not found" (-32601), which sends a client looking for the wrong mistake; both
/// transports ask here first. `None` for anything else, notifications included.
pub fn invalid_params(message: &serde_json::Value) -> Option<serde_json::Value> {
    let object = message.as_object()?;
    let id = object.get("id")?;
    let method = object.get("method")?.as_str()?;
    let params = object
        .get("params")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    let problem = match method {
        "initialize" => {
            serde_json::from_value::<rmcp::model::InitializeRequestParams>(params).err()
        }
        "tools/call" => serde_json::from_value::<rmcp::model::CallToolRequestParams>(params).err(),
        _ => None,
    }?;
    Some(serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32602, "message": format!("Invalid params for {method}: {problem}")},
    }))
}

fn parse_error(line: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32700,
            "message": format!(
                "Parse error: a message must be one line of JSON ({} bytes could not be read as JSON)",
                line.len()
            ),
        },
    })
    .to_string()
}
