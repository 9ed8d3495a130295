//! Root precedence, lexical order inside a root, first name wins (SPEC §3).

mod support;

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
    assert_eq!(
        names,
        ["order", "dup", "shared", "toml-agent", "second", "singular"]
    );
}
