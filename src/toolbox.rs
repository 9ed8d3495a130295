//! The vocabulary between the model loop and its tools: what a tool looks like to the
//! model ([`ToolSpec`]), where it comes from ([`ToolDescriptor`]), what a call answers
//! ([`ToolResult`], text and images, and the file it changed, [`FileChange`]), and the
//! traits that connect the two sides.
//!
//! | trait | implemented by | used by |
//! | --- | --- | --- |
//! | [`ToolBox`] | `child_mcp::ChildToolSet`; in-process tools in tests | the model loop |
//! | [`RunTools`] | the same, plus shutdown | the session manager |
//! | [`ToolsFactory`] | `child_mcp::ChildServers`; stand-ins in tests | the session manager |
//!
//! `child_mcp` implements these and `sessions` uses them; neither knows the other, and
//! `providers` reads only [`ToolSpec`] from here.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::definition::AgentDefinition;
use crate::error::AgentError;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Reads an environment variable (the process environment in the server; a map in tests).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// A tool as the model is told about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema object for the arguments (`type: object`, texts sanitized); each wire
    /// API reshapes it into the form it accepts when it sends it (SPEC §6.1 "Tool schemas").
    pub input_schema: Value,
}

/// A tool the model may call, and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDescriptor {
    /// What the model sees (its name is the one the model calls).
    pub spec: ToolSpec,
    /// The child's own `inputSchema`, exactly as it listed it: the schema arguments are
    /// validated against (SPEC §6 step 3), whatever form the model was shown.
    pub original_schema: Value,
    /// The child server's name, for activity.
    pub server: String,
    /// The tool's name on that server, for activity.
    pub tool: String,
    /// The call bound.
    pub timeout: Duration,
    /// The call waits on the run's parent, not on a tool (the runtime's own `ask_parent`,
    /// SPEC §4.5): the loop makes it after the round's other calls, bounded by the tool
    /// itself and not by `timeout`, and the time it waits does not count against the run's
    /// `max_run_seconds`. It is not a child tool call (`usage.tool_calls`, `tools_used`).
    pub parks: bool,
}

/// A tool's answer. A failure is an answer too: the model decides what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The text, with a one-line placeholder for each part that is not shown as itself.
    pub content: String,
    /// Images the model sees as images, after the text, in the order the tool sent them.
    pub images: Vec<ToolImage>,
    pub is_error: bool,
    /// The file the call changed, when it was a built-in tool that changes files (SPEC
    /// §8.6, the workspace server's `edit` and `write`) and it succeeded.
    pub changed: Option<FileChange>,
}

impl ToolResult {
    /// An answer of text only.
    pub fn text(content: impl Into<String>, is_error: bool) -> Self {
        ToolResult {
            content: content.into(),
            images: Vec::new(),
            is_error,
            changed: None,
        }
    }
}

/// A file of the workspace that a tool call created or modified (SPEC §4.3
/// `files_changed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Relative to the workspace, with `/` separators, as the tool showed it.
    pub path: String,
    /// The file did not exist before the call.
    pub created: bool,
}

/// An image in a tool's answer: base64 data of a type both wire APIs take (PNG, JPEG, GIF,
/// WebP), checked against the data's own first bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolImage {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// Standard base64, as the tool sent it.
    pub data: String,
}

/// The tools of one run.
pub trait ToolBox: Send + Sync {
    fn tools(&self) -> &[ToolDescriptor];
    /// Calls `tools()[index]`; the loop has found the tool the model named and checked that
    /// the arguments are an object.
    fn call(&self, index: usize, arguments: Value) -> BoxFuture<'_, ToolResult>;
}

/// The tools of one run, opened when the run starts and shut down when it ends.
pub trait RunTools: ToolBox {
    /// Closes connections and stops child processes: each child gets `bound` to exit once
    /// its input is closed, then what is left of it is killed.
    fn shutdown(self: Box<Self>, bound: Duration) -> BoxFuture<'static, ()>;
}

/// Opens a run's tools (the child MCP layer in the server; in-process tools in tests). The
/// caller reports the startup as activity; opening only opens.
pub trait ToolsFactory: Send + Sync {
    fn open<'a>(
        &'a self,
        definition: &'a AgentDefinition,
        workspace: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn RunTools>, AgentError>>;
}
