//! The canonical agent definition (SPEC §3.1): what a subagent is, whatever file format it
//! was written in, and the filtering rule over the child tools it may be offered (§8.5).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use super::child::{BuiltinServer, ChildServerConfig};
use super::json_schema::CompiledSchema;
use super::provider::ProviderConfig;
use super::tool_filter::{ToolFilter, ToolHints, ToolNames};
use super::wire::ReasoningEffort;

/// One subagent, as the catalog holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDefinition {
    pub name: String,
    pub description: String,
    pub instructions: String,
    pub model: Model,
    /// The model ids tried in order when `model` cannot answer before a run's first reply
    /// (SPEC §5.1 `fallback_models`): on the same provider and wire, within the server's
    /// allowed models, each once and none the model itself.
    pub fallback_models: Vec<String>,
    pub provider: ProviderConfig,
    pub max_turns: u32,
    /// The longest reply of one request, in tokens, when the definition sets it; otherwise
    /// the model's default applies (SPEC §3.1, §6.1).
    pub max_output_tokens: Option<u32>,
    /// The budget of one run, with the server's defaults applied (SPEC §3.1, §6 step 5).
    pub budget: RunBudget,
    /// The JSON Schema the final answer must satisfy, compiled when the catalog loaded
    /// (SPEC §3.1, §6 step 4).
    pub output_schema: Option<CompiledSchema>,
    /// Child MCP servers by name (sorted, so every listing is deterministic).
    pub mcp_servers: BTreeMap<String, ChildServerConfig>,
    /// Skills to preload, in the order listed.
    pub skills: Vec<String>,
    pub sandbox: Sandbox,
    pub tools: ToolFilter,
    pub reasoning_effort: Option<ReasoningEffort>,
    pub temperature: Option<f64>,
    /// The tools its file asks for that this runtime does not give (Claude Code's `Edit`,
    /// `Bash`, `WebFetch`…, OpenCode's `edit`, `bash`…), as its file names them, each once:
    /// the agent runs without them (`check` warns; `spawn_agent` says so, SPEC §4.1).
    pub unavailable_tools: Vec<String>,
    /// `None` when the parent model may start the agent; otherwise the setting of its file
    /// that says a model must not pick it (Copilot's `disable-model-invocation: true` or
    /// `infer: false`): it is left out of `spawn_agent`, and only a person starts it
    /// (`mcp-agents run`).
    pub hand_only: Option<&'static str>,
    /// `Some` when the agent may ask its parent a question (SPEC §4.5: canonical
    /// `ask_parent: true`, or a tool name of its format that means "ask the user"): its runs
    /// offer the `ask_parent` tool, and a question waits this long for an answer.
    pub ask_parent: Option<AskParent>,
    pub source: SourceFile,
}

/// How an agent that may ask its parent asks (SPEC §4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AskParent {
    /// How long a question waits for the answer (`ask_timeout_s`) before the agent is told
    /// to decide for itself.
    pub timeout: std::time::Duration,
}

impl AgentDefinition {
    /// What the parent should know before it picks this agent, when its file asks for tools
    /// it does not get here: `read-only here: no Bash` when all it is offered is the
    /// workspace tools that read, else `runs here without Bash`.
    pub fn offer_note(&self) -> Option<String> {
        if self.unavailable_tools.is_empty() {
            return None;
        }
        let missing = self.unavailable_tools.join(", ");
        let workspace = BuiltinServer::Workspace;
        let read_only = self.sandbox == Sandbox::ReadOnly
            || self.own_servers().next().is_none()
                && self
                    .workspace_tools()
                    .iter()
                    .all(|tool| workspace.tool_hints(tool).read_only == Some(true));
        Some(if read_only {
            format!("read-only here: no {missing}")
        } else {
            format!("runs here without {missing}")
        })
    }

    /// Whether `spawn_agent` offers this agent to the parent model.
    pub fn offered_to_model(&self) -> bool {
        self.hand_only.is_none()
    }

    /// Whether the model may be offered `server`'s `tool`, given the tool's annotations
    /// (SPEC §8.5): the agent's lists, the server's own lists, then read-only mode.
    /// Deny lists always win. Without the name offered to the model, patterns are matched
    /// against the child's name and that name under the provider character rule.
    pub fn offers_tool(&self, server: &str, tool: &str, hints: ToolHints) -> bool {
        self.offers_named_tool(&ToolNames::new(server, tool), hints)
    }

    /// [`offers_tool`](Self::offers_tool) for a tool whose names (and, when known, the exact
    /// name offered to the model) are `names`: a pattern that matches any of them counts.
    pub fn offers_named_tool(&self, names: &ToolNames<'_>, hints: ToolHints) -> bool {
        let Some(config) = self.mcp_servers.get(names.server) else {
            return false;
        };
        if !self.tools.permits_names(names) || !config.permits_names(names) {
            return false;
        }
        match self.sandbox {
            Sandbox::Default => true,
            Sandbox::ReadOnly => hints.read_only == Some(true) && hints.destructive != Some(true),
        }
    }

    /// The tools of the built-in `workspace` server this agent is offered (SPEC §8.6), in
    /// the order the server lists them; empty when it does not get the server.
    pub fn workspace_tools(&self) -> Vec<&'static str> {
        let workspace = BuiltinServer::Workspace;
        let granted = self
            .mcp_servers
            .get(workspace.name())
            .is_some_and(|config| config.builtin() == Some(workspace));
        if !granted {
            return Vec::new();
        }
        workspace
            .tools()
            .iter()
            .copied()
            .filter(|tool| self.offers_tool(workspace.name(), tool, workspace.tool_hints(tool)))
            .collect()
    }

    /// The child servers the definition itself configures: every one but the built-ins.
    pub fn own_servers(&self) -> impl Iterator<Item = &String> {
        self.mcp_servers
            .iter()
            .filter(|(_, config)| config.builtin().is_none())
            .map(|(name, _)| name)
    }

    /// The variables whose values are its credentials: its provider key's (and
    /// `ANTHROPIC_AUTH_TOKEN`, where that stands in for it), and those its child servers
    /// carry ([`ChildServerConfig::secret_vars`](super::ChildServerConfig::secret_vars)).
    /// What every run hides from everything it emits (SPEC §10).
    pub fn secret_vars(&self) -> impl Iterator<Item = &str> {
        let key = self.provider.key_choice(|_| false);
        std::iter::once(self.provider.env_key.as_str())
            .chain(key.alternative)
            .chain(
                self.mcp_servers
                    .values()
                    .flat_map(|config| config.secret_vars()),
            )
    }
}

/// What one run may spend (SPEC §3.1): child tool calls, tokens (input and output as the
/// provider reports them, cached included) and wall-clock seconds. `None` is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunBudget {
    pub max_tool_calls: Option<u32>,
    pub max_run_tokens: Option<u32>,
    pub max_run_seconds: Option<u32>,
}

impl RunBudget {
    /// The budget's fields by their definition names, in a fixed order.
    pub fn fields(&self) -> [(&'static str, Option<u32>); 3] {
        [
            ("max_tool_calls", self.max_tool_calls),
            ("max_run_tokens", self.max_run_tokens),
            ("max_run_seconds", self.max_run_seconds),
        ]
    }

    /// "20 tool calls, 100000 tokens, 300 s", or `None` without any limit.
    pub fn summary(&self) -> Option<String> {
        let parts: Vec<String> = [
            self.max_tool_calls.map(|n| format!("{n} tool calls")),
            self.max_run_tokens.map(|n| format!("{n} tokens")),
            self.max_run_seconds.map(|n| format!("{n} s")),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// Where a definition came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Canonical path relative to the workspace.
    pub path: PathBuf,
    pub format: Format,
}

/// The file formats of SPEC §3 / FORMATS.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `.agents/agents/**/*.md`
    CanonicalMarkdown,
    /// `.agents/agents/**/*.toml`
    CanonicalToml,
    /// `.claude/agents/**/*.md`
    Claude,
    /// `.codex/agents/**/*.toml`
    Codex,
    /// `.opencode/agents/**/*.md` and `.opencode/agent/**/*.md`
    OpenCode,
    /// `.github/agents/**/*.md` (`.agent.md` or `.md`): GitHub Copilot custom agents
    Copilot,
    /// `.cursor/agents/**/*.md`: Cursor subagents
    Cursor,
    /// `.gemini/agents/*.md`: Gemini CLI subagents
    Gemini,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::CanonicalMarkdown => "canonical-md",
            Format::CanonicalToml => "canonical-toml",
            Format::Claude => "claude",
            Format::Codex => "codex",
            Format::OpenCode => "opencode",
            Format::Copilot => "copilot",
            Format::Cursor => "cursor",
            Format::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The model a definition will really use, and how that was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    pub id: String,
    pub origin: ModelOrigin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelOrigin {
    /// The file names the model id.
    Explicit,
    /// A Claude alias (`sonnet`, …), resolved through `env` when that variable was set, else
    /// through the built-in table.
    ClaudeAlias { alias: String, env: Option<String> },
    /// The file defers to its parent's model; the server's default model is used.
    ServerDefault,
    /// The file names the model the way another tool writes it (Copilot's `Claude Sonnet
    /// 4.5 (copilot)`, Cursor's `claude-4.5-sonnet`); `written` was translated to the
    /// provider's id through the documented table.
    Translated { written: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sandbox {
    #[default]
    Default,
    ReadOnly,
}

impl Sandbox {
    pub fn as_str(self) -> &'static str {
        match self {
            Sandbox::Default => "default",
            Sandbox::ReadOnly => "read-only",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{ChildTransport, ProviderKind, ToolNaming, ToolPattern, WireApi};
    use crate::limits::DEFAULT_MAX_TURNS;
    use std::time::Duration;
    use url::Url;

    #[test]
    fn child_bounds_are_the_specified_ones() {
        // SPEC §8: startup 15 s, each call 60 s, unless a definition lowers them.
        let config = ChildServerConfig::new(ChildTransport::Stdio {
            command: "x".into(),
            args: vec![],
            env: BTreeMap::new(),
            cwd: None,
        });
        assert_eq!(config.startup_timeout, Duration::from_secs(15));
        assert_eq!(config.call_timeout, Duration::from_secs(60));
    }

    fn def_with(sandbox: Sandbox, tools: ToolFilter, server: ChildServerConfig) -> AgentDefinition {
        AgentDefinition {
            name: "a".into(),
            description: "d".into(),
            instructions: "i".into(),
            model: Model {
                id: "m".into(),
                origin: ModelOrigin::Explicit,
            },
            fallback_models: Vec::new(),
            provider: ProviderConfig::new(
                ProviderKind::OpenAi,
                Url::parse("https://api.openai.com/v1").unwrap(),
                "OPENAI_API_KEY",
                WireApi::Responses,
            ),
            max_turns: DEFAULT_MAX_TURNS,
            max_output_tokens: None,
            budget: RunBudget::default(),
            output_schema: None,
            mcp_servers: BTreeMap::from([("docs".to_owned(), server)]),
            skills: vec![],
            sandbox,
            tools,
            reasoning_effort: None,
            temperature: None,
            unavailable_tools: Vec::new(),
            hand_only: None,
            ask_parent: None,
            source: SourceFile {
                path: "x.md".into(),
                format: Format::CanonicalMarkdown,
            },
        }
    }

    fn stdio() -> ChildServerConfig {
        ChildServerConfig::new(ChildTransport::Stdio {
            command: "docs-mcp".into(),
            args: vec![],
            env: BTreeMap::new(),
            cwd: None,
        })
    }

    const RO: ToolHints = ToolHints {
        read_only: Some(true),
        destructive: None,
    };

    #[test]
    fn read_only_needs_the_read_only_hint_and_no_destructive_hint() {
        let d = def_with(Sandbox::ReadOnly, ToolFilter::default(), stdio());
        assert!(d.offers_tool("docs", "read", RO));
        assert!(!d.offers_tool("docs", "read", ToolHints::default()));
        assert!(!d.offers_tool(
            "docs",
            "read",
            ToolHints {
                read_only: Some(true),
                destructive: Some(true)
            }
        ));
        assert!(!d.offers_tool("other", "read", RO), "unknown server");
        let d = def_with(Sandbox::Default, ToolFilter::default(), stdio());
        assert!(d.offers_tool("docs", "write", ToolHints::default()));
    }

    #[test]
    fn deny_wins_over_read_only_and_server_lists() {
        let mut server = stdio();
        server.enabled_tools = Some(vec!["read".into(), "list_*".into()]);
        server.disabled_tools = vec!["list_secrets".into()];
        let d = def_with(Sandbox::Default, ToolFilter::default(), server);
        assert!(d.offers_tool("docs", "read", RO));
        assert!(d.offers_tool("docs", "list_pages", RO));
        assert!(!d.offers_tool("docs", "list_secrets", RO));
        assert!(!d.offers_tool("docs", "write", RO));

        let tools = ToolFilter {
            allow: None,
            also_allow: vec![],
            deny: vec![ToolPattern::new("docs__read", ToolNaming::Qualified)],
        };
        let d = def_with(Sandbox::ReadOnly, tools, stdio());
        assert!(!d.offers_tool("docs", "read", RO));
    }

    #[test]
    fn lists_match_the_name_the_model_is_offered() {
        // `delete.issue` is offered as `docs__delete_issue`; lists written with that name
        // must hold, at the agent's level and at the server's.
        let names = ToolNames::new("docs", "delete.issue").offered_as("docs__delete_issue");
        let deny = ToolFilter {
            allow: None,
            also_allow: vec![],
            deny: vec![ToolPattern::new(
                "docs__delete_issue",
                ToolNaming::Qualified,
            )],
        };
        let d = def_with(Sandbox::Default, deny, stdio());
        assert!(!d.offers_named_tool(&names, RO));
        assert!(!d.offers_tool("docs", "delete.issue", RO));
        assert!(d.offers_tool("docs", "read", RO));

        let mut allow = ToolFilter::default();
        allow.allow(ToolPattern::new(
            "docs__delete_issue",
            ToolNaming::Qualified,
        ));
        let d = def_with(Sandbox::Default, allow, stdio());
        assert!(d.offers_named_tool(&names, RO));
        assert!(!d.offers_tool("docs", "read", RO));

        let mut server = stdio();
        server.disabled_tools = vec!["delete_issue".into()];
        let d = def_with(Sandbox::Default, ToolFilter::default(), server);
        assert!(!d.offers_named_tool(&names, RO));
        assert!(!d.offers_tool("docs", "delete.issue", RO));

        // A collision suffix is part of the offered name, and the server's lists see it.
        let second = ToolNames::new("docs", "delete/issue").offered_as("docs__delete_issue_2");
        let mut server = stdio();
        server.disabled_tools = vec!["delete_issue_2".into()];
        let d = def_with(Sandbox::Default, ToolFilter::default(), server);
        assert!(!d.offers_named_tool(&second, RO));
        let mut server = stdio();
        server.enabled_tools = Some(vec!["delete_issue".into()]);
        let d = def_with(Sandbox::Default, ToolFilter::default(), server);
        assert!(d.offers_named_tool(&names, RO));
        assert!(!d.offers_tool("docs", "read", RO));
    }
}
