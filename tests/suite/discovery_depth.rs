//! The depth limit: files up to 8 levels below a root are read, deeper ones are not
//! (SPEC §3), and the directory that is not searched gets a warning.

use crate::support;

#[test]
fn depth_eight_is_read_and_depth_nine_is_not() {
    let catalog = support::check_fixture("depth");
    assert!(catalog.get("depth8").is_some());
    assert!(catalog.get("depth9").is_none());
    assert!(
        !catalog.has_rejections(),
        "a skipped directory is not a rejection"
    );
}
