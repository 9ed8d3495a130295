//! What a `wait_agent` answer says, through the real binary (SPEC §4.3): `return_when:
//! "any"` returns when the first target ends, with every target's record; the text opens
//! with one human line per target, for every status, and `structuredContent` is the JSON
//! alone.

use crate::support;

use std::time::{Duration, Instant};

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::binary::{self, Connection, Generation, KEY_VAR, split_wait_text};
use support::children::{agent, stdio_child, tagged_marker, write};
use support::run_kit::KEY;

fn plain(name: &str, mock: &MockProvider) -> String {
    format!(
        "---\nname: {name}\ndescription: Answers.\nmodel: mock-model\nmodel_provider: custom\n\
         base_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\n---\nAnswer.\n",
        mock.responses_base_url()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn return_when_any_returns_when_the_first_target_ends() {
    // Two providers, so each agent's reply comes when it is scripted to, whichever asks
    // first: `fast` answers after 1 s, `slow` after 3 s (the 1 s and 5 s of the issue run in
    // paused time in `sessions::wait`'s tests; here real time is kept short).
    let (fast_mock, slow_mock) = (
        MockProvider::start(KEY).await.unwrap(),
        MockProvider::start(KEY).await.unwrap(),
    );
    fast_mock.push([Step::text("fast done").delayed(Duration::from_secs(1))]);
    slow_mock.push([Step::text("slow done").delayed(Duration::from_secs(3))]);
    let ws = tempfile::tempdir().unwrap();
    write(
        ws.path(),
        ".agents/agents/fast.md",
        &plain("fast", &fast_mock),
    );
    write(
        ws.path(),
        ".agents/agents/slow.md",
        &plain("slow", &slow_mock),
    );
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    let started = Instant::now();
    let slow = c.spawn("slow", "Take your time.").await;
    let fast = c.spawn("fast", "Be quick.").await;
    let any = c
        .ok(
            "wait_agent",
            json!({"targets": [slow, fast], "timeout_ms": 30_000, "return_when": "any"}),
        )
        .await;
    let waited = started.elapsed();
    assert_eq!(any["timed_out"], false, "{any}");
    assert_eq!(any["agents"][0]["status"], "running", "{any}");
    assert_eq!(any["agents"][1]["status"], "completed");
    assert_eq!(any["agents"][1]["result"], "fast done");
    // It returned at the first end: after `fast`'s second, while `slow` still ran.
    assert!(
        waited >= Duration::from_secs(1),
        "returned after {waited:?}"
    );
    // The default waits for both.
    let all = c.wait(&[&slow, &fast], 30_000).await;
    let waited = started.elapsed();
    assert_eq!(all["timed_out"], false);
    assert_eq!(all["agents"][0]["result"], "slow done");
    assert!(waited >= Duration::from_secs(3), "{waited:?}");
    // With a target already finished, `any` returns at once.
    let at_once = Instant::now();
    c.ok(
        "wait_agent",
        json!({"targets": [fast], "timeout_ms": 30_000, "return_when": "any"}),
    )
    .await;
    assert!(at_once.elapsed() < Duration::from_secs(1));
    let (code, message) = c
        .err(
            "wait_agent",
            json!({"targets": [fast], "return_when": "first"}),
        )
        .await;
    assert_eq!(code, "invalid_input");
    assert!(message.contains("`return_when`"), "{message}");
    c.close().await;
}

/// The text of a `wait_agent` answer, and its JSON.
async fn wait_text(c: &Connection, targets: &[&str]) -> (Vec<String>, Value) {
    let result = c
        .call("wait_agent", json!({"targets": targets, "timeout_ms": 0}))
        .await;
    let text = result.content[0].as_text().unwrap().text.clone();
    let (lines, json) = split_wait_text(&text);
    let value: Value = serde_json::from_str(json).unwrap();
    assert_eq!(Some(&value), result.structured_content.as_ref());
    (lines.into_iter().map(str::to_owned).collect(), value)
}

/// SPEC §4.3: a text on one line (whitespace folded), its first 100 characters, "…" when
/// there was more.
fn quoted(text: &str) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() > 100 {
        format!("{}…", folded.chars().take(100).collect::<String>())
    } else {
        folded
    }
}

fn secs(record: &Value) -> String {
    format!(
        "{:.1}",
        record["total_elapsed_ms"].as_u64().unwrap() as f64 / 1000.0
    )
}

/// Five agents, each at its own end: completed, refused, failed, stopped, and one still
/// running a tool call.
struct FiveEnds {
    completed: Value,
    refused: Value,
    failed: Value,
    stopped: Value,
    running: String,
}

impl FiveEnds {
    async fn reach(c: &Connection, mock: &MockProvider, long_answer: &str) -> FiveEnds {
        mock.push([
            Step::text(long_answer),
            Step::refusal("I can't help with that."),
            Step::openai_error(
                400,
                "invalid_request_error",
                None,
                "The model `x` does not exist",
            ),
            Step::Hang,
            Step::tool_call("fx__sleep", json!({"ms": 60_000})),
        ]);
        let completed = c.run_to_end("plain", "Check the parser.").await;
        let refused = c.run_to_end("plain", "Do something bad.").await;
        let failed = c
            .run_to_end("plain", "Use a model that is not there.")
            .await;
        let stopped = c.spawn("plain", "Wait forever.").await;
        for _ in 0..200 {
            if mock.requests().len() == 4 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let stopped = c
            .ok("send_input", json!({"target": stopped, "stop": true}))
            .await;
        let running = c.spawn("tooled", "Sleep.").await;
        c.wait_for_phase(&running, "tool_call").await;
        FiveEnds {
            completed,
            refused,
            failed,
            stopped,
            running,
        }
    }

    fn ids(&self) -> Vec<&str> {
        [&self.completed, &self.refused, &self.failed, &self.stopped]
            .iter()
            .map(|r| r["agent_id"].as_str().unwrap())
            .chain([self.running.as_str()])
            .collect()
    }

    /// The lines a wait on all five (`value`, its structured answer) opens with.
    fn lines(&self, value: &Value, first_100: &str) -> Vec<String> {
        let ids = self.ids();
        let who = |i: usize| {
            format!(
                "{} {}",
                value["agents"][i]["name"].as_str().unwrap(),
                &ids[i][..8]
            )
        };
        let running_record = &value["agents"][4];
        let running_secs = running_record["total_elapsed_ms"].as_u64().unwrap() / 1000;
        let failed = quoted(self.failed["error"]["message"].as_str().unwrap());
        vec![
            format!(
                "{}: completed in {} s: {first_100}",
                who(0),
                secs(&self.completed)
            ),
            format!(
                "{}: completed in {} s, refused: I can't help with that.",
                who(1),
                secs(&self.refused)
            ),
            format!(
                "{}: failed in {} s, provider_error: {failed}",
                who(2),
                secs(&self.failed),
            ),
            format!(
                "{}: failed in {} s, cancelled: stopped by the parent",
                who(3),
                secs(&self.stopped)
            ),
            format!(
                "{}: running {running_secs} s, Calling fx.sleep (1 tool call so far)",
                who(4)
            ),
        ]
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_opens_with_one_human_line_per_target() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let marker = tagged_marker("lines");
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), ".agents/agents/plain.md", &plain("plain", &mock));
    let fx = stdio_child("fx", &[], &marker, "");
    write(
        ws.path(),
        ".agents/agents/tooled.md",
        &agent(&mock, "tooled", &fx, ""),
    );
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    let long_answer = format!("The parser is fine.\n\nDetails:\n{}", "detail ".repeat(40));
    let ends = FiveEnds::reach(&c, &mock, &long_answer).await;

    let (lines, value) = wait_text(&c, &ends.ids()).await;
    let first_100 = quoted(&long_answer);
    assert!(first_100.starts_with("The parser is fine. Details: detail detail"));
    assert_eq!(lines, ends.lines(&value, &first_100));
    assert_eq!(value["timed_out"], true);
    c.close().await;
}
