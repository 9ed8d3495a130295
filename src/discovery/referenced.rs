//! Workspace files that definitions refer to: `.mcp.json` (Claude `mcpServers` names) and
//! `.codex/config.toml` (Codex `[agents.NAME] config_file = …` declarations that give a role
//! file its name and description). Each is read at most once per catalog load, and only
//! when some definition needs it.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::source::{describe_type, parse_json_object, parse_toml, read_text};

/// A Codex role declared in `.codex/config.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CodexRole {
    pub name: String,
    pub description: Option<String>,
}

pub(super) struct ReferencedFiles {
    workspace: PathBuf,
    mcp_json: OnceLock<Result<Map<String, Value>, String>>,
    codex_roles: OnceLock<Result<HashMap<PathBuf, CodexRole>, String>>,
}

impl ReferencedFiles {
    pub(super) fn new(workspace: &Path) -> Self {
        ReferencedFiles {
            workspace: workspace.to_owned(),
            mcp_json: OnceLock::new(),
            codex_roles: OnceLock::new(),
        }
    }

    /// The `mcpServers` of the workspace's `.mcp.json`. The error completes the sentence
    /// "the workspace's .mcp.json …".
    pub(super) fn mcp_json(&self) -> Result<&Map<String, Value>, String> {
        self.mcp_json
            .get_or_init(|| {
                let text = read_confined(&self.workspace, Path::new(".mcp.json"))?
                    .ok_or_else(|| "does not exist".to_owned())?;
                let document = parse_json_object(&text).map_err(|e| format!("is {e}"))?;
                mcp_json_servers(&document)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The role `.codex/config.toml` declares for the role file at `canonical` (if any).
    /// The error says why the declarations could not be read.
    pub(super) fn codex_role(&self, canonical: &Path) -> Result<Option<&CodexRole>, String> {
        self.codex_roles
            .get_or_init(|| self.read_codex_roles())
            .as_ref()
            .map(|roles| roles.get(canonical))
            .map_err(Clone::clone)
    }

    fn read_codex_roles(&self) -> Result<HashMap<PathBuf, CodexRole>, String> {
        let config = Path::new(".codex/config.toml");
        let Some(text) = read_confined(&self.workspace, config)? else {
            return Ok(HashMap::new());
        };
        let document = parse_toml(&text).map_err(|e| format!(".codex/config.toml: {e}"))?;
        let mut roles = HashMap::new();
        let Some(Value::Object(agents)) = document.get("agents") else {
            return Ok(roles);
        };
        let base = self.workspace.join(".codex");
        for (name, declaration) in agents {
            let Value::Object(declaration) = declaration else {
                continue; // `max_threads` and the other global keys
            };
            let Some(Value::String(file)) = declaration.get("config_file") else {
                continue;
            };
            let Ok(canonical) = base.join(file).canonicalize() else {
                continue;
            };
            let description = match declaration.get("description") {
                Some(Value::String(d)) => Some(d.clone()),
                _ => None,
            };
            roles.entry(canonical).or_insert(CodexRole {
                name: name.clone(),
                description,
            });
        }
        Ok(roles)
    }
}

/// Reads `rel` below the workspace if it exists, refusing a link that leads outside it.
fn read_confined(workspace: &Path, rel: &Path) -> Result<Option<String>, String> {
    let path = workspace.join(rel);
    let canonical = match path.canonicalize() {
        Ok(c) => c,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot be read: {e}")),
    };
    if !canonical.starts_with(workspace) {
        return Err("is a link to a file outside the workspace, which is not read".to_owned());
    }
    read_text(&canonical).map(Some)
}

/// The `mcpServers` object of a parsed `.mcp.json`.
fn mcp_json_servers(document: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    match document.get("mcpServers") {
        Some(Value::Object(servers)) => Ok(servers.clone()),
        Some(other) => Err(format!(
            "has `mcpServers` as {}, not a mapping",
            describe_type(other)
        )),
        None => Ok(Map::new()),
    }
}
