//! The images of a Chat Completions history as text, for an endpoint that takes text only
//! (DeepSeek's, a llama.cpp server without a vision projector): once such an endpoint
//! refused the `image_url` parts (`unsupported`), each user message that carries images is
//! sent with its content as one string, each image replaced by a short note that names it
//! (its place among the images of that message, its type and size), so the model knows an
//! image was there and what it could not see. The stored history keeps the images.

use serde_json::value::RawValue;
use serde_json::{Value, json};

/// `item` as an endpoint that takes text only gets it: unchanged unless it is a message
/// whose content has `image_url` parts.
pub(super) fn text_only(item: &RawValue) -> Option<Value> {
    // Most items carry no image: they are copied as their bytes, never parsed.
    if !item.get().contains("\"image_url\"") {
        return None;
    }
    let mut message: Value = serde_json::from_str(item.get()).ok()?;
    let parts = message["content"].as_array()?;
    let mut images = 0;
    let mut text = Vec::with_capacity(parts.len());
    for part in parts {
        match part["type"].as_str() {
            Some("image_url") => {
                images += 1;
                text.push(note(
                    images,
                    part["image_url"]["url"].as_str().unwrap_or(""),
                ));
            }
            _ => text.push(part["text"].as_str().unwrap_or("").to_owned()),
        }
    }
    if images == 0 {
        return None;
    }
    message["content"] = json!(text.join("\n"));
    Some(message)
}

/// The note an image is replaced by: "[image 1: image/png, 68 bytes, not shown: this
/// endpoint takes text only]".
fn note(n: usize, url: &str) -> String {
    let (media_type, size) = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
        .map_or(("an image", 0), |(media_type, data)| {
            (media_type, data.len() / 4 * 3)
        });
    format!("[image {n}: {media_type}, {size} bytes, not shown: this endpoint takes text only]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_become_notes_that_name_them() {
        let raw = |v: Value| serde_json::value::to_raw_value(&v).unwrap();
        let images = raw(json!({"role": "user", "content": [
            {"type": "text", "text": "The images from tool call call_1:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}}]}));
        assert_eq!(
            text_only(&images),
            Some(json!({"role": "user", "content":
                "The images from tool call call_1:\n\
                 [image 1: image/png, 9 bytes, not shown: this endpoint takes text only]\n\
                 [image 2: image/jpeg, 6 bytes, not shown: this endpoint takes text only]"}))
        );
        assert_eq!(
            text_only(&raw(json!({"role": "user", "content": "Hi"}))),
            None
        );
        assert_eq!(
            text_only(&raw(json!({"role": "tool", "tool_call_id": "c",
                "content": "says \"image_url\""}))),
            None
        );
    }
}
