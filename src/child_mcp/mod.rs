//! Child MCP servers: each subagent's own tools (SPEC §8).
//!
//! | file | job |
//! | --- | --- |
//! | `launch` | rendering `${VAR}` placeholders, clearing the environment of stdio children, launching the built-in servers |
//! | `connect` | one `rmcp` client connection: start, discover 2026-07-28, list, call, stop |
//! | `http_client` | the HTTP client of HTTP children: a tool call's answer read by `http_answer`, the rest by `rmcp` |
//! | `http_answer` | one tool call's POST to an HTTP child and its answer, JSON or an event stream, an oversized one cut |
//! | `stdio` | the transport to a stdio child: messages by line, an oversized answer cut, not lost |
//! | `cut` | an answer too large to read whole as the model gets it: the start of its text and a marker |
//! | `stderr` | a stdio child's stderr, drained and forwarded line by line with its name |
//! | `spawn` | starting a stdio child: directly, or under its shim, told what to start over a socket of its own |
//! | `shim` | the small process between the server and each stdio child (Linux) that kills everything the child leaves, when it exits or when the server dies |
//! | `descriptors` | what a child inherits: its standard streams (and a shim its channel), nothing else of the server's |
//! | `kill` | the process table, descendants, SIGKILL to a process or a group checked against what was seen, pidfds |
//! | `process` | stdio children's processes on the server's side: own group, death signal, subreaper, killing what they started and what a killed shim left |
//! | `offer` | what the model is offered: tool names, descriptions, schemas, filtering |
//! | `render` | a tool result as the model sees it: text, images, placeholders, the output cap |
//! | `toolset` | the tools of one run ([`ChildToolSet`]): routes, calls, shutdown |
//!
//! Each run connects its definition's children in parallel when it starts and shuts them
//! down when it ends; a terminal session holds no child process or connection. This layer
//! knows nothing about providers or sessions: it implements `crate::toolbox`.

mod connect;
mod cut;
mod descriptors;
mod http_answer;
mod http_client;
mod kill;
mod launch;
mod offer;
mod process;
mod render;
mod shim;
mod spawn;
mod stderr;
mod stdio;
mod toolset;

use std::path::Path;

use crate::definition::{AgentDefinition, ChildServerConfig};
use crate::error::{AgentError, ErrorCode};
use crate::limits::CHILD_SHUTDOWN_TIMEOUT;
use crate::toolbox::{BoxFuture, EnvLookup, RunTools, ToolsFactory};
use toolset::shutdown_all;

pub use connect::{ChildConnection, connect as connect_child};
pub use launch::{Launch, SelfCommand};
pub use offer::model_tool_name;
pub use process::{become_subreaper, kill_adopted, kill_all_groups, kill_escapees_as_they_come};
pub use shim::run_child_shim;
pub use toolset::ChildToolSet;

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

    /// Starts `server` as a run in `workspace` would (its environment, its startup bound,
    /// MCP 2026-07-28 required), lists its tools and stops it: how many tools it offers, or
    /// why a run would fail at spawn, in the run's words (`check --servers`).
    pub async fn try_start(
        &self,
        server: &str,
        config: &ChildServerConfig,
        workspace: &Path,
    ) -> Result<usize, String> {
        let failed = |why: String| format!("MCP server {server} {why}");
        let launch =
            launch::resolve(config, workspace, self.env.as_ref(), &self.itself).map_err(failed)?;
        let (connection, tools) = connect::connect(server, &launch, config.startup_timeout)
            .await
            .map_err(failed)?;
        connection.shutdown(CHILD_SHUTDOWN_TIMEOUT).await;
        Ok(tools.len())
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
                        launch::resolve(config, workspace, self.env.as_ref(), &self.itself)
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
