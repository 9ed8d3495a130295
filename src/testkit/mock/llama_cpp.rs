//! The mock as llama.cpp's `llama-server` (commit 0c1e57098, the one `scripts/install-engine`
//! builds), where it differs from the official APIs; every shape here was recorded from the
//! real server (issue 25):
//!
//! - errors in OpenAI's shape on both wires, the HTTP status as a number in `code`:
//!   `{"error": {"code": 400, "message": …, "type": …}}`;
//! - a key taken from `Authorization: Bearer` or `x-api-key` on both wires, a wrong one
//!   answered `401 {"error": {"message": "Invalid API Key", "type": "authentication_error",
//!   "code": 401}}`;
//! - an overflow: `400 exceed_context_size_error` "request (N tokens) exceeds the available
//!   context size (M tokens), try increasing it", with `n_prompt_tokens` and `n_ctx`;
//! - Responses: a reply the output limit cut off is `completed`, the call in it too, with
//!   its arguments as far as they got; a `function_call` sent back with arguments that are
//!   not JSON is answered `500 server_error` "Failed to parse tool call arguments as JSON";
//!   the stream has no `sequence_number`, no `output_index`, no
//!   `function_call_arguments.done`, a `response.created` / `.in_progress` with only `id`,
//!   `object` and `status`, and `timings` beside the finished response;
//! - Messages: the message id is `chatcmpl-…`, and a tool use starts without `input`.
//!
//! No request id header is sent on either wire.

use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::sse::Event;
use super::state::{MockState, Refusal};

/// An error body as the server writes it.
fn error(status: u16, kind: &str, message: &str) -> Value {
    json!({"error": {"code": status, "message": message, "type": kind}})
}

/// The type the server gives an error of `status`.
fn kind_for(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        404 => "not_found_error",
        400..=499 => "invalid_request_error",
        _ => "server_error",
    }
}

/// A refusal of the official mock's checks, in the server's error shape (its message kept).
pub(super) fn reshape(refusal: Refusal) -> Refusal {
    if refusal.body["error"]["code"].is_u64() {
        return refusal;
    }
    Refusal {
        body: error(refusal.status, kind_for(refusal.status), &refusal.message),
        ..refusal
    }
}

/// The key, from either header, on either wire.
pub(super) fn auth(st: &MockState, headers: &HeaderMap) -> Result<(), Refusal> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let bearer = format!("Bearer {}", st.key);
    if header("authorization") == Some(bearer.as_str()) || header("x-api-key") == Some(&st.key) {
        return Ok(());
    }
    Err(Refusal {
        status: 401,
        message: "Invalid API Key".to_owned(),
        body: json!({"error": {"message": "Invalid API Key", "type": "authentication_error",
                               "code": 401}}),
    })
}

/// The 400 of a prompt of `tokens` over a context of `n_ctx`.
pub(super) fn overflow(tokens: usize, n_ctx: usize) -> Refusal {
    let message = format!(
        "request ({tokens} tokens) exceeds the available context size ({n_ctx} tokens), try \
         increasing it"
    );
    let mut body = error(400, "exceed_context_size_error", &message);
    body["error"]["n_prompt_tokens"] = json!(tokens);
    body["error"]["n_ctx"] = json!(n_ctx);
    Refusal {
        status: 400,
        message,
        body,
    }
}

/// The 500 for a `function_call` item of a Responses history whose `arguments` do not parse
/// (nlohmann::json's words, the column one past where the text stopped).
pub(super) fn check_arguments(item: &Value) -> Result<(), Refusal> {
    let arguments = item["arguments"].as_str().unwrap_or("");
    let Err(e) = serde_json::from_str::<Value>(arguments) else {
        return Ok(());
    };
    let why = if e.is_eof() {
        format!(
            "parse error at line 1, column {}: syntax error while parsing value - unexpected \
             end of input; expected '[', '{{', or a literal",
            arguments.chars().count() + 1
        )
    } else {
        format!(
            "parse error at line {}, column {}: syntax error while parsing value - invalid \
             literal",
            e.line(),
            e.column()
        )
    };
    let message = format!(
        "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] {why}"
    );
    Err(Refusal {
        status: 500,
        body: error(500, "server_error", &message),
        message,
    })
}

/// A Responses reply the output limit cut off, as the server reports it: `completed`, the
/// item it was writing too (its content or arguments as far as they got).
pub(super) fn responses_reply(response: &mut Value) {
    if response["status"] != "incomplete" {
        return;
    }
    response["status"] = json!("completed");
    response["incomplete_details"] = Value::Null;
    for item in response["output"].as_array_mut().into_iter().flatten() {
        item["status"] = json!("completed");
    }
}

/// The official mock's Responses events, as the server streams them.
pub(super) fn responses_events(events: Vec<Event>) -> Vec<Event> {
    events
        .into_iter()
        .filter(|(kind, _)| kind != "response.function_call_arguments.done")
        .map(|(kind, mut data)| {
            if let Some(fields) = data.as_object_mut() {
                for name in ["sequence_number", "output_index", "content_index"] {
                    fields.remove(name);
                }
            }
            match kind.as_str() {
                "response.created" | "response.in_progress" => {
                    let started = &data["response"];
                    data["response"] = json!({"id": started["id"], "object": "response",
                                              "status": "in_progress"});
                }
                "response.completed" => {
                    let usage = &data["response"]["usage"];
                    data["timings"] = json!({"cache_n": 0,
                        "prompt_n": usage["input_tokens"], "predicted_n": usage["output_tokens"]});
                }
                _ => {}
            }
            (kind, data)
        })
        .collect()
}

/// The official mock's Messages events, as the server streams them.
pub(super) fn messages_events(events: Vec<Event>) -> Vec<Event> {
    events
        .into_iter()
        .map(|(kind, mut data)| {
            match kind.as_str() {
                "message_start" => {
                    let id = data["message"]["id"].as_str().unwrap_or("").to_owned();
                    data["message"]["id"] = json!(format!("chatcmpl-{id}"));
                }
                "content_block_start" if data["content_block"]["type"] == "tool_use" => {
                    if let Some(block) = data["content_block"].as_object_mut() {
                        block.remove("input");
                    }
                }
                _ => {}
            }
            (kind, data)
        })
        .collect()
}
