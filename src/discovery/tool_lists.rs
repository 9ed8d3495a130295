//! Reading a file's tool lists into the draft's allow and deny lists: the qualified syntax
//! the canonical, Claude and Codex formats share, the lists whose entries a format maps
//! (Copilot, the Gemini CLI), and the built-in workspace server an agent is given.

use super::draft::Draft;
use super::field_names as fields;
use super::fields::Doc;
use crate::definition::{BuiltinServer, ToolNaming, ToolPattern};

/// Reads allow/deny entries in the qualified syntax shared by the canonical, Claude and Codex
/// formats: `server__tool`, `server__*`, `*`, and Claude's `mcp__server`, `mcp__server__*`,
/// `mcp__server__tool`. Entries that name no child tool (Claude Code built-ins such as
/// `Read` or `Bash(git:*)`) select nothing and are returned separately.
pub(super) fn qualified_patterns(entries: &[String]) -> (Vec<ToolPattern>, Vec<String>) {
    let mut patterns = Vec::new();
    let mut unknown = Vec::new();
    for entry in entries {
        let glob = match entry.strip_prefix("mcp__") {
            Some(rest) if rest.contains("__") || rest == "*" => Some(rest.to_owned()),
            Some(server) => Some(format!("{server}__*")),
            None if entry == "*" || entry.contains("__") => Some(entry.clone()),
            None => None,
        };
        match glob {
            Some(glob) => patterns.push(ToolPattern::new(glob, ToolNaming::Qualified)),
            None => unknown.push(entry.clone()),
        }
    }
    (patterns, unknown)
}

/// Reads `tools` / `disallowed_tools` in the qualified syntax into `draft.tools`; entries
/// that select nothing go to `draft.unknown_tools`.
pub(super) fn read_qualified_tool_lists(
    doc: Doc<'_>,
    draft: &mut Draft,
    allow_names: &[&'static str],
    deny_names: &[&'static str],
    comma_strings: bool,
) -> Result<(), String> {
    if let Some((_, entries)) = doc.string_list(allow_names, comma_strings)? {
        let (patterns, unknown) = qualified_patterns(&entries);
        add_allow_list(draft, patterns);
        draft.unknown_tools.extend(unknown);
    }
    if let Some((_, entries)) = doc.string_list(deny_names, comma_strings)? {
        let (patterns, unknown) = qualified_patterns(&entries);
        draft.tools.deny.extend(patterns);
        draft.unknown_tools.extend(unknown);
    }
    Ok(())
}

/// The pattern that selects the built-in workspace server's `tool` (`workspace__read`).
pub(super) fn workspace_pattern(tool: &str) -> ToolPattern {
    ToolPattern::new(
        format!("{}__{tool}", BuiltinServer::Workspace.name()),
        ToolNaming::Qualified,
    )
}

/// The patterns that select every tool of each of `servers` (`docs__*`): what a format's
/// "every MCP tool" entry (`mcp__*`, `mcp_*`) gives.
pub(super) fn every_tool_of(servers: &[String]) -> Vec<ToolPattern> {
    servers
        .iter()
        .map(|server| ToolPattern::new(format!("{server}__*"), ToolNaming::Qualified))
        .collect()
}

/// What one entry of a Copilot or Gemini CLI `tools` list names here.
pub(super) enum MappedTool {
    /// Workspace tools, by their names here (`read`, `grep`…).
    Workspace(Vec<&'static str>),
    /// Tools of servers the file defines.
    Child(Vec<ToolPattern>),
    /// The format's tool that asks the user: the agent may ask its parent (SPEC §4.5).
    AskParent,
    /// A tool that does not exist here.
    Missing,
}

/// `tools` and `disallowed_tools` of a format whose entries `entry` maps (given the file's
/// own server names). `tools` absent, or with `*` anywhere, gives every tool (the six
/// workspace tools and the servers'); otherwise only what the list names, an entry that
/// names nothing here going to the "runs without" warning. A denied tool that does not
/// exist here is denied by its absence.
pub(super) fn read_mapped_tools(
    doc: Doc<'_>,
    draft: &mut Draft,
    entry: fn(&str, &[String]) -> MappedTool,
) -> Result<(), String> {
    let own_servers: Vec<String> = draft.mcp_servers.keys().cloned().collect();
    let mut workspace = true;
    if let Some((_, listed)) = doc.string_list(fields::TOOLS, true)?
        && !listed.iter().any(|t| t == "*")
    {
        workspace = false;
        let mut patterns = Vec::new();
        for text in listed {
            match entry(&text, &own_servers) {
                MappedTool::Workspace(tools) => {
                    workspace = true;
                    patterns.extend(tools.iter().map(|t| workspace_pattern(t)));
                }
                MappedTool::Child(child) => patterns.extend(child),
                MappedTool::AskParent => draft.ask.named(true),
                MappedTool::Missing => draft.unknown_tools.push(text),
            }
        }
        add_allow_list(draft, patterns);
    }
    if let Some((_, denied)) = doc.string_list(fields::DISALLOWED_TOOLS, true)? {
        for text in denied {
            match entry(&text, &own_servers) {
                MappedTool::Workspace(tools) => draft
                    .tools
                    .deny
                    .extend(tools.iter().map(|t| workspace_pattern(t))),
                MappedTool::Child(child) => draft.tools.deny.extend(child),
                MappedTool::AskParent => draft.ask.named(false),
                MappedTool::Missing => {}
            }
        }
    }
    if workspace {
        grant_workspace(draft);
    }
    Ok(())
}

/// Adds an allow list written in `field`. The first one becomes the agent's allow list; a
/// second one (an OpenCode file with `permission` rules that allow only some tools and a
/// `tools` list) narrows it: a tool has to pass both.
pub(super) fn add_allow_list(draft: &mut Draft, patterns: Vec<ToolPattern>) {
    match draft.tools.allow {
        None => draft.tools.allow = Some(patterns),
        Some(_) => draft.tools.also_allow.push(patterns),
    }
}

/// Gives the agent the built-in `workspace` server (SPEC §8.6), unless its file already
/// names it. Its tools then pass through the agent's lists like any child's.
pub(super) fn grant_workspace(draft: &mut Draft) {
    let workspace = BuiltinServer::Workspace;
    draft
        .mcp_servers
        .entry(workspace.name().to_owned())
        .or_insert_with(|| workspace.config());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{ChildServerConfig, ChildTransport};
    use std::collections::BTreeMap;

    fn draft_with_servers() -> Draft {
        let server = || {
            ChildServerConfig::new(ChildTransport::Stdio {
                command: "x".into(),
                args: vec![],
                env: BTreeMap::new(),
                cwd: None,
            })
        };
        Draft {
            mcp_servers: BTreeMap::from([("docs".into(), server()), ("tracker".into(), server())]),
            ..Draft::default()
        }
    }

    fn offered(draft: &Draft) -> Vec<String> {
        let mut out = vec![];
        for (server, config) in &draft.mcp_servers {
            for tool in ["read", "write", "search"] {
                let agent = draft.tools.permits(server, tool);
                if agent && config.permits(tool) {
                    out.push(format!("{server}__{tool}"));
                }
            }
        }
        out
    }

    #[test]
    fn a_second_allow_list_narrows_in_either_order_and_naming() {
        let opencode = || vec![ToolPattern::new("docs_*", ToolNaming::OpenCode)];
        let qualified = || {
            vec![
                ToolPattern::new("*__read", ToolNaming::Qualified),
                ToolPattern::new("tracker__search", ToolNaming::Qualified),
            ]
        };
        for (first, second) in [(opencode(), qualified()), (qualified(), opencode())] {
            let mut draft = draft_with_servers();
            add_allow_list(&mut draft, first);
            add_allow_list(&mut draft, second);
            assert_eq!(offered(&draft), ["docs__read"]);
            assert_eq!(draft.tools.also_allow.len(), 1);
        }
    }
}
