//! Fallback models through the real binary (SPEC §5.1 `fallback_models`): when the run's
//! model cannot answer before the run's first reply (a rate limit that outlasts the retries,
//! a quota refusal, an overload, an unknown or retired model), the next model of the same
//! provider and wire is asked; the record's `model_attempts` says which were left and why,
//! and `model` names the one that answered. A refusal of the request itself falls back to
//! nothing. The error bodies are the providers' own.

use crate::support;

use std::time::Duration;

use mcp_agents::limits::PROVIDER_RETRIES;
use mcp_agents::testkit::{MockProvider, MockWire, Step};
use serde_json::{Value, json};
use support::TempWorkspace;
use support::binary::{KEY_VAR, RunRecord, run_json};
use support::cli::mcp_agents;
use support::run_kit::KEY;

/// OpenAI's 429 when the account has no credit left (its error-codes guide, "You exceeded
/// your current quota"): never retried.
fn insufficient_quota() -> Step {
    Step::openai_error(
        429,
        "insufficient_quota",
        Some("insufficient_quota"),
        "You exceeded your current quota, please check your plan and billing details. For more \
         information on this error, read the docs: \
         https://platform.openai.com/docs/guides/error-codes/api-errors.",
    )
}

/// OpenAI's 404 for a model it does not serve (or no longer serves).
fn openai_model_not_found(model: &str) -> Step {
    Step::openai_error(
        404,
        "invalid_request_error",
        Some("model_not_found"),
        &format!("The model `{model}` does not exist or you do not have access to it."),
    )
}

/// Anthropic's 404 for a retired or unknown model: `not_found_error`, "model: <id>".
fn anthropic_model_not_found(model: &str) -> Step {
    Step::anthropic_error(404, "not_found_error", &format!("model: {model}"))
}

/// An agent `name` on `wire` at the mock (a gateway: provider `custom`), its model
/// `primary` and the fallbacks `fallbacks`.
fn agent(ws: &TempWorkspace, name: &str, base: &str, wire: &str, fallbacks: &[&str]) {
    let listed: Vec<String> = fallbacks.iter().map(|f| format!("custom/{f}")).collect();
    ws.write(
        &format!(".agents/agents/{name}.md"),
        format!(
            "---\nname: {name}\ndescription: Falls back.\nmodel: primary\n\
             fallback_models: [{}]\nmodel_provider: custom\nbase_url: {base}\n\
             env_key: {KEY_VAR}\nwire_api: {wire}\n---\nYou answer.\n",
            listed.join(", ")
        ),
    );
}

async fn run(ws: &TempWorkspace, name: &str) -> RunRecord {
    run_json(
        ws.path(),
        name,
        "Answer.",
        &[(KEY_VAR, KEY)],
        Duration::from_secs(60),
    )
    .await
}

/// The model each request the mock received asked for, in order.
fn models_asked(mock: &MockProvider) -> Vec<String> {
    mock.requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The `model_attempts` of `record` as `(model, message)`, each checked to be a
/// `provider_error` of provider `custom`.
fn attempts(record: &Value) -> Vec<(String, String)> {
    record["model_attempts"]
        .as_array()
        .unwrap_or_else(|| panic!("no model_attempts: {record}"))
        .iter()
        .map(|a| {
            assert_eq!(a["provider"], "custom", "{a}");
            assert_eq!(a["error"]["code"], "provider_error", "{a}");
            (
                a["model"].as_str().unwrap().to_owned(),
                a["error"]["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_that_outlasts_the_retries_falls_back_to_the_next_model() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = TempWorkspace::new();
    agent(
        &ws,
        "limited",
        &mock.responses_base_url(),
        "responses",
        &["second", "third"],
    );
    // `retry-after: 0`: every retry is taken at once, and each is refused again.
    let refusals = (0..=PROVIDER_RETRIES).map(|_| Step::rate_limited(MockWire::Responses, "0"));
    mock.push(refusals);
    mock.push([Step::text("Second here.")]);
    let ran = run(&ws, "limited").await;
    let record = &ran.record;
    assert!(ran.success, "{record}\n{}", ran.stderr);
    assert_eq!(record["result"], "Second here.");
    assert_eq!(record["model"], "second", "the model that answered");
    let left = attempts(record);
    assert_eq!(left.len(), 1, "{record}");
    assert_eq!(left[0].0, "primary");
    assert!(
        left[0].1.starts_with("rate limited: ") && left[0].1.contains("HTTP 429"),
        "{}",
        left[0].1
    );
    let mut expected = vec!["primary".to_owned(); PROVIDER_RETRIES as usize + 1];
    expected.push("second".to_owned());
    assert_eq!(models_asked(&mock), expected);
    assert_eq!(record["turns"], 1, "a fallback is the same turn");
    assert!(
        ran.stderr.contains("falling back to second"),
        "{}",
        ran.stderr
    );

    // A rate limit whose wait is longer than a request may take outlasts the retries at
    // once (Anthropic's, on Messages).
    agent(
        &ws,
        "waits",
        &mock.messages_base_url(),
        "anthropic-messages",
        &["second"],
    );
    mock.push([
        Step::rate_limited(MockWire::Messages, "3600"),
        Step::text("Second again."),
    ]);
    let before = mock.requests().len();
    let ran = run(&ws, "waits").await;
    assert_eq!(ran.record["model"], "second", "{}", ran.record);
    assert!(attempts(&ran.record)[0].1.starts_with("rate limited: "));
    assert_eq!(models_asked(&mock)[before..], ["primary", "second"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quota_refusal_and_an_overload_fall_back_in_order() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = TempWorkspace::new();
    agent(
        &ws,
        "broke",
        &mock.chat_base_url(),
        "chat-completions",
        &["second", "third"],
    );
    // The first model is out of credit (never retried); the second is overloaded past the
    // retries (HTTP 503, as OpenAI answers `server_is_overloaded`); the third answers.
    mock.push([insufficient_quota()]);
    let overloaded = (0..=PROVIDER_RETRIES).map(|_| {
        Step::openai_error(
            503,
            "server_error",
            Some("server_is_overloaded"),
            "The server is overloaded or not ready yet.",
        )
        .with_header("retry-after", "0")
    });
    mock.push(overloaded);
    mock.push([Step::text("Third here.")]);
    let ran = run(&ws, "broke").await;
    let record = &ran.record;
    assert!(ran.success, "{record}\n{}", ran.stderr);
    assert_eq!(record["model"], "third");
    let left = attempts(record);
    assert_eq!(
        left.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>(),
        ["primary", "second"]
    );
    assert!(
        left[0].1.starts_with("out of quota or credit: ")
            && left[0].1.contains("You exceeded your current quota"),
        "{}",
        left[0].1
    );
    assert!(left[1].1.starts_with("overloaded: "), "{}", left[1].1);
    let asked = models_asked(&mock);
    assert_eq!(asked[0], "primary", "a quota refusal is not retried");
    assert_eq!(
        asked[1..asked.len() - 1],
        vec!["second"; PROVIDER_RETRIES as usize + 1]
    );
    assert_eq!(asked.last().unwrap(), "third");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_or_retired_model_falls_back_on_both_apis() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = TempWorkspace::new();
    agent(
        &ws,
        "retired",
        &mock.messages_base_url(),
        "anthropic-messages",
        &["second"],
    );
    agent(
        &ws,
        "unknown",
        &mock.responses_base_url(),
        "responses",
        &["second"],
    );
    for (name, refusal) in [
        ("retired", anthropic_model_not_found("primary")),
        ("unknown", openai_model_not_found("primary")),
    ] {
        mock.push([refusal, Step::text("Second here.")]);
        let before = mock.requests().len();
        let ran = run(&ws, name).await;
        let record = &ran.record;
        assert!(ran.success, "{name}: {record}\n{}", ran.stderr);
        assert_eq!(record["model"], "second", "{name}");
        let left = attempts(record);
        assert_eq!(left.len(), 1, "{name}: {record}");
        assert!(
            left[0].1.starts_with("unknown or retired model: ") && left[0].1.contains("primary"),
            "{name}: {}",
            left[0].1
        );
        assert_eq!(
            models_asked(&mock)[before..],
            ["primary", "second"],
            "{name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_of_the_request_itself_falls_back_to_nothing() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = TempWorkspace::new();
    agent(
        &ws,
        "strict",
        &mock.messages_base_url(),
        "anthropic-messages",
        &["second"],
    );
    // A 400 of our own making: another model would refuse the same request. (A request to
    // a fallback would find the script empty, and the models asked would show it.)
    mock.push([Step::anthropic_error(
        400,
        "invalid_request_error",
        "messages.0.content: Field required",
    )]);
    let ran = run(&ws, "strict").await;
    let record = &ran.record;
    assert!(!ran.success);
    assert_eq!(record["status"], "failed", "{record}");
    assert_eq!(record["error"]["code"], "provider_error");
    assert!(
        record["error"]["message"]
            .as_str()
            .unwrap()
            .contains("messages.0.content: Field required"),
        "{record}"
    );
    assert_eq!(record["model"], "primary");
    assert!(record.get("model_attempts").is_none(), "{record}");
    assert_eq!(models_asked(&mock), ["primary"]);

    // The same agent does fall back when its model is overloaded past the retries
    // (Anthropic's 529 `overloaded_error`): the refusal above was the reason, not the agent.
    let overloaded = (0..=PROVIDER_RETRIES).map(|_| {
        Step::anthropic_error(529, "overloaded_error", "Overloaded").with_header("retry-after", "0")
    });
    mock.push(overloaded);
    mock.push([Step::text("Second here.")]);
    let ran = run(&ws, "strict").await;
    assert_eq!(ran.record["model"], "second", "{}", ran.record);
    assert!(attempts(&ran.record)[0].1.starts_with("overloaded: "));

    // A failure after the run's first reply does not fall back either: the model that
    // answered keeps the run.
    agent(
        &ws,
        "answered",
        &mock.responses_base_url(),
        "responses",
        &["second"],
    );
    mock.push([Step::tool_call("nothing", json!({})), insufficient_quota()]);
    let before = mock.requests().len();
    let ran = run(&ws, "answered").await;
    assert_eq!(ran.record["status"], "failed", "{}", ran.record);
    assert!(ran.record.get("model_attempts").is_none(), "{}", ran.record);
    assert_eq!(models_asked(&mock)[before..], ["primary", "primary"]);
}

#[test]
fn check_keeps_fallbacks_on_the_same_provider_and_says_why_it_drops_the_others() {
    let ws = TempWorkspace::new();
    ws.write(
        ".agents/agents/mixed.md",
        "---\nname: mixed\ndescription: Mixed fallbacks.\nmodel: gpt-5\nmodel_provider: openai\n\
         fallback_models: [openai/gpt-5-mini, anthropic/claude-haiku-4-5]\n---\nYou answer.\n",
    );
    // The later entries of a Copilot list are its fallbacks, on the same terms.
    ws.write(
        ".github/agents/listed.agent.md",
        "---\ndescription: Lists models.\nmodel: ['GPT-5 (copilot)', 'GPT-5 mini (copilot)', \
         'Claude Haiku 4.5 (copilot)']\n---\nYou answer.\n",
    );
    let dir = ws.path().display().to_string();
    let out = mcp_agents(&["check", &dir, "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{report}");
    for agent in report["agents"].as_array().unwrap() {
        assert_eq!(agent["model"], "gpt-5", "{agent}");
        assert_eq!(agent["fallback_models"], json!(["gpt-5-mini"]), "{agent}");
    }
    let reasons: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["reason"].as_str().unwrap())
        .collect();
    for dropped in ["anthropic/claude-haiku-4-5", "Claude Haiku 4.5 (copilot)"] {
        assert!(
            reasons
                .iter()
                .any(|r| r.contains(&format!("`{dropped}` is dropped"))
                    && r.contains("another provider")
                    && r.contains("same provider and wire")),
            "{dropped}: {reasons:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fallback_models_replies_are_priced_at_its_own_price() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = TempWorkspace::new();
    agent(
        &ws,
        "priced",
        &mock.responses_base_url(),
        "responses",
        &["second"],
    );
    // LiteLLM's format: the gateway's two models at different prices.
    let prices = json!({
        "custom/primary": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06},
        "custom/second": {"input_cost_per_token": 3e-06, "output_cost_per_token": 6e-06},
    });
    let file = ws.path().join("prices.json");
    std::fs::write(&file, prices.to_string()).unwrap();
    mock.push([
        insufficient_quota(),
        Step::text("Second here.").with_usage(10_000, 2_000),
    ]);
    let ran = run_json(
        ws.path(),
        "priced",
        "Answer.",
        &[
            (KEY_VAR, KEY),
            ("MCP_AGENTS_PRICES", file.to_str().unwrap()),
        ],
        Duration::from_secs(60),
    )
    .await;
    let record = &ran.record;
    assert!(ran.success, "{record}\n{}", ran.stderr);
    assert_eq!(record["model"], "second");
    // 10,000 × $3 + 2,000 × $6 per million: second's price, not primary's ($0.014).
    let cost = record["usage"]["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.042).abs() < 1e-9, "{record}");
}
