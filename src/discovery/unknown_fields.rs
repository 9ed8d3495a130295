//! Unknown fields that look like typos (SPEC §3.1): every format's known field names, and
//! one check that reports an unknown field within a slip of one of them ("did you mean
//! `disallowedTools`?"). Unknown fields stay ignored, since they may belong to another tool;
//! a name that any format knows is never reported (`mode` in a Claude file is OpenCode's).
//!
//! The lists hold every field the format's parser reads and the fields of that tool it
//! deliberately ignores; `tests/suite/definition_fields.rs` checks that the published
//! corpus raises no report and that a typo of each list's fields does.

use super::fields::Doc;
use crate::definition::Format;
use crate::definition::closest;

/// Fields every format reads (FORMATS.md, "Common to all formats").
const COMMON: &[&str] = &[
    "name",
    "description",
    "model",
    "model_provider",
    "modelProvider",
    "base_url",
    "baseUrl",
    "env_key",
    "envKey",
    "wire_api",
    "wireApi",
    "auth",
    "max_turns",
    "maxTurns",
    "max_output_tokens",
    "maxOutputTokens",
    "max_tool_calls",
    "maxToolCalls",
    "max_run_tokens",
    "maxRunTokens",
    "max_run_seconds",
    "maxRunSeconds",
    "output_schema",
    "outputSchema",
    "mcp_servers",
    "mcpServers",
    "skills",
    "sandbox",
    "isolation",
    "tools",
    "disallowed_tools",
    "disallowedTools",
    "reasoning_effort",
    "reasoningEffort",
    "temperature",
];

/// The canonical TOML's instructions.
const CANONICAL_TOML: &[&str] = &["instructions", "developer_instructions"];

/// Claude Code's own fields (FORMATS.md §2), read or ignored.
const CLAUDE: &[&str] = &[
    "effort",
    "permissionMode",
    "permission_mode",
    "hooks",
    "memory",
    "background",
    "initialPrompt",
    "color",
];

/// Codex role-file keys (FORMATS.md §3) this runtime reads or deliberately ignores.
const CODEX: &[&str] = &[
    "developer_instructions",
    "instructions",
    "model_instructions_file",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "model_verbosity",
    "sandbox_mode",
    "sandbox_workspace_write",
    "approval_policy",
    "model_providers",
    "nickname_candidates",
    "web_search",
    "features",
    "profile",
    "profiles",
];

/// OpenCode's agent fields (FORMATS.md §4).
const OPENCODE: &[&str] = &[
    "mode",
    "disable",
    "disabled",
    "prompt",
    "steps",
    "maxSteps",
    "permission",
    "hidden",
    "color",
    "top_p",
    "variant",
    "options",
];

/// The fields of one child server entry, in every spelling the formats use (SPEC §8.1,
/// FORMATS.md §3, Claude Code's `.mcp.json`, OpenCode's `mcp`).
pub(super) const SERVER_FIELDS: &[&str] = &[
    "type",
    "builtin",
    "command",
    "args",
    "env",
    "env_vars",
    "cwd",
    "url",
    "headers",
    "http_headers",
    "env_http_headers",
    "bearer_token_env_var",
    "enabled",
    "disabled",
    "required",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled_tools",
    "enabledTools",
    "disabled_tools",
    "disabledTools",
    "scopes",
    "oauth",
    "oauth_resource",
    "headersHelper",
    "headers_helper",
    "timeout",
    "alwaysLoad",
    "name",
    "description",
    "environment",
];

/// The fields `format` knows besides [`COMMON`].
fn own_fields(format: Format) -> &'static [&'static str] {
    match format {
        Format::CanonicalMarkdown => &[],
        Format::CanonicalToml => CANONICAL_TOML,
        Format::Claude => CLAUDE,
        Format::Codex => CODEX,
        Format::OpenCode => OPENCODE,
    }
}

fn known_anywhere(field: &str) -> bool {
    [COMMON, CANONICAL_TOML, CLAUDE, CODEX, OPENCODE]
        .iter()
        .any(|list| list.contains(&field))
}

/// One caveat for each top-level field of `doc` that `format` does not know and that is a
/// slip of one it does.
pub(super) fn note_near_misses(doc: Doc<'_>, format: Format, caveats: &mut Vec<String>) {
    let known = || COMMON.iter().chain(own_fields(format)).copied();
    for field in doc.map().keys() {
        if known_anywhere(field) {
            continue;
        }
        if let Some(meant) = closest(field, known()) {
            caveats.push(slip(field, meant, ""));
        }
    }
}

/// One caveat for each field of a child server entry that is a slip of a known one;
/// `place` names the server (`mcp_servers.github: `).
pub(super) fn note_server_near_misses(doc: Doc<'_>, place: &str, caveats: &mut Vec<String>) {
    for field in doc.map().keys() {
        if SERVER_FIELDS.contains(&field.as_str()) {
            continue;
        }
        if let Some(meant) = closest(field, SERVER_FIELDS.iter().copied()) {
            caveats.push(slip(field, meant, place));
        }
    }
}

fn slip(field: &str, meant: &str, place: &str) -> String {
    format!(
        "{place}`{field}` is not a field this runtime reads, so it is ignored; did you mean \
         `{meant}`?"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn notes(value: serde_json::Value, format: Format) -> Vec<String> {
        let mut caveats = Vec::new();
        note_near_misses(Doc::new(value.as_object().unwrap()), format, &mut caveats);
        caveats
    }

    #[test]
    fn a_typo_of_a_known_field_is_reported_once_with_the_field_it_resembles() {
        let caveats = notes(
            json!({"disalowedTools": "mcp__acc__wipe", "mcp_server": {}, "Model": "x"}),
            Format::Claude,
        );
        assert_eq!(caveats.len(), 3, "{caveats:?}");
        assert!(
            caveats.iter().any(|c| c.contains("`disalowedTools`")
                && c.ends_with("did you mean `disallowedTools`?"))
        );
        assert!(
            caveats
                .iter()
                .any(|c| c.ends_with("did you mean `mcp_servers`?"))
        );
        assert!(caveats.iter().any(|c| c.ends_with("did you mean `model`?")));
    }

    #[test]
    fn another_tools_fields_are_not_typos() {
        // `mode` is OpenCode's, `sandbox_mode` Codex's, `effort` Claude's: in any file they
        // are another tool's, not slips.
        for format in [Format::CanonicalMarkdown, Format::Claude, Format::OpenCode] {
            assert!(
                notes(
                    json!({"mode": "subagent", "sandbox_mode": "x", "effort": "high", "topK": 3}),
                    format
                )
                .is_empty(),
                "{format}"
            );
        }
        // A format's own ignored fields are known too.
        assert!(notes(json!({"colour": "red"}), Format::OpenCode)[0].ends_with("`color`?"));
    }

    #[test]
    fn server_fields_have_their_own_list() {
        let mut caveats = Vec::new();
        let entry = json!({"command": "x", "arg": ["a"], "disabled_tool": ["wipe"], "evn": {}});
        note_server_near_misses(
            Doc::new(entry.as_object().unwrap()),
            "mcp_servers.acc: ",
            &mut caveats,
        );
        assert_eq!(caveats.len(), 1, "short names are not guessed: {caveats:?}");
        assert_eq!(
            caveats[0],
            "mcp_servers.acc: `disabled_tool` is not a field this runtime reads, so it is \
             ignored; did you mean `disabled_tools`?"
        );
    }
}
