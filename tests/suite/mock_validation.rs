//! The mock endpoints refuse what the real APIs refuse, in the real APIs' words, so a client
//! bug shows up as a failing test rather than a passing one.

use crate::support;

use mcp_agents::testkit::{MockAuth, MockProvider, RecordedOutcome, Step};
use serde_json::{Value, json};
use support::run_kit::KEY;

async fn post(url: String, headers: &[(&str, &str)], body: Value) -> (u16, Value) {
    let client = mcp_agents::net::loopback_client();
    let mut request = client.post(url).json(&body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn responses_body(input: Value) -> Value {
    json!({"model": "m", "store": false, "include": ["reasoning.encrypted_content"], "input": input})
}

async fn responses(mock: &MockProvider, input: Value) -> (u16, String) {
    let (status, body) = post(
        format!("{}/responses", mock.responses_base_url()),
        &[("authorization", &format!("Bearer {KEY}"))],
        responses_body(input),
    )
    .await;
    (
        status,
        body["error"]["message"].as_str().unwrap_or("").to_owned(),
    )
}

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

#[tokio::test]
async fn responses_mock_refuses_what_the_api_refuses() {
    let mock = MockProvider::start_unchecked(KEY).await.unwrap();
    responses_refuses_a_wrong_key(&mock).await;
    responses_refuses_unpaired_items_ids_and_forged_reasoning(&mock).await;
    let call = responses_refuses_a_call_without_its_reasoning(&mock).await;
    responses_refuses_loose_strict_tools_and_stored_requests(&mock).await;
    responses_counts_every_refusal(&mock, call).await;
}

async fn responses_refuses_a_wrong_key(mock: &MockProvider) {
    let (status, body) = post(
        format!("{}/responses", mock.responses_base_url()),
        &[("authorization", "Bearer wrong")],
        responses_body(json!([user("hi")])),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("invalid_api_key"))
    );
}

async fn responses_refuses_unpaired_items_ids_and_forged_reasoning(mock: &MockProvider) {
    let call =
        json!({"type": "function_call", "call_id": "call_x", "name": "f", "arguments": "{}"});
    let output = json!({"type": "function_call_output", "call_id": "call_x", "output": "ok"});
    assert_eq!(
        responses(mock, json!([user("hi"), call])).await,
        (400, "No tool output found for function call call_x.".into())
    );
    assert_eq!(
        responses(mock, json!([user("hi"), output])).await,
        (
            400,
            "No tool call found for function call output with call_id call_x.".into()
        )
    );
    let (status, message) = responses(
        mock,
        json!([{"type": "message", "id": "msg_9", "role": "user", "content": "x"}]),
    )
    .await;
    assert_eq!(status, 404);
    assert!(message.starts_with(
        "Item with id 'msg_9' not found. Items are not persisted when `store` is set to false."
    ));
    let forged = json!({"type": "reasoning", "summary": [], "encrypted_content": "forged"});
    let (status, message) = responses(mock, json!([user("hi"), forged, user("x")])).await;
    assert_eq!(status, 400);
    assert!(
        message.contains("sent back exactly as received"),
        "{message}"
    );
}

/// A reasoning item issued with a call must precede that call when it is sent back. The
/// call, sent back without its output, is refused again later.
async fn responses_refuses_a_call_without_its_reasoning(mock: &MockProvider) -> Value {
    mock.push([Step::tool_call("f", json!({})).with_reasoning()]);
    let (status, body) = post(
        format!("{}/responses", mock.responses_base_url()),
        &[("authorization", &format!("Bearer {KEY}"))],
        responses_body(json!([user("hi")])),
    )
    .await;
    assert_eq!(status, 200);
    let call_id = body["output"][1]["call_id"].as_str().unwrap().to_owned();
    let call = json!({"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"});
    let output = json!({"type": "function_call_output", "call_id": call_id, "output": "ok"});
    let (status, message) = responses(mock, json!([user("hi"), call, output])).await;
    assert_eq!(status, 400);
    assert!(
        message.contains("without its required 'reasoning' item"),
        "{message}"
    );
    call
}

async fn responses_refuses_loose_strict_tools_and_stored_requests(mock: &MockProvider) {
    let strict_tool = json!({"model": "m", "store": false, "include": ["reasoning.encrypted_content"],
        "input": [user("hi")], "tools": [{"type": "function", "name": "f", "strict": true,
        "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}]});
    let (status, _) = post(
        format!("{}/responses", mock.responses_base_url()),
        &[("authorization", &format!("Bearer {KEY}"))],
        strict_tool,
    )
    .await;
    assert_eq!(
        status, 400,
        "strict tools need additionalProperties false and all required"
    );

    let stored =
        json!({"model": "m", "input": [user("hi")], "include": ["reasoning.encrypted_content"]});
    let (status, _) = post(
        format!("{}/responses", mock.responses_base_url()),
        &[("authorization", &format!("Bearer {KEY}"))],
        stored,
    )
    .await;
    assert_eq!(status, 400, "store must be false");
}

/// Every request but the one scripted reply was refused, and counted so, even when
/// requests are no longer kept (the soak test relies on it).
async fn responses_counts_every_refusal(mock: &MockProvider, call: Value) {
    let requests = mock.requests();
    let scripted = requests
        .iter()
        .filter(|r| r.outcome == RecordedOutcome::Scripted)
        .count();
    assert_eq!(scripted, 1);
    assert_eq!(
        mock.refusals(),
        (requests.len() - scripted) as u64,
        "every other request is counted as refused"
    );
    mock.stop_recording();
    let (status, _) = responses(mock, json!([user("hi"), call])).await;
    assert_eq!(status, 400);
    assert!(mock.requests().is_empty());
    assert_eq!(mock.refusals(), (requests.len() - scripted) as u64 + 1);
}

async fn messages(mock: &MockProvider, messages: Value) -> (u16, String) {
    let (status, body) = post(
        format!("{}/v1/messages", mock.messages_base_url()),
        &[("x-api-key", KEY), ("anthropic-version", "2023-06-01")],
        json!({"model": "m", "max_tokens": 100, "messages": messages}),
    )
    .await;
    (
        status,
        body["error"]["message"].as_str().unwrap_or("").to_owned(),
    )
}

#[tokio::test]
async fn messages_mock_refuses_what_the_api_refuses() {
    let mock = MockProvider::start_unchecked(KEY).await.unwrap();
    let (status, body) = post(
        format!("{}/v1/messages", mock.messages_base_url()),
        &[("x-api-key", "nope"), ("anthropic-version", "2023-06-01")],
        json!({"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(
        (status, body["error"]["type"].as_str()),
        (401, Some("authentication_error"))
    );
    let (status, _) = post(
        format!("{}/v1/messages", mock.messages_base_url()),
        &[("x-api-key", KEY)],
        json!({"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(status, 400, "anthropic-version is required");

    let use_block = json!({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}});
    let (status, message) = messages(
        &mock,
        json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [use_block]},
               {"role": "user", "content": [{"type": "text", "text": "no result"}]}]),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        message,
        "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    );
    let (status, message) = messages(
        &mock,
        json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]}]),
    )
    .await;
    assert_eq!(status, 400);
    assert!(message.contains("unexpected `tool_use_id` found in `tool_result` blocks: toolu_9"));
    let (status, message) = messages(
        &mock,
        json!([{"role": "user", "content": "hi"},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "x"}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]),
    )
    .await;
    assert_eq!(
        (status, message.as_str()),
        (
            400,
            "messages.1.content.0.tool_use.input: Input should be an object"
        )
    );
    let (status, message) = messages(
        &mock,
        json!([{"role": "user", "content": "hi"},
               {"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": "sig-forged"}]},
               {"role": "user", "content": "more"}]),
    )
    .await;
    assert_eq!(status, 400);
    assert!(message.contains("Invalid `signature` in `thinking` block"));
    let (status, _) = messages(&mock, json!([{"role": "assistant", "content": "first"}])).await;
    assert_eq!(status, 400, "the first message must be the user's");
}

#[tokio::test]
async fn an_exhausted_script_is_a_server_error() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let (status, message) = responses(&mock, json!([user("hi")])).await;
    assert_eq!((status, message.as_str()), (500, "mock: script exhausted"));
}

#[tokio::test]
async fn the_bearer_only_mode_refuses_x_api_key_alone_as_such_endpoints_do() {
    let mock = MockProvider::start_unchecked(KEY).await.unwrap();
    mock.set_auth(MockAuth::BearerOnly);
    let messages = format!("{}/v1/messages", mock.messages_base_url());
    let body =
        json!({"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]});
    let x_api_key = [("x-api-key", KEY), ("anthropic-version", "2023-06-01")];
    let (status, answer) = post(messages.clone(), &x_api_key, body.clone()).await;
    assert_eq!((status, answer), (401, json!({"error": "unauthorized"})));
    let bearer = format!("Bearer {KEY}");
    let wrong_bearer = [
        ("authorization", "Bearer nope"),
        ("anthropic-version", "2023-06-01"),
    ];
    let (status, _) = post(messages.clone(), &wrong_bearer, body.clone()).await;
    assert_eq!(status, 401, "a wrong bearer token is refused too");
    mock.push([Step::text("ok")]);
    let good = [
        ("authorization", bearer.as_str()),
        ("anthropic-version", "2023-06-01"),
    ];
    let (status, answer) = post(messages, &good, body).await;
    assert_eq!((status, answer["type"].as_str()), (200, Some("message")));

    // Responses in this mode is what it always is: bearer only.
    let (status, answer) = post(
        format!("{}/responses", mock.responses_base_url()),
        &[("x-api-key", KEY)],
        responses_body(json!([user("hi")])),
    )
    .await;
    assert_eq!((status, answer), (401, json!({"error": "unauthorized"})));

    // A local engine ignores the key altogether.
    mock.set_auth(MockAuth::Ignored);
    mock.push([Step::text("ok")]);
    let (status, _) = post(
        format!("{}/responses", mock.responses_base_url()),
        &[],
        responses_body(json!([user("hi")])),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn responses_mock_holds_a_strict_text_format_to_strict_mode() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::text("{\"a\": \"x\"}")]);
    let with_format = |format: Value| {
        let mut body = responses_body(json!([user("hi")]));
        body["text"] = json!({"format": format});
        body
    };
    let url = format!("{}/responses", mock.responses_base_url());
    let auth = format!("Bearer {KEY}");
    let headers = [("authorization", auth.as_str())];
    let loose = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let (status, body) = post(
        url.clone(),
        &headers,
        with_format(
            json!({"type": "json_schema", "name": "final_answer", "schema": loose,
                           "strict": true}),
        ),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'additionalProperties' is required"),
        "{body}"
    );
    let (status, body) = post(
        url.clone(),
        &headers,
        with_format(json!({"type": "json_schema", "name": "has space", "schema": {}})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let strict = json!({"type": "object", "properties": {"a": {"type": "string"}},
                        "required": ["a"], "additionalProperties": false});
    let (status, body) = post(
        url,
        &headers,
        with_format(
            json!({"type": "json_schema", "name": "final_answer", "schema": strict,
                           "strict": true}),
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

/// What issue 24 found the real APIs refuse, in their words: blank text blocks, an empty
/// failed tool result, thinking budgets out of range, a budget-thinking turn that does not
/// start with its thinking, a refused kind of thinking, and effort levels a model lacks.
#[tokio::test]
async fn the_mocks_refuse_what_issue_24_found_the_apis_refuse() {
    let mock = MockProvider::start_unchecked(KEY).await.unwrap();
    messages_refuses_blank_text_and_an_empty_failure(&mock).await;
    messages_refuses_budgets_out_of_range_and_a_turn_without_its_thinking(&mock).await;
    the_mocks_refuse_a_kind_of_thinking_and_levels_a_model_lacks(&mock).await;
}

/// A Messages request's body at the mock, `extra` fields merged in; its status and error
/// message.
async fn messages_with(mock: &MockProvider, extra: Value, messages: Value) -> (u16, String) {
    let mut body = json!({"model": "m", "max_tokens": 2000, "messages": messages});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    let headers = [("x-api-key", KEY), ("anthropic-version", "2023-06-01")];
    let url = format!("{}/v1/messages", mock.messages_base_url());
    let (status, body) = post(url, &headers, body).await;
    (
        status,
        body["error"]["message"].as_str().unwrap_or("").to_owned(),
    )
}

/// A user's text, a tool turn of `assistant`'s blocks, and the user's `result`.
fn tool_turn(assistant: Value, result: Value) -> Value {
    json!([{"role": "user", "content": "hi"},
           {"role": "assistant", "content": assistant},
           {"role": "user", "content": [result]}])
}

fn use_t1() -> Value {
    json!({"type": "tool_use", "id": "t1", "name": "n", "input": {}})
}

async fn messages_refuses_blank_text_and_an_empty_failure(mock: &MockProvider) {
    assert_eq!(
        messages_with(
            mock,
            json!({}),
            json!([{"role": "user", "content": [{"type": "text", "text": " \n"}]}])
        )
        .await,
        (
            400,
            "messages: text content blocks must contain non-whitespace text".into()
        )
    );
    assert_eq!(
        messages_with(
            mock,
            json!({}),
            tool_turn(
                json!([use_t1()]),
                json!({"type": "tool_result", "tool_use_id": "t1", "content": "", "is_error": true})
            )
        )
        .await,
        (
            400,
            "messages.2.content.0.tool_result: content cannot be empty if `is_error` is true"
                .into()
        )
    );
}

async fn messages_refuses_budgets_out_of_range_and_a_turn_without_its_thinking(
    mock: &MockProvider,
) {
    let hi = json!([{"role": "user", "content": "hi"}]);
    assert_eq!(
        messages_with(
            mock,
            json!({"thinking": {"type": "enabled", "budget_tokens": 512}}),
            hi.clone()
        )
        .await,
        (
            400,
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024".into()
        )
    );
    assert_eq!(
        messages_with(
            mock,
            json!({"thinking": {"type": "enabled", "budget_tokens": 2000}}),
            hi
        )
        .await,
        (
            400,
            "`max_tokens` must be greater than `thinking.budget_tokens`.".into()
        )
    );
    let (status, message) = messages_with(
        mock,
        json!({"thinking": {"type": "enabled", "budget_tokens": 1024}}),
        tool_turn(
            json!([{"type": "text", "text": "Let me look."}, use_t1()]),
            json!({"type": "tool_result", "tool_use_id": "t1", "content": "ok"}),
        ),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        message.starts_with("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block"),
        "{message}"
    );
}

async fn the_mocks_refuse_a_kind_of_thinking_and_levels_a_model_lacks(mock: &MockProvider) {
    use mcp_agents::testkit::ModelRefuses;
    let hi = json!([{"role": "user", "content": "hi"}]);
    mock.refuse(ModelRefuses::BudgetThinking);
    let (status, message) = messages_with(
        mock,
        json!({"thinking": {"type": "enabled", "budget_tokens": 1024}}),
        hi.clone(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(message.starts_with("\"thinking.type.enabled\" is not supported for this model."));
    mock.take_efforts(&["low", "medium", "high", "max"]);
    assert_eq!(
        messages_with(mock, json!({"output_config": {"effort": "xhigh"}}), hi).await,
        (400, "This model does not support effort level 'xhigh'. Supported levels: high, low, max, medium.".into())
    );
    let (status, body) = post(
        format!("{}/responses", mock.responses_base_url()),
        &[("authorization", &format!("Bearer {KEY}"))],
        json!({"model": "gpt-5.1", "store": false, "input": "hi", "reasoning": {"effort": "minimal"}}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        (
            &body["error"]["param"],
            &body["error"]["code"],
            body["error"]["message"].as_str()
        ),
        (
            &json!("reasoning.effort"),
            &json!("unsupported_value"),
            Some(
                "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported values are: 'low', 'medium', 'high', and 'max'."
            )
        )
    );
}

/// A Chat Completions request's body at the mock: `messages`, and `extra` fields merged in.
async fn chat(mock: &MockProvider, messages: Value, extra: Value) -> (u16, Value) {
    let mut body = json!({"model": "m", "stream": true, "messages": messages});
    for (k, v) in extra.as_object().into_iter().flatten() {
        body[k] = v.clone();
    }
    post(
        format!("{}/chat/completions", mock.chat_base_url()),
        &[("authorization", &format!("Bearer {KEY}"))],
        body,
    )
    .await
}

/// The message of an error body, OpenAI's or Gemini's (a one-element list).
fn chat_error(body: &Value) -> String {
    let error = if body.is_array() {
        &body[0]["error"]
    } else {
        &body["error"]
    };
    error["message"].as_str().unwrap_or("").to_owned()
}

#[tokio::test]
async fn chat_mock_refuses_what_the_api_refuses() {
    let mock = MockProvider::start_unchecked(KEY).await.unwrap();
    let user = json!({"role": "user", "content": "hi"});
    let assistant = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]});
    let tool = json!({"role": "tool", "tool_call_id": "call_1", "content": "ok"});
    let cases: Vec<(Value, Value, &str)> = vec![
        (json!([]), json!({}), "[] is too short - 'messages'"),
        (
            json!([user, assistant, user]),
            json!({}),
            "The following tool_call_ids did not have response messages: call_1",
        ),
        (
            json!([user, tool]),
            json!({}),
            "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
        ),
        (
            json!([user, {"role": "assistant", "content": null}]),
            json!({}),
            "Invalid value for 'content': expected a string, got null.",
        ),
        (
            json!([user]),
            json!({"thinking": {"type": "enabled"}}),
            "Unrecognized request argument supplied: thinking",
        ),
        (
            json!([user, {"role": "assistant", "content": "x", "reasoning_content": "made up"}, user]),
            json!({}),
            "Additional properties are not allowed ('reasoning_content' was unexpected)",
        ),
        (
            json!([user, assistant, {"role": "tool", "tool_call_id": "call_1", "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]),
            json!({}),
            "Image URLs are only allowed for messages with role 'user'",
        ),
        (
            json!([user]),
            json!({"stream": false, "stream_options": {"include_usage": true}}),
            "only allowed when 'stream' is enabled",
        ),
        (
            json!([user]),
            json!({"max_completion_tokens": 0}),
            "Invalid 'max_completion_tokens': integer below minimum value",
        ),
        (
            json!([user]),
            json!({"tools": [{"type": "function", "function": {"name": "t",
                "parameters": {"type": "object", "anyOf": []}}}]}),
            "must not have 'anyOf' at the top level",
        ),
    ];
    for (messages, extra, expected) in cases {
        let (status, body) = chat(&mock, messages.clone(), extra).await;
        assert_eq!(status, 400, "{messages}: {body}");
        assert!(chat_error(&body).contains(expected), "{expected}: {body}");
    }
    let (status, body) = post(
        format!("{}/chat/completions", mock.chat_base_url()),
        &[("authorization", "Bearer wrong")],
        json!({"model": "m", "messages": [user]}),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("invalid_api_key"))
    );
    assert_eq!(mock.requests().len(), 11);
    assert!(
        mock.requests()
            .iter()
            .all(|r| matches!(r.outcome, RecordedOutcome::Refused(..)))
    );
}

/// DeepSeek refuses a tool-call turn without the `reasoning_content` it sent; Gemini a call
/// without its thought signature, and any field it does not know, in a list-wrapped error.
#[tokio::test]
async fn chat_servers_refuse_a_history_without_what_they_added() {
    use mcp_agents::testkit::ChatServer;
    for server in [ChatServer::DeepSeek, ChatServer::Gemini] {
        let mock = MockProvider::start_unchecked(KEY).await.unwrap();
        mock.set_chat_server(server);
        mock.push([Step::tool_call("t", json!({})).with_reasoning()]);
        let user = json!({"role": "user", "content": "hi"});
        let (status, _) = chat(&mock, json!([user]), json!({"stream": false})).await;
        assert_eq!(status, 200);
        // The call the mock issued, sent back without what it added.
        let id = match server {
            ChatServer::Gemini => "function-call-1-0",
            _ => "call_1_0",
        };
        let bare = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "t", "arguments": "{}"}}]});
        let tool = json!({"role": "tool", "tool_call_id": id, "content": "ok"});
        let (status, body) = chat(&mock, json!([user, bare, tool]), json!({})).await;
        assert_eq!(status, 400, "{server:?}: {body}");
        let expected = match server {
            ChatServer::Gemini => "Function call is missing a thought_signature",
            _ => "The reasoning_content in the thinking mode must be passed back to the API.",
        };
        assert!(chat_error(&body).contains(expected), "{server:?}: {body}");
        if server == ChatServer::Gemini {
            assert!(body.is_array(), "Gemini's errors are a list: {body}");
            let (_, body) = chat(&mock, json!([user]), json!({"store": true, "foo": 1})).await;
            assert!(
                chat_error(&body).contains("Invalid JSON payload received. Unknown name \"foo\""),
                "{body}"
            );
        }
    }
}
