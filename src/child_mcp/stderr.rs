//! Forwarding a stdio child's stderr to ours (SPEC §8.3), one prefixed line at a time.
//!
//! The pipe is drained until the child closes it, whatever it writes and whether or not our
//! own stderr is read: a line that is not
//! UTF-8 is shown lossily, and a line longer than [`CHILD_STDERR_LINE_BYTES`] is shown in pieces. Stopping
//! early would close the pipe, and the child's next write to stderr would then fail
//! (SIGPIPE ends many servers); reading a line without a bound would let a child that never
//! writes a newline grow our memory without end.

use crate::limits::CHILD_STDERR_LINE_BYTES;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

/// Reads `stderr` to its end and hands each line, prefixed with `[server] `, to `emit`.
pub(super) async fn forward_lines<R>(server: &str, stderr: R, mut emit: impl FnMut(String))
where
    R: AsyncRead + Unpin,
{
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::with_capacity(256);
    // Whether the piece before this one was cut from its line, not ended by a newline.
    let mut cut_before = false;
    loop {
        line.clear();
        // `take` bounds this read; a longer line continues in the next piece.
        let limit = u64::try_from(CHILD_STDERR_LINE_BYTES).unwrap_or(u64::MAX);
        match (&mut reader).take(limit).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let ended = line.last() == Some(&b'\n');
        if ended {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        // A secret cut between two pieces is whole in neither: what each edge holds of it
        // is hidden here, whole secrets by the console.
        let text = String::from_utf8_lossy(&line);
        let text = crate::redact::redact_stderr_piece(&text, cut_before, !ended);
        emit(format!("[{server}] {text}"));
        cut_before = !ended;
    }
}

/// Copies a child's stderr to ours through the queue ([`crate::console`]): a client that
/// does not read our stderr costs lines (counted and reported), never a blocked worker.
pub(super) async fn forward(server: String, stderr: tokio::process::ChildStderr) {
    forward_lines(&server, stderr, |line| {
        crate::console::line(&line);
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(bytes: &[u8]) -> Vec<String> {
        let mut seen = Vec::new();
        forward_lines("srv", bytes, |l| seen.push(l)).await;
        seen
    }

    #[tokio::test]
    async fn invalid_utf8_does_not_stop_the_forwarding() {
        let seen = lines_of(b"before\n\xff\xfe broken\r\nafter\n").await;
        assert_eq!(
            seen,
            [
                "[srv] before",
                "[srv] \u{fffd}\u{fffd} broken",
                "[srv] after"
            ]
        );
    }

    #[tokio::test]
    async fn a_line_without_end_is_shown_in_bounded_pieces() {
        let mut bytes = vec![b'x'; CHILD_STDERR_LINE_BYTES * 2 + 5];
        bytes.extend_from_slice(b"\nnext");
        let seen = lines_of(&bytes).await;
        assert_eq!(
            seen.len(),
            4,
            "{:?}",
            seen.iter().map(String::len).collect::<Vec<_>>()
        );
        assert_eq!(seen[0].len(), "[srv] ".len() + CHILD_STDERR_LINE_BYTES);
        assert_eq!(seen[1].len(), "[srv] ".len() + CHILD_STDERR_LINE_BYTES);
        assert_eq!(seen[2], "[srv] xxxxx");
        assert_eq!(
            seen[3], "[srv] next",
            "a last line without newline is shown too"
        );
    }
}
