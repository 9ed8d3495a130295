//! What a definition's tool lists leave it with, told as caveats: the entries that name no
//! tool here (tools of the format's client the agent runs without, or mistakes), an allow
//! list that leaves no tool at all, a workspace server none of whose tools would be offered,
//! and tools that change files without the one that reads them. Worded from the format's
//! [`Tools`], never from the format itself.

use super::vocabulary::{Tools, Vocabulary};
use crate::definition::{AgentDefinition, BuiltinServer, ToolNaming, ToolPattern, closest};

/// Tool names shown as what an agent could have, at most.
const TOOLS_SHOWN: usize = 8;

/// `entries`, each once, in the order written.
pub(super) fn unique(entries: &[String]) -> Vec<String> {
    let mut unique: Vec<String> = Vec::new();
    for entry in entries {
        if !unique.contains(entry) {
            unique.push(entry.clone());
        }
    }
    unique
}

/// The tools a file asks for that this runtime does not give: in a format with its client's
/// own tool names, the client's tools without an equivalent here, which the agent runs
/// without. In the qualified formats an entry that names nothing is a mistake, not a missing
/// tool.
pub(super) fn unavailable_tools(unknown: &[String], tools: Tools) -> Vec<String> {
    match tools {
        Tools::Client(_) => unknown.to_vec(),
        Tools::Qualified => Vec::new(),
    }
}

/// The one warning about tool entries that name no tool here (`unknown`, each once), worded
/// for the format: a file in its client's names asks for tools this runtime lacks and runs
/// without them; in the qualified formats an entry that names nothing is a mistake.
/// `definition` is as the file wrote it, before an idle workspace server is dropped.
pub(super) fn unknown_tools_note(
    definition: &AgentDefinition,
    unknown: &[String],
    tools: Tools,
) -> Option<String> {
    if unknown.is_empty() {
        return None;
    }
    let spellings = tools.workspace_spellings();
    let listed = unknown
        .iter()
        .map(
            |entry| match closest(entry, spellings.iter().map(String::as_str)) {
                Some(meant) => format!("{entry} (did you mean `{meant}`?)"),
                None => entry.clone(),
            },
        )
        .collect::<Vec<_>>()
        .join(", ");
    let mut note = match tools {
        Tools::Client(vocabulary) => runs_without(&listed, vocabulary),
        Tools::Qualified => names_nothing(&listed, unknown),
    };
    let filter = &definition.tools;
    let empty_allow_list = filter.allow.as_ref().is_some_and(Vec::is_empty)
        || filter.also_allow.iter().any(Vec::is_empty);
    if empty_allow_list {
        note.push_str(if definition.mcp_servers.is_empty() {
            "; with nothing else allowed, this agent has no tools at all"
        } else {
            "; the allow list names no child tool, so this agent is offered none of its \
             child servers' tools"
        });
    }
    Some(note)
}

/// "runs without Bash: this runtime has no such tools (of Claude Code's tools only Read, …
/// exist here, as the built-in workspace server's)".
fn runs_without(listed: &str, vocabulary: &Vocabulary) -> String {
    let names: Vec<&str> = vocabulary.listed().collect();
    let mut theirs = String::from("as the built-in workspace server's");
    if vocabulary.groups {
        theirs.push(' ');
        theirs.push_str(&and_list(BuiltinServer::Workspace.tools()));
    }
    if vocabulary.own_servers_only {
        theirs.push_str("; MCP tools exist only for the servers this file defines");
    }
    format!(
        "runs without {listed}: this runtime has no such tools (of {} only {} exist here, \
         {theirs})",
        vocabulary.client,
        and_list(&names)
    )
}

/// The note on qualified entries that select nothing, with the workspace tools' names when
/// an entry looks like one of them (`read`, `LS`).
fn names_nothing(listed: &str, unknown: &[String]) -> String {
    let mut note =
        format!("tool entries that name no child MCP tool select nothing here: {listed}");
    let workspace_like = unknown.iter().any(|entry| {
        let entry = entry.to_ascii_lowercase();
        BuiltinServer::Workspace.tools().contains(&entry.as_str()) || entry == "ls"
    });
    if workspace_like {
        note.push_str(
            " (the built-in workspace tools are `workspace__read`, `workspace__list`, \
             `workspace__glob` and `workspace__grep`, given by `mcp_servers: \
             {workspace: {builtin: workspace}}`, and `workspace__edit` and \
             `workspace__write` when `tools` names them too)",
        );
    }
    note
}

/// `a, b and c`.
fn and_list(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Drops a workspace server none of whose tools would be offered (it is not started at
/// all), and notes tools that change files without the one that reads them. Whether the
/// definition had the workspace server before.
pub(super) fn settle_workspace(
    definition: &mut AgentDefinition,
    caveats: &mut Vec<String>,
) -> bool {
    let workspace = BuiltinServer::Workspace.name();
    let had_workspace = definition
        .mcp_servers
        .get(workspace)
        .is_some_and(|c| c.builtin().is_some());
    if had_workspace && definition.workspace_tools().is_empty() {
        definition.mcp_servers.remove(workspace);
    }
    let tools = definition.workspace_tools();
    if !tools.contains(&"read") && tools.iter().any(|t| matches!(*t, "edit" | "write")) {
        caveats.push(
            "can change files but not read them: a file is changed only after this run has \
             read it, so without the read tool the agent can only create new files"
                .to_owned(),
        );
    }
    had_workspace
}

/// When an allow list leaves the agent no tool at all although every list names something
/// (an empty list is [`unknown_tools_note`]'s): the entries, each with the name it is a slip
/// of, and what the agent could have instead. Child servers' tools are known only once they
/// start, so an entry that could name one of them counts as a tool.
pub(super) fn no_tools_note(
    definition: &AgentDefinition,
    had_workspace: bool,
    tools: Tools,
) -> Option<String> {
    let filter = &definition.tools;
    let lists: Vec<&Vec<ToolPattern>> = filter.allow.iter().chain(&filter.also_allow).collect();
    if lists.is_empty() || lists.iter().any(|list| list.is_empty()) {
        return None;
    }
    let children = || {
        definition
            .mcp_servers
            .iter()
            .filter(|(_, config)| config.builtin().is_none())
            .map(|(name, _)| name.as_str())
    };
    if !definition.workspace_tools().is_empty()
        || children().any(|server| filter.may_allow_server(server))
    {
        return None;
    }
    let mut could: Vec<String> = Vec::new();
    // The format's own names for the workspace tools, which it gets by naming them; in the
    // qualified formats, only when the file has the workspace server.
    if matches!(tools, Tools::Client(_)) || had_workspace {
        could.extend(tools.workspace_spellings());
    }
    could.extend(children().map(|server| format!("{server}__*")));
    let patterns: Vec<&ToolPattern> = lists.iter().flat_map(|list| list.iter()).collect();
    let (entries, missing_servers) = slips_and_missing_servers(definition, &patterns, &could);
    let mut note = format!(
        "the tool allow list leaves this agent with no tools at all: {} name{} no tool it has",
        entries.join(", "),
        if entries.len() == 1 { "s" } else { "" }
    );
    let mut why: Vec<String> = Vec::new();
    if !missing_servers.is_empty() {
        let names: Vec<String> = missing_servers.iter().map(|s| format!("`{s}`")).collect();
        why.push(format!(
            "the file configures no child server named {} (the MCP servers of the client \
             that runs the file are not this agent's)",
            names.join(" or ")
        ));
    }
    if !could.is_empty() {
        let more = could.len().saturating_sub(TOOLS_SHOWN);
        could.truncate(TOOLS_SHOWN);
        let mut have = format!("it could have {}", could.join(", "));
        if more > 0 {
            have.push_str(&format!(" and {more} more"));
        }
        why.push(have);
    }
    if !why.is_empty() {
        note.push_str(&format!(": {}", why.join("; ")));
    }
    Some(note)
}

/// The allow-list entries, each once and with the name of `could` it is a slip of, and the
/// servers qualified entries name outright that the file does not configure.
fn slips_and_missing_servers<'a>(
    definition: &AgentDefinition,
    patterns: &[&'a ToolPattern],
    could: &[String],
) -> (Vec<String>, Vec<&'a str>) {
    let mut entries: Vec<String> = Vec::new();
    let mut missing_servers: Vec<&str> = Vec::new();
    for pattern in patterns {
        let glob = pattern.glob();
        let entry = match closest(glob, could.iter().map(String::as_str)) {
            Some(meant) => format!("`{glob}` (did you mean `{meant}`?)"),
            None => format!("`{glob}`"),
        };
        if !entries.contains(&entry) {
            entries.push(entry);
        }
        let server = match pattern.naming() {
            ToolNaming::Qualified => glob.split_once("__").map(|(server, _)| server),
            ToolNaming::OpenCode => None,
        };
        if let Some(server) = server.filter(|s| !s.is_empty() && !s.contains('*'))
            && !definition.mcp_servers.contains_key(server)
            && server != BuiltinServer::Workspace.name()
            && !missing_servers.contains(&server)
        {
            missing_servers.push(server);
        }
    }
    (entries, missing_servers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::Format;
    use crate::discovery::file_spec;

    fn tools_of(format: Format) -> Tools {
        file_spec(format).unwrap().0.tools
    }

    #[test]
    fn each_client_format_names_the_tools_that_exist_here() {
        let note = |format| match tools_of(format) {
            Tools::Client(vocabulary) => runs_without("X", vocabulary),
            Tools::Qualified => panic!("{format}"),
        };
        let tail = "exist here, as the built-in workspace server's";
        let own = "; MCP tools exist only for the servers this file defines";
        for (format, expected) in [
            (
                Format::Claude,
                format!(
                    "of Claude Code's tools only Read, Grep, Glob, LS, Edit, MultiEdit and \
                     Write {tail})"
                ),
            ),
            (
                Format::OpenCode,
                format!("of OpenCode's tools only read, grep, glob, list, edit and write {tail})"),
            ),
            (
                Format::Copilot,
                format!(
                    "of Copilot's tools only read, search and edit {tail} read, list, glob, \
                     grep, edit and write{own})"
                ),
            ),
            (
                Format::Cursor,
                format!(
                    "of the Claude Code tool names a Cursor file can list only Read, Grep, \
                     Glob, LS, Edit, MultiEdit and Write {tail})"
                ),
            ),
            (
                Format::Gemini,
                format!(
                    "of Gemini CLI's tools only read_file, read_many_files, list_directory, \
                     glob, grep_search, replace and write_file {tail}{own})"
                ),
            ),
        ] {
            assert_eq!(
                note(format),
                format!("runs without X: this runtime has no such tools ({expected}"),
                "{format}"
            );
        }
    }

    #[test]
    fn each_format_suggests_its_names_of_the_workspace_tools() {
        for (format, expected) in [
            (
                Format::Claude,
                &["Read", "LS", "Glob", "Grep", "Edit", "Write"][..],
            ),
            (
                Format::Cursor,
                &["Read", "LS", "Glob", "Grep", "Edit", "Write"],
            ),
            (
                Format::OpenCode,
                &["read", "list", "glob", "grep", "edit", "write"],
            ),
            (Format::Copilot, &["read", "search", "edit"]),
            (
                Format::Gemini,
                &[
                    "read_file",
                    "read_many_files",
                    "list_directory",
                    "glob",
                    "grep_search",
                    "replace",
                    "write_file",
                ],
            ),
            (
                Format::Codex,
                &[
                    "workspace__read",
                    "workspace__list",
                    "workspace__glob",
                    "workspace__grep",
                    "workspace__edit",
                    "workspace__write",
                ],
            ),
        ] {
            assert_eq!(tools_of(format).workspace_spellings(), expected, "{format}");
        }
    }

    #[test]
    fn lists_are_joined_with_and() {
        assert_eq!(and_list(&[]), "");
        assert_eq!(and_list(&["read"]), "read");
        assert_eq!(
            and_list(&["read", "search", "edit"]),
            "read, search and edit"
        );
    }
}
