//! Model aliases that files (and `--default-model`) use instead of a model id.

use std::collections::HashMap;

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

/// A Claude alias resolved to the model id it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Resolved {
    pub alias: &'static str,
    pub id: String,
    /// The variable that chose the id, when it was set.
    pub env: Option<&'static str>,
}

/// `model` resolved, when it is one of [`CLAUDE_ALIASES`]: through its variable in `env` when
/// set (Claude Code's own `ANTHROPIC_DEFAULT_*_MODEL`), else the built-in id. A variable
/// holding a Claude Code setting rather than a model id is an error.
pub(super) fn resolve_alias(
    model: &str,
    env: &HashMap<String, String>,
) -> Option<Result<Resolved, String>> {
    let (alias, var, builtin) = CLAUDE_ALIASES.iter().find(|(a, _, _)| *a == model)?;
    let from_env = env.get(*var).map(|v| v.trim()).filter(|v| !v.is_empty());
    if let Some(value) = from_env
        && is_claude_code_mode(value)
    {
        return Some(Err(format!(
            "`model: {alias}` resolves through {var} to `{value}`, a Claude Code setting \
             this runtime cannot reproduce; set {var} to a model id, or unset it to use \
             {builtin}"
        )));
    }
    Some(Ok(Resolved {
        alias,
        id: from_env.unwrap_or(builtin).to_owned(),
        env: from_env.map(|_| *var),
    }))
}

/// Claude Code model settings that are not model ids: modes (`opusplan`, …) and the `[1m]`
/// suffix, which asks Claude Code for the 1M-token context this runtime does not request.
pub(super) fn is_claude_code_mode(model: &str) -> bool {
    matches!(model, "default" | "best" | "opusplan") || model.to_ascii_lowercase().ends_with("[1m]")
}
