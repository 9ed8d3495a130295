//! Model aliases that files use instead of a model id.

/// Claude Code's model aliases, the variables that override them, and the models they
/// resolve to on the Anthropic API (Claude Code's documented mapping as of 2026-11; see
/// docs/agents.md).
pub const CLAUDE_ALIASES: &[(&str, &str, &str)] = &[
    (
        "sonnet",
        "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "claude-sonnet-5-5",
    ),
    ("opus", "ANTHROPIC_DEFAULT_OPUS_MODEL", "claude-opus-5-5"),
    ("haiku", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-5-5"),
    ("fable", "ANTHROPIC_DEFAULT_FABLE_MODEL", "claude-fable-5-2"),
];
