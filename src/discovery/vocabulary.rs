//! How a format's tool lists name tools ([`Tools`]): by their qualified names here, or by the
//! names of the format's own client, each of which means something here ([`ToolMeaning`]).
//! The format module writes its names once, in its spec; its parser reads them through
//! [`Vocabulary::meaning`], and the notes about a file's tool lists ("runs without …", "did
//! you mean `Read`?", "it could have …") are made from the same table.

use crate::definition::BuiltinServer;

/// How a format's `tools` and `disallowed_tools` entries name tools.
#[derive(Debug, Clone, Copy)]
pub(super) enum Tools {
    /// Child tools by their qualified names only (`server__tool`, `workspace__read`): an
    /// entry that names no tool here is a mistake, and the workspace server comes only with
    /// naming it (the canonical and Codex formats).
    Qualified,
    /// The names of the format's own client (`Read`, `read_file`): an entry that names no
    /// tool here is one of the client's own tools, which the agent runs without.
    Client(&'static Vocabulary),
}

/// The tool names of a format's client and what each means here.
#[derive(Debug, Clone, Copy)]
pub(super) struct Vocabulary {
    /// Whose names they are, as the note about missing tools says it ("Claude Code's tools").
    pub client: &'static str,
    /// Every name, in the order the notes list them.
    pub names: &'static [ToolName],
    /// Whether names are compared without case (Copilot's aliases, VS Code's tool names).
    pub any_case: bool,
    /// Whether its names stand for several workspace tools each (Copilot's `search` is
    /// `grep`, `glob` and `list`), so that the note names the workspace tools too.
    pub groups: bool,
    /// Whether its MCP tool names reach only the servers the file defines (`server/tool`,
    /// `mcp_server_tool`), so that one naming another server is a missing tool.
    pub own_servers_only: bool,
}

/// One tool name of a format's client.
#[derive(Debug, Clone, Copy)]
pub(super) struct ToolName {
    pub name: &'static str,
    pub means: ToolMeaning,
    pub shown: Shown,
}

/// What a tool name of a format's client gives an agent here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ToolMeaning {
    /// These tools of the built-in workspace server, by their names there (one, or several
    /// for a name that stands for them all: Copilot's `edit` is `edit` and `write`).
    Workspace(&'static [&'static str]),
    /// The client's tool that asks the user a question (Claude Code's `AskUserQuestion`):
    /// listed, it lets the agent ask its parent here (SPEC §4.5, the `ask_parent` tool);
    /// denied, it does not.
    AskParent,
    /// A tool of the client that does not exist here: the agent runs without it.
    RunsWithout,
}

/// Where the notes about a file's tool lists show a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shown {
    /// Among the names that exist here, and suggested ("did you mean `Read`?") as the one
    /// name of the workspace tools it gives.
    Suggested,
    /// Among the names that exist here, not suggested (`MultiEdit`, since `Edit` is).
    Listed,
    /// Never: another spelling (`search_file_content`), or a tool that does not exist here.
    Hidden,
}

impl ToolName {
    /// A name the format's own client uses for workspace `tools`, shown and suggested.
    pub(super) const fn own(name: &'static str, tools: &'static [&'static str]) -> Self {
        Self::new(name, ToolMeaning::Workspace(tools), Shown::Suggested)
    }

    /// A name shown among those that exist here, never suggested.
    pub(super) const fn variant(name: &'static str, tools: &'static [&'static str]) -> Self {
        Self::new(name, ToolMeaning::Workspace(tools), Shown::Listed)
    }

    /// Another spelling for workspace `tools`, read but never shown.
    pub(super) const fn alias(name: &'static str, tools: &'static [&'static str]) -> Self {
        Self::new(name, ToolMeaning::Workspace(tools), Shown::Hidden)
    }

    /// A tool of the client that does not exist here.
    pub(super) const fn missing(name: &'static str) -> Self {
        Self::new(name, ToolMeaning::RunsWithout, Shown::Hidden)
    }

    /// The client's tool that asks the user: here it is the question to the parent
    /// (`ask_parent`). Not among the workspace tools the notes name.
    pub(super) const fn asks(name: &'static str) -> Self {
        Self::new(name, ToolMeaning::AskParent, Shown::Hidden)
    }

    const fn new(name: &'static str, means: ToolMeaning, shown: Shown) -> Self {
        ToolName { name, means, shown }
    }
}

impl Vocabulary {
    /// What `text` means, if it is one of the names (compared without case where the
    /// client does so).
    pub(super) fn meaning(&self, text: &str) -> Option<ToolMeaning> {
        let lower;
        let text = if self.any_case {
            lower = text.to_lowercase();
            lower.as_str()
        } else {
            text
        };
        self.names.iter().find(|t| t.name == text).map(|t| t.means)
    }

    /// The names that exist here, in the order written: the note's list.
    pub(super) fn listed(&self) -> impl Iterator<Item = &'static str> {
        self.names
            .iter()
            .filter(|t| t.shown != Shown::Hidden)
            .map(|t| t.name)
    }

    /// The suggested names, in the workspace server's order of the tools they give (that of
    /// their first), so every format lists them alike.
    pub(super) fn suggested(&self) -> Vec<&'static str> {
        let order = |t: &ToolName| match t.means {
            ToolMeaning::Workspace(tools) => tools.first().and_then(|first| {
                BuiltinServer::Workspace
                    .tools()
                    .iter()
                    .position(|tool| tool == first)
            }),
            ToolMeaning::AskParent | ToolMeaning::RunsWithout => None,
        };
        let mut suggested: Vec<&ToolName> = self
            .names
            .iter()
            .filter(|t| t.shown == Shown::Suggested)
            .collect();
        suggested.sort_by_key(|t| order(t));
        suggested.into_iter().map(|t| t.name).collect()
    }
}

impl Tools {
    /// The names of the workspace tools as the format writes them in a tool list, for "did
    /// you mean" and "it could have".
    pub(super) fn workspace_spellings(self) -> Vec<String> {
        match self {
            Tools::Client(vocabulary) => vocabulary
                .suggested()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            Tools::Qualified => {
                let workspace = BuiltinServer::Workspace;
                workspace
                    .tools()
                    .iter()
                    .map(|tool| format!("{}__{tool}", workspace.name()))
                    .collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[ToolName] = &[
        ToolName::own("Grep", &["grep"]),
        ToolName::own("Read", &["read"]),
        ToolName::variant("MultiEdit", &["edit"]),
        ToolName::own("Edit", &["edit"]),
        ToolName::alias("cat", &["read"]),
        ToolName::missing("Bash"),
        ToolName::asks("AskUserQuestion"),
    ];

    const VOCABULARY: Vocabulary = Vocabulary {
        client: "a client's tools",
        names: NAMES,
        any_case: false,
        groups: false,
        own_servers_only: false,
    };

    #[test]
    fn a_name_means_what_its_row_says_and_case_counts_only_where_the_client_says() {
        assert_eq!(
            VOCABULARY.meaning("Read"),
            Some(ToolMeaning::Workspace(&["read"]))
        );
        assert_eq!(VOCABULARY.meaning("Bash"), Some(ToolMeaning::RunsWithout));
        assert_eq!(
            VOCABULARY.meaning("AskUserQuestion"),
            Some(ToolMeaning::AskParent)
        );
        assert_eq!(VOCABULARY.meaning("read"), None);
        const ANY_CASE: Vocabulary = Vocabulary {
            any_case: true,
            names: &[ToolName::own("read", &["read"])],
            ..VOCABULARY
        };
        let any_case = ANY_CASE;
        assert_eq!(
            any_case.meaning("READ"),
            Some(ToolMeaning::Workspace(&["read"]))
        );
    }

    #[test]
    fn notes_list_the_shown_names_and_suggest_in_the_workspace_servers_order() {
        assert_eq!(
            VOCABULARY.listed().collect::<Vec<_>>(),
            ["Grep", "Read", "MultiEdit", "Edit"]
        );
        assert_eq!(VOCABULARY.suggested(), ["Read", "Grep", "Edit"]);
        assert_eq!(
            Tools::Qualified.workspace_spellings()[..2],
            ["workspace__read", "workspace__list"]
        );
    }
}
