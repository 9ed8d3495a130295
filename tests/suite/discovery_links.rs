//! Canonical-path confinement (SPEC §3): links out of a root or the workspace are skipped
//! with a warning, a canonical file is used once however it is reached, and broken or
//! looping links are reported without stopping discovery.

use crate::support;

#[test]
fn links_are_confined_and_files_used_once() {
    let catalog = support::check_fixture("links/workspace");
    let names: Vec<&str> = catalog.agents().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["real", "codex-ok"]);
    assert!(catalog.get("outsider").is_none());
    assert_eq!(
        catalog.get("real").unwrap().source.path,
        std::path::Path::new(".agents/agents/real.md"),
        "the canonical path is reported, not the link"
    );
}

#[test]
fn a_root_that_links_outside_the_workspace_is_not_searched() {
    let outside = support::TempWorkspace::new();
    outside.write(
        "agent.md",
        "---\nname: outsider\ndescription: d\nmodel: sonnet\n---\nBody.\n",
    );
    let ws = support::TempWorkspace::new();
    std::fs::create_dir_all(ws.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join(".claude/agents")).unwrap();
    let catalog = ws.load(&mcp_agents::discovery::LoadOptions::default());
    assert!(catalog.agents().is_empty());
    let warning = &catalog.warnings()[0];
    assert_eq!(warning.file, std::path::Path::new(".claude/agents"));
    assert!(
        warning.reason.contains("outside the workspace"),
        "{}",
        warning.reason
    );
    assert_eq!(warning.effect, mcp_agents::definition::Effect::Skipped);
}

#[test]
fn a_root_that_links_to_another_folder_inside_the_workspace_is_searched() {
    let ws = support::TempWorkspace::new();
    ws.write(
        "shared/agents/reviewer.md",
        "---\nname: reviewer\ndescription: d\nmodel: sonnet\n---\nBody.\n",
    );
    std::fs::create_dir_all(ws.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink("../shared/agents", ws.path().join(".claude/agents")).unwrap();
    let catalog = ws.load(&mcp_agents::discovery::LoadOptions::default());
    assert!(catalog.warnings().is_empty(), "{:?}", catalog.warnings());
    assert_eq!(
        catalog.get("reviewer").unwrap().source.path,
        std::path::Path::new("shared/agents/reviewer.md")
    );
}
