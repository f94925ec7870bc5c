//! What the MCP client tests share: calling a tool and reading its text back.

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::service::RunningService;
use serde_json::Value;

/// Calls a tool: (is it an error result, its text content joined).
pub async fn call_tool(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
) -> (bool, String) {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    let result = client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(map))
        .await
        .unwrap();
    let text = result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<String>();
    (result.is_error.unwrap_or(false), text)
}
