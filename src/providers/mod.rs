//! Providers: the three wire APIs a subagent's model loop talks to.
//!
//! | file | job |
//! | --- | --- |
//! | `client` | one definition's client: endpoint, key, wire, output limit, retries |
//! | `conversation` | the history of one session, in the wire API's own form |
//! | `history` | the stored items, as bytes of provider JSON, and their encoding |
//! | `wire` | what a wire format is ([`WireFormat`]): encode, read a reply, make items |
//! | `formats` | the wire format a definition names |
//! | `responses` | OpenAI Responses: `POST {base_url}/responses` |
//! | `responses_reply` | a Responses reply, streamed or whole, as the items the history keeps |
//! | `messages` | Anthropic Messages: `POST {base_url}/v1/messages` |
//! | `messages_reply` | a Messages reply, streamed or whole, as the blocks the history keeps |
//! | `chat` | OpenAI Chat Completions: `POST {base_url}/chat/completions` (SPEC §6.2) |
//! | `chat_images` | a history's images as text notes, for an endpoint that takes text only |
//! | `chat_reply` | a Chat Completions reply, streamed or whole, as the message the history keeps |
//! | `reply` | settings, replies, tool calls and outputs in typed form |
//! | `retry` | one attempt and the retry loop around it |
//! | `strict` | whether an output schema fits the Responses API's strict structured outputs |
//! | `stream` | reading a reply under the 120 s and 15 min bounds, events through the SSE parser |
//! | `sse` | the server-sent events parser: linear in the bytes received, comments never decoded |
//! | `classify` | how an attempt failed: retry, retry once, context limit, give up |
//! | `error_answer` | what an error answer says: its fields in every shape, request id, requested delay |
//! | `overflow` | whether an error says the input does not fit the context window |
//! | `output_room` | what a refusal of the output limit says about the room its window leaves |
//! | `models` | what each model takes: its kind of thinking, its effort levels, the thinking budget an effort stands for |
//! | `unsupported` | optional parameters a model refuses, and what a session learned from the refusals |
//! | `tool_schema` | child tool schemas in the form each API accepts |
//! | `tool_names` | child tool names in the form each API accepts, and calls mapped back |
//! | `error` | how a request fails, and its error code |
//! | `credentials` | the key, read from the definition's `env_key` when a run starts, and its header |
//!
//! Every request is streamed (`stream: true`, server-sent events) and bounded as SPEC §6.1
//! says: 120 s for the reply to begin and for any silence in it, 15 minutes in all. History
//! is kept as the provider's own JSON items, stored as the bytes received ([`History`]), and
//! sent back as they are, so reasoning items, thinking blocks and fields this code does not
//! know about survive every round trip, and building a request copies bytes instead of
//! cloning values. Only what the loop needs is read into typed values ([`Reply`]).
//! This layer knows nothing about MCP.

mod chat;
mod chat_images;
mod chat_reply;
mod classify;
mod client;
mod conversation;
mod credentials;
mod error;
mod error_answer;
mod formats;
mod history;
mod messages;
mod messages_reply;
mod models;
mod output_room;
mod overflow;
mod reply;
mod responses;
mod responses_reply;
mod retry;
mod sse;
mod stream;
mod strict;
mod tool_names;
mod tool_schema;
mod unsupported;
mod wire;

pub use classify::{classify_error_event, classify_status};
pub use client::{ProviderClient, default_max_output_tokens, endpoint};
pub use conversation::Conversation;
pub use credentials::{ApiKey, Audience, Credential, MissingCredential};
pub use error::{ProviderError, ProviderFailure, Unavailable};
pub use error_answer::{error_details, requested_delay};
pub use formats::format;
pub use history::History;
pub use messages_reply::parse_message;
pub use models::{EffortLevels, thinking_budget};
pub use reply::{
    CallArguments, ModelSettings, Reply, SILENT_FAILURE_TEXT, StopReason, ToolCall, ToolOutput,
    Usage,
};
pub use responses_reply::parse_response;
pub use retry::{RequestEvents, RetryNotice, RetryPolicy};
pub use sse::{LineTooLong, SseEvent, SseParser};
pub use unsupported::OptionalParam;
pub use wire::{Request, ToolList, WireFormat};
