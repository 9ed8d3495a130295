//! Which agents may ask their parent (SPEC §4.5, FORMATS.md "Added in turn 4"): canonical
//! `ask_parent` with `ask_timeout_s` (and their camelCase spellings) in every format, and in
//! each format the tool names that mean "ask the user" (`tests/fixtures/ask-parent`, whose
//! files state what each grants); `check` says which agents may ask.

use crate::support;
use crate::support::cli::{mcp_agents, text};

#[test]
fn each_format_grants_the_question_by_its_own_tool_name_or_by_ask_parent() {
    let catalog = support::check_fixture("ask-parent");
    // Every format's file is in the fixture, and at least one of each grants it.
    let granted: std::collections::HashSet<_> = catalog
        .agents()
        .iter()
        .filter(|agent| agent.ask_parent.is_some())
        .map(|agent| agent.source.format)
        .collect();
    assert_eq!(granted.len(), 8, "{granted:?}");
}

#[test]
fn check_shows_which_agents_may_ask_and_how_long_a_question_waits() {
    let dir = support::fixture_path("ask-parent").display().to_string();
    let model = ["--default-model", "anthropic/claude-sonnet-5-5"];
    let out = mcp_agents(&[&["check", &dir, "--json"][..], &model].concat());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let asks = support::agent_named(&report, "asks-briefly");
    assert_eq!(asks["ask_parent"], true);
    assert_eq!(asks["ask_timeout_s"], 30);
    let alone = support::agent_named(&report, "never-asks");
    assert_eq!(alone["ask_parent"], false);
    assert!(alone["ask_timeout_s"].is_null());

    let out = mcp_agents(&[&["check", &dir, "--wide"][..], &model].concat());
    let table = text(&out.stdout);
    let header = table.lines().next().unwrap();
    assert!(header.contains("  ASKS  "), "{header}");
    let row = |name: &str| {
        table
            .lines()
            .find(|line| line.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row for {name}: {table}"))
            .to_owned()
    };
    assert!(row("codex-asks").contains("parent, 45 s"), "{table}");
    assert!(!row("never-asks").contains("parent,"), "{table}");
}
