//! One connection to one child MCP server, through the `rmcp` client: start it (a process
//! in its own process group, or a streamable-HTTP endpoint without redirects), require
//! protocol 2026-07-28 through `server/discover`, list its tools, call them, and shut it
//! down within the bound, killing the whole process group if it lingers.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, Implementation,
    InitializeRequestParams, ProtocolVersion, Tool,
};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientCacheConfig, ClientHandler, ClientLifecycleMode};
use rmcp::{ClientServiceExt, RoleClient, ServiceError};
use tokio::time::Instant;
use url::Url;

use super::config::Launch;
use crate::definition::endpoint::origin;

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
    /// The process group of a stdio child.
    process_group: Option<u32>,
    /// Takes an HTTP child's URL out of call errors.
    redactor: Redactor,
}

/// Starts `launch`, requires 2026-07-28, and lists every tool, all within `bound`.
/// An error never carries an HTTP child's URL beyond its scheme, host and port.
pub async fn connect(
    server: &str,
    launch: &Launch,
    bound: Duration,
) -> Result<(ChildConnection, Vec<Tool>), String> {
    let redactor = Redactor::for_launch(launch);
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
            connection.shutdown(Duration::from_secs(1)).await;
            Err(format!("tools/list failed: {e}"))
        }
        Err(_) => {
            connection.shutdown(Duration::from_secs(1)).await;
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
/// The HTTP client of every HTTP child, built once (a `reqwest::Client` is shared by
/// cloning). Redirects are never followed (SPEC §8.1).
fn child_client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        crate::providers::http::install_tls();
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .build()
            // Building fails only when the TLS backend cannot initialize; the provider
            // client (built first in every run) would have failed the same way.
            .expect("the HTTP client needs a working TLS backend")
    })
}

async fn start(
    server: &str,
    launch: &Launch,
    mode: ClientLifecycleMode,
    deadline: Instant,
) -> Result<(RunningService<RoleClient, ChildClient>, Option<u32>), String> {
    let legacy = matches!(mode, ClientLifecycleMode::Initialize);
    let client = ChildClient { legacy };
    match launch {
        Launch::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut process = tokio::process::Command::new(command);
            process.args(args).env_clear().envs(env).current_dir(cwd);
            let mut wrapped = CommandWrap::from(process);
            // Its own process group, so that stopping it reaches what it started (npx, uvx).
            wrapped.wrap(ProcessGroup::leader());
            let (transport, stderr) = TokioChildProcess::builder(wrapped)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start `{command}`: {e}"))?;
            let group = transport.id();
            if let Some(stderr) = stderr {
                tokio::spawn(super::stderr::forward(server.to_owned(), stderr));
            }
            let service = handshake(client, transport, mode, deadline, launch, server).await;
            if service.is_err()
                && let Some(pid) = group
            {
                kill_group(pid);
            }
            service.map(|s| (s, group))
        }
        Launch::Http { url, headers } => {
            let http = child_client().clone();
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
            let transport = StreamableHttpClientTransport::with_client(http, config);
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
                    let _ = service.close_with_timeout(Duration::from_secs(1)).await;
                    if let Some(pid) = group {
                        kill_group(pid);
                    }
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

/// Ends a process group with SIGKILL. Errors (the group is already gone) are ignored.
fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: killpg only sends a signal; it touches no memory of ours.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

impl ChildConnection {
    /// Calls `tool`. Errors that are not the tool's own (`isError`) come back as `Err`
    /// with a sentence for the model.
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallToolResult, String> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        self.service.peer().call_tool(params).await.map_err(|e| {
            let message = match e {
                ServiceError::TransportClosed | ServiceError::TransportSend(_) => format!(
                    "the MCP server {} closed the connection during the call (it may have exited)",
                    self.server
                ),
                ServiceError::McpError(e) => format!(
                    "the MCP server {} refused the call: {}",
                    self.server, e.message
                ),
                other => format!("the call to the MCP server {} failed: {other}", self.server),
            };
            self.redactor.apply(&message)
        })
    }

    /// Closes the connection; a stdio child that is still there after `bound` is killed with
    /// its whole process group.
    pub async fn shutdown(mut self, bound: Duration) {
        let _ = self.service.close_with_timeout(bound).await;
        // Taken, so that dropping the connection does not signal the group again.
        if let Some(pid) = self.process_group.take() {
            kill_group(pid);
        }
    }
}

impl Drop for ChildConnection {
    /// A connection dropped without [`ChildConnection::shutdown`] (its run panicked) still
    /// ends its child's whole process group, grandchildren included.
    fn drop(&mut self) {
        if let Some(pid) = self.process_group.take() {
            kill_group(pid);
        }
    }
}

/// Takes an HTTP child's URL out of error texts (the rule of `definition::endpoint`: error
/// messages never echo a URL, whose path, query or user info may carry a secret). The
/// configured URL, and any other URL in the text (as in reqwest's `for url (…)`), become
/// `scheme://host[:port]`. Errors of stdio children are left as they are.
#[derive(Clone, Default)]
pub struct Redactor {
    url: Option<Url>,
}

impl std::fmt::Debug for Redactor {
    /// The origin only: the URL's path, query or user info may carry a secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("origin", &self.url.as_ref().map(origin))
            .finish()
    }
}

impl Redactor {
    pub fn for_launch(launch: &Launch) -> Self {
        match launch {
            Launch::Http { url, .. } => Redactor {
                url: Some(url.clone()),
            },
            Launch::Stdio { .. } => Redactor::default(),
        }
    }

    pub fn apply(&self, message: &str) -> String {
        let Some(url) = &self.url else {
            return message.to_owned();
        };
        let message = message.replace(url.as_str(), &origin(url));
        redact_urls(&message)
    }
}

/// Every `scheme://…` in `text` reduced to its origin. A URL runs to the next whitespace (a
/// quote or parenthesis can be part of a path) less any trailing sentence punctuation, and a
/// closing `)`, quote or `>` that matches the character just before the URL is kept out of
/// it. Text that does not parse as a URL with a
/// host is replaced whole.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let before = &rest[..at];
        let scheme_len = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .count();
        // ASCII only, so the count is in bytes. A scheme starts with a letter: characters
        // before it that may only follow one (".http://…") belong to the text.
        let run = &rest[at - scheme_len..at];
        let start = at
            - run
                .trim_start_matches(|c: char| !c.is_ascii_alphabetic())
                .len();
        let scheme = &rest[start..at];
        if !scheme.starts_with(|c: char| c.is_ascii_alphabetic()) {
            out.push_str(&rest[..at + 3]);
            rest = &rest[at + 3..];
            continue;
        }
        let after = &rest[at + 3..];
        let mut len = after.find(char::is_whitespace).unwrap_or(after.len());
        // Sentence punctuation after the URL stays in the text.
        len = after[..len]
            .trim_end_matches(['.', ',', ';', ':', '!', '?'])
            .len();
        let closer = match rest[..start].chars().next_back() {
            Some('(') => Some(')'),
            Some('<') => Some('>'),
            Some(q @ ('"' | '\'' | '`')) => Some(q),
            _ => None,
        };
        if let Some(closer) = closer
            && after[..len].ends_with(closer)
        {
            len -= 1;
        }
        let candidate = &rest[start..at + 3 + len];
        out.push_str(&rest[..start]);
        match Url::parse(candidate) {
            Ok(url) if url.host_str().is_some() => out.push_str(&origin(&url)),
            _ => {
                out.push_str(scheme);
                out.push_str("://(not shown)");
            }
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_text_is_redacted_without_panicking(text in "\\PC{0,200}") {
            let _ = redact_urls(&text);
        }

        #[test]
        fn a_url_path_never_survives(
            before in "[a-z (<\"'.,]{0,20}",
            scheme in "(http|https|ws)",
            secret in "[A-Z]{8}",
            after in "[a-z )>\"'.,]{0,20}",
        ) {
            let text = format!("{before}{scheme}://host.example:8443/p/{secret}?k={secret}{after}");
            let redacted = redact_urls(&text);
            prop_assert!(!redacted.contains(&secret), "{}", redacted);
            prop_assert!(redacted.contains("host.example:8443"), "{}", redacted);
        }
    }

    fn http(url: &str) -> Redactor {
        Redactor {
            url: Some(Url::parse(url).unwrap()),
        }
    }

    #[test]
    fn urls_lose_everything_after_the_port() {
        let r = http("http://127.0.0.1:8123/mcp/s3cr3t-path?token=s3cr3t-query#s3cr3t-frag");
        // What rmcp and reqwest really say when nothing listens at the port.
        let message = "failed during server/discover: Send message error Transport [rmcp::\
                       transport::worker::WorkerTransport<…>] error: Client error: error sending \
                       request for url (http://127.0.0.1:8123/mcp/s3cr3t-path?token=s3cr3t-query\
                       #s3cr3t-frag), when send discover request";
        assert_eq!(
            r.apply(message),
            "failed during server/discover: Send message error Transport [rmcp::transport::\
             worker::WorkerTransport<…>] error: Client error: error sending request for url \
             (http://127.0.0.1:8123), when send discover request"
        );
        // Another URL, or the same without its fragment, goes the same way.
        assert_eq!(
            r.apply("for url (http://127.0.0.1:8123/mcp/s3cr3t-path?token=s3cr3t-query), when"),
            "for url (http://127.0.0.1:8123), when"
        );
        assert_eq!(
            r.apply("see http://other.example/s3cr3t. Then https://x.example/s3cr3t;"),
            "see http://other.example. Then https://x.example;"
        );
        assert_eq!(
            r.apply("see https://user:pw@example.com/a/b?c=d#e and http://[::1]:9/x)"),
            "see https://example.com and http://[::1]:9"
        );
        let with_paren = http("https://example.com/a)b?k=secret");
        assert_eq!(
            with_paren.apply("for url (https://example.com/a)b?k=secret)"),
            "for url (https://example.com)"
        );
        assert_eq!(
            r.apply("::// 1://x ://"),
            "::// 1://x ://",
            "no scheme, nothing to redact"
        );
        assert_eq!(r.apply("bad http://"), "bad http://(not shown)");
        assert_eq!(
            r.apply("ünïcode before https://h.example/sécret"),
            "ünïcode before https://h.example"
        );
        assert_eq!(
            r.apply("moved to \"https://other.example/p'q?k=v\" and <http://localhost:1/a>"),
            "moved to \"https://other.example\" and <http://localhost:1>"
        );
    }

    #[test]
    fn stdio_errors_are_left_alone() {
        let r = Redactor::default();
        assert_eq!(r.apply("see http://x.example/y"), "see http://x.example/y");
    }
}
