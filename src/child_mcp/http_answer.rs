//! One tool call to an HTTP child (SPEC §8.3): its POST, and its answer read under the
//! transport's byte limits as `rmcp`'s own client reads it, with one difference: an answer
//! over a limit keeps its start. A JSON body, or an event of the answer's stream, that
//! passes the limit becomes the call's result with the start of its text (up to the 1 MiB
//! output cap) and a marker, as a stdio child's does ([`super::cut`]); the rest of it is
//! never held. Answers that are not a success become what `rmcp` makes of them (a JSON-RPC
//! error, an expired session, an HTTP status), so the transport above behaves the same.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::{Stream, StreamExt};
use http::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderName, HeaderValue, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse, SseStream};

use super::cut::{HEAD_BYTES, cut_result};

pub(super) type Failure = StreamableHttpError<reqwest::Error>;

const SESSION_HEADER: &str = "Mcp-Session-Id";
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";

/// A tool call's POST, as `rmcp`'s transport hands it to its HTTP client.
pub(super) struct ToolCallPost {
    pub uri: Arc<str>,
    pub message: ClientJsonRpcMessage,
    pub id: RequestId,
    pub session_id: Option<Arc<str>>,
    pub auth_header: Option<String>,
    pub custom_headers: HashMap<HeaderName, HeaderValue>,
    pub limits: StreamableHttpResponseLimits,
}

/// Sends `post` and reads its answer (see the module's documentation).
pub(super) async fn post_tool_call(
    client: &reqwest::Client,
    post: ToolCallPost,
) -> Result<StreamableHttpPostResponse, Failure> {
    let session_attached = post.session_id.is_some();
    let mut request = client
        .post(post.uri.as_ref())
        .header(ACCEPT, format!("{EVENT_STREAM}, {JSON}"));
    if let Some(token) = post.auth_header {
        request = request.bearer_auth(token);
    }
    for (name, value) in post.custom_headers {
        request = request.header(name, value);
    }
    if let Some(session) = post.session_id {
        request = request.header(SESSION_HEADER, session.as_ref());
    }
    let response = request.json(&post.message).send().await?;
    let status = response.status();
    if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
        && let Some(challenge) = response.headers().get(WWW_AUTHENTICATE)
    {
        let challenge = challenge
            .to_str()
            .map_err(|_| {
                Failure::UnexpectedServerResponse(Cow::from(
                    "invalid www-authenticate header value",
                ))
            })?
            .to_owned();
        return Err(if status == StatusCode::UNAUTHORIZED {
            Failure::AuthRequired(AuthRequiredError::new(challenge))
        } else {
            // Only `rmcp`'s authorization flow, not used here, reads the scope.
            Failure::InsufficientScope(InsufficientScopeError::new(challenge, None))
        });
    }
    if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
        return Ok(StreamableHttpPostResponse::Accepted);
    }
    if status == StatusCode::NOT_FOUND && session_attached {
        return Err(Failure::SessionExpired);
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let is = |expected: &str| {
        content_type
            .as_deref()
            .is_some_and(|value| media_type_is(value, expected))
    };
    let (is_json, is_event_stream) = (is(JSON), is(EVENT_STREAM));
    let session_id = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    if !status.is_success() {
        return refusal(response, is_json, post.limits, session_id).await;
    }
    if is_event_stream {
        let events = answer_events(
            response.bytes_stream(),
            post.id,
            post.limits.max_sse_event_size,
        );
        return Ok(StreamableHttpPostResponse::Sse(events, session_id));
    }
    if is_json {
        let limit = post.limits.max_json_response_size;
        let content_length = response.content_length();
        let message = match read_body(response.bytes_stream(), content_length, limit).await? {
            Body::Whole(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Failure::UnexpectedServerResponse(Cow::Owned(format!(
                    "could not parse JSON response as ServerJsonRpcMessage: {e}"
                )))
            })?,
            Body::Oversized { head } => cut_result(&post.id, &head, &marker(limit)),
        };
        return Ok(StreamableHttpPostResponse::Json(message, session_id));
    }
    Err(Failure::UnexpectedContentType(content_type))
}

/// What a response that is not a success stands for: the JSON-RPC error it carries, else
/// its status (429 and 5xx, with `Retry-After`), else its status and the start of its body.
async fn refusal(
    response: reqwest::Response,
    is_json: bool,
    limits: StreamableHttpResponseLimits,
    session_id: Option<String>,
) -> Result<StreamableHttpPostResponse, Failure> {
    let status = response.status();
    let status_error =
        (status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()).then(|| {
            let retry_after = response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            HttpStatusError::new(status.as_u16(), retry_after)
        });
    let is_auth_failure = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
    if let Some(error) = &status_error
        && (!is_json || status == StatusCode::TOO_MANY_REQUESTS)
    {
        // Without a JSON-RPC error to read, the status is the whole story.
        return Err(HttpStatusError::new(error.status, error.retry_after.clone()).into());
    }
    let content_length = response.content_length();
    let (body, whole) = if is_json && !is_auth_failure {
        match read_body(
            response.bytes_stream(),
            content_length,
            limits.max_json_response_size,
        )
        .await
        {
            Ok(Body::Whole(bytes)) => (bytes, true),
            Ok(Body::Oversized { head }) => (head, false),
            Err(_) => (Vec::new(), false),
        }
    } else {
        match read_body(
            response.bytes_stream(),
            None,
            limits.max_error_response_size,
        )
        .await
        {
            Ok(Body::Whole(bytes) | Body::Oversized { head: bytes }) => (bytes, false),
            Err(_) => (Vec::new(), false),
        }
    };
    if whole
        && let Ok(error @ JsonRpcMessage::Error(_)) =
            serde_json::from_slice::<ServerJsonRpcMessage>(&body)
    {
        return Ok(StreamableHttpPostResponse::Json(error, session_id));
    }
    if let Some(error) = status_error {
        return Err(error.into());
    }
    let shown = &body[..body.len().min(limits.max_error_response_size)];
    Err(Failure::UnexpectedServerResponse(Cow::Owned(format!(
        "HTTP {status}: {}",
        String::from_utf8_lossy(shown)
    ))))
}

/// Whether a `Content-Type` value is the media type `expected`, parameters aside.
fn media_type_is(value: &str, expected: &str) -> bool {
    value
        .split(';')
        .next()
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

/// The marker of an answer over `limit` bytes.
fn marker(limit: usize) -> String {
    format!(
        "\n[output truncated: the result was larger than the {} MiB read from a child server; \
         the start of its text is shown]",
        limit / (1024 * 1024)
    )
}

/// A body read under a limit.
enum Body {
    Whole(Vec<u8>),
    /// Over the limit: its first [`HEAD_BYTES`] (or fewer, if the limit is lower), the rest
    /// left unread.
    Oversized {
        head: Vec<u8>,
    },
}

/// Reads `stream` up to `limit` bytes; past it, only its start is kept and reading stops.
/// A declared length over the limit stops reading once the start is in.
async fn read_body(
    stream: impl Stream<Item = reqwest::Result<Bytes>>,
    content_length: Option<u64>,
    limit: usize,
) -> Result<Body, Failure> {
    let declared_over = content_length.is_some_and(|length| length > limit as u64);
    let keep = if declared_over {
        HEAD_BYTES.min(limit)
    } else {
        limit
    };
    let mut stream = std::pin::pin!(stream);
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(Failure::Client)?;
        if body.len() + chunk.len() > keep {
            body.extend_from_slice(&chunk[..keep - body.len()]);
            body.truncate(HEAD_BYTES);
            body.shrink_to_fit();
            return Ok(Body::Oversized { head: body });
        }
        body.extend_from_slice(&chunk);
    }
    if declared_over {
        return Ok(Body::Oversized { head: body });
    }
    Ok(Body::Whole(body))
}

/// The events of call `id`'s answer, parsed as `rmcp` parses them, with each event's size
/// bounded by `limit`: the first event over it is replaced by the call's cut result, and
/// the stream ends there, the call being answered.
fn answer_events(
    bytes: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
    id: RequestId,
    limit: usize,
) -> BoxStream<'static, Result<Sse, SseError>> {
    let bounded = bytes.scan(EventBound::new(limit), |bound, chunk| {
        let item = match chunk {
            _ if bound.failed => None,
            Ok(chunk) => Some(bound.observe(&chunk).map(|()| chunk)),
            Err(error) => {
                bound.failed = true;
                Some(Err(StreamError::Source(error)))
            }
        };
        std::future::ready(item)
    });
    SseStream::from_bytes_stream(bounded)
        .scan(false, move |answered, event| {
            if *answered {
                return std::future::ready(None);
            }
            let event = match event {
                Err(SseError::Body(error)) => match error.downcast::<StreamError>() {
                    Ok(error) => match *error {
                        StreamError::EventTooLarge { head } => {
                            *answered = true;
                            let answer = cut_result(&id, &head, &marker(limit));
                            Ok(Sse::default()
                                .event("message")
                                .data(serde_json::to_string(&answer).unwrap_or_default()))
                        }
                        source @ StreamError::Source(_) => Err(SseError::Body(Box::new(source))),
                    },
                    Err(other) => Err(SseError::Body(other)),
                },
                other => other,
            };
            std::future::ready(Some(event))
        })
        .boxed()
}

#[derive(Debug, thiserror::Error)]
enum StreamError {
    #[error(transparent)]
    Source(reqwest::Error),
    #[error("an event of the answer passed the size limit")]
    EventTooLarge { head: Vec<u8> },
}

/// The size of the event being read, counted as `rmcp` counts it (the lines it keeps:
/// not comments, not line ends but the newline joining data lines), and its first bytes.
struct EventBound {
    limit: usize,
    kept: usize,
    line: usize,
    line_is_comment: bool,
    after_cr: bool,
    head: Vec<u8>,
    failed: bool,
}

impl EventBound {
    fn new(limit: usize) -> EventBound {
        EventBound {
            limit,
            kept: 0,
            line: 0,
            line_is_comment: false,
            after_cr: false,
            head: Vec::new(),
            failed: false,
        }
    }

    /// Counts `chunk`; past the limit, the event's start as an error.
    fn observe(&mut self, chunk: &[u8]) -> Result<(), StreamError> {
        for &byte in chunk {
            if self.head.len() < HEAD_BYTES {
                self.head.push(byte);
            }
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            match byte {
                b'\r' | b'\n' => {
                    self.after_cr = byte == b'\r';
                    if self.line == 0 {
                        // A blank line ends the event.
                        self.kept = 0;
                        self.head.clear();
                    } else if !self.line_is_comment {
                        self.kept = self.kept.saturating_add(self.line + 1);
                    }
                    self.line = 0;
                    self.line_is_comment = false;
                }
                _ => {
                    if self.line == 0 {
                        self.line_is_comment = byte == b':';
                    }
                    self.line += 1;
                }
            }
            if self.kept.saturating_add(self.line) > self.limit {
                self.failed = true;
                return Err(StreamError::EventTooLarge {
                    head: std::mem::take(&mut self.head),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn events_of(input: Vec<&'static [u8]>, limit: usize) -> Vec<Result<Sse, String>> {
        let chunks = futures_util::stream::iter(
            input
                .into_iter()
                .map(|c| Ok::<_, reqwest::Error>(Bytes::from_static(c))),
        );
        let events = answer_events(chunks, RequestId::Number(7), limit);
        events
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .map(|e| e.map_err(|e| e.to_string()))
            .collect()
    }

    #[tokio::test]
    async fn events_under_the_limit_pass_as_they_are() {
        let events = events_of(
            vec![
                b"event: message\r\ndata: {\"a\":",
                b"1}\r\n\r\n: keep-alive\n\ndata: x\n\n",
            ],
            64,
        )
        .await;
        let data: Vec<_> = events
            .iter()
            .map(|e| e.as_ref().unwrap().data.clone().unwrap())
            .collect();
        assert_eq!(data, ["{\"a\":1}", "x"]);
    }

    #[tokio::test]
    async fn an_event_over_the_limit_becomes_the_cut_result_and_ends_the_stream() {
        let mut big = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"".to_vec();
        big.extend(std::iter::repeat_n(b'y', 4000));
        let big: &'static [u8] = Box::leak(big.into_boxed_slice());
        let events = events_of(
            vec![b"data: first\n\n", big, b"\"}]}}\n\ndata: later\n\n"],
            1000,
        )
        .await;
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[0].as_ref().unwrap().data.as_deref(), Some("first"));
        let answer: serde_json::Value =
            serde_json::from_str(events[1].as_ref().unwrap().data.as_deref().unwrap()).unwrap();
        assert_eq!(answer["id"], 7);
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("yyyy"), "{text}");
        assert!(text.ends_with("the start of its text is shown]"), "{text}");
        // The text kept is what came before the limit: 1000 bytes of the event less its
        // field names and JSON.
        assert!(text.matches('y').count() > 900, "{text}");
    }

    async fn read(
        chunks: Vec<&'static [u8]>,
        declared: Option<u64>,
        limit: usize,
    ) -> (bool, Vec<u8>) {
        let stream = futures_util::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, reqwest::Error>(Bytes::from_static(c))),
        );
        match read_body(stream, declared, limit).await {
            Ok(Body::Whole(bytes)) => (true, bytes),
            Ok(Body::Oversized { head }) => (false, head),
            Err(e) => panic!("{e}"),
        }
    }

    #[tokio::test]
    async fn bodies_over_the_limit_keep_their_start() {
        assert_eq!(
            read(vec![b"abc", b"def"], None, 6).await,
            (true, b"abcdef".to_vec())
        );
        assert_eq!(
            read(vec![b"abc", b"defg"], None, 6).await,
            (false, b"abcdef".to_vec())
        );
        assert_eq!(
            read(vec![b"abc", b"def"], Some(1 << 30), 6).await,
            (false, b"abcdef".to_vec()),
            "a declared length over the limit"
        );
    }
}
