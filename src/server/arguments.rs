//! `tools/call` requests whose `arguments` is not an object.
//!
//! SPEC §4 wants malformed arguments answered as an `invalid_input` tool result, but `rmcp`
//! types `arguments` as an object and answers anything else with a JSON-RPC error before our
//! handler sees the call. Both transports therefore pass each incoming message through
//! [`mark_non_object_arguments`], which swaps such an `arguments` value for an object
//! holding only [`MARKER`] (with the JSON type that was sent); the argument checks turn the
//! marker into `invalid_input`. Every other message passes byte for byte.

use serde_json::{Value, json};

/// The one field of a stand-in `arguments` object; its value names the type that was sent.
pub(super) const MARKER: &str = "mcp-agents/arguments-not-an-object";

/// The message with a non-object `arguments` replaced, or `None` when it needs no change.
pub fn mark_non_object_arguments(message: &[u8]) -> Option<Vec<u8>> {
    // Cheap tests first, so that a well-formed call is not parsed twice: most messages are
    // not tool calls, and a call without `"arguments"`, or whose every `"arguments"` is
    // followed by an object (or null), needs nothing.
    if !contains(message, b"tools/call") || arguments_need_no_mark(message) {
        return None;
    }
    let mut value: Value = serde_json::from_slice(message).ok()?;
    if value.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let arguments = value.get_mut("params")?.get_mut("arguments")?;
    let kind = match arguments {
        Value::Object(_) | Value::Null => return None,
        Value::Array(_) => "an array",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
    };
    *arguments = json!({ MARKER: kind });
    let mut rewritten = serde_json::to_vec(&value).ok()?;
    if message.ends_with(b"\n") {
        rewritten.push(b'\n');
    }
    Some(rewritten)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Whether the raw message has no `"arguments"` (an escaped one inside a string does not
/// count), or has it only followed by `:` and an object or `null`. Then the message's
/// `arguments`, if any, needs no mark.
fn arguments_need_no_mark(message: &[u8]) -> bool {
    const KEY: &[u8] = b"\"arguments\"";
    let mut rest = message;
    while let Some(at) = rest.windows(KEY.len()).position(|w| w == KEY) {
        rest = &rest[at + KEY.len()..];
        let value = rest
            .iter()
            .position(|b| !b.is_ascii_whitespace() && *b != b':')
            .map(|i| &rest[i..]);
        if !value.is_some_and(|v| v.starts_with(b"{") || v.starts_with(b"null")) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_bytes_pass_or_are_marked_without_panicking(
            bytes in prop::collection::vec(any::<u8>(), 0..256),
        ) {
            let _ = mark_non_object_arguments(&bytes);
        }

        #[test]
        fn a_marked_message_is_json_with_object_arguments(arguments in "(\\[\\]|1|true|\"s\"|null|\\{\\})") {
            let message = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{arguments}}}}}"#
            );
            match mark_non_object_arguments(message.as_bytes()) {
                Some(marked) => {
                    let value: Value = serde_json::from_slice(&marked).unwrap();
                    prop_assert!(value["params"]["arguments"][MARKER].is_string());
                }
                None => prop_assert!(matches!(arguments.as_str(), "null" | "{}"), "{}", arguments),
            }
        }
    }

    #[test]
    fn non_object_arguments_are_marked_with_their_type() {
        for (arguments, kind) in [
            (json!([1]), "an array"),
            (json!("x"), "a string"),
            (json!(3), "a number"),
            (json!(true), "a boolean"),
        ] {
            let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                 "params": {"name": "wait_agent", "arguments": arguments}});
            let bytes = format!("{message}\n");
            let rewritten = mark_non_object_arguments(bytes.as_bytes()).unwrap();
            assert!(rewritten.ends_with(b"\n"));
            let value: Value = serde_json::from_slice(&rewritten).unwrap();
            assert_eq!(value["params"]["arguments"], json!({ MARKER: kind }));
            assert_eq!(value["params"]["name"], "wait_agent");
        }
    }

    #[test]
    fn the_quick_check_sees_through_strings_and_spacing() {
        assert!(arguments_need_no_mark(
            br#"{"params":{"arguments" : {"a":1}}}"#
        ));
        assert!(arguments_need_no_mark(br#"{"params":{"name":"x"}}"#));
        assert!(arguments_need_no_mark(br#"{"params":{"arguments":null}}"#));
        assert!(!arguments_need_no_mark(br#"{"params":{"arguments":[1]}}"#));
        // A task that quotes `"arguments": {` does not hide a real array.
        let quoting = br#"{"params":{"x":"say "arguments": {}","arguments":"s"}}"#;
        assert!(!arguments_need_no_mark(quoting));
        // `"arguments"` as a value is no answer either way: the message is parsed.
        assert!(!arguments_need_no_mark(
            br#"{"params":{"name":"arguments"}}"#
        ));
    }

    #[test]
    fn everything_else_passes_unchanged() {
        for message in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "wait_agent", "arguments": {"targets": []}}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "wait_agent"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                   "params": {"cursor": "tools/call"}}),
        ] {
            assert_eq!(
                mark_non_object_arguments(message.to_string().as_bytes()),
                None
            );
        }
        assert_eq!(mark_non_object_arguments(b"not json tools/call"), None);
    }
}
