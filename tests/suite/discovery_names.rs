//! The name rule (SPEC §3.1) in every format, and how each format finds a name.

use crate::support;

#[test]
fn every_name_edge_is_accepted_or_rejected_as_the_rule_says() {
    let catalog = support::check_fixture("names");
    assert_eq!(
        catalog.agents().len(),
        6,
        "n64, underscore, digits and three OpenCode agents"
    );
}
