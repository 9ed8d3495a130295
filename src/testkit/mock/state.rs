//! The mock's state behind its lock: the script, what it recorded, what it issued and
//! expects to see echoed, and the refusals in each wire's error shape.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

use super::cache::PromptCache;
use super::script::{ChatServer, MockAuth, MockEngine, MockWire, ModelRefuses, Recorded, Step};

/// What the mock issued and expects to see again, exactly.
#[derive(Debug, Default)]
pub(super) struct Issued {
    /// Responses reasoning items (without id), by `encrypted_content`.
    pub(super) reasoning: HashMap<String, Value>,
    /// The `encrypted_content` of the reasoning issued with each function call.
    pub(super) call_reasoning: HashMap<String, String>,
    /// Messages thinking text, by signature.
    pub(super) thinking: HashMap<String, String>,
    /// The last block of each Messages reply that stopped with `pause_turn`, as the client
    /// sends it back to go on (the one assistant turn allowed to end a conversation).
    pub(super) paused: std::collections::HashSet<String>,
    /// Chat Completions: every field a reply added for the client to send back, as
    /// `(name, value as JSON)`.
    pub(super) chat_extras: std::collections::BTreeSet<(String, String)>,
    /// Gemini's thought signature (the call's `extra_content`), by call id.
    pub(super) thought_signatures: HashMap<String, Value>,
    /// DeepSeek's `reasoning_content` of the reply each call came in, by call id.
    pub(super) call_reasoning_content: HashMap<String, String>,
}

#[derive(Debug, Default)]
pub(super) struct MockState {
    pub(super) script: VecDeque<Step>,
    pub(super) requests: Vec<Recorded>,
    pub(super) key: String,
    pub(super) auth: MockAuth,
    pub(super) issued: Issued,
    /// Serialized input larger than this is a context-window overflow.
    pub(super) context_limit: Option<usize>,
    /// The context window of the engine the mock plays, in its tokens (`chat_engines`).
    pub(super) context_window: Option<u64>,
    pub(super) counter: u64,
    /// Whether requests are kept for [`MockProvider::requests`] (off for long runs).
    pub(super) not_recording: bool,
    /// Requests refused as invalid, recorded or not.
    pub(super) refused: u64,
    /// The providers' prompt caching, when a test asked for it; usage then counts the
    /// request's own tokens instead of the script's.
    pub(super) prompt_cache: Option<PromptCache>,
    /// Optional parameters the model refuses.
    pub(super) refuses: std::collections::HashSet<ModelRefuses>,
    /// The effort levels the model takes, when a test says (every level otherwise).
    pub(super) efforts: Option<Vec<String>>,
    /// The server the mock plays.
    pub(super) engine: MockEngine,
    /// Whose Chat Completions the mock plays.
    pub(super) chat_server: ChatServer,
}

impl MockState {
    pub(super) fn next_id(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }
}

/// The state lock; a panic while holding it (a bug in the mock) must not hide later
/// requests, so poisoning is ignored.
pub(super) fn lock(state: &Mutex<MockState>) -> MutexGuard<'_, MockState> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Both APIs' rule for function names, `^[a-zA-Z0-9_-]{1,64}$`. Written here on its own,
/// not shared with the code that names tools, so the mock checks that code.
pub(super) fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A refusal in the wire's error shape.
pub(super) struct Refusal {
    pub(super) status: u16,
    /// The error's message, also inside `body`, kept for [`RecordedOutcome::Refused`].
    pub(super) message: String,
    pub(super) body: Value,
}

/// An error body in the wire's shape.
pub(super) fn refusal(
    wire: MockWire,
    status: u16,
    kind: &str,
    param: Option<&str>,
    message: &str,
) -> Refusal {
    let body = match wire {
        MockWire::Responses | MockWire::Chat => serde_json::json!({
            "error": {"message": message, "type": kind, "param": param, "code": null}
        }),
        MockWire::Messages => serde_json::json!({
            "type": "error", "error": {"type": kind, "message": message}, "request_id": "req_mock"
        }),
    };
    Refusal {
        status,
        message: message.to_owned(),
        body,
    }
}
