//! What the built-in workspace server (`workspace`) and the rest of the binary agree on,
//! written once here because neither imports the other (docs/architecture.md): the places
//! in a workspace where agents and their MCP servers are configured, which `edit` and
//! `write` never change and `check` names, and the answer of a tool that changed a file,
//! which the workspace server writes and the child layer reads into `files_changed`.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

/// The folders agents and skills are read from (SPEC §3, §9): every definition root of the
/// seven formats (OpenCode's two spellings) and every skill root. A file written there
/// would be an agent, or a skill preloaded into one, at the next start.
pub const AGENT_CONFIG_DIRS: [&str; 12] = [
    ".agents/agents",
    ".claude/agents",
    ".codex/agents",
    ".opencode/agents",
    ".opencode/agent",
    ".github/agents",
    ".cursor/agents",
    ".gemini/agents",
    ".agents/skills",
    ".claude/skills",
    ".codex/skills",
    ".opencode/skills",
];

/// The files that configure MCP servers, agents, hooks or permissions for the clients this
/// server reads or documents (docs/clients.md): each can make a client or this server start
/// a command.
pub const AGENT_CONFIG_FILES: [&str; 7] = [
    ".mcp.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex/config.toml",
    ".cursor/mcp.json",
    ".vscode/mcp.json",
    ".gemini/settings.json",
];

/// What the workspace tools that change files (`edit`, `write`) answer about the file, as
/// part of their structured content; the rest of each answer is the tool's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChangedFile {
    /// The file, relative to the workspace root.
    pub path: String,
    /// Whether the file is new (it did not exist before). Said by `write`, which may create
    /// a file; `edit` changes existing files only and leaves it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<bool>,
}

impl ChangedFile {
    /// The file a successful answer's structured content names, if it names one.
    pub fn from_answer(structured: &serde_json::Value) -> Option<ChangedFile> {
        ChangedFile::deserialize(structured).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_reads_back_as_it_was_written() {
        let written = ChangedFile {
            path: "src/a.rs".into(),
            created: Some(true),
        };
        let mut answer = serde_json::to_value(&written).unwrap();
        answer["bytes"] = 3.into();
        assert_eq!(ChangedFile::from_answer(&answer), Some(written));
        let edited = serde_json::json!({"path": "b.rs", "replacements": 2});
        assert_eq!(
            ChangedFile::from_answer(&edited),
            Some(ChangedFile {
                path: "b.rs".into(),
                created: None
            })
        );
        assert_eq!(ChangedFile::from_answer(&serde_json::json!({"x": 1})), None);
    }
}
