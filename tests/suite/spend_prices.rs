//! Cost in every record (SPEC §5.1), through the real binary against the mocks: a run's
//! `usage.cost_usd` is what the built-in table's price makes of the tokens its provider
//! reported, worked out here by hand, on Responses, Messages and Chat Completions; a model
//! without a price has no `cost_usd` and a note; `--prices` overrides a price and adds a
//! model; the status view shows the server's spend; `check` shows the caps, `mcp-agents run` the cost, and a bad price file stops the
//! command with one line naming it.

use crate::support;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::binary::KEY_VAR;
use support::cli::{mcp_agents, text};
use support::run_kit::KEY;
use support::status as st;
use support::{ServerUnderTest, TestWorkspace};

/// An agent `name` without tools on the mock's endpoint for `wire`, asking for `model`.
fn agent(mock: &MockProvider, name: &str, wire: &str, model: &str) -> String {
    let base = match wire {
        "responses" => mock.responses_base_url(),
        "anthropic-messages" => mock.messages_base_url(),
        _ => mock.chat_base_url(),
    };
    format!(
        "---\nname: {name}\ndescription: Answers once.\nmodel: {model}\nmodel_provider: custom\n\
         base_url: {base}\nenv_key: {KEY_VAR}\nwire_api: {wire}\n---\nAnswer in one line.\n"
    )
}

/// The agents of these tests: one per wire on a model the table prices, and one on a
/// model it does not know.
fn workspace() -> TestWorkspace<'static> {
    TestWorkspace::new()
        .agent(".agents/agents/resp.md", |m, _| {
            agent(m, "resp", "responses", "gpt-5.4-mini")
        })
        .agent(".agents/agents/msgs.md", |m, _| {
            agent(m, "msgs", "anthropic-messages", "claude-opus-5")
        })
        .agent(".agents/agents/chat.md", |m, _| {
            agent(m, "chat", "chat-completions", "gpt-5.4-nano")
        })
        .agent(".agents/agents/local.md", |m, _| {
            agent(m, "local", "responses", "mock-model")
        })
}

/// Runs `name` to its end on a reply of 10,000 input and 2,000 output tokens; its record
/// and its line.
async fn run_once(s: &ServerUnderTest, name: &str) -> (Value, String) {
    s.mock.push([Step::text("Done.").with_usage(10_000, 2_000)]);
    let id = s.spawn(name, "Answer.").await;
    let done = s.wait(&[&id], 60_000).await;
    let record = done["agents"][0].clone();
    assert_eq!(record["status"], "completed", "{record}");
    (record, done["summary"].as_str().unwrap().to_owned())
}

fn assert_cost(record: &Value, line: &str, dollars: f64) {
    let cost = record["usage"]["cost_usd"].as_f64().unwrap_or(-1.0);
    assert!(
        (cost - dollars).abs() < 1e-9,
        "{dollars} expected: {record}"
    );
    assert!(line.contains(&format!("(${dollars:.4}): Done.")), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_wire_s_cost_is_what_the_table_makes_of_its_tokens() {
    let runtime = st::runtime_dir();
    let [(var, dir)] = st::env(runtime.path());
    let s = workspace().env(var, dir).stdio().await;
    // gpt-5.4-mini: 10,000 × $0.75 + 2,000 × $4.50, per million.
    let (record, line) = run_once(&s, "resp").await;
    assert_cost(&record, &line, 0.0075 + 0.009);
    // claude-opus-5: 10,000 × $5 + 2,000 × $25, per million.
    let (record, line) = run_once(&s, "msgs").await;
    assert_cost(&record, &line, 0.05 + 0.05);
    // gpt-5.4-nano on Chat Completions: 10,000 × $0.20 + 2,000 × $1.25, per million.
    let (record, line) = run_once(&s, "chat").await;
    assert_cost(&record, &line, 0.002 + 0.0025);
    // No price: no cost, a note saying why, and the line says nothing of money.
    let (record, line) = run_once(&s, "local").await;
    assert!(record["usage"].get("cost_usd").is_none(), "{record}");
    let note = record["usage"]["cost_note"].as_str().unwrap();
    assert!(
        note.contains("no price is known for the model `mock-model`"),
        "{note}"
    );
    assert!(note.contains("--prices FILE"), "{note}");
    assert!(!line.contains('$'), "{line}");

    let spend = &s.wait(&[record["agent_id"].as_str().unwrap()], 0).await["server_spend"];
    assert_eq!(spend["tokens"], 48_000, "{spend}");
    assert_eq!(spend["unpriced_tokens"], 12_000, "{spend}");
    let total = spend["cost_usd"].as_f64().unwrap();
    assert!((total - 0.121).abs() < 1e-9, "{spend}");
    assert!(spend.get("max_tokens").is_none() && spend.get("max_cost_usd").is_none());

    // The live view says the same: `status --json` and its server line.
    let snapshots = st::snapshots(s.ws.path(), runtime.path()).await;
    assert_eq!(&snapshots[0]["server"]["server_spend"], spend);
    let human = st::status(s.ws.path(), runtime.path(), false).await;
    assert!(human.stdout.contains("· $0.12 spent"), "{}", human.stdout);
    s.close().await;
}

/// A price file in LiteLLM's format: gpt-5.4-mini at another price, and the mock's model
/// added under `provider/model`.
fn prices_file(dir: &std::path::Path) -> String {
    let prices = json!({
        "sample_spec": {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0},
        "gpt-5.4-mini": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06,
                         "cache_read_input_token_cost": 1e-07,
                         "litellm_provider": "openai", "mode": "chat"},
        "custom/mock-model": {"input_cost_per_token": 3e-07, "output_cost_per_token": 6e-07,
                              "litellm_provider": "openai", "mode": "chat"},
    });
    let path = dir.join("model_prices_and_context_window.json");
    std::fs::write(&path, prices.to_string()).unwrap();
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prices_file_overrides_a_price_and_adds_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let file = prices_file(dir.path());
    let s = workspace().env("MCP_AGENTS_PRICES", &file).stdio().await;
    // gpt-5.4-mini at the file's price: 10,000 × $1 + 2,000 × $2, per million.
    let (record, line) = run_once(&s, "resp").await;
    assert_cost(&record, &line, 0.01 + 0.004);
    // mock-model, which only the file prices: 10,000 × $0.30 + 2,000 × $0.60.
    let (record, line) = run_once(&s, "local").await;
    assert_cost(&record, &line, 0.003 + 0.0012);
    // The rest still from the table.
    let (record, line) = run_once(&s, "chat").await;
    assert_cost(&record, &line, 0.002 + 0.0025);
    s.close().await;

    // `mcp-agents run --prices FILE` says the cost in its summary.
    let w = workspace().written().await;
    w.mock.push([Step::text("Done.").with_usage(10_000, 2_000)]);
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .args(["run", "--workspace"])
        .arg(w.path())
        .args(["--prices", &file, "local", "Answer."])
        .env(KEY_VAR, KEY)
        .env_remove("RUST_LOG")
        .output()
        .await
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("10000 input tokens and 2000 output tokens, $0.0042"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_shows_the_caps_and_a_bad_price_file_stops_the_command() {
    let w = workspace().written().await;
    let ws = w.path().to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = prices_file(dir.path());
    let out = mcp_agents(&[
        "check",
        ws,
        "--json",
        "--max-tokens",
        "1000",
        "--max-cost-usd",
        "2.5",
        "--prices",
        &file,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["server"],
        json!({"tokens": 0, "cost_usd": 0.0, "max_tokens": 1000, "max_cost_usd": 2.5})
    );
    // Under a cap in dollars, an agent whose model has no price would be refused: check
    // says so, as it says any other thing a spawn would miss (not a rejection).
    let out = mcp_agents(&["check", ws, "--json", "--max-cost-usd", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let agents = report["agents"].as_array().unwrap();
    // (The key is not set here either: only the price needs are looked at.)
    let prices_needed = |name: &str| -> Vec<Value> {
        let agent = agents.iter().find(|a| a["name"] == name).unwrap();
        let needs = agent["needs"].as_array().unwrap().iter();
        needs.filter(|n| n["kind"] == "price").cloned().collect()
    };
    assert_eq!(
        prices_needed("local"),
        [json!({"kind": "price", "name": "mock-model", "for": "--max-cost-usd"})]
    );
    assert!(prices_needed("resp").is_empty());
    let warned = report["warnings"].as_array().unwrap().iter().any(|w| {
        w["agent"] == "local"
            && w["effect"] == "will_fail_at_spawn"
            && w["reason"]
                .as_str()
                .unwrap()
                .contains("no price is known for the model")
    });
    assert!(warned, "{report}");
    let out = mcp_agents(&["check", ws, "--wide", "--max-tokens", "1000"]);
    assert!(
        text(&out.stdout).contains("server caps: --max-tokens 1000\n"),
        "{}",
        text(&out.stdout)
    );

    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "{\"gpt-5.4\": {\"input_cost_per_token\": \"cheap\", \
                          \"output_cost_per_token\": 1e-06}}",
    )
    .unwrap();
    let out = mcp_agents(&["check", ws, "--prices", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("error: --prices "), "{stderr}");
    assert!(
        stderr.contains("entry \"gpt-5.4\": input_cost_per_token is \"cheap\""),
        "{stderr}"
    );
    for refused in ["0", "-1", "five", "NaN"] {
        let out = mcp_agents(&["check", ws, &format!("--max-cost-usd={refused}")]);
        assert_eq!(out.status.code(), Some(2), "{refused}");
        assert!(
            text(&out.stderr).contains("not an amount of US dollars"),
            "{refused}"
        );
    }
}
