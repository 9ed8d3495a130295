//! What an HTTP client can hold (SPEC §10), through the real binary: stalled connections
//! and their descriptors, the header and body deadlines, the cap on legacy sessions,
//! session ids under a bearer token, and (issue 23) a body refused by its declared length
//! before it is read, a body sent a byte at a time held in one buffer, answers nobody reads
//! given up, and long waits that cannot take every connection.

use crate::support;

use std::time::{Duration, Instant};

use mcp_agents::testkit::Step;
use serde_json::json;
use support::HttpServerUnderTest;
use support::binary::Generation;

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

/// Fails unless a new client is served (its tools listed) within `secs`; it closes again.
async fn assert_serves_another_client(server: &HttpServerUnderTest, secs: u64) {
    let client = tokio::time::timeout(
        Duration::from_secs(secs),
        server.connect(Generation::Modern, None),
    )
    .await
    .expect("another client is served");
    assert!(!client.tools().await.is_empty());
    client.close().await;
}

const HALF_HEADERS: &[u8] = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_stalled_http_connections_hold_under_300_descriptors() {
    let server = HttpServerUnderTest::start().await;
    let (pid, url) = (server.pid(), &server.url);
    let before = open_fds_of(pid);
    let held = stalled_connections(url, 500, HALF_HEADERS).await;
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
    let server = HttpServerUnderTest::start().await;
    let (pid, url) = (server.pid(), &server.url);
    let started = Instant::now();
    let mut headers = stalled_connections(url, 500, HALF_HEADERS).await;
    // Whole headers, then 10 of the 1,000 bytes of body they announce.
    let bodies = stalled_connections(
        url,
        40,
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"",
    )
    .await;
    // A legitimate client gets through once the stalled headers are cut (10 s), even with
    // 500 of them queued.
    assert_serves_another_client(&server, 60).await;
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
    let server = HttpServerUnderTest::start().await;
    let url = &server.url;
    let mut ids = Vec::new();
    for _ in 0..64 {
        ids.push(legacy_session(url, None).await);
    }
    // The oldest is used again; the second oldest is now the least recently used.
    assert_eq!(use_session(url, &ids[0], None).await, 202);
    for _ in 0..10 {
        ids.push(legacy_session(url, None).await);
    }
    assert_eq!(use_session(url, &ids[0], None).await, 202, "used, kept");
    for id in &ids[1..11] {
        assert_eq!(
            use_session(url, id, None).await,
            404,
            "closed for a newer one"
        );
    }
    for id in &ids[11..] {
        assert_eq!(use_session(url, id, None).await, 202);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_ids_are_usable_by_any_holder_of_it_and_by_nobody_else() {
    let server = HttpServerUnderTest::with_token(TOKEN_VAR, TOKEN).await;
    let (mock, url) = (&server.mock, &server.url);
    // One trust domain: a second client holding the token may wait on and steer an agent
    // the first spawned (docs/security.md).
    let first = server.connect(Generation::Modern, Some(TOKEN)).await;
    let second = server.connect(Generation::Legacy, Some(TOKEN)).await;
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
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "send_input")
        .json(&call)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let session = legacy_session(url, Some(TOKEN)).await;
    let delete = |token: Option<&'static str>| {
        let url = url.clone();
        let session = session.clone();
        async move {
            let mut request = mcp_agents::net::loopback_client()
                .delete(url)
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
        use_session(url, &session, Some(TOKEN)).await,
        202,
        "still there"
    );
    assert!(matches!(delete(Some(TOKEN)).await, 200 | 202 | 204));
    assert_eq!(use_session(url, &session, Some(TOKEN)).await, 404);
    first.close().await;
    second.close().await;
}

// ----- HTTP: request bodies, answers nobody reads, long waits (issue 23) -----

/// The server's resident memory now and at its peak, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Reads what the server sends on `stream` within `secs` (to its end, or what came).
async fn answer_within(stream: &mut tokio::net::TcpStream, secs: u64) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(secs), async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
            if answer.windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
    })
    .await;
    read.ok()
        .map(|()| String::from_utf8_lossy(&answer).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_declared_over_4_mib_is_refused_before_it_is_read() {
    use tokio::io::AsyncWriteExt;
    let server = HttpServerUnderTest::start().await;
    let url = &server.url;
    let mut stream = tokio::net::TcpStream::connect(authority(url))
        .await
        .unwrap();
    // 10 GB announced, a few bytes sent: the answer must not wait for the rest (the body
    // timeout is 30 s).
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 10000000000\r\n\r\n{\"js",
        )
        .await
        .unwrap();
    let answer = answer_within(&mut stream, 5)
        .await
        .expect("an answer before the body arrives");
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.to_lowercase().contains("connection: close"),
        "{answer}"
    );
}

/// A 512 KiB body in 1-byte chunks (3 MiB of chunked encoding): the server holds it in one
/// buffer. `Limited::collect` kept each byte as a buffer of its own, about 37 bytes of
/// memory per byte of body (the debug binary grew by 20.2 MiB on this body before the
/// change, 5.5 MiB after; 155 MiB for 4 MiB in a release build). A debug build
/// decodes a chunk in about 20 µs, so this takes some 12 s; what was read is what counts,
/// should the 30 s body bound come first on a loaded machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_sent_a_byte_at_a_time_costs_a_few_times_its_size() {
    use tokio::io::AsyncWriteExt;
    let server = HttpServerUnderTest::start().await;
    let (pid, url) = (server.pid(), &server.url);
    let mut request =
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
        Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n\
        Mcp-Method: server/discover\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec();
    let body = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(512 * 1024)
    );
    for byte in body.bytes() {
        request.extend_from_slice(b"1\r\n");
        request.push(byte);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"0\r\n\r\n");
    let (before, _) = memory_kib(pid);
    let mut stream = tokio::net::TcpStream::connect(authority(url))
        .await
        .unwrap();
    stream.write_all(&request).await.unwrap();
    let answer = answer_within(&mut stream, 60).await.expect("an answer");
    assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
    let (_, peak) = memory_kib(pid);
    let grown_mib = (peak.saturating_sub(before)) as f64 / 1024.0;
    assert!(
        grown_mib < 10.0,
        "the server grew by {grown_mib:.1} MiB for a 512 KiB body"
    );
}

/// A raw 2026-07-28 `tools/call` of `wait_agent`, as an HTTP/1.1 request.
fn wait_request(id: &str, timeout_ms: u64) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "wait_agent", "arguments": {"targets": [id], "timeout_ms": timeout_ms},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: wait_agent\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// 256 five-minute waits, as many as there are connection slots: half of them wait, the
/// others are shortened to a second and say so, and another client is served at once.
/// Before, the 256 waits held every slot for five minutes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_waits_cannot_lock_other_clients_out() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = HttpServerUnderTest::start().await;
    let url = &server.url;
    let first = server.connect(Generation::Modern, None).await;
    server.mock.push([Step::Hang]);
    let id = first.spawn("worker", "Take your time.").await;
    first.close().await;
    let request = wait_request(&id, 300_000);
    let mut waits = tokio::task::JoinSet::new();
    for _ in 0..mcp_agents::limits::HTTP_CONNECTIONS {
        let request = request.clone();
        let authority = authority(url);
        waits.spawn(async move {
            let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
            stream.write_all(&request).await.unwrap();
            let mut answer = Vec::new();
            let _ = stream.read_to_end(&mut answer).await;
            String::from_utf8_lossy(&answer).into_owned()
        });
    }
    // The waits beyond the long-wait slots come back within a few seconds, shortened.
    let mut shortened = 0;
    let collected = tokio::time::timeout(Duration::from_secs(30), async {
        while shortened < mcp_agents::limits::HTTP_LONG_WAITS {
            let answer = waits.join_next().await.unwrap().unwrap();
            assert!(answer.contains("shortened to 1 s"), "{answer}");
            assert!(answer.contains("\"timed_out\":true"), "{answer}");
            shortened += 1;
        }
    })
    .await;
    assert!(
        collected.is_ok(),
        "only {shortened} waits came back; the others hold their connections"
    );
    // Another client is served while the long waits go on.
    assert_serves_another_client(&server, 15).await;
    assert_eq!(
        waits.len(),
        mcp_agents::limits::HTTP_LONG_WAITS,
        "the rest wait on"
    );
    waits.abort_all();
}

/// Long: answers nobody reads, with the 30 s write bound in real time.
/// `cargo test --test all -- --ignored suite::server_http_bounds::answers_nobody_reads_are_given_up_after_30_s`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "waits past the 30 s write bound; .ci/run runs it"]
async fn answers_nobody_reads_are_given_up_after_30_s() {
    use tokio::io::AsyncWriteExt;
    let server = HttpServerUnderTest::start().await;
    let (pid, url) = (server.pid(), &server.url);
    let first = server.connect(Generation::Modern, None).await;
    server.mock.push([Step::text(&"y".repeat(3_900_000))]);
    let id = first.spawn("worker", "Write a lot.").await;
    let done = first.wait(&[&id], 30_000).await;
    assert_eq!(done["agents"][0]["status"], "completed");
    first.close().await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = open_fds_of(pid);
    // Clients that ask for the ~8 MiB record and never read a byte of it, with small
    // receive buffers so the answer cannot all fit in the sockets.
    let mut held = Vec::new();
    for _ in 0..8 {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut stream = socket
            .connect(authority(url).parse().unwrap())
            .await
            .unwrap();
        stream.write_all(&wait_request(&id, 0)).await.unwrap();
        held.push(stream);
    }
    // Each answer is made (8 MiB of JSON, slow in a debug build), then waits on its client.
    let mut during = open_fds_of(pid);
    for _ in 0..60 {
        if during >= before + 8 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        during = open_fds_of(pid);
    }
    assert!(
        during >= before + 8,
        "the answers are being written: {during} descriptors, {before} before"
    );
    // Each connection is given up 30 s after its answer stopped moving; the answers were
    // made one after another, so the last is given up a while after the first.
    let deadline = Instant::now() + mcp_agents::limits::HTTP_WRITE_STALL + Duration::from_secs(60);
    let mut after = open_fds_of(pid);
    while after > before + 1 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        after = open_fds_of(pid);
    }
    assert!(
        after <= before + 1,
        "the connections were closed: {after} descriptors, {before} before, {during} during"
    );
    // The server serves on.
    let last = server.connect(Generation::Modern, None).await;
    assert!(!last.tools().await.is_empty());
    last.close().await;
    drop(held);
}
