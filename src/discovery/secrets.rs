//! Refusing literal secrets in definitions (SPEC §3.2, FORMATS.md). Keys belong in the
//! environment; a definition only names the variable. No message here ever repeats a value.

use serde_json::Value;

use super::fields::Doc;
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
pub fn is_secret_field(key: &str) -> bool {
    SECRET_FIELDS.contains(&normalize(key).as_str())
}

/// Fails when `doc` sets a field that holds a credential. `place` prefixes the field
/// (`""` at the top level, `"mcp_servers.github: "` for a server); `advice` says what to do.
pub fn reject_secret_fields(doc: Doc<'_>, place: &str, advice: &str) -> Result<(), String> {
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

/// Whether an HTTP header of this name carries a credential.
pub fn is_secret_header(name: &str) -> bool {
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
pub fn reject_literal_secret_header(
    place: &str,
    header: &str,
    value: &Template,
) -> Result<(), String> {
    if is_secret_header(header) && !value.has_vars() {
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
    fn credential_headers_need_placeholders() {
        let literal = Template::parse("Bearer abc123").unwrap();
        let placeholder = Template::parse("Bearer ${TOKEN}").unwrap();
        assert!(reject_literal_secret_header("", "Authorization", &literal).is_err());
        assert!(reject_literal_secret_header("", "X-API-Key", &literal).is_err());
        assert!(reject_literal_secret_header("", "authorization", &placeholder).is_ok());
        assert!(reject_literal_secret_header("", "Accept", &literal).is_ok());
        let err = reject_literal_secret_header("", "Authorization", &literal).unwrap_err();
        assert!(!err.contains("abc123"));
    }
}
