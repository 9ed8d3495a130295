//! Which child tools an agent may be offered (SPEC §8.5): allow and deny lists of patterns
//! over child tool names. Deny always wins.
//!
//! The formats name child tools differently, so each pattern remembers how its text joins
//! the server and tool names: canonical and Claude patterns read `server__tool` (Claude's
//! `mcp__server__tool` loses its prefix when parsed), OpenCode patterns read `server_tool`.
//! `*` matches any run of characters; everything else matches itself.
//!
//! A child's tool name is not always the name the model is offered: characters outside
//! `[A-Za-z0-9_-]` become `_`, and a long or colliding name gets a hash or a suffix (SPEC
//! §8.4). A pattern written against either name must work, or a deny list would miss the
//! tool it names, so every pattern is matched against all the names a tool goes by
//! ([`ToolNames`]): the joined name as the child wrote it, the same with the provider
//! character rule applied, and the exact name offered to the model. Any match counts, for
//! deny (any match denies) as for allow (any match allows).

/// The annotations of a child tool that filtering reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolHints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
}

/// How a pattern's text joins the server and the tool name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolNaming {
    /// `server__tool`: the canonical, Claude and Codex form.
    Qualified,
    /// `server_tool`: how OpenCode names MCP tools.
    OpenCode,
}

/// One allow or deny entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPattern {
    glob: String,
    naming: ToolNaming,
}

impl ToolPattern {
    pub fn new(glob: impl Into<String>, naming: ToolNaming) -> Self {
        ToolPattern {
            glob: glob.into(),
            naming,
        }
    }

    /// The pattern as written (after any format prefix was removed).
    pub fn glob(&self) -> &str {
        &self.glob
    }

    pub fn naming(&self) -> ToolNaming {
        self.naming
    }

    /// Whether the pattern could match some tool of `server`, whose tools are not known
    /// before it starts: false only when the pattern's text up to its first `*` cannot begin
    /// any name of that server's tools (`workspace__*` cannot match `github`'s).
    pub fn may_match_server(&self, server: &str) -> bool {
        let sep = match self.naming {
            ToolNaming::Qualified => "__",
            ToolNaming::OpenCode => "_",
        };
        let fixed = self.glob.split('*').next().unwrap_or_default();
        let safe = provider_safe(server);
        // The raw name, the same with the character rule, and the offered name's start.
        [
            format!("{server}{sep}"),
            format!("{safe}{sep}"),
            format!("{safe}__"),
        ]
        .iter()
        .any(|start| fixed.starts_with(start.as_str()) || start.starts_with(fixed))
    }

    /// Whether the pattern matches `server`'s `tool` under any name it goes by, not knowing
    /// the exact name offered to the model.
    pub fn matches(&self, server: &str, tool: &str) -> bool {
        self.matches_names(&ToolNames::new(server, tool))
    }

    /// Whether the pattern matches any of the names in `names`.
    pub fn matches_names(&self, names: &ToolNames<'_>) -> bool {
        let sep = match self.naming {
            ToolNaming::Qualified => "__",
            ToolNaming::OpenCode => "_",
        };
        let raw = format!("{}{sep}{}", names.server, names.tool);
        let normalized = provider_safe(&raw);
        glob_matches(&self.glob, &raw)
            || (normalized != raw && glob_matches(&self.glob, &normalized))
            || names
                .offered
                .is_some_and(|offered| glob_matches(&self.glob, offered))
    }
}

/// The names one child tool goes by, for matching patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolNames<'a> {
    /// The child server's name in the definition.
    pub server: &'a str,
    /// The tool's name as the child lists it.
    pub tool: &'a str,
    /// The exact name the model is offered (`server__tool` reduced to the provider rules,
    /// possibly cut and hashed, possibly with a collision suffix), when it is known.
    pub offered: Option<&'a str>,
}

impl<'a> ToolNames<'a> {
    pub fn new(server: &'a str, tool: &'a str) -> Self {
        ToolNames {
            server,
            tool,
            offered: None,
        }
    }

    pub fn offered_as(self, offered: &'a str) -> Self {
        ToolNames {
            offered: Some(offered),
            ..self
        }
    }

    /// The tool's part of the names, for a server's own lists (which name bare tools):
    /// as listed, with the provider character rule applied, and what follows the server's
    /// part of the offered name.
    pub fn tool_candidates(&self) -> Vec<String> {
        let mut out = vec![self.tool.to_owned()];
        let normalized = provider_safe(self.tool);
        if normalized != self.tool {
            out.push(normalized);
        }
        let prefix = format!("{}__", provider_safe(self.server));
        if let Some(rest) = self.offered.and_then(|o| o.strip_prefix(&prefix))
            && !out.iter().any(|c| c == rest)
        {
            out.push(rest.to_owned());
        }
        out
    }
}

/// `text` with every character outside `[A-Za-z0-9_-]` replaced by `_`: the character rule
/// of the tool names the providers accept (SPEC §8.4), before any length cut.
pub fn provider_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// An agent-wide allow list (absent: everything) and deny list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    pub allow: Option<Vec<ToolPattern>>,
    /// Further allow lists a tool must also pass, from files that write more than one (an
    /// OpenCode `tools` list next to `permission` rules): each one narrows, never widens.
    pub also_allow: Vec<Vec<ToolPattern>>,
    pub deny: Vec<ToolPattern>,
}

impl ToolFilter {
    /// Whether the lists let `server`'s `tool` through (read-only mode is checked elsewhere),
    /// not knowing the exact name offered to the model.
    pub fn permits(&self, server: &str, tool: &str) -> bool {
        self.permits_names(&ToolNames::new(server, tool))
    }

    /// Whether the lists let the tool through: denied when any deny pattern matches any of
    /// its names, allowed (without an allow list, or) when a pattern of every allow list
    /// matches one of them.
    pub fn permits_names(&self, names: &ToolNames<'_>) -> bool {
        let denied = self.deny.iter().any(|p| p.matches_names(names));
        let passes = |list: &Vec<ToolPattern>| list.iter().any(|p| p.matches_names(names));
        let allowed = self.allow.as_ref().is_none_or(passes) && self.also_allow.iter().all(passes);
        allowed && !denied
    }

    /// Whether the allow lists could let through some tool of `server`, whose tools are not
    /// known before it starts (see [`ToolPattern::may_match_server`]).
    pub fn may_allow_server(&self, server: &str) -> bool {
        let passes = |list: &Vec<ToolPattern>| list.iter().any(|p| p.may_match_server(server));
        self.allow.as_ref().is_none_or(passes) && self.also_allow.iter().all(passes)
    }

    /// Adds a pattern to the allow list, creating the list if there was none.
    pub fn allow(&mut self, pattern: ToolPattern) {
        self.allow.get_or_insert_with(Vec::new).push(pattern);
    }
}

/// Matches `text` against `glob`, where `*` is any run of characters. Linear in practice:
/// the classic single-backtrack algorithm.
pub(super) fn glob_matches(glob: &str, text: &str) -> bool {
    let (g, t): (Vec<char>, Vec<char>) = (glob.chars().collect(), text.chars().collect());
    let (mut gi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if gi < g.len() && g[gi] == '*' {
            star = Some((gi, ti));
            gi += 1;
        } else if gi < g.len() && g[gi] == t[ti] {
            gi += 1;
            ti += 1;
        } else if let Some((sg, st)) = star {
            gi = sg + 1;
            ti = st + 1;
            star = Some((sg, st + 1));
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_matches("*", ""));
        assert!(glob_matches("docs__*", "docs__search"));
        assert!(!glob_matches("docs__*", "doc__search"));
        assert!(glob_matches("*__delete_*", "tracker__delete_issue"));
        assert!(glob_matches("a*b*c", "aXXbYYc"));
        assert!(!glob_matches("a*b*c", "aXXbYY"));
        assert!(glob_matches("exact", "exact"));
        assert!(!glob_matches("exact", "exactly"));
    }

    #[test]
    fn naming_styles_join_differently() {
        let q = ToolPattern::new("github__search", ToolNaming::Qualified);
        let o = ToolPattern::new("github_search", ToolNaming::OpenCode);
        assert!(q.matches("github", "search") && o.matches("github", "search"));
        assert!(!q.matches("github", "other"));
        // OpenCode's single `_` cannot tell `gh_x`+`search` from `gh`+`x_search`; the
        // qualified form can.
        let o = ToolPattern::new("gh_x_search", ToolNaming::OpenCode);
        assert!(o.matches("gh_x", "search") && o.matches("gh", "x_search"));
        let q = ToolPattern::new("gh_x__search", ToolNaming::Qualified);
        assert!(q.matches("gh_x", "search") && !q.matches("gh", "x_search"));
    }

    #[test]
    fn patterns_match_the_offered_name_as_well_as_the_raw_one() {
        // `delete.issue` is offered as `tracker__delete_issue`.
        let names = ToolNames::new("tracker", "delete.issue").offered_as("tracker__delete_issue");
        let deny = ToolFilter {
            allow: None,
            also_allow: vec![],
            deny: vec![ToolPattern::new(
                "tracker__delete_issue",
                ToolNaming::Qualified,
            )],
        };
        assert!(!deny.permits_names(&names), "the offered name denies");
        assert!(
            !deny.permits("tracker", "delete.issue"),
            "the character rule is known without the offered name"
        );
        let raw_deny = ToolFilter {
            allow: None,
            also_allow: vec![],
            deny: vec![ToolPattern::new(
                "tracker__delete.issue",
                ToolNaming::Qualified,
            )],
        };
        assert!(!raw_deny.permits_names(&names), "the raw name still denies");
        let mut allow = ToolFilter::default();
        allow.allow(ToolPattern::new(
            "tracker__delete_issue",
            ToolNaming::Qualified,
        ));
        assert!(allow.permits_names(&names), "the offered name allows");
        let mut raw_allow = ToolFilter::default();
        raw_allow.allow(ToolPattern::new(
            "tracker__delete.issue",
            ToolNaming::Qualified,
        ));
        assert!(raw_allow.permits_names(&names), "the raw name allows");
        assert!(!raw_allow.permits("tracker", "close"));

        // A name that was cut and hashed, or given a collision suffix, is matched as offered.
        let long = "x".repeat(100);
        let hashed = ToolNames::new("srv", &long).offered_as("srv__xxxx_0badf00d");
        let deny_hashed = ToolFilter {
            allow: None,
            also_allow: vec![],
            deny: vec![ToolPattern::new(
                "srv__xxxx_0badf00d",
                ToolNaming::Qualified,
            )],
        };
        assert!(!deny_hashed.permits_names(&hashed));
        assert!(deny_hashed.permits("srv", &long));
        let second =
            ToolNames::new("tracker", "delete/issue").offered_as("tracker__delete_issue_2");
        let deny_second = ToolFilter {
            allow: None,
            also_allow: vec![],
            deny: vec![ToolPattern::new(
                "tracker__delete_issue_2",
                ToolNaming::Qualified,
            )],
        };
        assert!(!deny_second.permits_names(&second));

        // OpenCode patterns: `server_tool` with the character rule, and the offered name.
        let open = ToolFilter {
            allow: None,
            also_allow: vec![],
            deny: vec![ToolPattern::new(
                "tracker_delete_issue",
                ToolNaming::OpenCode,
            )],
        };
        assert!(!open.permits_names(&names));
        assert!(!open.permits("tracker", "delete.issue"));
        assert!(
            open.permits("tracker", "delete"),
            "`delete` is not `delete_issue`"
        );
    }

    #[test]
    fn tool_candidates_for_server_lists() {
        let names = ToolNames::new("my.srv", "delete.issue").offered_as("my_srv__delete_issue_2");
        assert_eq!(
            names.tool_candidates(),
            ["delete.issue", "delete_issue", "delete_issue_2"]
        );
        assert_eq!(ToolNames::new("s", "read").tool_candidates(), ["read"]);
    }

    #[test]
    fn a_pattern_may_match_a_server_only_when_its_fixed_start_allows() {
        let q = |glob: &str| ToolPattern::new(glob, ToolNaming::Qualified);
        assert!(q("github__search").may_match_server("github"));
        assert!(q("github__*").may_match_server("github"));
        assert!(q("*").may_match_server("github"));
        assert!(q("git*").may_match_server("github"));
        assert!(
            q("my_srv__read").may_match_server("my.srv"),
            "the character rule"
        );
        assert!(!q("workspace__serach").may_match_server("github"));
        assert!(!q("githu__search").may_match_server("github"));
        let o = ToolPattern::new("github_search", ToolNaming::OpenCode);
        assert!(o.may_match_server("github") && !o.may_match_server("docs"));
        let mut filter = ToolFilter::default();
        assert!(filter.may_allow_server("github"), "no allow list");
        filter.allow(q("workspace__serach"));
        assert!(!filter.may_allow_server("github"));
        filter.allow(q("github__*"));
        assert!(filter.may_allow_server("github"));
        filter.also_allow.push(vec![q("docs__*")]);
        assert!(!filter.may_allow_server("github"), "every list must pass");
    }

    #[test]
    fn deny_wins_over_allow() {
        let mut f = ToolFilter::default();
        assert!(f.permits("a", "b"), "no lists: everything");
        f.allow(ToolPattern::new("docs__*", ToolNaming::Qualified));
        assert!(f.permits("docs", "read"));
        assert!(
            !f.permits("tracker", "read"),
            "allow list excludes the rest"
        );
        f.deny
            .push(ToolPattern::new("docs__read", ToolNaming::Qualified));
        assert!(!f.permits("docs", "read"), "deny wins");
        let empty_allow = ToolFilter {
            allow: Some(vec![]),
            also_allow: vec![],
            deny: vec![],
        };
        assert!(
            !empty_allow.permits("docs", "read"),
            "an empty allow list offers nothing"
        );
    }
}
