//! The Chat Completions replies of the mock, as the server it plays ([`ChatServer`]) sends
//! them (what each one's reply looks like is in `chat`'s notes), and what each reply records
//! that a later request must send back.

use serde_json::{Value, json};

use super::cache::CachedUsage;
use super::script::{ChatServer, ScriptedReply};
use super::sse::{DONE_EVENT, Event, pieces};
use super::state::MockState;

/// The reply as the parts a message and its chunks are made of.
struct Parts {
    id: String,
    content: String,
    reasoning: Option<String>,
    refusal: Option<String>,
    /// `(id, name, arguments as sent, extra_content)`.
    calls: Vec<(String, String, String, Option<Value>)>,
    finish: &'static str,
    usage: Value,
}

/// The parts of `reply`, recording what a later request must send back.
fn parts(st: &mut MockState, reply: &ScriptedReply, cached: Option<CachedUsage>) -> Parts {
    let n = st.next_id();
    let server = st.chat_server;
    let reasoning =
        (reply.reasoning && server == ChatServer::DeepSeek).then(|| format!("Thinking {n}."));
    let content = [reply.commentary.as_deref(), reply.text.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n\n");
    let count = reply.tool_calls.len();
    let mut calls = Vec::with_capacity(count);
    for (k, (name, arguments)) in reply.tool_calls.iter().enumerate() {
        let id = match server {
            ChatServer::Gemini => format!("function-call-{n}-{k}"),
            ChatServer::OpenAi | ChatServer::DeepSeek => format!("call_{n}_{k}"),
        };
        let whole = arguments.to_string();
        let arguments = if reply.cut_off && k + 1 == count {
            // The limit struck while the model wrote this one.
            whole.chars().take(whole.chars().count() / 2).collect()
        } else {
            whole
        };
        // Gemini 3 signs the first call of each reply.
        let signature = (server == ChatServer::Gemini && k == 0)
            .then(|| json!({"google": {"thought_signature": format!("sig-{n}")}}));
        if let Some(signature) = &signature {
            st.issued
                .thought_signatures
                .insert(id.clone(), signature.clone());
            st.issued
                .chat_extras
                .insert(("extra_content".to_owned(), signature.to_string()));
        }
        if let Some(reasoning) = &reasoning {
            st.issued
                .call_reasoning_content
                .insert(id.clone(), reasoning.clone());
        }
        calls.push((id, name.clone(), arguments, signature));
    }
    if let Some(reasoning) = &reasoning {
        st.issued
            .chat_extras
            .insert(("reasoning_content".to_owned(), json!(reasoning).to_string()));
        // In thinking mode DeepSeek asks for the field back on every assistant message of
        // a tool loop, empty where a reply did not think: the request oracle lets that
        // value through as one the provider asked for.
        st.issued
            .chat_extras
            .insert(("reasoning_content".to_owned(), json!("").to_string()));
    }
    let finish = if reply.filtered {
        "content_filter"
    } else if reply.cut_off {
        "length"
    } else if !calls.is_empty() && server != ChatServer::Gemini {
        "tool_calls"
    } else {
        "stop"
    };
    let (scripted_input, output) = reply.usage;
    let (input, read) = cached.map_or((scripted_input, 0), |c| (c.input, c.read));
    let mut usage = json!({"prompt_tokens": input, "completion_tokens": output,
        "total_tokens": input + output,
        "prompt_tokens_details": {"cached_tokens": read, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
            "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}});
    if server == ChatServer::DeepSeek {
        usage["prompt_cache_hit_tokens"] = json!(read);
        usage["prompt_cache_miss_tokens"] = json!(input - read.min(input));
    }
    Parts {
        id: format!("chatcmpl-mock{n}"),
        content,
        reasoning,
        refusal: reply.refusal.clone(),
        calls,
        finish,
        usage,
    }
}

/// The whole `chat.completion` a request without `stream: true` gets.
pub(super) fn render(
    st: &mut MockState,
    request: &Value,
    reply: &ScriptedReply,
    cached: Option<CachedUsage>,
) -> Value {
    let parts = parts(st, reply, cached);
    let mut message = json!({"role": "assistant",
        "content": if parts.content.is_empty() { Value::Null } else { json!(parts.content) },
        "refusal": parts.refusal, "annotations": []});
    if let Some(reasoning) = &parts.reasoning {
        message["reasoning_content"] = json!(reasoning);
    }
    if !parts.calls.is_empty() {
        message["tool_calls"] = Value::Array(
            parts
                .calls
                .iter()
                .map(|(id, name, arguments, signature)| {
                    let mut call = json!({"id": id, "type": "function",
                        "function": {"name": name, "arguments": arguments}});
                    if let Some(signature) = signature {
                        call["extra_content"] = signature.clone();
                    }
                    call
                })
                .collect(),
        );
    }
    json!({"id": parts.id, "object": "chat.completion", "created": 1_760_000_000,
        "model": request["model"], "choices": [{"index": 0, "message": message,
        "logprobs": null, "finish_reason": parts.finish}], "usage": parts.usage,
        "service_tier": "default", "system_fingerprint": "fp_mock"})
}

/// The chunks a streamed request gets, then `[DONE]`, as the server the mock plays sends
/// them.
pub(super) fn events(
    st: &mut MockState,
    request: &Value,
    reply: &ScriptedReply,
    cached: Option<CachedUsage>,
) -> Vec<Event> {
    let server = st.chat_server;
    let parts = parts(st, reply, cached);
    let include_usage = request["stream_options"]["include_usage"] == true;
    let model = request["model"].clone();
    let mut deltas: Vec<(Value, Option<&str>)> = Vec::new();
    let chars = reply.stream.delta_chars;
    let first = if parts.calls.is_empty() && parts.refusal.is_none() {
        json!({"role": "assistant", "content": "", "refusal": null})
    } else {
        json!({"role": "assistant", "content": null, "refusal": null})
    };
    deltas.push((first, None));
    for piece in pieces(parts.reasoning.as_deref().unwrap_or(""), chars) {
        deltas.push((json!({"reasoning_content": piece}), None));
    }
    for piece in pieces(&parts.content, chars) {
        deltas.push((json!({"content": piece}), None));
    }
    for piece in pieces(parts.refusal.as_deref().unwrap_or(""), chars) {
        deltas.push((json!({"refusal": piece}), None));
    }
    for (index, (id, name, arguments, signature)) in parts.calls.iter().enumerate() {
        if server == ChatServer::Gemini {
            let mut call = json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": arguments}});
            if let Some(signature) = signature {
                call["extra_content"] = signature.clone();
            }
            deltas.push((json!({"tool_calls": [call]}), None));
            continue;
        }
        deltas.push((
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        for piece in pieces(arguments, chars) {
            deltas.push((
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    deltas.push((json!({}), Some(parts.finish)));
    let total = deltas.len();
    let mut events: Vec<Event> = deltas
        .into_iter()
        .enumerate()
        .map(|(i, (delta, finish))| {
            let mut chunk = json!({"id": parts.id, "object": "chat.completion.chunk",
                "created": 1_760_000_000, "model": model, "service_tier": "default",
                "system_fingerprint": "fp_mock",
                "choices": [{"index": 0, "delta": delta, "logprobs": null,
                             "finish_reason": finish}]});
            match server {
                // Gemini's usage grows with every chunk; the last one is the reply's.
                ChatServer::Gemini => {
                    let mut usage = parts.usage.clone();
                    let output = usage["completion_tokens"].as_u64().unwrap_or(0);
                    usage["completion_tokens"] = json!(output * (i as u64 + 1) / total as u64);
                    chunk["usage"] = usage;
                }
                _ if include_usage => chunk["usage"] = Value::Null,
                _ => {}
            }
            if server == ChatServer::OpenAi {
                chunk["obfuscation"] = json!("mock");
            }
            (String::new(), chunk)
        })
        .collect();
    if include_usage && server != ChatServer::Gemini {
        events.push((
            String::new(),
            json!({"id": parts.id, "object": "chat.completion.chunk", "created": 1_760_000_000,
                "model": model, "service_tier": "default", "system_fingerprint": "fp_mock",
                "choices": [], "usage": parts.usage}),
        ));
    }
    events.push((DONE_EVENT.to_owned(), Value::Null));
    events
}
