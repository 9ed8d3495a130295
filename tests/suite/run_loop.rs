//! The model loop of one run (SPEC §6): turn limit, queued input at request boundaries,
//! interruption that repairs the history, cancellation, tool failures that do not end the
//! run, usage accounting and activity. The mocks check that every request the loop sends
//! after an interruption is still a valid conversation.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use mcp_agents::definition::WireApi;
use mcp_agents::error::ErrorCode;
use mcp_agents::providers::{ApiKey, Conversation, ProviderClient};
use mcp_agents::run::Phase;
use mcp_agents::run::{
    Failure, INTERRUPTED_RESULT, RunContext, RunLimits, RunOutcome, Spent, run_model_loop,
};
use mcp_agents::testkit::{MockProvider, RecordedOutcome, Step};
use serde_json::{Value, json};
use support::run_kit::{KEY, Queue, Recorder, TestTools, client, definition};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use WireApi::{AnthropicMessages as Messages, ChatCompletions as Chat, Responses};

const WIRES: [WireApi; 3] = [Responses, Messages, Chat];

/// One run with handles to steer it from outside.
struct Harness {
    mock: MockProvider,
    provider: ProviderClient,
    tools: Arc<TestTools>,
    inbox: Arc<Queue>,
    recorder: Arc<Recorder>,
    interrupt: watch::Sender<u64>,
    cancel: CancellationToken,
}

impl Harness {
    async fn new(wire: WireApi, steps: Vec<Step>) -> Harness {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.push(steps);
        let provider = client(wire, &mock);
        Harness {
            mock,
            provider,
            tools: Arc::new(TestTools::new()),
            inbox: Arc::new(Queue::with(&["Start."])),
            recorder: Arc::new(Recorder::default()),
            interrupt: watch::channel(0).0,
            cancel: CancellationToken::new(),
        }
    }

    async fn run(&self, conversation: &mut Conversation, max_turns: u32) -> RunOutcome {
        self.run_from(conversation, 0, max_turns).await
    }

    /// A run that already made `turns_taken` requests.
    async fn run_from(
        &self,
        conversation: &mut Conversation,
        turns_taken: u32,
        max_turns: u32,
    ) -> RunOutcome {
        self.run_with(conversation, turns_taken, RunLimits::turns(max_turns))
            .await
    }

    /// A run with `limits`.
    async fn run_with(
        &self,
        conversation: &mut Conversation,
        turns_taken: u32,
        limits: RunLimits,
    ) -> RunOutcome {
        run_model_loop(
            conversation,
            RunContext {
                provider: &self.provider,
                system: "sys",
                tools: self.tools.as_ref(),
                inbox: self.inbox.as_ref(),
                observer: self.recorder.as_ref(),
                interrupts: self.interrupt.subscribe(),
                cancel: self.cancel.clone(),
                limits,
                spent: Spent {
                    turns: turns_taken,
                    ..Spent::default()
                },
                output_schema: None,
            },
        )
        .await
    }

    /// Runs; after `after` (while the run must still be going) calls `step`, then lets the
    /// run finish.
    async fn run_and_after(
        &self,
        conversation: &mut Conversation,
        after: Duration,
        step: impl FnOnce(&Self),
    ) -> RunOutcome {
        let run = self.run(conversation, 32);
        tokio::pin!(run);
        tokio::select! {
            outcome = &mut run => panic!("finished early: {outcome:?}"),
            () = tokio::time::sleep(after) => {}
        }
        step(self);
        run.await
    }

    /// Queues `message` and interrupts, as `send_input` with `interrupt: true` does.
    fn interrupt_with(&self, message: &str) {
        self.inbox.push(message);
        self.interrupt.send_modify(|n| *n += 1);
    }

    fn assert_every_request_valid(&self) {
        for r in self.mock.requests() {
            assert_eq!(
                r.outcome,
                RecordedOutcome::Scripted,
                "refused: {:#}",
                r.body
            );
        }
    }

    fn last_request(&self) -> Value {
        self.mock.requests().last().unwrap().body.clone()
    }
}

#[tokio::test]
async fn more_requests_than_max_turns_fail_with_turn_limit() {
    let h = Harness::new(Responses, vec![Step::tool_call("test__echo", json!({})); 5]).await;
    let mut conversation = Conversation::new(Responses);
    match h.run(&mut conversation, 2).await {
        RunOutcome::Failed(Failure { error: e, .. }) => {
            assert_eq!(e.code, ErrorCode::TurnLimit);
            assert!(
                e.message.contains("more than 2 model requests"),
                "{}",
                e.message
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(h.mock.requests().len(), 2);
    assert_eq!(h.recorder.total().turns, 2);
}

#[tokio::test(start_paused = true)]
async fn input_that_no_request_carried_stays_queued_when_the_turn_limit_ends_the_run() {
    // SPEC §4.2: a failed run leaves pending input with the session, counted as `queued`.
    let h = Harness::new(Responses, vec![Step::tool_call("test__slow", json!({}))]).await;
    let inbox = h.inbox.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        inbox.push("Arrived during the tool call.");
    });
    let mut conversation = Conversation::new(Responses);
    match h.run(&mut conversation, 1).await {
        RunOutcome::Failed(Failure { error: e, .. }) => assert_eq!(e.code, ErrorCode::TurnLimit),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.mock.requests().len(), 1);
    assert_eq!(
        mcp_agents::run::Inbox::take_all(h.inbox.as_ref()),
        ["Arrived during the tool call."],
        "the input no request carried is still queued"
    );
}

#[tokio::test]
async fn requests_made_before_count_against_the_limit() {
    // A run that carries on after late input keeps counting where it was.
    let h = Harness::new(Responses, vec![Step::tool_call("test__echo", json!({})); 5]).await;
    let mut conversation = Conversation::new(Responses);
    let outcome = h.run_from(&mut conversation, 2, 3).await;
    match outcome {
        RunOutcome::Failed(Failure { error: e, .. }) => assert_eq!(e.code, ErrorCode::TurnLimit),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        h.mock.requests().len(),
        1,
        "only the third request was made"
    );
    let summaries = h.recorder.summaries();
    assert!(
        summaries.iter().any(|s| s.contains("turn 3 of 3")),
        "{summaries:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn queued_input_goes_out_after_the_pending_tool_results() {
    for wire in WIRES {
        let h = Harness::new(
            wire,
            vec![Step::tool_call("test__slow", json!({})), Step::text("done")],
        )
        .await;
        let inbox = h.inbox.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            inbox.push("Also check the tests.");
        });
        let mut conversation = Conversation::new(wire);
        assert_eq!(
            h.run(&mut conversation, 32).await,
            RunOutcome::Completed("done".into())
        );
        h.assert_every_request_valid();
        let last = h.last_request();
        match wire {
            Responses => {
                let input = last["input"].as_array().unwrap();
                let tail: Vec<&str> = input[input.len() - 2..]
                    .iter()
                    .map(|i| i["type"].as_str().unwrap())
                    .collect();
                assert_eq!(tail, ["function_call_output", "message"]);
                assert_eq!(
                    input.last().unwrap()["content"][0]["text"],
                    "Also check the tests."
                );
            }
            Chat => {
                let messages = last["messages"].as_array().unwrap();
                let tail: Vec<&str> = messages[messages.len() - 2..]
                    .iter()
                    .map(|m| m["role"].as_str().unwrap())
                    .collect();
                assert_eq!(tail, ["tool", "user"]);
                assert_eq!(messages.last().unwrap()["content"], "Also check the tests.");
            }
            Messages => {
                let content =
                    last["messages"].as_array().unwrap().last().unwrap()["content"].clone();
                assert_eq!(content[0]["type"], "tool_result");
                assert_eq!(
                    content[1],
                    json!({"type": "text", "text": "Also check the tests.",
                           "cache_control": {"type": "ephemeral"}}),
                    "the newest block is a cache breakpoint"
                );
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn input_queued_during_the_last_request_continues_the_run() {
    let h = Harness::new(
        Responses,
        vec![
            Step::text("first answer").delayed(Duration::from_secs(5)),
            Step::text("second answer"),
        ],
    )
    .await;
    let inbox = h.inbox.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        inbox.push("One more thing.");
    });
    let mut conversation = Conversation::new(Responses);
    assert_eq!(
        h.run(&mut conversation, 32).await,
        RunOutcome::Completed("second answer".into())
    );
    let input = h.last_request()["input"].clone();
    assert_eq!(
        input.as_array().unwrap().len(),
        3,
        "task, first answer, the new input"
    );
}

#[tokio::test(start_paused = true)]
async fn an_interrupt_abandons_the_request_in_flight() {
    for wire in WIRES {
        let h = Harness::new(wire, vec![Step::Hang, Step::text("redirected")]).await;
        let mut conversation = Conversation::new(wire);
        let outcome = h
            .run_and_after(&mut conversation, Duration::from_secs(2), |h| {
                h.interrupt_with("Stop that; do this instead.")
            })
            .await;
        assert_eq!(
            outcome,
            RunOutcome::Completed("redirected".into()),
            "{wire:?}"
        );
        h.assert_every_request_valid();
        assert_eq!(h.mock.requests().len(), 2);
        let body = h.last_request();
        let items = body
            .get("input")
            .or(body.get("messages"))
            .unwrap()
            .as_array()
            .unwrap()
            .clone();
        let text = serde_json::to_string(&items).unwrap();
        assert!(
            text.contains("Start.") && text.contains("do this instead"),
            "{text}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_interrupt_during_tool_calls_answers_every_unanswered_call() {
    for wire in WIRES {
        let h = Harness::new(
            wire,
            vec![
                Step::tool_calls(vec![
                    ("test__echo", json!({"text": "1"})),
                    ("test__sleep_forever", json!({})),
                    ("test__echo", json!({"text": "3"})),
                ])
                .with_reasoning(),
                Step::text("ok, switching"),
            ],
        )
        .await;
        let mut conversation = Conversation::new(wire);
        let outcome = h
            .run_and_after(&mut conversation, Duration::from_secs(3), |h| {
                h.interrupt_with("New plan.")
            })
            .await;
        assert_eq!(
            outcome,
            RunOutcome::Completed("ok, switching".into()),
            "{wire:?}"
        );
        h.assert_every_request_valid();
        assert_eq!(
            h.tools.called(),
            ["test__echo", "test__sleep_forever", "test__echo"],
            "the calls of one reply start together"
        );
        let last = serde_json::to_string(&h.last_request()).unwrap();
        assert_eq!(
            last.matches(INTERRUPTED_RESULT).count(),
            1,
            "the finished calls keep their results: {last}"
        );
        assert!(last.contains("New plan."));
        assert_eq!(h.recorder.total().tool_calls, 3);
    }
}

#[tokio::test(start_paused = true)]
async fn cancellation_leaves_a_conversation_that_can_be_resumed() {
    for wire in WIRES {
        let h = Harness::new(
            wire,
            vec![
                Step::tool_call("test__sleep_forever", json!({})),
                Step::text("resumed fine"),
            ],
        )
        .await;
        let mut conversation = Conversation::new(wire);
        let outcome = h
            .run_and_after(&mut conversation, Duration::from_secs(1), |h| {
                h.cancel.cancel()
            })
            .await;
        assert_eq!(
            outcome,
            RunOutcome::Cancelled {
                partial_result: None
            },
            "{wire:?}"
        );

        // A later run (a resume) on the same conversation is accepted by the mock.
        let resumed = Harness {
            cancel: CancellationToken::new(),
            inbox: Arc::new(Queue::with(&["Carry on."])),
            ..h
        };
        assert_eq!(
            resumed.run(&mut conversation, 32).await,
            RunOutcome::Completed("resumed fine".into()),
            "{wire:?}"
        );
        resumed.assert_every_request_valid();
    }
}

#[tokio::test(start_paused = true)]
async fn tool_failures_reach_the_model_and_the_run_goes_on() {
    for wire in [Responses, Chat] {
        tool_failures_on(wire).await;
    }
}

/// A model's arguments that are not JSON, as one whole reply of `wire`.
fn bad_arguments(wire: WireApi) -> Step {
    match wire {
        Chat => Step::json(
            200,
            json!({"id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
                "content": null, "tool_calls": [{"id": "call_bad", "type": "function",
                "function": {"name": "test__echo", "arguments": "{\"text\": unquoted}"}}]}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}),
        ),
        _ => Step::json(
            200,
            json!({"id": "resp_x", "object": "response", "status": "completed",
            "output": [{"type": "function_call", "id": "fc_x", "call_id": "call_bad", "name": "test__echo",
                        "arguments": "{\"text\": unquoted}", "status": "completed"}],
            "usage": {"input_tokens": 1, "output_tokens": 1}}),
        ),
    }
}

async fn tool_failures_on(wire: WireApi) {
    let h = Harness::new(
        wire,
        vec![
            Step::tool_call("no_such_tool", json!({})),
            bad_arguments(wire),
            Step::tool_call("test__slow", json!({})),
            Step::text("coped"),
        ],
    )
    .await;
    let mut tools = TestTools::new();
    tools.slow_for = Duration::from_secs(600);
    let h = Harness {
        tools: Arc::new(tools),
        ..h
    };
    let mut conversation = Conversation::new(wire);
    assert_eq!(
        h.run(&mut conversation, 32).await,
        RunOutcome::Completed("coped".into()),
        "{wire:?}"
    );
    h.assert_every_request_valid();
    let outputs: Vec<String> = conversation
        .items()
        .iter()
        .filter_map(|i| {
            if i["type"] == "function_call_output" {
                i["output"].as_str()
            } else if i["role"] == "tool" {
                i["content"].as_str()
            } else {
                None
            }
        })
        .map(str::to_owned)
        .collect();
    assert!(outputs[0].starts_with("Error: there is no tool named `no_such_tool`; the tools you have are: test__echo, test__fail"), "{}", outputs[0]);
    assert!(
        outputs[1].starts_with("Error: could not read the arguments for `test__echo`"),
        "{}",
        outputs[1]
    );
    assert_eq!(
        outputs[2],
        "Error: the call to test.slow did not finish within 60 s and was cancelled"
    );
    assert_eq!(
        h.tools.called(),
        ["test__slow"],
        "neither the unknown tool nor bad arguments are called"
    );
    assert_eq!(h.recorder.total().tool_calls, 1);
}

#[tokio::test(start_paused = true)]
async fn activity_follows_the_loop_and_shows_retries() {
    let h = Harness::new(
        Responses,
        vec![
            Step::tool_call("test__echo", json!({})),
            Step::openai_error(500, "server_error", None, "boom"),
            Step::text("done"),
        ],
    )
    .await;
    let mut conversation = Conversation::new(Responses);
    h.run(&mut conversation, 32).await;
    let summaries = h.recorder.summaries();
    assert_eq!(summaries[0], "Waiting for mock-model (turn 1 of 32)");
    assert_eq!(summaries[1], "Receiving mock-model's reply (turn 1 of 32)");
    assert_eq!(summaries[2], "Calling test.echo");
    assert_eq!(summaries[3], "Waiting for mock-model (turn 2 of 32)");
    assert!(
        summaries[4]
            .starts_with("Waiting for mock-model (turn 2 of 32) (retry 1 of 3 after HTTP 500"),
        "{}",
        summaries[4]
    );
    assert_eq!(summaries[5], "Receiving mock-model's reply (turn 2 of 32)");
    let activities = h.recorder.activities.lock().unwrap().clone();
    assert_eq!(activities[0].phase, Phase::ProviderRequest);
    assert_eq!(activities[0].target.as_deref(), Some("127.0.0.1"));
    assert_eq!(activities[0].timeout, Some(Duration::from_secs(120)));
    // Once the reply arrives, the bound running is the request's 15-minute ceiling.
    assert_eq!(activities[1].phase, Phase::ProviderRequest);
    assert_eq!(activities[1].timeout, Some(Duration::from_secs(15 * 60)));
    // While it waits to retry, the bound covers the pause and the next attempt.
    let pause = activities[4].timeout.unwrap() - Duration::from_secs(120);
    assert!(
        pause > Duration::ZERO && summaries[4].contains(&format!("in {} ms", pause.as_millis())),
        "{pause:?} {}",
        summaries[4]
    );
    assert_eq!(activities[2].phase, Phase::ToolCall);
    assert_eq!(
        (
            activities[2].tool.as_deref(),
            activities[2].target.as_deref()
        ),
        (Some("echo"), Some("test"))
    );
    assert_eq!(activities[2].timeout, Some(Duration::from_secs(60)));
    let text = format!("{activities:?}");
    assert!(!text.contains("Start."), "activity never carries prompts");
}

#[test]
fn the_key_is_read_for_each_run_and_never_shown() {
    let d = definition(Responses, "http://127.0.0.1:9/v1");
    let err = ProviderClient::for_run(&d, |_| None).unwrap_err();
    assert_eq!(err.code, ErrorCode::MissingCredential);
    assert!(err.message.contains("MOCK_PROVIDER_KEY"));
    let client = ProviderClient::for_run(&d, |var| {
        (var == "MOCK_PROVIDER_KEY").then(|| KEY.to_owned())
    })
    .unwrap();
    assert!(!format!("{client:?}").contains(KEY));
    let direct = ProviderClient::new(&d, ApiKey::for_tests(KEY));
    assert!(!format!("{direct:?}").contains("SECRET"));
}

#[tokio::test(start_paused = true)]
async fn the_run_deadline_cancels_every_call_in_flight_on_every_wire() {
    use mcp_agents::definition::RunBudget;
    use mcp_agents::run::ToolUse;
    for wire in WIRES {
        let h = Harness::new(
            wire,
            vec![Step::tool_calls(vec![
                ("test__echo", json!({"text": "quick"})),
                ("test__sleep_forever", json!({})),
            ])],
        )
        .await;
        let mut conversation = Conversation::new(wire);
        let limits = RunLimits {
            budget: RunBudget {
                max_run_seconds: Some(5),
                ..RunBudget::default()
            },
            ..RunLimits::turns(32)
        };
        let started = tokio::time::Instant::now();
        let outcome = h.run_with(&mut conversation, 0, limits).await;
        let took = started.elapsed();
        match outcome {
            RunOutcome::Failed(Failure { error, .. }) => {
                assert_eq!(error.code, ErrorCode::BudgetExceeded, "{wire:?}");
            }
            other => panic!("{wire:?}: {other:?}"),
        }
        assert!(
            took >= Duration::from_secs(5) && took < Duration::from_secs(6),
            "{wire:?}: {took:?}"
        );
        // The history stays valid: both calls are answered, the finished one with its result.
        let items = serde_json::to_string(&conversation.items()).unwrap();
        assert!(items.contains("echo: "), "{wire:?}: {items}");
        assert!(
            items.contains("reached its time budget (max_run_seconds 5)"),
            "{wire:?}: {items}"
        );
        assert_eq!(
            *h.recorder.tools.lock().unwrap(),
            [
                ("test__echo".to_owned(), ToolUse::Called),
                ("test__sleep_forever".to_owned(), ToolUse::Called),
                ("test__sleep_forever".to_owned(), ToolUse::Failed),
            ],
            "{wire:?}"
        );
    }
}
