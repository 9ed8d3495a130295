//! Questions to the parent through the binary (SPEC §4.5): an agent that may ask calls
//! `ask_parent`; every `wait_agent` returns at once on the question (whatever `return_when`
//! says), its line reads "asks: …", a progress notification carries it; `send_input`
//! answers it and the answer is the tool's result in the next request; unanswered, it times
//! out and the run goes on; `stop` and `interrupt` work on a waiting agent. On both protocol
//! eras. (Time not counted against `max_run_seconds` is `sessions::ask`'s unit test, in
//! paused time.)

use std::time::{Duration, Instant};

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};

use crate::support::binary::{
    GENERATIONS, Generation, KEY_VAR, failed_with, run_plain, split_wait_text,
};
use crate::support::builders::{ServerUnderTest, TestWorkspace};
use crate::support::children::call_outputs;

pub(super) const QUESTION: &str = "Which file should I fix?";

/// An agent `asker` on the mock's endpoint for `wire` that may ask, with `extra` lines.
pub(super) fn asker(mock: &MockProvider, wire: &str, extra: &str) -> String {
    let base = match wire {
        "anthropic-messages" => mock.messages_base_url(),
        "chat-completions" => mock.chat_base_url(),
        _ => mock.responses_base_url(),
    };
    format!(
        "---\nname: asker\ndescription: Asks when unsure.\nmodel: mock-model\n\
         model_provider: custom\nbase_url: {base}\nenv_key: {KEY_VAR}\nwire_api: {wire}\n\
         ask_parent: true\n{extra}---\nAsk when unsure.\n"
    )
}

/// The server for an `asker` on `wire` (each wire's request oracle checks the tool).
async fn serve(generation: Generation, wire: &'static str, extra: &'static str) -> ServerUnderTest {
    TestWorkspace::new()
        .agent(".agents/agents/asker.md", move |mock, _| {
            asker(mock, wire, extra)
        })
        .stdio_as(generation)
        .await
}

/// The last request the mock received, as text.
fn last_body(mock: &MockProvider) -> String {
    mock.requests().last().unwrap().body.to_string()
}

pub(super) fn question_step() -> Step {
    Step::tool_call(
        "ask_parent",
        json!({"question": QUESTION, "options": ["a.py", "b.py"]}),
    )
}

/// `wait_agent` on `id` with `return_when: all`, and how long it took.
async fn wait_all(s: &ServerUnderTest, id: &str) -> (Value, Duration) {
    let began = Instant::now();
    let args = json!({"targets": [id], "timeout_ms": 30_000, "return_when": "all"});
    (s.ok("wait_agent", args).await, began.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_reaches_the_parent_and_the_answer_reaches_the_model_on_both_eras() {
    for generation in GENERATIONS {
        let s = serve(generation, "responses", "").await;
        s.mock.push([question_step(), Step::text("Fixed b.py.")]);
        let id = s.spawn("asker", "Fix the bug.").await;
        let (waited, took) = wait_all(&s, &id).await;
        assert!(took < Duration::from_secs(10), "{generation:?}: {took:?}");
        assert_eq!(waited["timed_out"], false, "{waited}");
        let record = &waited["agents"][0];
        assert_eq!(record["status"], "running", "{record}");
        assert_eq!(record["question"], QUESTION);
        assert_eq!(record["options"], json!(["a.py", "b.py"]));
        assert_eq!(record["activity"]["phase"], "waiting_for_input");
        assert_eq!(
            record["activity"]["summary"],
            "Waiting for the parent's answer"
        );
        let line = format!("asker {}: asks: {QUESTION}", &id[..8]);
        let result = s
            .call("wait_agent", json!({"targets": [id], "timeout_ms": 0}))
            .await;
        let text = &result.content[0].as_text().unwrap().text;
        assert_eq!(
            split_wait_text(text).0,
            [line.as_str()],
            "a wait that begins now too"
        );
        let progress = s.progress.lock().unwrap().clone();
        let messages: Vec<&str> = progress
            .iter()
            .filter_map(|p| p.message.as_deref())
            .collect();
        assert!(
            messages.contains(&line.as_str()),
            "{generation:?}: {messages:?}"
        );

        let args = json!({"target": id, "message": "b.py, the one with the bug"});
        let answered = s.ok("send_input", args).await;
        assert_eq!(answered["answered_question"], QUESTION, "{answered}");
        assert_eq!(answered["queued"], 0, "an answer is not queued");
        let after = s.wait_one(&id, 0).await;
        assert!(
            after.get("question").is_none(),
            "gone before send_input returned: {after}"
        );
        let (done, _) = wait_all(&s, &id).await;
        let done = &done["agents"][0];
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["result"], "Fixed b.py.");
        assert_eq!(call_outputs(&s.mock), ["b.py, the one with the bug"]);
        s.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_question_times_out_and_the_agent_decides_for_itself() {
    let s = serve(Generation::Modern, "chat-completions", "ask_timeout_s: 1\n").await;
    s.mock
        .push([question_step(), Step::text("I assumed a.py.")]);
    let id = s.spawn("asker", "Fix the bug.").await;
    let (asked, _) = wait_all(&s, &id).await;
    assert_eq!(asked["agents"][0]["question"], QUESTION, "{asked}");
    assert_eq!(
        asked["agents"][0]["activity"]["operation_timeout_remaining_ms"]
            .as_u64()
            .map(|ms| ms <= 1_000),
        Some(true),
        "{asked}"
    );
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let (done, _) = wait_all(&s, &id).await;
    assert_eq!(done["agents"][0]["result"], "I assumed a.py.", "{done}");
    assert_eq!(
        call_outputs(&s.mock),
        [
            "No answer came within 1 s. Decide for yourself, and say in your final answer what \
          you assumed."
        ]
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_and_interrupt_work_on_an_agent_waiting_for_an_answer() {
    let s = serve(Generation::Modern, "anthropic-messages", "").await;
    s.mock
        .push([question_step(), Step::text("Went on with b.")]);
    let id = s.spawn("asker", "Fix the bug.").await;
    wait_all(&s, &id).await;
    let interrupted = s.interrupt(&id, "Forget the question, fix b.py.").await;
    assert!(
        interrupted.get("answered_question").is_none(),
        "{interrupted}"
    );
    let (done, _) = wait_all(&s, &id).await;
    assert_eq!(done["agents"][0]["result"], "Went on with b.", "{done}");
    let body = last_body(&s.mock);
    assert!(body.contains("interrupted: new input arrived"), "{body}");
    assert!(body.contains("Forget the question, fix b.py."), "{body}");

    s.mock.push([question_step()]);
    s.ok("send_input", json!({"target": id, "message": "Once more."}))
        .await;
    wait_all(&s, &id).await;
    let began = Instant::now();
    let stopped = s
        .ok("send_input", json!({"target": id, "stop": true}))
        .await;
    assert!(began.elapsed() < Duration::from_secs(1));
    failed_with(&stopped, "cancelled");
    assert!(stopped.get("question").is_none(), "{stopped}");
    s.close().await;
}

/// `mcp-agents run` without a terminal: the question is shown on stderr, nobody can answer,
/// so it times out and the agent decides for itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_without_a_terminal_shows_the_question_and_lets_it_time_out() {
    let ws = TestWorkspace::new()
        .agent(".agents/agents/asker.md", |mock, _| {
            asker(mock, "responses", "ask_timeout_s: 1\n")
        })
        .written()
        .await;
    ws.mock
        .push([question_step(), Step::text("I assumed a.py.")]);
    let ran = run_plain(ws.path(), "asker", "Fix the bug.").await;
    assert!(ran.success, "{}", ran.stderr);
    assert!(ran.stdout.contains("I assumed a.py."), "{}", ran.stdout);
    assert!(
        ran.stderr.contains(&format!("asker asks: {QUESTION}")),
        "{}",
        ran.stderr
    );
    assert!(
        ran.stderr.contains("options: a.py | b.py"),
        "{}",
        ran.stderr
    );
    assert_eq!(
        ran.stderr.matches(" asks: ").count(),
        1,
        "once: {}",
        ran.stderr
    );
    assert!(
        ran.stderr.contains("standard input is not a terminal"),
        "{}",
        ran.stderr
    );
    assert!(last_body(&ws.mock).contains("No answer came within 1 s."));
}
