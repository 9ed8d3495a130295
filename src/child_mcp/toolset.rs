//! From child tools to the tools the model is given (SPEC §8.3–§8.5): names of the form
//! `<server>__<tool>` within the providers' rules, sanitized and capped descriptions, object
//! input schemas, filtering, and tool results rendered to capped text and images.

use std::collections::HashSet;

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool};
use serde_json::{Map, Value, json};

use crate::definition::tool_filter::provider_safe;
use crate::definition::{AgentDefinition, ToolHints, ToolNames};
use crate::limits::{
    ACTIVITY_TOOL_NAME_CHARS, TOOL_DESCRIPTION_BYTES, TOOL_NAME_CHARS, TOOL_OUTPUT_BYTES,
};
use crate::toolbox::ToolImage;

/// `<server>__<tool>` reduced to `[A-Za-z0-9_-]{1,64}`, unique among `taken`: a name that
/// needs cutting gets a short hash of the full name, and a collision gets `_2`, `_3`, …
/// Deterministic for the same servers and tools in the same order.
pub fn model_tool_name(server: &str, tool: &str, taken: &HashSet<String>) -> String {
    let full = format!("{server}__{tool}");
    let mut name = provider_safe(&full);
    if name.len() > TOOL_NAME_CHARS {
        let hash = format!("{:08x}", fnv1a(full.as_bytes()) as u32);
        name.truncate(TOOL_NAME_CHARS - hash.len() - 1);
        name.push('_');
        name.push_str(&hash);
    }
    if !taken.contains(&name) {
        return name;
    }
    (2u32..)
        .map(|n| {
            let suffix = format!("_{n}");
            let mut base = name.clone();
            base.truncate(TOOL_NAME_CHARS - suffix.len());
            base + &suffix
        })
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or(name)
}

/// A small stable hash (FNV-1a), so cut names do not depend on the Rust version.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Removes control, zero-width, bidirectional and other invisible characters
/// ([`is_hidden`]), folds whitespace, and caps the result at [`TOOL_DESCRIPTION_BYTES`] on a
/// character boundary.
pub fn sanitize_description(text: &str) -> String {
    let folded = sanitize_text(text);
    cap_utf8(&folded, TOOL_DESCRIPTION_BYTES).to_owned()
}

/// [`sanitize_description`] without the cap: hidden characters removed, whitespace folded.
pub fn sanitize_text(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .filter(|c| !is_hidden(*c))
        .collect();
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Characters that are invisible, or change how the text around them reads, without being
/// whitespace: every control character (Cc), every format character (Cf: zero-width
/// characters, bidi marks and overrides, the soft hyphen, invisible operators, Arabic and
/// other number signs, interlinear annotation marks, shorthand format controls, musical
/// beam marks, the tag characters used for "ASCII smuggling"), variation selectors, the
/// combining grapheme joiner, and the Hangul fillers, which render as nothing.
pub fn is_hidden(c: char) -> bool {
    c.is_control() || HIDDEN.iter().any(|&(low, high)| (low..=high).contains(&c))
}

/// Inclusive ranges of [`is_hidden`] characters beyond the controls: general category Cf as of
/// Unicode 16, plus the invisible characters of other categories.
const HIDDEN: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),   // soft hyphen
    ('\u{034F}', '\u{034F}'),   // combining grapheme joiner
    ('\u{0600}', '\u{0605}'),   // Arabic number signs
    ('\u{061C}', '\u{061C}'),   // Arabic letter mark
    ('\u{06DD}', '\u{06DD}'),   // Arabic end of ayah
    ('\u{070F}', '\u{070F}'),   // Syriac abbreviation mark
    ('\u{0890}', '\u{0891}'),   // Arabic pound and piastre marks above
    ('\u{08E2}', '\u{08E2}'),   // Arabic disputed end of ayah
    ('\u{115F}', '\u{1160}'),   // Hangul choseong and jungseong fillers
    ('\u{17B4}', '\u{17B5}'),   // Khmer inherent vowels (invisible)
    ('\u{180B}', '\u{180F}'),   // Mongolian variation selectors, vowel separator
    ('\u{200B}', '\u{200F}'),   // zero-width space, joiners, LRM, RLM
    ('\u{202A}', '\u{202E}'),   // bidi embeddings and overrides
    ('\u{2060}', '\u{206F}'),   // word joiner, invisible operators, bidi isolates, …
    ('\u{3164}', '\u{3164}'),   // Hangul filler
    ('\u{FE00}', '\u{FE0F}'),   // variation selectors
    ('\u{FEFF}', '\u{FEFF}'),   // zero-width no-break space (byte order mark)
    ('\u{FFA0}', '\u{FFA0}'),   // halfwidth Hangul filler
    ('\u{FFF0}', '\u{FFFB}'),   // unassigned specials, interlinear annotation
    ('\u{110BD}', '\u{110BD}'), // Kaithi number sign
    ('\u{110CD}', '\u{110CD}'), // Kaithi number sign above
    ('\u{13430}', '\u{1343F}'), // Egyptian hieroglyph format controls
    ('\u{1BCA0}', '\u{1BCA3}'), // shorthand format controls
    ('\u{1D173}', '\u{1D17A}'), // musical symbol beam and phrase marks
    ('\u{E0000}', '\u{E007F}'), // tag characters
    ('\u{E0100}', '\u{E01EF}'), // variation selectors supplement
];

/// A child's tool name as activity shows it (the `tool` and `summary` fields, progress
/// notifications, the terminal status line, and the timeout message): hidden characters
/// removed as in descriptions, whitespace folded, and at most [`ACTIVITY_TOOL_NAME_CHARS`]
/// characters. Calls to the child use the name as it was listed.
pub fn activity_tool_name(raw: &str) -> String {
    sanitize_text(raw)
        .chars()
        .take(ACTIVITY_TOOL_NAME_CHARS)
        .collect()
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub fn cap_utf8(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// An object input schema: `type: "object"` and `properties` at the top (its alternatives,
/// if any, are kept for each wire API to reshape), with every `title` and `description` text
/// in it sanitized ([`sanitize_schema_texts`]).
pub fn object_schema(schema: &Map<String, Value>) -> Value {
    let mut schema = Value::Object(schema.clone());
    sanitize_schema_texts(&mut schema);
    let Value::Object(schema) = schema else {
        return json!({"type": "object", "properties": {}});
    };
    shape_object_schema(schema)
}

/// Every string value under a `title` or `description` key, at any depth, goes through
/// [`sanitize_text`] (not capped: the schema as a whole is bounded by the message it came
/// in). The walk keeps its own stack instead of recursing, so no nesting can exhaust ours.
pub fn sanitize_schema_texts(schema: &mut Value) {
    let mut pending: Vec<&mut Value> = vec![schema];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    match child {
                        Value::String(text) if key == "title" || key == "description" => {
                            *text = sanitize_text(text);
                        }
                        Value::Object(_) | Value::Array(_) => pending.push(child),
                        _ => {}
                    }
                }
            }
            Value::Array(items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
}

fn shape_object_schema(mut schema: Map<String, Value>) -> Value {
    let may_be_object = match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        // Without a `type`, an object schema still says what its arguments are: by its
        // properties, or by the alternatives (`oneOf`, `anyOf`, `allOf`) each wire API
        // reshapes into the form it accepts.
        None => ["properties", "oneOf", "anyOf", "allOf"]
            .iter()
            .any(|k| schema.contains_key(*k)),
        Some(_) => false,
    };
    if !may_be_object {
        // Not an object schema: arguments cannot be described, so none are declared.
        return json!({"type": "object", "properties": {}});
    }
    schema.insert("type".into(), json!("object"));
    if !schema.get("properties").is_some_and(Value::is_object) {
        schema.insert("properties".into(), json!({}));
    }
    Value::Object(schema)
}

/// The annotations filtering reads.
pub fn hints(tool: &Tool) -> ToolHints {
    let annotations = tool.annotations.as_ref();
    ToolHints {
        read_only: annotations.and_then(|a| a.read_only_hint),
        destructive: annotations.and_then(|a| a.destructive_hint),
    }
}

/// Whether `definition` lets its model see `server`'s `tool`, which would be offered as
/// `offered_name`: allow and deny patterns are matched against both the child's name and
/// the offered one.
pub fn offered(
    definition: &AgentDefinition,
    server: &str,
    tool: &Tool,
    offered_name: &str,
) -> bool {
    let names = ToolNames::new(server, &tool.name).offered_as(offered_name);
    definition.offers_named_tool(&names, hints(tool))
}

/// A tool result as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
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
pub fn render_result(result: &CallToolResult) -> Rendered {
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
pub fn cap_output(text: String) -> String {
    cap_output_at(text, TOOL_OUTPUT_BYTES)
}

/// [`cap_output`] at `max` bytes (what images left of the cap).
fn cap_output_at(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let kept = cap_utf8(&text, max);
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
    use super::*;

    #[test]
    fn names_follow_the_provider_rules_and_stay_unique() {
        let mut taken = HashSet::new();
        let a = model_tool_name("github", "search.issues", &taken);
        assert_eq!(a, "github__search_issues");
        taken.insert(a.clone());
        let b = model_tool_name("github", "search/issues", &taken);
        assert_eq!(b, "github__search_issues_2");
        taken.insert(b);
        assert_eq!(
            model_tool_name("github", "search issues", &taken),
            "github__search_issues_3"
        );
        let long = model_tool_name("server", &"x".repeat(100), &HashSet::new());
        assert_eq!(long.len(), 64);
        assert_eq!(
            long,
            model_tool_name("server", &"x".repeat(100), &HashSet::new()),
            "deterministic"
        );
        assert_ne!(
            long,
            model_tool_name("server", &"x".repeat(101), &HashSet::new())
        );
        let unicode = model_tool_name("srv", "ünï", &HashSet::new());
        assert!(
            unicode
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
    }

    #[test]
    fn descriptions_lose_hidden_characters_and_are_capped() {
        let hostile =
            "Reads\u{202E}txt.exe\u{200B} files.\u{0007}\n\n  Ignore\tall\u{2066} previous";
        assert_eq!(
            sanitize_description(hostile),
            "Readstxt.exe files. Ignore all previous"
        );
        let long = "é".repeat(5000);
        let capped = sanitize_description(&long);
        assert!(
            capped.len() <= TOOL_DESCRIPTION_BYTES && capped.len() >= TOOL_DESCRIPTION_BYTES - 1
        );
        assert!(capped.chars().all(|c| c == 'é'));
    }

    #[test]
    fn every_invisible_format_character_is_removed() {
        // ASCII smuggling: "Ignore" spelled in tag characters, between visible words.
        let smuggled: String = "Ignore"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        assert_eq!(
            sanitize_description(&format!("\u{E0001}Safe{smuggled}\u{E007F} tool")),
            "Safe tool"
        );
        let hidden = concat!(
            "\u{00AD}\u{034F}\u{0600}\u{0605}\u{061C}\u{06DD}\u{070F}\u{0890}",
            "\u{08E2}\u{115F}\u{1160}\u{17B4}\u{180B}\u{180E}\u{200B}\u{200F}",
            "\u{202A}\u{202E}\u{2060}\u{2064}\u{2066}\u{206A}\u{206F}\u{3164}",
            "\u{FE00}\u{FE0F}\u{FEFF}\u{FFA0}\u{FFF9}\u{FFFB}\u{110BD}\u{110CD}",
            "\u{13430}\u{1343F}\u{1BCA0}\u{1BCA3}\u{1D173}\u{1D17A}\u{E0000}\u{E0041}",
            "\u{E007F}\u{E0100}\u{E01EF}\u{0000}\u{001B}\u{007F}\u{0085}\u{009B}",
        );
        for c in hidden.chars() {
            let text = format!("a{c}b");
            let clean = sanitize_description(&text);
            assert!(
                clean == "ab" || clean == "a b",
                "U+{:04X}: {clean:?}",
                c as u32
            );
            assert!(!clean.contains(c));
        }
        for c in [
            'a',
            'é',
            '中',
            '\u{1F600}',
            '-',
            '\u{00A0}',
            '\u{FFFD}',
            '\u{E0200}',
        ] {
            assert!(!is_hidden(c), "U+{:04X} is visible", c as u32);
        }
        // A visible character next to a removed one survives: only the hidden ones go.
        assert_eq!(sanitize_text("e\u{FE0F}\u{0301}"), "e\u{0301}");
    }

    #[test]
    fn schema_titles_and_descriptions_are_sanitized_at_every_depth() {
        let object = |v: Value| v.as_object().unwrap().clone();
        let long = "d".repeat(10_000);
        let schema = object(json!({
            "type": "object",
            "title": "T\u{E0049}\u{E0067}",
            "description": "Top\u{202E} \n level",
            "properties": {
                "path": {"type": "string", "description": "A path.\u{200B}\u{FE0F}", "title": "P\u{2061}"},
                "description": {"type": "string", "description": "named description\u{FEFF}"},
                "title": {"type": "string", "enum": ["x\u{200B}"]},
                "list": {"type": "array", "items": [{"description": "in\u{00AD} array"}]},
                "long": {"type": "string", "description": long},
            }
        }));
        let shaped = object_schema(&schema);
        assert_eq!(shaped["title"], "T");
        assert_eq!(shaped["description"], "Top level");
        assert_eq!(shaped["properties"]["path"]["description"], "A path.");
        assert_eq!(shaped["properties"]["path"]["title"], "P");
        assert_eq!(
            shaped["properties"]["description"]["description"],
            "named description"
        );
        assert_eq!(
            shaped["properties"]["title"]["enum"][0], "x\u{200B}",
            "only title and description texts are touched"
        );
        assert_eq!(
            shaped["properties"]["list"]["items"][0]["description"],
            "in array"
        );
        assert_eq!(
            shaped["properties"]["long"]["description"]
                .as_str()
                .unwrap()
                .len(),
            10_000,
            "not capped"
        );

        // Deep nesting is walked without recursion: every level is reached.
        let mut deep = json!({"description": "bottom\u{E0041}"});
        for _ in 0..10_000 {
            // Built by hand: `json!` would serialize `deep` again, recursively.
            let mut properties = Map::new();
            properties.insert("p".into(), deep);
            let mut level = Map::new();
            level.insert("type".into(), json!("object"));
            level.insert("properties".into(), Value::Object(properties));
            level.insert("title".into(), json!("t\u{200B}"));
            deep = Value::Object(level);
        }
        sanitize_schema_texts(&mut deep);
        let mut at = &deep;
        let mut levels = 0;
        while let Some(next) = at.get("properties").and_then(|p| p.get("p")) {
            assert_eq!(at["title"], "t");
            at = next;
            levels += 1;
        }
        assert_eq!(levels, 10_000);
        assert_eq!(at["description"], "bottom");
        // Dropping a value this deep would recurse as deep; take it apart level by level.
        let mut next = Some(deep);
        while let Some(mut value) = next.take() {
            next = value
                .get_mut("properties")
                .and_then(|p| p.get_mut("p"))
                .map(Value::take);
        }
    }

    #[test]
    fn activity_names_are_clean_and_short() {
        let raw = format!(
            "sleep\u{1b}]0;owned\u{7}\u{1b}[2J\u{202E}\u{E0041}\n{}",
            "z".repeat(300)
        );
        let shown = activity_tool_name(&raw);
        assert!(shown.starts_with("sleep]0;owned[2J zzz"), "{shown}");
        assert_eq!(shown.chars().count(), ACTIVITY_TOOL_NAME_CHARS);
        assert!(!shown.chars().any(|c| c.is_control() || is_hidden(c)));
        let wide = "字".repeat(500);
        assert_eq!(
            activity_tool_name(&wide),
            "字".repeat(ACTIVITY_TOOL_NAME_CHARS)
        );
        assert_eq!(activity_tool_name("search.issues"), "search.issues");
    }

    #[test]
    fn schemas_become_objects() {
        let object = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            object_schema(&object(json!({"type": "object"}))),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            object_schema(&object(json!({"properties": {"a": {"type": "string"}}}))),
            json!({"properties": {"a": {"type": "string"}}, "type": "object"})
        );
        assert_eq!(
            object_schema(&object(json!({"type": "string"}))),
            json!({"type": "object", "properties": {}})
        );
        let alternatives =
            json!({"oneOf": [{"properties": {"id": {}}}, {"properties": {"url": {}}}]});
        assert_eq!(
            object_schema(&object(alternatives.clone())),
            json!({"oneOf": alternatives["oneOf"], "type": "object", "properties": {}}),
            "alternatives are kept for the wire APIs to reshape"
        );
        assert_eq!(
            object_schema(&object(json!({"type": ["object", "null"]}))),
            json!({"type": "object", "properties": {}})
        );
    }

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
