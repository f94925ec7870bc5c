//! The MCP adapter: rmcp's `ServerHandler` over an [`Engine`]. Lists the enabled tools with
//! their schemas and annotations, runs calls off the async executor, and turns every failure —
//! bad arguments, a refused path, even a panic inside a tool — into an error result, so the
//! connection never drops.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::Engine;
use crate::tools::{call, definitions, enabled};

#[derive(Clone)]
pub struct McpServer {
    engine: Arc<Engine>,
}

impl McpServer {
    pub fn new(engine: Arc<Engine>) -> Self {
        Self { engine }
    }

    fn tools(&self) -> Vec<Tool> {
        definitions()
            .into_iter()
            .filter(|d| enabled(&self.engine, d))
            .map(|d| {
                let annotations = ToolAnnotations::new()
                    .read_only(!d.kind.write)
                    .destructive(d.kind.destructive)
                    .idempotent(d.kind.idempotent)
                    .open_world(false);
                Tool::new(d.name, d.description, Arc::new(d.schema)).with_annotations(annotations)
            })
            .collect()
    }
}

fn instructions(name: &str) -> String {
    format!(
        "Search the \"{name}\" folder of the user's Markdown documents. Call ragdown_recall before answering a question the documents might cover (project decisions, how-tos, runbooks, personal notes), then ragdown_read_doc to read around a hit before relying on it."
    )
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                format!("ragdown-{}", self.engine.name),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(instructions(&self.engine.name))
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
        let engine = self.engine.clone();
        let name = request.name.to_string();
        let args = request
            .arguments
            .map(serde_json::Value::Object)
            .unwrap_or(serde_json::Value::Null);
        let outcome = tokio::task::spawn_blocking(move || call(&engine, &name, args)).await;
        let result = match outcome {
            Ok(Ok(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
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

/// Serves `engine` over stdin/stdout until the client disconnects.
pub async fn serve_stdio(
    engine: Arc<Engine>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let service = McpServer::new(engine)
        .serve(rmcp::transport::stdio())
        .await?;
    service.waiting().await?;
    Ok(())
}
