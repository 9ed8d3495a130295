//! The transport to a stdio child (SPEC §8.3), under the `rmcp` client: its stdin written a
//! message per line, its stdout read a line at a time with a bound.
//!
//! `rmcp`'s own child transport drops a line longer than its 16 MiB limit without a word,
//! so a tool that returns 20 MiB looks to the model like a call that timed out after 60 s.
//! Here a line over [`CHILD_MESSAGE_BYTES`] is read through without being kept: its start
//! (enough for the rendered-output cap) and its end are, and it becomes the answer to its
//! call, a result holding the start of its text and a marker saying it was cut. Lines that
//! are not JSON-RPC (a chatty server's log lines on stdout) are skipped, as `rmcp` does.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use process_wrap::tokio::ChildWrapper;
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;

use super::cut::{HEAD_BYTES, cut_result, skip_ws, string_end};
use crate::limits::CHILD_MESSAGE_BYTES;

/// How much of the end of an oversized line is kept, to find its `id` there.
const TAIL_BYTES: usize = 64 * 1024;

/// Requests sent and not yet answered: an oversized answer is matched against them.
type Pending = Arc<Mutex<HashSet<RequestId>>>;

fn lock(set: &Pending) -> MutexGuard<'_, HashSet<RequestId>> {
    set.lock().unwrap_or_else(|p| p.into_inner())
}

/// A started stdio child as an `rmcp` transport.
pub(super) struct ChildStdio {
    /// The process; dropping it leaves it to the runtime to reap (the connection's guard
    /// kills its group).
    child: Box<dyn ChildWrapper>,
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    pending: Pending,
}

impl ChildStdio {
    /// Wraps a spawned child whose stdin and stdout are pipes.
    pub(super) fn new(mut child: Box<dyn ChildWrapper>) -> std::io::Result<ChildStdio> {
        let missing = || std::io::Error::other("the child's stdin or stdout is not a pipe");
        let stdin = child.stdin().take().ok_or_else(missing)?;
        let stdout: ChildStdout = child.stdout().take().ok_or_else(missing)?;
        let (messages, incoming) = mpsc::channel(16);
        let pending = Pending::default();
        tokio::spawn(read_messages(stdout, messages, pending.clone()));
        Ok(ChildStdio {
            child,
            stdin: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
            incoming,
            pending,
        })
    }
}

impl rmcp::transport::Transport<RoleClient> for ChildStdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let ClientJsonRpcMessage::Request(request) = &item {
            lock(&self.pending).insert(request.id.clone());
        }
        let stdin = self.stdin.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let mut stdin = stdin.lock().await;
            let Some(pipe) = stdin.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "the child's stdin is closed",
                ));
            };
            pipe.write_all(&line).await?;
            pipe.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.incoming.recv().await
    }

    /// Closes the child's stdin (MCP's stdio shutdown) and waits for it to exit; the
    /// caller bounds the wait and then kills it.
    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.stdin.lock().await.take());
        self.incoming.close();
        self.child.wait().await.map(|_| ())
    }
}

/// Reads the child's stdout until it ends.
async fn read_messages<R: AsyncRead + Unpin>(
    stdout: R,
    messages: mpsc::Sender<ServerJsonRpcMessage>,
    pending: Pending,
) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        let message = match read_line(&mut reader, &mut line).await {
            Line::End => return,
            Line::Whole => match serde_json::from_slice::<ServerJsonRpcMessage>(&line) {
                Ok(message) => message,
                Err(e) => {
                    tracing::debug!(
                        "skipped a line of a child's stdout that is not a message: {e}"
                    );
                    continue;
                }
            },
            Line::Oversized { head, tail, total } => {
                let ids: Vec<RequestId> = lock(&pending).iter().cloned().collect();
                match cut_answer(&head, &tail, total, &ids) {
                    Some(message) => message,
                    None => {
                        tracing::warn!(
                            "a child server sent a message of {total} bytes that answers no \
                             call in progress; skipped"
                        );
                        continue;
                    }
                }
            }
        };
        if line.capacity() > CHILD_MESSAGE_BYTES / 4 {
            line = Vec::new();
        }
        if let ServerJsonRpcMessage::Response(r) = &message {
            lock(&pending).remove(&r.id);
        }
        if let ServerJsonRpcMessage::Error(e) = &message
            && let Some(id) = &e.id
        {
            lock(&pending).remove(id);
        }
        if messages.send(message).await.is_err() {
            return;
        }
    }
}

enum Line {
    Whole,
    /// A line over the limit, read through: its first bytes, its last bytes and its length.
    Oversized {
        head: Vec<u8>,
        tail: Vec<u8>,
        total: usize,
    },
    End,
}

async fn read_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>, line: &mut Vec<u8>) -> Line {
    let mut oversized: Option<(Vec<u8>, Vec<u8>, usize)> = None;
    loop {
        let Ok(available) = reader.fill_buf().await else {
            return Line::End;
        };
        if available.is_empty() {
            return match oversized {
                Some((head, tail, total)) => Line::Oversized { head, tail, total },
                None if line.is_empty() => Line::End,
                None => Line::Whole,
            };
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let piece = &available[..newline.unwrap_or(available.len())];
        match &mut oversized {
            None if line.len() + piece.len() <= CHILD_MESSAGE_BYTES => {
                line.extend_from_slice(piece);
            }
            None => {
                let mut head = std::mem::take(line);
                head.extend_from_slice(piece);
                let total = head.len();
                let tail = head[head.len().saturating_sub(TAIL_BYTES)..].to_vec();
                head.truncate(HEAD_BYTES);
                head.shrink_to_fit();
                oversized = Some((head, tail, total));
            }
            Some((_, tail, total)) => {
                *total += piece.len();
                tail.extend_from_slice(piece);
                if tail.len() > 2 * TAIL_BYTES {
                    tail.drain(..tail.len() - TAIL_BYTES);
                }
            }
        }
        let consumed = newline.map_or(available.len(), |n| n + 1);
        reader.consume(consumed);
        if newline.is_some() {
            return match oversized {
                Some((head, mut tail, total)) => {
                    if tail.len() > TAIL_BYTES {
                        tail.drain(..tail.len() - TAIL_BYTES);
                    }
                    Line::Oversized { head, tail, total }
                }
                None => Line::Whole,
            };
        }
    }
}

/// The answer an oversized line stands for: a result with the start of its first text and
/// a marker, for the call its `id` names (read from its start or its end, and only if that
/// call is in progress; with one call in progress, that one).
fn cut_answer(
    head: &[u8],
    tail: &[u8],
    total: usize,
    in_progress: &[RequestId],
) -> Option<ServerJsonRpcMessage> {
    let id = top_level_id(head)
        .or_else(|| trailing_id(tail))
        .filter(|id| in_progress.contains(id))
        .or_else(|| match in_progress {
            [only] => Some(only.clone()),
            _ => None,
        })?;
    let marker = format!(
        "\n[output truncated: the result was {total} bytes, more than the {} MiB read from a \
         child server; the start of its text is shown]",
        CHILD_MESSAGE_BYTES / (1024 * 1024)
    );
    Some(cut_result(&id, head, &marker))
}

/// The value of the top-level `id` key, scanning the start of a JSON object.
fn top_level_id(bytes: &[u8]) -> Option<RequestId> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i)?;
                if depth == 1 && &bytes[i..=end] == b"\"id\"" {
                    let rest = skip_ws(bytes, end + 1);
                    if bytes.get(rest) == Some(&b':') {
                        return scalar_at(bytes, skip_ws(bytes, rest + 1));
                    }
                }
                i = end + 1;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// An `"id": VALUE` followed only by other short members and the closing brace, at the end
/// of a line (the TypeScript SDK writes `result` first).
fn trailing_id(tail: &[u8]) -> Option<RequestId> {
    let key = b"\"id\"";
    let mut search = tail.len();
    while let Some(at) = tail[..search].windows(key.len()).rposition(|w| w == key) {
        let colon = skip_ws(tail, at + key.len());
        if tail.get(colon) == Some(&b':')
            && let Some(id) = scalar_at(tail, skip_ws(tail, colon + 1))
        {
            return Some(id);
        }
        search = at;
    }
    None
}

/// A number or string value starting at `i`.
fn scalar_at(bytes: &[u8], i: usize) -> Option<RequestId> {
    let end = match bytes.get(i)? {
        b'"' => string_end(bytes, i)? + 1,
        b'-' | b'0'..=b'9' => {
            i + bytes[i..]
                .iter()
                .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                .unwrap_or(bytes.len() - i)
        }
        _ => return None,
    };
    serde_json::from_slice(&bytes[i..end]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::TOOL_OUTPUT_BYTES;
    use rmcp::model::NumberOrString;

    fn text_of(message: &ServerJsonRpcMessage) -> String {
        let value = serde_json::to_value(message).unwrap();
        value["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn ids_are_found_first_or_last() {
        let rmcp_style =
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"aaa"#;
        assert_eq!(top_level_id(rmcp_style), Some(NumberOrString::Number(7)));
        let nested_first = br#"{"result":{"id":99,"content":[{"type":"text","text":"aaa"#;
        assert_eq!(
            top_level_id(nested_first),
            None,
            "a nested id is not the message's"
        );
        let ts_tail = br#"aaaa"}],"isError":false},"jsonrpc":"2.0","id":"c-3"}"#;
        assert_eq!(
            trailing_id(ts_tail),
            Some(NumberOrString::String("c-3".into()))
        );
    }

    #[test]
    fn an_oversized_answer_becomes_a_cut_result_for_its_call() {
        let mut head = br#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"line\none \u00e9"#.to_vec();
        head.extend(std::iter::repeat_n(b'x', HEAD_BYTES));
        let calls = [NumberOrString::Number(3), NumberOrString::Number(4)];
        let answer = cut_answer(&head, b"xx\"}]}}", 40 << 20, &calls).unwrap();
        let text = text_of(&answer);
        assert!(text.starts_with("line\none \u{e9}xxx"), "{}", &text[..20]);
        assert!(text.len() <= TOOL_OUTPUT_BYTES, "{}", text.len());
        assert!(text.ends_with("the start of its text is shown]"));
        assert!(text.contains(&format!("{} bytes", 40 << 20)));
        // An id that answers no call in progress is not trusted.
        assert!(
            cut_answer(&head, b"", 1, &[NumberOrString::Number(9)])
                .is_some_and(|m| serde_json::to_value(&m).unwrap()["id"] == 9)
        );
        assert!(
            cut_answer(&head, b"", 1, &calls[..1])
                .is_some_and(|m| serde_json::to_value(&m).unwrap()["id"] == 3),
            "with one call in progress, it is that one"
        );
        assert!(cut_answer(b"{}", b"", 1, &calls).is_none());
    }

    #[tokio::test]
    async fn lines_over_the_limit_are_read_through_without_being_kept() {
        let mut input =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#.to_vec();
        input.extend(std::iter::repeat_n(b'y', CHILD_MESSAGE_BYTES + 1000));
        input.extend_from_slice(b"\"}]}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
        let mut reader = BufReader::new(&input[..]);
        let mut line = Vec::new();
        let Line::Oversized { head, tail, total } = read_line(&mut reader, &mut line).await else {
            panic!("not oversized")
        };
        assert_eq!(head.len(), HEAD_BYTES);
        assert!(tail.len() <= TAIL_BYTES && tail.ends_with(b"\"}]}}"));
        let first_line = input.iter().position(|b| *b == b'\n').unwrap();
        assert_eq!(total, first_line);
        line.clear();
        assert!(matches!(
            read_line(&mut reader, &mut line).await,
            Line::Whole
        ));
        assert!(line.starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":2"));
    }
}
