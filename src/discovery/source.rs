//! Reading one definition file and parsing it into a JSON object, whatever its syntax.
//!
//! Markdown files are YAML frontmatter between `---` fences, then a body; TOML files are one
//! table. Both end up as a `serde_json` object so the format modules share one set of field
//! readers. Parse errors carry the line and column in the file.

use std::fs::OpenOptions;
use std::io::Read;
use std::path::Path;

use crate::limits::{DEFINITION_FILE_BYTES, DEFINITION_NESTING};
use serde_json::{Map, Number, Value};

/// Reads a file as UTF-8 text of at most [`DEFINITION_FILE_BYTES`], without a leading byte-order mark.
/// Only regular files are read: a FIFO would block the read (and the whole load) forever.
pub(super) fn read_text(path: &Path) -> Result<String, String> {
    let unreadable = |e: std::io::Error| format!("cannot be read: {e}");
    if !std::fs::metadata(path).map_err(unreadable)?.is_file() {
        return Err(NOT_REGULAR.to_owned());
    }
    // Checked again on the open file, in case the path changed since: opening without
    // blocking means a FIFO put there in between cannot hold up the open either.
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(unreadable)?;
    let metadata = file.metadata().map_err(unreadable)?;
    if !metadata.is_file() {
        return Err(NOT_REGULAR.to_owned());
    }
    let len = metadata.len();
    if len > DEFINITION_FILE_BYTES {
        return Err(too_large(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // Read one byte past the limit so a file that grew since `metadata` is still caught.
    file.take(DEFINITION_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > DEFINITION_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    let mut text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "is not valid UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

const NOT_REGULAR: &str = "is not a regular file (a FIFO, socket or device), so it is not read";

fn too_large(len: u64) -> String {
    format!("is larger than 1 MiB ({len} bytes; the limit is {DEFINITION_FILE_BYTES})")
}

/// A Markdown file split at its frontmatter fences.
#[derive(Debug, PartialEq, Eq)]
pub struct Split<'a> {
    /// The text from the start of the file up to the closing fence, opening fence included,
    /// so that the YAML parser's line numbers are the file's.
    pub yaml: &'a str,
    /// Everything after the closing fence's line.
    pub body: &'a str,
}

/// Splits `---` fenced frontmatter from the body. The opening fence must be the first line;
/// the closing fence is the next line that is `---` (trailing spaces allowed).
pub fn split_frontmatter(text: &str) -> Result<Split<'_>, String> {
    let mut lines = LinesWithOffsets::new(text);
    match lines.next() {
        Some((_, line)) if is_fence(line) => {}
        _ => {
            return Err(
                "has no YAML frontmatter: the file must start with a `---` line".to_owned(),
            );
        }
    }
    for (start, line) in lines {
        if is_fence(line) {
            let after = start + line.len();
            let body_start = text[after..]
                .find('\n')
                .map_or(text.len(), |i| after + i + 1);
            return Ok(Split {
                yaml: &text[..start],
                body: &text[body_start..],
            });
        }
    }
    Err("has frontmatter that is never closed: no `---` line after the opening one".to_owned())
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches([' ', '\t', '\r']) == "---"
}

/// Lines without their `\n`, each with its byte offset.
struct LinesWithOffsets<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> LinesWithOffsets<'a> {
    fn new(text: &'a str) -> Self {
        LinesWithOffsets { text, pos: 0 }
    }
}

impl<'a> Iterator for LinesWithOffsets<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        let rest = &self.text[start..];
        let (line, advance) = match rest.find('\n') {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.pos += advance;
        Some((start, line))
    }
}

/// Parsed frontmatter, with a note when it needed the lenient retry.
#[derive(Debug)]
pub struct Frontmatter {
    pub fields: Map<String, Value>,
    /// Set when the YAML was invalid and loaded only after quoting plain values that
    /// contain `: ` (FORMATS.md); says where the original error was.
    pub lenient_note: Option<String>,
}

/// Parses frontmatter YAML (as returned in [`Split::yaml`]) into an object. An empty
/// frontmatter is an empty object.
pub fn parse_frontmatter(yaml: &str) -> Result<Frontmatter, String> {
    if let Some(offset) = bracket_depth_exceeded(yaml, DEFINITION_NESTING) {
        let (line, column) = line_column(yaml, offset);
        return Err(format!(
            "invalid YAML at line {line}, column {column}: brackets nest more than \
             {DEFINITION_NESTING} levels deep"
        ));
    }
    match parse_yaml_object(yaml) {
        Ok(fields) => Ok(Frontmatter {
            fields,
            lenient_note: None,
        }),
        Err(YamlFailure::Syntax(original)) => {
            let Some(quoted) = quote_colon_values(yaml) else {
                return Err(original);
            };
            match parse_yaml_object(&quoted) {
                Ok(fields) => Ok(Frontmatter {
                    fields,
                    lenient_note: Some(format!(
                        "frontmatter is not valid YAML ({original}); loaded after quoting \
                         values that contain \": \", as Claude Code and OpenCode do"
                    )),
                }),
                Err(_) => Err(original),
            }
        }
        Err(YamlFailure::Shape(message)) => Err(message),
    }
}

/// The byte offset where `[`/`{` nesting first exceeds `limit`, if it does.
fn bracket_depth_exceeded(text: &str, limit: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (offset, byte) in text.bytes().enumerate() {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(offset);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

enum YamlFailure {
    /// The text is not YAML: worth the lenient retry.
    Syntax(String),
    /// Valid YAML of the wrong shape: a retry would not help.
    Shape(String),
}

fn parse_yaml_object(yaml: &str) -> Result<Map<String, Value>, YamlFailure> {
    let value: yaml_serde::Value =
        yaml_serde::from_str(yaml).map_err(|e| YamlFailure::Syntax(describe_yaml_error(&e)))?;
    match yaml_to_json(value).map_err(YamlFailure::Shape)? {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(YamlFailure::Shape(format!(
            "frontmatter must be a YAML mapping of fields, not {}",
            describe_type(&other)
        ))),
    }
}

fn describe_yaml_error(e: &yaml_serde::Error) -> String {
    let text = e.to_string();
    match e.location() {
        Some(loc) => {
            // The library appends " at line L column C"; say it once, our way.
            let suffix = format!(" at line {} column {}", loc.line(), loc.column());
            let message = text.strip_suffix(&suffix).unwrap_or(&text);
            format!(
                "invalid YAML at line {}, column {}: {message}",
                loc.line(),
                loc.column()
            )
        }
        None => format!("invalid YAML: {text}"),
    }
}

/// The lenient retry of FORMATS.md: every top-level `key: value` line whose plain value
/// contains `: ` gets that value double-quoted. `None` when no line qualifies.
fn quote_colon_values(yaml: &str) -> Option<String> {
    let mut changed = false;
    let mut out = String::with_capacity(yaml.len() + 16);
    for line in yaml.split_inclusive('\n') {
        let (content, ending) = match line.strip_suffix('\n') {
            Some(c) => match c.strip_suffix('\r') {
                Some(c) => (c, "\r\n"),
                None => (c, "\n"),
            },
            None => (line, ""),
        };
        match quotable_value(content) {
            Some((key, value)) => {
                changed = true;
                out.push_str(key);
                out.push_str(": ");
                // A JSON string is a valid YAML double-quoted scalar.
                out.push_str(&Value::String(value.to_owned()).to_string());
                out.push_str(ending);
            }
            None => out.push_str(line),
        }
    }
    changed.then_some(out)
}

/// `Some((key, value))` for `key: value` at column 0 with a plain value containing `: `.
fn quotable_value(line: &str) -> Option<(&str, &str)> {
    let first = line.chars().next()?;
    if !(first.is_ascii_alphanumeric() || first == '_') {
        return None;
    }
    let (key, rest) = line.split_once(':')?;
    if !key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let value = rest.strip_prefix([' ', '\t'])?.trim();
    let plain = !value.starts_with([
        '"', '\'', '[', '{', '|', '>', '&', '*', '!', '#', '%', '@', '`',
    ]);
    (plain && value.contains(": ")).then_some((key, value))
}

/// Converts a TOML table to JSON. Datetimes become their text; non-finite floats (`inf`,
/// `nan`) become strings, as in YAML, so that a field expecting a number rejects them
/// rather than reading them as absent.
fn toml_table_to_json(table: toml::Table) -> Map<String, Value> {
    table
        .into_iter()
        .map(|(k, v)| (k, toml_to_json(v)))
        .collect()
}

fn toml_to_json(value: toml::Value) -> Value {
    use toml::Value as T;
    match value {
        T::String(s) => Value::String(s),
        T::Integer(i) => Value::Number(i.into()),
        T::Float(f) => Number::from_f64(f).map_or_else(
            // Spelt as TOML spells them (`f64`'s own text of a NaN is `NaN`).
            || {
                Value::String(if f.is_nan() {
                    "nan".into()
                } else {
                    f.to_string()
                })
            },
            Value::Number,
        ),
        T::Boolean(b) => Value::Bool(b),
        T::Datetime(d) => Value::String(d.to_string()),
        T::Array(items) => Value::Array(items.into_iter().map(toml_to_json).collect()),
        T::Table(table) => Value::Object(toml_table_to_json(table)),
    }
}

/// Converts YAML to JSON. Scalar keys become strings; a sequence or mapping as a key is an
/// error. Tags are dropped (their value kept). Non-finite floats become strings so that a
/// field expecting a number rejects them.
fn yaml_to_json(value: yaml_serde::Value) -> Result<Value, String> {
    use yaml_serde::Value as Y;
    Ok(match value {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Number(i.into())
            } else if let Some(u) = n.as_u64() {
                Value::Number(u.into())
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                Number::from_f64(f).map_or_else(|| Value::String(n.to_string()), Value::Number)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(
            items
                .into_iter()
                .map(yaml_to_json)
                .collect::<Result<_, _>>()?,
        ),
        Y::Mapping(mapping) => {
            let mut map = Map::with_capacity(mapping.len());
            for (k, v) in mapping {
                let key = match k {
                    Y::String(s) => s,
                    Y::Bool(b) => b.to_string(),
                    Y::Number(n) => n.to_string(),
                    Y::Null => "null".to_owned(),
                    _ => return Err("frontmatter has a key that is a list or mapping".to_owned()),
                };
                map.insert(key, yaml_to_json(v)?);
            }
            Value::Object(map)
        }
        Y::Tagged(tagged) => yaml_to_json(tagged.value)?,
    })
}

/// Parses a TOML document into an object. Errors give the line and column.
pub fn parse_toml(text: &str) -> Result<Map<String, Value>, String> {
    match toml::from_str::<toml::Table>(text) {
        Ok(table) => Ok(toml_table_to_json(table)),
        Err(e) => {
            let message = e.message().trim().to_owned();
            Err(match e.span() {
                Some(span) => {
                    let (line, column) = line_column(text, span.start);
                    format!("invalid TOML at line {line}, column {column}: {message}")
                }
                None => format!("invalid TOML: {message}"),
            })
        }
    }
}

/// Parses a JSON document (`.mcp.json`) into an object.
pub fn parse_json_object(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("is not a JSON object".to_owned()),
        Err(e) => Err(format!(
            "invalid JSON at line {}, column {}: {}",
            e.line(),
            e.column(),
            strip_json_position(&e.to_string())
        )),
    }
}

fn strip_json_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |i| &message[..i])
}

/// 1-based line and column (in characters) of a byte offset.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// A short name for a JSON value's type, for error messages.
pub(super) fn describe_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.md");
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c_path` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        assert_eq!(read_text(&path).unwrap_err(), NOT_REGULAR);
        assert!(
            read_text(dir.path()).is_err(),
            "a directory is no file either"
        );
    }

    #[test]
    fn splits_frontmatter_and_keeps_file_lines() {
        let s = split_frontmatter("---\nname: a\n---\nbody\n").unwrap();
        assert_eq!(s.yaml, "---\nname: a\n");
        assert_eq!(s.body, "body\n");
        let s = split_frontmatter("---\r\nname: a\r\n--- \r\n\r\nbody").unwrap();
        assert_eq!(s.body, "\r\nbody");
        let s = split_frontmatter("---\n---").unwrap();
        assert_eq!(s.body, "");
    }

    #[test]
    fn frontmatter_must_open_and_close() {
        assert!(
            split_frontmatter("name: a\n")
                .unwrap_err()
                .contains("no YAML frontmatter")
        );
        assert!(split_frontmatter("\n---\nname: a\n---\n").is_err());
        assert!(
            split_frontmatter("---\nname: a\n# Missing closing ---\n")
                .unwrap_err()
                .contains("never closed")
        );
        assert!(split_frontmatter("").is_err());
    }

    #[test]
    fn yaml_errors_give_file_line_and_column() {
        let text = "---\nname: a\nmodel: [x\n---\nbody";
        let split = split_frontmatter(text).unwrap();
        let err = parse_frontmatter(split.yaml).unwrap_err();
        assert!(err.starts_with("invalid YAML at line 4, column 1"), "{err}");
    }

    #[test]
    fn lenient_retry_quotes_values_with_colons() {
        let yaml = "---\nname: a\ndescription: Use when: the user asks\n";
        let fm = parse_frontmatter(yaml).unwrap();
        assert_eq!(fm.fields["description"], "Use when: the user asks");
        let note = fm.lenient_note.unwrap();
        assert!(note.contains("line 3, column 22"), "{note}");
    }

    #[test]
    fn lenient_retry_does_not_hide_other_errors() {
        let err = parse_frontmatter("---\nname: [a\n").unwrap_err();
        assert!(err.contains("line"), "{err}");
        assert!(
            parse_frontmatter("---\n- a\n- b\n")
                .unwrap_err()
                .contains("mapping")
        );
    }

    #[test]
    fn empty_frontmatter_is_an_empty_object() {
        assert!(parse_frontmatter("---\n").unwrap().fields.is_empty());
    }

    #[test]
    fn exponential_aliases_are_refused_quickly() {
        let mut yaml = String::from("---\na: &a [x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for name in 'b'..='j' {
            let refs = vec![format!("*{prev}"); 9].join(", ");
            yaml.push_str(&format!("{name}: &{name} [{refs}]\n"));
            prev = name;
        }
        // 9^10 nodes if expanded: the parser's repetition limit must refuse it instead.
        let err = parse_frontmatter(&yaml).unwrap_err();
        assert!(err.contains("invalid YAML"), "{err}");
    }

    #[test]
    fn deep_brackets_are_refused_before_the_parser_scans_them() {
        let deep = format!(
            "---\na: {}1{}\n",
            "{b: ".repeat(100_000),
            "}".repeat(100_000)
        );
        let err = parse_frontmatter(&deep).unwrap_err();
        assert!(
            err.contains("line 2, column 1028: brackets nest more than 256"),
            "{err}"
        );
        let fine = format!("---\na: {}1{}\n", "[".repeat(100), "]".repeat(100));
        assert!(parse_frontmatter(&fine).is_ok());
        let balanced_many = format!("---\na: \"{}\"\n", "[]".repeat(10_000));
        assert!(parse_frontmatter(&balanced_many).is_ok());
    }

    #[test]
    fn toml_errors_give_line_and_column() {
        let err = parse_toml("name = \"a\"\nmodel = [\n").unwrap_err();
        assert!(err.starts_with("invalid TOML at line 2"), "{err}");
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncé\nx", 6), (2, 3));
        assert_eq!(line_column("", 0), (1, 1));
    }
}
