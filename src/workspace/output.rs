//! What every workspace tool answers with: text for the model, capped at the 1 MiB rule of
//! SPEC §8.3 with notes at the end that say what was left out, and lines shown as UTF-8
//! (lossy) with a length cap.
//!
//! The cap holds for the whole answer as it goes on the wire: the text and the structured
//! content, each counted as the JSON that carries it (a control character costs six bytes
//! there, `\u0001`). Arguments quoted back in messages are cut ([`quote`]).

use crate::limits::{
    TOOL_OUTPUT_BYTES, WORKSPACE_ENVELOPE_BYTES, WORKSPACE_LINE_CHARS, WORKSPACE_NOTES_BYTES,
    WORKSPACE_QUOTE_BYTES,
};
use crate::text::{cut_utf8, is_hidden};

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
/// the page is full and takes no more. What the structured content repeats of a line (a
/// match's text, a path) is charged to the page with it, so the two together stay within
/// the cap.
#[derive(Debug)]
pub(super) struct Page {
    body: String,
    /// Bytes on the wire so far: the body as JSON, what was charged with its lines, and
    /// what was reserved for the structured content's own fields.
    spent: usize,
    full: bool,
}

/// What the body, the charges and the reserve may take: the cap less the room for the notes
/// and for the envelope.
const PAGE_BYTES: usize = TOOL_OUTPUT_BYTES - WORKSPACE_NOTES_BYTES - WORKSPACE_ENVELOPE_BYTES;

impl Page {
    /// A page whose structured content carries fields of `reserved` bytes (as JSON) besides
    /// what its lines are charged with: the pattern and path an answer repeats.
    pub(super) fn reserving(reserved: usize) -> Page {
        Page {
            body: String::new(),
            spent: reserved,
            full: false,
        }
    }

    /// Adds `line`; `false` (and nothing added) when it would pass the cap.
    pub(super) fn push(&mut self, line: &str) -> bool {
        self.push_charged(line, 0)
    }

    /// Adds `line`, with `charge` bytes that the structured content adds for it; `false`
    /// (and nothing added) when the two would pass the cap.
    pub(super) fn push_charged(&mut self, line: &str, charge: usize) -> bool {
        // The line and its newline, as JSON.
        let cost = json_len(line) + 2 + charge;
        if self.full || self.spent + cost > PAGE_BYTES {
            self.full = true;
            return false;
        }
        self.body.push_str(line);
        self.body.push('\n');
        self.spent += cost;
        true
    }

    /// Adds `text` numbered as `cat -n` numbers it (the number right-aligned in six
    /// columns, a tab); `false` when it would pass the cap.
    pub(super) fn push_numbered(&mut self, number: u64, text: &str) -> bool {
        use std::fmt::Write;
        let width = number.checked_ilog10().unwrap_or(0) as usize + 1;
        // The number, the tab and the newline as JSON (`\t`, `\n`), and the text.
        let cost = width.max(6) + 2 + json_len(text) + 2;
        if self.full || self.spent + cost > PAGE_BYTES {
            self.full = true;
            return false;
        }
        // Writing to a String cannot fail.
        let _ = writeln!(self.body, "{number:>6}\t{text}");
        self.spent += cost;
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
            let marker = format!(
                "[output cut at {} MiB, the most a tool may answer]\n",
                TOOL_OUTPUT_BYTES / (1024 * 1024)
            );
            self.spent += json_len(&marker);
            self.body.push_str(&marker);
        }
        for note in notes {
            // Notes are short sentences; the cap still holds if one were not. A note costs
            // its brackets and newline (`\n` in JSON) besides its text.
            let room = (TOOL_OUTPUT_BYTES - WORKSPACE_ENVELOPE_BYTES).saturating_sub(self.spent);
            let note = cut_json(note, room.saturating_sub(4));
            if note.is_empty() {
                break;
            }
            self.spent += json_len(note) + 4;
            self.body.push('[');
            self.body.push_str(note);
            self.body.push_str("]\n");
        }
        self.body
    }
}

/// How many bytes `text` takes as a JSON string's contents (`serde_json`'s escapes: two
/// bytes for a quote, a backslash and the usual control characters, six for the others).
pub(super) fn json_len(text: &str) -> usize {
    text.bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum()
}

/// How many bytes `value` adds to the structured content as one item of a list (its JSON
/// and a comma): what a page is charged for a line the structured content repeats.
pub(super) fn json_size(value: &impl serde::Serialize) -> usize {
    // Output types are plain structs: serializing them cannot fail.
    serde_json::to_vec(value).map_or(0, |json| json.len()) + 1
}

/// The longest prefix of `text` whose JSON form takes at most `max` bytes.
pub(super) fn cut_json(text: &str, max: usize) -> &str {
    if json_len(text) <= max {
        return text;
    }
    let mut used = 0;
    for (at, c) in text.char_indices() {
        let mut buffer = [0; 4];
        used += json_len(c.encode_utf8(&mut buffer));
        if used > max {
            return &text[..at];
        }
    }
    text
}

/// An argument or an engine's message as an error or note quotes it: hidden characters
/// escaped (as file names are shown) and at most [`WORKSPACE_QUOTE_BYTES`], cut with "…".
pub(super) fn quote(text: &str) -> String {
    shorten(&escape_hidden(text))
}

/// `text` as is if it is at most [`WORKSPACE_QUOTE_BYTES`], else cut to that with "…": for
/// an engine's message, whose lines (a caret under the fault) read as they are.
pub(super) fn shorten(text: &str) -> String {
    if text.len() <= WORKSPACE_QUOTE_BYTES {
        return text.to_owned();
    }
    format!(
        "{}…",
        cut_utf8(text, WORKSPACE_QUOTE_BYTES - '…'.len_utf8())
    )
}

/// `text` with every control, bidirectional, zero-width or other invisible character
/// ([`is_hidden`]) written as an escape (`\n`, `\u{202e}`), so a name cannot pass for
/// another line of an answer or read differently from what it is.
pub(super) fn escape_hidden(text: &str) -> String {
    if !text.chars().any(is_hidden) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if is_hidden(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
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
        let mut page = Page::reserving(0);
        let line = "x".repeat(1000);
        let mut pushed = 0;
        while page.push(&line) {
            pushed += 1;
        }
        assert!(page.is_full());
        assert!(!page.push("short"), "a full page takes nothing more");
        let text = page.finish(&["3 more lines not shown".to_owned()]);
        assert!(text.len() <= TOOL_OUTPUT_BYTES, "{}", text.len());
        assert_eq!(pushed, PAGE_BYTES / 1002, "each line and its `\\n`");
        assert!(text.ends_with(
            "[output cut at 1 MiB, the most a tool may answer]\n[3 more lines not shown]\n"
        ));
        let mut page = Page::reserving(0);
        page.push("a");
        assert!(page.push_numbered(7, "seven"));
        assert!(page.push_numbered(1_234_567, "big"));
        assert_eq!(page.finish(&[]), "a\n     7\tseven\n1234567\tbig\n");
        // The numbered form stops at the cap exactly as `push` does.
        let (mut plain, mut numbered) = (Page::reserving(0), Page::reserving(0));
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
    fn the_cap_counts_the_answer_as_json_with_what_structured_content_repeats() {
        // Control characters take six bytes each in JSON: a page of them holds a sixth.
        let controls = "\u{1}".repeat(1000);
        let mut page = Page::reserving(0);
        let mut pushed = 0;
        while page.push(&controls) {
            pushed += 1;
        }
        assert_eq!(pushed, PAGE_BYTES / 6002);
        let text = page.finish(&vec!["a note".to_owned(); 3]);
        let answer = serde_json::json!({"content": [{"type": "text", "text": text}]});
        assert!(answer.to_string().len() <= TOOL_OUTPUT_BYTES);
        // A charge and a reserve count as much as text does.
        let mut charged = Page::reserving(100_000);
        let mut pushed = 0;
        while charged.push_charged(&line_of(1000), 1000) {
            pushed += 1;
        }
        assert_eq!(pushed, (PAGE_BYTES - 100_000) / 2002);
        // Notes are cut to what is left, never past the cap.
        let mut page = Page::reserving(PAGE_BYTES - 10);
        assert!(!page.push("x".repeat(20).as_str()));
        let huge = "\u{1}".repeat(2 * TOOL_OUTPUT_BYTES);
        let text = page.finish(&[huge.clone(), huge]);
        assert!(json_len(&text) <= TOOL_OUTPUT_BYTES, "{}", json_len(&text));
    }

    fn line_of(n: usize) -> String {
        "z".repeat(n)
    }

    #[test]
    fn json_lengths_match_serde_json() {
        for text in [
            "plain",
            "a\"b\\c",
            "tab\there\n",
            "\u{1}\u{1f}\u{7f}é\u{202e}",
            "\u{8}\u{c}\r",
        ] {
            let encoded = serde_json::to_string(text).unwrap();
            assert_eq!(json_len(text), encoded.len() - 2, "{text:?}");
        }
        assert_eq!(cut_json("ab\u{1}c", 3), "ab");
        assert_eq!(cut_json("ab\u{1}c", 8), "ab\u{1}");
        assert_eq!(cut_json("é", 1), "");
    }

    #[test]
    fn quotes_are_short_and_show_hidden_characters() {
        assert_eq!(quote("src/*.rs"), "src/*.rs");
        assert_eq!(quote("a\u{202e}b\nc"), "a\\u{202e}b\\nc");
        let long = quote(&"*".repeat(1_000_000));
        assert!(
            long.len() <= WORKSPACE_QUOTE_BYTES && long.ends_with("*…"),
            "{long}"
        );
        assert_eq!(escape_hidden("x\u{200b}\u{61c}y"), "x\\u{200b}\\u{61c}y");
        // An engine's message keeps its lines; only its length is cut.
        assert_eq!(
            shorten("regex parse error:\n  (\n  ^"),
            "regex parse error:\n  (\n  ^"
        );
        let cut = shorten(&"x\n".repeat(1000));
        assert!(cut.len() <= WORKSPACE_QUOTE_BYTES && cut.ends_with("x…") && cut.contains('\n'));
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
