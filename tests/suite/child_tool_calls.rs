//! Calling a child's tools from a run (SPEC §6 step 3, §8.3), through the real binary:
//! failures, timeouts and crashes reach the model as results and the run goes on, refusals
//! are cut like output, and an interrupt stops the call in flight.

use crate::support;

use mcp_agents::testkit::{RecordedOutcome, Step};
use serde_json::{Value, json};
use support::builders::FixtureAgent;
use support::children::call_outputs;
use support::{ServerUnderTest, TestWorkspace};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_failures_reach_the_model_and_the_run_goes_on() {
    let s = TestWorkspace::new()
        .with(FixtureAgent::named("caller").child_lines("      tool_timeout_sec: 1\n"))
        .stdio()
        .await;
    s.mock.push([
        Step::tool_calls(vec![
            ("fx__sleep", json!({"ms": 10_000})),
            ("fx__fail", json!({})),
            ("fx__echo", json!({"wrong": "arguments"})),
            ("fx__huge", json!({"bytes": 1_200_000})),
            ("fx__structured", json!({})),
            ("fx__picture", json!({})),
            ("fx__nonexistent", json!({})),
        ]),
        Step::tool_call("fx__crash", json!({})),
        Step::text("coped with everything"),
    ]);
    let record = s.run_to_end("caller", "Use the tools.").await;
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(record["result"], "coped with everything");
    let requests = s.mock.requests();
    let round = |n: usize| -> Vec<String> {
        requests[n].body["input"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "function_call_output")
            .map(|i| match &i["output"] {
                Value::String(text) => text.clone(),
                parts => parts.to_string(),
            })
            .collect()
    };
    let first = round(1);
    assert_eq!(
        first[0],
        "Error: the call to fx.sleep did not finish within 1 s and was cancelled"
    );
    assert_eq!(first[1], "Error: failed on purpose");
    assert_eq!(
        first[2],
        "Error: the arguments for `fx__echo` do not match its input schema, so it was not \
         called: `/text`: required",
        "checked against the child's own schema before the call (SPEC §6 step 3)"
    );
    assert!(
        first[3].ends_with(&format!(
            "[output truncated: {} of 1200000 bytes shown]",
            1024 * 1024
        )),
        "huge output is capped"
    );
    assert!(first[3].len() < 1024 * 1024 + 100);
    assert_eq!(first[4], r#"{"answer":42}"#);
    // Text and the image the model can take as its parts; the SVG as a placeholder.
    let picture: Value = serde_json::from_str(&first[5]).unwrap();
    assert_eq!(
        picture,
        json!([
            {"type": "input_text", "text": "A 1×1 picture:\n[image: image/svg+xml, 8 base64 characters; not shown: the model takes PNG, JPEG, GIF and WebP images only]"},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{}", mcp_agents::testkit::ONE_PIXEL_PNG)}
        ])
    );
    assert!(
        first[6].starts_with(
            "Error: there is no tool named `fx__nonexistent`; the tools you have are: fx__crash"
        ),
        "{}",
        first[6]
    );
    let second = round(2);
    assert!(
        second
            .last()
            .unwrap()
            .contains("closed the connection during the call"),
        "{second:?}"
    );
    s.close_once_children_gone(6).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_longer_than_the_output_cap_is_cut_like_output() {
    let s = ServerUnderTest::fixture_agent("refused", &[]).await;
    s.mock.push([
        Step::tool_calls(vec![
            ("fx__refuse", json!({"bytes": 1_200_000})),
            ("fx__refuse", json!({"bytes": 10})),
        ]),
        Step::text("refused twice"),
    ]);
    let record = s.run_to_end("refused", "Use the tools.").await;
    assert_eq!(record["status"], "completed", "{record}");
    let out = call_outputs(&s.mock);
    let long = &out[0];
    assert!(
        long.starts_with("Error: the MCP server fx refused the call: rrrr"),
        "{:.80}",
        long
    );
    assert!(long.len() < 1024 * 1024 + 100, "{} bytes", long.len());
    assert!(
        long.ends_with(&format!(
            "[output truncated: {} of {} bytes shown]",
            1024 * 1024,
            "the MCP server fx refused the call: ".len() + 1_200_000
        )),
        "{}",
        &long[long.len().saturating_sub(80)..]
    );
    assert_eq!(
        out[1],
        format!(
            "Error: the MCP server fx refused the call: {}",
            "r".repeat(10)
        )
    );
    s.close_once_children_gone(6).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_mid_tool_call_stops_the_call_and_carries_on() {
    let s = ServerUnderTest::fixture_agent("sleeper", &[]).await;
    s.mock.push([
        Step::tool_call("fx__sleep", json!({"ms": 60_000})).with_reasoning(),
        Step::text("switched"),
    ]);
    let id = s.spawn("sleeper", "Sleep.").await;
    let activity = &s.wait_for_phase(&id, "tool_call").await["activity"];
    assert_eq!(activity["summary"], "Calling fx.sleep");
    assert_eq!(activity["tool"], "sleep");
    assert_eq!(activity["target"], "fx");
    s.interrupt(&id, "Stop sleeping.").await;
    let done = s.wait(&[&id], 30_000).await;
    assert_eq!(done["agents"][0]["result"], "switched", "{done}");
    assert!(
        s.mock
            .requests()
            .iter()
            .all(|r| r.outcome == RecordedOutcome::Scripted),
        "the repaired history is valid"
    );
    assert!(call_outputs(&s.mock)[0].contains("interrupted"));
    s.close_once_children_gone(6).await;
}
