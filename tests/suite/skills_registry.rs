//! The skills registry (SPEC §9): discovery with the agents' precedence and safety rules,
//! lookup by name, and the text preloading adds.

use crate::support;

#[test]
fn skills_load_with_precedence_and_caveats() {
    let catalog = support::check_fixture("skills");
    let names: Vec<&str> = catalog.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["citations", "guarded", "style", "review-checklist"]);
    assert!(catalog.skills().get("guarded").unwrap().hooks);
    assert!(
        catalog.get("guarded-user").is_none(),
        "an agent preloading a skill with hooks is refused"
    );
}

#[test]
fn skills_are_available_by_name_with_their_body() {
    let catalog = support::load_fixture("skills");
    let citations = catalog.skills().get("citations").unwrap();
    assert_eq!(citations.body, "Put a link after each claim.");
    assert_eq!(
        citations.path,
        std::path::Path::new(".agents/skills/citations/SKILL.md")
    );
    assert_eq!(
        citations.preload_text(),
        "## Skill: citations\n\nCite every claim with a source.\n\nPut a link after each claim."
    );
    assert!(catalog.skills().get("no-description").is_none());
}

#[test]
fn agents_keep_the_listed_order_without_repeats() {
    let catalog = support::load_fixture("skills");
    assert_eq!(
        catalog.get("writer").unwrap().skills,
        ["style", "citations", "missing-skill"]
    );
}
