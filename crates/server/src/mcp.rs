//! The MCP adapter: rmcp's `ServerHandler` over a [`ToolHost`] — one folder's [`Engine`], or
//! the root endpoint over every folder (in the HTTP crate). Lists the enabled tools with their
//! schemas and annotations, runs calls off the async executor, and turns every failure — bad
//! arguments, a refused path, even a panic inside a tool — into an error result, so the
//! connection never drops.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::answers::Answer;
use crate::tools::{Definition, definitions, enabled, run};
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
}

impl ToolHost for Engine {
    fn server_name(&self) -> String {
        format!("ragdown-{}", self.name)
    }
    fn instructions(&self) -> String {
        instructions(&self.name)
    }
    fn definitions(&self) -> Vec<Definition> {
        definitions()
            .iter()
            .filter(|d| enabled(self, d))
            .cloned()
            .collect()
    }
    fn call(&self, name: &str, args: serde_json::Value) -> Result<Answer, ToolError> {
        run(self, name, args)
    }
}

#[derive(Clone)]
pub struct McpServer {
    host: Arc<dyn ToolHost>,
}

impl McpServer {
    pub fn new(host: Arc<dyn ToolHost>) -> Self {
        Self { host }
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
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
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
    let service = McpServer::new(host).serve((rmcp_in, rmcp_out)).await?;
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
