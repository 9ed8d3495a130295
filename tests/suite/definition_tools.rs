//! Tool allow and deny lists from every format (SPEC §8.5, FORMATS.md): which child tools
//! each agent would be offered. Deny always wins; read-only needs the read-only hint.

use crate::support;

use mcp_agents::definition::ToolHints;

const WRITE: ToolHints = ToolHints {
    read_only: None,
    destructive: None,
};
const READ: ToolHints = ToolHints {
    read_only: Some(true),
    destructive: None,
};

/// `(server, tool)` pairs a definition offers out of a fixed menu.
fn offered(name: &str, hints: ToolHints) -> Vec<String> {
    let catalog = support::load_fixture("tools");
    let d = catalog
        .get(name)
        .unwrap_or_else(|| panic!("{name} not loaded"));
    let menu = [
        ("docs", "search"),
        ("docs", "read"),
        ("docs", "write"),
        ("docs", "delete"),
        ("tracker", "search"),
        ("tracker", "close"),
        ("tracker", "delete_issue"),
        ("other", "search"),
    ];
    menu.iter()
        .filter(|(s, t)| d.offers_tool(s, t, hints))
        .map(|(s, t)| format!("{s}__{t}"))
        .collect()
}

#[test]
fn tool_fields_load_as_expected() {
    support::check_fixture("tools");
}

#[test]
fn canonical_patterns_allow_and_deny() {
    assert_eq!(
        offered("canonical-tools", WRITE),
        [
            "docs__search",
            "docs__read",
            "docs__write",
            "docs__delete",
            "tracker__search"
        ]
    );
}

#[test]
fn claude_selectors_pick_child_tools_and_ignore_built_ins() {
    assert_eq!(
        offered("claude-tools", WRITE),
        [
            "docs__search",
            "docs__read",
            "docs__delete",
            "tracker__search"
        ]
    );
    assert!(offered("claude-builtins-only", WRITE).is_empty());
    assert!(offered("claude-deny-all-mcp", WRITE).is_empty());
}

#[test]
fn claude_deny_maps_deny_their_true_entries() {
    assert_eq!(
        offered("claude-deny-map", WRITE),
        ["docs__search", "docs__read", "docs__write"]
    );
}

#[test]
fn codex_lists_apply_per_server_and_read_only_needs_the_hint() {
    assert!(offered("codex-tools", WRITE).is_empty(), "read-only mode");
    assert_eq!(
        offered("codex-tools", READ),
        [
            "docs__search",
            "tracker__search",
            "tracker__close",
            "tracker__delete_issue"
        ]
    );
}

#[test]
fn opencode_rules_keep_their_order_and_ask_denies() {
    assert_eq!(
        offered("opencode", WRITE),
        [
            "docs__search",
            "docs__read",
            "docs__write",
            "tracker__search"
        ]
    );
    assert!(offered("deny-all", WRITE).is_empty());
    assert_eq!(
        offered("canonical-lists", WRITE),
        [
            "docs__search",
            "docs__read",
            "docs__write",
            "tracker__search"
        ]
    );
}

#[test]
fn codex_deny_list_holds_next_to_a_tools_table() {
    assert_eq!(
        offered("codex-table-deny", WRITE),
        [
            "docs__search",
            "docs__read",
            "docs__write",
            "tracker__search",
            "tracker__close",
        ]
    );
}

#[test]
fn opencode_allow_all_never_removes_a_deny() {
    assert_eq!(
        offered("allow-all-keeps-denies", WRITE),
        [
            "docs__search",
            "docs__read",
            "docs__write",
            "tracker__search",
            "tracker__close"
        ]
    );
    assert_eq!(
        offered("bare-allow-keeps-denies", WRITE),
        ["docs__search", "docs__read", "docs__delete"]
    );
}

#[test]
fn opencode_allow_lists_combine_as_an_intersection() {
    assert_eq!(
        offered("two-allow-lists", WRITE),
        ["docs__read", "docs__write"]
    );
    assert!(offered("deny-all-with-list", WRITE).is_empty());
    assert_eq!(
        offered("three-allow-lists", WRITE),
        ["docs__search", "docs__read", "tracker__close"]
    );
}
