//! Server-sent events as the real APIs send them: `event: <type>` and one `data:` line per
//! event (Chat Completions: the `data:` line alone, and `data: [DONE]` last), each followed
//! by a blank line, delivered as a [`StreamShape`] says (pacing, keep-alive comments and
//! faults).

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use serde_json::{Value, json};

use super::script::{MockWire, StreamFault, StreamShape};

/// The pause between two pieces of a body written in pieces.
const PIECE_DELAY: Duration = Duration::from_millis(1);

/// One event: its type and its data.
pub(super) type Event = (String, Value);

/// The events of one streamed reply as they are written: each one's data gets its `type`,
/// and, when `numbered` (Responses), its `sequence_number`.
pub(super) struct Writer {
    events: Vec<Event>,
    numbered: bool,
}

impl Writer {
    pub(super) fn new(numbered: bool) -> Writer {
        Writer {
            events: Vec::new(),
            numbered,
        }
    }

    pub(super) fn push(&mut self, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        if self.numbered {
            data["sequence_number"] = json!(self.events.len());
        }
        self.events.push((kind.to_owned(), data));
    }

    pub(super) fn finish(self) -> Vec<Event> {
        self.events
    }
}

/// The name of the event that is Chat Completions' `data: [DONE]` line (its data unused).
pub(super) const DONE_EVENT: &str = "[DONE]";

/// `text` in pieces of at most `max` characters (0: one piece); no piece for an empty text.
pub(super) fn pieces(text: &str, max: usize) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    if max == 0 {
        return vec![text.to_owned()];
    }
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(max).map(|c| c.iter().collect()).collect()
}

/// One event as sent: an optional comment line before it, its two lines (a `data:` line
/// alone for an event without a name, `data: [DONE]` for the Chat Completions end), and the
/// blank line that closes it unless `closed` is false.
fn frame(comment: Option<&[u8]>, event: &str, data: &Value, closed: bool) -> Bytes {
    let mut bytes = Vec::new();
    if let Some(comment) = comment {
        bytes.extend_from_slice(b": ");
        bytes.extend_from_slice(comment);
        bytes.extend_from_slice(b"\n\n");
    }
    if event == DONE_EVENT {
        bytes.extend_from_slice(b"data: [DONE]\n");
        if closed {
            bytes.push(b'\n');
        }
        return Bytes::from(bytes);
    }
    if !event.is_empty() {
        bytes.extend_from_slice(format!("event: {event}\n").as_bytes());
    }
    bytes.extend_from_slice(format!("data: {data}\n").as_bytes());
    if closed {
        bytes.push(b'\n');
    }
    Bytes::from(bytes)
}

/// The message LiteLLM's proxy passes on from a model that failed mid-reply.
const GATEWAY_MESSAGE: &str = "litellm.APIConnectionError: upstream model failed mid-stream";

/// LiteLLM's error frames (its proxy's `async_data_generator` and
/// `responses_stream_errors.py`): the HTTP status as the nested `code`, as a string.
fn gateway_error(fault: StreamFault, sequence: usize) -> Option<Event> {
    let (status, nested) = match fault {
        StreamFault::GatewayError(status) => (status, false),
        StreamFault::GatewayErrorEvent(status) => (status, true),
        _ => return None,
    };
    let error = serde_json::json!({"message": GATEWAY_MESSAGE, "type": "None", "param": "None",
                                   "code": status.to_string()});
    if !nested {
        return Some((String::new(), serde_json::json!({ "error": error })));
    }
    let code = match status {
        429 => "rate_limit_exceeded",
        401 => "authentication_error",
        400..=499 => "invalid_request_error",
        _ => "server_error",
    };
    Some((
        "error".to_owned(),
        serde_json::json!({"type": "error", "code": code, "message": GATEWAY_MESSAGE,
                           "param": null, "sequence_number": sequence, "error": error}),
    ))
}

/// The error event each wire sends when the API is overloaded mid-reply.
fn overloaded(wire: MockWire, sequence: usize) -> Event {
    match wire {
        MockWire::Messages => (
            "error".to_owned(),
            serde_json::json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
        MockWire::Responses => (
            "error".to_owned(),
            serde_json::json!({"type": "error", "sequence_number": sequence,
                "code": "server_is_overloaded", "message": "Our servers are currently overloaded. Please try again later.",
                "param": null}),
        ),
        // What OpenAI's Chat Completions stream carries when the model fails mid-reply: a
        // data line with an `error` (block/goose#8031), no event name.
        MockWire::Chat => (
            String::new(),
            serde_json::json!({"error": {"message": "The server had an error while processing your request. Sorry about that!",
                "type": "server_error", "param": null, "code": null}}),
        ),
    }
}

/// The response: `text/event-stream`, the events paced and cut as `shape` says.
pub(super) fn response(wire: MockWire, events: Vec<Event>, shape: &StreamShape) -> Response {
    let mut events = events;
    let mut end = None;
    if let Some((after, fault)) = shape.fault {
        events.truncate(after);
        if fault == StreamFault::WithoutDone {
            events.retain(|(event, _)| event != DONE_EVENT);
        }
        if fault == StreamFault::Overloaded {
            events.push(overloaded(wire, after.saturating_add(1)));
        }
        events.extend(gateway_error(fault, after.saturating_add(1)));
        end = Some(fault);
    }
    let last = events.len().saturating_sub(1);
    let frames: Vec<Bytes> = events
        .iter()
        .enumerate()
        .map(|(i, (e, d))| {
            let closed = !(i == last && end == Some(StreamFault::Unclosed));
            frame(shape.keep_alive.as_deref(), e, d, closed)
        })
        .collect();
    let frames = if shape.piece_bytes > 0 {
        frames
            .iter()
            .flat_map(|frame| {
                (0..frame.len())
                    .step_by(shape.piece_bytes)
                    .map(|at| frame.slice(at..frame.len().min(at + shape.piece_bytes)))
            })
            .collect()
    } else {
        frames
    };
    let delay = if shape.piece_bytes > 0 {
        PIECE_DELAY
    } else {
        shape.event_delay
    };
    let stream = futures_util::stream::unfold(
        (frames.into_iter(), 0usize),
        move |(mut frames, sent)| async move {
            match frames.next() {
                Some(frame) => {
                    if sent > 0 && delay > Duration::ZERO {
                        tokio::time::sleep(delay).await;
                    }
                    Some((Ok::<_, std::io::Error>(frame), (frames, sent + 1)))
                }
                None => {
                    if end == Some(StreamFault::Stall) {
                        std::future::pending::<()>().await;
                    }
                    None
                }
            }
        },
    );
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(
        "content-type",
        axum::http::HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert(
        "cache-control",
        axum::http::HeaderValue::from_static("no-cache"),
    );
    response
}
