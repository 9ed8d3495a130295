//! JSON Schema in a run, through the real binary (SPEC §6 steps 3–4): the final answer
//! against the agent's `output_schema` (one repair turn, then `invalid_output`), the schema
//! given to the model (instructions, and Responses `text.format` when it fits strict mode;
//! on Messages and Chat Completions, the instructions only), and tool arguments checked
//! against the child's own `inputSchema` before the call.

use crate::support;

use mcp_agents::testkit::Step;
use serde_json::{Value, json};
use support::builders::FixtureAgent;
use support::children::agent_on;
use support::run_kit::function_outputs;
use support::{ServerUnderTest, TestWorkspace};

/// Strict-mode shape: every property required, nothing else allowed.
const STRICT: &str = "output_schema:\n  type: object\n  properties:\n    verdict: { type: string, enum: [ok, bad] }\n  required: [verdict]\n  additionalProperties: false";
/// Valid JSON Schema, but not strict mode's subset.
const LOOSE: &str = "output_schema:\n  type: object\n  properties:\n    verdict: { type: string, enum: [ok, bad] }\n    note: { type: string, minLength: 1 }\n  required: [verdict]";

/// A judge with the strict schema on each wire: name, `wire_api`, frontmatter.
const JUDGES: [(&str, &str, &str); 3] = [
    ("judge", "responses", STRICT),
    ("claude-judge", "anthropic-messages", STRICT),
    ("chat-judge", "chat-completions", STRICT),
];

/// Agents with the strict schema on each wire, and one with the loose schema on Responses.
const STRICT_AND_LOOSE: [(&str, &str, &str); 4] = [
    ("strict", "responses", STRICT),
    ("loose", "responses", LOOSE),
    ("claude-strict", "anthropic-messages", STRICT),
    ("chat-strict", "chat-completions", STRICT),
];

/// A server whose agents are `agents`: each a name (its file `.agents/agents/NAME.md`), a
/// `wire_api` and frontmatter lines, with no child server.
async fn start(agents: &[(&'static str, &'static str, &'static str)]) -> ServerUnderTest {
    let mut ws = TestWorkspace::new();
    for &(name, wire, lines) in agents {
        ws = ws.agent(&format!(".agents/agents/{name}.md"), move |mock, _| {
            agent_on(wire, mock, name, "", lines)
        });
    }
    ws.stdio().await
}

/// The text of the user turns of a request body, any wire.
fn user_texts(body: &Value) -> Vec<String> {
    let items = body
        .get("input")
        .or_else(|| body.get("messages"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut texts = Vec::new();
    for item in items {
        if item["role"] != "user" {
            continue;
        }
        if let Some(text) = item["content"].as_str() {
            texts.push(text.to_owned());
        }
        for part in item["content"].as_array().into_iter().flatten() {
            if let Some(t) = part["text"].as_str() {
                texts.push(t.to_owned());
            }
        }
    }
    texts
}

/// The system context of a request: Responses `instructions`, Messages `system` (a string,
/// or text blocks, as a request with a cache breakpoint sends it), Chat Completions' first
/// message.
fn system(body: &Value) -> String {
    if body["messages"][0]["role"] == "system" {
        return body["messages"][0]["content"]
            .as_str()
            .unwrap_or("")
            .to_owned();
    }
    match body.get("instructions").or_else(|| body.get("system")) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_answer_then_a_valid_one_completes_with_structured_result() {
    let s = start(&JUDGES).await;
    let (mock, c) = (&s.mock, &s.c);
    for name in ["judge", "claude-judge", "chat-judge"] {
        let first = mock.requests().len();
        mock.push([
            Step::text("It looks fine to me."),
            Step::text("```json\n{\"verdict\": \"ok\"}\n```"),
        ]);
        let record = c.run_to_end(name, "Judge it.").await;
        assert_eq!(record["status"], "completed", "{name}: {record}");
        assert_eq!(
            record["structured_result"],
            json!({"verdict": "ok"}),
            "{name}"
        );
        assert_eq!(record["result"], "```json\n{\"verdict\": \"ok\"}\n```");
        let requests = mock.requests();
        assert_eq!(requests.len() - first, 2, "{name}: one repair turn");
        let repair = user_texts(&requests[first + 1].body);
        let asked = repair.last().unwrap();
        assert!(
            asked.contains("does not match the required output format")
                && asked.contains("not valid JSON"),
            "{name}: {asked}"
        );
        // The schema is in the instructions, on every wire.
        let instructions = system(&requests[first].body);
        assert!(
            instructions.contains("## Final answer format") && instructions.contains("\"verdict\""),
            "{name}: {instructions}"
        );
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_invalid_answers_fail_with_invalid_output_and_partial_result() {
    let s = start(&[("judge", "responses", STRICT)]).await;
    let (mock, c) = (&s.mock, &s.c);
    mock.push([
        Step::text(r#"{"verdict": "maybe"}"#),
        Step::text(r#"{"verdict": "perhaps"}"#),
        Step::text("never asked for"),
    ]);
    let record = c.run_to_end("judge", "Judge it.").await;
    assert_eq!(record["error"]["code"], "invalid_output", "{record}");
    assert_eq!(record["partial_result"], r#"{"verdict": "perhaps"}"#);
    let message = record["error"]["message"].as_str().unwrap();
    assert!(message.contains("`/verdict`"), "{message}");
    assert!(
        !message.contains("perhaps"),
        "no model text in errors: {message}"
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let repair = user_texts(&requests[1].body);
    assert!(
        repair.last().unwrap().contains("`/verdict`") && repair.last().unwrap().contains("maybe"),
        "the model is told what was wrong with its own value: {repair:?}"
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_get_the_schema_as_text_format_only_when_it_fits_strict_mode() {
    let s = start(&STRICT_AND_LOOSE).await;
    let (mock, c) = (&s.mock, &s.c);
    for name in ["strict", "loose", "claude-strict", "chat-strict"] {
        mock.push([Step::text(r#"{"verdict": "bad"}"#)]);
        let record = c.run_to_end(name, "Judge it.").await;
        assert_eq!(
            record["structured_result"],
            json!({"verdict": "bad"}),
            "{name}"
        );
    }
    let requests = mock.requests();
    let format = &requests[0].body["text"]["format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["strict"], true);
    assert_eq!(format["name"], "final_answer");
    assert_eq!(format["schema"]["required"], json!(["verdict"]));
    assert!(
        requests[1].body.get("text").is_none(),
        "loose: instructions only"
    );
    assert!(system(&requests[1].body).contains("minLength"));
    assert!(
        requests[2].body.get("text").is_none(),
        "Messages has no text.format"
    );
    // Chat Completions gets no `response_format`: servers of that API take it in ways of
    // their own, and the answer is checked against the schema either way.
    assert!(requests[3].body.get("response_format").is_none());
    assert!(system(&requests[3].body).contains("## Final answer format"));
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_are_checked_against_the_childs_schema_before_the_call() {
    let s = TestWorkspace::new()
        .with(FixtureAgent::named("caller").logging_calls())
        .stdio()
        .await;
    let (mock, c) = (&s.mock, &s.c);
    mock.push([
        Step::tool_calls(vec![
            ("fx__sleep", json!({"ms": "soon"})),
            ("fx__echo", json!({})),
        ]),
        Step::tool_call("fx__echo", json!({"text": "fixed"})),
        Step::text("done"),
    ]);
    let record = c.run_to_end("caller", "Judge it.").await;
    assert_eq!(record["status"], "completed", "{record}");
    let outputs = function_outputs(&mock.requests()[1].body);
    assert!(
        outputs[0].starts_with(
            "Error: the arguments for `fx__sleep` do not match its input schema, so it was not \
             called: `/ms`: "
        ),
        "{outputs:?}"
    );
    assert_eq!(
        outputs[1],
        "Error: the arguments for `fx__echo` do not match its input schema, so it was not \
         called: `/text`: required"
    );
    assert_eq!(
        s.calls_logged(),
        ["echo"],
        "only the fixed call reached the child"
    );
    s.close().await;
}
