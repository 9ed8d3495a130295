//! Every definition field's spellings, named once: the parsers read a field through its
//! constant here, and `unknown_fields` builds each format's list of known fields from the
//! same constants, so a field the parser reads is always one a typo can be a slip of.

/// One field: every spelling a format accepts for it.
pub(super) type Field = &'static [&'static str];

// ----- Fields every format reads (FORMATS.md, "Common to all formats") -----

pub(super) const NAME: Field = &["name"];
pub(super) const DESCRIPTION: Field = &["description"];
pub(super) const MODEL: Field = &["model"];
pub(super) const MODEL_PROVIDER: Field = &["model_provider", "modelProvider"];
pub(super) const BASE_URL: Field = &["base_url", "baseUrl"];
pub(super) const ENV_KEY: Field = &["env_key", "envKey"];
pub(super) const WIRE_API: Field = &["wire_api", "wireApi"];
pub(super) const AUTH: Field = &["auth"];
pub(super) const MAX_TURNS: Field = &["max_turns", "maxTurns"];
pub(super) const MAX_OUTPUT_TOKENS: Field = &["max_output_tokens", "maxOutputTokens"];
pub(super) const MAX_TOOL_CALLS: Field = &["max_tool_calls", "maxToolCalls"];
pub(super) const MAX_RUN_TOKENS: Field = &["max_run_tokens", "maxRunTokens"];
pub(super) const MAX_RUN_SECONDS: Field = &["max_run_seconds", "maxRunSeconds"];
pub(super) const OUTPUT_SCHEMA: Field = &["output_schema", "outputSchema"];
pub(super) const MCP_SERVERS: Field = &["mcp_servers", "mcpServers"];
pub(super) const SKILLS: Field = &["skills"];
pub(super) const SANDBOX: Field = &["sandbox"];
pub(super) const ISOLATION: Field = &["isolation"];
pub(super) const TOOLS: Field = &["tools"];
pub(super) const DISALLOWED_TOOLS: Field = &["disallowed_tools", "disallowedTools"];
pub(super) const REASONING_EFFORT: Field = &["reasoning_effort", "reasoningEffort"];
pub(super) const TEMPERATURE: Field = &["temperature"];
/// Whether the agent may ask its parent (SPEC §4.5), and how long a question waits.
pub(super) const ASK_PARENT: Field = &["ask_parent", "askParent"];
pub(super) const ASK_TIMEOUT: Field = &["ask_timeout_s", "askTimeoutS"];
/// The models a run falls back to (SPEC §5.1).
pub(super) const FALLBACK_MODELS: Field = &["fallback_models", "fallbackModels"];

pub(super) const COMMON: &[Field] = &[
    NAME,
    DESCRIPTION,
    MODEL,
    MODEL_PROVIDER,
    BASE_URL,
    ENV_KEY,
    WIRE_API,
    AUTH,
    MAX_TURNS,
    MAX_OUTPUT_TOKENS,
    MAX_TOOL_CALLS,
    MAX_RUN_TOKENS,
    MAX_RUN_SECONDS,
    OUTPUT_SCHEMA,
    MCP_SERVERS,
    SKILLS,
    SANDBOX,
    ISOLATION,
    TOOLS,
    DISALLOWED_TOOLS,
    REASONING_EFFORT,
    TEMPERATURE,
    ASK_PARENT,
    ASK_TIMEOUT,
    FALLBACK_MODELS,
];

// ----- Canonical TOML -----

/// The instructions of a TOML definition (canonical and Codex).
pub(super) const INSTRUCTIONS: Field = &["instructions", "developer_instructions"];

pub(super) const CANONICAL_TOML: &[Field] = &[INSTRUCTIONS];

/// Codex's instructions: its own spelling first, for the message when both are set.
pub(super) const CODEX_INSTRUCTIONS: Field = &["developer_instructions", "instructions"];

// ----- Claude Code (FORMATS.md §2) -----

pub(super) const CLAUDE_EFFORT: Field = &["reasoning_effort", "reasoningEffort", "effort"];
pub(super) const PERMISSION_MODE: Field = &["permissionMode", "permission_mode"];

/// Claude Code's own fields, read or deliberately ignored.
pub(super) const CLAUDE: &[Field] = &[
    CLAUDE_EFFORT,
    PERMISSION_MODE,
    &["hooks", "memory", "background", "initialPrompt", "color"],
];

// ----- Codex role files (FORMATS.md §3) -----

pub(super) const CODEX_EFFORT: Field = &["reasoning_effort", "model_reasoning_effort"];
pub(super) const CODEX_SANDBOX: Field = &["sandbox", "sandbox_mode"];
pub(super) const MODEL_PROVIDERS: Field = &["model_providers"];

/// Codex's keys this runtime reads or deliberately ignores.
pub(super) const CODEX: &[Field] = &[
    CODEX_INSTRUCTIONS,
    CODEX_EFFORT,
    CODEX_SANDBOX,
    MODEL_PROVIDERS,
    &[
        "model_instructions_file",
        "model_reasoning_summary",
        "model_verbosity",
        "sandbox_workspace_write",
        "approval_policy",
        "nickname_candidates",
        "web_search",
        "features",
        "profile",
        "profiles",
    ],
];

// ----- OpenCode (FORMATS.md §4) -----

pub(super) const OPENCODE_MAX_TURNS: Field = &["max_turns", "maxTurns", "steps", "maxSteps"];
pub(super) const MODE: Field = &["mode"];
pub(super) const DISABLE: Field = &["disable", "disabled"];
pub(super) const PROMPT: Field = &["prompt"];
pub(super) const PERMISSION: Field = &["permission"];

/// OpenCode's agent fields, read or deliberately ignored.
pub(super) const OPENCODE: &[Field] = &[
    OPENCODE_MAX_TURNS,
    MODE,
    DISABLE,
    PROMPT,
    PERMISSION,
    &["hidden", "color", "top_p", "variant", "options"],
];

// ----- GitHub Copilot custom agents (docs/agents.md, "GitHub Copilot files") -----

/// Copilot's per-agent servers; the canonical spellings too, so that two are "both set".
pub(super) const COPILOT_MCP_SERVERS: Field = &["mcp-servers", "mcp_servers", "mcpServers"];
/// The Copilot CLI's list of models, which wins over `model`.
pub(super) const COPILOT_MODELS: Field = &["models"];
pub(super) const MODEL_POLICY: Field = &["modelPolicy"];
pub(super) const DISABLE_MODEL_INVOCATION: Field = &["disable-model-invocation"];
pub(super) const INFER: Field = &["infer"];
pub(super) const INCLUDE_CUSTOM_INSTRUCTIONS: Field = &["include-custom-instructions"];
pub(super) const SIDEKICK: Field = &["sidekick"];
pub(super) const HOOKS: Field = &["hooks"];
/// The fields of one entry of a VS Code model list (`{name, reasoning-effort, context-size}`).
pub(super) const MODEL_ENTRY_NAME: Field = &["name"];
pub(super) const MODEL_ENTRY_EFFORT: Field = &["reasoning-effort"];
pub(super) const MODEL_ENTRY_CONTEXT_SIZE: Field = &["context-size"];

/// Copilot's agent fields (the cloud agent's, the CLI's and VS Code's), read or deliberately
/// ignored. Only these spellings: Copilot reads no other.
pub(super) const COPILOT: &[Field] = &[
    COPILOT_MCP_SERVERS,
    COPILOT_MODELS,
    MODEL_POLICY,
    DISABLE_MODEL_INVOCATION,
    INFER,
    INCLUDE_CUSTOM_INSTRUCTIONS,
    SIDEKICK,
    HOOKS,
    &[
        "target",
        "user-invocable",
        "user-invokable",
        "metadata",
        "argument-hint",
        "handoffs",
        "agents",
        "mode",
        "hidden",
        "agent",
    ],
];

// ----- Cursor subagents (docs/agents.md, "Cursor files") -----

pub(super) const READONLY: Field = &["readonly"];

/// Cursor's subagent fields, read or deliberately ignored.
pub(super) const CURSOR: &[Field] = &[READONLY, &["is_background", "background"]];

// ----- Gemini CLI subagents (docs/agents.md, "Gemini CLI files") -----

pub(super) const KIND: Field = &["kind"];
pub(super) const TIMEOUT_MINS: Field = &["timeout_mins"];

/// Gemini CLI's local and remote agent fields, read or deliberately ignored.
pub(super) const GEMINI: &[Field] = &[
    KIND,
    TIMEOUT_MINS,
    &["display_name", "agent_card_url", "agent_card_json"],
];

// ----- One child server entry (SPEC §8.1, FORMATS.md §3, `.mcp.json`, OpenCode's `mcp`) -----

pub(super) const SERVER_TYPE: Field = &["type"];
pub(super) const SERVER_BUILTIN: Field = &["builtin"];
pub(super) const SERVER_COMMAND: Field = &["command"];
pub(super) const SERVER_ARGS: Field = &["args"];
pub(super) const SERVER_ENV: Field = &["env"];
pub(super) const SERVER_ENV_VARS: Field = &["env_vars"];
pub(super) const SERVER_CWD: Field = &["cwd"];
pub(super) const SERVER_URL: Field = &["url"];
pub(super) const SERVER_HEADERS: Field = &["headers", "http_headers"];
pub(super) const SERVER_ENV_HTTP_HEADERS: Field = &["env_http_headers"];
pub(super) const SERVER_BEARER_TOKEN_ENV_VAR: Field = &["bearer_token_env_var"];
pub(super) const SERVER_ENABLED: Field = &["enabled"];
pub(super) const SERVER_DISABLED: Field = &["disabled"];
pub(super) const SERVER_REQUIRED: Field = &["required"];
pub(super) const SERVER_STARTUP_TIMEOUT: Field = &["startup_timeout_sec", "startup_timeout_ms"];
pub(super) const SERVER_TOOL_TIMEOUT: Field = &["tool_timeout_sec"];
pub(super) const SERVER_ENABLED_TOOLS: Field = &["enabled_tools", "enabledTools"];
pub(super) const SERVER_DISABLED_TOOLS: Field = &["disabled_tools", "disabledTools"];
pub(super) const SERVER_OAUTH: Field = &["oauth"];

// A server entry's fields in Copilot's `mcp-servers` and Gemini's `mcp_servers`, besides
// the ones above (see `servers::Dialect`).

/// Copilot: the server's tools to enable (`["*"]`: all).
pub(super) const COPILOT_SERVER_TOOLS: Field = &["enabled_tools", "enabledTools", "tools"];
/// Gemini: the server's own allow and deny lists.
pub(super) const GEMINI_SERVER_INCLUDE: Field = &["enabled_tools", "enabledTools", "include_tools"];
pub(super) const GEMINI_SERVER_EXCLUDE: Field =
    &["disabled_tools", "disabledTools", "exclude_tools"];
/// Gemini: `http_url`, its older spelling of a streamable HTTP `url`.
pub(super) const GEMINI_SERVER_URL: Field = &["url", "http_url"];
/// Gemini: the per-call timeout, in milliseconds.
pub(super) const GEMINI_SERVER_TIMEOUT_MS: Field = &["timeout"];
/// Sign-in flows and transports the other tools know and this runtime does not run.
pub(super) const SERVER_SIGN_IN: Field = &["auth", "oidc"];
pub(super) const SERVER_TCP: Field = &["tcp"];

/// The server fields only Copilot's and Gemini's entries have.
pub(super) const FOREIGN_SERVER: &[Field] = &[
    COPILOT_SERVER_TOOLS,
    GEMINI_SERVER_INCLUDE,
    GEMINI_SERVER_EXCLUDE,
    GEMINI_SERVER_URL,
    SERVER_SIGN_IN,
    SERVER_TCP,
    &["trust"],
];

/// Every field of a child server entry, read or refused by name.
pub(super) const SERVER: &[Field] = &[
    SERVER_TYPE,
    SERVER_BUILTIN,
    SERVER_COMMAND,
    SERVER_ARGS,
    SERVER_ENV,
    SERVER_ENV_VARS,
    SERVER_CWD,
    SERVER_URL,
    SERVER_HEADERS,
    SERVER_ENV_HTTP_HEADERS,
    SERVER_BEARER_TOKEN_ENV_VAR,
    SERVER_ENABLED,
    SERVER_DISABLED,
    SERVER_REQUIRED,
    SERVER_STARTUP_TIMEOUT,
    SERVER_TOOL_TIMEOUT,
    SERVER_ENABLED_TOOLS,
    SERVER_DISABLED_TOOLS,
    SERVER_OAUTH,
    &[
        "scopes",
        "oauth_resource",
        "headersHelper",
        "headers_helper",
        "timeout",
        "alwaysLoad",
        "name",
        "description",
        "environment",
    ],
];

/// Every spelling of every field in `lists`.
pub(super) fn spellings(lists: &[Field]) -> impl Iterator<Item = &'static str> + '_ {
    lists.iter().flat_map(|field| field.iter().copied())
}
