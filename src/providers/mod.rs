//! Providers: the two wire APIs a subagent's model loop talks to.
//!
//! | module | job |
//! | --- | --- |
//! | [`client`] | one definition's client: endpoint, key, wire, retries |
//! | [`conversation`] | the history in the wire API's own form |
//! | [`reply`] | settings, replies, tool calls and outputs in typed form |
//! | [`error`] | how a request fails, and its error code |
//! | [`credentials`] | the key, read from the definition's `env_key` when a run starts, and its header |
//! | [`http`] | the shared HTTP client, timeouts, retries and error classification |
//! | [`responses`] | OpenAI Responses: `POST {base_url}/responses` |
//! | [`messages`] | Anthropic Messages: `POST {base_url}/v1/messages` |
//!
//! History is kept as the provider's own JSON items ([`Conversation`]) and sent back as
//! received, so reasoning items, thinking blocks and fields this code does not know about
//! survive every round trip. Only what the loop needs is read into typed values ([`Reply`]).
//! Requests are not streamed: each is one JSON body, bounded by the request timeout.
//! This layer knows nothing about MCP.

pub mod client;
pub mod conversation;
pub mod credentials;
pub mod error;
pub mod http;
pub mod messages;
pub mod reply;
pub mod responses;

pub use client::{ProviderClient, endpoint};
pub use conversation::Conversation;
pub use credentials::{ApiKey, Audience, Credential, MissingCredential};
pub use error::{ProviderError, ProviderFailure};
pub use http::{RetryNotice, RetryPolicy};
pub use reply::{ModelSettings, Reply, StopReason, ToolCall, ToolOutput, Usage};
