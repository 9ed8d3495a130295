//! A loopback HTTP proxy that passes every request on to a real server and keeps what went
//! by: the request body, the status, and the response body as it streamed through (the SSE
//! events), so a test against a real engine can check the wire, not only the outcome.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::Value;

/// One request and its answer.
#[derive(Clone)]
pub struct Exchange {
    /// The path asked for (`/v1/responses`).
    pub path: String,
    /// The request's headers (test keys only).
    pub headers: HeaderMap,
    /// The request body, as JSON (`null` if it was not JSON).
    pub request: Value,
    /// The answer's status (502 if the server could not be reached).
    pub status: u16,
    body: Arc<Mutex<Vec<u8>>>,
}

impl Exchange {
    /// The response body so far (all of it once the client has read it).
    pub fn body(&self) -> String {
        String::from_utf8_lossy(&self.body.lock().unwrap()).into_owned()
    }

    /// The `data:` of every server-sent event of the response, as JSON, in order.
    pub fn events(&self) -> Vec<Value> {
        self.body()
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect()
    }

    /// The response body as one JSON value (an error answer).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body()).unwrap_or(Value::Null)
    }
}

struct Shared {
    upstream: String,
    client: reqwest::Client,
    exchanges: Mutex<Vec<Exchange>>,
}

/// A running proxy to one upstream origin; it stops when dropped.
pub struct RecordingProxy {
    origin: String,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl RecordingProxy {
    /// Starts a proxy on a free loopback port that forwards to `upstream`
    /// (`http://127.0.0.1:PORT`).
    pub async fn start(upstream: &str) -> RecordingProxy {
        // Installs the TLS provider reqwest needs to build any client (this one only
        // speaks plain HTTP to loopback).
        let _ = mcp_agents::net::loopback_client();
        let shared = Arc::new(Shared {
            upstream: upstream.trim_end_matches('/').to_owned(),
            client: reqwest::Client::new(),
            exchanges: Mutex::new(Vec::new()),
        });
        let app = Router::new().fallback(forward).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        RecordingProxy {
            origin,
            shared,
            server,
        }
    }

    /// `http://127.0.0.1:PORT` of the proxy.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Every exchange so far, in the order the requests arrived.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.shared.exchanges.lock().unwrap().clone()
    }
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn forward(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let target = format!(
        "{}{}",
        shared.upstream,
        uri.path_and_query().map_or("/", |p| p.as_str())
    );
    let mut request = shared.client.request(method, target).body(body.clone());
    for (name, value) in &headers {
        if name != header::HOST && name != header::CONTENT_LENGTH {
            request = request.header(name, value);
        }
    }
    let sink = Arc::new(Mutex::new(Vec::new()));
    let mut exchange = Exchange {
        path,
        headers: headers.clone(),
        request: serde_json::from_slice(&body).unwrap_or(Value::Null),
        status: StatusCode::BAD_GATEWAY.as_u16(),
        body: sink.clone(),
    };
    let upstream = match request.send().await {
        Ok(upstream) => upstream,
        Err(e) => {
            sink.lock()
                .unwrap()
                .extend_from_slice(e.to_string().as_bytes());
            shared.exchanges.lock().unwrap().push(exchange);
            let mut response = Response::new(Body::from(e.to_string()));
            *response.status_mut() = StatusCode::BAD_GATEWAY;
            return response;
        }
    };
    exchange.status = upstream.status().as_u16();
    shared.exchanges.lock().unwrap().push(exchange);
    let status = upstream.status();
    let content_type = upstream.headers().get(header::CONTENT_TYPE).cloned();
    // Passed on chunk by chunk as it arrives (a streamed reply stays streamed), and kept.
    let chunks = futures_util::stream::unfold(Some(upstream), move |upstream| {
        let sink = sink.clone();
        async move {
            let mut upstream = upstream?;
            match upstream.chunk().await {
                Ok(Some(chunk)) => {
                    sink.lock().unwrap().extend_from_slice(&chunk);
                    Some((Ok::<_, std::io::Error>(chunk), Some(upstream)))
                }
                Ok(None) => None,
                Err(e) => Some((Err(std::io::Error::other(e)), None)),
            }
        }
    });
    let mut response = Response::new(Body::from_stream(chunks));
    *response.status_mut() = status;
    if let Some(content_type) = content_type {
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, content_type);
    }
    response
}
