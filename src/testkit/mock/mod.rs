//! Loopback model endpoints for tests and the offline demo: one HTTP server that speaks
//! the OpenAI Responses (`POST …/responses`), Anthropic Messages (`POST /v1/messages`) and
//! OpenAI Chat Completions (`POST …/chat/completions`) wire formats, checks every request the
//! way the real APIs do, and answers from a script.
//!
//! A [`MockProvider`] holds a queue of [`Step`]s. A valid request takes the next step: a
//! scripted reply rendered in the request's wire format (as server-sent events when the
//! request says `stream: true`, paced or broken off as its [`StreamShape`] says, else as one
//! JSON body), a raw answer (any status, headers and body), a delay, a hang, or a
//! connection dropped mid-body. An invalid request is
//! answered with the error the real API gives, in its shape, and takes no step. Every request
//! is recorded for assertions.
//!
//! What is checked (see `auth.rs`, `responses.rs`, `messages.rs` and `chat.rs`): the key
//! header (each API's own, or as a gateway checks it, [`MockAuth`]), required fields,
//! `store: false` and no server item ids (Responses), no unknown fields (Chat Completions),
//! tool call / result pairing in both directions, reasoning and thinking items echoed exactly as issued, tool definitions, no
//! Messages conversation ending with an assistant turn (prefill) other than after
//! `pause_turn`, at most 4 cache breakpoints, no empty or blank text, no failed tool result
//! without content, thinking budgets below `max_tokens`, a thinking turn that starts with
//! its thinking, and an optional context-window size. A mock can also play a model that
//! refuses optional parameters ([`MockProvider::refuse`]) or effort levels
//! ([`MockProvider::take_efforts`]), a gateway that fails mid-stream ([`StreamFault`]), the
//! Chat Completions of DeepSeek or Gemini instead of OpenAI's ([`ChatServer`]), and
//! emulate the providers' prompt caching ([`MockProvider::emulate_prompt_caching`], see
//! `cache.rs`), and play a local engine instead of the official APIs
//! ([`MockProvider::play`]: llama.cpp's server, see `llama_cpp.rs`; vLLM, TGI and Mistral's
//! API on Chat Completions, see `chat_engines.rs`). Every answer carries a
//! request id header, as the real APIs' do (an engine's, as that engine does).
//!
//! In tests, the request oracle (`oracle`) checks every request a mock received against the
//! official SDKs' types when the mock is dropped.

mod auth;
mod cache;
mod chat;
mod chat_engines;
mod chat_reply;
mod llama_cpp;
mod messages;
#[cfg(any(test, feature = "testkit"))]
mod oracle;
mod responses;
mod script;
mod sse;
mod state;

#[cfg(any(test, feature = "testkit"))]
pub use oracle::{Verdict, check as check_with_oracle};
pub use script::{
    ChatServer, MockAuth, MockEngine, MockWire, ModelRefuses, Recorded, RecordedOutcome,
    ScriptedReply, Step, StreamFault, StreamShape,
};
use state::{MockState, lock, refusal};

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use serde_json::Value;

/// A running mock endpoint on `127.0.0.1`. Dropping it stops the server and, in tests,
/// hands every request it received to the request oracle (`oracle`): a request the real
/// API would refuse fails the test, whatever the mock said.
pub struct MockProvider {
    addr: SocketAddr,
    state: Arc<Mutex<MockState>>,
    server: tokio::task::JoinHandle<()>,
    /// Whether the oracle checks the requests when the mock is dropped.
    checked: bool,
}

impl MockProvider {
    /// Starts a mock that accepts only `key`, whose requests the oracle checks.
    pub async fn start(key: &str) -> std::io::Result<MockProvider> {
        let mut mock = Self::start_unchecked(key).await?;
        mock.checked = true;
        Ok(mock)
    }

    /// A mock whose requests the oracle does not check: the demo's, and those of tests that
    /// send malformed requests on purpose to see the mock refuse them.
    pub async fn start_unchecked(key: &str) -> std::io::Result<MockProvider> {
        let state = Arc::new(Mutex::new(MockState {
            key: key.to_owned(),
            ..MockState::default()
        }));
        let app = Router::new()
            .route("/v1/responses", post(responses_route))
            .route("/responses", post(responses_route))
            .route("/v1/messages", post(messages_route))
            .route("/v1/chat/completions", post(chat_route))
            .route("/chat/completions", post(chat_route))
            // Long histories make large requests; the real APIs take far more than axum's
            // 2 MiB default.
            .layer(axum::extract::DefaultBodyLimit::max(
                crate::limits::PROVIDER_REPLY_BYTES,
            ))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(MockProvider {
            addr,
            state,
            server,
            checked: false,
        })
    }

    /// The `base_url` for a Responses definition (`…/v1`).
    pub fn responses_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The `base_url` for a Messages definition.
    pub fn messages_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The `base_url` for a Chat Completions definition (`…/v1`).
    pub fn chat_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The `base_url` for a definition of `wire`.
    pub fn base_url(&self, wire: crate::definition::WireApi) -> String {
        match wire {
            crate::definition::WireApi::Responses => self.responses_base_url(),
            crate::definition::WireApi::AnthropicMessages => self.messages_base_url(),
            crate::definition::WireApi::ChatCompletions => self.chat_base_url(),
        }
    }

    /// From now on, the mock's Chat Completions is `server`'s (OpenAI's by default).
    pub fn set_chat_server(&self, server: ChatServer) {
        self.lock().chat_server = server;
    }

    /// From now on, DeepSeek's Chat Completions is in thinking mode from the first request,
    /// as `deepseek-reasoner` is, even before a reply has thought.
    pub fn think_from_the_start(&self) {
        let mut state = self.lock();
        state.chat_server = ChatServer::DeepSeek;
        // What makes the mock's DeepSeek ask for `reasoning_content` back, and what it
        // accepts there before any reply thought: the empty one.
        state
            .issued
            .chat_extras
            .insert(("reasoning_content".to_owned(), "\"\"".to_owned()));
    }

    /// Appends steps to the script.
    pub fn push(&self, steps: impl IntoIterator<Item = Step>) {
        self.lock().script.extend(steps);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().requests.clone()
    }

    /// How many requests were refused as invalid (bad key, malformed history, …).
    pub fn refusals(&self) -> u64 {
        self.lock().refused
    }

    /// Stops keeping requests (for soak tests and benchmarks, where they would pile up).
    pub fn stop_recording(&self) {
        let mut state = self.lock();
        state.not_recording = true;
        state.requests.clear();
    }

    /// Which credential headers the mock accepts from now on (each API's own by default).
    pub fn set_auth(&self, auth: MockAuth) {
        self.lock().auth = auth;
    }

    /// From now on, the mock plays `engine` (the official APIs by default): its error shapes,
    /// its streams, what it refuses (see [`MockEngine`]).
    pub fn play(&self, engine: MockEngine) {
        self.lock().engine = engine;
    }

    /// The engine the mock plays (vLLM, TGI) has a context window of `tokens`, input and
    /// output limit together (see `chat_engines.rs`).
    pub fn set_context_window(&self, tokens: u64) {
        self.lock().context_window = Some(tokens);
    }

    /// Requests larger than `chars` (serialized input) overflow the context window.
    pub fn set_context_limit(&self, chars: usize) {
        self.lock().context_limit = Some(chars);
    }

    /// From now on, the model refuses `param`: a request carrying it gets the 400 the real
    /// API gives, in its words.
    pub fn refuse(&self, param: ModelRefuses) {
        self.lock().refuses.insert(param);
    }

    /// From now on, the model takes only these effort levels (`low`, `medium`…): a request
    /// with another gets the 400 the real API gives, which lists them (Anthropic "This model
    /// does not support effort level 'xhigh'. Supported levels: …", OpenAI "Unsupported
    /// value: … Supported values are: …").
    pub fn take_efforts(&self, levels: &[&str]) {
        self.lock().efforts = Some(levels.iter().map(|l| (*l).to_owned()).collect());
    }

    /// From now on, usage reports the request's own tokens (one per 4 bytes of each piece
    /// of the prompt) and the cache reads and writes the provider would (see `cache.rs`).
    pub fn emulate_prompt_caching(&self) {
        let mut state = self.lock();
        if state.prompt_cache.is_none() {
            state.prompt_cache = Some(cache::PromptCache::default());
        }
    }

    /// What the request oracle says about the requests so far (the check a drop makes).
    #[cfg(any(test, feature = "testkit"))]
    pub fn oracle_verdict(&self) -> Result<oracle::Verdict, String> {
        oracle::check(&self.lock().requests)
    }

    fn lock(&self) -> MutexGuard<'_, MockState> {
        lock(&self.state)
    }
}

impl Drop for MockProvider {
    fn drop(&mut self) {
        self.server.abort();
        #[cfg(any(test, feature = "testkit"))]
        if self.checked && !std::thread::panicking() {
            match self.oracle_verdict() {
                Ok(verdict) if verdict.violations.is_empty() => {}
                Ok(verdict) => panic!(
                    "the request oracle found {} violation(s) in the {} requests this mock \
                     received (the real API would refuse them):\n{}",
                    verdict.violations.len(),
                    verdict.checked,
                    verdict.violations.join("\n")
                ),
                Err(why) => {
                    panic!("the request oracle could not check this mock's requests: {why}")
                }
            }
        }
    }
}

type Shared = Arc<Mutex<MockState>>;

async fn responses_route(State(state): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    handle(state, MockWire::Responses, headers, body).await
}

async fn messages_route(State(state): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    handle(state, MockWire::Messages, headers, body).await
}

async fn chat_route(State(state): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    handle(state, MockWire::Chat, headers, body).await
}

async fn handle(state: Shared, wire: MockWire, headers: HeaderMap, body: Bytes) -> Response {
    let received = std::time::Instant::now();
    let step = {
        let mut guard = lock(&state);
        let st = &mut *guard;
        let (body, checked) = match serde_json::from_slice::<Value>(&body) {
            Ok(value) => {
                let checked = match wire {
                    MockWire::Responses => responses::validate(st, &headers, &value),
                    MockWire::Messages => messages::validate(st, &headers, &value),
                    MockWire::Chat => chat::validate(st, &headers, &value),
                };
                (value, checked)
            }
            Err(e) => {
                let message = format!("invalid JSON body: {e}");
                let refused = refusal(wire, 400, "invalid_request_error", None, &message);
                (Value::Null, Err(refused))
            }
        };
        let checked = match checked {
            Err(refusal) if st.engine == MockEngine::LlamaCpp => Err(llama_cpp::reshape(refusal)),
            other => other,
        };
        let request_id = st.engine != MockEngine::LlamaCpp;
        match checked {
            Ok(()) => {
                let next = st.script.pop_front().unwrap_or(Step::Raw {
                    status: 500,
                    headers: vec![],
                    body: r#"{"error": {"message": "mock: script exhausted", "type": "server_error", "param": null, "code": null}}"#.to_owned(),
                });
                let extras_sent = st.issued.chat_extras.iter().cloned().collect();
                let rendered = render_step(st, wire, &body, next);
                if !st.not_recording {
                    st.requests.push(Recorded {
                        received,
                        wire,
                        headers,
                        body,
                        outcome: RecordedOutcome::Scripted,
                        extras_sent,
                    });
                }
                rendered
            }
            Err(refusal) => {
                st.refused += 1;
                if !st.not_recording {
                    let extras_sent = st.issued.chat_extras.iter().cloned().collect();
                    st.requests.push(Recorded {
                        received,
                        wire,
                        headers,
                        body,
                        outcome: RecordedOutcome::Refused(refusal.status, refusal.message),
                        extras_sent,
                    });
                }
                let id = st.next_id();
                Rendered::Now(json_response(
                    wire,
                    request_id.then_some(id),
                    refusal.status,
                    &[],
                    refusal.body.to_string(),
                ))
            }
        }
    };
    step.run().await
}

/// A step turned into something to send, once the lock is released.
enum Rendered {
    Now(Response),
    Later(Duration, Box<Rendered>),
    Hang,
    Drop,
}

impl Rendered {
    async fn run(self) -> Response {
        let mut next = self;
        loop {
            match next {
                Rendered::Now(response) => return response,
                Rendered::Later(delay, inner) => {
                    tokio::time::sleep(delay).await;
                    next = *inner;
                }
                Rendered::Hang => std::future::pending::<()>().await,
                Rendered::Drop => {
                    let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
                        Ok(Bytes::from_static(
                            b"{\"id\": \"resp_partial\", \"output\": [",
                        )),
                        Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionReset,
                            "mock: dropped",
                        )),
                    ];
                    let mut response =
                        Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
                    response.headers_mut().insert(
                        "content-type",
                        axum::http::HeaderValue::from_static("application/json"),
                    );
                    return response;
                }
            }
        }
    }
}

fn render_step(st: &mut MockState, wire: MockWire, request: &Value, step: Step) -> Rendered {
    match step {
        Step::Reply(reply) => {
            let cached = st.prompt_cache.as_mut().map(|cache| match wire {
                MockWire::Responses => cache.responses(request),
                MockWire::Messages => cache.messages(request),
                MockWire::Chat => cache.chat(request),
            });
            let streamed = request["stream"] == true;
            let llama = st.engine == MockEngine::LlamaCpp;
            let id = (!llama).then_some(st.counter);
            let events = match wire {
                MockWire::Chat if streamed => chat_reply::events(st, request, &reply, cached),
                MockWire::Chat => {
                    let body = chat_reply::render(st, request, &reply, cached);
                    return Rendered::Now(json_response(wire, id, 200, &[], body.to_string()));
                }
                MockWire::Responses | MockWire::Messages => {
                    let mut body = match wire {
                        MockWire::Messages => messages::render(st, request, &reply, cached),
                        _ => responses::render(st, request, &reply, cached),
                    };
                    if llama && wire == MockWire::Responses {
                        llama_cpp::responses_reply(&mut body);
                    }
                    if !streamed {
                        return Rendered::Now(json_response(wire, id, 200, &[], body.to_string()));
                    }
                    let events = match wire {
                        MockWire::Messages => {
                            messages::events(&body, &reply, reply.stream.delta_chars)
                        }
                        _ => responses::events(&body, reply.stream.delta_chars),
                    };
                    match wire {
                        MockWire::Responses if llama => llama_cpp::responses_events(events),
                        MockWire::Messages if llama => llama_cpp::messages_events(events),
                        _ => events,
                    }
                }
            };
            let mut response = sse::response(wire, events, &reply.stream);
            insert_request_id(&mut response, wire, id);
            Rendered::Now(response)
        }
        Step::Raw {
            status,
            headers,
            body,
        } => {
            let id = st.next_id();
            let id = (st.engine != MockEngine::LlamaCpp).then_some(id);
            Rendered::Now(json_response(wire, id, status, &headers, body))
        }
        Step::Delay(delay, inner) => {
            Rendered::Later(delay, Box::new(render_step(st, wire, request, *inner)))
        }
        Step::Hang => Rendered::Hang,
        Step::Drop => Rendered::Drop,
    }
}

/// The request id header each API sends with every answer: Messages `request-id`,
/// Responses and Chat Completions `x-request-id` (none from a mock playing an engine that
/// sends none).
fn insert_request_id(response: &mut Response, wire: MockWire, id: Option<u64>) {
    let Some(id) = id else {
        return;
    };
    let (name, value) = match wire {
        MockWire::Messages => ("request-id", format!("req_mock{id:08}")),
        MockWire::Responses | MockWire::Chat => ("x-request-id", format!("req_mock{id:08}")),
    };
    if let Ok(value) = axum::http::HeaderValue::from_str(&value) {
        response.headers_mut().insert(name, value);
    }
}

fn json_response(
    wire: MockWire,
    id: Option<u64>,
    status: u16,
    headers: &[(String, String)],
    body: String,
) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    insert_request_id(&mut response, wire, id);
    let map = response.headers_mut();
    map.insert(
        "content-type",
        axum::http::HeaderValue::from_static("application/json"),
    );
    for (name, value) in headers {
        let Ok(name) = axum::http::HeaderName::from_bytes(name.as_bytes()) else {
            continue;
        };
        if value.is_empty() {
            // An empty value leaves the header out (a proxy that drops the request id).
            map.remove(name);
        } else if let Ok(value) = axum::http::HeaderValue::from_str(value) {
            map.insert(name, value);
        }
    }
    response
}

/// A `custom`-provider agent whose endpoint is `base_url` (a mock's base URL for `wire`),
/// for tests and benchmarks that drive a provider client without a workspace.
#[cfg(any(test, feature = "testkit"))]
pub fn mock_definition(
    wire: crate::definition::WireApi,
    base_url: url::Url,
) -> crate::definition::AgentDefinition {
    use crate::definition::{
        AgentDefinition, Format, Model, ModelOrigin, ProviderConfig, ProviderKind, Sandbox,
        SourceFile, ToolFilter,
    };
    use crate::limits::DEFAULT_MAX_TURNS;
    AgentDefinition {
        name: "tester".into(),
        description: "d".into(),
        instructions: "You test things.".into(),
        model: Model {
            id: "mock-model".into(),
            origin: ModelOrigin::Explicit,
        },
        fallback_models: Vec::new(),
        provider: ProviderConfig::new(ProviderKind::Custom, base_url, "MOCK_PROVIDER_KEY", wire),
        max_turns: DEFAULT_MAX_TURNS,
        max_output_tokens: None,
        budget: Default::default(),
        output_schema: None,
        mcp_servers: Default::default(),
        skills: vec![],
        sandbox: Sandbox::Default,
        tools: ToolFilter::default(),
        reasoning_effort: None,
        temperature: None,
        unavailable_tools: Vec::new(),
        hand_only: None,
        ask_parent: None,
        source: SourceFile {
            path: "x.md".into(),
            format: Format::CanonicalMarkdown,
        },
    }
}
