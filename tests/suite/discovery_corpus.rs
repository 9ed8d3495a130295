//! Real definition files people publish (tests/fixtures/corpus, unedited; MANIFEST.md lists
//! sources and licenses): every file loads, is skipped, or is rejected for the reason
//! FORMATS.md gives, and nothing crashes.

use crate::support;

use std::collections::BTreeSet;
use std::path::PathBuf;

use mcp_agents::definition::{ChildTransport, Effect, Format, ModelOrigin, ValueSource};
use mcp_agents::discovery::LoadOptions;

#[test]
fn the_corpus_loads_as_a_careful_user_would_expect() {
    let catalog = support::check_fixture("corpus");
    assert_eq!(catalog.agents().len(), 44);
    assert_eq!(catalog.skills().len(), 5);

    // Published agents expect to read the code (SPEC §8.6): every one but the agents whose
    // `tools` lists only MCP tools (Linear's; the Copilot cloud agent's `github` server) gets
    // workspace tools, as expect.toml spells out file by file.
    let without: Vec<&str> = catalog
        .agents()
        .iter()
        .filter(|a| a.workspace_tools().is_empty())
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(without, ["linear-ticket-reader", "triage"]);

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

    // Copilot's `mcp-servers`: `type: 'local'` is stdio, `${{ secrets.X }}` reads `${X}`
    // from the server's environment, and the server's `tools` is its allow list.
    let octopus = catalog.get("octopus-deploy-release-notes-mcp").unwrap();
    let server = &octopus.mcp_servers["octopus"];
    match &server.transport {
        ChildTransport::Stdio {
            command, args, env, ..
        } => {
            assert_eq!(command, "npx");
            assert_eq!(args, &["-y", "@octopusdeploy/mcp-server"]);
            let vars: Vec<(&str, Vec<&str>)> = env
                .iter()
                .map(|(k, v)| match v {
                    ValueSource::Template(t) => (k.as_str(), t.vars().collect()),
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(
                vars,
                [
                    ("OCTOPUS_API_KEY", vec!["OCTOPUS_API_KEY"]),
                    ("OCTOPUS_SERVER_URL", vec!["OCTOPUS_SERVER_URL"])
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    let enabled = server.enabled_tools.as_ref().unwrap();
    assert_eq!(enabled.len(), 25);
    assert_eq!(
        (enabled[0].as_str(), enabled[24].as_str()),
        ("get_account", "list_tenants")
    );

    // `triage` defines `mcp-datetime` (`tools: ["*"]`: every tool of it), but its own
    // `tools` list names only the `github` server's: it is offered nothing, as in Copilot.
    let triage = catalog.get("triage").unwrap();
    assert_eq!(triage.own_servers().collect::<Vec<_>>(), ["mcp-datetime"]);
    assert_eq!(triage.mcp_servers["mcp-datetime"].enabled_tools, None);
    assert!(!triage.offers_tool("mcp-datetime", "now", Default::default()));
    assert_eq!(
        catalog.get("architecture-visualizer").unwrap().max_turns,
        30
    );
    // A name an earlier root defines wins over the new roots' files.
    assert_eq!(
        catalog.get("reviewer").unwrap().source.format,
        Format::Codex
    );
    assert_eq!(
        catalog.get("code-reviewer").unwrap().source.format,
        Format::Claude
    );
}

#[test]
fn without_a_default_model_exactly_the_parent_model_files_are_refused() {
    let with_default = support::load_fixture("corpus");
    let root = support::fixture_path("corpus");
    let without = support::load_at(&root, &LoadOptions::default());

    let files = |c: &mcp_agents::definition::Catalog, deferring: bool| -> BTreeSet<PathBuf> {
        c.agents()
            .iter()
            .filter(|a| (a.model.origin == ModelOrigin::ServerDefault) == deferring)
            .map(|a| a.source.path.clone())
            .collect()
    };
    assert_eq!(files(&with_default, true).len(), 26);
    assert!(files(&without, true).is_empty());
    // Every file that names its model loads either way; without a default, a file that
    // a deferring namesake shadowed takes the name: the Copilot `reviewer`, whose model is
    // named, once both Codex `reviewer`s are refused.
    let named = files(&with_default, false);
    let loaded: BTreeSet<PathBuf> = files(&without, false);
    assert!(
        loaded.is_superset(&named),
        "{:?}",
        named.difference(&loaded)
    );
    assert_eq!(
        loaded.difference(&named).collect::<Vec<_>>(),
        [&PathBuf::from(".github/agents/reviewer.agent.md")]
    );
    // Refused for deferring: the 26, the two shadowed Codex namesakes, the two Cursor files
    // whose `model: fast` names no model, and one more file with another problem besides
    // (issue 39: a file's problems are told all at once). Only the files whose one problem
    // it is are the ones a default model fixes: not the Cursor `manager`, which has no
    // description either, nor the Claude `critic`, which has no name.
    let parent_rejections: Vec<&mcp_agents::definition::Warning> = without
        .warnings()
        .iter()
        .filter(|w| w.effect == Effect::Rejected && w.reason.contains("--default-model"))
        .collect();
    assert_eq!(parent_rejections.len(), 26 + 2 + 2 + 1);
    let fixed_by_default: Vec<String> = parent_rejections
        .iter()
        .filter(|w| !w.wants_default_model())
        .map(|w| w.file.display().to_string())
        .collect();
    assert_eq!(
        fixed_by_default,
        [".claude/agents/critic.md", ".cursor/agents/manager.md"],
        "the files with another problem too"
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
