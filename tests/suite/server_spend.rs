//! The server-wide caps, set by the person who runs the server (SPEC §5.1), through the
//! real binary against the mocks: `--max-tokens` stops eight agents in tool loops at their
//! next request boundary with their partial results kept and nothing left running, and
//! refuses new spawns and resumes; `--max-cost-usd` does the same on Responses and on
//! Messages, counting cache reads at their own price, and refuses a model without a price.

use crate::support;

use std::time::Duration;

use mcp_agents::testkit::Step;
use serde_json::{Value, json};
use support::builders::FixtureAgent;
use support::children::{self, processes_with, stdio_child};
use support::{ServerUnderTest, TestWorkspace};

/// The agents of the token-cap test.
const AGENTS: usize = 8;

/// Tokens one scripted tool-call reply reports on Responses (the mock's default usage).
const REPLY_TOKENS: u64 = 100 + 20;

async fn all_ended(s: &ServerUnderTest, ids: &[String]) -> Vec<Value> {
    let targets: Vec<&str> = ids.iter().map(String::as_str).collect();
    let done = s.wait(&targets, 120_000).await;
    assert_eq!(done["timed_out"], false, "{done}");
    done["agents"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_agents_in_tool_loops_stop_at_the_servers_token_cap_with_their_work_kept() {
    let cap: u64 = 3_600;
    let mut workspace = TestWorkspace::new()
        .marked("tokencap")
        .env("MCP_AGENTS_MAX_TOKENS", &cap.to_string());
    for i in 0..AGENTS {
        workspace = workspace.with(FixtureAgent::named(&format!("looper{i}")));
    }
    let s = workspace.stdio().await;
    // Every reply asks for one more tool call and says where it is: a loop that never ends
    // by itself. Each takes half a second, so every agent is in its loop before the cap.
    s.mock.push((0..200).map(|n| {
        Step::tool_call("fx__echo", json!({"text": format!("{n}")}))
            .with_text(&format!("Progress note {n}."))
            .delayed(Duration::from_millis(500))
    }));
    let mut ids = Vec::new();
    for i in 0..AGENTS {
        ids.push(s.spawn(&format!("looper{i}"), "Loop over the files.").await);
    }
    let records = all_ended(&s, &ids).await;
    let requests = s.mock.requests().len() as u64;
    for record in &records {
        assert_eq!(record["error"]["code"], "budget_exceeded", "{record}");
        let message = record["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("its --max-tokens of {cap}")),
            "{message}"
        );
        assert!(message.contains("no further model request"), "{message}");
        let partial = record["partial_result"].as_str().unwrap_or_default();
        assert!(
            partial.starts_with("Progress note"),
            "the work is kept: {record}"
        );
    }
    // Stopped at a request boundary: no more requests than replies the cap let through,
    // overshooting by at most the replies in flight (one per agent).
    let last = s.wait(&[&ids[0]], 0).await;
    let spend = &last["server_spend"];
    assert_eq!(spend["max_tokens"], cap, "{spend}");
    let tokens = spend["tokens"].as_u64().unwrap();
    eprintln!("{AGENTS} agents, cap {cap}: {requests} requests, {tokens} tokens counted");
    assert_eq!(
        tokens,
        requests * REPLY_TOKENS,
        "every reply counted once: {spend}"
    );
    assert!(tokens >= cap, "{spend}");
    assert!(
        tokens < cap + AGENTS as u64 * REPLY_TOKENS,
        "overshot by more than the replies in flight: {spend}"
    );
    // Nothing runs after: the agents' children are gone while the server still serves.
    children::assert_no_process_left(&s.marker, 10).await;
    assert!(processes_with(&s.marker).is_empty());

    // A new spawn and a resume are refused, naming the cap and what was spent, and ask no
    // provider.
    let (code, message) = s
        .err("spawn_agent", json!({"name": "looper0", "task": "Again."}))
        .await;
    assert_eq!(code, "budget_exceeded");
    assert!(
        message.contains(&format!("used {tokens} tokens")),
        "{message}"
    );
    assert!(
        message.contains(&format!("--max-tokens of {cap}")),
        "{message}"
    );
    let (code, _) = s
        .err("send_input", json!({"target": ids[1], "message": "Go on."}))
        .await;
    assert_eq!(code, "budget_exceeded");
    assert_eq!(s.mock.requests().len() as u64, requests);
    s.close().await;
}

/// About 2,500 tokens of instructions (the mock counts a token per 4 bytes), so that every
/// request after the first reads its prefix from the prompt cache.
fn long_instructions() -> String {
    (0..160)
        .map(|i| format!("Rule {i:03}: read the file, then say what you found and why. "))
        .collect()
}

/// A looping agent `name` on `wire` with model `model`, its fixture child marked.
fn priced_agent(
    wire: &'static str,
    model: &'static str,
    name: &'static str,
) -> TestWorkspace<'static> {
    TestWorkspace::new()
        .marked("costcap")
        .agent(&format!(".agents/agents/{name}.md"), move |mock, marker| {
            let child = stdio_child("fx", &[], marker, "");
            children::agent_on(wire, mock, name, &child, "max_turns: 100")
                .replace("model: mock-model", &format!("model: {model}"))
                .replace("Use your tools.", &long_instructions())
        })
        .agent(".agents/agents/unpriced.md", |mock, _| {
            children::agent_on("responses", mock, "unpriced", "    {}\n", "")
                .replace("mcp_servers:\n    {}\n", "")
        })
}

/// What `usage` costs at `[input, cache read, cache write, output]` USD per million, worked
/// out here from the record's own counts.
fn by_hand(usage: &Value, [input, read, write, output]: [f64; 4]) -> f64 {
    let n = |key: &str| usage[key].as_u64().unwrap() as f64;
    let plain = n("input_tokens") - n("cache_read_tokens") - n("cache_write_tokens");
    (plain * input
        + n("cache_read_tokens") * read
        + n("cache_write_tokens") * write
        + n("output_tokens") * output)
        / 1e6
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cap_in_dollars_stops_a_run_on_responses_and_on_messages_with_cache_reads_priced() {
    // gpt-5.4: $2.50 input, $0.25 cached, no write premium, $15 output (the built-in table);
    // claude-sonnet-5: $2 input, $0.20 cache hits, $2.50 5-minute writes, $10 output.
    let cases = [
        ("responses", "gpt-5.4", [2.5, 0.25, 2.5, 15.0]),
        (
            "anthropic-messages",
            "claude-sonnet-5",
            [2.0, 0.2, 2.5, 10.0],
        ),
    ];
    for (wire, model, price) in cases {
        cost_cap_on(wire, model, price).await;
    }
}

async fn cost_cap_on(wire: &'static str, model: &'static str, price: [f64; 4]) {
    let cap = 0.02;
    let s = priced_agent(wire, model, "reader")
        .env("MCP_AGENTS_MAX_COST_USD", &cap.to_string())
        .stdio()
        .await;
    s.mock.emulate_prompt_caching();
    s.mock.push((0..60).map(|n| {
        Step::tool_call("fx__echo", json!({"text": format!("{n}")}))
            .with_text(&format!("Read part {n}."))
            .with_usage(0, 200)
    }));
    let id = s.spawn("reader", "Read everything.").await;
    let done = s.wait(&[&id], 120_000).await;
    let record = &done["agents"][0];
    assert_eq!(
        record["error"]["code"], "budget_exceeded",
        "{wire}: {record}"
    );
    let message = record["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("its --max-cost-usd of $0.0200"),
        "{message}"
    );
    assert!(
        record["partial_result"]
            .as_str()
            .unwrap()
            .starts_with("Read part")
    );
    let usage = &record["usage"];
    assert!(
        usage["cache_read_tokens"].as_u64().unwrap() > 0,
        "{wire}: {usage}"
    );
    let cost = usage["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - by_hand(usage, price)).abs() < 1e-8,
        "{wire}: {cost} {usage}"
    );
    let uncached = by_hand(usage, [price[0], price[0], price[0], price[3]]);
    assert!(
        cost < uncached,
        "{wire}: cache reads cost less than input: {cost} {uncached}"
    );
    assert!(cost >= cap, "{wire}: stopped only at the cap: {cost}");
    let spend = &done["server_spend"];
    assert_eq!(spend["cost_usd"], usage["cost_usd"], "{wire}: {spend}");
    assert_eq!(spend["max_cost_usd"], cap, "{wire}: {spend}");
    let line = done["summary"].as_str().unwrap();
    assert!(line.contains(&format!("(${cost:.4})")), "{line}");

    // Spent: the next spawn is refused naming the cap and the amount, before any request.
    let requests = s.mock.requests().len();
    let (code, message) = s
        .err("spawn_agent", json!({"name": "reader", "task": "Again."}))
        .await;
    assert_eq!(code, "budget_exceeded");
    assert!(message.contains(&format!("spent ${cost:.4}")), "{message}");
    assert_eq!(s.mock.requests().len(), requests);
    s.close_once_children_gone(10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_a_cap_in_dollars_a_model_without_a_price_cannot_be_spawned() {
    let s = priced_agent("responses", "gpt-5.4", "reader")
        .env("MCP_AGENTS_MAX_COST_USD", "5")
        .stdio()
        .await;
    let (code, message) = s
        .err("spawn_agent", json!({"name": "unpriced", "task": "Work."}))
        .await;
    assert_eq!(code, "budget_exceeded");
    assert!(
        message.contains("no price is known for the model `mock-model`"),
        "{message}"
    );
    assert!(message.contains("--prices FILE"), "{message}");
    assert!(s.mock.requests().is_empty());
    s.close().await;
}
