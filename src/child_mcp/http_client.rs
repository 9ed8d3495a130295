//! The HTTP client of streamable-HTTP children (SPEC §8.3): `rmcp`'s own reqwest client,
//! with one change. An answer to a tool call that passes `rmcp`'s byte limits (16 MiB per
//! SSE event or JSON body) fails the whole connection there, which the model would hear of
//! as "the server closed the connection". Here it becomes what it is: a result too large to
//! read, given to the model as a cut result with a marker. Each POST carries one request,
//! so the call an oversized answer belongs to is known without reading it.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use serde_json::json;
use sse_stream::{Error as SseError, Sse};

/// `rmcp`'s reqwest client, cutting oversized tool results instead of failing.
#[derive(Clone)]
pub(super) struct CuttingClient(pub reqwest::Client);

type Failure = StreamableHttpError<reqwest::Error>;

impl StreamableHttpClient for CuttingClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let call = tool_call_id(&message);
        let response = self
            .0
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        let Some(id) = call else {
            return response;
        };
        match response {
            Err(StreamableHttpError::ResponseBodyTooLarge { max_size }) => Ok(
                StreamableHttpPostResponse::Json(cut_answer(&id, max_size), None),
            ),
            Ok(StreamableHttpPostResponse::Sse(events, session)) => Ok(
                StreamableHttpPostResponse::Sse(cut_oversized_events(events, id, limits), session),
            ),
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

fn tool_call_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        ClientJsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::CallToolRequest(_)) =>
        {
            Some(request.id.clone())
        }
        _ => None,
    }
}

/// The events of one call's answer, with an event over the limit replaced by the cut
/// answer (the stream ends there, as the call is answered).
fn cut_oversized_events(
    events: BoxStream<'static, Result<Sse, SseError>>,
    id: RequestId,
    limits: StreamableHttpResponseLimits,
) -> BoxStream<'static, Result<Sse, SseError>> {
    events
        .scan(false, move |answered, event| {
            if *answered {
                return std::future::ready(None);
            }
            let event = match event {
                Err(error) if is_event_too_large(&error) => {
                    *answered = true;
                    let answer = cut_answer(&id, limits.max_sse_event_size);
                    Ok(Sse::default()
                        .event("message")
                        .data(serde_json::to_string(&answer).unwrap_or_default()))
                }
                other => other,
            };
            std::future::ready(Some(event))
        })
        .boxed()
}

/// `rmcp`'s event-size error is private; its message is the one way to tell it from a
/// broken connection (rmcp is pinned, and a test sends an oversized event).
fn is_event_too_large(error: &SseError) -> bool {
    error
        .to_string()
        .contains("SSE event exceeded the maximum size")
}

/// A result saying the answer was too large to read, for call `id`.
fn cut_answer(id: &RequestId, limit: usize) -> ServerJsonRpcMessage {
    let text = format!(
        "[output truncated: the result was larger than the {} MiB read from a child server; \
         none of it is shown]",
        limit / (1024 * 1024)
    );
    let answer = json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {"content": [{"type": "text", "text": text}], "isError": false},
    });
    #[expect(
        clippy::expect_used,
        reason = "a literal of the message's own shape always reads as one"
    )]
    serde_json::from_value(answer).expect("a JSON-RPC response literal")
}
