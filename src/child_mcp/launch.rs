//! Turning a frozen child-server configuration into what is launched at run start
//! (SPEC §8.1, §8.3): `${VAR}` placeholders rendered from the environment (only in stdio
//! `env` values and HTTP header values), a cleared environment for stdio children, and the
//! working directory resolved against the workspace. Commands, arguments and URLs are used
//! exactly as written.
//!
//! A built-in server (SPEC §8.6) becomes a stdio launch of this program itself
//! ([`SelfCommand`]): `<this executable> workspace-tools <workspace>`, in the workspace,
//! with the same cleared environment as any stdio child. On Linux every other stdio child
//! runs under a shim, which is this program too (`child-shim`, see `shim`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use url::Url;

use crate::definition::{
    BuiltinServer, ChildServerConfig, ChildTransport, INHERITED_VARS, TemplateError, ValueSource,
};
use crate::redact::{debug_http, debug_stdio};

/// How this program starts itself as a child: its executable, and the arguments that come
/// before a subcommand (`agents` when it runs as `modelcontextprotocol agents`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfCommand {
    program: Result<PathBuf, String>,
    prefix: Vec<String>,
    /// The program is this process's own executable.
    this_process: bool,
}

impl SelfCommand {
    /// The executable of this process.
    pub fn current(prefix: &[&str]) -> SelfCommand {
        SelfCommand {
            program: std::env::current_exe()
                .map_err(|e| format!("cannot find this program's own path: {e}")),
            prefix: prefix.iter().map(|a| (*a).to_owned()).collect(),
            this_process: true,
        }
    }

    /// A given executable (tests and benchmarks, whose own executable is a test harness).
    pub fn new(program: impl Into<PathBuf>, prefix: &[&str]) -> SelfCommand {
        SelfCommand {
            program: Ok(program.into()),
            prefix: prefix.iter().map(|a| (*a).to_owned()).collect(),
            this_process: false,
        }
    }

    /// The file to start: the program's path, unless the program is this process's own and
    /// the path no longer holds the file it runs (an upgrade replaced it while the server
    /// runs). Then `/proc/self/exe` (Linux), which a child started from here still finds
    /// until it execs: a server and the children it starts of itself are one version.
    fn runnable(&self) -> Result<PathBuf, String> {
        let program = self.program.clone()?;
        #[cfg(target_os = "linux")]
        if self.this_process {
            use std::os::unix::fs::MetadataExt;
            let file = |path: &Path| std::fs::metadata(path).map(|m| (m.dev(), m.ino())).ok();
            let running = file(Path::new("/proc/self/exe"));
            if running.is_some() && running != file(&program) {
                return Ok(PathBuf::from("/proc/self/exe"));
            }
        }
        Ok(program)
    }

    /// The command line of a stdio child's shim, for a child of the server `server`.
    pub(super) fn shim(&self, server: u32) -> Result<(PathBuf, Vec<String>), String> {
        let program = self.runnable()?;
        let mut args = self.prefix.clone();
        args.push(super::shim::SUBCOMMAND.to_owned());
        args.push(server.to_string());
        Ok((program, args))
    }

    /// The launch of `server` for `workspace`, with `env` as its whole environment.
    fn launch(
        &self,
        server: BuiltinServer,
        workspace: &Path,
        env: BTreeMap<String, String>,
    ) -> Result<Launch, String> {
        let program = self.runnable()?;
        let command = program
            .to_str()
            .ok_or("cannot start itself: this program's path is not UTF-8")?
            .to_owned();
        let mut args = self.prefix.clone();
        args.push(server.subcommand().to_owned());
        // Its working directory is the workspace, so `.` names it when its path is not
        // UTF-8.
        args.push(workspace.to_str().unwrap_or(".").to_owned());
        Ok(Launch::Stdio {
            command,
            args,
            env,
            cwd: workspace.to_owned(),
            // It is this program, and starts nothing.
            shim: None,
        })
    }
}

/// What to start or connect to.
#[derive(Clone, PartialEq, Eq)]
pub enum Launch {
    Stdio {
        command: String,
        args: Vec<String>,
        /// The complete environment of the child.
        env: BTreeMap<String, String>,
        cwd: PathBuf,
        /// This program, to run the child under its shim (Linux), which kills whatever the
        /// child leaves when it exits or the server dies; `None`: started directly.
        shim: Option<SelfCommand>,
    },
    Http {
        url: Url,
        headers: BTreeMap<String, String>,
    },
}

impl std::fmt::Debug for Launch {
    /// Names only: values may be credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Launch::Stdio {
                command,
                args,
                env,
                cwd,
                shim: _,
            } => debug_stdio(f, command, args.len(), env.keys(), cwd),
            Launch::Http { url, headers } => debug_http(f, url, headers.keys()),
        }
    }
}

/// Renders `config`. The error names the server and what is missing, never a value.
pub(super) fn resolve(
    config: &ChildServerConfig,
    workspace: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
    itself: &SelfCommand,
) -> Result<Launch, String> {
    let inherited = || -> BTreeMap<String, String> {
        INHERITED_VARS
            .iter()
            .filter_map(|var| lookup(var).map(|value| ((*var).to_owned(), value)))
            .collect()
    };
    match &config.transport {
        ChildTransport::Builtin(server) => itself.launch(*server, workspace, inherited()),
        ChildTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut full = inherited();
            for (name, value) in render(env, "env", lookup)? {
                full.insert(name, value);
            }
            let cwd = match cwd {
                Some(dir) if dir.is_absolute() => dir.clone(),
                Some(dir) => workspace.join(dir),
                None => workspace.to_owned(),
            };
            Ok(Launch::Stdio {
                command: command.clone(),
                args: args.clone(),
                env: full,
                cwd,
                shim: cfg!(target_os = "linux").then(|| itself.clone()),
            })
        }
        ChildTransport::Http { url, headers } => Ok(Launch::Http {
            url: url.clone(),
            headers: render(headers, "header", lookup)?.into_iter().collect(),
        }),
    }
}

/// Renders each value; `EnvIfSet` values that are unset or empty are left out.
fn render(
    values: &BTreeMap<String, ValueSource>,
    what: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::with_capacity(values.len());
    for (name, source) in values {
        match source {
            ValueSource::Template(template) => {
                let value = template.render(|var| lookup(var)).map_err(|e| match e {
                    // Said where to set it, as a missing key is (`missing_credential`): the
                    // variable has to reach this server through the client's configuration.
                    TemplateError::Unset(var) => format!(
                        "needs the environment variable {var} (for its {what} {name}), which \
                         is not set in this server's environment; {}",
                        crate::clients::pass_variable_advice(&var)
                    ),
                    e => format!("cannot start: its {what} value of {name} {e}"),
                })?;
                out.push((name.clone(), value));
            }
            ValueSource::EnvIfSet(var) => {
                if let Some(value) = lookup(var).filter(|v| !v.is_empty()) {
                    out.push((name.clone(), value));
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::Template;
    use std::collections::HashMap;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn stdio(env: BTreeMap<String, ValueSource>) -> ChildServerConfig {
        ChildServerConfig::new(ChildTransport::Stdio {
            command: "srv".into(),
            args: vec!["${NOT_EXPANDED}".into()],
            env,
            cwd: Some("tools".into()),
        })
    }

    #[test]
    fn stdio_children_get_a_cleared_environment_plus_their_own() {
        let env = BTreeMap::from([
            (
                "TOKEN".to_owned(),
                ValueSource::Template(Template::parse("t-${SECRET}").unwrap()),
            ),
            (
                "OPTIONAL".to_owned(),
                ValueSource::EnvIfSet("NOT_SET".into()),
            ),
            ("COPIED".to_owned(), ValueSource::EnvIfSet("ORG".into())),
        ]);
        let vars = lookup(&[
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("SECRET", "s3"),
            ("ORG", "acme"),
            ("AWS_SECRET", "x"),
        ]);
        let launch = resolve(&stdio(env), Path::new("/ws"), &vars, &itself()).unwrap();
        let Launch::Stdio {
            env,
            cwd,
            args,
            shim,
            ..
        } = launch
        else {
            panic!()
        };
        assert_eq!(
            shim,
            cfg!(target_os = "linux").then(itself),
            "on Linux it runs under this program's shim"
        );
        assert_eq!(
            env,
            BTreeMap::from([
                ("COPIED".into(), "acme".into()),
                ("HOME".into(), "/h".into()),
                ("PATH".into(), "/bin".into()),
                ("TOKEN".into(), "t-s3".into()),
            ])
        );
        assert_eq!(cwd, Path::new("/ws/tools"));
        assert_eq!(
            args,
            ["${NOT_EXPANDED}"],
            "arguments are never interpolated"
        );
    }

    #[test]
    fn an_unset_placeholder_fails_and_names_the_variable() {
        let env = BTreeMap::from([(
            "TOKEN".to_owned(),
            ValueSource::Template(Template::parse("${SECRET}").unwrap()),
        )]);
        let err = resolve(&stdio(env), Path::new("/ws"), &lookup(&[]), &itself()).unwrap_err();
        assert!(
            err.starts_with(
                "needs the environment variable SECRET (for its env TOKEN), which is not set \
                 in this server's environment; MCP clients pass their servers only the \
                 variables they are told to: in Claude Code set it in the shell that starts \
                 `claude`, or in the server's `env` in .mcp.json; in Codex list it in \
                 `env_vars` of [mcp_servers.agents] in config.toml."
            ),
            "{err}"
        );
    }

    fn itself() -> SelfCommand {
        SelfCommand::new("/opt/bin/modelcontextprotocol", &["agents"])
    }

    #[test]
    fn a_builtin_server_is_this_program_with_a_cleared_environment() {
        let vars = lookup(&[("PATH", "/bin"), ("HOME", "/h"), ("OPENAI_API_KEY", "sk-1")]);
        let config = BuiltinServer::Workspace.config();
        let launch = resolve(&config, Path::new("/ws"), &vars, &itself()).unwrap();
        assert_eq!(
            launch,
            Launch::Stdio {
                command: "/opt/bin/modelcontextprotocol".into(),
                args: vec!["agents".into(), "workspace-tools".into(), "/ws".into()],
                env: BTreeMap::from([("HOME".into(), "/h".into()), ("PATH".into(), "/bin".into())]),
                cwd: "/ws".into(),
                shim: None,
            }
        );
        let lost = SelfCommand {
            program: Err("cannot find this program's own path: gone".into()),
            prefix: vec![],
            this_process: true,
        };
        assert_eq!(
            resolve(&config, Path::new("/ws"), &vars, &lost).unwrap_err(),
            "cannot find this program's own path: gone"
        );
    }

    #[test]
    fn debug_shows_names_only() {
        let launch = Launch::Http {
            url: Url::parse("https://h.example/mcp?key=abc").unwrap(),
            headers: BTreeMap::from([("Authorization".into(), "Bearer sk-1".into())]),
        };
        let shown = format!("{launch:?}");
        assert!(!shown.contains("sk-1") && !shown.contains("abc"), "{shown}");
    }
}
