//! Child MCP servers: each subagent's own tools (SPEC §8).

use std::path::Path;

use crate::definition::AgentDefinition;
use crate::error::{AgentError, ErrorCode};
use crate::sessions::manager::{RunTools, ToolsFactory};
use crate::sessions::run::{BoxFuture, NoTools, RunObserver, ToolBox, ToolDescriptor, ToolResult};

/// Opens a run's child servers.
pub struct ChildServers;

impl ToolsFactory for ChildServers {
    fn open<'a>(
        &'a self,
        definition: &'a AgentDefinition,
        _workspace: &'a Path,
        _observer: &'a dyn RunObserver,
    ) -> BoxFuture<'a, Result<Box<dyn RunTools>, AgentError>> {
        Box::pin(async move {
            if let Some(name) = definition.mcp_servers.keys().next() {
                return Err(AgentError::new(
                    ErrorCode::ChildMcpStartupError,
                    format!(
                        "child MCP server {name}: child servers are not supported by this build yet"
                    ),
                ));
            }
            Ok(Box::new(Empty) as Box<dyn RunTools>)
        })
    }
}

/// No tools at all.
pub struct Empty;

impl ToolBox for Empty {
    fn tools(&self) -> &[ToolDescriptor] {
        &[]
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: serde_json::Value,
    ) -> BoxFuture<'a, ToolResult> {
        NoTools.call(name, arguments)
    }
}

impl RunTools for Empty {
    fn shutdown(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}
