//! Replies the real APIs and gateways send that a client must read as the official SDKs do,
//! through the real binary (SPEC §6.1, issue 24): a `retry-after` of minutes or an HTTP-date
//! is waited for (and shown) within the run's bounds, a gateway's error inside a 200 stream
//! is an error of its code's class, a response without `status` is read by its event, and
//! a reply whose reasoning took the whole output limit is asked for once with more room,
//! never continued blindly.

use crate::support;

use std::time::{Duration, SystemTime};

use mcp_agents::testkit::{MockProvider, MockWire, Step, StreamFault};
use support::binary::{self, Generation, KEY_VAR};
use support::run_kit::KEY;

/// A Responses agent `name` at the mock with `extra` frontmatter lines.
fn agent(mock: &MockProvider, name: &str, extra: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Answers.\nmodel: mock-model\nmodel_provider: custom\n\
         base_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\nmax_turns: 5\n{extra}\n---\n\
         Answer.\n",
        mock.responses_base_url()
    )
}

fn workspace(files: &[(&str, String)]) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = ws.path().join(format!(".agents/agents/{name}.md"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    ws
}

/// `mcp-agents run NAME Go.` on `ws`: success, stdout, stderr.
async fn run(ws: &tempfile::TempDir, name: &str) -> (bool, String, String) {
    let ran = binary::run_plain(ws.path(), name, "Go.").await;
    (ran.success, ran.stdout, ran.stderr)
}

/// Runs `name` on `ws` and checks that it succeeded with `answer` on stdout; its stderr.
async fn answers(ws: &tempfile::TempDir, name: &str, answer: &str) -> String {
    let (success, stdout, stderr) = run(ws, name).await;
    assert!(success, "{stderr}");
    assert_eq!(stdout, answer);
    stderr
}

/// The activity summary of agent `id` once it starts with "Waiting " and a number of
/// seconds (5 s at most), and that number.
async fn waiting_summary(c: &binary::Connection, id: &str) -> (String, u64) {
    for _ in 0..200 {
        let agent = c.wait(&[id], 0).await["agents"][0].clone();
        assert_eq!(agent["status"], "running", "{agent}");
        let summary = agent["activity"]["summary"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        if let Some(rest) = summary.strip_prefix("Waiting ")
            && let Some((seconds, _)) = rest.split_once(" s:")
            && let Ok(seconds) = seconds.parse::<f64>()
        {
            return (summary, seconds as u64);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("agent {id} never showed a provider's wait");
}

/// A `retry-after` of 90 s (seconds, or as an HTTP-date) is waited for, and activity says
/// how long and why; the run is not ended at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_retry_after_is_waited_for_and_shown() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = workspace(&[("patient", agent(&mock, "patient", ""))]);
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    let in_two_minutes = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(120));
    // Each spawn takes the next step; the runs are still waiting when the server stops.
    for (retry_after, range) in [("90", 90..=90), (in_two_minutes.as_str(), 100..=120)] {
        mock.push([Step::rate_limited(MockWire::Responses, retry_after)]);
        let id = c.spawn("patient", "Go.").await;
        let (summary, seconds) = waiting_summary(&c, &id).await;
        assert!(range.contains(&seconds), "{retry_after}: {summary}");
        assert!(
            summary.contains(": rate limited by 127.0.0.1 (retry 1 of 4, turn 1 of 5)"),
            "{summary}"
        );
    }
    c.close().await;
}

/// A wait the run's own `max_run_seconds` cannot hold ends it at once, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_past_the_runs_deadline_fails_at_once() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::rate_limited(MockWire::Responses, "45")]);
    let ws = workspace(&[("hurried", agent(&mock, "hurried", "max_run_seconds: 20"))]);
    let started = std::time::Instant::now();
    let (success, _, stderr) = run(&ws, "hurried").await;
    assert!(!success);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "not waited for"
    );
    assert!(
        stderr.contains("asked to wait 45 s before retrying, more than the")
            && stderr.contains("left of this run's `max_run_seconds`"),
        "{stderr}"
    );
    assert_eq!(mock.requests().len(), 1);
}

/// LiteLLM's data-only error frame in a 200 stream is the error it says, by its code: a
/// 401 fails at once with the gateway's message, instead of being sent again as a stream
/// that ended early.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateways_error_frame_is_an_error_of_its_code() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([
        Step::text("never whole").failing_after(3, StreamFault::GatewayError(401)),
        Step::text("sent again"),
    ]);
    let ws = workspace(&[("gated", agent(&mock, "gated", ""))]);
    let (success, stdout, stderr) = run(&ws, "gated").await;
    assert!(!success, "{stdout}");
    assert!(
        stderr.contains("upstream model failed mid-stream") && !stderr.contains("ended its reply"),
        "{stderr}"
    );
    assert_eq!(mock.requests().len(), 1, "not sent again");

    // LiteLLM 1.110's `event: error`, whose nested code is the status: a 500 is retried.
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = workspace(&[("gated", agent(&mock, "gated", ""))]);
    mock.push([
        Step::text("never whole").failing_after(3, StreamFault::GatewayErrorEvent(500)),
        Step::text("Recovered."),
    ]);
    answers(&ws, "gated", "Recovered.\n").await;
}

/// A `response.completed` whose response has no `status` (not required by the spec) is a
/// completed response.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_response_without_status_is_completed() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::text("Fine.").without_status()]);
    let ws = workspace(&[("plain", agent(&mock, "plain", ""))]);
    answers(&ws, "plain", "Fine.\n").await;
}

/// A reply cut off at `max_output_tokens` with only reasoning is asked for once more with a
/// higher limit, then fails with a clear error: never continued with "go on" until the
/// turn limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_of_reasoning_only_is_retried_once_with_room_then_fails() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = workspace(&[(
        "deep",
        agent(
            &mock,
            "deep",
            "max_output_tokens: 100\nreasoning_effort: high",
        ),
    )]);
    mock.push([Step::reasoning_only().cut_off(), Step::text("Room enough.")]);
    let stderr = answers(&ws, "deep", "Room enough.\n").await;
    let limits: Vec<_> = mock
        .requests()
        .iter()
        .map(|r| r.body["max_output_tokens"].clone())
        .collect();
    assert_eq!(limits, [100, 25_000]);
    assert!(
        stderr.contains("cut off at max_output_tokens 100 before it wrote anything")
            && stderr.contains("asking once more with 25000"),
        "{stderr}"
    );

    mock.push(vec![Step::reasoning_only().cut_off(); 6]);
    let (success, _, stderr) = run(&ws, "deep").await;
    assert!(!success);
    assert!(
        stderr.contains("provider_error")
            && stderr.contains("its reasoning took the whole limit")
            && stderr.contains("raise `max_output_tokens` or lower `reasoning_effort`"),
        "{stderr}"
    );
    assert_eq!(
        mock.requests().len(),
        4,
        "two more requests, not one per turn"
    );
}
