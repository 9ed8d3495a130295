//! A child's tool result as the model sees it (SPEC §6.1 "Tool results", §8.3): text as is,
//! images as images, other content as a one-line placeholder, all within the 1 MiB cap.

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::limits::TOOL_OUTPUT_BYTES;
use crate::text::cut_utf8;
use crate::toolbox::ToolImage;

/// A tool result as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rendered {
    /// Text blocks as they are, structured content as JSON (when there is no text), and a
    /// one-line placeholder for everything not shown as itself.
    pub text: String,
    /// The images shown as images: a type both APIs take, within the size cap.
    pub images: Vec<ToolImage>,
}

/// One piece of a result on its way to the model.
enum Piece {
    Text(String),
    Image(ToolImage),
}

/// A tool result for the model: text as is, structured content as JSON (when there is no
/// text), images as images (SPEC §6.1 "Tool results"), other content summarized. Text and
/// images together (the images counted by their base64 characters) stay within
/// [`TOOL_OUTPUT_BYTES`]: an image that would pass it becomes a placeholder, and text beyond
/// it is cut with a visible marker.
pub(super) fn render_result(result: &CallToolResult) -> Rendered {
    let mut pieces: Vec<Piece> = result.content.iter().map(render_block).collect();
    // A tool that returns structured content also sends it as text (the MCP spec asks it
    // to), so the JSON is added only when there is no text to read.
    let has_text = result
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::Text(_)));
    if let Some(structured) = &result.structured_content
        && !has_text
    {
        pieces.push(Piece::Text(structured.to_string()));
    }
    // Text first, then images in order, each while the text and the images before it leave
    // room for it (a placeholder in its stead counts as text).
    let mut text_len: usize = pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => t.len() + 1,
            Piece::Image(_) => 0,
        })
        .sum();
    let mut image_bytes = 0usize;
    for piece in &mut pieces {
        let Piece::Image(image) = piece else {
            continue;
        };
        let size = image.data.len();
        if text_len + image_bytes + size <= TOOL_OUTPUT_BYTES {
            image_bytes += size;
            continue;
        }
        let placeholder = format!(
            "[image: {}, {size} base64 characters; not shown: larger than what is left of the \
             {} MiB a tool result may take]",
            image.media_type,
            TOOL_OUTPUT_BYTES / (1024 * 1024)
        );
        text_len += placeholder.len() + 1;
        *piece = Piece::Text(placeholder);
    }
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => texts.push(t),
            Piece::Image(i) => images.push(i),
        }
    }
    Rendered {
        text: cap_output_at(texts.join("\n"), TOOL_OUTPUT_BYTES - image_bytes),
        images,
    }
}

/// What the first bytes of an image say it is, among the types both APIs take.
fn sniffed_media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// An MCP image as the model can take it: valid base64 of a PNG, JPEG, GIF or WebP (the type
/// its bytes show, which the APIs check), else a placeholder saying why not.
fn image_piece(mime_type: &str, data: &str) -> Piece {
    let placeholder = |why: &str| {
        Piece::Text(format!(
            "[image: {mime_type}, {} base64 characters; not shown: {why}]",
            data.len()
        ))
    };
    if data.len() > TOOL_OUTPUT_BYTES {
        return placeholder(&format!(
            "larger than the {} MiB a tool result may take",
            TOOL_OUTPUT_BYTES / (1024 * 1024)
        ));
    }
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
        return placeholder("its data is not valid base64");
    };
    match sniffed_media_type(&bytes) {
        Some(media_type) => Piece::Image(ToolImage {
            media_type: media_type.to_owned(),
            data: data.to_owned(),
        }),
        None => placeholder("the model takes PNG, JPEG, GIF and WebP images only"),
    }
}

/// Caps rendered output, saying how much was cut.
pub(super) fn cap_output(text: String) -> String {
    cap_output_at(text, TOOL_OUTPUT_BYTES)
}

/// [`cap_output`] at `max` bytes (what images left of the cap).
fn cap_output_at(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let kept = cut_utf8(&text, max);
    format!(
        "{kept}\n[output truncated: {} of {} bytes shown]",
        kept.len(),
        text.len()
    )
}

fn render_block(block: &ContentBlock) -> Piece {
    let text = match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => return image_piece(&i.mime_type, &i.data),
        ContentBlock::Audio(a) => format!(
            "[audio: {}, {} base64 characters]",
            a.mime_type,
            a.data.len()
        ),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {uri}: {}, {} base64 characters]",
                mime_type.as_deref().unwrap_or("binary"),
                blob.len()
            ),
            _ => "[an embedded resource of a kind this server does not render]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource link: {}]", link.uri),
        // The enum is non-exhaustive: content kinds added by later protocol versions.
        _ => "[content of a kind this server does not render]".to_owned(),
    };
    Piece::Text(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn structured_content_is_said_once() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("{\n  \"a\": 1\n}")]);
        result.structured_content = Some(json!({"a": 1}));
        assert_eq!(render_result(&result).text, "{\n  \"a\": 1\n}");
        let only = CallToolResult::structured(json!({"b": 2}));
        assert!(render_result(&only).text.contains(r#"{"b":2}"#));
        let mut both = CallToolResult::success(vec![ContentBlock::text("QUIET")]);
        both.structured_content = Some(json!({"result": "QUIET"}));
        assert_eq!(render_result(&both).text, "QUIET");
        let mut image = CallToolResult::success(vec![ContentBlock::image(PNG, "image/png")]);
        image.structured_content = Some(json!({"c": 3}));
        let rendered = render_result(&image);
        assert_eq!(rendered.text, "{\"c\":3}", "an image is not text");
        assert_eq!(rendered.images.len(), 1);
    }

    /// A 1×1 PNG.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";

    #[test]
    fn images_are_shown_as_images_when_the_model_can_take_them() {
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        let gif = b64(b"GIF89a\x01\x00\x01\x00");
        let result = CallToolResult::success(vec![
            ContentBlock::text("Two views:"),
            ContentBlock::image(PNG, "image/png"),
            // Labelled JPEG, but the bytes are a GIF: the bytes decide.
            ContentBlock::image(gif.clone(), "image/jpeg"),
            ContentBlock::image(
                b64(b"<svg xmlns='http://www.w3.org/2000/svg'/>"),
                "image/svg+xml",
            ),
            ContentBlock::image("not base64!", "image/png"),
        ]);
        let rendered = render_result(&result);
        assert_eq!(
            rendered.images,
            vec![
                ToolImage {
                    media_type: "image/png".into(),
                    data: PNG.into()
                },
                ToolImage {
                    media_type: "image/gif".into(),
                    data: gif
                },
            ]
        );
        let lines: Vec<&str> = rendered.text.lines().collect();
        assert_eq!(lines[0], "Two views:");
        assert!(
            lines[1].starts_with("[image: image/svg+xml, ")
                && lines[1]
                    .ends_with("not shown: the model takes PNG, JPEG, GIF and WebP images only]"),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].ends_with("not shown: its data is not valid base64]"),
            "{}",
            lines[2]
        );
    }

    #[test]
    fn images_share_the_output_cap_with_the_text() {
        // Each image is a PNG of about 0.4 MiB of base64; the third does not fit.
        let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
        bytes.resize(300 * 1024, 0);
        let big = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let result = CallToolResult::success(vec![
            ContentBlock::text("three screenshots"),
            ContentBlock::image(big.clone(), "image/png"),
            ContentBlock::image(big.clone(), "image/png"),
            ContentBlock::image(big.clone(), "image/png"),
        ]);
        let rendered = render_result(&result);
        assert_eq!(rendered.images.len(), 2);
        let total =
            rendered.text.len() + rendered.images.iter().map(|i| i.data.len()).sum::<usize>();
        assert!(total <= TOOL_OUTPUT_BYTES, "{total}");
        assert!(
            rendered
                .text
                .contains("not shown: larger than what is left of the 1 MiB"),
            "{}",
            rendered.text
        );

        // Text that fills the cap leaves no room; the text itself is cut as before.
        let result = CallToolResult::success(vec![
            ContentBlock::text("t".repeat(TOOL_OUTPUT_BYTES + 5)),
            ContentBlock::image(PNG, "image/png"),
        ]);
        let rendered = render_result(&result);
        assert!(rendered.images.is_empty());
        assert!(rendered.text.ends_with("bytes shown]"));
        assert!(rendered.text.len() <= TOOL_OUTPUT_BYTES + 100);

        // One image larger than the cap is a placeholder without being decoded.
        let huge = "A".repeat(TOOL_OUTPUT_BYTES + 4);
        let rendered = render_result(&CallToolResult::success(vec![ContentBlock::image(
            huge,
            "image/png",
        )]));
        assert!(rendered.images.is_empty());
        assert!(
            rendered
                .text
                .contains("larger than the 1 MiB a tool result may take"),
            "{}",
            rendered.text
        );
    }

    #[test]
    fn output_is_capped_with_a_marker() {
        let text = "a".repeat(TOOL_OUTPUT_BYTES + 10);
        let capped = cap_output(text);
        assert!(capped.starts_with(&"a".repeat(100)));
        assert!(capped.ends_with(&format!(
            "[output truncated: {TOOL_OUTPUT_BYTES} of {} bytes shown]",
            TOOL_OUTPUT_BYTES + 10
        )));
    }
}
