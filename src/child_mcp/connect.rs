//! One connection to one child MCP server, through the `rmcp` client: start it (a process
//! in its own process group, or a streamable-HTTP endpoint without redirects), require
//! protocol 2026-07-28 through `server/discover`, list its tools, call them, and shut it
//! down within the bound, killing the whole process group if it lingers.

use std::collections::HashMap;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientCapabilities, ClientNotification, ClientRequest,
    Implementation, InitializeRequestParams, ProtocolVersion, RequestId, ServerResult, Tool,
};
use rmcp::service::{ClientInitializeError, Peer, PeerRequestOptions, RunningService};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport};
use rmcp::{ClientCacheConfig, ClientHandler, ClientLifecycleMode};
use rmcp::{ClientServiceExt, RoleClient, ServiceError};
use tokio::time::Instant;

use super::launch::Launch;
use super::process::GroupGuard;
use super::spawn::{self, StdioCommand};
use super::stdio::ChildStdio;
use crate::limits::CHILD_ABANDON_TIMEOUT;
use crate::redact::{Redactor, origin};

/// The client side of a child connection: it announces itself and asks for nothing.
#[derive(Clone)]
struct ChildClient {
    legacy: bool,
}

impl ClientHandler for ChildClient {
    fn get_info(&self) -> InitializeRequestParams {
        let mut info = InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("mcp-agents", env!("CARGO_PKG_VERSION")),
        );
        if self.legacy {
            info.protocol_version = ProtocolVersion::V_2025_11_25;
        }
        info
    }
}

/// A started child, ready for calls.
pub struct ChildConnection {
    pub server: String,
    service: RunningService<RoleClient, ChildClient>,
    /// The process group of a stdio child, killed with everything it started when the
    /// connection ends.
    process_group: Option<GroupGuard>,
    /// Takes an HTTP child's URL out of call errors.
    redactor: Redactor,
    /// Calls abandoned while the child was still working on them (interrupted, out of
    /// time): told again, in order, before the connection closes.
    abandoned: std::sync::Mutex<Vec<RequestId>>,
}

/// Starts `launch`, requires 2026-07-28, and lists every tool, all within `bound`.
/// An error never carries an HTTP child's URL beyond its scheme, host and port.
pub async fn connect(
    server: &str,
    launch: &Launch,
    bound: Duration,
) -> Result<(ChildConnection, Vec<Tool>), String> {
    let redactor = Redactor::for_url(match launch {
        Launch::Http { url, .. } => Some(url),
        Launch::Stdio { .. } => None,
    });
    connect_unredacted(server, launch, bound, redactor.clone())
        .await
        .map_err(|message| redactor.apply(&message))
}

async fn connect_unredacted(
    server: &str,
    launch: &Launch,
    bound: Duration,
    redactor: Redactor,
) -> Result<(ChildConnection, Vec<Tool>), String> {
    let deadline = Instant::now() + bound;
    let (service, process_group) = start(server, launch, modern(), deadline).await?;
    let connection = ChildConnection {
        server: server.to_owned(),
        service,
        process_group,
        redactor,
        abandoned: std::sync::Mutex::new(Vec::new()),
    };
    connection
        .service
        .peer()
        .set_response_cache_config(ClientCacheConfig::disabled())
        .await;
    let listed =
        tokio::time::timeout_at(deadline, connection.service.peer().list_all_tools()).await;
    match listed {
        Ok(Ok(tools)) => Ok((connection, tools)),
        Ok(Err(e)) => {
            connection.shutdown(CHILD_ABANDON_TIMEOUT).await;
            Err(format!("tools/list failed: {e}"))
        }
        Err(_) => {
            connection.shutdown(CHILD_ABANDON_TIMEOUT).await;
            Err(format!(
                "did not list its tools within {} s of starting",
                bound.as_secs()
            ))
        }
    }
}

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// Starts the child and runs the lifecycle chosen by `mode`, before `deadline`.
async fn start(
    server: &str,
    launch: &Launch,
    mode: ClientLifecycleMode,
    deadline: Instant,
) -> Result<(RunningService<RoleClient, ChildClient>, Option<GroupGuard>), String> {
    let legacy = matches!(mode, ClientLifecycleMode::Initialize);
    let client = ChildClient { legacy };
    match launch {
        Launch::Stdio {
            command,
            args,
            env,
            cwd,
            shim,
        } => {
            let child = StdioCommand {
                command,
                args,
                env,
                cwd,
            };
            // Dropping the guard (a shutdown during startup drops the whole startup) kills
            // the child and what it started.
            let (mut process, guard) = spawn::start(&child, shim.as_ref(), deadline).await?;
            if let Some(stderr) = process.stderr().take() {
                tokio::spawn(super::stderr::forward(server.to_owned(), stderr));
            }
            let transport =
                ChildStdio::new(process).map_err(|e| format!("cannot start `{command}`: {e}"))?;
            let service = handshake(client, transport, mode, deadline, launch, server).await?;
            Ok((service, Some(guard)))
        }
        Launch::Http { url, headers } => {
            let http = crate::net::child_client(url).clone();
            let mut header_map = HashMap::new();
            for (name, value) in headers {
                let name = http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| format!("{name:?} is not a valid header name"))?;
                let mut value = http::HeaderValue::from_str(value)
                    .map_err(|_| format!("the value of header {name} is not valid in a header"))?;
                value.set_sensitive(true);
                header_map.insert(name, value);
            }
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str().to_owned())
                .custom_headers(header_map);
            let transport = StreamableHttpClientTransport::with_client(
                super::http_client::CuttingClient(http),
                config,
            );
            handshake(client, transport, mode, deadline, launch, server)
                .await
                .map(|s| (s, None))
        }
    }
}

async fn handshake<T, E, A>(
    client: ChildClient,
    transport: T,
    mode: ClientLifecycleMode,
    deadline: Instant,
    launch: &Launch,
    server: &str,
) -> Result<RunningService<RoleClient, ChildClient>, String>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let modern_attempt = matches!(mode, ClientLifecycleMode::Discover { .. });
    match tokio::time::timeout_at(deadline, client.serve_with_lifecycle(transport, mode)).await {
        Ok(Ok(service)) => Ok(service),
        Err(_) => Err("did not answer server/discover in time".to_owned()),
        Ok(Err(error)) if modern_attempt => {
            Err(explain_refusal(error, launch, deadline, server).await)
        }
        Ok(Err(error)) => Err(error.to_string()),
    }
}

/// Why a child could not be used as a 2026-07-28 server, with the versions it offers.
async fn explain_refusal(
    error: ClientInitializeError,
    launch: &Launch,
    deadline: Instant,
    server: &str,
) -> String {
    match error {
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => format!(
            "does not support MCP 2026-07-28; it offers {}",
            versions(&server_supported)
        ),
        ClientInitializeError::JsonRpcError(e) => {
            // A server of an older generation answers server/discover with an error; ask it
            // the old way which version it speaks, to say so.
            let offered = match Box::pin(start(
                server,
                launch,
                ClientLifecycleMode::Initialize,
                deadline,
            ))
            .await
            {
                Ok((mut service, group)) => {
                    let version = service.peer_info().map(|i| i.protocol_version.to_string());
                    let _ = service.close_with_timeout(CHILD_ABANDON_TIMEOUT).await;
                    drop(group);
                    version.map_or_else(
                        || "no version".to_owned(),
                        |v| format!("only {v}, through initialize"),
                    )
                }
                Err(_) => "no version it could be asked for".to_owned(),
            };
            format!(
                "does not support MCP 2026-07-28: server/discover failed ({} {}); it offers {offered}",
                e.code.0, e.message
            )
        }
        other => {
            // The transport's own error is not chained as the source of rmcp's.
            let cause = match &other {
                ClientInitializeError::TransportError { error, .. } => {
                    innermost_causes(error.error.as_ref())
                }
                _ => innermost_causes(&other),
            };
            let exited = matches!(launch, Launch::Stdio { .. })
                && (cause.contains("Broken pipe")
                    || matches!(other, ClientInitializeError::ConnectionClosed(_)));
            let hint = if exited {
                format!(
                    "; the process ended or closed its output before answering (what it \
                     wrote to stderr is above, prefixed with [{server}])"
                )
            } else {
                String::new()
            };
            let at = match launch {
                Launch::Http { url, .. } => format!(" at {}", origin(url)),
                Launch::Stdio { .. } => String::new(),
            };
            format!("failed during server/discover{at}: {cause}{hint}")
        }
    }
}

/// The last two errors of `error`'s source chain ("tcp connect error: Connection refused"),
/// or `error` itself when it has no source: the transport layers above them only name Rust
/// types.
fn innermost_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut chain = vec![error.to_string()];
    let mut next = cause_of(error);
    while let Some(e) = next {
        chain.push(e.to_string());
        next = cause_of(e);
    }
    if chain.len() == 1 {
        return chain.remove(0);
    }
    let start = chain.len().saturating_sub(2).max(1);
    chain[start..].join(": ")
}

/// `error`'s source; for rmcp's HTTP client error, the HTTP client's error it wraps without
/// naming it as its source.
fn cause_of<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(inner)) => Some(inner),
        _ => error.source(),
    }
}

fn versions(list: &[ProtocolVersion]) -> String {
    if list.is_empty() {
        return "no version".to_owned();
    }
    list.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl ChildConnection {
    /// Calls `tool`. Errors that are not the tool's own (`isError`) come back as `Err`
    /// with a sentence for the model. A call dropped before its answer (interrupted, out of
    /// time) is cancelled with `notifications/cancelled`, so the child can stop its work.
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallToolResult, String> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = self.service.peer();
        let answered = match peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => {
                let mut pending = Pending {
                    connection: self,
                    id: Some(handle.id.clone()),
                };
                let answer = handle.await_response().await;
                pending.id = None;
                answer
            }
            Err(e) => Err(e),
        };
        match answered {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(_) => Err(format!(
                "the MCP server {} answered the call with something that is not a tool result",
                self.server
            )),
            Err(e) => {
                let message = match e {
                    ServiceError::TransportClosed | ServiceError::TransportSend(_) => format!(
                        "the MCP server {} closed the connection during the call (it may have \
                         exited)",
                        self.server
                    ),
                    ServiceError::McpError(e) => format!(
                        "the MCP server {} refused the call: {}",
                        self.server, e.message
                    ),
                    other => format!("the call to the MCP server {} failed: {other}", self.server),
                };
                Err(self.redactor.apply(&message))
            }
        }
    }

    /// Closes the connection; a stdio child that is still there after `bound` is killed with
    /// its whole process group and everything it started, wherever that went.
    pub async fn shutdown(mut self, bound: Duration) {
        // The cancellations of abandoned calls go out before the input closes: a child
        // still working on a call when its input ends may wait for it to finish.
        let abandoned =
            std::mem::take(&mut *self.abandoned.lock().unwrap_or_else(|p| p.into_inner()));
        let _ = tokio::time::timeout(bound, async {
            for id in abandoned {
                let _ = self.service.peer().send_notification(cancelled(id)).await;
            }
        })
        .await;
        // Seen before the child stops: what it started may lose its parent as it does.
        let tree = match self.process_group.as_mut() {
            Some(guard) => guard.tree().await,
            None => None,
        };
        let _ = self.service.close_with_timeout(bound).await;
        if let Some(tree) = tree {
            let _ = tokio::task::spawn_blocking(move || tree.kill()).await;
        }
    }
}

/// A call in flight; dropped before its answer, it cancels the request.
struct Pending<'a> {
    connection: &'a ChildConnection,
    id: Option<RequestId>,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        self.connection
            .abandoned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(id.clone());
        // Told now, for a run that goes on with the child (an interrupt); shutdown tells
        // it again before closing, in case this has not gone out yet.
        let peer: Peer<RoleClient> = self.connection.service.peer().clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.send_notification(cancelled(id)).await;
            });
        }
    }
}

fn cancelled(id: RequestId) -> ClientNotification {
    ClientNotification::CancelledNotification(CancelledNotification::new(
        CancelledNotificationParam::new(
            Some(id),
            Some("the caller no longer needs the answer".to_owned()),
        ),
    ))
}

// A connection dropped without `shutdown` (its run panicked, or the server stopped during
// startup) drops its guard, which ends the child's group and everything it started.
