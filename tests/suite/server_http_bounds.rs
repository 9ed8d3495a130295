//! What an HTTP client can hold (SPEC §10), through the real binary: stalled connections
//! and their descriptors, the header and body deadlines, the cap on legacy sessions, and
//! session ids under a bearer token.

use crate::support;

use std::time::{Duration, Instant};

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::json;
use support::binary::{self, Generation};
use support::run_kit::KEY;

// ----- HTTP: stalled clients, legacy sessions, who may use an id (issue 14) -----

const TOKEN_VAR: &str = "MCP_AGENTS_TEST_BEARER";

const TOKEN: &str = "bearer-test-token-14";

fn open_fds_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// `host:port` of an `http://host:port/mcp` URL.
fn authority(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}

/// Opens `count` connections that each send `prefix` and then nothing more.
async fn stalled_connections(url: &str, count: usize, prefix: &[u8]) -> Vec<tokio::net::TcpStream> {
    use tokio::io::AsyncWriteExt;
    let mut held = Vec::new();
    for _ in 0..count {
        let mut stream = tokio::net::TcpStream::connect(authority(url))
            .await
            .unwrap();
        stream.write_all(prefix).await.unwrap();
        held.push(stream);
    }
    held
}

const HALF_HEADERS: &[u8] = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_stalled_http_connections_hold_under_300_descriptors() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let (server, url) = binary::start_http_server(ws.path(), &[], &[])
        .await
        .unwrap();
    let pid = server.id().unwrap();
    let before = open_fds_of(pid);
    let held = stalled_connections(&url, 500, HALF_HEADERS).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = open_fds_of(pid);
    assert!(
        during < 300,
        "the server holds {during} descriptors with 500 stalled connections ({before} before)"
    );
    drop(held);
}

/// Long: the bounds themselves (headers 10 s, body 30 s) with real time.
/// `cargo test --test all -- --ignored suite::server_http_bounds::stalled_http_clients_are_cut_off_at_the_bounds`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "waits past the 30 s body bound; .ci/run runs it"]
async fn stalled_http_clients_are_cut_off_at_the_bounds() {
    use tokio::io::AsyncReadExt;
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let (server, url) = binary::start_http_server(ws.path(), &[], &[])
        .await
        .unwrap();
    let pid = server.id().unwrap();
    let started = Instant::now();
    let mut headers = stalled_connections(&url, 500, HALF_HEADERS).await;
    // Whole headers, then 10 of the 1,000 bytes of body they announce.
    let bodies = stalled_connections(
        &url,
        40,
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"",
    )
    .await;
    // A legitimate client gets through once the stalled headers are cut (10 s), even with
    // 500 of them queued.
    let legit = tokio::time::timeout(
        Duration::from_secs(60),
        binary::connect_http(&url, Generation::Modern, None),
    )
    .await
    .expect("a legitimate client is served while stalled ones wait");
    assert!(!legit.tools().await.is_empty());
    legit.close().await;
    // Every stalled-header connection is closed by the server: after 10 s, not at once.
    for stream in &mut headers {
        let mut byte = [0u8; 1024];
        let read = tokio::time::timeout(Duration::from_secs(60), stream.read(&mut byte)).await;
        assert!(read.is_ok(), "a stalled-header connection stayed open");
    }
    let headers_cut = started.elapsed();
    assert!(
        headers_cut >= Duration::from_secs(9),
        "cut too early: {headers_cut:?}"
    );
    // Every stalled body gets 408 and the connection closes, after 30 s.
    for mut stream in bodies {
        let mut answer = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut answer)).await;
        assert!(read.is_ok(), "a stalled-body connection stayed open");
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    }
    assert!(
        started.elapsed() >= Duration::from_secs(29),
        "bodies cut too early: {:?}",
        started.elapsed()
    );
    assert!(
        open_fds_of(pid) < 40,
        "descriptors freed: {}",
        open_fds_of(pid)
    );
}

/// POSTs a legacy `initialize` (with `token` as a bearer token); returns the session id.
async fn legacy_session(url: &str, token: Option<&str>) -> String {
    let mut request = mcp_agents::net::loopback_client().post(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// The status of a notification sent in legacy session `id` (202 while it lives, 404 after).
async fn use_session(url: &str, id: &str, token: Option<&str>) -> u16 {
    let mut request = mcp_agents::net::loopback_client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", id)
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap().status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_http_sessions_are_capped_at_64_least_recently_used_first() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let (_server, url) = binary::start_http_server(ws.path(), &[], &[])
        .await
        .unwrap();
    let mut ids = Vec::new();
    for _ in 0..64 {
        ids.push(legacy_session(&url, None).await);
    }
    // The oldest is used again; the second oldest is now the least recently used.
    assert_eq!(use_session(&url, &ids[0], None).await, 202);
    for _ in 0..10 {
        ids.push(legacy_session(&url, None).await);
    }
    assert_eq!(use_session(&url, &ids[0], None).await, 202, "used, kept");
    for id in &ids[1..11] {
        assert_eq!(
            use_session(&url, id, None).await,
            404,
            "closed for a newer one"
        );
    }
    for id in &ids[11..] {
        assert_eq!(use_session(&url, id, None).await, 202);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_ids_are_usable_by_any_holder_of_it_and_by_nobody_else() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let (_server, url) = binary::start_http_server(
        ws.path(),
        &["--auth-token-env", TOKEN_VAR],
        &[(TOKEN_VAR, TOKEN)],
    )
    .await
    .unwrap();
    // One trust domain: a second client holding the token may wait on and steer an agent
    // the first spawned (docs/security.md).
    let first = binary::connect_http(&url, Generation::Modern, Some(TOKEN)).await;
    let second = binary::connect_http(&url, Generation::Legacy, Some(TOKEN)).await;
    mock.push([Step::text("first answer")]);
    let id = first.spawn("worker", "t").await;
    assert_eq!(
        second.wait(&[&id], 20_000).await["agents"][0]["result"],
        "first answer"
    );
    mock.push([Step::text("steered")]);
    second
        .ok("send_input", json!({"target": id, "message": "more"}))
        .await;
    assert_eq!(
        first.wait(&[&id], 20_000).await["agents"][0]["result"],
        "steered"
    );
    // Knowing an id is not enough without the token, for agents or legacy sessions.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "send_input", "arguments": {"target": id, "message": "hijack"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let refused = mcp_agents::net::loopback_client()
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "send_input")
        .json(&call)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let session = legacy_session(&url, Some(TOKEN)).await;
    let delete = |token: Option<&'static str>| {
        let url = url.clone();
        let session = session.clone();
        async move {
            let mut request = mcp_agents::net::loopback_client()
                .delete(&url)
                .header("mcp-session-id", &session);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            request.send().await.unwrap().status().as_u16()
        }
    };
    assert_eq!(delete(None).await, 401);
    assert_eq!(delete(Some("wrong")).await, 401);
    assert_eq!(
        use_session(&url, &session, Some(TOKEN)).await,
        202,
        "still there"
    );
    assert!(matches!(delete(Some(TOKEN)).await, 200 | 202 | 204));
    assert_eq!(use_session(&url, &session, Some(TOKEN)).await, 404);
    first.close().await;
    second.close().await;
}
