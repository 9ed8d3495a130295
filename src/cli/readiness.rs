//! `check` readiness (SPEC §2): what a run of each agent would need that is missing now. An
//! unset key variable fails `spawn_agent` with `missing_credential`; an unset `${VAR}` of a
//! child server, or a stdio command not found on `PATH`, fails the run's startup with
//! `child_mcp_startup_error`. These are warnings (`will_fail_at_spawn`), never rejections:
//! the environment `check` runs in is not always the server's.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::definition::{AgentDefinition, ChildTransport, Effect, ValueSource, Warning};
use crate::spend::ServerSpend;

/// How `check` reads the environment: `std::env::var` in the binary.
pub(super) type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// What readiness looks at besides the definitions: the environment, and with `check
/// --servers` what starting each child server gave.
pub(super) struct Checks<'a> {
    pub env: Env<'a>,
    /// `None` unless the servers were started.
    pub started: Option<Started>,
    /// The server's caps and prices, when a model without a price would be refused
    /// (`--max-cost-usd`, SPEC §5.1).
    pub spend: Option<&'a ServerSpend>,
}

impl<'a> Checks<'a> {
    /// The environment only: no server is started.
    pub(super) fn env(env: Env<'a>) -> Self {
        Checks {
            env,
            started: None,
            spend: None,
        }
    }
}

/// What starting the child servers of every agent gave (`check --servers`).
#[derive(Debug, Default)]
pub(super) struct Started {
    /// How many servers were started (each configuration once).
    pub servers: usize,
    /// Why a server of an agent failed to start, by agent and server name.
    pub failures: BTreeMap<(String, String), String>,
}

/// One thing a run needs that is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Need {
    /// An environment variable that is unset (or, for a key, empty); `alternative` would do
    /// as well (`ANTHROPIC_AUTH_TOKEN` beside `ANTHROPIC_API_KEY`).
    Variable {
        name: String,
        alternative: Option<&'static str>,
        /// What needs it: `its provider key`, `mcp_servers.github header Authorization`.
        used_by: String,
    },
    /// A stdio child's command that is not found (on `PATH`, or at its path).
    Command { name: String, server: String },
    /// A child server that failed to start when `check --servers` started it, and why.
    Server { server: String, why: String },
    /// A price for the model, which a server with `--max-cost-usd` needs (SPEC §5.1).
    Price { model: String },
}

impl Need {
    /// The `needs` entry of `check --json`.
    pub(super) fn to_json(&self) -> Value {
        match self {
            Need::Variable {
                name,
                alternative,
                used_by,
            } => {
                let mut value = json!({"kind": "env", "name": name, "for": used_by});
                if let Some(other) = alternative {
                    value["or"] = json!(other);
                }
                value
            }
            Need::Command { name, server } => {
                json!({"kind": "command", "name": name, "for": format!("mcp_servers.{server}")})
            }
            Need::Server { server, why } => json!({
                "kind": "server", "name": server, "for": format!("mcp_servers.{server}"),
                "error": why
            }),
            Need::Price { model } => {
                json!({"kind": "price", "name": model, "for": "--max-cost-usd"})
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            Need::Variable {
                name,
                alternative: Some(other),
                used_by,
            } => format!("{name} or {other} ({used_by}) is not set"),
            Need::Variable { name, used_by, .. } => format!("{name} ({used_by}) is not set"),
            Need::Command { name, server } => format!(
                "the command `{name}` (mcp_servers.{server}) is not found{}",
                if name.contains('/') { "" } else { " on PATH" }
            ),
            Need::Server { why, .. } => why.clone(),
            Need::Price { model } => format!(
                "no price is known for the model `{model}`, and the server caps its spend in \
                 dollars (--max-cost-usd); give its price with --prices FILE"
            ),
        }
    }
}

fn is_set(env: Env<'_>, var: &str) -> bool {
    env(var).is_some_and(|value| !value.trim().is_empty())
}

/// What a run of `definition` in `workspace` would miss in `env`, in a stable order: the
/// provider key, each child server by name, a price under `--max-cost-usd`, then what
/// starting the servers showed.
pub(super) fn needs(
    definition: &AgentDefinition,
    workspace: &Path,
    checks: &Checks<'_>,
) -> Vec<Need> {
    let env = checks.env;
    let mut needs = static_needs(definition, workspace, env);
    if let Some(spend) = checks.spend
        && spend.caps().max_cost.is_some()
        && spend
            .prices()
            .lookup(definition.provider.kind.as_str(), &definition.model.id)
            .is_none()
    {
        needs.push(Need::Price {
            model: definition.model.id.clone(),
        });
    }
    if let Some(started) = &checks.started {
        for server in definition.mcp_servers.keys() {
            let known = needs.iter().any(|n| match n {
                Need::Command { server: s, .. } => s == server,
                Need::Variable { used_by, .. } => {
                    used_by.starts_with(&format!("mcp_servers.{server} "))
                }
                Need::Server { .. } | Need::Price { .. } => false,
            });
            let key = (definition.name.clone(), server.clone());
            if let (false, Some(why)) = (known, started.failures.get(&key)) {
                needs.push(Need::Server {
                    server: server.clone(),
                    why: why.clone(),
                });
            }
        }
    }
    needs
}

/// What a run would miss that the environment alone shows: the key, child servers'
/// variables and commands.
fn static_needs(definition: &AgentDefinition, workspace: &Path, env: Env<'_>) -> Vec<Need> {
    let mut needs = Vec::new();
    let key = definition.provider.key_choice(|var| is_set(env, var));
    if !is_set(env, &key.var) {
        needs.push(Need::Variable {
            name: key.var,
            alternative: key.alternative,
            used_by: "its provider key".to_owned(),
        });
    }
    for (server, config) in &definition.mcp_servers {
        if let ChildTransport::Stdio {
            command,
            env: vars,
            cwd,
            ..
        } = &config.transport
        {
            unset_placeholders(vars, &format!("mcp_servers.{server} env"), env, &mut needs);
            let dir = match cwd {
                Some(dir) => workspace.join(dir),
                None => workspace.to_owned(),
            };
            if which::which_in(command, env("PATH"), &dir).is_err() {
                needs.push(Need::Command {
                    name: command.clone(),
                    server: server.clone(),
                });
            }
        } else if let ChildTransport::Http { headers, .. } = &config.transport {
            let place = format!("mcp_servers.{server} header");
            unset_placeholders(headers, &place, env, &mut needs);
        }
    }
    needs
}

/// The variables `${VAR}` placeholders in `values` name that are unset, each once. An unset
/// one fails startup; an empty one is used as empty (SPEC §8.1); values copied only when
/// set (`env_vars`, `env_http_headers`) need nothing.
fn unset_placeholders(
    values: &BTreeMap<String, ValueSource>,
    place: &str,
    env: Env<'_>,
    needs: &mut Vec<Need>,
) {
    for (key, value) in values {
        let ValueSource::Template(template) = value else {
            continue;
        };
        for var in template.vars() {
            let listed = needs
                .iter()
                .any(|n| matches!(n, Need::Variable { name, .. } if name == var));
            if env(var).is_none() && !listed {
                needs.push(Need::Variable {
                    name: var.to_owned(),
                    alternative: None,
                    used_by: format!("{place} {key}"),
                });
            }
        }
    }
}

/// One `will_fail_at_spawn` warning for each agent of `definitions` that misses something.
pub(super) fn warnings<'a>(
    definitions: impl IntoIterator<Item = &'a AgentDefinition>,
    workspace: &Path,
    checks: &Checks<'_>,
) -> Vec<Warning> {
    definitions
        .into_iter()
        .filter_map(|d| {
            let needs = needs(d, workspace, checks);
            if needs.is_empty() {
                return None;
            }
            let listed: Vec<String> = needs.iter().map(Need::describe).collect();
            let reason = format!(
                "agent `{}` would fail when it runs: {}",
                d.name,
                listed.join("; ")
            );
            Some(
                Warning::new(d.source.path.clone(), reason, Effect::WillFailAtSpawn)
                    .about(Some(d.name.clone())),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{ChildServerConfig, Template, WireApi};

    fn with_server(transport: ChildTransport) -> AgentDefinition {
        let mut d = crate::testkit::mock_definition(
            WireApi::Responses,
            url::Url::parse("http://127.0.0.1:9/v1").unwrap(),
        );
        d.mcp_servers = BTreeMap::from([("srv".to_owned(), ChildServerConfig::new(transport))]);
        d
    }

    #[cfg(unix)]
    #[test]
    fn a_command_with_a_path_is_looked_up_from_the_childs_directory() {
        use std::os::unix::fs::PermissionsExt;
        let ws = tempfile::tempdir().unwrap();
        let d = with_server(ChildTransport::Stdio {
            command: "./bin/srv".into(),
            args: vec![],
            env: BTreeMap::from([
                (
                    "TOKEN".to_owned(),
                    ValueSource::Template(Template::parse("${SRV_TOKEN}").unwrap()),
                ),
                ("OPTIONAL".to_owned(), ValueSource::EnvIfSet("MAYBE".into())),
            ]),
            cwd: Some("tools".into()),
        });
        let env = |var: &str| (var == "MOCK_PROVIDER_KEY").then(|| "k".to_owned());
        assert_eq!(
            needs(&d, ws.path(), &Checks::env(&env)),
            [
                Need::Variable {
                    name: "SRV_TOKEN".into(),
                    alternative: None,
                    used_by: "mcp_servers.srv env TOKEN".into()
                },
                Need::Command {
                    name: "./bin/srv".into(),
                    server: "srv".into()
                }
            ],
            "an env_vars entry is optional; the placeholder is not"
        );
        let path = ws.path().join("tools/bin/srv");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let all = |var: &str| Some(format!("{var}-value"));
        assert_eq!(needs(&d, ws.path(), &Checks::env(&all)), []);
        // An empty value is used as empty by a placeholder, but is no key.
        let empty = |_: &str| Some(String::new());
        assert_eq!(
            needs(&d, ws.path(), &Checks::env(&empty)).len(),
            1,
            "only the key"
        );
    }
}
