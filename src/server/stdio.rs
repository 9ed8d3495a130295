//! Serving MCP on stdin/stdout (SPEC §4, §10), through a transport of our own under `rmcp`.
//!
//! - **Reading.** stdin is read one line at a time, never more than [`STDIO_LINE_BYTES`] of
//!   it held: a longer line is answered as soon as it passes the limit and the rest of it is
//!   skipped, and the buffer of a big line is given back once it is handled.
//! - **Every bad line is answered.** A line that is not JSON (a lone surrogate escape, a
//!   number out of range and nesting deeper than 128 count as not JSON: the JSON parser
//!   refuses them) gets a `-32700` error answer, a JSON value that is not a JSON-RPC message
//!   a `-32600`, each with the request's `id` when it can be read and `null` otherwise, and a
//!   warning on stderr. A notification of a method this server does not know is ignored, as
//!   JSON-RPC asks.
//! - **Early notifications.** `rmcp` stops serving when a notification arrives before the
//!   client has chosen a protocol generation (for example `notifications/cancelled` right
//!   after `server/discover`); they carry nothing this server needs, so they are dropped
//!   until the first request other than `server/discover` or `ping`.
//! - **Arguments.** `tools/call` messages whose `arguments` is not an object are marked
//!   ([`super::arguments`]).
//! - **The end of stdin.** Requests already read are still answered (for at most
//!   [`STDIO_EOF_ANSWER_GRACE`]) before `rmcp` hears that stdin has ended.
//! - **Writing.** One task writes every answer, `rmcp`'s and ours, whole lines at a time.
//!   When stdout is closed (the write fails, or on Linux the pipe reports that its reader
//!   went away) the server stops as on stdin end-of-file.

use std::sync::Arc;

use std::collections::HashSet;

use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::{RoleServer, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use super::handler::{AgentsServer, ServeOptions};
use crate::clients::Transport;
use crate::limits::{STDIO_EOF_ANSWER_GRACE, STDIO_LINE_BYTES, STDIO_LINE_KEPT_BYTES};
use crate::sessions::SessionManager;

/// JSON-RPC "Parse error".
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "Invalid Request".
const INVALID_REQUEST: i64 = -32600;
/// Answers waiting for the writer; `rmcp` waits when it is full (stdout is slow).
const PENDING_ANSWERS: usize = 64;

/// Serves until stdin closes, stdout closes, or the client goes away.
pub async fn serve_stdio(
    manager: Arc<SessionManager>,
    options: ServeOptions,
) -> Result<(), String> {
    let closed = CancellationToken::new();
    tokio::spawn(watch_stdout(closed.clone()));
    let server = AgentsServer::new(manager, Transport::Stdio, options);
    serve_until(server, tokio::io::stdin(), tokio::io::stdout(), closed).await
}

/// Serves on `input` and `output` (tests and the soak use in-memory pipes).
pub async fn serve_stdio_on<R, W>(
    manager: Arc<SessionManager>,
    options: ServeOptions,
    input: R,
    output: W,
) -> Result<(), String>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let server = AgentsServer::new(manager, Transport::Stdio, options);
    serve_until(server, input, output, CancellationToken::new()).await
}

async fn serve_until<R, W>(
    server: AgentsServer,
    input: R,
    output: W,
    output_closed: CancellationToken,
) -> Result<(), String>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (answers, to_write) = mpsc::channel(PENDING_ANSWERS);
    let (messages, incoming) = mpsc::channel(1);
    let writer = tokio::spawn(write_answers(output, to_write, output_closed.clone()));
    tokio::spawn(read_messages(input, messages, answers.clone()));
    let transport = Lines {
        incoming,
        answers,
        unanswered: Arc::default(),
        ended_at: None,
    };
    let served = async {
        let service = tokio::select! {
            started = server.serve(transport) => {
                started.map_err(|e| format!("the MCP client did not start a session: {e}"))?
            }
            () = output_closed.cancelled() => return Ok(()),
        };
        tokio::select! {
            ended = service.waiting() => {
                ended.map_err(|e| format!("the MCP session ended with an error: {e}"))?;
            }
            // Dropping the service stops it.
            () = output_closed.cancelled() => {}
        }
        Ok(())
    }
    .await;
    // The answers still queued are written before the server stops (within the bound:
    // stdout may be stuck).
    let _ = tokio::time::timeout(STDIO_EOF_ANSWER_GRACE, writer).await;
    served
}

/// The transport `rmcp` sees: parsed messages in, answers out (as lines for the writer).
struct Lines {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    answers: mpsc::Sender<Vec<u8>>,
    /// Requests received and not answered yet, and a wake-up when one is.
    unanswered: Arc<(std::sync::Mutex<HashSet<RequestId>>, Notify)>,
    /// When stdin ended: from then on `rmcp` is told so once the requests already read are
    /// answered, or [`STDIO_EOF_ANSWER_GRACE`] later (a long `wait_agent` is not waited for).
    ended_at: Option<tokio::time::Instant>,
}

impl Lines {
    fn unanswered(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        self.unanswered.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl rmcp::transport::Transport<RoleServer> for Lines {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answers = self.answers.clone();
        let unanswered = self.unanswered.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let sent = answers.send(line).await.map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")
            });
            let answered = match &item {
                ServerJsonRpcMessage::Response(response) => Some(&response.id),
                ServerJsonRpcMessage::Error(error) => error.id.as_ref(),
                _ => None,
            };
            if let Some(id) = answered {
                unanswered
                    .0
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(id);
                unanswered.1.notify_waiters();
            }
            sent
        }
    }

    /// Cancel-safe (`rmcp` polls it beside its answers): the end of stdin is remembered.
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        if self.ended_at.is_none() {
            match self.incoming.recv().await {
                Some(message) => {
                    if let ClientJsonRpcMessage::Request(request) = &message {
                        self.unanswered().insert(request.id.clone());
                    }
                    return Some(message);
                }
                None => self.ended_at = Some(tokio::time::Instant::now()),
            }
        }
        let deadline = self.ended_at? + STDIO_EOF_ANSWER_GRACE;
        let waiting = self.unanswered.clone();
        let _ = tokio::time::timeout_at(deadline, async move {
            loop {
                // Registered before the check, so an answer in between is not missed.
                let woken = waiting.1.notified();
                tokio::pin!(woken);
                woken.as_mut().enable();
                if waiting
                    .0
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .is_empty()
                {
                    return;
                }
                woken.await;
            }
        })
        .await;
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

/// Writes each answer line to `output`; a failed write means stdout is closed.
async fn write_answers<W: AsyncWrite + Unpin>(
    mut output: W,
    mut lines: mpsc::Receiver<Vec<u8>>,
    closed: CancellationToken,
) {
    loop {
        let line = tokio::select! {
            line = lines.recv() => line,
            () = closed.cancelled() => None,
        };
        let Some(line) = line else { break };
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            tracing::warn!("stdout is closed; stopping as if stdin had ended");
            closed.cancel();
            break;
        }
    }
}

/// Completes when stdout, a pipe, has lost its reader (Linux: the pipe reports an error
/// condition). Elsewhere, or when stdout is not a pipe, only a failed write tells.
async fn watch_stdout(closed: CancellationToken) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsFd;
        use tokio::io::Interest;
        use tokio::io::unix::AsyncFd;
        // A copy of stdout to watch, close-on-exec (`F_DUPFD_CLOEXEC`): a plain `dup` gave
        // every child started after it a way to write into the client's stream.
        let Ok(owned) = std::io::stdout().as_fd().try_clone_to_owned() else {
            return;
        };
        // SAFETY: the AsyncFd owns the descriptor, which stays open as long as it is
        // registered.
        let Ok(watched) = (unsafe { AsyncFd::register_with_interest(owned, Interest::ERROR) })
        else {
            return;
        };
        tokio::select! {
            ready = watched.ready(Interest::ERROR) => {
                if ready.is_ok() {
                    tracing::warn!("stdout is closed; stopping as if stdin had ended");
                    closed.cancel();
                }
            }
            () = closed.cancelled() => {}
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = closed;
}

/// Reads lines from `input` until it ends, passing messages on and answering bad lines.
async fn read_messages<R: AsyncRead + Unpin>(
    input: R,
    messages: mpsc::Sender<ClientJsonRpcMessage>,
    answers: mpsc::Sender<Vec<u8>>,
) {
    let mut reader = BufReader::new(input);
    let mut line = Vec::new();
    let mut chosen = false;
    loop {
        match read_line(&mut reader, &mut line).await {
            Read::End => break,
            Read::TooLong { seen, ended } => {
                tracing::warn!(
                    "stdin: a message longer than {} MiB was refused ({seen} bytes read \
                     before giving up on it)",
                    STDIO_LINE_BYTES / (1024 * 1024)
                );
                let answer = error_answer(
                    Value::Null,
                    PARSE_ERROR,
                    &format!(
                        "Parse error: the message is longer than the {} MiB this server reads",
                        STDIO_LINE_BYTES / (1024 * 1024)
                    ),
                );
                if answers.send(answer).await.is_err() {
                    break;
                }
                if !ended && skip_rest_of_line(&mut reader).await.is_err() {
                    break;
                }
            }
            Read::Line => {
                let outcome = handle_line(&line, &mut chosen);
                // A big line's buffer is given back rather than kept for the next one.
                if line.capacity() > STDIO_LINE_KEPT_BYTES {
                    line = Vec::new();
                } else {
                    line.clear();
                }
                let delivered = match outcome {
                    Handled::Message(message) => messages.send(*message).await.is_ok(),
                    Handled::Answer(answer) => answers.send(answer).await.is_ok(),
                    Handled::Nothing => true,
                };
                if !delivered {
                    break;
                }
            }
        }
    }
}

enum Read {
    /// A whole line (without its newline) is in the buffer.
    Line,
    /// The line passed the limit after `seen` bytes; nothing of it is kept. `ended`: its
    /// newline was read too (else the rest is still to skip).
    TooLong {
        seen: usize,
        ended: bool,
    },
    End,
}

/// Reads one line into `line` (cleared by the caller), holding at most
/// [`STDIO_LINE_BYTES`]. A last line without a newline counts as a line.
async fn read_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>, line: &mut Vec<u8>) -> Read {
    loop {
        let available = match reader.fill_buf().await {
            Ok(available) => available,
            Err(_) => return Read::End,
        };
        if available.is_empty() {
            return if line.is_empty() {
                Read::End
            } else {
                Read::Line
            };
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.unwrap_or(available.len());
        let needed = line.len() + take;
        if needed > STDIO_LINE_BYTES {
            reader.consume(newline.map_or(take, |n| n + 1));
            *line = Vec::new();
            return Read::TooLong {
                seen: needed,
                ended: newline.is_some(),
            };
        }
        if needed > line.capacity() {
            // Grown by doubling as usual, but never past the limit.
            let target = (line.capacity() * 2).max(needed).min(STDIO_LINE_BYTES);
            line.reserve_exact(target - line.len());
        }
        line.extend_from_slice(&available[..take]);
        match newline {
            Some(n) => {
                reader.consume(n + 1);
                return Read::Line;
            }
            None => reader.consume(take),
        }
    }
}

/// Skips input up to and including the next newline.
async fn skip_rest_of_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> std::io::Result<()> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(());
        }
        match available.iter().position(|b| *b == b'\n') {
            Some(n) => {
                reader.consume(n + 1);
                return Ok(());
            }
            None => {
                let all = available.len();
                reader.consume(all);
            }
        }
    }
}

enum Handled {
    Message(Box<ClientJsonRpcMessage>),
    Answer(Vec<u8>),
    Nothing,
}

/// What to do with one line.
fn handle_line(line: &[u8], chosen: &mut bool) -> Handled {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Handled::Nothing;
    }
    if !*chosen {
        match classify(line) {
            Message::EarlyNotification => {
                tracing::debug!("dropped a notification sent before the lifecycle began");
                return Handled::Nothing;
            }
            Message::LifecycleChoosing => *chosen = true,
            Message::Other => {}
        }
    }
    let marked = super::arguments::mark_non_object_arguments(line);
    let line = marked.as_deref().unwrap_or(line);
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => Handled::Message(Box::new(message)),
        Err(error) => refuse(line, &error),
    }
}

/// The answer to a line that is not a message this server takes.
fn refuse(line: &[u8], error: &serde_json::Error) -> Handled {
    let value = serde_json::from_slice::<Value>(line);
    let id = request_id(line);
    match value {
        Err(_) => {
            tracing::warn!("stdin: a message that is not JSON was refused ({error})");
            Handled::Answer(error_answer(
                id,
                PARSE_ERROR,
                &format!("Parse error: the message is not JSON ({error})"),
            ))
        }
        Ok(value) => {
            let notification = value.get("id").is_none() && value.get("method").is_some();
            if notification {
                // JSON-RPC answers no notification; one this server does not know (another
                // protocol's, or a newer MCP one) is skipped.
                tracing::debug!("ignored a notification this server does not take ({error})");
                return Handled::Nothing;
            }
            tracing::warn!(
                "stdin: a JSON value that is not a JSON-RPC message was refused ({error})"
            );
            Handled::Answer(error_answer(
                id,
                INVALID_REQUEST,
                &format!("Invalid Request: not a JSON-RPC message this server takes ({error})"),
            ))
        }
    }
}

/// The `id` of a message, read on its own so that a fault elsewhere in the line (a lone
/// surrogate in a string, a number out of range) does not hide it; `null` when there is
/// none to read.
fn request_id(line: &[u8]) -> Value {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<Value>,
    }
    match serde_json::from_slice::<IdOnly>(line) {
        Ok(IdOnly {
            id: Some(id @ (Value::String(_) | Value::Number(_))),
        }) => id,
        _ => Value::Null,
    }
}

fn error_answer(id: Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

enum Message {
    EarlyNotification,
    /// A request that chooses the protocol generation.
    LifecycleChoosing,
    Other,
}

fn classify(line: &[u8]) -> Message {
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return Message::Other;
    };
    let method = value.get("method").and_then(|m| m.as_str());
    match (method, value.get("id")) {
        (Some(_), None) => Message::EarlyNotification,
        (Some("server/discover" | "ping"), Some(_)) => Message::Other,
        (Some(_), Some(_)) => Message::LifecycleChoosing,
        _ => Message::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer_of(line: &[u8]) -> Value {
        match handle_line(line, &mut true) {
            Handled::Answer(bytes) => serde_json::from_slice(&bytes).unwrap(),
            Handled::Message(_) => panic!("accepted {:?}", String::from_utf8_lossy(line)),
            Handled::Nothing => panic!("ignored {:?}", String::from_utf8_lossy(line)),
        }
    }

    #[test]
    fn every_kind_of_bad_line_is_answered_with_the_id_when_it_can_be_read() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let cases: Vec<(Vec<u8>, i64, Value)> = vec![
            (b"not json".to_vec(), PARSE_ERROR, Value::Null),
            (
                br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"t":"\ud800"}}}"#.to_vec(),
                PARSE_ERROR,
                json!(7),
            ),
            (
                br#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"n":1e309}}"#.to_vec(),
                PARSE_ERROR,
                json!("a"),
            ),
            (deep.into_bytes(), PARSE_ERROR, Value::Null),
            (br#"{"jsonrpc":"2.0","id":3}"#.to_vec(), INVALID_REQUEST, json!(3)),
            (b"[1,2]".to_vec(), INVALID_REQUEST, Value::Null),
        ];
        for (line, code, id) in cases {
            let answer = answer_of(&line);
            assert_eq!(answer["error"]["code"], code, "{answer}");
            assert_eq!(answer["id"], id, "{answer}");
        }
    }

    #[test]
    fn unknown_notifications_and_blank_lines_are_skipped() {
        assert!(!matches!(
            handle_line(br#"{"jsonrpc":"2.0","method":"$/lsp/thing"}"#, &mut true),
            Handled::Answer(_)
        ));
        assert!(matches!(handle_line(b"  \r", &mut true), Handled::Nothing));
    }

    #[tokio::test]
    async fn a_line_past_the_limit_is_refused_without_being_held() {
        let mut input = vec![b'x'; STDIO_LINE_BYTES + 100_000];
        input.extend_from_slice(b"\nnext\n");
        let mut reader = BufReader::new(&input[..]);
        let mut line = Vec::new();
        assert!(matches!(
            read_line(&mut reader, &mut line).await,
            Read::TooLong { ended: false, .. }
        ));
        assert!(line.capacity() <= STDIO_LINE_BYTES);
        skip_rest_of_line(&mut reader).await.unwrap();
        line.clear();
        assert!(matches!(
            read_line(&mut reader, &mut line).await,
            Read::Line
        ));
        assert_eq!(line, b"next");
    }
}
