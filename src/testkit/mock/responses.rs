//! The Responses side of the mock: validation as the real API does it, and rendering.

use std::collections::HashSet;

use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::cache::CachedUsage;
use super::script::{MockEngine, MockWire, ModelRefuses, ScriptedReply};
use super::sse::{Event, Writer, pieces};
use super::state::{MockState, Refusal, refusal, valid_tool_name};

fn bad(message: &str) -> Refusal {
    refusal(
        MockWire::Responses,
        400,
        "invalid_request_error",
        Some("input"),
        message,
    )
}

pub(super) fn validate(st: &MockState, headers: &HeaderMap, body: &Value) -> Result<(), Refusal> {
    super::auth::check(st, MockWire::Responses, headers)?;
    if body["model"].as_str().is_none_or(str::is_empty) {
        return Err(bad("Missing required parameter: 'model'."));
    }
    if body["store"] != json!(false) {
        return Err(bad(
            "mock: this endpoint serves stateless clients only; send store: false",
        ));
    }
    refused_parameter(st, body)?;
    if let Some(key) = body["prompt_cache_key"].as_str()
        && key.chars().count() > 64
    {
        let mut r = refusal(
            MockWire::Responses,
            400,
            "invalid_request_error",
            Some("prompt_cache_key"),
            &format!(
                "Invalid 'prompt_cache_key': string too long. Expected a string with maximum length 64, but got a string with length {} instead.",
                key.chars().count()
            ),
        );
        r.body["error"]["code"] = json!("string_above_max_length");
        return Err(r);
    }
    if let Some(max) = body.get("max_output_tokens").filter(|v| !v.is_null())
        && max.as_u64().is_none_or(|m| m < 16)
    {
        return Err(bad(
            "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16.",
        ));
    }
    validate_tools(body)?;
    validate_text_format(body)?;
    let input = match &body["input"] {
        Value::String(_) => return Ok(()),
        Value::Array(items) => items,
        _ => return Err(bad("Missing required parameter: 'input'.")),
    };
    validate_items(st, input)?;
    if let Some(limit) = st.context_limit {
        let size = body["input"].to_string().len() + body["instructions"].to_string().len();
        if size > limit && st.engine == MockEngine::LlamaCpp {
            return Err(super::llama_cpp::overflow(size / 4, limit / 4));
        }
        if size > limit {
            let mut r = bad(
                "Your input exceeds the context window of this model. Please adjust your input and try again.",
            );
            r.body["error"]["code"] = json!("context_length_exceeded");
            return Err(r);
        }
    }
    Ok(())
}

/// The 400 a model that does not take a parameter gives, in OpenAI's words.
fn refused_parameter(st: &MockState, body: &Value) -> Result<(), Refusal> {
    let unsupported = |param: &str, message: &str, code: Option<&str>| {
        let mut r = refusal(
            MockWire::Responses,
            400,
            "invalid_request_error",
            Some(param),
            message,
        );
        r.body["error"]["code"] = json!(code);
        Err(r)
    };
    if st.refuses.contains(&ModelRefuses::Temperature) && !body["temperature"].is_null() {
        return unsupported(
            "temperature",
            "Unsupported parameter: 'temperature' is not supported with this model.",
            Some("unsupported_parameter"),
        );
    }
    let includes_reasoning = body["include"]
        .as_array()
        .is_some_and(|i| i.iter().any(|v| v == "reasoning.encrypted_content"));
    if st.refuses.contains(&ModelRefuses::EncryptedReasoning) && includes_reasoning {
        return unsupported(
            "include",
            "Encrypted content is not supported with this model.",
            None,
        );
    }
    if st.refuses.contains(&ModelRefuses::Effort) && !body["reasoning"]["effort"].is_null() {
        return unsupported(
            "reasoning.effort",
            "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
            Some("unsupported_parameter"),
        );
    }
    if let (Some(levels), Some(effort)) = (&st.efforts, body["reasoning"]["effort"].as_str())
        && !levels.iter().any(|l| l == effort)
    {
        // openai/openai-agents-python#2089: the levels quoted, in order, the last after
        // "and".
        let list = quoted_levels(levels);
        return unsupported(
            "reasoning.effort",
            &format!(
                "Unsupported value: '{effort}' is not supported with the '{}' model. Supported values are: {list}.",
                body["model"].as_str().unwrap_or("")
            ),
            Some("unsupported_value"),
        );
    }
    Ok(())
}

/// Effort levels from the least to the most, as OpenAI lists them.
pub(super) const LEVEL_ORDER: [&str; 7] =
    ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

/// `levels` as OpenAI's refusal lists them: quoted, in order, the last after "and"
/// (`'low', 'medium', and 'high'`).
pub(super) fn quoted_levels(levels: &[String]) -> String {
    let quoted: Vec<String> = LEVEL_ORDER
        .iter()
        .filter(|l| levels.iter().any(|k| k == *l))
        .map(|l| format!("'{l}'"))
        .collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] if rest.len() == 1 => format!("{} and {last}", rest[0]),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

fn validate_tools(body: &Value) -> Result<(), Refusal> {
    let Some(tools) = body.get("tools").filter(|t| !t.is_null()) else {
        return Ok(());
    };
    let Some(tools) = tools.as_array() else {
        return Err(bad("Invalid type for 'tools': expected an array."));
    };
    for (i, tool) in tools.iter().enumerate() {
        if tool["type"] != "function" {
            return Err(bad(&format!("Invalid value for 'tools[{i}].type'.")));
        }
        let name = tool["name"].as_str().unwrap_or("");
        if !valid_tool_name(name) {
            return Err(bad(&format!(
                "Invalid 'tools[{i}].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
            )));
        }
        if !tool["parameters"].is_object() {
            return Err(bad(&format!(
                "Missing required parameter: 'tools[{i}].parameters'."
            )));
        }
        let parameters = &tool["parameters"];
        let top_level = ["oneOf", "anyOf", "allOf", "enum", "not"]
            .into_iter()
            .find(|k| parameters.get(*k).is_some());
        if parameters["type"] != "object" || top_level.is_some() {
            let mut r = bad(&format!(
                "Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{}\"'{}.",
                parameters["type"].as_str().unwrap_or("None"),
                top_level.map_or(String::new(), |k| format!(
                    " and it must not have '{k}' at the top level"
                ))
            ));
            r.body["error"]["code"] = json!("invalid_function_parameters");
            r.body["error"]["param"] = json!(format!("tools[{i}].parameters"));
            return Err(r);
        }
        match tool["strict"] {
            Value::Bool(true) => {
                if !strict_root(&tool["parameters"]) {
                    return Err(bad(&format!(
                        "Invalid schema for function '{name}': In context=(), 'additionalProperties' is required to be supplied and to be false, and 'required' must include every property."
                    )));
                }
            }
            Value::Bool(false) => {}
            _ => {
                return Err(bad(&format!(
                    "Missing required parameter: 'tools[{i}].strict'."
                )));
            }
        }
    }
    Ok(())
}

/// Strict mode's rule for an object schema, as the API checks it at the root: every
/// property required, `additionalProperties: false`.
fn strict_root(schema: &Value) -> bool {
    let properties: Vec<&String> = schema["properties"]
        .as_object()
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema["additionalProperties"] == json!(false)
        && properties.iter().all(|p| required.contains(&p.as_str()))
}

/// `text.format` as structured outputs take it: `json_schema` with a name, a schema object
/// and, when strict, a root that lists every property and allows no others.
fn validate_text_format(body: &Value) -> Result<(), Refusal> {
    let Some(format) = body.get("text").and_then(|t| t.get("format")) else {
        return Ok(());
    };
    match format["type"].as_str() {
        Some("text" | "json_object") => return Ok(()),
        Some("json_schema") => {}
        _ => return Err(bad("Invalid value for 'text.format.type'.")),
    }
    let name = format["name"].as_str().unwrap_or("");
    if name.is_empty() || name.len() > 64 || !valid_tool_name(name) {
        return Err(bad(
            "Invalid 'text.format.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        ));
    }
    let schema = &format["schema"];
    if !schema.is_object() {
        return Err(bad("Missing required parameter: 'text.format.schema'."));
    }
    if format["strict"] == true && (schema["type"] != "object" || !strict_root(schema)) {
        return Err(bad(&format!(
            "Invalid schema for response_format '{name}': In context=(), 'additionalProperties' is required to be supplied and to be false, and 'required' must include every property."
        )));
    }
    Ok(())
}

fn validate_items(st: &MockState, input: &[Value]) -> Result<(), Refusal> {
    let mut seen = Seen {
        // Every call needs an output after it: present here, and (checked at each output)
        // not before its call.
        answered: input
            .iter()
            .filter(|item| item["type"] == "function_call_output")
            .filter_map(|item| item["call_id"].as_str())
            .collect(),
        calls: HashSet::new(),
        reasoning: HashSet::new(),
    };
    for (i, item) in input.iter().enumerate() {
        if let Some(id) = item.get("id").and_then(Value::as_str) {
            return Err(refusal(
                MockWire::Responses,
                404,
                "invalid_request_error",
                Some("input"),
                &format!(
                    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
                ),
            ));
        }
        match item["type"].as_str() {
            Some("message") | None if item.get("role").is_some() => validate_message(i, item)?,
            Some("function_call") => validate_call(st, i, item, &mut seen)?,
            Some("function_call_output") => validate_output(i, item, &seen)?,
            Some("reasoning") => validate_reasoning(st, item, i + 1 < input.len(), &mut seen)?,
            other => {
                return Err(bad(&format!(
                    "Invalid value: '{}'. Unknown input item type.",
                    other.unwrap_or("(none)")
                )));
            }
        }
    }
    Ok(())
}

/// What the input holds, as far as it has been read.
struct Seen<'a> {
    /// The calls some output answers, anywhere in the input.
    answered: HashSet<&'a str>,
    /// The calls read so far.
    calls: HashSet<&'a str>,
    /// The encrypted content of the reasoning items read so far.
    reasoning: HashSet<&'a str>,
}

/// Input item `i`, a message: a role the API knows, and content.
fn validate_message(i: usize, item: &Value) -> Result<(), Refusal> {
    let role = item["role"].as_str().unwrap_or("");
    if !["user", "assistant", "system", "developer"].contains(&role) {
        return Err(bad(&format!(
            "Invalid value: '{role}'. Supported values are: 'assistant', 'system', 'developer', and 'user'."
        )));
    }
    if !(item["content"].is_string() || item["content"].is_array()) {
        return Err(bad(&format!(
            "Missing required parameter: 'input[{i}].content'."
        )));
    }
    Ok(())
}

/// Input item `i`, a function call: whole, after the reasoning issued with it, answered.
fn validate_call<'a>(
    st: &MockState,
    i: usize,
    item: &'a Value,
    seen: &mut Seen<'a>,
) -> Result<(), Refusal> {
    let (Some(call_id), Some(_), Some(_)) = (
        item["call_id"].as_str(),
        item["name"].as_str(),
        item["arguments"].as_str(),
    ) else {
        return Err(bad(&format!(
            "Missing required parameter: 'input[{i}].call_id', 'name' or 'arguments'."
        )));
    };
    if let Some(enc) = st.issued.call_reasoning.get(call_id)
        && !seen.reasoning.contains(enc.as_str())
    {
        return Err(bad(&format!(
            "Item 'fc_{call_id}' of type 'function_call' was provided without its required 'reasoning' item."
        )));
    }
    if !seen.answered.contains(call_id) {
        return Err(bad(&format!(
            "No tool output found for function call {call_id}."
        )));
    }
    if st.engine == MockEngine::LlamaCpp {
        super::llama_cpp::check_arguments(item)?;
    }
    seen.calls.insert(call_id);
    Ok(())
}

/// Input item `i`, a function call's output: after its call, text or text and images.
fn validate_output(i: usize, item: &Value, seen: &Seen<'_>) -> Result<(), Refusal> {
    let call_id = item["call_id"].as_str().unwrap_or("");
    if !seen.calls.contains(call_id) {
        return Err(bad(&format!(
            "No tool call found for function call output with call_id {call_id}."
        )));
    }
    if !(item["output"].is_string() || item["output"].is_array()) {
        return Err(bad(&format!(
            "Missing required parameter: 'input[{i}].output'."
        )));
    }
    for (j, part) in item["output"].as_array().into_iter().flatten().enumerate() {
        let image_url = part["image_url"].as_str().unwrap_or("");
        let ok = match part["type"].as_str() {
            Some("input_text") => part["text"].is_string(),
            Some("input_image") => {
                image_url.starts_with("data:image/") && image_url.contains(";base64,")
            }
            _ => false,
        };
        if !ok {
            return Err(bad(&format!(
                "Invalid value for 'input[{i}].output[{j}]': expected an input_text or input_image part."
            )));
        }
    }
    Ok(())
}

/// A reasoning item: sent back exactly as issued, and followed by the item it led to
/// (`followed`).
fn validate_reasoning<'a>(
    st: &MockState,
    item: &'a Value,
    followed: bool,
    seen: &mut Seen<'a>,
) -> Result<(), Refusal> {
    let enc = item["encrypted_content"].as_str().unwrap_or("");
    match st.issued.reasoning.get(enc) {
        Some(issued) if issued == item => {}
        _ => {
            return Err(bad(
                "The encrypted content for a reasoning item could not be verified: it must be sent back exactly as received.",
            ));
        }
    }
    if !followed {
        return Err(bad(
            "Item of type 'reasoning' was provided without its required following item.",
        ));
    }
    seen.reasoning.insert(enc);
    Ok(())
}

/// The reply as the whole response body a non-streamed request gets; `cached` is the
/// emulated cache's count of the request's input tokens, when it is on.
pub(super) fn render(
    st: &mut MockState,
    request: &Value,
    reply: &ScriptedReply,
    cached: Option<CachedUsage>,
) -> Value {
    let n = st.next_id();
    let mut output = Vec::new();
    let reasoning_enc = reasoning_item(st, n, request, reply, &mut output);
    if let Some(commentary) = &reply.commentary {
        let phase = reply.phases.then_some("commentary");
        output.push(text_message(format!("msg_{n}_c"), commentary, phase));
    }
    for (k, (name, arguments)) in reply.tool_calls.iter().enumerate() {
        let call_id = format!("call_{n}_{k}");
        if let Some(enc) = &reasoning_enc {
            st.issued
                .call_reasoning
                .insert(call_id.clone(), enc.clone());
        }
        output.push(json!({
            "type": "function_call", "id": format!("fc_{n}_{k}"), "call_id": call_id,
            "name": name, "arguments": arguments.to_string(), "status": "completed"
        }));
    }
    if let Some(text) = &reply.text {
        let phase = reply.phases.then_some("final_answer");
        output.push(text_message(format!("msg_{n}"), text, phase));
    }
    if let Some(said) = &reply.refusal {
        output.push(json!({
            "type": "message", "id": format!("msg_{n}_r"), "status": "completed", "role": "assistant",
            "content": [{"type": "refusal", "refusal": said}]
        }));
    }
    if reply.cut_off
        && let Some(last) = output.last_mut()
    {
        // The limit struck while the model wrote the last item.
        last["status"] = json!("incomplete");
        if last["type"] == "function_call" {
            let arguments = last["arguments"].as_str().unwrap_or("").to_owned();
            last["arguments"] = json!(half(&arguments));
        }
    }
    response_body(n, request, reply, cached, output)
}

/// The reasoning item the reply starts with, if it reasons, added to `output`; its
/// encrypted content, which the calls after it must be sent back with, when the request
/// asked for it (`include`).
fn reasoning_item(
    st: &mut MockState,
    n: u64,
    request: &Value,
    reply: &ScriptedReply,
    output: &mut Vec<Value>,
) -> Option<String> {
    let includes_reasoning = request["include"]
        .as_array()
        .is_some_and(|i| i.iter().any(|v| v == "reasoning.encrypted_content"));
    if reply.reasoning && !includes_reasoning {
        // Without `include`, the API sends reasoning without what would let it come back.
        output.push(json!({"type": "reasoning", "id": format!("rs_{n}"), "summary": []}));
        None
    } else if reply.reasoning {
        let enc = format!("enc-{n}");
        let item = json!({"type": "reasoning", "summary": [], "encrypted_content": enc});
        st.issued.reasoning.insert(enc.clone(), item.clone());
        let mut with_id = item;
        with_id["id"] = json!(format!("rs_{n}"));
        output.push(with_id);
        Some(enc)
    } else {
        None
    }
}

/// A completed assistant message of one output text, in `phase` when phases are on.
fn text_message(id: String, text: &str, phase: Option<&str>) -> Value {
    let mut message = json!({
        "type": "message", "id": id, "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
    });
    if let Some(phase) = phase {
        message["phase"] = json!(phase);
    }
    message
}

/// The response around `output`: its status (incomplete when filtered or cut off) and usage.
fn response_body(
    n: u64,
    request: &Value,
    reply: &ScriptedReply,
    cached: Option<CachedUsage>,
    output: Vec<Value>,
) -> Value {
    let (scripted_input, output_tokens) = reply.usage;
    let (input_tokens, cached_tokens) = cached.map_or((scripted_input, 0), |c| (c.input, c.read));
    let (status, incomplete) = if reply.filtered {
        ("incomplete", json!({"reason": "content_filter"}))
    } else if reply.cut_off {
        ("incomplete", json!({"reason": "max_output_tokens"}))
    } else {
        ("completed", Value::Null)
    };
    let mut response = json!({
        "id": format!("resp_{n}"), "object": "response", "created_at": 1_760_000_000 + n,
        "status": status, "error": null, "incomplete_details": incomplete,
        "model": request["model"], "output": output, "parallel_tool_calls": true,
        "tool_choice": "auto", "tools": [], "store": false,
        "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached_tokens},
                  "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input_tokens + output_tokens}
    });
    if reply.without_status
        && let Some(fields) = response.as_object_mut()
    {
        fields.remove("status");
    }
    response
}

/// The first half of `text` (at a character boundary).
fn half(text: &str) -> String {
    text.chars().take(text.chars().count() / 2).collect()
}

/// The events a streamed request gets for `response`, in the API's order: the response
/// created and in progress, each item added, its content or arguments in deltas, each item
/// done, then `response.completed` or `response.incomplete` with the whole response.
pub(super) fn events(response: &Value, delta_chars: usize) -> Vec<Event> {
    let mut out = Writer::new(true);
    let mut started = response.clone();
    started["status"] = json!("in_progress");
    started["output"] = json!([]);
    started["usage"] = Value::Null;
    started["incomplete_details"] = Value::Null;
    out.push("response.created", json!({"response": started}));
    out.push("response.in_progress", json!({"response": started}));
    let output = response["output"].as_array().cloned().unwrap_or_default();
    for (index, item) in output.iter().enumerate() {
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        match item["type"].as_str() {
            Some("message") => {
                added["content"] = json!([]);
                out.push(
                    "response.output_item.added",
                    json!({"output_index": index, "item": added}),
                );
                for (c, part) in item["content"].as_array().into_iter().flatten().enumerate() {
                    let at = Part {
                        item_id: &item["id"],
                        output_index: index,
                        content_index: c,
                    };
                    part_events(&mut out, &at, part, delta_chars);
                }
            }
            Some("function_call") => {
                added["arguments"] = json!("");
                out.push(
                    "response.output_item.added",
                    json!({"output_index": index, "item": added}),
                );
                arguments_events(&mut out, index, item, delta_chars);
            }
            _ => out.push(
                "response.output_item.added",
                json!({"output_index": index, "item": item}),
            ),
        }
        out.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
    }
    let last = if response["status"] == "incomplete" {
        "response.incomplete"
    } else {
        "response.completed"
    };
    out.push(last, json!({"response": response}));
    out.finish()
}

/// Where a content part is: its item, the item's place in the output, its place in the item.
struct Part<'a> {
    item_id: &'a Value,
    output_index: usize,
    content_index: usize,
}

impl Part<'_> {
    /// An event's data about this part: where it is, and `more`.
    fn data(&self, more: Value) -> Value {
        let mut v = json!({"item_id": self.item_id, "output_index": self.output_index,
            "content_index": self.content_index});
        for (k, x) in more.as_object().into_iter().flatten() {
            v[k] = x.clone();
        }
        v
    }
}

/// A message's content part: added, its text (or refusal) in deltas, done.
fn part_events(out: &mut Writer, at: &Part<'_>, part: &Value, delta_chars: usize) {
    let refusal = part["type"] == "refusal";
    let text = part[if refusal { "refusal" } else { "text" }]
        .as_str()
        .unwrap_or("");
    if refusal {
        out.push(
            "response.content_part.added",
            at.data(json!({"part": {"type": "refusal", "refusal": ""}})),
        );
        for piece in pieces(text, delta_chars) {
            out.push("response.refusal.delta", at.data(json!({"delta": piece})));
        }
        out.push("response.refusal.done", at.data(json!({"refusal": text})));
        out.push("response.content_part.done", at.data(json!({"part": part})));
        return;
    }
    out.push(
        "response.content_part.added",
        at.data(
            json!({"part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}}),
        ),
    );
    for piece in pieces(text, delta_chars) {
        out.push(
            "response.output_text.delta",
            at.data(json!({"delta": piece, "logprobs": []})),
        );
    }
    out.push(
        "response.output_text.done",
        at.data(json!({"text": text, "logprobs": []})),
    );
    out.push("response.content_part.done", at.data(json!({"part": part})));
}

/// A function call's arguments in deltas, then whole.
fn arguments_events(out: &mut Writer, index: usize, item: &Value, delta_chars: usize) {
    let id = &item["id"];
    let arguments = item["arguments"].as_str().unwrap_or("");
    for piece in pieces(arguments, delta_chars) {
        out.push(
            "response.function_call_arguments.delta",
            json!({"item_id": id, "output_index": index, "delta": piece}),
        );
    }
    out.push(
        "response.function_call_arguments.done",
        json!({"item_id": id, "output_index": index, "name": item["name"], "arguments": arguments}),
    );
}
