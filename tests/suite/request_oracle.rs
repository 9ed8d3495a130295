//! The request oracle (`tests/oracle/check_requests.py`): the official SDKs' request types,
//! strictly, and the providers' documented rules, applied to every request a mock receives
//! (a mock checks its requests when it is dropped). Here: that it refuses what the APIs
//! refuse, in each rule, so a passing suite means something; and that every shape of
//! request this client makes passes it, on every wire: tools whose schemas have top-level
//! `oneOf`/`anyOf`/`allOf`/`enum`/`not`, images in tool results, reasoning and thinking sent
//! back (and on Chat Completions, DeepSeek's `reasoning_content` and Gemini's thought
//! signatures), every effort value the SDKs allow, temperature, refusals, cache breakpoints.

use crate::support;

use axum::http::{HeaderMap, HeaderValue};
use mcp_agents::definition::{ReasoningEffort, WireApi};
use mcp_agents::run::{Answer, RunOutcome};
use mcp_agents::testkit::ONE_PIXEL_PNG;
use mcp_agents::testkit::{ChatServer, MockWire, Recorded, RecordedOutcome, Step};
use mcp_agents::testkit::{Verdict, check_with_oracle};
use mcp_agents::toolbox::{ToolImage, ToolResult};
use serde_json::{Value, json};
use support::run_kit::{KEY, Loop, ScriptedTools};

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, HeaderValue::from_str(value).unwrap());
    }
    map
}

/// A request as the mock recorded it, with these headers.
fn recorded(wire: MockWire, pairs: &[(&'static str, &str)], body: Value) -> Recorded {
    Recorded {
        received: std::time::Instant::now(),
        wire,
        headers: headers(pairs),
        body,
        outcome: RecordedOutcome::Scripted,
        extras_sent: Vec::new(),
    }
}

fn responses(body: Value) -> Recorded {
    let bearer = format!("Bearer {KEY}");
    let pairs = [
        ("authorization", bearer.as_str()),
        ("content-type", "application/json"),
    ];
    recorded(MockWire::Responses, &pairs, body)
}

fn messages(body: Value) -> Recorded {
    let pairs = [
        ("x-api-key", KEY),
        ("anthropic-version", "2023-06-01"),
        ("content-type", "application/json"),
    ];
    recorded(MockWire::Messages, &pairs, body)
}

fn chat(body: Value) -> Recorded {
    let bearer = format!("Bearer {KEY}");
    let pairs = [
        ("authorization", bearer.as_str()),
        ("content-type", "application/json"),
    ];
    recorded(MockWire::Chat, &pairs, body)
}

fn good_chat() -> Value {
    json!({"model": "gemini-3-flash-preview", "stream": true,
           "stream_options": {"include_usage": true}, "max_completion_tokens": 1000,
           "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]})
}

/// A Chat Completions history with one call `c1` answered.
fn chat_round(call: Value) -> Value {
    json!([{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
           {"role": "assistant", "content": null, "tool_calls": [call]},
           {"role": "tool", "tool_call_id": "c1", "content": "ok"}])
}

fn user_item(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

fn good_responses() -> Value {
    json!({"model": "gpt-5.4", "instructions": "sys", "store": false, "stream": true,
           "include": ["reasoning.encrypted_content"], "max_output_tokens": 1000,
           "input": [user_item("hi")]})
}

fn good_messages() -> Value {
    json!({"model": "claude-opus-4-7", "max_tokens": 1000, "stream": true,
           "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
           "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})
}

fn with(mut body: Value, change: impl FnOnce(&mut Value)) -> Value {
    change(&mut body);
    body
}

fn verdict(requests: &[Recorded]) -> Verdict {
    check_with_oracle(requests).expect("the oracle runs")
}

/// A request the oracle must refuse: what it is, the request, and words of the violation.
type RefusedRequest = (&'static str, Recorded, &'static str);

/// Responses input items the API refuses: unknown keys, unpaired calls, server ids under
/// `store: false`, mislabelled images, and what only OpenAI's OpenAPI schema says (lengths,
/// and its unions read by `type`).
fn responses_items_refused() -> Vec<RefusedRequest> {
    let png_named_jpeg = format!("data:image/png;base64,{}", "/9j/4AAQSkZJRgABAQ==");
    vec![
        (
            "an unknown key in an input part",
            responses(with(good_responses(), |b| {
                b["input"][0]["content"][0]["extra"] = json!(true)
            })),
            "Extra inputs are not permitted",
        ),
        (
            "a call without its output",
            responses(with(good_responses(), |b| {
                b["input"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"type": "function_call",
                    "call_id": "c1", "name": "t", "arguments": "{}"}))
            })),
            "No tool output found for function call c1.",
        ),
        (
            "a server id under store: false",
            responses(with(good_responses(), |b| {
                b["input"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"type": "reasoning", "id": "rs_1",
                    "summary": [], "encrypted_content": "e"}));
                b["input"].as_array_mut().unwrap().push(user_item("x"));
            })),
            "an item with an `id` under store: false",
        ),
        (
            "an image whose bytes are not its type",
            responses(with(good_responses(), |b| {
                let input = b["input"].as_array_mut().unwrap();
                input.push(json!({"type": "function_call", "call_id": "c1", "name": "t", "arguments": "{}"}));
                input.push(json!({"type": "function_call_output", "call_id": "c1",
                    "output": [{"type": "input_image", "image_url": png_named_jpeg}]}));
            })),
            "the image bytes are not image/png",
        ),
        (
            "a call_id longer than 64 characters",
            responses(with(good_responses(), |b| {
                let long = "c".repeat(65);
                let input = b["input"].as_array_mut().unwrap();
                input.push(
                    json!({"type": "function_call", "call_id": long, "name": "t",
                                  "arguments": "{}"}),
                );
                input.push(json!({"type": "function_call_output", "call_id": long,
                                  "output": "ok"}));
            })),
            "OpenAI's OpenAPI CreateResponse schema refuses it: input.2.call_id",
        ),
        (
            "an output_text part sent back without the logprobs the API sent",
            responses(with(good_responses(), |b| {
                b["input"].as_array_mut().unwrap().extend([
                    json!({"type": "message", "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": "x", "annotations": []}]}),
                    user_item("more"),
                ]);
            })),
            "OpenAI's OpenAPI CreateResponse schema refuses it: input.1.content.0: 'logprobs' is a required property",
        ),
    ]
}

/// Responses request fields the API refuses, and a request without its key.
fn responses_fields_refused() -> Vec<RefusedRequest> {
    vec![
        (
            "an unknown top-level key",
            responses(with(good_responses(), |b| b["bogus"] = json!(1))),
            "bogus: Extra inputs are not permitted",
        ),
        (
            "a top-level oneOf",
            responses(with(good_responses(), |b| {
                b["tools"] = json!([{"type": "function", "name": "t", "strict": false,
                    "parameters": {"type": "object", "oneOf": []}}])
            })),
            "top-level `oneOf`",
        ),
        (
            "a top-level enum",
            responses(with(good_responses(), |b| {
                b["tools"] = json!([{"type": "function", "name": "t", "strict": false,
                    "parameters": {"type": "object", "enum": [{}]}}])
            })),
            "top-level `enum`",
        ),
        (
            "a prompt_cache_key over 64 characters",
            responses(with(good_responses(), |b| {
                b["prompt_cache_key"] = json!("k".repeat(65))
            })),
            "prompt_cache_key is 65 characters",
        ),
        (
            "an effort the SDK does not have",
            responses(with(good_responses(), |b| {
                b["reasoning"] = json!({"effort": "extreme"})
            })),
            "reasoning.effort: Input should be",
        ),
        (
            "no key header",
            Recorded {
                headers: headers(&[("content-type", "application/json")]),
                ..responses(good_responses())
            },
            "no `Authorization: Bearer <key>` header",
        ),
    ]
}

/// Messages histories the API refuses, in each rule.
fn messages_history_refused() -> Vec<RefusedRequest> {
    vec![
        (
            "a thinking block with a field it does not have",
            messages(with(good_messages(), |b| {
                b["messages"] = json!([
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                    {"role": "assistant", "content": [{"type": "thinking", "thinking": "t",
                        "signature": "s", "cache_control": {"type": "ephemeral"}}]},
                    {"role": "user", "content": [{"type": "text", "text": "go on"}]}])
            })),
            "Extra inputs are not permitted",
        ),
        (
            "five breakpoints",
            messages(with(good_messages(), |b| {
                let marked =
                    json!({"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}});
                b["messages"] = json!([{"role": "user", "content": [marked.clone(), marked.clone(), marked.clone(), marked]}])
            })),
            "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        ),
        (
            "text before a tool_result",
            messages(with(good_messages(), |b| {
                b["messages"] = json!([
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "t", "input": {}}]},
                    {"role": "user", "content": [{"type": "text", "text": "first"},
                        {"type": "tool_result", "tool_use_id": "u1", "content": "ok"}]}])
            })),
            "tool_result blocks must come first",
        ),
        (
            "a call left unanswered",
            messages(with(good_messages(), |b| {
                b["messages"] = json!([
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "t", "input": {}}]},
                    {"role": "user", "content": [{"type": "text", "text": "and?"}]}])
            })),
            "`tool_use` ids were found without `tool_result` blocks immediately after: u1",
        ),
        (
            "an empty text block",
            messages(with(good_messages(), |b| {
                b["messages"][0]["content"][0]["text"] = json!("")
            })),
            "text content blocks must be non-empty",
        ),
        (
            "a whitespace-only text block",
            messages(with(good_messages(), |b| {
                b["messages"][0]["content"] = json!([{"type": "text", "text": " \n"}])
            })),
            "text content blocks must contain non-whitespace text",
        ),
        (
            "a failed tool result with no content",
            messages(with(good_messages(), |b| {
                b["messages"] = json!([
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": [
                        {"type": "tool_use", "id": "t1", "name": "n", "input": {}}]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "", "is_error": true}]}
                ])
            })),
            "content cannot be empty if `is_error` is true",
        ),
    ]
}

/// Messages request fields the API refuses, alone or together, and a request without its
/// version.
fn messages_fields_refused() -> Vec<RefusedRequest> {
    vec![
        (
            "temperature with thinking",
            messages(with(good_messages(), |b| {
                b["thinking"] = json!({"type": "adaptive"});
                b["temperature"] = json!(0.5);
            })),
            "`temperature` other than 1 with thinking",
        ),
        (
            "a top-level anyOf",
            messages(with(
                good_messages(),
                |b| {
                    b["tools"] =
                        json!([{"name": "t", "input_schema": {"type": "object", "anyOf": []}}])
                },
            )),
            "top-level `anyOf`",
        ),
        (
            "budget thinking with a tool turn that does not start with its thinking",
            messages(with(good_messages(), |b| {
                b["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
                b["max_tokens"] = json!(2000);
                b["messages"] = json!([
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": "t1", "name": "n", "input": {}}]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}
                ])
            })),
            "must start with a thinking block",
        ),
        (
            "an effort Messages does not have",
            messages(with(good_messages(), |b| {
                b["output_config"] = json!({"effort": "minimal"})
            })),
            "output_config.effort: Input should be",
        ),
        (
            "a temperature out of range",
            messages(with(good_messages(), |b| b["temperature"] = json!(1.5))),
            "temperature 1.5 is not a number from 0 to 1",
        ),
        (
            "no anthropic-version",
            Recorded {
                headers: headers(&[("x-api-key", KEY), ("content-type", "application/json")]),
                ..messages(good_messages())
            },
            "anthropic-version is None",
        ),
    ]
}

/// Chat Completions histories the API refuses, and echoes of what the provider never sent.
fn chat_history_refused() -> Vec<RefusedRequest> {
    vec![
        (
            "a Chat call left unanswered",
            chat(with(good_chat(), |b| {
                let mut messages = chat_round(json!({"id": "c1", "type": "function",
                    "function": {"name": "t", "arguments": "{}"}}));
                messages.as_array_mut().unwrap().pop();
                messages
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"role": "user", "content": "and?"}));
                b["messages"] = messages;
            })),
            "The following tool_call_ids did not have response messages: c1",
        ),
        (
            "a tool message answering nothing",
            chat(with(good_chat(), |b| {
                b["messages"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"role": "tool", "tool_call_id": "c9", "content": "ok"}))
            })),
            "must be a response to a preceeding message with 'tool_calls'",
        ),
        (
            "reasoning_content the provider never sent",
            chat(with(good_chat(), |b| {
                let mut messages = chat_round(json!({"id": "c1", "type": "function",
                    "function": {"name": "t", "arguments": "{}"}}));
                messages[2]["reasoning_content"] = json!("made up");
                b["messages"] = messages;
            })),
            "`reasoning_content` that the provider did not send",
        ),
        (
            "a thought signature the provider never sent",
            chat(with(good_chat(), |b| {
                b["messages"] = chat_round(json!({"id": "c1", "type": "function",
                    "function": {"name": "t", "arguments": "{}"},
                    "extra_content": {"google": {"thought_signature": "forged"}}}));
            })),
            "`extra_content` that the provider did not send",
        ),
        (
            "an assistant message with nothing",
            chat(with(good_chat(), |b| {
                b["messages"].as_array_mut().unwrap().extend([
                    json!({"role": "assistant", "content": null}),
                    json!({"role": "user", "content": "x"}),
                ])
            })),
            "neither content nor tool_calls",
        ),
        (
            "an image in a tool message",
            chat(with(good_chat(), |b| {
                let mut messages = chat_round(json!({"id": "c1", "type": "function",
                    "function": {"name": "t", "arguments": "{}"}}));
                messages[3]["content"] = json!([{"type": "image_url",
                    "image_url": {"url": format!("data:image/png;base64,{ONE_PIXEL_PNG}")}}]);
                b["messages"] = messages;
            })),
            "messages.3",
        ),
    ]
}

/// Chat Completions request fields the API refuses, and call arguments that are not JSON.
fn chat_fields_refused() -> Vec<RefusedRequest> {
    vec![
        (
            "an unknown top-level key on Chat Completions",
            chat(with(good_chat(), |b| {
                b["thinking"] = json!({"type": "enabled"})
            })),
            "thinking: Extra inputs are not permitted",
        ),
        (
            "both names of the output limit",
            chat(with(good_chat(), |b| b["max_tokens"] = json!(1000))),
            "both max_completion_tokens and max_tokens",
        ),
        (
            "an effort the Chat SDK does not have",
            chat(with(good_chat(), |b| {
                b["reasoning_effort"] = json!("ultra")
            })),
            "reasoning_effort: Input should be",
        ),
        (
            "a Chat tool with a top-level not",
            chat(with(good_chat(), |b| {
                b["tools"] = json!([{"type": "function", "function": {"name": "t",
                    "parameters": {"type": "object", "not": {}}}}])
            })),
            "top-level `not`",
        ),
        (
            "stream_options without a stream",
            chat(with(good_chat(), |b| b["stream"] = json!(false))),
            "only allowed when 'stream' is enabled",
        ),
        (
            "call arguments that are not JSON",
            chat(with(good_chat(), |b| {
                b["messages"] = chat_round(json!({"id": "c1", "type": "function",
                    "function": {"name": "t", "arguments": "{\"path\": \"src/ma"}}));
            })),
            "the arguments are not a JSON object",
        ),
    ]
}

#[test]
fn the_oracle_refuses_what_the_apis_refuse() {
    let cases: Vec<RefusedRequest> = [
        responses_items_refused(),
        responses_fields_refused(),
        messages_history_refused(),
        messages_fields_refused(),
        chat_history_refused(),
        chat_fields_refused(),
    ]
    .concat();
    let requests: Vec<Recorded> = cases.iter().map(|(_, r, _)| r.clone()).collect();
    let found = verdict(&requests);
    assert_eq!(found.checked, cases.len());
    for (i, (what, _, expected)) in cases.iter().enumerate() {
        let prefix = format!("request {i} (");
        let about: Vec<&String> = found
            .violations
            .iter()
            .filter(|v| v.starts_with(&prefix))
            .collect();
        assert!(
            about.iter().any(|v| v.contains(expected)),
            "{what}: expected a violation saying {expected:?}, got {about:#?}"
        );
    }
}

#[test]
fn valid_requests_pass_and_the_documented_exceptions_are_counted() {
    let assistant = json!({"type": "message", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "Sure.", "annotations": [], "logprobs": []}]});
    let requests = vec![
        responses(good_responses()),
        responses(with(good_responses(), |b| {
            let input = b["input"].as_array_mut().unwrap();
            input.push(json!({"type": "reasoning", "summary": [], "encrypted_content": "e"}));
            input.push(assistant);
            input.push(user_item("thanks"));
        })),
        messages(good_messages()),
        messages(with(good_messages(), |b| b["temperature"] = json!(0.2))),
        // A definition's `auth` may choose the other header on either API (SPEC §3.1).
        Recorded {
            headers: headers(&[("x-api-key", KEY), ("content-type", "application/json")]),
            ..responses(good_responses())
        },
        Recorded {
            headers: headers(&[
                ("authorization", &format!("Bearer {KEY}")),
                ("anthropic-version", "2023-06-01"),
                ("content-type", "application/json"),
            ]),
            ..messages(good_messages())
        },
        chat(good_chat()),
        // What DeepSeek and Gemini added, sent back as they sent it.
        Recorded {
            extras_sent: vec![
                ("reasoning_content".into(), json!("Thinking.").to_string()),
                (
                    "extra_content".into(),
                    json!({"google": {"thought_signature": "sig"}}).to_string(),
                ),
            ],
            ..chat(with(good_chat(), |b| {
                let mut messages = chat_round(json!({"id": "c1", "type": "function",
                    "function": {"name": "t", "arguments": "{}"},
                    "extra_content": {"google": {"thought_signature": "sig"}}}));
                messages[2]["reasoning_content"] = json!("Thinking.");
                b["messages"] = messages;
                b["tools"] = json!([{"type": "function", "function": {"name": "t",
                    "description": "", "parameters": {"type": "object", "properties": {}}}}]);
                b["reasoning_effort"] = json!("max");
            }))
        },
    ];
    let found = verdict(&requests);
    assert_eq!(found.violations, Vec::<String>::new());
    let allowance = |name: &str| {
        found
            .allowances
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, n)| *n)
    };
    assert_eq!(
        allowance("id-less-items"),
        2,
        "a reasoning item and a message"
    );
    assert_eq!(allowance("messages-temperature"), 1);
    assert_eq!(allowance("chat-echoed-reasoning"), 1);
    assert_eq!(allowance("chat-echoed-extra-content"), 1);
}

/// Tools whose schemas the APIs refuse as they are, an image tool, and a plain one.
fn awkward_tools() -> ScriptedTools {
    let image = ToolResult {
        content: "A picture:".into(),
        images: vec![ToolImage {
            media_type: "image/png".into(),
            data: ONE_PIXEL_PNG.into(),
        }],
        is_error: false,
        changed: None,
    };
    let ok = || ToolResult::text("ok", false);
    ScriptedTools::new(vec![
        (
            "t__one_of",
            json!({"oneOf": [{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
                              {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}]}),
            ok(),
        ),
        (
            "t__any_of",
            json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
                   "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}),
            ok(),
        ),
        (
            "t__all_of",
            json!({"allOf": [{"type": "object", "properties": {"x": {"type": "integer"}}},
                              {"properties": {"y": {"type": "integer"}}, "required": ["y"]}]}),
            ok(),
        ),
        (
            "t__enum_not",
            json!({"type": "object", "properties": {"q": {"type": "string"}},
                   "enum": [{"q": "a"}, {"q": "b"}], "not": {"required": ["z"]}}),
            ok(),
        ),
        ("t__picture", json!({"type": "object"}), image),
        (
            "t__plain",
            json!({"type": "object", "properties": {}}),
            ok(),
        ),
    ])
}

/// Every tool called in one reply, reasoning on, then a final answer.
fn every_tool_then_text() -> Vec<Step> {
    vec![
        Step::tool_calls(vec![
            ("t__one_of", json!({"id": "1"})),
            ("t__any_of", json!({"a": "x"})),
            ("t__all_of", json!({"y": 2})),
            ("t__enum_not", json!({"q": "a"})),
            ("t__picture", json!({})),
            ("t__plain", json!({})),
        ])
        .with_reasoning(),
        Step::text("Done.").with_reasoning(),
    ]
}

#[tokio::test]
async fn every_shape_of_request_the_client_makes_passes_the_oracle() {
    for wire in WireApi::ALL {
        for (effort, temperature) in settings_to_try(wire) {
            every_shape_passes(wire, effort, temperature).await;
        }
    }
}

/// Every effort the wire's SDK takes, then a temperature, then neither.
fn settings_to_try(wire: WireApi) -> Vec<(Option<ReasoningEffort>, Option<f64>)> {
    let efforts: Vec<ReasoningEffort> = match wire {
        WireApi::Responses | WireApi::ChatCompletions => {
            ReasoningEffort::ALL.iter().map(|(_, e)| *e).collect()
        }
        WireApi::AnthropicMessages => vec![
            ReasoningEffort::Low,
            ReasoningEffort::Medium,
            ReasoningEffort::High,
            ReasoningEffort::XHigh,
            ReasoningEffort::Max,
        ],
    };
    let mut settings: Vec<(Option<ReasoningEffort>, Option<f64>)> =
        efforts.into_iter().map(|e| (Some(e), None)).collect();
    settings.push((None, Some(0.7)));
    settings.push((None, None));
    settings
}

/// Two runs of one conversation with these settings (every tool, then a refusal) pass the
/// oracle, and the last request carries the settings in the wire's words.
async fn every_shape_passes(
    wire: WireApi,
    effort: Option<ReasoningEffort>,
    temperature: Option<f64>,
) {
    let mut talk = Loop::new(wire, |d| {
        d.reasoning_effort = effort;
        d.temperature = temperature;
    })
    .await;
    talk.mock.push(every_tool_then_text());
    // A refusal and phases, in a second run of the same conversation.
    talk.mock.push([Step::refusal("I can't help with that.")]);
    let tools = awkward_tools();
    let first = talk
        .run("You test things.", "Use every tool.", &tools)
        .await;
    assert_eq!(first, RunOutcome::Completed("Done.".into()), "{wire:?}");
    let second = talk.run("You test things.", "And this?", &tools).await;
    assert_eq!(
        second,
        RunOutcome::Completed(Answer {
            text: "I can't help with that.".into(),
            refused: true,
            structured: None,
        })
    );
    for r in talk.mock.requests() {
        assert_eq!(
            r.outcome,
            RecordedOutcome::Scripted,
            "{wire:?}: {:#}",
            r.body
        );
    }
    let found = talk.mock.oracle_verdict().expect("the oracle runs");
    assert_eq!(found.checked, 3);
    assert_eq!(
        found.violations,
        Vec::<String>::new(),
        "{wire:?} effort {effort:?} temperature {temperature:?}"
    );
    let bodies = talk.bodies();
    assert_settings_sent(wire, &bodies[2], effort, temperature);
}

fn assert_settings_sent(
    wire: WireApi,
    last: &Value,
    effort: Option<ReasoningEffort>,
    temperature: Option<f64>,
) {
    match wire {
        WireApi::Responses => {
            assert_eq!(
                last["reasoning"]["effort"].as_str(),
                effort.map(|e| e.as_str())
            );
            assert_eq!(last["temperature"].as_f64(), temperature);
        }
        WireApi::ChatCompletions => {
            assert_eq!(
                last["reasoning_effort"].as_str(),
                effort.map(|e| e.as_str())
            );
            assert_eq!(last["temperature"].as_f64(), temperature);
        }
        WireApi::AnthropicMessages => {
            assert_eq!(
                last["output_config"]["effort"].as_str(),
                effort.map(|e| e.as_str())
            );
            assert_eq!(
                last["thinking"],
                if effort.is_some() {
                    json!({"type": "adaptive"})
                } else {
                    Value::Null
                },
                "effort turns adaptive thinking on"
            );
            assert_eq!(last["temperature"].as_f64(), temperature);
        }
    }
}

/// DeepSeek's and Gemini's Chat Completions: what they add to a reply goes back exactly, the
/// mocks (which refuse a history without it, in the providers' words) take every request, and
/// the oracle counts each echo as its documented exception.
#[tokio::test]
async fn chat_provider_extras_go_back_as_sent_and_are_counted() {
    // The second request echoes what the first reply added; the third, both replies'
    // (Gemini signs calls only, and the second reply has none). DeepSeek takes text only:
    // the second request, with the tools' image, is refused once and sent again with a note
    // in its place (suite::chat_refusals), an echo more.
    for (server, allowance, echoes, refused) in [
        (ChatServer::DeepSeek, "chat-echoed-reasoning", 4, 1),
        (ChatServer::Gemini, "chat-echoed-extra-content", 2, 0),
    ] {
        let mut talk = Loop::new(WireApi::ChatCompletions, |d| {
            d.reasoning_effort = Some(ReasoningEffort::High);
        })
        .await;
        talk.mock.set_chat_server(server);
        talk.mock.push(every_tool_then_text());
        talk.mock.push([Step::text("Again.").with_reasoning()]);
        let tools = awkward_tools();
        let first = talk
            .run("You test things.", "Use every tool.", &tools)
            .await;
        assert_eq!(first, RunOutcome::Completed("Done.".into()), "{server:?}");
        let second = talk.run("You test things.", "And this?", &tools).await;
        assert_eq!(second, RunOutcome::Completed("Again.".into()), "{server:?}");
        assert_eq!(talk.mock.refusals(), refused, "{server:?}");
        let found = talk.mock.oracle_verdict().expect("the oracle runs");
        assert_eq!(found.violations, Vec::<String>::new(), "{server:?}");
        let counted = found
            .allowances
            .iter()
            .find(|(n, _)| n == allowance)
            .map_or(0, |(_, n)| *n);
        assert_eq!(counted, echoes, "{server:?}: {:?}", found.allowances);
    }
}
