//! The tools of one run (`ChildToolSet`): what the model is offered of every started child,
//! which connection serves each tool, the calls, and the shutdown of every connection.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::Value;

use super::connect::ChildConnection;
use super::offer::{
    activity_tool_name, model_tool_name, object_schema, offered, sanitize_description,
};
use super::render::{cap_output, render_result};
use crate::definition::AgentDefinition;
use crate::toolbox::{
    BoxFuture, FileChange, RunTools, ToolBox, ToolDescriptor, ToolResult, ToolSpec,
};
use crate::workspace_contract::ChangedFile;

/// The tools of one run: what the model sees, and which connection serves each.
#[derive(Default)]
pub struct ChildToolSet {
    descriptors: Vec<ToolDescriptor>,
    /// For each descriptor: the index of the connection that serves it.
    routes: Vec<usize>,
    /// For each descriptor: the tool's name as the child listed it, for calls (the
    /// descriptor's `tool` is the sanitized name activity shows).
    child_names: Vec<String>,
    /// For each descriptor: whether it is a built-in tool that changes files, whose
    /// successful answers name the file changed.
    changes_files: Vec<bool>,
    connections: Vec<ChildConnection>,
}

impl ChildToolSet {
    pub(super) fn build(
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
                let name = model_tool_name(&connection.server, &tool.name, &taken);
                taken.insert(name.clone());
                if !offered(definition, &connection.server, &tool, &name) {
                    continue;
                }
                set.descriptors.push(ToolDescriptor {
                    spec: ToolSpec {
                        name,
                        description: sanitize_description(
                            tool.description.as_deref().unwrap_or(""),
                        ),
                        input_schema: object_schema(&tool.input_schema),
                    },
                    original_schema: Value::Object(tool.input_schema.as_ref().clone()),
                    server: connection.server.clone(),
                    tool: activity_tool_name(&tool.name),
                    timeout,
                    parks: false,
                });
                set.routes.push(index);
                set.changes_files.push(
                    definition
                        .mcp_servers
                        .get(&connection.server)
                        .and_then(|config| config.builtin())
                        .is_some_and(|builtin| builtin.changes_files(&tool.name)),
                );
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
            let changes_files = self.changes_files.get(index).copied().unwrap_or(false);
            match connection.call(child_name, arguments).await {
                Ok(result) => {
                    let rendered = render_result(&result);
                    let is_error = result.is_error == Some(true);
                    ToolResult {
                        content: rendered.text,
                        images: rendered.images,
                        is_error,
                        changed: if changes_files && !is_error {
                            file_change(result.structured_content.as_ref())
                        } else {
                            None
                        },
                    }
                }
                // The child's own error text can be as long as it likes: the same cap as
                // any output.
                Err(message) => ToolResult::text(cap_output(message), true),
            }
        })
    }
}

/// The file a built-in tool's successful answer says it changed, read with the type the
/// workspace server writes it with (an answer without `created` modified an existing file).
fn file_change(structured: Option<&Value>) -> Option<FileChange> {
    let file = ChangedFile::from_answer(structured?)?;
    Some(FileChange {
        path: file.path,
        created: file.created.unwrap_or(false),
    })
}

impl RunTools for ChildToolSet {
    fn shutdown(self: Box<Self>, bound: Duration) -> BoxFuture<'static, ()> {
        Box::pin(shutdown_all(self.connections, bound))
    }
}

/// Shuts connections down in parallel, each within `bound`.
pub(super) async fn shutdown_all(connections: Vec<ChildConnection>, bound: Duration) {
    futures_util::future::join_all(connections.into_iter().map(|c| c.shutdown(bound))).await;
}
