//! The workspace server's stdio transport, under `rmcp`: requests read from stdin a line at
//! a time with a bound, answers written to stdout a line each.
//!
//! `rmcp`'s own transport drops a line over its 16 MiB limit without a word, and `write`
//! takes files of up to 16 MiB: a large file's content, longer still as JSON, was dropped
//! and the agent's call waited out its 60 s (issue 34). Here a request of up to
//! [`WORKSPACE_REQUEST_BYTES`] is read whole, and a longer one is read through without being
//! kept: its start and end are, to find its `id`, and it is answered at once with an error
//! that says why. A line that is not JSON is skipped, and JSON that is not a message is
//! answered with `-32600`, as `rmcp` does.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use serde::Deserializer as _;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};

use crate::limits::{
    WORKSPACE_CHANGE_BYTES, WORKSPACE_REQUEST_BYTES, WORKSPACE_REQUEST_HEAD_BYTES,
};

/// How much of the end of an oversized line is kept, to find an `id` written last.
const TAIL_BYTES: usize = 256;

type Output = Arc<Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

/// The transport over the process's stdin and stdout.
pub(super) struct Stdio {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    output: Output,
}

impl Stdio {
    /// Reads `input` on a task of its own; answers go to `output`.
    pub(super) fn new(
        input: impl AsyncRead + Send + Unpin + 'static,
        output: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Stdio {
        let output: Output = Arc::new(Mutex::new(Box::new(output)));
        let (messages, incoming) = mpsc::channel(16);
        tokio::spawn(read_requests(input, messages, output.clone()));
        Stdio { incoming, output }
    }
}

impl rmcp::transport::Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let output = self.output.clone();
        async move { write_message(&output, &item).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

async fn write_message(output: &Output, message: &ServerJsonRpcMessage) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    let mut output = output.lock().await;
    output.write_all(&line).await?;
    output.flush().await
}

/// One line of input.
enum Line {
    Whole(Vec<u8>),
    /// A line over the limit, read through: its first and last bytes, and its length.
    Oversized {
        head: Vec<u8>,
        tail: Vec<u8>,
        total: usize,
    },
    End,
}

/// Reads requests until the input ends or the server stops taking them.
async fn read_requests(
    input: impl AsyncRead + Unpin,
    messages: mpsc::Sender<ClientJsonRpcMessage>,
    output: Output,
) {
    let mut reader = BufReader::new(input);
    loop {
        let answer = match read_line(&mut reader).await {
            Line::End => return,
            Line::Whole(line) => match parse(&line) {
                Ok(Some(message)) => {
                    if messages.send(message).await.is_err() {
                        return;
                    }
                    continue;
                }
                Ok(None) => continue,
                Err(why) => {
                    ServerJsonRpcMessage::error(ErrorData::invalid_request(why, None), None)
                }
            },
            Line::Oversized { head, tail, total } => too_long(&head, &tail, total),
        };
        if write_message(&output, &answer).await.is_err() {
            return;
        }
    }
}

/// A whole line as a message; `None` for a blank line or one that is not JSON; why not, for
/// JSON that is not a message.
fn parse(line: &[u8]) -> Result<Option<ClientJsonRpcMessage>, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    match serde_json::from_slice(line) {
        Ok(message) => Ok(Some(message)),
        Err(e) if e.is_syntax() || e.is_eof() => Ok(None),
        Err(e) => Err(format!("not a JSON-RPC message: {e}")),
    }
}

/// The answer to a request longer than the server reads.
fn too_long(head: &[u8], tail: &[u8], total: usize) -> ServerJsonRpcMessage {
    let message = format!(
        "the request is {total} bytes, more than the {} MiB the workspace server reads in one \
         request; `write` writes files of at most {} MiB, and content takes more room as JSON \
         (a control character six bytes): send a large file in parts (`write` the first, then \
         `edit` to add the rest)",
        WORKSPACE_REQUEST_BYTES / (1024 * 1024),
        WORKSPACE_CHANGE_BYTES / (1024 * 1024)
    );
    let id = leading_id(head).or_else(|| trailing_id(tail));
    ServerJsonRpcMessage::error(ErrorData::invalid_request(message, None), id)
}

async fn read_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Line {
    let mut line = Vec::new();
    let mut oversized: Option<(Vec<u8>, Vec<u8>, usize)> = None;
    loop {
        let Ok(available) = reader.fill_buf().await else {
            return Line::End;
        };
        if available.is_empty() {
            // A last line without its newline is not a message.
            return Line::End;
        }
        let newline = memchr::memchr(b'\n', available);
        let piece = &available[..newline.unwrap_or(available.len())];
        match &mut oversized {
            None if line.len() + piece.len() <= WORKSPACE_REQUEST_BYTES => {
                line.extend_from_slice(piece);
            }
            None => {
                let mut head = std::mem::take(&mut line);
                head.extend_from_slice(piece);
                let total = head.len();
                let tail = head[total.saturating_sub(TAIL_BYTES)..].to_vec();
                head.truncate(WORKSPACE_REQUEST_HEAD_BYTES);
                head.shrink_to_fit();
                oversized = Some((head, tail, total));
            }
            Some((_, tail, total)) => {
                *total += piece.len();
                tail.extend_from_slice(piece);
                let extra = tail.len().saturating_sub(TAIL_BYTES);
                tail.drain(..extra);
            }
        }
        let consumed = newline.map_or(available.len(), |n| n + 1);
        reader.consume(consumed);
        if newline.is_some() {
            return match oversized {
                Some((head, tail, total)) => Line::Oversized { head, tail, total },
                None => Line::Whole(line),
            };
        }
    }
}

/// The value of the top-level `id` key, from the start of a JSON object that may be cut
/// anywhere: read with `serde_json` key by key, until the `id` or the cut.
fn leading_id(bytes: &[u8]) -> Option<RequestId> {
    let mut found = None;
    // The rest of the object is cut off, so the read ends in an error either way.
    let _ = serde_json::Deserializer::from_slice(bytes).deserialize_map(IdSeeker(&mut found));
    found
}

/// Reads an object's keys in order, skipping each value, and keeps the `id`'s.
struct IdSeeker<'a>(&'a mut Option<RequestId>);

impl<'de> Visitor<'de> for IdSeeker<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "id" {
                *self.0 = Some(map.next_value()?);
                return Ok(());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

/// The value of an `id` key written last in an object, from its end: `…,"id":7}`.
fn trailing_id(bytes: &[u8]) -> Option<RequestId> {
    let body = bytes.trim_ascii_end().strip_suffix(b"}")?;
    let key = memchr::memmem::rfind(body, b"\"id\"")?;
    let value = body[key + 4..].trim_ascii_start().strip_prefix(b":")?;
    serde_json::from_slice(value.trim_ascii()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_request_is_answered_to_its_id_wherever_the_id_is() {
        let head = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"arguments":{"id":1,"content":"xxxx"#;
        assert_eq!(leading_id(head), Some(RequestId::Number(42)));
        let head = br#"{"params":{"id":"inner","content":"a\"id\":3 xxx"#;
        assert_eq!(leading_id(head), None, "only the top level counts");
        let tail = br#"xxxx"}},"jsonrpc":"2.0","id":"req-7"}  "#;
        assert_eq!(trailing_id(tail), Some(RequestId::String("req-7".into())));
        let answer = serde_json::to_value(too_long(b"{\"id\":5,", b"", 40 << 20)).unwrap();
        assert_eq!(answer["id"], 5);
        assert_eq!(answer["error"]["code"], -32600);
    }

    #[tokio::test]
    async fn lines_over_the_limit_are_read_through_and_the_next_one_is_read() {
        let mut input = b"{\"id\":1,\"x\":\"".to_vec();
        input.extend(std::iter::repeat_n(b'y', WORKSPACE_REQUEST_BYTES));
        input.extend_from_slice(b"\"}\n{\"a\":1}\n");
        let mut reader = BufReader::new(input.as_slice());
        let Line::Oversized { head, total, .. } = read_line(&mut reader).await else {
            panic!("not read through");
        };
        assert_eq!(total, WORKSPACE_REQUEST_BYTES + 15);
        assert_eq!(head.len(), WORKSPACE_REQUEST_HEAD_BYTES);
        assert!(matches!(read_line(&mut reader).await, Line::Whole(l) if l == b"{\"a\":1}"));
        assert!(matches!(read_line(&mut reader).await, Line::End));
    }
}
