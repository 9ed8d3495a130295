//! Reading one reply body under the bounds of SPEC §6.1: the reply must begin within the
//! request timeout, no silence between two pieces of it may last longer than that, and the
//! whole request ends at the ceiling however steadily it arrives. A server-sent event stream
//! is parsed by our own linear parser (`sse`) and fed, event by event, to the wire's reader;
//! a last event the stream ends in without its closing blank line still counts, as the
//! official SDKs take it. A body of another type is read whole as one JSON reply (a server
//! that ignored `stream: true`).
//!
//! Silence is measured in bytes, not events: an SSE comment (OpenRouter's
//! `: OPENROUTER PROCESSING` keep-alive) shows the provider is still there.

use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use tokio::time::Instant;

use super::classify::AttemptError;
use super::error::{ProviderError, ProviderFailure};
use super::reply::Reply;
use super::sse::SseParser;
use super::wire::WireFormat;
use crate::limits::{PROVIDER_REPLY_BYTES, PROVIDER_REQUEST_CEILING, PROVIDER_REQUEST_TIMEOUT};
use crate::redact::Secrets;

/// When one attempt must have begun and must have ended.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    /// The reply's first bytes must have arrived by then.
    pub begin_by: Instant,
    /// The longest silence once it began.
    pub idle: Duration,
    /// The attempt ends then, whatever is still arriving.
    pub ceiling_at: Instant,
}

impl Bounds {
    /// The bounds of an attempt sent now.
    pub(super) fn from_now() -> Bounds {
        let now = Instant::now();
        Bounds {
            begin_by: now + PROVIDER_REQUEST_TIMEOUT,
            idle: PROVIDER_REQUEST_TIMEOUT,
            ceiling_at: now + PROVIDER_REQUEST_CEILING,
        }
    }
}

/// Why the body stopped coming.
#[derive(Debug)]
pub(super) enum BodyError {
    Transport(reqwest::Error),
    /// Nothing arrived within the bound; `began` tells whether anything had before.
    Silent {
        began: bool,
    },
    Ceiling,
    TooLarge,
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Transport(e) => write!(f, "{e}"),
            BodyError::Silent { .. } => f.write_str("silent"),
            BodyError::Ceiling => f.write_str("ceiling"),
            BodyError::TooLarge => f.write_str("too large"),
        }
    }
}

/// A response body read piece by piece under [`Bounds`].
pub(super) struct Body {
    response: reqwest::Response,
    bounds: Bounds,
    began: bool,
    read: usize,
}

impl Body {
    pub(super) fn new(response: reqwest::Response, bounds: Bounds) -> Body {
        Body {
            response,
            bounds,
            began: false,
            read: 0,
        }
    }

    /// The next piece, or `None` at the end of the body.
    pub(super) async fn next(&mut self) -> Result<Option<Bytes>, BodyError> {
        let wait_until = if self.began {
            Instant::now() + self.bounds.idle
        } else {
            self.bounds.begin_by
        };
        let until = wait_until.min(self.bounds.ceiling_at);
        let chunk = match tokio::time::timeout_at(until, self.response.chunk()).await {
            Err(_) if until == self.bounds.ceiling_at && until < wait_until => {
                return Err(BodyError::Ceiling);
            }
            Err(_) => {
                return Err(BodyError::Silent { began: self.began });
            }
            Ok(chunk) => chunk.map_err(BodyError::Transport)?,
        };
        if let Some(chunk) = &chunk {
            self.began = true;
            self.read += chunk.len();
            if self.read > PROVIDER_REPLY_BYTES {
                return Err(BodyError::TooLarge);
            }
        }
        Ok(chunk)
    }

    /// The whole rest of the body.
    pub(super) async fn read_all(&mut self) -> Result<Bytes, BodyError> {
        if self
            .response
            .content_length()
            .is_some_and(|n| n > PROVIDER_REPLY_BYTES as u64)
        {
            return Err(BodyError::TooLarge);
        }
        let mut all = bytes::BytesMut::new();
        while let Some(chunk) = self.next().await? {
            all.extend_from_slice(&chunk);
        }
        Ok(all.freeze())
    }
}

/// What the reader tells its caller as the reply comes in.
pub(super) trait ReplyProgress: Sync {
    /// The first event arrived: the reply began.
    fn began(&self);
}

/// Reads a 2xx reply: an event stream through the wire's reader, or one JSON body. What
/// is quoted of the provider hides `secrets`.
pub(super) async fn read_reply(
    mut body: Body,
    wire: &dyn WireFormat,
    provider: &str,
    secrets: &Secrets,
    progress: &dyn ReplyProgress,
) -> Result<Reply, AttemptError> {
    let is_stream = body
        .response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    if !is_stream {
        let bytes = body
            .read_all()
            .await
            .map_err(|e| body_error(provider, e, 0))?;
        progress.began();
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            AttemptError::retryable(
                "unreadable reply",
                format!(
                    "{provider} answered with a body that is not JSON and not an event stream ({e})"
                ),
            )
        })?;
        return wire.parse(provider, secrets, value);
    }
    let mut parser = SseParser::new(PROVIDER_REPLY_BYTES);
    let mut reader = wire.stream(provider, secrets);
    let mut seen = 0usize;
    let mut ended = false;
    loop {
        while let Some(event) = parser.next_event() {
            if seen == 0 {
                progress.began();
            }
            seen += 1;
            if let Some(reply) = reader.event(&event.event, &event.data)? {
                return Ok(reply);
            }
        }
        if ended {
            if let Some(reply) = reader.ended_without_terminal_event()? {
                return Ok(reply);
            }
            let message = format!(
                "{provider} ended its reply stream before the `{}` event that completes it",
                reader.terminal_event()
            );
            return Err(if seen == 0 {
                AttemptError::retryable("stream ended early", message)
            } else {
                broke_off(
                    "stream ended early",
                    false,
                    format!("{message} ({seen} events in)"),
                )
            });
        }
        match body.next().await {
            Ok(Some(chunk)) => parser
                .feed(&chunk)
                .map_err(|_| body_error(provider, BodyError::TooLarge, seen))?,
            // The last event may lack its closing blank line: it still counts.
            Ok(None) => {
                parser.finish();
                ended = true;
            }
            Err(e) => return Err(body_error(provider, e, seen)),
        }
    }
}

fn broke_off(reason: &str, timeout: bool, message: String) -> AttemptError {
    AttemptError::BrokeOff {
        reason: reason.to_owned(),
        timeout,
        message,
    }
}

/// Classifies how a body stopped; `seen` counts the events that arrived before.
pub(super) fn body_error(provider: &str, error: BodyError, seen: usize) -> AttemptError {
    let wait = PROVIDER_REQUEST_TIMEOUT.as_secs();
    match error {
        BodyError::Silent { began: false } => AttemptError::Retryable {
            reason: "timed out".to_owned(),
            after: None,
            timeout: true,
            message: format!("{provider} did not answer within {wait} s"),
            unavailable: None,
        },
        BodyError::Silent { began: true } => broke_off(
            "stalled",
            true,
            format!(
                "{provider}'s reply stopped arriving: nothing came for {wait} s after it began \
                 ({seen} events in)"
            ),
        ),
        BodyError::Ceiling => AttemptError::Fatal(ProviderError {
            failure: ProviderFailure::Timeout,
            message: format!(
                "{provider} was still sending its reply after {} minutes, the longest a \
                 request may take; not retried, since another attempt would be billed and \
                 likely take as long",
                PROVIDER_REQUEST_CEILING.as_secs() / 60
            ),
        }),
        BodyError::TooLarge => AttemptError::Fatal(ProviderError::failed(format!(
            "{provider} sent a reply larger than {} MiB, more than any model reply",
            PROVIDER_REPLY_BYTES / (1024 * 1024)
        ))),
        BodyError::Transport(e) => {
            let message = format!(
                "the connection to {provider} failed: {}",
                super::classify::innermost_cause(&e)
            );
            if seen == 0 {
                AttemptError::retryable("connection failed", message)
            } else {
                broke_off(
                    "connection failed",
                    false,
                    format!("{message} ({seen} events in)"),
                )
            }
        }
    }
}
