//! Canonical-path confinement (SPEC §3): links out of a root or the workspace are skipped
//! with a warning, a canonical file is used once however it is reached, and broken or
//! looping links are reported without stopping discovery.

mod support;

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
