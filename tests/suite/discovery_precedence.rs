//! Root precedence, lexical order inside a root, first name wins (SPEC §3).

use crate::support;

#[test]
fn roots_and_lexical_order_decide_which_definition_wins() {
    let catalog = support::check_fixture("precedence");
    let shared = catalog.get("shared").unwrap();
    assert_eq!(shared.instructions, "Canonical.");
    assert_eq!(catalog.get("dup").unwrap().instructions, "a.");
    assert_eq!(catalog.get("order").unwrap().instructions, "Upper.");
}

#[test]
fn agents_are_listed_in_discovery_order() {
    let catalog = support::load_fixture("precedence");
    let names: Vec<&str> = catalog.agents().iter().map(|a| a.name.as_str()).collect();
    // The Copilot, Cursor and Gemini folders come after the first four, in that order.
    assert_eq!(
        names,
        [
            "order",
            "dup",
            "shared",
            "toml-agent",
            "second",
            "singular",
            "copilot-first",
            "gemini-last"
        ]
    );
}

#[test]
fn order_holds_across_many_files() {
    // Enough files that loading parses them on several threads; the outcome must be the
    // same as reading them one by one in order.
    let ws = support::TempWorkspace::new();
    for i in 0..300 {
        ws.write(
            &format!(".agents/agents/f{i:03}.md"),
            format!(
                "---\nname: pair-{}\ndescription: d\nmodel: m\nmodel_provider: openai\n---\nfile {i}\n",
                i / 2
            ),
        );
    }
    let catalog = ws.load(&mcp_agents::discovery::LoadOptions::default());
    assert_eq!(catalog.agents().len(), 150);
    for (n, agent) in catalog.agents().iter().enumerate() {
        assert_eq!(agent.name, format!("pair-{n}"));
        assert_eq!(
            agent.instructions,
            format!("file {}", n * 2),
            "the first of each pair wins"
        );
    }
    assert_eq!(catalog.warnings().len(), 150);
    for (n, warning) in catalog.warnings().iter().enumerate() {
        assert_eq!(
            warning.file.to_str().unwrap(),
            format!(".agents/agents/f{:03}.md", n * 2 + 1)
        );
        assert!(
            warning
                .reason
                .contains(&format!(".agents/agents/f{:03}.md", n * 2))
        );
    }
}
