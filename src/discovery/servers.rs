//! Child MCP server configurations (SPEC §8.1) in every spelling the formats use: the
//! canonical map, Claude's list of `{name: config}` maps and `.mcp.json` names, Codex's
//! `[mcp_servers.NAME]` tables with their extra keys (FORMATS.md §3), and the entries of
//! Copilot's `mcp-servers` and Gemini's `mcp_servers` (a [`Dialect`] each); and the built-in
//! `workspace` server, `workspace: {builtin: workspace}`, whose name no other server may
//! take (SPEC §8.6).

use super::field_names::{self as fields, Field};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::fields::{Doc, wrong_type};
use super::placeholders::{copilot_secret_name, rewrite_dollar_forms};
use super::referenced::ReferencedFiles;
use super::secrets::{reject_literal_secret_header, reject_literal_secrets, reject_secret_fields};
use super::unknown_fields::note_server_near_misses;
use crate::definition::is_env_var_name;
use crate::definition::{BuiltinServer, ChildServerConfig, ChildTransport, Template, ValueSource};
use crate::definition::{EndpointUse, check_endpoint};
use crate::limits::{CHILD_CALL_TIMEOUT, CHILD_STARTUP_TIMEOUT};

const SERVER_SECRET_ADVICE: &str = "put the credential in an environment variable and pass it \
    with a ${VAR} placeholder in `env` or `headers` (or `bearer_token_env_var`)";

/// How one tool writes a server entry: the keys that differ from the canonical spelling.
/// Every dialect reads the canonical keys too.
pub(super) struct Dialect {
    /// `type` values that mean stdio.
    stdio_types: &'static [&'static str],
    enabled_tools: Field,
    disabled_tools: Field,
    url: Field,
    /// A per-call timeout written in milliseconds.
    call_timeout_ms: Field,
    /// `${{ secrets.X }}`, `$X` and Copilot's bare `COPILOT_MCP_X` read as `${X}` in `env`
    /// and header values.
    dollar_forms: bool,
    /// The keys of sign-in flows and transports this tool has and this runtime refuses.
    refused: &'static [Field],
}

/// The canonical, Claude, Codex and OpenCode entries, and `.mcp.json`'s.
pub(super) const STANDARD: Dialect = Dialect {
    stdio_types: &["stdio"],
    enabled_tools: fields::SERVER_ENABLED_TOOLS,
    disabled_tools: fields::SERVER_DISABLED_TOOLS,
    url: fields::SERVER_URL,
    call_timeout_ms: &[],
    dollar_forms: false,
    refused: &[],
};

/// GitHub Copilot's `mcp-servers` (the cloud agent's and the CLI's MCP configuration):
/// `type: local`, the server's `tools`, GitHub's placeholders.
pub(super) const COPILOT: Dialect = Dialect {
    stdio_types: &["stdio", "local"],
    enabled_tools: fields::COPILOT_SERVER_TOOLS,
    url: fields::SERVER_URL,
    dollar_forms: true,
    refused: &[fields::SERVER_SIGN_IN],
    ..STANDARD
};

/// The Gemini CLI's `mcp_servers`: `include_tools` / `exclude_tools`, `http_url`, a
/// `timeout` in milliseconds, and `tcp` (WebSocket), which is refused.
pub(super) const GEMINI: Dialect = Dialect {
    stdio_types: &["stdio"],
    enabled_tools: fields::GEMINI_SERVER_INCLUDE,
    disabled_tools: fields::GEMINI_SERVER_EXCLUDE,
    url: fields::GEMINI_SERVER_URL,
    call_timeout_ms: fields::GEMINI_SERVER_TIMEOUT_MS,
    dollar_forms: true,
    refused: &[fields::SERVER_SIGN_IN, fields::SERVER_TCP],
};

/// Parses a definition's server list or map. Disabled servers are dropped; `caveats`
/// collects accepted-with-a-warning notes.
pub(super) fn parse_servers(
    field: &str,
    value: &Value,
    files: &ReferencedFiles,
    dialect: &Dialect,
    caveats: &mut Vec<String>,
) -> Result<BTreeMap<String, ChildServerConfig>, String> {
    let mut entries: Vec<(String, String, &Value)> = Vec::new();
    let mut referenced: Vec<String> = Vec::new();
    match value {
        Value::Object(map) => {
            for (name, config) in map {
                entries.push((name.clone(), format!("{field}.{name}: "), config));
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::String(name) => referenced.push(name.clone()),
                    Value::Object(map) if map.len() == 1 => {
                        for (name, config) in map {
                            entries.push((name.clone(), format!("{field}.{name}: "), config));
                        }
                    }
                    other => {
                        return Err(format!(
                            "`{field}` entries must be a server name or a one-key mapping \
                             `{{name: config}}`, not {}",
                            super::source::describe_type(other)
                        ));
                    }
                }
            }
        }
        other => return Err(wrong_type(field, "a mapping or a list of servers", other)),
    }

    let mut servers = BTreeMap::new();
    let mut add = |name: String, config: Option<ChildServerConfig>| -> Result<(), String> {
        check_server_name(field, &name)?;
        check_builtin_name(field, &name, config.as_ref())?;
        if servers.contains_key(&name) {
            return Err(format!("`{field}` defines the server `{name}` twice"));
        }
        if let Some(config) = config {
            servers.insert(name, config);
        }
        Ok(())
    };
    for (name, place, config) in entries {
        let parsed = parse_server(&place, config, dialect, caveats)?;
        add(name, parsed)?;
    }
    for name in referenced {
        let mcp_json = files.mcp_json().map_err(|e| {
            format!("`{field}` names the server `{name}`, but the workspace's .mcp.json {e}")
        })?;
        let config = mcp_json.get(&name).ok_or_else(|| {
            format!(
                "`{field}` names the server `{name}`, which the workspace's .mcp.json \
                 does not define"
            )
        })?;
        let parsed = parse_server(
            &format!(".mcp.json server `{name}`: "),
            config,
            &STANDARD,
            caveats,
        )?;
        add(name, parsed)?;
    }
    Ok(servers)
}

/// Server names become tool-name prefixes, so they keep to letters, digits, `-` and `_`.
fn check_server_name(field: &str, name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{field}` has the server name {name:?}; use 1 to 64 letters, digits, `-` or `_`"
        ))
    }
}

/// The built-ins have fixed names: a definition's own server may not take one, and a
/// built-in may not be renamed (its tools are `workspace__read` … everywhere).
fn check_builtin_name(
    field: &str,
    name: &str,
    config: Option<&ChildServerConfig>,
) -> Result<(), String> {
    let workspace = BuiltinServer::Workspace;
    match config.and_then(ChildServerConfig::builtin) {
        Some(builtin) if builtin.name() != name => Err(format!(
            "`{field}` names the built-in `{}` server `{name}`; it must be named `{}`",
            builtin.name(),
            builtin.name()
        )),
        Some(_) => Ok(()),
        None if name == workspace.name() => Err(format!(
            "`{field}` defines a server named `{name}`, a name reserved for the built-in \
             workspace server (read, list, glob, grep, edit and write over the workspace, \
             SPEC §8.6); rename this server, or write `{name}: {{builtin: {name}}}` to use the \
             built-in one"
        )),
        None => Ok(()),
    }
}

/// `builtin: NAME` and the keys that may go with it.
fn parse_builtin(place: &str, doc: Doc<'_>, value: &Value) -> Result<ChildTransport, String> {
    let err = |e: String| format!("{place}{e}");
    let name = value.as_str().ok_or_else(|| {
        err(wrong_type(
            "builtin",
            "the name of a built-in server",
            value,
        ))
    })?;
    let server = BuiltinServer::parse(name).ok_or_else(|| {
        err(format!(
            "`builtin: {name}` is not a built-in server; the only one is `workspace`"
        ))
    })?;
    let transport_keys = fields::spellings(&[fields::SERVER_TYPE])
        .chain(fields::spellings(STDIO_KEYS))
        .chain(fields::spellings(HTTP_KEYS));
    for key in transport_keys {
        if doc.has(key) {
            return Err(err(format!(
                "`{key}` does not apply to the built-in `{name}` server, which this program \
                 starts itself"
            )));
        }
    }
    Ok(ChildTransport::Builtin(server))
}

const STDIO_KEYS: &[Field] = &[
    fields::SERVER_COMMAND,
    fields::SERVER_ARGS,
    fields::SERVER_ENV,
    fields::SERVER_ENV_VARS,
    fields::SERVER_CWD,
];
const HTTP_KEYS: &[Field] = &[
    fields::SERVER_URL,
    fields::SERVER_HEADERS,
    fields::SERVER_ENV_HTTP_HEADERS,
    fields::SERVER_BEARER_TOKEN_ENV_VAR,
];

/// Parses one server. `None` means the server is disabled (`enabled: false`).
pub(super) fn parse_server(
    place: &str,
    value: &Value,
    dialect: &Dialect,
    caveats: &mut Vec<String>,
) -> Result<Option<ChildServerConfig>, String> {
    let Value::Object(map) = value else {
        return Err(format!(
            "{place}a server must be a mapping, not {}",
            super::source::describe_type(value)
        ));
    };
    let doc = Doc::new(map);
    let err = |e: String| format!("{place}{e}");

    // Before the secret scan: a sign-in block holds a `client_secret`, and what matters is
    // that the flow cannot be run at all.
    if let Some(key) = fields::spellings(dialect.refused).find(|key| doc.has(key)) {
        return Err(err(if key == "tcp" {
            "`tcp` (a WebSocket server) is not supported; this runtime speaks stdio and \
             streamable HTTP (`url`)"
                .to_owned()
        } else {
            format!(
                "`{key}` is not supported: this runtime does not run sign-in flows; pass a \
                 token in `headers` with a ${{VAR}} placeholder"
            )
        }));
    }

    // A disabled server is never started, but a credential written in it is still a
    // credential in the file.
    reject_secret_fields(doc, place, SERVER_SECRET_ADVICE)?;
    let disabled = doc.bool(fields::SERVER_ENABLED).map_err(err)? == Some(false)
        || doc.bool(fields::SERVER_DISABLED).map_err(err)? == Some(true);
    let builtin = doc.find(fields::SERVER_BUILTIN).map_err(err)?;
    if disabled && builtin.is_some() {
        return Err(err(
            "a built-in server cannot be disabled; deny its tools instead (`disallowed_tools: \
             [\"workspace__*\"]`, or Claude's `disallowedTools: Read, Grep, Glob, LS`)"
                .into(),
        ));
    }
    if disabled {
        reject_literal_secrets(map, place, SERVER_SECRET_ADVICE)?;
        return Ok(None);
    }
    reject_unsupported(place, doc, caveats)?;
    note_server_near_misses(doc, place, caveats);

    let builtin = builtin.map(|(_, name)| name);
    let mut config = ChildServerConfig::new(transport(place, doc, dialect, builtin)?);
    read_timeouts(&mut config, place, doc, dialect, caveats)?;
    config.enabled_tools = doc
        .string_list(dialect.enabled_tools, false)
        .map_err(err)?
        .map(|(_, l)| l)
        // `["*"]`, Copilot's "every tool", is no list at all.
        .filter(|l| !l.iter().any(|t| t == "*"));
    config.disabled_tools = doc
        .string_list(dialect.disabled_tools, false)
        .map_err(err)?
        .map(|(_, l)| l)
        .unwrap_or_default();
    // Anything the keys above did not read (a `.mcp.json` server's own extras).
    reject_literal_secrets(map, place, SERVER_SECRET_ADVICE)?;
    Ok(Some(config))
}

/// A server's transport: the built-in server `builtin` names, else stdio or HTTP from its
/// `type`, `command` and `url`.
fn transport(
    place: &str,
    doc: Doc<'_>,
    dialect: &Dialect,
    builtin: Option<&Value>,
) -> Result<ChildTransport, String> {
    let err = |e: String| format!("{place}{e}");
    let kind = doc.string(fields::SERVER_TYPE).map_err(err)?;
    let command = doc.find(fields::SERVER_COMMAND).map_err(err)?;
    let url = doc.str(dialect.url).map_err(err)?;
    // Copilot's `type: local` is its name for stdio.
    let kind = kind.map(|k| {
        if dialect.stdio_types.contains(&k.as_str()) {
            "stdio".to_owned()
        } else {
            k
        }
    });
    match (kind.as_deref(), command, url) {
        _ if builtin.is_some() => parse_builtin(place, doc, builtin.unwrap_or(&Value::Null)),
        (_, Some(_), Some(_)) => Err(err("has both `command` and `url`; pick one".into())),
        (Some("sse" | "ws"), _, _) => Err(err(format!(
            "`type: {}` is not supported; this runtime speaks stdio and streamable HTTP \
             (`type: http`)",
            kind.unwrap_or_default()
        ))),
        (Some("stdio") | None, Some((_, command)), None) => {
            parse_stdio(place, doc, command, dialect)
        }
        (Some("http" | "streamable-http" | "streamable_http") | None, None, Some((_, url))) => {
            parse_http(place, doc, url, dialect)
        }
        (Some("stdio"), None, _) => Err(err("`type: stdio` needs a `command`".into())),
        (Some("http" | "streamable-http" | "streamable_http"), _, None) => {
            Err(err("an HTTP server needs a `url`".into()))
        }
        (None, None, None) => Err(err("needs a `command` (stdio) or a `url` (HTTP)".into())),
        (Some(other), _, _) => Err(err(format!(
            "has the unknown `type` {other:?}; use `stdio` or `http`"
        ))),
    }
}

/// The startup and call timeouts, each bounded by the server's default.
fn read_timeouts(
    config: &mut ChildServerConfig,
    place: &str,
    doc: Doc<'_>,
    dialect: &Dialect,
    caveats: &mut Vec<String>,
) -> Result<(), String> {
    config.startup_timeout = timeout(
        place,
        doc,
        fields::SERVER_STARTUP_TIMEOUT,
        CHILD_STARTUP_TIMEOUT,
        caveats,
    )?;
    config.call_timeout = timeout(
        place,
        doc,
        fields::SERVER_TOOL_TIMEOUT,
        CHILD_CALL_TIMEOUT,
        caveats,
    )?;
    if !dialect.call_timeout_ms.is_empty() {
        config.call_timeout = timeout(
            place,
            doc,
            dialect.call_timeout_ms,
            config.call_timeout,
            caveats,
        )?;
    }
    Ok(())
}

/// Keys whose meaning this runtime cannot honour.
fn reject_unsupported(place: &str, doc: Doc<'_>, caveats: &mut Vec<String>) -> Result<(), String> {
    if doc.has("headersHelper") || doc.has("headers_helper") {
        return Err(format!(
            "{place}`headersHelper` is not supported (it runs a command to make headers); \
             use `headers` with ${{VAR}} placeholders"
        ));
    }
    if let Some((key, value)) = doc.find(fields::SERVER_OAUTH)?
        && value != &Value::Bool(false)
    {
        return Err(format!(
            "{place}`{key}` is not supported: this runtime does not run OAuth flows; pass a \
             token in `headers` with a ${{VAR}} placeholder"
        ));
    }
    for key in ["scopes", "oauth_resource"] {
        if doc.has(key) {
            caveats.push(format!(
                "{place}`{key}` is ignored: this runtime does not run OAuth flows"
            ));
        }
    }
    if doc.bool(fields::SERVER_REQUIRED)? == Some(false) {
        caveats.push(format!(
            "{place}`required = false` is not supported: every child server must start, \
             or the run fails"
        ));
    }
    Ok(())
}

/// An `env` or header value as this runtime reads it: in a dialect with other placeholder
/// forms, those are written as `${NAME}` first.
fn template(place: &str, what: &str, text: &str, dialect: &Dialect) -> Result<Template, String> {
    let rewritten;
    let text = if dialect.dollar_forms {
        rewritten = match copilot_secret_name(text) {
            Some(name) if what.starts_with("env") => format!("${{{name}}}"),
            _ => rewrite_dollar_forms(text)
                .map_err(|e| format!("{place}the value of `{what}` {e}"))?,
        };
        rewritten.as_str()
    } else {
        text
    };
    Template::parse(text).map_err(|e| format!("{place}the value of `{what}` {e}"))
}

fn parse_stdio(
    place: &str,
    doc: Doc<'_>,
    command: &Value,
    dialect: &Dialect,
) -> Result<ChildTransport, String> {
    let err = |e: String| format!("{place}{e}");
    reject_keys_of_other_transport(place, doc, HTTP_KEYS, "stdio")?;
    let command = match command {
        Value::String(c) if !c.trim().is_empty() => c.clone(),
        Value::Array(_) => {
            return Err(err(
                "`command` must be one string; put the arguments in `args`".into(),
            ));
        }
        other => return Err(err(wrong_type("command", "a nonempty string", other))),
    };
    no_placeholders(place, "command", &command)?;
    let args = doc
        .string_list(fields::SERVER_ARGS, false)
        .map_err(err)?
        .map(|(_, l)| l)
        .unwrap_or_default();
    for arg in &args {
        no_placeholders(place, "args", arg)?;
    }
    let mut env = BTreeMap::new();
    if let Some((field, table)) = doc.table(fields::SERVER_ENV).map_err(err)? {
        for (key, value) in table.map() {
            check_env_name(place, field, key)?;
            let Value::String(text) = value else {
                return Err(err(format!(
                    "`{field}.{key}` must be a string (quote numbers and booleans)"
                )));
            };
            let template = template(place, &format!("{field}.{key}"), text, dialect)?;
            env.insert(key.clone(), ValueSource::Template(template));
        }
    }
    if let Some((field, names)) = doc
        .string_list(fields::SERVER_ENV_VARS, false)
        .map_err(err)?
    {
        for name in names {
            if !is_env_var_name(&name) {
                return Err(err(format!(
                    "`{field}` lists {name:?}, which is not an environment variable name"
                )));
            }
            env.entry(name.clone())
                .or_insert(ValueSource::EnvIfSet(name));
        }
    }
    let cwd = doc.string(fields::SERVER_CWD).map_err(err)?.map(|cwd| {
        no_placeholders(place, "cwd", &cwd)?;
        Ok::<_, String>(PathBuf::from(cwd))
    });
    Ok(ChildTransport::Stdio {
        command,
        args,
        env,
        cwd: cwd.transpose()?,
    })
}

fn parse_http(
    place: &str,
    doc: Doc<'_>,
    raw_url: &str,
    dialect: &Dialect,
) -> Result<ChildTransport, String> {
    let err = |e: String| format!("{place}{e}");
    reject_keys_of_other_transport(place, doc, STDIO_KEYS, "HTTP")?;
    no_placeholders(place, "url", raw_url)?;
    let url =
        check_endpoint(raw_url, EndpointUse::ChildServer).map_err(|e| err(format!("`url` {e}")))?;

    let mut headers = BTreeMap::new();
    let mut insert = |name: &str, value: ValueSource| -> Result<(), String> {
        check_header_name(place, name)?;
        if headers
            .keys()
            .any(|k: &String| k.eq_ignore_ascii_case(name))
        {
            return Err(err(format!("sets the header `{name}` twice")));
        }
        headers.insert(name.to_owned(), value);
        Ok(())
    };
    for &field in fields::SERVER_HEADERS {
        if let Some((field, table)) = doc.table(&[field]).map_err(err)? {
            for (name, value) in table.map() {
                let Value::String(text) = value else {
                    return Err(err(format!("`{field}.{name}` must be a string")));
                };
                let template = template(place, &format!("{field}.{name}"), text, dialect)?;
                reject_literal_secret_header(place, name, &template)?;
                insert(name, ValueSource::Template(template))?;
            }
        }
    }
    if let Some((field, table)) = doc.table(fields::SERVER_ENV_HTTP_HEADERS).map_err(err)? {
        for (name, var) in table.map() {
            match var {
                Value::String(var) if is_env_var_name(var) => {
                    insert(name, ValueSource::EnvIfSet(var.clone()))?
                }
                _ => {
                    return Err(err(format!(
                        "`{field}.{name}` must name an environment variable"
                    )));
                }
            }
        }
    }
    if let Some((field, var)) = doc.str(fields::SERVER_BEARER_TOKEN_ENV_VAR).map_err(err)? {
        if !is_env_var_name(var) {
            return Err(err(format!(
                "`{field}` must name an environment variable (letters, digits, `_`)"
            )));
        }
        let template = Template::parse(&format!("Bearer ${{{var}}}"))
            .map_err(|e| err(format!("`{field}` {e}")))?;
        insert("Authorization", ValueSource::Template(template))?;
    }
    Ok(ChildTransport::Http { url, headers })
}

fn reject_keys_of_other_transport(
    place: &str,
    doc: Doc<'_>,
    keys: &[Field],
    transport: &str,
) -> Result<(), String> {
    match fields::spellings(keys).find(|k| doc.has(k)) {
        Some(key) => Err(format!(
            "{place}`{key}` does not apply to a {transport} server"
        )),
        None => Ok(()),
    }
}

/// Commands, arguments, URLs and `cwd` are used as written (SPEC §8.1); a placeholder there
/// would silently stay literal, so it is refused.
fn no_placeholders(place: &str, field: &str, text: &str) -> Result<(), String> {
    if text.contains("${") {
        Err(format!(
            "{place}`{field}` contains a ${{…}} placeholder, but placeholders are replaced \
             only in `env` and `headers` values; pass the value through `env` instead"
        ))
    } else {
        Ok(())
    }
}

fn check_env_name(place: &str, field: &str, key: &str) -> Result<(), String> {
    if key.is_empty() || key.contains('=') || key.contains('\0') {
        Err(format!(
            "{place}`{field}` has the variable name {key:?}, which cannot be set"
        ))
    } else {
        Ok(())
    }
}

fn check_header_name(place: &str, name: &str) -> Result<(), String> {
    // RFC 9110 token characters.
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!("{place}{name:?} is not a valid HTTP header name"))
    }
}

/// Reads a timeout in seconds (in milliseconds for `_ms` and Gemini's `timeout`), which may
/// lower but never raise `bound`.
fn timeout(
    place: &str,
    doc: Doc<'_>,
    names: &[&'static str],
    bound: Duration,
    caveats: &mut Vec<String>,
) -> Result<Duration, String> {
    let Some((name, value)) = doc.number(names).map_err(|e| format!("{place}{e}"))? else {
        return Ok(bound);
    };
    let seconds = if name.ends_with("_ms") || fields::GEMINI_SERVER_TIMEOUT_MS.contains(&name) {
        value / 1000.0
    } else {
        value
    };
    if seconds <= 0.0 {
        return Err(format!("{place}`{name}` must be more than zero"));
    }
    let asked = Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX);
    if asked > bound {
        caveats.push(format!(
            "{place}`{name}` asks for {seconds} s, above this runtime's bound of {} s; \
             {} s is used",
            bound.as_secs(),
            bound.as_secs()
        ));
        return Ok(bound);
    }
    Ok(asked)
}
