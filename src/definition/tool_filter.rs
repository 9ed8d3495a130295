//! Which child tools an agent may be offered (SPEC §8.5): allow and deny lists of patterns
//! over child tool names. Deny always wins.
//!
//! The formats name child tools differently, so each pattern remembers how its text joins
//! the server and tool names: canonical and Claude patterns read `server__tool` (Claude's
//! `mcp__server__tool` loses its prefix when parsed), OpenCode patterns read `server_tool`.
//! `*` matches any run of characters; everything else matches itself.

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

    pub fn matches(&self, server: &str, tool: &str) -> bool {
        let sep = match self.naming {
            ToolNaming::Qualified => "__",
            ToolNaming::OpenCode => "_",
        };
        glob_matches(&self.glob, &format!("{server}{sep}{tool}"))
    }
}

/// An agent-wide allow list (absent: everything) and deny list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    pub allow: Option<Vec<ToolPattern>>,
    pub deny: Vec<ToolPattern>,
}

impl ToolFilter {
    /// Whether the lists let `server`'s `tool` through (read-only mode is checked elsewhere).
    pub fn permits(&self, server: &str, tool: &str) -> bool {
        let denied = self.deny.iter().any(|p| p.matches(server, tool));
        let allowed = self
            .allow
            .as_ref()
            .is_none_or(|allow| allow.iter().any(|p| p.matches(server, tool)));
        allowed && !denied
    }

    /// Adds a pattern to the allow list, creating the list if there was none.
    pub fn allow(&mut self, pattern: ToolPattern) {
        self.allow.get_or_insert_with(Vec::new).push(pattern);
    }
}

/// Matches `text` against `glob`, where `*` is any run of characters. Linear in practice:
/// the classic single-backtrack algorithm.
pub fn glob_matches(glob: &str, text: &str) -> bool {
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
            deny: vec![],
        };
        assert!(
            !empty_allow.permits("docs", "read"),
            "an empty allow list offers nothing"
        );
    }
}
