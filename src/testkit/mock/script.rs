//! What a test scripts (the steps a mock answers with, the credential headers it accepts)
//! and what it can read back (the requests the mock received).

use std::time::Duration;

use axum::http::HeaderMap;
use serde_json::Value;

/// Which wire format a request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MockWire {
    Responses,
    Messages,
    /// Chat Completions (`POST …/chat/completions`).
    Chat,
}

/// Whose Chat Completions the mock plays ([`MockProvider::set_chat_server`](super::MockProvider::set_chat_server)):
/// the same API, streamed and refused in each server's own way (see `chat.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ChatServer {
    /// OpenAI's own: indexed call fragments, the usage in a last chunk of its own, unknown
    /// fields refused.
    #[default]
    OpenAi,
    /// DeepSeek's: thinking in `reasoning_content`, required back on tool-call turns.
    DeepSeek,
    /// Gemini's OpenAI-compatible endpoint: calls whole and without `index`, a thought
    /// signature required back on them, `finish_reason` `stop` for calls, usage on every
    /// chunk, errors as a JSON list.
    Gemini,
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Step {
    /// A successful reply, rendered in the request's wire format.
    Reply(ScriptedReply),
    /// Exactly this status, headers and body.
    Raw {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Waits, then takes the inner step.
    Delay(Duration, Box<Step>),
    /// Never answers.
    Hang,
    /// Sends the status line and part of a body, then drops the connection.
    Drop,
}

/// How a streamed reply is delivered (a request with `stream: true`); a request without it
/// gets the same reply as one JSON body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamShape {
    /// The wait before each event after the first.
    pub event_delay: Duration,
    /// The most characters of text, thinking or tool arguments one delta event carries
    /// (0: each in one delta).
    pub delta_chars: usize,
    /// What happens instead of the rest of the stream once this many events were sent.
    pub fault: Option<(usize, StreamFault)>,
    /// A comment line (`: …`) sent before the first event and between every two, as
    /// OpenRouter sends `: OPENROUTER PROCESSING` while a model works; its bytes as given
    /// (a comment is any bytes up to the line end: the format never decodes it).
    pub keep_alive: Option<Vec<u8>>,
    /// The body is written in pieces of at most this many bytes, a millisecond apart, as a
    /// long event reaches a client over a real network: in TCP-sized pieces, not whole
    /// (0: each event in one write).
    pub piece_bytes: usize,
}

/// A stream that does not end as it should.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFault {
    /// Nothing more is sent, and the connection stays open.
    Stall,
    /// The body ends, without the event that completes the reply.
    End,
    /// An `error` event (Messages `overloaded_error`, Responses `server_is_overloaded`),
    /// then the end of the body.
    Overloaded,
    /// What LiteLLM's proxy (1.80) sends when the model fails mid-reply: one data-only
    /// frame, `data: {"error": {"message", "type": "None", "param": "None", "code": "<HTTP
    /// status>"}}`, no `event:` line, then the end of the body.
    GatewayError(u16),
    /// What LiteLLM's proxy (1.110) sends instead: `event: error` whose data has the flat
    /// `code` (`server_error`) and the nested `error` whose `code` is the HTTP status.
    GatewayErrorEvent(u16),
    /// The body ends right after the last event's `data:` line, before the blank line that
    /// closes it: a stream cut just after its terminal event (a proxy or load balancer that
    /// closes the connection as soon as the upstream's last bytes are relayed).
    Unclosed,
    /// Chat Completions: the whole stream, its `finish_reason` and usage chunks included,
    /// but no `data: [DONE]` after them, as older TGI releases and some llama.cpp forks end a
    /// reply.
    WithoutDone,
}

/// An optional parameter the mock's model refuses, with the error the real API gives
/// ([`MockProvider::refuse`](super::MockProvider::refuse)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelRefuses {
    /// `temperature`: OpenAI reasoning models, Claude Opus 4.7 and later.
    Temperature,
    /// Responses `include: ["reasoning.encrypted_content"]`: OpenAI non-reasoning models.
    EncryptedReasoning,
    /// Responses `reasoning.effort`, Messages `output_config.effort`.
    Effort,
    /// Messages `thinking: {type: "adaptive"}`: Claude 4.5 and earlier ("adaptive thinking
    /// is not supported on this model").
    AdaptiveThinking,
    /// Messages `thinking: {type: "enabled", budget_tokens}`: Claude Opus 4.7 and later
    /// ("\"thinking.type.enabled\" is not supported for this model. …").
    BudgetThinking,
    /// Chat Completions `max_completion_tokens`, as a server that predates it answers
    /// ("Unrecognized request argument supplied: max_completion_tokens").
    CompletionTokens,
    /// Chat Completions `stream_options`, likewise.
    StreamOptions,
}

/// A reply's content; ids, signatures and encrypted reasoning are made up by the mock.
#[derive(Debug, Clone, Default)]
pub struct ScriptedReply {
    pub text: Option<String>,
    /// Text before the answer: a message of its own (Responses) or a text block before it
    /// (Messages).
    pub commentary: Option<String>,
    /// Responses: the commentary and the answer carry `phase` (`commentary`,
    /// `final_answer`).
    pub phases: bool,
    /// The model declines: a Responses message with a `refusal` content part; a Messages
    /// reply with stop reason `refusal` and this as its `stop_details.explanation` (what
    /// the model wrote before it was stopped is `text`).
    pub refusal: Option<String>,
    pub tool_calls: Vec<(String, Value)>,
    /// Adds a reasoning item (Responses, with `encrypted_content`) or a thinking block
    /// (Messages, with a `signature`) that later requests must echo unchanged.
    pub reasoning: bool,
    /// Messages `stop_reason` to report instead of the natural one (`pause_turn`,
    /// `max_tokens`, `model_context_window_exceeded`, `refusal`).
    pub stop_reason: Option<String>,
    /// The reply stops at the output limit: Messages `max_tokens`, Responses `incomplete`
    /// with `max_output_tokens`, Chat Completions `finish_reason: "length"`; a tool call it
    /// ends with has only half its arguments.
    pub cut_off: bool,
    /// The provider's content filter withheld the reply: Chat Completions `finish_reason:
    /// "content_filter"`, Messages stop reason `refusal`, Responses `incomplete` with
    /// `content_filter`.
    pub filtered: bool,
    /// Responses: the response the terminal event carries has no `status` (the spec does
    /// not require one; some compatible servers leave it out).
    pub without_status: bool,
    pub usage: (u64, u64),
    pub stream: StreamShape,
}

impl Step {
    /// A final text answer.
    pub fn text(text: &str) -> Step {
        Step::Reply(ScriptedReply {
            text: Some(text.to_owned()),
            usage: (100, 20),
            ..ScriptedReply::default()
        })
    }

    /// A reply with some text before the answer (commentary, without phases).
    pub fn text_after(commentary: &str, answer: &str) -> Step {
        Step::Reply(ScriptedReply {
            text: Some(answer.to_owned()),
            commentary: Some(commentary.to_owned()),
            usage: (100, 20),
            ..ScriptedReply::default()
        })
    }

    /// Marks the messages of a Responses reply with their phases.
    pub fn with_phases(self) -> Step {
        self.map_reply(|r| r.phases = true)
    }

    /// The model declines to answer.
    pub fn refusal(said: &str) -> Step {
        Step::Reply(ScriptedReply {
            refusal: Some(said.to_owned()),
            usage: (100, 5),
            ..ScriptedReply::default()
        })
    }

    /// A reply of reasoning (Responses) or thinking (Messages) and nothing else: with
    /// [`cut_off`](Self::cut_off), a model whose reasoning took its whole output limit.
    pub fn reasoning_only() -> Step {
        Step::Reply(ScriptedReply {
            reasoning: true,
            usage: (100, 20),
            ..ScriptedReply::default()
        })
    }

    /// One tool call.
    pub fn tool_call(name: &str, arguments: Value) -> Step {
        Step::tool_calls(vec![(name, arguments)])
    }

    /// Several tool calls in one reply (parallel calls).
    pub fn tool_calls(calls: Vec<(&str, Value)>) -> Step {
        Step::Reply(ScriptedReply {
            tool_calls: calls.into_iter().map(|(n, a)| (n.to_owned(), a)).collect(),
            usage: (100, 20),
            ..ScriptedReply::default()
        })
    }

    /// Adds reasoning (or thinking) to a reply.
    pub fn with_reasoning(self) -> Step {
        match self {
            Step::Reply(mut r) => {
                r.reasoning = true;
                Step::Reply(r)
            }
            other => other,
        }
    }

    /// Overrides the Messages stop reason of a reply.
    pub fn with_stop_reason(self, stop: &str) -> Step {
        match self {
            Step::Reply(mut r) => {
                r.stop_reason = Some(stop.to_owned());
                Step::Reply(r)
            }
            other => other,
        }
    }

    /// Cuts the reply off at the output limit (every wire).
    pub fn cut_off(self) -> Step {
        self.map_reply(|r| r.cut_off = true)
    }

    /// The provider's content filter withholds the reply (every wire).
    pub fn filtered(self) -> Step {
        self.map_reply(|r| r.filtered = true)
    }

    /// Streams the reply slowly: `delay` before each event, and at most 8 characters of text
    /// per delta, so a reply of N characters takes about N / 8 events.
    pub fn trickled(self, delay: Duration) -> Step {
        self.map_reply(|r| {
            r.stream.event_delay = delay;
            r.stream.delta_chars = 8;
        })
    }

    /// The stream stops after `events` events, with the connection left open.
    pub fn stalled_after(self, events: usize) -> Step {
        self.map_reply(|r| r.stream.fault = Some((events, StreamFault::Stall)))
    }

    /// The stream ends after `events` events, without the event that completes the reply.
    pub fn ended_after(self, events: usize) -> Step {
        self.map_reply(|r| r.stream.fault = Some((events, StreamFault::End)))
    }

    /// An overloaded `error` event after `events` events.
    pub fn overloaded_after(self, events: usize) -> Step {
        self.map_reply(|r| r.stream.fault = Some((events, StreamFault::Overloaded)))
    }

    /// The stream ends, after `events` events, with `fault` (a gateway's error, say).
    pub fn failing_after(self, events: usize, fault: StreamFault) -> Step {
        self.map_reply(|r| r.stream.fault = Some((events, fault)))
    }

    /// Responses: the terminal event's response has no `status`.
    pub fn without_status(self) -> Step {
        self.map_reply(|r| r.without_status = true)
    }

    /// The whole stream, but the body ends before the blank line after its last event.
    pub fn unclosed(self) -> Step {
        self.map_reply(|r| r.stream.fault = Some((usize::MAX, StreamFault::Unclosed)))
    }

    /// Chat Completions: the stream ends after its last chunk, without `data: [DONE]`.
    pub fn without_done(self) -> Step {
        self.map_reply(|r| r.stream.fault = Some((usize::MAX, StreamFault::WithoutDone)))
    }

    /// The body written in pieces of at most `bytes`, a millisecond apart.
    pub fn in_pieces(self, bytes: usize) -> Step {
        self.map_reply(|r| r.stream.piece_bytes = bytes)
    }

    /// A keep-alive comment of these bytes before every event.
    pub fn with_keep_alive(self, comment: &[u8]) -> Step {
        self.map_reply(|r| r.stream.keep_alive = Some(comment.to_vec()))
    }

    fn map_reply(self, change: impl FnOnce(&mut ScriptedReply)) -> Step {
        match self {
            Step::Reply(mut r) => {
                change(&mut r);
                Step::Reply(r)
            }
            other => other,
        }
    }

    /// Adds text to a reply (a reply that calls tools and says something too).
    pub fn with_text(self, text: &str) -> Step {
        self.map_reply(|r| r.text = Some(text.to_owned()))
    }

    /// Sets the tokens the reply reports: `input` and `output`.
    pub fn with_usage(self, input: u64, output: u64) -> Step {
        self.map_reply(|r| r.usage = (input, output))
    }

    /// Any JSON answer.
    pub fn json(status: u16, body: Value) -> Step {
        Step::Raw {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string(),
        }
    }

    /// An OpenAI-shaped error: `{"error": {"message", "type", "param", "code"}}`.
    pub fn openai_error(status: u16, kind: &str, code: Option<&str>, message: &str) -> Step {
        Step::json(
            status,
            serde_json::json!({"error": {"message": message, "type": kind, "param": null,
                                         "code": code}}),
        )
    }

    /// An Anthropic-shaped error: `{"type": "error", "error": {"type", "message"}}`.
    pub fn anthropic_error(status: u16, kind: &str, message: &str) -> Step {
        Step::json(
            status,
            serde_json::json!({"type": "error", "error": {"type": kind, "message": message},
                               "request_id": "req_mock"}),
        )
    }

    /// The 429 each API sends when a rate limit is reached, with `retry-after: <value>`
    /// (seconds, or an HTTP-date): OpenAI's `rate_limit_exceeded` (DrShushen/climb#13) and
    /// Anthropic's `rate_limit_error` (anthropics/claude-code#24391).
    pub fn rate_limited(wire: MockWire, retry_after: &str) -> Step {
        match wire {
            MockWire::Responses | MockWire::Chat => Step::openai_error(
                429,
                "requests",
                Some("rate_limit_exceeded"),
                "Rate limit reached for requests in organization org-mock on requests per min (RPM): Limit 3, Used 3, Requested 1. Visit https://platform.openai.com/account/rate-limits to learn more.",
            ),
            MockWire::Messages => Step::anthropic_error(
                429,
                "rate_limit_error",
                "This request would exceed your account's rate limit. Please try again later.",
            ),
        }
        .with_header("retry-after", retry_after)
    }

    /// A 200 event stream of exactly these events, `(type, data)`, each closed by its blank
    /// line: the shape of a reply that fails mid-stream (an `error` event, a Responses
    /// `response.failed`), written as the API writes it.
    pub fn events(events: &[(&str, Value)]) -> Step {
        let body: String = events
            .iter()
            .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
            .collect();
        Step::Raw {
            status: 200,
            headers: vec![(
                "content-type".into(),
                "text/event-stream; charset=utf-8".into(),
            )],
            body,
        }
    }

    /// Adds a response header to a raw step; an empty value removes the header (the
    /// request id every answer carries, say).
    pub fn with_header(self, name: &str, value: &str) -> Step {
        match self {
            Step::Raw {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.to_owned(), value.to_owned()));
                Step::Raw {
                    status,
                    headers,
                    body,
                }
            }
            other => other,
        }
    }

    /// Waits `delay` before answering.
    pub fn delayed(self, delay: Duration) -> Step {
        Step::Delay(delay, Box::new(self))
    }
}

/// A request the mock received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// When the request arrived.
    pub received: std::time::Instant,
    pub wire: MockWire,
    pub headers: HeaderMap,
    pub body: Value,
    /// The status the mock answered with (after validation; before the script's delay).
    pub outcome: RecordedOutcome,
    /// Chat Completions: the fields the mock's replies added for the client to send back
    /// (`reasoning_content`, `extra_content`), `(name, value as JSON)`, issued before this
    /// request. The oracle allows exactly these beyond the SDK's types.
    pub extras_sent: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordedOutcome {
    /// The request was valid and took a step from the script.
    Scripted,
    /// The request was refused with this status and message.
    Refused(u16, String),
}

/// Which server a mock plays ([`MockProvider::play`](super::MockProvider::play)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MockEngine {
    /// OpenAI's Responses API and Anthropic's Messages API.
    #[default]
    Official,
    /// llama.cpp's `llama-server`, as recorded from the real one (see `llama_cpp.rs`): its
    /// error shape and types on both wires (`exceed_context_size_error` for an overflow), a
    /// Responses reply cut off by the output limit still `completed` with the call in it
    /// half written, a 500 for such arguments sent back, a Messages tool use started
    /// without `input`, either key header on either wire.
    LlamaCpp,
    /// vLLM 0.10 and later, on Chat Completions: an output limit its context window
    /// ([`MockProvider::set_context_window`](super::MockProvider::set_context_window)) has no
    /// room for refused in its words (see `chat_engines.rs`).
    Vllm,
    /// vLLM before 0.10: the same, in its older words and flat error shape.
    VllmLegacy,
    /// Hugging Face's text-generation-inference: the same refused with a 422.
    Tgi,
    /// Mistral's API: `max_completion_tokens` refused with a 422 `extra_forbidden`.
    Mistral,
}

/// Which credential headers the mock accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MockAuth {
    /// Each wire's own header: `Authorization: Bearer KEY` for Responses and Chat
    /// Completions, `x-api-key: KEY` (or the bearer token) for Messages, each answered with
    /// that API's 401 when wrong.
    #[default]
    Native,
    /// Only `Authorization: Bearer KEY`, on both wires, as Ollama's hosted Messages endpoint
    /// and many gateways take it; anything else (`x-api-key` alone included) gets the
    /// `{"error": "unauthorized"}` 401 such endpoints send.
    BearerOnly,
    /// No check at all, as a local engine (Ollama on localhost) that ignores the key.
    Ignored,
}
