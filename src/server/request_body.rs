//! Reading an HTTP request body under its cap (SPEC §10; issue 23 items 3 and 11).
//!
//! The body is gathered into one buffer, and each piece is dropped once copied: memory for
//! a body is at most about twice the cap while the buffer grows, however the client cuts it.
//! (`http_body_util::Limited::collect` kept every piece as its own buffer: a 4 MiB body
//! sent in 1-byte chunks held 155 MiB, see docs/performance.md.) A body whose declared
//! length is already over the cap is refused before a byte of it is read.
//!
//! What is left of a refused body is read and thrown away for a little while
//! ([`discard`]), as nginx's lingering close does: a client still sending it then reads the
//! refusal, where closing at once would reset the connection under it.

use axum::body::{Body, HttpBody};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;

use crate::limits::{HTTP_LINGER, HTTP_LINGER_BYTES};

/// Why a body was not read whole.
#[derive(Debug)]
pub(super) enum BodyRefusal {
    /// Longer than the cap: declared so up front, or found so while reading. The rest of
    /// the body, for [`discard`].
    TooLarge(Body),
    /// The connection failed or the framing was broken.
    Unreadable,
}

/// The whole of `body`, if it is at most `cap` bytes.
pub(super) async fn read_capped(mut body: Body, cap: usize) -> Result<Bytes, BodyRefusal> {
    let declared = body.size_hint();
    if declared.lower() > cap as u64 {
        return Err(BodyRefusal::TooLarge(body));
    }
    // A declared length is room reserved at once; without one the buffer grows as needed.
    let expected = declared
        .exact()
        .map_or(0, |n| usize::try_from(n).unwrap_or(cap));
    let mut buffer = BytesMut::with_capacity(expected.min(cap));
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(BodyRefusal::Unreadable);
        };
        // Trailers carry nothing a JSON-RPC request needs.
        if let Ok(data) = frame.into_data() {
            if buffer.len() + data.len() > cap {
                return Err(BodyRefusal::TooLarge(body));
            }
            buffer.extend_from_slice(&data);
        }
    }
    Ok(buffer.freeze())
}

/// Reads what is left of a refused `body` and throws it away, in the background, for at
/// most [`HTTP_LINGER`] and [`HTTP_LINGER_BYTES`]; then the connection closes.
pub(super) fn discard(mut body: Body) {
    tokio::spawn(async move {
        let mut left = HTTP_LINGER_BYTES;
        let _ = tokio::time::timeout(HTTP_LINGER, async {
            while let Some(Ok(frame)) = body.frame().await {
                let taken = frame.data_ref().map_or(0, Bytes::len);
                left = left.saturating_sub(taken);
                if left == 0 {
                    break;
                }
            }
        })
        .await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_byte_frames(bytes: usize) -> Body {
        Body::from_stream(futures_util::stream::iter(
            (0..bytes).map(|_| Ok::<_, std::io::Error>(Bytes::from_static(b"x"))),
        ))
    }

    #[tokio::test]
    async fn a_body_in_one_byte_pieces_is_read_into_one_buffer() {
        let read = read_capped(one_byte_frames(1000), 1000).await.unwrap();
        assert_eq!(read.len(), 1000);
        assert!(matches!(
            read_capped(one_byte_frames(1001), 1000).await,
            Err(BodyRefusal::TooLarge(_))
        ));
    }

    #[tokio::test]
    async fn a_declared_length_over_the_cap_is_refused_before_reading() {
        let body = Body::from(vec![b'x'; 11]);
        let Err(BodyRefusal::TooLarge(rest)) = read_capped(body, 10).await else {
            panic!("refused");
        };
        assert_eq!(rest.size_hint().exact(), Some(11), "not a byte read");
        let body = Body::from(vec![b'x'; 10]);
        assert_eq!(read_capped(body, 10).await.unwrap().len(), 10);
    }
}
