//! A bound on how long an HTTP answer may wait for its client (SPEC §10; issue 23 item 5).
//!
//! hyper has a deadline for reading a request's headers, none for writing the answer: a
//! client that asks for a large result and never reads it would hold the answer's buffers
//! and a connection slot forever. [`WriteStall`] wraps the connection's stream and fails a
//! write, flush or shutdown that has waited on the client for [`HTTP_WRITE_STALL`] without
//! the client taking [`HTTP_WRITE_PROGRESS_BYTES`] of it in that time; hyper then closes
//! the connection, which frees the slot and the buffers. A client that reads, however
//! slowly above that rate, is never cut off, and a connection that is merely quiet (an
//! answer still being prepared, a long `wait_agent`) writes nothing and is not timed. It
//! also tells the crowd ([`super::crowd`]) what its connection reads, writes and waits for.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::crowd::Tracked;
use crate::limits::{HTTP_WRITE_PROGRESS_BYTES, HTTP_WRITE_STALL};

/// A stream whose writes fail once they have waited on the peer too long.
pub(super) struct WriteStall<S> {
    inner: S,
    /// Fires [`HTTP_WRITE_STALL`] after the client stopped taking what is written; reset
    /// when it has taken [`HTTP_WRITE_PROGRESS_BYTES`] since, or everything was flushed.
    deadline: Pin<Box<Sleep>>,
    armed: bool,
    /// Bytes the client took since the deadline was armed.
    progress: usize,
    bound: Duration,
    /// The connection as the crowd sees it, told what is read, written and waited for.
    tracked: Option<Arc<Tracked>>,
}

impl<S> WriteStall<S> {
    /// A stream of a connection the crowd tracks ([`super::crowd`]).
    pub(super) fn tracked(inner: S, tracked: Arc<Tracked>) -> Self {
        WriteStall {
            tracked: Some(tracked),
            ..Self::with_bound(inner, HTTP_WRITE_STALL)
        }
    }

    fn with_bound(inner: S, bound: Duration) -> Self {
        WriteStall {
            inner,
            deadline: Box::pin(tokio::time::sleep(bound)),
            armed: false,
            progress: 0,
            bound,
            tracked: None,
        }
    }

    /// The client took `bytes`.
    fn took(&mut self, bytes: usize) {
        if let Some(tracked) = &self.tracked {
            tracked.wrote(bytes);
        }
        if self.armed {
            self.progress = self.progress.saturating_add(bytes);
            if self.progress >= HTTP_WRITE_PROGRESS_BYTES {
                self.disarm();
            }
        }
    }

    /// Nothing waits on the client any more.
    fn disarm(&mut self) {
        if self.armed {
            self.armed = false;
            if let Some(tracked) = &self.tracked {
                tracked.waiting(None);
            }
        }
    }

    /// A write is waiting on the client: arms the deadline if it is not, and fails once it
    /// has passed.
    fn waiting<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        if !self.armed {
            self.armed = true;
            self.progress = 0;
            let now = Instant::now();
            self.deadline.as_mut().reset(now + self.bound);
            if let Some(tracked) = &self.tracked {
                tracked.waiting(Some(now));
            }
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the client took less than {} KiB of its answer in {} s",
                    HTTP_WRITE_PROGRESS_BYTES / 1024,
                    self.bound.as_secs()
                ),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteStall<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let (Poll::Ready(Ok(())), Some(tracked)) = (&polled, &self.tracked)
            && buf.filled().len() > before
        {
            tracked.read();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteStall<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => {
                self.took(n);
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.waiting(cx),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(Ok(n)) => {
                self.took(n);
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.waiting(cx),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_flush(cx) {
            Poll::Ready(Ok(())) => {
                // Everything written so far is with the client's side: nothing waits.
                self.disarm();
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.waiting(cx),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_shutdown(cx) {
            Poll::Pending => self.waiting(cx),
            done => done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A peer that never reads: the write waits, then fails at the bound, not before.
    #[tokio::test(start_paused = true)]
    async fn a_write_the_peer_never_takes_fails_at_the_bound() {
        let (ours, _theirs) = tokio::io::duplex(1024);
        let mut stream = WriteStall::with_bound(ours, Duration::from_secs(30));
        let started = Instant::now();
        let error = stream.write_all(&[0u8; 64 * 1024]).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), Duration::from_secs(30));
    }

    /// A peer that reads steadily, if slowly, is never cut off; quiet time between answers
    /// is not counted.
    #[tokio::test(start_paused = true)]
    async fn a_peer_that_keeps_reading_is_never_cut_off() {
        use tokio::io::AsyncReadExt;
        let (ours, mut theirs) = tokio::io::duplex(16 * 1024);
        let reader = tokio::spawn(async move {
            let mut buf = vec![0u8; 8 * 1024];
            let mut total = 0;
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                match theirs.read(&mut buf).await {
                    Ok(0) | Err(_) => return total,
                    Ok(n) => total += n,
                }
            }
        });
        let mut stream = WriteStall::with_bound(ours, Duration::from_secs(30));
        // About 100 s of writing at 8 KiB/s: far past the bound, never stalled that long.
        stream.write_all(&vec![1u8; 800 * 1024]).await.unwrap();
        stream.flush().await.unwrap();
        tokio::time::sleep(Duration::from_secs(600)).await;
        stream.write_all(&[2u8; 512]).await.unwrap();
        stream.shutdown().await.unwrap();
        drop(stream);
        assert_eq!(reader.await.unwrap(), 800 * 1024 + 512);
    }
}
