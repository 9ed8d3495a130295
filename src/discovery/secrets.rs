//! Refusing literal secrets in definitions (SPEC §3.2, FORMATS.md). Keys belong in the
//! environment; a definition only names the variable. No message here ever repeats a value.

use serde_json::{Map, Value};

use super::fields::Doc;
use super::placeholders::rewrite_dollar_forms;
use crate::definition::Segment;
use crate::definition::Template;

/// Field names (compared without case, `_` or `-`) that can only hold a credential.
const SECRET_FIELDS: &[&str] = &[
    "apikey",
    "apitoken",
    "token",
    "authtoken",
    "accesstoken",
    "bearertoken",
    "experimentalbearertoken",
    "authorization",
    "secret",
    "clientsecret",
    "password",
];

fn normalize(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether a field of this name would hold a credential.
pub(super) fn is_secret_field(key: &str) -> bool {
    SECRET_FIELDS.contains(&normalize(key).as_str())
}

/// Fails when `doc` sets a field that holds a credential. `place` prefixes the field
/// (`""` at the top level, `"mcp_servers.github: "` for a server); `advice` says what to do.
pub(super) fn reject_secret_fields(doc: Doc<'_>, place: &str, advice: &str) -> Result<(), String> {
    for (key, value) in doc.map() {
        if is_secret_field(key) && !value.is_null() && value != &Value::Bool(false) {
            return Err(format!(
                "{place}`{key}` holds a literal secret, which definitions must not contain \
                 (the value is not shown); {advice}"
            ));
        }
    }
    Ok(())
}

/// Keys whose values are not settings that could hold a credential: environment maps
/// (their keys are variable names, and literal values are allowed, see docs/decisions.md),
/// maps from headers to variable names, and tool switches or permission actions.
const NOT_SETTINGS: &[&str] = &[
    "env",
    "env_vars",
    "env_http_headers",
    "shell_environment_policy",
    "tools",
    "disallowed_tools",
    "disallowedTools",
    "permission",
    "enabled_tools",
    "enabledTools",
    "disabled_tools",
    "disabledTools",
];

/// Maps from HTTP header names to values.
const HEADER_MAPS: &[&str] = &["headers", "http_headers", "httpHeaders"];

/// Whether a value is taken from somewhere else rather than written here: a `${VAR}`
/// placeholder, or OpenCode's `{env:VAR}` and `{file:path}`.
fn is_reference(text: &str) -> bool {
    Template::parse(text).is_ok_and(|t| t.has_vars())
        || text.contains("{env:")
        || text.contains("{file:")
}

/// `text` with Copilot's `${{ secrets.VAR }}` and the shell's `$VAR` written as `${VAR}`,
/// so that they count as references here (a server entry in a format that does not read
/// those forms refuses them when it is parsed).
fn as_placeholders(text: &str) -> std::borrow::Cow<'_, str> {
    match rewrite_dollar_forms(text) {
        Ok(rewritten) if rewritten != text => std::borrow::Cow::Owned(rewritten),
        _ => std::borrow::Cow::Borrowed(text),
    }
}

/// The longest word a credential's value may write next to its references: room for a
/// scheme ("Bearer", "token") or a cookie name ("session"), less than any real key.
const MAX_LITERAL_WORD: usize = 7;

/// Whether `text` has a word longer than [`MAX_LITERAL_WORD`] in the characters keys are
/// made of; `sk-live-abc123${UNUSED}` has, `Bearer ${TOKEN}` has not.
fn has_key_like_word(text: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '/' | '-')))
        .any(|word| word.len() > MAX_LITERAL_WORD)
}

/// `text` without its `${VAR}`, `{env:VAR}` and `{file:path}` references.
fn without_references(text: &str) -> String {
    let mut rest = text;
    let mut out = String::with_capacity(text.len());
    loop {
        let next = ["${", "{env:", "{file:"]
            .iter()
            .filter_map(|open| rest.find(open))
            .min();
        let Some(start) = next else { break };
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

/// Whether a value set for a credential writes (part of) the credential itself: it has no
/// reference, or it has one next to key-like text.
fn writes_a_credential(text: &str) -> bool {
    let text = as_placeholders(text);
    !is_reference(&text) || has_key_like_word(&without_references(&text))
}

/// Whether `value`, set under a credential's name, is a credential written in the file.
fn is_literal_secret(value: &Value) -> bool {
    match value {
        Value::String(text) => !text.trim().is_empty() && writes_a_credential(text),
        Value::Number(_) => true,
        _ => false,
    }
}

/// Fails when a credential is written anywhere in `map`, at any depth: a field named like a
/// credential with a literal value (an OpenCode `options: {apiKey: …}`, a Codex
/// `[model_providers.X]` the file does not use, a disabled server), or a credential header
/// with a literal value. Unlike [`reject_secret_fields`] for fields this runtime reads, a
/// `${VAR}` (or `{env:VAR}`) value passes: it names a variable and holds no secret.
/// `place` prefixes the path in the message.
pub(super) fn reject_literal_secrets(
    map: &Map<String, Value>,
    place: &str,
    advice: &str,
) -> Result<(), String> {
    // (depth of the holding map, key, value), depth first, without recursion. `path` holds
    // the keys leading to the map being read; the message is built only for a finding.
    let mut stack: Vec<(usize, &str, &Value)> =
        map.iter().rev().map(|(k, v)| (0, k.as_str(), v)).collect();
    let mut path: Vec<&str> = Vec::new();
    let at = |path: &[&str]| {
        if path.is_empty() {
            place.to_owned()
        } else {
            format!("{place}{}: ", path.join("."))
        }
    };
    while let Some((depth, key, value)) = stack.pop() {
        path.truncate(depth);
        if NOT_SETTINGS.contains(&key) {
            continue;
        }
        if is_secret_field(key) && is_literal_secret(value) {
            return Err(format!(
                "{}`{key}` holds a literal secret, which definitions must not contain \
                 (the value is not shown); {advice}",
                at(&path)
            ));
        }
        match value {
            Value::Object(inner) if HEADER_MAPS.contains(&key) => {
                for (header, value) in inner {
                    // A malformed placeholder (`${TOKEN:-sk-…}`) counts as literal.
                    let literal = match value {
                        Value::String(text) => {
                            writes_a_credential(text)
                                || Template::parse(&as_placeholders(text)).is_err()
                        }
                        Value::Number(_) => true,
                        _ => false,
                    };
                    if literal && is_secret_header(header) {
                        return Err(format!(
                            "{}header `{header}` has a literal value (not shown); \
                             credentials must come from the environment: write it as \
                             \"Bearer ${{TOKEN_VAR}}\" or similar",
                            at(&path)
                        ));
                    }
                }
            }
            Value::Object(inner) => {
                path.push(key);
                stack.extend(inner.iter().rev().map(|(k, v)| (depth + 1, k.as_str(), v)));
            }
            Value::Array(items) => {
                // A list's items are values of the same key (`token: [...]`, Claude's
                // `mcpServers: [{name: config}]`).
                stack.extend(items.iter().rev().map(|v| (depth, key, v)));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether an HTTP header of this name carries a credential.
pub(super) fn is_secret_header(name: &str) -> bool {
    let n = normalize(name);
    n == "authorization"
        || n == "proxyauthorization"
        || n == "cookie"
        || n.contains("token")
        || n.contains("secret")
        || n.contains("apikey")
        || n.contains("password")
}

/// A credential header must come from the environment through a `${VAR}` placeholder.
pub(super) fn reject_literal_secret_header(
    place: &str,
    header: &str,
    value: &Template,
) -> Result<(), String> {
    let literal: String = value
        .segments()
        .iter()
        .filter_map(|segment| match segment {
            Segment::Literal(text) => Some(text.as_str()),
            Segment::Var(_) => None,
        })
        .collect::<Vec<_>>()
        .join(" ");
    if is_secret_header(header) && (!value.has_vars() || has_key_like_word(&literal)) {
        return Err(format!(
            "{place}header `{header}` has a literal value (not shown); credentials must come \
             from the environment: write it as \"Bearer ${{TOKEN_VAR}}\" or similar"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_fields_in_every_spelling() {
        for key in [
            "api_key",
            "apiKey",
            "API-KEY",
            "token",
            "auth_token",
            "bearer_token",
            "experimental_bearer_token",
            "authorization",
            "Authorization",
            "client_secret",
            "clientSecret",
        ] {
            assert!(is_secret_field(key), "{key}");
        }
        for key in [
            "env_key",
            "max_tokens",
            "bearer_token_env_var",
            "tokens",
            "name",
        ] {
            assert!(!is_secret_field(key), "{key}");
        }
    }

    #[test]
    fn rejection_never_echoes_the_value() {
        let v = json!({"name": "a", "api_key": "sk-live-123"});
        let err =
            reject_secret_fields(Doc::new(v.as_object().unwrap()), "", "use env_key").unwrap_err();
        assert!(err.contains("`api_key`") && err.contains("env_key"));
        assert!(!err.contains("sk-live-123"));
    }

    #[test]
    fn literal_secrets_are_found_at_any_depth_and_never_echoed() {
        let scan = |v: Value| {
            reject_literal_secrets(v.as_object().unwrap(), "", "use env_key")
                .err()
                .unwrap_or_default()
        };
        for (doc, found) in [
            (
                json!({"options": {"apiKey": "sk-ant-1"}}),
                "options: `apiKey`",
            ),
            (
                json!({"a": {"b": [{"c": {"token": 42}}]}}),
                "a.b.c: `token`",
            ),
            (json!({"x": {"token": ["sk-1"]}}), "x: `token`"),
            (
                json!({"p": {"headers": {"Authorization": "Bearer sk-1"}}}),
                "p: header",
            ),
            (
                json!({"p": {"headers": {"X-Api-Key": "${K:-sk-1}"}}}),
                "p: header",
            ),
        ] {
            let err = scan(doc);
            assert!(err.contains(found), "{err}");
            assert!(!err.contains("sk-") && !err.contains("42"), "{err}");
        }
        // A reference does not excuse a key written beside it; a number is a literal.
        for doc in [
            json!({"options": {"apiKey": "sk-live-abc123${UNUSED}"}}),
            json!({"p": {"enabled": false, "headers": {"Authorization": "Bearer sk-live-abc {env:X}"}}}),
            json!({"p": {"headers": {"X-Api-Key": 123456789012u64}}}),
        ] {
            let err = scan(doc.clone());
            assert!(!err.is_empty(), "{doc}");
            assert!(!err.contains("sk-") && !err.contains("123456"), "{err}");
        }
        for clean in [
            json!({"options": {"apiKey": "{env:ANTHROPIC_API_KEY}"}}),
            json!({"options": {"apiKey": "${ANTHROPIC_API_KEY}", "token": ""}}),
            json!({"s": {"env": {"API_KEY": "literal-allowed"}}}),
            json!({"s": {"env_http_headers": {"Authorization": "AUTH_VAR"}}}),
            json!({"permission": {"token": "deny"}, "tools": {"token": true}}),
            json!({"s": {"headers": {"Authorization": "Bearer ${T}", "Accept": "x"}}}),
            json!({"s": {"headers": {"Cookie": "session=${S}", "X-Token": "token {env:T}"}}}),
            json!({"mcp_servers": {"token": {"command": "x"}}}),
            json!({"shell_environment_policy": {"set": {"API_KEY": "x"}}}),
        ] {
            assert_eq!(scan(clean.clone()), "", "{clean}");
        }
    }

    #[test]
    fn credential_headers_need_placeholders() {
        let literal = Template::parse("Bearer abc123").unwrap();
        let placeholder = Template::parse("Bearer ${TOKEN}").unwrap();
        let beside = Template::parse("Bearer sk-live-abc ${UNUSED}").unwrap();
        assert!(
            reject_literal_secret_header("", "Authorization", &beside).is_err(),
            "a key beside a placeholder is still written in the file"
        );
        assert!(reject_literal_secret_header("", "Authorization", &literal).is_err());
        assert!(reject_literal_secret_header("", "X-API-Key", &literal).is_err());
        assert!(reject_literal_secret_header("", "authorization", &placeholder).is_ok());
        assert!(reject_literal_secret_header("", "Accept", &literal).is_ok());
        let err = reject_literal_secret_header("", "Authorization", &literal).unwrap_err();
        assert!(!err.contains("abc123"));
    }
}
