//! Server-sent events (the WHATWG `text/event-stream` format), parsed in linear time.
//!
//! Each chunk is scanned once, and only its own bytes: a line end is looked for in the new
//! bytes, never in what came before, so a 32 MiB `data:` line arriving in 16 KiB pieces
//! costs one pass over it instead of one pass per piece (`eventsource-stream`, which this
//! replaces, re-parsed its whole buffer per chunk: 124 s for such a line, see
//! docs/performance.md). The line not yet ended is kept up to a cap.
//!
//! As the format says, lines end with CRLF, LF or CR (a CR at the end of one chunk and a LF
//! at the start of the next are one line end); a line starting with `:` is a comment, which
//! is skipped without being decoded (a keep-alive with a stray byte in it must not fail a
//! reply); `data` lines are joined with `\n`; `event` names the event; `id`, `retry` and
//! unknown fields are ignored; a blank line dispatches the event, and one without any `data`
//! is dropped. Text is decoded as the format says, replacing invalid UTF-8 with U+FFFD.
//!
//! Where the format drops an event the stream ends in without its closing blank line,
//! [`SseParser::finish`] delivers it, as the official SDKs do: a stream cut just after its
//! last event still carries that event whole, and the reader judges whether its data is
//! complete (a cut JSON object does not parse).

use std::collections::VecDeque;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field, or `message` when the event had none.
    pub event: String,
    /// The `data` lines, joined with `\n`.
    pub data: String,
}

/// A line longer than the parser's cap: the stream is not one a provider sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineTooLong {
    pub max: usize,
}

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a line of the event stream is longer than {} bytes",
            self.max
        )
    }
}

/// An incremental parser: feed it the body's chunks as they come, take the events it has
/// completed after each. Each line is capped; the data of one event, which may span
/// lines, is bounded by the cap on the whole body its caller reads.
#[derive(Debug)]
pub struct SseParser {
    /// The bytes of the line not yet ended.
    partial: Vec<u8>,
    /// The last chunk ended with a CR: a LF starting the next one ends the same line.
    after_cr: bool,
    /// A byte-order mark is allowed before the first line only.
    first_line: bool,
    max_line: usize,
    /// The event being read.
    event: Option<String>,
    data: Option<String>,
    ready: VecDeque<SseEvent>,
}

impl SseParser {
    /// A parser that refuses a line longer than `max_line` bytes.
    pub fn new(max_line: usize) -> Self {
        SseParser {
            partial: Vec::new(),
            after_cr: false,
            first_line: true,
            max_line,
            event: None,
            data: None,
            ready: VecDeque::new(),
        }
    }

    /// Takes the next piece of the stream; the events it completes wait in
    /// [`next_event`](Self::next_event).
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<(), LineTooLong> {
        // An empty chunk says nothing: it must not forget that the last one ended in a CR
        // whose LF may still come (a CR LF split around it is one line end, not two).
        if chunk.is_empty() {
            return Ok(());
        }
        if std::mem::take(&mut self.after_cr)
            && let Some(rest) = chunk.strip_prefix(b"\n")
        {
            chunk = rest;
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) {
            self.check_length(end)?;
            if self.partial.is_empty() {
                self.line(&chunk[..end]);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&chunk[..end]);
                self.line(&line);
                // The allocation is kept for the next long line.
                line.clear();
                self.partial = line;
            }
            let cr = chunk[end] == b'\r';
            chunk = &chunk[end + 1..];
            if cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
        }
        self.check_length(chunk.len())?;
        self.partial.extend_from_slice(chunk);
        Ok(())
    }

    /// The end of the stream: a last line without its line end, and a last event without
    /// the blank line that closes it, are taken as they are.
    pub fn finish(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
        self.line(b"");
    }

    /// The next complete event, oldest first.
    pub fn next_event(&mut self) -> Option<SseEvent> {
        self.ready.pop_front()
    }

    fn check_length(&self, more: usize) -> Result<(), LineTooLong> {
        if self.partial.len().saturating_add(more) > self.max_line {
            return Err(LineTooLong { max: self.max_line });
        }
        Ok(())
    }

    fn line(&mut self, mut line: &[u8]) {
        if std::mem::take(&mut self.first_line) {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            let event = self.event.take();
            if let Some(data) = self.data.take() {
                self.ready.push_back(SseEvent {
                    event: event.unwrap_or_else(|| "message".to_owned()),
                    data,
                });
            }
            return;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            // A comment: never decoded.
            Some(0) => return,
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                let text = String::from_utf8_lossy(value);
                match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(&text);
                    }
                    None => self.data = Some(text.into_owned()),
                }
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            // `id`, `retry` and fields the format does not know.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events_of(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut parser = SseParser::new(1 << 20);
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk).unwrap();
            while let Some(e) = parser.next_event() {
                out.push((e.event, e.data));
            }
        }
        parser.finish();
        while let Some(e) = parser.next_event() {
            out.push((e.event, e.data));
        }
        out
    }

    fn pair(event: &str, data: &str) -> (String, String) {
        (event.to_owned(), data.to_owned())
    }

    #[test]
    fn events_are_read_across_any_split() {
        let stream = b"\xEF\xBB\xBFevent: a\r\ndata: {\"x\":1}\r\n\r\n: keep-alive\n\ndata: one\ndata:two\r\rid: 7\nretry: 5\nfoo: bar\nevent: b\ndata\n\n";
        let whole = events_of(&[stream]);
        assert_eq!(
            whole,
            [
                pair("a", "{\"x\":1}"),
                pair("message", "one\ntwo"),
                pair("b", "")
            ]
        );
        for at in 0..stream.len() {
            let (a, b) = stream.split_at(at);
            assert_eq!(events_of(&[a, b]), whole, "split at {at}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events_of(&bytes), whole, "byte by byte");
    }

    #[test]
    fn an_empty_chunk_between_cr_and_lf_keeps_them_one_line_end() {
        // Found by the suite's property test: a stream cut as "…\r", "", "\n…" read as
        // two line ends, so an empty data line made a second event.
        let whole = events_of(&[b"data: a\r\ndata\n\n"]);
        assert_eq!(whole, [pair("message", "a\n")]);
        assert_eq!(events_of(&[b"data: a\r", b"", b"\ndata\n\n"]), whole);
    }

    #[test]
    fn a_comment_is_never_decoded_and_bad_data_is_replaced() {
        assert_eq!(
            events_of(&[b": OPENROUTER \xff\xfe PROCESSING\n\nevent: e\ndata: ok\n\n"]),
            [pair("e", "ok")]
        );
        assert_eq!(
            events_of(&[b"data: a\xffb\n\n"]),
            [pair("message", "a\u{FFFD}b")]
        );
    }

    #[test]
    fn a_last_event_without_its_blank_line_is_delivered_at_the_end() {
        assert_eq!(
            events_of(&[b"event: done\ndata: {}\n"]),
            [pair("done", "{}")]
        );
        assert_eq!(events_of(&[b"data: {}"]), [pair("message", "{}")]);
        assert_eq!(events_of(&[b"event: only\n"]), [], "no data, no event");
    }

    #[test]
    fn a_line_past_the_cap_is_refused() {
        let mut parser = SseParser::new(8);
        assert!(parser.feed(b"data: 12").is_ok());
        assert_eq!(parser.feed(b"3"), Err(LineTooLong { max: 8 }));
        let mut parser = SseParser::new(8);
        assert!(parser.feed(b"data: 12\n").is_ok());
        assert_eq!(
            parser.feed(b"data: 123456789\n"),
            Err(LineTooLong { max: 8 }),
            "whole in one chunk, and still too long"
        );
    }
}
