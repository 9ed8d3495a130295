//! A definition's child MCP servers (SPEC §8.1): how each is started or reached, its own
//! bounds and tool lists, and where its env and header values come from at run start; and
//! the built-in servers this program serves itself (SPEC §8.6).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use super::template::Template;
use super::tool_filter::{self, ToolHints, ToolNames};
use crate::limits::{CHILD_CALL_TIMEOUT, CHILD_STARTUP_TIMEOUT};
use crate::redact::{debug_http, debug_stdio};

/// Variables a stdio child keeps from our environment, when they are set: enough to find
/// programs and a home directory on every platform, nothing else. They are no secrets: a
/// child gets them whatever its configuration says.
pub const INHERITED_VARS: &[&str] = &[
    "PATH",
    "HOME",
    "TMPDIR",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "SystemRoot",
];

/// One child MCP server of a definition (SPEC §8.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildServerConfig {
    pub transport: ChildTransport,
    /// At most [`CHILD_STARTUP_TIMEOUT`]; a definition may only lower it.
    pub startup_timeout: Duration,
    /// At most [`CHILD_CALL_TIMEOUT`]; a definition may only lower it.
    pub call_timeout: Duration,
    /// This server's own allow list of tool names (Codex `enabled_tools`); `*` globs allowed.
    pub enabled_tools: Option<Vec<String>>,
    /// This server's own deny list (Codex `disabled_tools`).
    pub disabled_tools: Vec<String>,
}

impl ChildServerConfig {
    pub fn new(transport: ChildTransport) -> Self {
        ChildServerConfig {
            transport,
            startup_timeout: CHILD_STARTUP_TIMEOUT,
            call_timeout: CHILD_CALL_TIMEOUT,
            enabled_tools: None,
            disabled_tools: Vec::new(),
        }
    }

    /// The variables whose values this server's `env` entries or headers carry (`${VAR}`
    /// placeholders, Codex `env_vars` and `env_http_headers`): the credentials a run hides
    /// from everything it emits (SPEC §10). The variables every stdio child inherits
    /// ([`INHERITED_VARS`]) are not among them.
    pub fn secret_vars(&self) -> impl Iterator<Item = &str> {
        let values = match &self.transport {
            ChildTransport::Stdio { env, .. } => Some(env),
            ChildTransport::Http { headers, .. } => Some(headers),
            ChildTransport::Builtin(_) => None,
        };
        values
            .into_iter()
            .flat_map(|values| values.values())
            .flat_map(|source| -> Box<dyn Iterator<Item = &str> + '_> {
                match source {
                    ValueSource::Template(template) => Box::new(template.vars()),
                    ValueSource::EnvIfSet(var) => Box::new(std::iter::once(var.as_str())),
                }
            })
            .filter(|var| !INHERITED_VARS.contains(var))
    }

    /// Whether this server's own lists let `tool` through (matched as listed and under the
    /// provider character rule).
    /// The built-in server this configuration starts, if it is one.
    pub fn builtin(&self) -> Option<BuiltinServer> {
        match self.transport {
            ChildTransport::Builtin(server) => Some(server),
            _ => None,
        }
    }

    pub fn permits(&self, tool: &str) -> bool {
        self.permits_names(&ToolNames::new("", tool))
    }

    /// Whether this server's own lists let the tool named `names` through: its lists name
    /// bare tools, so they are matched against the tool's part of each name
    /// ([`ToolNames::tool_candidates`]); any match counts, for deny as for allow.
    pub fn permits_names(&self, names: &ToolNames<'_>) -> bool {
        let candidates = names.tool_candidates();
        let matches = |glob: &String| {
            candidates
                .iter()
                .any(|candidate| tool_filter::glob_matches(glob, candidate))
        };
        self.enabled_tools
            .as_ref()
            .is_none_or(|allow| allow.iter().any(matches))
            && !self.disabled_tools.iter().any(matches)
    }
}

#[derive(Clone, PartialEq, Eq)]
pub enum ChildTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, ValueSource>,
        /// Relative paths are relative to the workspace.
        cwd: Option<PathBuf>,
    },
    Http {
        url: Url,
        headers: BTreeMap<String, ValueSource>,
    },
    /// A server this program serves itself, started as a stdio child like any other.
    Builtin(BuiltinServer),
}

/// The first-party child servers (SPEC §8.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinServer {
    /// Tools over the workspace, four that read and two that change files:
    /// `mcp-agents workspace-tools <workspace>`.
    Workspace,
}

impl BuiltinServer {
    /// The hints of the workspace tools that read.
    pub const READ_HINTS: ToolHints = ToolHints {
        read_only: Some(true),
        destructive: Some(false),
    };

    /// The hints of the workspace tools that change files (`edit`, `write`): read-only
    /// agents are never offered them.
    pub const CHANGE_HINTS: ToolHints = ToolHints {
        read_only: Some(false),
        destructive: Some(true),
    };

    /// The server's name in a definition and in tool names (`workspace__read`); a
    /// definition's own server may not take it.
    pub fn name(self) -> &'static str {
        match self {
            BuiltinServer::Workspace => "workspace",
        }
    }

    /// How a definition names it: `builtin: workspace`.
    pub fn parse(text: &str) -> Option<BuiltinServer> {
        (text == "workspace").then_some(BuiltinServer::Workspace)
    }

    /// The subcommand of this program that serves it.
    pub fn subcommand(self) -> &'static str {
        match self {
            BuiltinServer::Workspace => "workspace-tools",
        }
    }

    /// The tools it lists, in the order it lists them.
    pub fn tools(self) -> &'static [&'static str] {
        match self {
            BuiltinServer::Workspace => &["read", "list", "glob", "grep", "edit", "write"],
        }
    }

    /// Whether `tool` changes files: a successful call's structured content names the file
    /// (`path`) and whether it is new (`created`), and the run counts it in
    /// `files_changed` (SPEC §4.3).
    pub fn changes_files(self, tool: &str) -> bool {
        match self {
            BuiltinServer::Workspace => matches!(tool, "edit" | "write"),
        }
    }

    /// The annotations `tool` carries (for deciding, before the server runs, what an agent
    /// gets; a test compares them with the live listing).
    pub fn tool_hints(self, tool: &str) -> ToolHints {
        if self.changes_files(tool) {
            Self::CHANGE_HINTS
        } else {
            Self::READ_HINTS
        }
    }

    /// The configuration that gives an agent this server.
    pub fn config(self) -> ChildServerConfig {
        ChildServerConfig::new(ChildTransport::Builtin(self))
    }
}

impl fmt::Debug for ChildTransport {
    /// Shows the command, URL origin and the names of variables and headers; never argument,
    /// env or header text, which may carry credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChildTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => debug_stdio(f, command, args.len(), env.keys(), cwd),
            ChildTransport::Http { url, headers } => debug_http(f, url, headers.keys()),
            ChildTransport::Builtin(server) => write!(f, "Builtin({})", server.name()),
        }
    }
}

/// Where a child's env or header value comes from when a run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueSource {
    /// Literal text with `${VAR}` placeholders; an unset variable fails startup.
    Template(Template),
    /// Codex `env_vars` / `env_http_headers`: the value of this variable of ours, left out
    /// when it is unset or empty.
    EnvIfSet(String),
}
