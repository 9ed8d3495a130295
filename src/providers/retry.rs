//! The HTTP side shared by both wire APIs: one attempt (send, then read the reply under the
//! bounds of `stream`), and the retry loop around it. The client itself is `net`'s; how a
//! failure is classified is `classify`'s.
//!
//! Retries follow the policy for failures before the reply began and for those the provider
//! calls transient; a reply that had begun and then stalled or broke off is retried at most
//! once ([`PROVIDER_STALL_RETRIES`]), because its generation is billed either way.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::HeaderMap;
use url::Url;

use super::classify::{AttemptError, classify_status, innermost_cause};
use super::error::{ProviderError, ProviderFailure, Unavailable};
use super::error_answer::{body_request_id, request_id};
use super::reply::Reply;
use super::stream::{Body, BodyError, Bounds, ReplyProgress, body_error, read_reply};
use super::wire::WireFormat;
use crate::limits::{
    PROVIDER_CONNECT_TIMEOUT, PROVIDER_MAX_REQUESTED_DELAY, PROVIDER_REQUEST_CEILING,
    PROVIDER_RETRIES, PROVIDER_RETRY_BASE_DELAY, PROVIDER_RETRY_MAX_DELAY, PROVIDER_STALL_RETRIES,
};
use crate::redact::Secrets;

/// How many times, and how patiently, to retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff delay; doubled per retry.
    pub base_delay: Duration,
    /// Longest backoff delay.
    pub max_delay: Duration,
    /// Longest provider-requested delay honoured; a longer one ends the retries, and so
    /// does one that would outlast the run ([`RequestEvents::time_left`]).
    pub max_requested_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: PROVIDER_RETRIES,
            base_delay: PROVIDER_RETRY_BASE_DELAY,
            max_delay: PROVIDER_RETRY_MAX_DELAY,
            max_requested_delay: PROVIDER_MAX_REQUESTED_DELAY,
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// Backoff before retry number `retry` (1-based): `base · 2^(retry-1)`, capped, minus up
    /// to a quarter at random so that many clients do not retry in step.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << (retry.saturating_sub(1)).min(16));
        let capped = exp.min(self.max_delay);
        capped.mul_f64(1.0 - 0.25 * rand::random::<f64>())
    }
}

/// What the retry loop tells its caller before waiting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// 1 for the first retry.
    pub retry: u32,
    pub max_retries: u32,
    /// Short reason, such as "HTTP 429" or "timed out".
    pub reason: String,
    pub delay: Duration,
    /// Whether the provider asked for the delay (`retry-after`), rather than the backoff.
    pub requested: bool,
}

impl RetryNotice {
    /// Whether the provider said the request was rate limited (HTTP 429, or a
    /// `rate_limit_*` error code or type).
    pub fn rate_limited(&self) -> bool {
        self.reason == "HTTP 429" || self.reason.contains("rate_limit")
    }
}

/// What a request tells its caller while it runs.
pub trait RequestEvents: Send + Sync {
    /// A retry is about to wait, then send again.
    fn retrying(&self, notice: &RetryNotice);

    /// The reply began arriving; the request may last `left` longer at most (the ceiling).
    fn receiving(&self, left: Duration) {
        let _ = left;
    }

    /// How long the caller may still wait for this request (a run's deadline), if it has a
    /// bound: a delay the provider asks for that would outlast it ends the retries at once.
    fn time_left(&self) -> Option<Duration> {
        None
    }

    /// The request is sent again at once with `what` changed, after the provider refused it
    /// as it was (an output limit lowered to the room the model has).
    fn adjusting(&self, what: &str) {
        let _ = what;
    }
}

impl<F: Fn(&RetryNotice) + Send + Sync> RequestEvents for F {
    fn retrying(&self, notice: &RetryNotice) {
        self(notice)
    }
}

/// Where one request goes and what it carries.
pub(super) struct Target<'a> {
    pub client: &'a reqwest::Client,
    pub url: &'a Url,
    pub headers: &'a HeaderMap,
    pub body: Bytes,
    /// The provider's name for messages.
    pub provider: &'a str,
    /// Hidden from everything quoted of the provider.
    pub secrets: &'a Secrets,
    pub wire: &'a dyn WireFormat,
    /// Added to a failure to connect (why this endpoint was the one tried).
    pub connect_hint: Option<&'a str>,
}

/// Sends the request and reads its reply, retrying as the policy says.
pub(super) async fn send_with_retries(
    target: &Target<'_>,
    policy: &RetryPolicy,
    events: &dyn RequestEvents,
) -> Result<Reply, ProviderError> {
    let mut tally = Tally::default();
    loop {
        let failure = match attempt(target, events).await {
            Ok(reply) => return Ok(reply),
            Err(e) => tally.transient(e)?,
        };
        tally.within_retries(&failure, policy)?;
        if let Some(after) = failure.after {
            requested_delay_fits(&failure, after, policy, target.provider, events.time_left())?;
        }
        tally.retries += 1;
        let delay = failure
            .after
            .unwrap_or_else(|| policy.backoff(tally.retries));
        events.retrying(&RetryNotice {
            retry: tally.retries,
            max_retries: policy.max_retries,
            reason: failure.reason,
            delay,
            requested: failure.after.is_some(),
        });
        tokio::time::sleep(delay).await;
    }
}

/// A failure another attempt may mend, as the retry loop weighs it.
struct Transient {
    /// Short, for the retry notice ("HTTP 429", "timed out").
    reason: String,
    /// The delay the provider asked for.
    after: Option<Duration>,
    timeout: bool,
    /// The message to report if no retry follows.
    message: String,
    /// A rate limit or an overload: what the failure is when no retry follows.
    unavailable: Option<Unavailable>,
}

/// The retries of one request so far.
#[derive(Default)]
struct Tally {
    retries: u32,
    /// Of those, the ones after a reply that had begun and broke off.
    broken_replies: u32,
}

impl Tally {
    /// The failure, if another attempt may mend it: a fatal one ends the request, and a
    /// reply that had begun and broke off is sent again at most [`PROVIDER_STALL_RETRIES`]
    /// times, since each attempt is billed.
    fn transient(&mut self, failure: AttemptError) -> Result<Transient, ProviderError> {
        match failure {
            AttemptError::Fatal(e) => Err(e),
            AttemptError::Retryable {
                reason,
                after,
                timeout,
                message,
                unavailable,
            } => Ok(Transient {
                reason,
                after,
                timeout,
                message,
                unavailable,
            }),
            AttemptError::BrokeOff {
                reason,
                timeout,
                message,
            } => {
                let broken = self.broken_replies;
                if broken >= PROVIDER_STALL_RETRIES {
                    return Err(give_up(
                        timeout,
                        None,
                        format!(
                            "{message}; the reply had begun and broke off again after {broken} \
                             retr{}, so it is not sent again (each attempt is billed)",
                            if broken == 1 { "y" } else { "ies" }
                        ),
                    ));
                }
                self.broken_replies += 1;
                Ok(Transient {
                    reason,
                    after: None,
                    timeout,
                    message,
                    unavailable: None,
                })
            }
        }
    }

    /// Whether the policy allows another retry; the failure ends the request when not.
    fn within_retries(
        &self,
        failure: &Transient,
        policy: &RetryPolicy,
    ) -> Result<(), ProviderError> {
        if self.retries < policy.max_retries {
            return Ok(());
        }
        let attempts = self.retries + 1;
        Err(give_up(
            failure.timeout,
            failure.unavailable,
            format!(
                "{} (after {attempts} attempt{})",
                failure.message,
                if attempts == 1 { "" } else { "s" }
            ),
        ))
    }
}

/// Whether the delay `after` the provider asked for may be waited: not longer than the
/// policy's longest, and not as long as what is left of the run (`time_left`).
fn requested_delay_fits(
    failure: &Transient,
    after: Duration,
    policy: &RetryPolicy,
    provider: &str,
    time_left: Option<Duration>,
) -> Result<(), ProviderError> {
    let longest = policy.max_requested_delay;
    if after > longest {
        return Err(give_up(
            failure.timeout,
            failure.unavailable,
            format!(
                "{} ({provider} asked to wait {} s before retrying, longer than the {} s a \
                 request may take)",
                failure.message,
                after.as_secs(),
                longest.as_secs()
            ),
        ));
    }
    if let Some(left) = time_left
        && after >= left
    {
        return Err(give_up(
            failure.timeout,
            failure.unavailable,
            format!(
                "{} ({provider} asked to wait {} s before retrying, more than the {} s left of \
                 this run's `max_run_seconds`)",
                failure.message,
                after.as_secs(),
                left.as_secs()
            ),
        ));
    }
    Ok(())
}

/// The failure of a request no retry follows: a timeout, a rate limit or an overload that
/// outlasted the retries (`unavailable`), or a plain failure.
fn give_up(timeout: bool, unavailable: Option<Unavailable>, message: String) -> ProviderError {
    ProviderError {
        failure: match unavailable {
            _ if timeout => ProviderFailure::Timeout,
            Some(why) => ProviderFailure::Unavailable(why),
            None => ProviderFailure::Failed,
        },
        message,
    }
}

/// Tells the caller when the reply begins, with the time left before the ceiling.
struct Began<'a> {
    events: &'a dyn RequestEvents,
    bounds: Bounds,
}

impl ReplyProgress for Began<'_> {
    fn began(&self) {
        let left = self
            .bounds
            .ceiling_at
            .saturating_duration_since(tokio::time::Instant::now());
        self.events.receiving(left.min(PROVIDER_REQUEST_CEILING));
    }
}

async fn attempt(target: &Target<'_>, events: &dyn RequestEvents) -> Result<Reply, AttemptError> {
    let bounds = Bounds::from_now();
    let provider = target.provider;
    // `headers` carries the content type. The reply must begin within the request timeout:
    // the headers are part of that wait.
    let sent = target
        .client
        .post(target.url.clone())
        .headers(target.headers.clone())
        .body(target.body.clone())
        .send();
    let response = match tokio::time::timeout_at(bounds.begin_by, sent).await {
        Err(_) => return Err(body_error(provider, BodyError::Silent { began: false }, 0)),
        Ok(response) => response.map_err(|e| transport_error(target, &e))?,
    };
    let status = response.status();
    let id = request_id(response.headers());
    if !status.is_success() {
        let headers = response.headers().clone();
        let bytes = Body::new(response, bounds)
            .read_all()
            .await
            .map_err(|e| body_error(provider, e, 0).with_request_id(id.as_deref()))?;
        let body = String::from_utf8_lossy(&bytes);
        let id = id.or_else(|| body_request_id(&body));
        return Err(
            classify_status(provider, target.secrets, status, &headers, &body)
                .with_request_id(id.as_deref()),
        );
    }
    read_reply(
        Body::new(response, bounds),
        target.wire,
        provider,
        target.secrets,
        &Began { events, bounds },
    )
    .await
    .map_err(|e| e.with_request_id(id.as_deref()))
}

/// A request that failed before a response: a failure to connect names the origin it tried
/// (and the target's hint), since the endpoint is often not the one the user meant.
fn transport_error(target: &Target<'_>, e: &reqwest::Error) -> AttemptError {
    let provider = target.provider;
    let origin = target.url.origin().ascii_serialization();
    let timeout = e.is_timeout();
    let mut what = if timeout && e.is_connect() {
        format!(
            "could not connect to {provider} at {origin} within {} s",
            PROVIDER_CONNECT_TIMEOUT.as_secs()
        )
    } else if e.is_connect() {
        format!(
            "could not connect to {provider} at {origin}: {}",
            innermost_cause(e)
        )
    } else {
        format!(
            "the connection to {provider} at {origin} failed: {}",
            innermost_cause(e)
        )
    };
    if let Some(hint) = target.connect_hint.filter(|_| e.is_connect()) {
        what.push_str(&format!("; {hint}"));
    }
    AttemptError::Retryable {
        reason: if timeout {
            "timed out"
        } else {
            "connection failed"
        }
        .to_owned(),
        after: None,
        timeout,
        message: what,
        unavailable: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy::default();
        for retry in 1..10 {
            let d = p.backoff(retry);
            let nominal = (p.base_delay * 2u32.pow(retry - 1)).min(p.max_delay);
            assert!(d <= nominal && d >= nominal.mul_f64(0.75), "{retry}: {d:?}");
        }
    }
}
