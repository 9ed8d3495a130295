//! Serving streamable HTTP at `http://ADDR/mcp` (SPEC §4, §10).
//!
//! - Binds loopback unless a bearer token is configured; a non-loopback address without one
//!   is refused at startup.
//! - Refuses (403) any request whose `Origin` is not a loopback origin, so a web page cannot
//!   drive the server from a browser.
//! - With `--auth-token-env VAR`, every request needs `Authorization: Bearer <value of VAR>`
//!   (401 otherwise).
//! - Reads at most 4 MiB of a POST body, into one buffer however it is cut, refusing one
//!   whose declared length is over that before reading it ([`super::request_body`]), and
//!   marks a `tools/call` whose `arguments` is not an object so that it is answered with
//!   `invalid_input` ([`super::arguments`]).
//! - Bounds what a client can hold, with or without the token (SPEC §10): a request's
//!   headers must arrive within 10 s (hyper's header timeout, also for a kept-alive
//!   connection's next request) and its body within 30 s, and an answer the client stops
//!   reading is given up after 30 s ([`super::write_stall`]), else the connection is
//!   closed; at most 256 connections are served at once, and when all are taken one is
//!   closed for a new client (an idle kept-alive one first), while the answers nobody reads
//!   are bounded all together ([`super::connections`], [`super::crowd`]); at most 128 of
//!   the connections may be `wait_agent` calls waiting longer than a second (a longer one
//!   beyond them is shortened, and says so), so waits cannot lock other clients out; at
//!   most 64 legacy sessions ([`super::legacy_sessions`]). Connections are HTTP/1.1: an
//!   HTTP/2 one would need its first bytes read before any timeout applies.
//! - Serves the status endpoint beside `/mcp`, behind the same checks
//!   ([`super::status_http`]).
//!
//! Requests of protocol 2026-07-28 are stateless: `rmcp` builds a handler per request, and
//! the handler only holds the shared session manager. Older clients that `initialize` get
//! `rmcp`'s sessions.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::handler::{AgentsServer, ServeOptions};
use super::legacy_sessions::CappedSessions;
use super::request_body::{BodyRefusal, discard, read_capped};
use crate::definition::is_loopback;
use crate::definition::{is_env_var_name, is_showable_var_name};
use crate::limits::{HTTP_BODY_TIMEOUT, HTTP_LONG_WAITS, HTTP_REQUEST_BODY_BYTES};
use crate::sessions::SessionManager;

/// How to serve HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// `host:port`, for example `127.0.0.1:8080`.
    pub addr: String,
    /// The variable holding the bearer token, if any.
    pub auth_token_env: Option<String>,
}

/// Checked options: where to listen and the token to require. Built before anything else
/// starts, so a bad option is a usage error that stops the command at once.
#[derive(Clone)]
pub struct Listen {
    addr: SocketAddr,
    token: Option<Arc<str>>,
}

impl HttpOptions {
    /// Resolves the address and reads the token. Messages never show a value that could be
    /// the token itself.
    pub fn prepare(&self, env: impl Fn(&str) -> Option<String>) -> Result<Listen, String> {
        let addr = resolve(&self.addr)?;
        let token = match &self.auth_token_env {
            Some(var)
                if !is_env_var_name(var) || (!is_showable_var_name(var) && env(var).is_none()) =>
            {
                return Err(
                    "--auth-token-env takes the NAME of the environment variable that holds \
                     the token; this is not a variable name, or names none that is set (it is \
                     not shown, in case it is the token itself)"
                        .to_owned(),
                );
            }
            Some(var) => match env(var) {
                Some(value) if !value.trim().is_empty() => Some(Arc::<str>::from(value.trim())),
                _ => {
                    return Err(format!(
                        "--auth-token-env names {var}, which is not set or empty"
                    ));
                }
            },
            None => None,
        };
        if !addr.ip().is_loopback() && token.is_none() {
            return Err(format!(
                "refusing to serve on {addr}, which is not a loopback address, without a \
                 bearer token; set a token in an environment variable and pass \
                 --auth-token-env VAR"
            ));
        }
        Ok(Listen { addr, token })
    }
}

/// What each request is checked against.
#[derive(Clone)]
struct Guard {
    token: Option<Arc<str>>,
}

/// Binds, then serves until `shutdown` is cancelled. Returns the bound address through
/// `on_bound` (useful with port 0).
pub async fn serve_http(
    manager: Arc<SessionManager>,
    options: ServeOptions,
    listen: Listen,
    shutdown: CancellationToken,
    on_bound: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    let Listen { addr, token } = listen;
    let loopback = addr.ip().is_loopback();
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(shutdown.child_token())
        // Room for a marked `arguments` (a few bytes longer) behind our own limit.
        .with_max_request_body_bytes(HTTP_REQUEST_BODY_BYTES + 1024);
    if !loopback {
        // Host checks guard loopback servers against DNS rebinding; a server reachable on
        // the network is protected by its token instead.
        config = config.disable_allowed_hosts();
    }
    // rmcp calls the factory for every request; the tool list is built once and shared,
    // and so are the slots for long waits.
    let status_info = crate::status::ServerInfo::new(&manager, "http");
    let status = super::status_http::routes(manager.clone(), status_info.clone(), shutdown.clone());
    let server = AgentsServer::new(manager, crate::clients::Transport::Http, options)
        .with_long_waits(HTTP_LONG_WAITS);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(CappedSessions::default()),
        config,
    );
    let router = Router::new()
        .nest_service("/mcp", service)
        .merge(status)
        .layer(middleware::from_fn_with_state(
            Guard { token },
            check_request,
        ));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    status_info.set_url(format!("http://{bound}/mcp"));
    on_bound(bound);
    super::connections::serve(listener, router, shutdown).await;
    Ok(())
}

/// `HOST:PORT` to an address, once at startup (a host name is looked up, blocking).
fn resolve(addr: &str) -> Result<SocketAddr, String> {
    let mut found = std::net::ToSocketAddrs::to_socket_addrs(addr)
        .map_err(|e| format!("--http {addr}: not an address to listen on ({e}); use HOST:PORT"))?;
    found
        .next()
        .ok_or_else(|| format!("--http {addr}: the host has no address"))
}

async fn check_request(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    if let Some(origin) = request.headers().get(header::ORIGIN)
        && !origin_is_loopback(origin)
    {
        return (
            StatusCode::FORBIDDEN,
            "Forbidden: the Origin is not a loopback origin",
        )
            .into_response();
    }
    if let Some(token) = &guard.token {
        // The scheme is case-insensitive (RFC 9110 §11.1); the token is not.
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token);
        if !presented.is_some_and(|p| same_secret(p.trim().as_bytes(), token.as_bytes())) {
            let mut response = (
                StatusCode::UNAUTHORIZED,
                "Unauthorized: a bearer token is required",
            )
                .into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return response;
        }
    }
    let request = match mark_arguments(request).await {
        Ok(request) => request,
        Err(refusal) => return refusal,
    };
    next.run(request).await
}

/// Reads a POST body and marks a `tools/call` whose `arguments` is not an object
/// ([`super::arguments`]); other requests pass untouched.
async fn mark_arguments(request: Request) -> Result<Request, Response> {
    if request.method() != axum::http::Method::POST {
        return Ok(request);
    }
    let (mut parts, body) = request.into_parts();
    let read = tokio::time::timeout(
        HTTP_BODY_TIMEOUT,
        read_capped(body, HTTP_REQUEST_BODY_BYTES),
    )
    .await;
    let Ok(read) = read else {
        let mut refusal = (
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "Request Timeout: the request body did not arrive within {} s",
                HTTP_BODY_TIMEOUT.as_secs()
            ),
        )
            .into_response();
        // The rest of the body will never be read: the connection goes.
        refusal
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return Err(refusal);
    };
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(BodyRefusal::TooLarge(rest)) => {
            discard(rest);
            let mut refusal = (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "Payload Too Large: the request body is larger than {} MiB",
                    HTTP_REQUEST_BODY_BYTES / (1024 * 1024)
                ),
            )
                .into_response();
            // The rest of the body is not kept: the connection goes once it is thrown away.
            refusal
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return Err(refusal);
        }
        Err(BodyRefusal::Unreadable) => {
            return Err((
                StatusCode::BAD_REQUEST,
                "Bad Request: the request body could not be read",
            )
                .into_response());
        }
    };
    let body = match super::arguments::mark_non_object_arguments(&bytes) {
        Some(marked) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            axum::body::Body::from(marked)
        }
        None => axum::body::Body::from(bytes),
    };
    Ok(Request::from_parts(parts, body))
}

/// Whether an `Origin` names a loopback host (`http(s)://localhost`, `127.x.x.x`, `[::1]`,
/// any port). `null` and anything unparsable are not.
pub(super) fn origin_is_loopback(origin: &HeaderValue) -> bool {
    let Ok(text) = origin.to_str() else {
        return false;
    };
    let Ok(url) = url::Url::parse(text) else {
        return false;
    };
    matches!(url.scheme(), "http" | "https") && url.host().is_some_and(|h| is_loopback(&h))
}

/// Compares in time that does not depend on where the inputs differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_only() {
        for ok in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8443",
            "http://[::1]:1",
        ] {
            assert!(origin_is_loopback(&HeaderValue::from_static(ok)), "{ok}");
        }
        for bad in [
            "https://evil.example",
            "null",
            "http://localhost.evil.example",
            "file://x",
            "http://10.0.0.1",
        ] {
            assert!(!origin_is_loopback(&HeaderValue::from_static(bad)), "{bad}");
        }
    }

    #[test]
    fn secrets_compare_exactly() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
    }
}
