//! A run's budgets and its tool rounds, through the real binary with real child servers
//! (SPEC §3.1, §6 steps 3 and 5): `max_tool_calls`, `max_run_tokens` and `max_run_seconds`
//! are never overshot by more than one provider reply (the child's own log counts its
//! calls, the mock counts its requests); the deadline cancels what is in flight and the
//! child's processes are gone; the calls of one reply run concurrently, their results in
//! call order, and an interrupt cancels them all. The tool rounds and the call and token
//! budgets run on Responses and on Chat Completions.

use crate::support;

use std::time::{Duration, Instant};

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::binary::Connection;
use support::builders::FixtureAgent;
use support::children::processes_with;
use support::run_kit::function_outputs;
use support::{ServerUnderTest, TestWorkspace};

/// The wires the tool rounds and budgets are tested on (`wire_api` values).
const WIRES: [&str; 2] = ["responses", "chat-completions"];

/// A server whose one agent is `agent`, its fixture child logging its calls, its processes
/// marked with a marker tagged `tag`.
async fn serve(agent: FixtureAgent, tag: &str) -> ServerUnderTest {
    TestWorkspace::new()
        .marked(tag)
        .with(agent.logging_calls())
        .stdio()
        .await
}

/// The tool results of request `n`.
fn outputs(mock: &MockProvider, n: usize) -> Vec<String> {
    function_outputs(&mock.requests()[n].body)
}

async fn wait_done(c: &Connection, id: &str) -> Value {
    let done = c.wait(&[id], 60_000).await;
    assert_eq!(done["timed_out"], false, "{done}");
    done["agents"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_that_would_pass_max_tool_calls_is_not_made() {
    for wire in WIRES {
        max_tool_calls_on(wire).await;
    }
}

async fn max_tool_calls_on(wire: &str) {
    let capped = FixtureAgent::named("capped").on(wire);
    let s = serve(capped.lines("max_tool_calls: 3"), "calls").await;
    s.mock.push([
        Step::tool_calls(vec![
            ("fx__echo", json!({"text": "1"})),
            ("fx__echo", json!({"text": "2"})),
        ])
        .with_text("Working on it."),
        Step::tool_calls(vec![
            ("fx__echo", json!({"text": "3"})),
            ("fx__echo", json!({"text": "4"})),
        ]),
        Step::text("never asked for"),
    ]);
    let id = s.spawn("capped", "Call a lot.").await;
    let record = wait_done(&s, &id).await;
    assert_eq!(record["error"]["code"], "budget_exceeded", "{record}");
    let message = record["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("made 3 tool calls, its max_tool_calls of 3, and asked for 1 more"),
        "{message}"
    );
    assert_eq!(
        s.calls_logged().len(),
        3,
        "the child received exactly the budget"
    );
    assert_eq!(
        s.mock.requests().len(),
        2,
        "no request after the budget ran out"
    );
    assert_eq!(record["usage"]["tool_calls"], 3);
    assert_eq!(record["partial_result"], "Working on it.");

    // A resume starts a fresh budget; the history says which call was not made.
    s.ok("send_input", json!({"target": id, "message": "Go on."}))
        .await;
    let resumed = wait_done(&s, &id).await;
    assert_eq!(resumed["status"], "completed", "{resumed}");
    assert_eq!(
        outputs(&s.mock, 2),
        [
            "echo: 1",
            "echo: 2",
            "echo: 3",
            "Error: not made: the run has used all 3 tool calls of its budget (max_tool_calls)"
        ]
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_default_budget_applies_to_a_definition_that_sets_none() {
    let s = TestWorkspace::new()
        .marked("default")
        .with(FixtureAgent::named("plain").logging_calls())
        .env("MCP_AGENTS_MAX_TOOL_CALLS", "2")
        .stdio()
        .await;
    s.mock
        .push(vec![Step::tool_call("fx__echo", json!({"text": "x"})); 3]);
    let id = s.spawn("plain", "Call a lot.").await;
    let record = wait_done(&s, &id).await;
    assert_eq!(record["error"]["code"], "budget_exceeded", "{record}");
    assert!(
        record["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_tool_calls of 2"),
        "{record}"
    );
    assert_eq!(
        s.calls_logged().len(),
        2,
        "the child received exactly the server's budget"
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_run_tokens_stops_the_run_after_the_reply_that_passes_it() {
    for wire in WIRES {
        max_run_tokens_on(wire).await;
    }
}

async fn max_run_tokens_on(wire: &str) {
    let s = serve(
        FixtureAgent::named("frugal")
            .on(wire)
            .lines("max_run_tokens: 250"),
        "tokens",
    )
    .await;
    // 120 tokens per reply: 120, 240, then 360 passes 250.
    s.mock.push(vec![
        Step::tool_call("fx__echo", json!({"text": "x"}))
            .with_usage(100, 20);
        4
    ]);
    let id = s.spawn("frugal", "Spend.").await;
    let record = wait_done(&s, &id).await;
    assert_eq!(record["error"]["code"], "budget_exceeded", "{record}");
    let message = record["error"]["message"].as_str().unwrap();
    assert!(message.contains("used 360 tokens"), "{message}");
    assert!(message.contains("max_run_tokens of 250"), "{message}");
    assert_eq!(s.mock.requests().len(), 3, "over by one reply at most");
    assert_eq!(
        s.calls_logged().len(),
        2,
        "the passing reply's call is not run"
    );
    assert_eq!(
        record["usage"]["input_tokens"].as_u64().unwrap()
            + record["usage"]["output_tokens"].as_u64().unwrap(),
        360
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_run_seconds_cancels_a_tool_call_in_flight_and_the_child_is_gone() {
    let s = serve(
        FixtureAgent::named("timed").lines("max_run_seconds: 2"),
        "seconds",
    )
    .await;
    s.mock
        .push([Step::tool_call("fx__sleep", json!({"ms": 60_000}))]);
    let spawned = Instant::now();
    let id = s.spawn("timed", "Sleep long.").await;
    // The call's 60 s bound is shown as what the run's 2 s leave of it.
    let calling = s.wait_for_phase(&id, "tool_call").await;
    let remaining = calling["activity"]["operation_timeout_remaining_ms"]
        .as_u64()
        .unwrap();
    assert!(remaining <= 2_000, "{calling}");
    let record = wait_done(&s, &id).await;
    let took = spawned.elapsed();
    assert_eq!(record["error"]["code"], "budget_exceeded", "{record}");
    let message = record["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("max_run_seconds of 2 s") && message.contains("tool calls in flight"),
        "{message}"
    );
    assert!(
        took < Duration::from_secs(3),
        "failed {took:?} after the spawn"
    );
    assert!(
        record["total_elapsed_ms"].as_u64().unwrap() < 3000,
        "{record}"
    );
    // The run is terminal only once its children are shut down.
    assert_eq!(
        processes_with(&s.marker),
        Vec::<u32>::new(),
        "the child's group is gone"
    );
    assert_eq!(s.calls_logged(), ["sleep"]);
    assert_eq!(
        record["tools_used"],
        json!([{"tool": "fx__sleep", "calls": 1, "errors": 1}])
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_run_seconds_cancels_a_model_request_in_flight() {
    let s = serve(
        FixtureAgent::named("waiting").lines("max_run_seconds: 1"),
        "request",
    )
    .await;
    s.mock.push([Step::Hang]);
    let spawned = Instant::now();
    let id = s.spawn("waiting", "Think.").await;
    let record = wait_done(&s, &id).await;
    assert_eq!(record["error"]["code"], "budget_exceeded", "{record}");
    assert!(
        record["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the model request in flight was cancelled"),
        "{record}"
    );
    let took = spawned.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "failed {took:?} after the spawn"
    );
    assert_eq!(s.mock.requests().len(), 1);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_run_seconds_does_not_wait_for_a_child_slow_to_exit() {
    // The child takes 10 s to exit once its input ends, twice the shutdown bound.
    let lingering = FixtureAgent::named("lingering")
        .args(&["--linger-ms", "10000"])
        .lines("max_run_seconds: 1");
    let s = serve(lingering, "linger").await;
    s.mock
        .push([Step::tool_call("fx__sleep", json!({"ms": 60_000}))]);
    let spawned = Instant::now();
    let id = s.spawn("lingering", "Sleep long.").await;
    let record = wait_done(&s, &id).await;
    let took = spawned.elapsed();
    assert_eq!(record["error"]["code"], "budget_exceeded", "{record}");
    assert!(
        took < Duration::from_secs(2),
        "failed {took:?} after the spawn"
    );
    // Cut short, the shutdown killed the child rather than waiting for it.
    assert_eq!(
        processes_with(&s.marker),
        Vec::<u32>::new(),
        "the child's group is gone"
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calls_of_one_reply_run_concurrently_with_results_in_call_order() {
    for wire in WIRES {
        concurrent_calls_on(wire).await;
    }
}

async fn concurrent_calls_on(wire: &str) {
    let s = serve(FixtureAgent::named("parallel").on(wire), "parallel").await;
    s.mock.push([
        Step::tool_calls(vec![
            ("fx__sleep", json!({"ms": 1000})),
            ("fx__sleep", json!({"ms": 1000})),
        ]),
        Step::tool_calls(vec![
            ("fx__sleep", json!({"ms": 500})),
            ("fx__echo", json!({"text": "second, done first"})),
        ]),
        Step::text("done"),
    ]);
    let id = s.spawn("parallel", "Sleep twice.").await;
    let record = wait_done(&s, &id).await;
    assert_eq!(record["status"], "completed", "{record}");
    let requests = s.mock.requests();
    let round = requests[1].received.duration_since(requests[0].received);
    assert!(
        round < Duration::from_millis(1800),
        "two 1 s calls of one reply took {round:?}"
    );
    assert_eq!(outputs(&s.mock, 1), ["slept 1000 ms", "slept 1000 ms"]);
    assert_eq!(
        outputs(&s.mock, 2)[2..],
        ["slept 500 ms", "echo: second, done first"],
        "results in the order of the calls, not of their ends"
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_cancels_every_call_of_the_round() {
    for wire in WIRES {
        interrupted_round_on(wire).await;
    }
}

async fn interrupted_round_on(wire: &str) {
    let s = serve(FixtureAgent::named("steered").on(wire), "interrupt").await;
    s.mock.push([
        Step::tool_calls(vec![
            ("fx__sleep", json!({"ms": 30_000})),
            ("fx__sleep", json!({"ms": 30_000})),
        ]),
        Step::text("switched"),
    ]);
    let id = s.spawn("steered", "Sleep.").await;
    let activity = s.wait_for_phase(&id, "tool_call").await;
    assert_eq!(
        activity["activity"]["summary"], "Calling 2 tools at once: fx.sleep, fx.sleep",
        "{activity}"
    );
    for _ in 0..100 {
        if s.calls_logged().len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(s.calls_logged().len(), 2, "both calls reached the child");
    s.interrupt(&id, "Stop sleeping.").await;
    let record = wait_done(&s, &id).await;
    assert_eq!(record["result"], "switched", "{record}");
    let interrupted = outputs(&s.mock, 1);
    assert_eq!(interrupted.len(), 2);
    assert!(
        interrupted.iter().all(|o| o.contains("interrupted")),
        "{interrupted:?}"
    );
    assert_eq!(
        record["tools_used"],
        json!([{"tool": "fx__sleep", "calls": 2, "errors": 2}])
    );
    s.close().await;
}
