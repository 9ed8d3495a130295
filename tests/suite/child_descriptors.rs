//! What a child process holds (issue 34 item 1), through the real binary over stdio and
//! over HTTP: every process the server starts for a run (a stdio child's shim, the child,
//! the built-in workspace server) holds across `exec` only its own standard streams (and a
//! shim, for a moment, the socket it is told what to start on), never a copy of the
//! server's stdin, stdout or stderr nor any socket of its MCP transport. Before, every child
//! inherited a second copy of the server's stdout (descriptor 9), through which it could
//! write forged answers to the client.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_agents::testkit::{MockProvider, Step, kept_across_exec};
use serde_json::{Value, json};
use support::binary::{self, Connection, Generation};
use support::children::{agent, call_outputs, live_processes, stdio_child, tagged_marker, write};
use support::run_kit::KEY;

/// What `pid`'s descriptors 0, 1 and 2 point to.
fn standard_streams(pid: u32) -> Vec<String> {
    (0..3)
        .filter_map(|fd| std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok())
        .map(|target| target.to_string_lossy().into_owned())
        .collect()
}

/// The parent of `pid`, from `/proc/PID/stat`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Every live process below `root`, with its subcommand (`child-shim`, `fixture-server`,
/// `workspace-tools`).
fn descendants_of(root: u32) -> Vec<(u32, String)> {
    live_processes(|pid| {
        let mut at = pid;
        for _ in 0..8 {
            match parent_of(at) {
                Some(parent) if parent == root => return true,
                Some(parent) if parent > 1 => at = parent,
                _ => return false,
            }
        }
        false
    })
    .into_iter()
    .map(|pid| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let subcommand = cmdline
            .split(|b| *b == 0)
            .nth(1)
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .unwrap_or_default();
        (pid, subcommand)
    })
    .collect()
}

/// Checks one process's descriptors kept across `exec`: only 0, 1 and 2, none of them
/// one of the server's own standard streams or a socket (the HTTP transport's).
fn assert_only_its_own_streams(who: &str, kept: &BTreeMap<u32, String>, server_streams: &[String]) {
    let numbers: Vec<u32> = kept.keys().copied().collect();
    assert!(
        numbers.iter().all(|fd| *fd <= 2),
        "{who} holds descriptors beyond its standard streams: {kept:?} (the server's streams \
         are {server_streams:?})"
    );
    for (fd, target) in kept {
        assert!(
            !server_streams.contains(target) || target == "/dev/null",
            "{who}'s descriptor {fd} is the server's own {target}: {kept:?}"
        );
        assert!(
            !target.starts_with("socket:"),
            "{who}'s descriptor {fd} is a socket: {kept:?}"
        );
    }
}

/// An agent with a stdio child (under its shim) and the built-in workspace server.
fn workspace(mock: &MockProvider, marker: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let servers = format!(
        "{}    workspace: {{ builtin: workspace }}\n",
        stdio_child("fx", &[], marker, "")
    );
    write(
        ws.path(),
        ".agents/agents/lister.md",
        &agent(mock, "lister", &servers, ""),
    );
    ws
}

/// Runs the agent until its child has reported its descriptors and sits in a long call,
/// then checks the child's report and every process below the server, and stops the run.
async fn check_children(c: &Connection, mock: &MockProvider, server: u32) {
    mock.push([
        Step::tool_calls(vec![
            ("fx__descriptors", json!({})),
            ("workspace__list", json!({})),
        ]),
        Step::tool_call("fx__sleep", json!({"ms": 60_000})),
    ]);
    let id = c.spawn("lister", "List your descriptors.").await;
    for _ in 0..400 {
        if mock.requests().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(mock.requests().len(), 2, "the child answered");
    c.wait_for_phase(&id, "tool_call").await;
    let server_streams = standard_streams(server);

    // What the child says it inherited.
    let reported: Vec<Value> = serde_json::from_str(&call_outputs(mock)[0]).unwrap();
    let reported: BTreeMap<u32, String> = reported
        .iter()
        .map(|d| {
            (
                d["fd"].as_u64().unwrap() as u32,
                d["target"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        reported.keys().copied().collect::<Vec<_>>(),
        [0, 1, 2],
        "the child inherited {reported:?}"
    );
    assert_only_its_own_streams("the child (its own report)", &reported, &server_streams);

    // Every process below the server, as /proc shows it.
    let below = descendants_of(server);
    let kinds: Vec<&str> = below.iter().map(|(_, kind)| kind.as_str()).collect();
    for expected in ["child-shim", "fixture-server", "workspace-tools"] {
        assert!(
            kinds.contains(&expected),
            "no {expected} below the server: {kinds:?}"
        );
    }
    for (pid, kind) in &below {
        assert_only_its_own_streams(
            &format!("{kind} ({pid})"),
            &kept_across_exec(&pid.to_string()).into_iter().collect(),
            &server_streams,
        );
    }
    c.ok("send_input", json!({"target": id, "stop": true}))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_of_a_stdio_server_hold_none_of_its_descriptors() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let m = tagged_marker("fds-stdio");
    let ws = workspace(&mock, &m);
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    let server = c.pid.unwrap();
    check_children(&c, &mock, server).await;
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_of_an_http_server_hold_none_of_its_descriptors() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let m = tagged_marker("fds-http");
    let ws = workspace(&mock, &m);
    let (server, url) = binary::start_http_server(ws.path(), &[], &[])
        .await
        .unwrap();
    let c = binary::connect_http(&url, Generation::Modern, None).await;
    check_children(&c, &mock, server.id().unwrap()).await;
    c.close().await;
    drop(server);
}
