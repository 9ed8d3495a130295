//! HTTP exposure (SPEC §10): loopback by default, non-loopback Origins refused, the bearer
//! token enforced on every request, and a non-loopback bind without a token refused at
//! startup.

use crate::support;

use mcp_agents::testkit::Step;
use serde_json::json;
use support::HttpServerUnderTest;
use support::binary::{self, Generation};

const TOKEN_VAR: &str = "MCP_AGENTS_TEST_BEARER";
const TOKEN: &str = "bearer-test-token-42";

fn discover_body() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}}})
}

/// POSTs `body` as a 2026-07-28 request of `method`, with extra `headers`.
async fn send(
    url: &str,
    method: &str,
    body: &serde_json::Value,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = mcp_agents::net::loopback_client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .json(body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    request.send().await.unwrap()
}

async fn post(url: &str, headers: &[(&str, &str)]) -> u16 {
    send(url, "server/discover", &discover_body(), headers)
        .await
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_that_are_not_loopback_are_refused() {
    let server = HttpServerUnderTest::start().await;
    let url = &server.url;
    assert_eq!(post(url, &[]).await, 200, "no Origin: a non-browser client");
    assert_eq!(post(url, &[("origin", "http://localhost:5173")]).await, 200);
    assert_eq!(post(url, &[("origin", "http://127.0.0.1")]).await, 200);
    assert_eq!(post(url, &[("origin", "https://evil.example")]).await, 403);
    assert_eq!(
        post(url, &[("origin", "http://localhost.evil.example")]).await,
        403
    );
    assert_eq!(post(url, &[("origin", "null")]).await, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_token_is_required_on_every_request() {
    let server = HttpServerUnderTest::with_token(TOKEN_VAR, TOKEN).await;
    let url = &server.url;
    assert_eq!(post(url, &[]).await, 401);
    assert_eq!(post(url, &[("authorization", "Bearer wrong")]).await, 401);
    assert_eq!(
        post(url, &[("authorization", &format!("Bearer {TOKEN}x"))]).await,
        401
    );
    assert_eq!(
        post(url, &[("authorization", &format!("Bearer {TOKEN}"))]).await,
        200
    );
    assert_eq!(
        post(url, &[("authorization", &format!("bearer {TOKEN}"))]).await,
        200,
        "the scheme is case-insensitive"
    );

    for generation in [Generation::Modern, Generation::Legacy] {
        let c = server.connect(generation, Some(TOKEN)).await;
        server.mock.push([Step::text("authorized")]);
        let id = c.spawn("worker", "t").await;
        assert_eq!(c.wait_one(&id, 20_000).await["result"], "authorized");
        c.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_address_needs_a_token() {
    let ws = tempfile::tempdir().unwrap();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = std::process::Command::new(binary::BIN);
        command.arg(ws.path()).args(args);
        for (k, v) in env {
            command.env(k, v);
        }
        command.env_remove(TOKEN_VAR).output().unwrap()
    };
    let out = run(&["--http", "0.0.0.0:0"], &[]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("refusing to serve on 0.0.0.0:0, which is not a loopback address, without a bearer token"), "{stderr}");

    let out = run(
        &["--http", "127.0.0.1:0", "--auth-token-env", TOKEN_VAR],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--auth-token-env names MCP_AGENTS_TEST_BEARER, which is not set or empty")
    );

    // The token itself pasted where its variable's name belongs is refused unseen.
    let pasted = "d15286d9647c0aa1f228d15286d9647c";
    let out = run(&["--http", "127.0.0.1:0", "--auth-token-env", pasted], &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a variable name"), "{stderr}");
    assert!(!stderr.contains(pasted), "{stderr}");

    for bad in ["bogus", "127.0.0.1", "127.0.0.1:99999"] {
        let out = run(&["--http", bad], &[]);
        assert_eq!(out.status.code(), Some(2), "--http {bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("use HOST:PORT"), "{stderr}");
    }

    let out = run(&["--auth-token-env", TOKEN_VAR], &[]);
    assert_eq!(out.status.code(), Some(2), "--auth-token-env needs --http");

    // With a token, a network address is served.
    let (server, url) = binary::start_http_server(
        ws.path(),
        &["--http", "0.0.0.0:0", "--auth-token-env", TOKEN_VAR],
        &[(TOKEN_VAR, TOKEN)],
    )
    .await
    .expect("serves with a token");
    assert!(url.starts_with("http://0.0.0.0:"), "{url}");
    drop(server);
}

/// SPEC §4: arguments that are not an object are `invalid_input` over HTTP too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_that_are_not_an_object_are_invalid_input() {
    let server = HttpServerUnderTest::start().await;
    let url = &server.url;
    let mut call = discover_body();
    call["method"] = json!("tools/call");
    call["params"]["name"] = json!("spawn_agent");
    call["params"]["arguments"] = json!(["worker", "task"]);
    let response = send(url, "tools/call", &call, &[("mcp-name", "spawn_agent")]).await;
    assert_eq!(response.status().as_u16(), 200);
    let text = response.text().await.unwrap();
    // A JSON body, or one SSE event carrying it.
    let json_text = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .unwrap_or(&text)
        .trim();
    let answer: serde_json::Value = serde_json::from_str(json_text).unwrap();
    let error = &answer["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], "invalid_input", "{answer}");
    assert!(
        error["message"].as_str().unwrap().contains("not an array"),
        "{answer}"
    );
    assert!(server.mock.requests().is_empty(), "nothing was spawned");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_4_mib_is_refused_with_413() {
    let server = HttpServerUnderTest::start().await;
    let url = &server.url;
    let mut call = discover_body();
    call["params"]["padding"] = json!("x".repeat(4 * 1024 * 1024));
    let status = send(url, "server/discover", &call, &[]).await.status();
    assert_eq!(status.as_u16(), 413);
    assert_eq!(post(url, &[]).await, 200, "and the server serves on");
}
