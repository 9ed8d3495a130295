//! The servers users point the Chat Completions wire at, as they really answer, through the
//! real binary (issue 36): vLLM and TGI refusing an output limit larger than their small
//! context window leave room for the input (retried once with the limit that fits; refused
//! again, the error says to set `max_output_tokens`; an input the window cannot hold is
//! `context_limit`), Mistral
//! refusing `max_completion_tokens` with a 422 (sent again as `max_tokens`), and a stream
//! that ends after its `finish_reason` without `data: [DONE]` (complete, never sent again).

use crate::support;

use mcp_agents::testkit::{MockEngine, MockProvider, Recorded, RecordedOutcome, Step};
use serde_json::json;
use support::binary::{self, KEY_VAR, Ran};
use support::children::stdio_child;
use support::run_kit::KEY;

/// A canonical Chat Completions agent `name` for `model` at the mock, with a fixture child
/// `fx` and `extra` frontmatter lines.
fn agent(mock: &MockProvider, name: &str, model: &str, extra: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Calls tools.\nmodel: {model}\n\
         model_provider: custom\nbase_url: {}\nenv_key: {KEY_VAR}\n\
         wire_api: chat-completions\nmax_turns: 6\n{extra}\nmcp_servers:\n{}---\n\
         Use your tools.\n",
        mock.chat_base_url(),
        stdio_child("fx", &[], &format!("chat-endpoints-{name}"), "")
    )
}

/// Runs agent `name` (written as `definition`) with `mcp-agents run`.
async fn run(name: &str, definition: &str) -> Ran {
    let ws = tempfile::tempdir().unwrap();
    support::children::write(ws.path(), &format!(".agents/agents/{name}.md"), definition);
    binary::run_plain(ws.path(), name, "Go.").await
}

/// The model calls `fx__echo` once, then answers "Done."
fn echo_then_done(mock: &MockProvider) {
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "x"})),
        Step::text("Done."),
    ]);
}

fn refused(request: &Recorded) -> Option<(u16, &str)> {
    match &request.outcome {
        RecordedOutcome::Refused(status, message) => Some((*status, message.as_str())),
        RecordedOutcome::Scripted => None,
    }
}

/// A stream that ends after its `finish_reason` and usage chunks without `data: [DONE]`
/// (older TGI, some llama.cpp forks) is a whole reply, as openai-python reads it: the run
/// goes on and each reply is asked for once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_without_done_after_its_finish_reason_is_complete() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "x"})).without_done(),
        Step::text("Done.").without_done(),
    ]);
    let ran = run("tgi", &agent(&mock, "tgi", "tgi", "")).await;
    assert!(ran.success, "{}", ran.stderr);
    assert_eq!(ran.stdout, "Done.\n");
    assert_eq!(mock.requests().len(), 2, "each reply asked for once");
    assert!(!ran.stderr.contains("retry"), "{}", ran.stderr);
}

/// The output limit each request asked for, under either name.
fn output_limits(requests: &[Recorded]) -> Vec<u64> {
    requests
        .iter()
        .map(|r| {
            r.body["max_completion_tokens"]
                .as_u64()
                .or_else(|| r.body["max_tokens"].as_u64())
                .unwrap_or(0)
        })
        .collect()
}

/// An agent on a model the table does not know asks for 32,000 output tokens; vLLM (in
/// both its wordings) and TGI serving a smaller window refuse it, naming the window and the
/// input. The request goes again with the room the window leaves, stderr and activity say
/// so (the warning once), and the run completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_limit_a_small_window_refuses_is_lowered_to_the_room_it_names() {
    for (engine, window, status) in [
        (MockEngine::Vllm, 32_768, 400),
        (MockEngine::VllmLegacy, 32_768, 400),
        (MockEngine::Tgi, 8_192, 422),
    ] {
        let mock = MockProvider::start(KEY).await.unwrap();
        mock.play(engine);
        mock.set_context_window(window);
        echo_then_done(&mock);
        let ran = run("local", &agent(&mock, "local", "qwen3-coder-local", "")).await;
        assert!(ran.success, "{engine:?}: {}", ran.stderr);
        assert_eq!(ran.stdout, "Done.\n");
        let requests = mock.requests();
        let limits = output_limits(&requests);
        assert_eq!(
            limits[0], 32_000,
            "{engine:?}: the default for an unknown model"
        );
        assert_eq!(
            refused(&requests[0]).map(|(s, _)| s),
            Some(status),
            "{engine:?}"
        );
        assert!(refused(&requests[1]).is_none(), "{engine:?}: {limits:?}");
        assert!(
            limits[1] < window && limits[1] > window / 2,
            "{engine:?}: the room left, {limits:?}"
        );
        let scripted = requests.iter().filter(|r| refused(r).is_none()).count();
        assert_eq!(scripted, 2, "{engine:?}: the tool call and the answer");
        let warnings = ran.warnings("local");
        assert_eq!(warnings.len(), 1, "{engine:?}: {}", ran.stderr);
        assert!(
            warnings[0].contains(&format!(
                "refused max_output_tokens 32000 for qwen3-coder-local; its context window of \
                 {window} tokens leaves {} for a reply",
                limits[1]
            )),
            "{engine:?}: {}",
            warnings[0]
        );
        assert!(
            ran.stderr.contains(&format!(
                "provider_request · Waiting for qwen3-coder-local (turn 1 of 6) \
                 (max_output_tokens 32000 refused, asking again with {})",
                limits[1]
            )),
            "{engine:?}: activity says so: {}",
            ran.stderr
        );
    }
}

/// An input the window cannot hold at all is `context_limit`, whatever the output limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_an_input_that_does_not_fit_is_a_context_limit() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.play(MockEngine::Vllm);
    mock.set_context_window(100);
    let ws = tempfile::tempdir().unwrap();
    let name = "tiny";
    support::children::write(
        ws.path(),
        &format!(".agents/agents/{name}.md"),
        &agent(&mock, name, "qwen3-coder-local", ""),
    );
    let ran = binary::run_json(
        ws.path(),
        name,
        "Go.",
        &[(KEY_VAR, KEY)],
        std::time::Duration::from_secs(60),
    )
    .await;
    assert!(!ran.success);
    assert_eq!(
        ran.record["error"]["code"], "context_limit",
        "{}",
        ran.record
    );
    assert_eq!(mock.requests().len(), 1, "not sent again");
}

/// Mistral's API refuses `max_completion_tokens` with a 422 `extra_forbidden`: the request
/// goes again with the limit as `max_tokens`, and every later one too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mistrals_422_refusal_of_max_completion_tokens_is_answered_with_max_tokens() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.play(MockEngine::Mistral);
    echo_then_done(&mock);
    let ran = run(
        "mistral",
        &agent(&mock, "mistral", "devstral-small-2512", ""),
    )
    .await;
    assert!(ran.success, "{}", ran.stderr);
    assert_eq!(ran.stdout, "Done.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "one refused, then the run");
    let (status, message) = refused(&requests[0]).expect("the first is refused");
    assert_eq!(status, 422);
    assert!(message.contains("extra_forbidden"), "{message}");
    for r in &requests[1..] {
        assert!(r.body.get("max_completion_tokens").is_none(), "{}", r.body);
        assert_eq!(r.body["max_tokens"], 32_000);
    }
    let warnings = ran.warnings("mistral");
    assert_eq!(warnings.len(), 1, "{}", ran.stderr);
    assert!(
        warnings[0].contains("refused max_completion_tokens")
            && warnings[0].contains("send max_tokens instead"),
        "{}",
        warnings[0]
    );
}

/// A server that refuses the lowered limit too (TGI on Gaudi counts a few tokens more than
/// it reports, huggingface/tgi-gaudi#146) is not asked a third time: the run fails with
/// `provider_error`, and the message says which field to set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_refused_again_fails_saying_to_set_max_output_tokens() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let refusal = |limit: u32| {
        Step::json(
            422,
            json!({"error": format!(
                "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. \
                 Given: 5200 `inputs` tokens and {limit} `max_new_tokens`"
            ), "error_type": "validation"}),
        )
    };
    // The room it names, 2,992 tokens, refused in turn.
    mock.push([refusal(32_000), refusal(2_992), Step::text("never")]);
    let ws = tempfile::tempdir().unwrap();
    support::children::write(
        ws.path(),
        ".agents/agents/gaudi.md",
        &agent(&mock, "gaudi", "mistral-7b-local", ""),
    );
    let ran = binary::run_json(
        ws.path(),
        "gaudi",
        "Go.",
        &[(KEY_VAR, KEY)],
        std::time::Duration::from_secs(60),
    )
    .await;
    assert!(!ran.success);
    assert_eq!(
        ran.record["error"]["code"], "provider_error",
        "{}",
        ran.record
    );
    let message = ran.record["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("must be <= 8192")
            && message.contains("set `max_output_tokens` in .agents/agents/gaudi.md"),
        "{message}"
    );
    assert_eq!(output_limits(&mock.requests()), [32_000, 2_992]);
}
