//! Real definition files people publish (tests/fixtures/corpus, unedited; MANIFEST.md lists
//! sources and licenses): every file loads, is skipped, or is rejected for the reason
//! FORMATS.md gives, and nothing crashes.

use crate::support;

use std::collections::BTreeSet;

use mcp_agents::definition::Effect;
use mcp_agents::definition::{ChildTransport, ModelOrigin};
use mcp_agents::discovery::LoadOptions;

#[test]
fn the_corpus_loads_as_a_careful_user_would_expect() {
    let catalog = support::check_fixture("corpus");
    assert_eq!(catalog.agents().len(), 33);
    assert_eq!(catalog.skills().len(), 5);

    // Published agents expect to read the code (SPEC §8.6): every one but the agent whose
    // `tools` lists only Linear's MCP tools gets workspace tools, as expect.toml spells out
    // file by file.
    let without: Vec<&str> = catalog
        .agents()
        .iter()
        .filter(|a| a.workspace_tools().is_empty())
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(without, ["linear-ticket-reader"]);

    // A Codex role file without a name takes it, and its description, from the
    // `[agents.NAME] config_file = …` declaration in .codex/config.toml.
    let docs = catalog.get("docs_researcher").unwrap();
    assert_eq!(
        docs.description,
        "Documentation specialist that verifies APIs, framework behavior, and release notes."
    );
    assert_eq!(docs.sandbox, mcp_agents::definition::Sandbox::ReadOnly);

    // A Claude `mcpServers` name resolves through the workspace's .mcp.json.
    let triage = catalog.get("triage-investigator").unwrap();
    match &triage.mcp_servers["ariadne"].transport {
        ChildTransport::Stdio { command, args, .. } => {
            assert_eq!(command, "node");
            assert_eq!(args, &["./packages/mcp/dist/server.js"]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(triage.max_turns, 15);
    assert_eq!(
        triage.model.origin,
        ModelOrigin::ClaudeAlias {
            alias: "sonnet".into(),
            env: None
        }
    );
}

#[test]
fn without_a_default_model_exactly_the_parent_model_files_are_refused() {
    let with_default = support::load_fixture("corpus");
    let root = support::fixture_path("corpus");
    let without = support::load_at(&root, &LoadOptions::default());

    let loaded = |c: &mcp_agents::definition::Catalog| -> BTreeSet<String> {
        c.agents().iter().map(|a| a.name.clone()).collect()
    };
    let deferred: BTreeSet<String> = with_default
        .agents()
        .iter()
        .filter(|a| a.model.origin == ModelOrigin::ServerDefault)
        .map(|a| a.name.clone())
        .collect();
    assert_eq!(deferred.len(), 16, "{deferred:?}");
    let expected: BTreeSet<String> = loaded(&with_default)
        .difference(&deferred)
        .cloned()
        .collect();
    assert_eq!(loaded(&without), expected);
    // The shadowed Codex `planner` and `reviewer` also defer to the parent, so they are now
    // rejected for that reason instead of being shadowed.
    let parent_rejections = without
        .warnings()
        .iter()
        .filter(|w| w.effect == Effect::Rejected && w.reason.contains("--default-model"))
        .count();
    assert_eq!(
        parent_rejections,
        16 + 2,
        "the 16, plus the two shadowed namesakes"
    );
}

#[test]
fn every_published_mcp_json_parses() {
    for (file, servers) in [
        ("CRJFisher__ariadne.mcp.json", vec!["ariadne"]),
        (
            "affaan-m__everything-claude-code.mcp.json",
            vec!["context7", "github", "playwright", "sequential-thinking"],
        ),
        ("hyperdxio__hyperdx.mcp.json", vec!["playwright-test"]),
    ] {
        let ws = support::TempWorkspace::new();
        ws.write(
            ".mcp.json",
            std::fs::read(support::fixture_path("mcp-json").join(file)).unwrap(),
        );
        ws.write(
            ".claude/agents/all.md",
            format!(
                "---\nname: all\ndescription: d\nmodel: sonnet\nmcpServers: [{}]\n---\nBody.\n",
                servers.join(", ")
            ),
        );
        let catalog = ws.load(&LoadOptions::default());
        let agent = catalog
            .get("all")
            .unwrap_or_else(|| panic!("{file}: {:?}", catalog.warnings()));
        assert_eq!(
            agent.own_servers().collect::<Vec<_>>(),
            servers.iter().collect::<Vec<_>>(),
            "{file}"
        );
    }
}
