//! An answer too large to read whole, as the model gets it (SPEC §8.3): a result for its
//! call holding the start of its first text, within the output cap, and a marker saying it
//! was cut. The stdio transport and the HTTP client both keep the first [`HEAD_BYTES`] of
//! such an answer while they read through the rest, and make it this.

use rmcp::model::{RequestId, ServerJsonRpcMessage};
use serde_json::{Value, json};

use crate::limits::TOOL_OUTPUT_BYTES;

/// How much of an oversized answer's start is kept: the rendered-output cap and room for
/// the JSON (or event-stream lines) around the text.
pub(super) const HEAD_BYTES: usize = TOOL_OUTPUT_BYTES + 64 * 1024;

/// The result for call `id`: the start of the first text in `head` (an answer's first
/// bytes) and `marker` after it, within the output cap.
pub(super) fn cut_result(id: &RequestId, head: &[u8], marker: &str) -> ServerJsonRpcMessage {
    let text = first_text(head, TOOL_OUTPUT_BYTES.saturating_sub(marker.len()));
    let answer = json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {"content": [{"type": "text", "text": text + marker}], "isError": false},
    });
    #[expect(
        clippy::expect_used,
        reason = "a literal of the message's own shape always reads as one"
    )]
    serde_json::from_value(answer).expect("a JSON-RPC response literal")
}

/// The index of the first byte at or after `i` that is not JSON whitespace.
pub(super) fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The index of the quote that ends the string starting at `start`.
pub(super) fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The start of the first `"text"` string value in `head`, decoded, at most `max` bytes.
fn first_text(head: &[u8], max: usize) -> String {
    let key = b"\"text\"";
    // The first `"text"` that is a key (`"type":"text"` comes first, as a value).
    let open = head
        .windows(key.len())
        .enumerate()
        .filter(|(_, w)| *w == key)
        .find_map(|(at, _)| {
            let colon = skip_ws(head, at + key.len());
            let open = skip_ws(head, colon + 1);
            (head.get(colon) == Some(&b':') && head.get(open) == Some(&b'"')).then_some(open)
        });
    let Some(open) = open else {
        return String::new();
    };
    let body = &head[open + 1..];
    // The raw string up to its end or as far as the head goes, cut before an escape.
    let mut end = 0;
    let mut i = 0;
    while i < body.len() && i < max {
        match body[i] {
            b'"' => break,
            b'\\' => i += 2,
            _ => i += 1,
        }
        if i <= body.len() {
            end = i;
        }
    }
    let end = end.min(body.len());
    // Backs off over a cut escape or a cut UTF-8 character until the piece decodes.
    for back in 0..16 {
        let Some(cut) = end.checked_sub(back) else {
            break;
        };
        let mut quoted = Vec::with_capacity(cut + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(&body[..cut]);
        quoted.push(b'"');
        if let Ok(Value::String(text)) = serde_json::from_slice::<Value>(&quoted) {
            return text;
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_escape_or_character_is_left_out() {
        assert_eq!(first_text(br#""text":"ab\u00"#, 100), "ab");
        assert_eq!(
            first_text("\"text\":\"ab\u{e9}".as_bytes(), 100),
            "ab\u{e9}"
        );
        let cut_char = &"\"text\":\"ab\u{e9}".as_bytes()[..11];
        assert_eq!(first_text(cut_char, 100), "ab");
        assert_eq!(first_text(br#""text":"done" , "x""#, 100), "done");
    }

    #[test]
    fn the_result_holds_the_start_of_the_text_and_the_marker_within_the_cap() {
        let mut head = br#"event: message
data: {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"#
            .to_vec();
        head.push(b'"');
        head.extend(std::iter::repeat_n(b'x', HEAD_BYTES));
        let answer =
            serde_json::to_value(cut_result(&RequestId::Number(4), &head, "\n[cut]")).unwrap();
        assert_eq!(answer["id"], 4);
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("xxxx") && text.ends_with("x\n[cut]"));
        assert!(text.len() <= TOOL_OUTPUT_BYTES, "{}", text.len());
        assert!(text.len() > TOOL_OUTPUT_BYTES - 100, "{}", text.len());
    }
}
