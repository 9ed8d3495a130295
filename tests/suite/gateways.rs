//! Local engines and gateways through the real binary (SPEC §3.1 `auth`, §3.2): a
//! bearer-only Messages endpoint, a local engine that ignores the key, and a Claude Code
//! gateway user's `ANTHROPIC_BASE_URL` + `ANTHROPIC_AUTH_TOKEN`.

use crate::support;

use std::process::Command;

use mcp_agents::testkit::{MockAuth, MockProvider, Step};
use serde_json::{Value, json};
use support::TempWorkspace;
use support::binary::{self, Generation, KEY_VAR};
use support::run_kit::KEY;

/// Variables of the machine running the tests that would change which key is used.
const PROVIDER_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
];

fn custom_agent(name: &str, base: &str, wire: &str, key_var: &str, auth: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Talks to {wire}.\nmodel: local-model\n\
         model_provider: custom\nbase_url: {base}\nenv_key: {key_var}\nwire_api: {wire}\n\
         {auth}\n---\nYou answer briefly.\n"
    )
}

fn auth_headers(request: &mcp_agents::testkit::Recorded) -> (Option<String>, Option<String>) {
    let header = |name: &str| {
        request
            .headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    (header("authorization"), header("x-api-key"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_only_endpoint_takes_auth_bearer_on_every_api_and_refuses_x_api_key() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.set_auth(MockAuth::BearerOnly);
    let ws = TempWorkspace::new();
    let messages = mock.messages_base_url();
    let responses = mock.responses_base_url();
    let chat = mock.chat_base_url();
    for (name, base, wire, auth) in [
        (
            "messages-bearer",
            &messages,
            "anthropic-messages",
            "auth: bearer",
        ),
        ("messages-default", &messages, "anthropic-messages", ""),
        ("responses-default", &responses, "responses", ""),
        (
            "responses-x-api-key",
            &responses,
            "responses",
            "auth: x-api-key",
        ),
        ("chat-default", &chat, "chat-completions", ""),
        (
            "chat-x-api-key",
            &chat,
            "chat-completions",
            "auth: x-api-key",
        ),
    ] {
        ws.write(
            &format!(".agents/agents/{name}.md"),
            custom_agent(name, base, wire, KEY_VAR, auth),
        );
    }
    let conn = binary::stdio(ws.path(), Generation::Modern, &[]).await;

    for name in ["messages-bearer", "responses-default", "chat-default"] {
        mock.push([Step::text("Hi.")]);
        let record = conn.run_to_end(name, "Say hi.").await;
        assert_eq!(record["status"], "completed", "{name}: {record}");
        assert_eq!(record["result"], "Hi.");
        let request = mock.requests().pop().unwrap();
        assert_eq!(
            auth_headers(&request),
            (Some(format!("Bearer {KEY}")), None),
            "{name} sends the key as a bearer token only"
        );
    }
    for name in ["messages-default", "responses-x-api-key", "chat-x-api-key"] {
        let record = conn.run_to_end(name, "Say hi.").await;
        assert_eq!(record["status"], "failed", "{name}: {record}");
        assert_eq!(record["error"]["code"], "provider_error");
        let message = record["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("answered HTTP 401: unauthorized"),
            "{name}: {message}"
        );
        assert!(!message.contains(KEY), "the key is never quoted");
        let request = mock.requests().pop().unwrap();
        assert_eq!(
            auth_headers(&request),
            (None, Some(KEY.to_owned())),
            "{name} sent x-api-key alone"
        );
    }
    assert_eq!(mock.requests().len(), 6, "a 401 is not retried");
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_engine_takes_a_placeholder_key_but_an_unset_variable_is_still_refused() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.set_auth(MockAuth::Ignored);
    let ws = TempWorkspace::new();
    ws.write(
        ".agents/agents/local.md",
        custom_agent(
            "local",
            &mock.responses_base_url(),
            "responses",
            "OLLAMA_API_KEY",
            "",
        ),
    );

    let conn = binary::stdio_env(
        ws.path(),
        Generation::Modern,
        &[("OLLAMA_API_KEY", "ollama")],
        PROVIDER_VARS,
    )
    .await;
    mock.push([Step::text("Local hi.")]);
    let record = conn.run_to_end("local", "Say hi.").await;
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(
        auth_headers(&mock.requests()[0]).0.as_deref(),
        Some("Bearer ollama"),
        "the placeholder is sent as written"
    );
    conn.close().await;

    // A typo'd or unset variable never silently sends no key.
    let conn = binary::stdio_env(
        ws.path(),
        Generation::Modern,
        &[],
        &[PROVIDER_VARS, &["OLLAMA_API_KEY"]].concat(),
    )
    .await;
    let (code, message) = conn
        .err("spawn_agent", json!({"name": "local", "task": "Say hi."}))
        .await;
    assert_eq!(code, "missing_credential");
    assert!(
        message.contains("the environment variable OLLAMA_API_KEY (this agent's key) is not set"),
        "{message}"
    );
    // SPEC §3.2: what an MCP client user has to do, in each client.
    for part in [
        "Claude Code",
        "`env`",
        "Codex",
        "`env_vars`",
        "restart the client",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    assert_eq!(mock.requests().len(), 1, "no request without a key");
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_gateway_user_reaches_the_gateway_with_a_bearer_token() {
    let gateway = MockProvider::start(KEY).await.unwrap();
    gateway.set_auth(MockAuth::BearerOnly);
    let ws = TempWorkspace::new();
    ws.write(
        ".claude/agents/helper.md",
        "---\nname: helper\ndescription: A plain Claude Code subagent.\nmodel: sonnet\n---\n\
         You help.\n",
    );
    ws.write(
        ".agents/agents/openai-helper.md",
        "---\nname: openai-helper\ndescription: A plain OpenAI agent.\nmodel: gpt-5.4\n\
         model_provider: openai\n---\nYou help.\n",
    );
    let base = gateway.messages_base_url();
    let openai_base = gateway.responses_base_url();
    let env = [
        ("ANTHROPIC_BASE_URL", base.as_str()),
        ("ANTHROPIC_AUTH_TOKEN", KEY),
        ("OPENAI_BASE_URL", openai_base.as_str()),
        ("OPENAI_API_KEY", KEY),
    ];
    spawns_reach_the_gateway(&ws, &env, &gateway).await;
    check_names_the_gateway_and_its_variables(&ws, &env, &base);
}

/// A Claude Code subagent and an OpenAI one, each through its `*_BASE_URL` with the token
/// as a bearer.
async fn spawns_reach_the_gateway(
    ws: &TempWorkspace,
    env: &[(&str, &str)],
    gateway: &MockProvider,
) {
    let conn = binary::stdio_env(ws.path(), Generation::Legacy, env, PROVIDER_VARS).await;
    gateway.push([Step::text("Hello from the gateway.")]);
    let spawned = conn
        .ok("spawn_agent", json!({"name": "helper", "task": "Say hi."}))
        .await;
    // The alias as resolved, in the spawn result and the record: the id the request sent.
    assert_eq!(
        (&spawned["model"], &spawned["provider"]),
        (&json!("claude-sonnet-5-5"), &json!("anthropic")),
        "{spawned}"
    );
    let id = spawned["agent_id"].as_str().unwrap();
    let record = conn.wait(&[id], 20_000).await["agents"][0].clone();
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(record["model"], "claude-sonnet-5-5");
    assert_eq!(record["provider"], "anthropic");
    let request = &gateway.requests()[0];
    assert_eq!(request.body["model"], "claude-sonnet-5-5");
    assert_eq!(auth_headers(request), (Some(format!("Bearer {KEY}")), None));
    // OPENAI_BASE_URL does the same for `openai` agents.
    gateway.push([Step::text("Hello from the OpenAI side.")]);
    let id = conn.spawn("openai-helper", "Say hi.").await;
    let record = conn.wait(&[&id], 20_000).await["agents"][0].clone();
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(gateway.requests()[1].body["model"], "gpt-5.4");
    assert_eq!(
        (&record["model"], &record["provider"]),
        (&json!("gpt-5.4"), &json!("openai"))
    );
    conn.close().await;
}

/// `check` says which variable and header it will use, and where the endpoint came from;
/// never the value.
fn check_names_the_gateway_and_its_variables(ws: &TempWorkspace, env: &[(&str, &str)], base: &str) {
    let mut command = Command::new(binary::BIN);
    command.args(["check", "--json"]).arg(ws.path());
    for var in PROVIDER_VARS {
        command.env_remove(var);
    }
    let out = command.envs(env.iter().copied()).output().unwrap();
    assert!(out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let agent = support::agent_named(&report, "helper");
    assert_eq!(agent["key_variable"], "ANTHROPIC_AUTH_TOKEN");
    assert_eq!(agent["auth"], "bearer");
    assert_eq!(agent["env_key"], "ANTHROPIC_API_KEY");
    assert_eq!(agent["base_url"], format!("{base}/"));
    assert_eq!(agent["base_url_source"], "ANTHROPIC_BASE_URL");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(KEY));

    let mut table = Command::new(binary::BIN);
    table.arg("check").arg(ws.path());
    for var in PROVIDER_VARS {
        table.env_remove(var);
    }
    let out = table.envs(env.iter().copied()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let port = base.rsplit(':').next().unwrap();
    assert!(
        stdout.contains(&format!(
            "anthropic (127.0.0.1:{port} via ANTHROPIC_BASE_URL)"
        )) && stdout.contains("ANTHROPIC_AUTH_TOKEN (bearer)"),
        "{stdout}"
    );

    let out = command
        .env("ANTHROPIC_API_KEY", "sk-ant-also-set")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let agent = support::agent_named(&report, "helper");
    assert_eq!(agent["key_variable"], "ANTHROPIC_API_KEY");
    assert_eq!(
        agent["auth"], "x-api-key",
        "the API key wins when both are set, with its own header"
    );
}
