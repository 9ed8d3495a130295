//! Child MCP server configurations (SPEC §8.1, FORMATS.md): every spelling, `.mcp.json`
//! references, `${VAR}` syntax, transports, credentials, and Codex's extra keys.

use crate::support;

use std::time::Duration;

use mcp_agents::definition::{ChildTransport, Template, ValueSource};

#[test]
fn server_rules_hold_for_every_format() {
    support::check_fixture("servers");
}

fn template(text: &str) -> ValueSource {
    ValueSource::Template(Template::parse(text).unwrap())
}

#[test]
fn canonical_servers_keep_their_configuration() {
    let catalog = support::load_fixture("servers");
    let servers = &catalog.get("canonical-servers").unwrap().mcp_servers;
    assert_eq!(servers.keys().collect::<Vec<_>>(), ["docs", "tracker"]);
    match &servers["docs"].transport {
        ChildTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            assert_eq!(command, "npx");
            assert_eq!(args, &["-y", "@acme/docs-mcp"]);
            assert_eq!(env["DOCS_TOKEN"], template("${DOCS_TOKEN}"));
            assert_eq!(env["MODE"], template("fast"));
            assert_eq!(cwd.as_deref(), Some(std::path::Path::new("tools/docs")));
        }
        other => panic!("{other:?}"),
    }
    match &servers["tracker"].transport {
        ChildTransport::Http { url, headers } => {
            assert_eq!(url.as_str(), "https://tracker.example.com/mcp");
            assert_eq!(
                headers["Authorization"],
                template("Bearer ${TRACKER_TOKEN}")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn claude_names_are_looked_up_in_mcp_json() {
    let catalog = support::load_fixture("servers");
    let agent = catalog.get("claude-list").unwrap();
    assert_eq!(
        agent.own_servers().collect::<Vec<_>>(),
        ["github", "linear", "playwright"]
    );
    assert_eq!(
        agent.workspace_tools(),
        ["read", "list", "glob", "grep", "edit", "write"],
        "no `tools`: all of them"
    );
    let servers = &agent.mcp_servers;
    match &servers["github"].transport {
        ChildTransport::Stdio { command, env, .. } => {
            assert_eq!(command, "npx");
            assert_eq!(
                env["GITHUB_PERSONAL_ACCESS_TOKEN"],
                template("${GITHUB_TOKEN}")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        servers["linear"].transport,
        ChildTransport::Http { .. }
    ));
}

#[test]
fn codex_keys_map_onto_the_canonical_configuration() {
    let catalog = support::load_fixture("servers");
    let servers = &catalog.get("codex-servers").unwrap().mcp_servers;
    assert!(
        !servers.contains_key("off"),
        "enabled = false drops the server"
    );
    let docs = &servers["docs"];
    assert_eq!(docs.call_timeout, Duration::from_secs(30));
    assert_eq!(docs.startup_timeout, Duration::from_secs(5));
    assert!(docs.permits("search") && docs.permits("read_pages"));
    assert!(!docs.permits("read_secrets") && !docs.permits("write"));
    match &docs.transport {
        ChildTransport::Stdio { env, .. } => {
            assert_eq!(
                env["DOCS_TOKEN"],
                ValueSource::EnvIfSet("DOCS_TOKEN".into())
            );
        }
        other => panic!("{other:?}"),
    }
    match &servers["remote"].transport {
        ChildTransport::Http { headers, .. } => {
            assert_eq!(headers["Authorization"], template("Bearer ${REMOTE_TOKEN}"));
            assert_eq!(headers["X-Org"], ValueSource::EnvIfSet("ORG_ID".into()));
            assert_eq!(headers["X-Team"], template("core"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(servers["slow"].startup_timeout, Duration::from_secs(15));
}

#[test]
fn literal_credentials_never_reach_warnings_or_debug_output() {
    let catalog = support::load_fixture("servers");
    support::assert_no_warning_quotes(&catalog, "DO_NOT_LEAK");
    let debug = format!("{:?}", catalog.agents());
    assert!(
        !debug.contains("fast"),
        "literal env values are hidden in Debug output"
    );
    assert!(
        !debug.contains("@acme/docs-mcp"),
        "arguments are hidden in Debug output"
    );
    assert!(debug.contains("DOCS_TOKEN"), "variable names are shown");
}
