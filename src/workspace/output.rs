//! What every workspace tool answers with: text for the model, capped at the 1 MiB rule of
//! SPEC §8.3 with notes at the end that say what was left out, and lines shown as UTF-8
//! (lossy) with a length cap.

use crate::limits::{TOOL_OUTPUT_BYTES, WORKSPACE_LINE_CHARS, WORKSPACE_NOTES_BYTES};
use crate::text::cut_utf8;

/// A tool's answer: the text the model reads and the same facts as structured content.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub structured: serde_json::Value,
}

impl Answer {
    /// `text` for the model, with `output` (the tool's output type) as structured content.
    pub fn new(text: String, output: &impl serde::Serialize) -> Answer {
        Answer {
            text,
            // Output types are plain structs of strings, numbers and lists: serializing
            // them cannot fail.
            structured: serde_json::to_value(output).unwrap_or_default(),
        }
    }
}

/// The body of an answer, line by line, within the output cap. Once a line does not fit,
/// the page is full and takes no more.
#[derive(Debug, Default)]
pub(super) struct Page {
    body: String,
    full: bool,
}

impl Page {
    /// Adds `line`; `false` (and nothing added) when it would pass the cap.
    pub(super) fn push(&mut self, line: &str) -> bool {
        if self.full || self.body.len() + line.len() + 1 > TOOL_OUTPUT_BYTES - WORKSPACE_NOTES_BYTES
        {
            self.full = true;
            return false;
        }
        self.body.push_str(line);
        self.body.push('\n');
        true
    }

    /// Adds `text` numbered as `cat -n` numbers it (the number right-aligned in six
    /// columns, a tab); `false` when it would pass the cap.
    pub(super) fn push_numbered(&mut self, number: u64, text: &str) -> bool {
        use std::fmt::Write;
        let width = number.checked_ilog10().unwrap_or(0) as usize + 1;
        let len = width.max(6) + 1 + text.len() + 1;
        if self.full || self.body.len() + len > TOOL_OUTPUT_BYTES - WORKSPACE_NOTES_BYTES {
            self.full = true;
            return false;
        }
        // Writing to a String cannot fail.
        let _ = writeln!(self.body, "{number:>6}\t{text}");
        true
    }

    /// Whether a line was refused for the cap.
    pub(super) fn is_full(&self) -> bool {
        self.full
    }

    /// The text: the body, then each note on its own line in brackets, then (when the cap
    /// was reached) the marker saying so.
    pub(super) fn finish(mut self, notes: &[String]) -> String {
        if self.full {
            self.body.push_str(&format!(
                "[output cut at {} MiB, the most a tool may answer]\n",
                TOOL_OUTPUT_BYTES / (1024 * 1024)
            ));
        }
        for note in notes {
            // Notes are short sentences; the cap still holds if one were not.
            let room = TOOL_OUTPUT_BYTES.saturating_sub(self.body.len() + 3);
            let note = cut_utf8(note, room);
            self.body.push('[');
            self.body.push_str(note);
            self.body.push_str("]\n");
        }
        self.body
    }
}

/// One line of a file as shown: decoded as UTF-8 (invalid bytes become U+FFFD), without
/// its line ending, at most [`WORKSPACE_LINE_CHARS`] characters with a marker after a cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ShownLine {
    pub text: String,
    /// Some bytes were not valid UTF-8.
    pub lossy: bool,
    /// The line was longer than the cap.
    pub cut: bool,
}

/// How many bytes of a line to keep so that [`show_line`] can show
/// [`WORKSPACE_LINE_CHARS`] characters of any UTF-8 text.
pub(super) const LINE_KEEP_BYTES: usize = WORKSPACE_LINE_CHARS * 4;

/// Shows `kept`, the first bytes of a line of `full_len` bytes (line ending excluded or
/// not: a trailing `\r\n` or `\n` is dropped).
pub(super) fn show_line(kept: &[u8], full_len: u64) -> ShownLine {
    let mut bytes = kept;
    let whole = kept.len() as u64 >= full_len;
    if whole {
        bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    } else if let Err(e) = std::str::from_utf8(bytes)
        && e.error_len().is_none()
    {
        // The keep limit fell inside a character: that is not invalid UTF-8.
        bytes = &bytes[..e.valid_up_to()];
    }
    let decoded = String::from_utf8_lossy(bytes);
    let lossy = matches!(decoded, std::borrow::Cow::Owned(_));
    // A text of no more bytes than the cap has no more characters either.
    let cut_at = if decoded.len() <= WORKSPACE_LINE_CHARS {
        None
    } else {
        decoded
            .char_indices()
            .nth(WORKSPACE_LINE_CHARS)
            .map(|(at, _)| at)
    };
    let cut = cut_at.is_some() || !whole;
    let mut text = match cut_at {
        Some(at) => decoded[..at].to_owned(),
        None => decoded.into_owned(),
    };
    if cut {
        text.push_str(&format!(
            " … [line cut at {WORKSPACE_LINE_CHARS} characters; it has {full_len} bytes]"
        ));
    }
    ShownLine { text, lossy, cut }
}

/// `n` and the word for one or many: `1 line`, `3 lines`.
pub(super) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_stops_at_the_cap_and_says_so() {
        let mut page = Page::default();
        let line = "x".repeat(1000);
        let mut pushed = 0;
        while page.push(&line) {
            pushed += 1;
        }
        assert!(page.is_full());
        assert!(!page.push("short"), "a full page takes nothing more");
        let text = page.finish(&["3 more lines not shown".to_owned()]);
        assert!(text.len() <= TOOL_OUTPUT_BYTES, "{}", text.len());
        assert_eq!(pushed, (TOOL_OUTPUT_BYTES - WORKSPACE_NOTES_BYTES) / 1001);
        assert!(text.ends_with(
            "[output cut at 1 MiB, the most a tool may answer]\n[3 more lines not shown]\n"
        ));
        let mut page = Page::default();
        page.push("a");
        assert!(page.push_numbered(7, "seven"));
        assert!(page.push_numbered(1_234_567, "big"));
        assert_eq!(page.finish(&[]), "a\n     7\tseven\n1234567\tbig\n");
        // The numbered form stops at the cap exactly as `push` does.
        let (mut plain, mut numbered) = (Page::default(), Page::default());
        let line = "y".repeat(3000);
        let mut n = 1;
        while numbered.push_numbered(n, &line) {
            assert!(plain.push(&format!("{n:>6}\t{line}")));
            n += 1;
        }
        assert!(!plain.push(&format!("{n:>6}\t{line}")));
        assert_eq!(plain.finish(&[]), numbered.finish(&[]));
    }

    #[test]
    fn lines_lose_their_ending_and_are_cut_with_a_marker() {
        assert_eq!(
            show_line(b"hello\r\n", 7),
            ShownLine {
                text: "hello".into(),
                lossy: false,
                cut: false
            }
        );
        let long = "é".repeat(WORKSPACE_LINE_CHARS + 5);
        let kept = &long.as_bytes()[..LINE_KEEP_BYTES.min(long.len())];
        let shown = show_line(kept, long.len() as u64);
        assert!(shown.cut && !shown.lossy);
        assert!(shown.text.starts_with(&"é".repeat(WORKSPACE_LINE_CHARS)));
        assert!(shown.text.ends_with(&format!(
            " … [line cut at {WORKSPACE_LINE_CHARS} characters; it has {} bytes]",
            long.len()
        )));
        // Kept bytes that end inside a character are not invalid UTF-8.
        let partial = show_line(&"é".as_bytes()[..1], 100);
        assert!(!partial.lossy && partial.cut, "{partial:?}");
        let bad = show_line(b"caf\xe9 ok\n", 8);
        assert_eq!(bad.text, "caf\u{FFFD} ok");
        assert!(bad.lossy && !bad.cut);
    }

    #[test]
    fn counts_read_well() {
        assert_eq!(count(1, "line", "lines"), "1 line");
        assert_eq!(count(0, "line", "lines"), "0 lines");
        assert_eq!(cut_utf8("aé", 2), "a");
    }
}
