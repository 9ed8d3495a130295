//! The https/loopback rule for provider endpoints and child-server URLs (SPEC §3.2, §8.1).

use crate::support;

use mcp_agents::definition::ChildTransport;

#[test]
fn only_https_or_loopback_http_endpoints_load() {
    let catalog = support::check_fixture("endpoints");
    let loaded: Vec<&str> = catalog.agents().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(loaded.len(), 9, "{loaded:?}");
    let ipv6 = catalog.get("endpoint-06").unwrap();
    assert_eq!(ipv6.provider.base_url.as_str(), "http://[::1]:9000/");
    let child = catalog.get("child-02").unwrap();
    match &child.mcp_servers["docs"].transport {
        ChildTransport::Http { url, .. } => assert_eq!(url.as_str(), "http://127.0.0.1:3000/mcp"),
        other => panic!("expected HTTP, got {other:?}"),
    }
}

#[test]
fn rejections_never_echo_url_credentials() {
    let catalog = support::load_fixture("endpoints");
    for warning in catalog.warnings() {
        assert!(!warning.reason.contains("hunter2"), "{}", warning.reason);
        assert!(!warning.reason.contains("key=abc"), "{}", warning.reason);
    }
}
