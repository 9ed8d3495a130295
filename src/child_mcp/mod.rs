//! Child MCP servers: each subagent's own tools (SPEC §8).
//!
//! | module | job |
//! | --- | --- |
//! | [`config`] | rendering `${VAR}` placeholders, clearing the environment of stdio children, launching the built-in servers |
//! | [`connect`] | one `rmcp` client connection: start, discover 2026-07-28, list, call, stop |
//! | [`http`] | the HTTP client of HTTP children: an oversized tool result cut, not a failure |
//! | [`stdio`] | the transport to a stdio child: messages by line, an oversized answer cut, not lost |
//! | [`stderr`] | a stdio child's stderr, drained and forwarded line by line with its name |
//! | [`kill`] | the process table, descendants, holders of a pipe, SIGKILL |
//! | [`process`] | stdio children's processes: own group, death signal, subreaper, killing what they started |
//! | [`reaper`] | the small process that kills the children's groups when the server is killed |
//! | [`toolset`] | tool names for the model, descriptions, schemas, filtering, result text |
//!
//! Each run connects its definition's children in parallel when it starts and shuts them
//! down when it ends; a terminal session holds no child process or connection. This layer
//! knows nothing about providers or sessions: it implements `crate::toolbox`.

pub mod config;
pub mod connect;
pub mod http;
pub mod kill;
pub mod process;
pub mod reaper;
pub mod stderr;
pub mod stdio;
pub mod toolset;

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::definition::AgentDefinition;
use crate::error::{AgentError, ErrorCode};
use crate::limits::CHILD_SHUTDOWN_TIMEOUT;
use crate::toolbox::{
    BoxFuture, EnvLookup, RunTools, ToolBox, ToolDescriptor, ToolResult, ToolSpec, ToolsFactory,
};
use config::SelfCommand;
use connect::ChildConnection;

/// Opens a run's child servers.
pub struct ChildServers {
    env: EnvLookup,
    itself: SelfCommand,
}

impl ChildServers {
    /// Children read `${VAR}` values and the inherited basics through `env`; built-in
    /// servers are this process's own executable.
    pub fn new(env: EnvLookup) -> Self {
        ChildServers {
            env,
            itself: SelfCommand::current(&[]),
        }
    }

    /// Built-in servers are started as `itself` (the `modelcontextprotocol agents`
    /// spelling, or the real binary when this process is a test harness).
    pub fn with_self_command(mut self, itself: SelfCommand) -> Self {
        self.itself = itself;
        self
    }
}

impl ToolsFactory for ChildServers {
    fn open<'a>(
        &'a self,
        definition: &'a AgentDefinition,
        workspace: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn RunTools>, AgentError>> {
        Box::pin(async move {
            if definition.mcp_servers.is_empty() {
                return Ok(Box::new(ChildToolSet::default()) as Box<dyn RunTools>);
            }
            // In parallel, each within its own startup bound.
            let starts = definition
                .mcp_servers
                .iter()
                .map(|(name, config)| async move {
                    let launch =
                        config::resolve(config, workspace, self.env.as_ref(), &self.itself)
                            .map_err(|e| (name.clone(), e))?;
                    connect::connect(name, &launch, config.startup_timeout)
                        .await
                        .map(|(connection, tools)| (connection, tools, config.call_timeout))
                        .map_err(|e| (name.clone(), e))
                });
            let results = futures_util::future::join_all(starts).await;
            let mut started = Vec::new();
            let mut failure = None;
            for result in results {
                match result {
                    Ok(started_child) => started.push(started_child),
                    Err((name, why)) => {
                        failure.get_or_insert(format!("MCP server {name} {why}"));
                    }
                }
            }
            if let Some(message) = failure {
                let started = started.into_iter().map(|(c, _, _)| c).collect();
                shutdown_all(started, CHILD_SHUTDOWN_TIMEOUT).await;
                return Err(AgentError::new(ErrorCode::ChildMcpStartupError, message));
            }
            Ok(Box::new(ChildToolSet::build(definition, started)) as Box<dyn RunTools>)
        })
    }
}

/// The tools of one run: what the model sees, and which connection serves each.
#[derive(Default)]
pub struct ChildToolSet {
    descriptors: Vec<ToolDescriptor>,
    /// For each descriptor: the index of the connection that serves it.
    routes: Vec<usize>,
    /// For each descriptor: the tool's name as the child listed it, for calls (the
    /// descriptor's `tool` is the sanitized name activity shows).
    child_names: Vec<String>,
    connections: Vec<ChildConnection>,
}

impl ChildToolSet {
    fn build(
        definition: &AgentDefinition,
        started: Vec<(ChildConnection, Vec<rmcp::model::Tool>, Duration)>,
    ) -> Self {
        let mut set = ChildToolSet::default();
        let mut taken = HashSet::new();
        for (index, (connection, tools, timeout)) in started.into_iter().enumerate() {
            for tool in tools {
                // The name is settled first, so that the lists are matched against the name
                // the model would see as well as the child's own (a pattern written with
                // either must hold). Every listed tool takes its name, offered or not, so
                // that a tool's name never depends on the lists: with `delete.issue` denied,
                // `delete_issue` stays `…__delete_issue_2`, the name the author saw and
                // may have denied.
                let name = toolset::model_tool_name(&connection.server, &tool.name, &taken);
                taken.insert(name.clone());
                if !toolset::offered(definition, &connection.server, &tool, &name) {
                    continue;
                }
                set.descriptors.push(ToolDescriptor {
                    spec: ToolSpec {
                        name,
                        description: toolset::sanitize_description(
                            tool.description.as_deref().unwrap_or(""),
                        ),
                        input_schema: toolset::object_schema(&tool.input_schema),
                    },
                    original_schema: Value::Object(tool.input_schema.as_ref().clone()),
                    server: connection.server.clone(),
                    tool: toolset::activity_tool_name(&tool.name),
                    timeout,
                });
                set.routes.push(index);
                set.child_names.push(tool.name.to_string());
            }
            set.connections.push(connection);
        }
        set
    }
}

impl ToolBox for ChildToolSet {
    fn tools(&self) -> &[ToolDescriptor] {
        &self.descriptors
    }

    fn call(&self, index: usize, arguments: Value) -> BoxFuture<'_, ToolResult> {
        Box::pin(async move {
            let (Some(&connection), Some(child_name)) =
                (self.routes.get(index), self.child_names.get(index))
            else {
                return ToolResult::text(format!("there is no tool number {index}"), true);
            };
            let arguments = match arguments {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            // Every route was made from a connection pushed in `build`.
            let Some(connection) = self.connections.get(connection) else {
                return ToolResult::text(
                    format!("there is no connection for tool number {index}"),
                    true,
                );
            };
            match connection.call(child_name, arguments).await {
                Ok(result) => {
                    let rendered = toolset::render_result(&result);
                    ToolResult {
                        content: rendered.text,
                        images: rendered.images,
                        is_error: result.is_error == Some(true),
                    }
                }
                // The child's own error text can be as long as it likes: the same cap as
                // any output.
                Err(message) => ToolResult::text(toolset::cap_output(message), true),
            }
        })
    }
}

impl RunTools for ChildToolSet {
    fn shutdown(self: Box<Self>, bound: Duration) -> BoxFuture<'static, ()> {
        Box::pin(shutdown_all(self.connections, bound))
    }
}

/// Shuts connections down in parallel, each within `bound`.
async fn shutdown_all(connections: Vec<ChildConnection>, bound: Duration) {
    futures_util::future::join_all(connections.into_iter().map(|c| c.shutdown(bound))).await;
}
