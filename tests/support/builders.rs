//! The set-up most integration tests share, built in one expression: a mock provider, a
//! throwaway workspace whose agents point at it, and the real binary serving that
//! workspace over stdio or HTTP.
//!
//! ```ignore
//! // The standard agents (`worker`, `claude-worker`, `chat-worker`, `skilled`), over stdio.
//! let s = ServerUnderTest::stdio().await;
//! s.mock.push([Step::text("hi")]);
//! let id = s.spawn("worker", "Say hi.").await; // the client's calls, through `Deref`
//! // One agent whose only child is the fixture server, its processes marked "eof".
//! let s = TestWorkspace::new().marked("eof").fixture_agent("sleeper", &[]).stdio().await;
//! // An agent on Chat Completions whose fixture child logs its calls, with a budget.
//! let agent = FixtureAgent::named("capped").on("chat-completions").lines("max_tool_calls: 3");
//! let s = TestWorkspace::new().with(agent.logging_calls()).stdio().await;
//! // Any file, written once the mock's endpoints and the marker are known; then over HTTP,
//! // every request needing a bearer token.
//! let server = TestWorkspace::new()
//!     .agent(".claude/agents/a.md", |mock, marker| claude_agent(mock, marker))
//!     .env(VAR, TOKEN)
//!     .http(&["--auth-token-env", VAR])
//!     .await;
//! let client = server.connect(Generation::Modern, Some(TOKEN)).await;
//! ```
//!
//! Each result owns its workspace (a temporary directory, deleted when it drops): bind it
//! for as long as the server runs (`let (mock, m, _ws, c) = s.into_parts()`, never `..`).

use std::path::{Path, PathBuf};

use mcp_agents::definition::Catalog;
use mcp_agents::discovery::LoadOptions;
use mcp_agents::testkit::MockProvider;

use super::binary::{self, Connection, Generation};
use super::children::{self, stdio_child, tagged_marker};
use super::run_kit::KEY;

/// Writes one or more files into the workspace at the path given, once the mock is up,
/// from the mock and the marker.
type Writer<'a> = Box<dyn FnOnce(&Path, &MockProvider, &str) + 'a>;

/// What a test's workspace holds, said before anything starts: files and agents pointing at
/// a mock provider, the marker their child processes carry, and the server's environment.
/// [`TestWorkspace::stdio`], [`TestWorkspace::http`] and [`TestWorkspace::written`] start the
/// mock, write the files and (the first two) start the server.
pub struct TestWorkspace<'a> {
    tag: &'a str,
    files: Vec<Writer<'a>>,
    env: Vec<(String, String)>,
}

impl Default for TestWorkspace<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> TestWorkspace<'a> {
    /// An empty workspace, its child processes to be marked with a fresh marker tagged `m`.
    pub fn new() -> Self {
        TestWorkspace {
            tag: "m",
            files: Vec::new(),
            env: Vec::new(),
        }
    }

    /// The fresh marker starts with `tag` (a name for the processes of this test).
    pub fn marked(mut self, tag: &'a str) -> Self {
        self.tag = tag;
        self
    }

    /// [`binary::workspace`]'s agents: `worker` (Responses), `claude-worker` (Messages),
    /// `chat-worker` (Chat Completions) and `skilled`, with its skill `style`.
    pub fn standard_agents(mut self) -> Self {
        self.files.push(Box::new(|dir, mock, _| {
            binary::write_standard_agents(dir, mock)
        }));
        self
    }

    /// An agent `name` (at `.agents/agents/{name}.md`) on the mock's Responses endpoint, whose
    /// only child `fx` is the fixture server started with `args`, carrying the marker.
    pub fn fixture_agent(self, name: &str, args: &[&str]) -> Self {
        self.with(FixtureAgent::named(name).args(args))
    }

    /// The agent `agent` describes, at `.agents/agents/{name}.md`.
    pub fn with(mut self, agent: FixtureAgent) -> Self {
        self.files.push(Box::new(move |dir, mock, marker| {
            let rel = format!(".agents/agents/{}.md", agent.name);
            children::write(dir, &rel, &agent.text(dir, mock, marker));
        }));
        self
    }

    /// An agent definition (or any file) at `rel`, its text made from the mock and the
    /// marker once they exist.
    pub fn agent(
        mut self,
        rel: &str,
        text: impl FnOnce(&MockProvider, &str) -> String + 'a,
    ) -> Self {
        let rel = rel.to_owned();
        self.files.push(Box::new(move |dir, mock, marker| {
            children::write(dir, &rel, &text(mock, marker));
        }));
        self
    }

    /// A file at `rel` holding `text`.
    pub fn file(self, rel: &str, text: impl Into<String>) -> Self {
        let text = text.into();
        self.agent(rel, move |_, _| text)
    }

    /// A variable set in the server's environment.
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Starts the mock and writes the files; no server.
    pub async fn written(self) -> MockWorkspace {
        let mock = MockProvider::start(KEY).await.unwrap();
        let marker = tagged_marker(self.tag);
        let ws = tempfile::tempdir().unwrap();
        for write in self.files {
            write(ws.path(), &mock, &marker);
        }
        MockWorkspace { mock, marker, ws }
    }

    /// Starts the mock, writes the files and serves them over stdio.
    pub async fn stdio(self) -> ServerUnderTest {
        self.stdio_as(Generation::Modern).await
    }

    /// [`Self::stdio`], the client speaking the protocol of `generation`.
    pub async fn stdio_as(self, generation: Generation) -> ServerUnderTest {
        let env = self.env.clone();
        let MockWorkspace { mock, marker, ws } = self.written().await;
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (&**k, &**v)).collect();
        let c = binary::stdio(ws.path(), generation, &env).await;
        ServerUnderTest {
            mock,
            marker,
            ws,
            c,
        }
    }

    /// Starts the mock, writes the files and serves them over HTTP with `args` (on a free
    /// loopback port unless `args` say `--http`); panics with what the server printed if it
    /// does not start.
    pub async fn http(self, args: &[&str]) -> HttpServerUnderTest {
        let env = self.env.clone();
        let MockWorkspace { mock, marker, ws } = self.written().await;
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (&**k, &**v)).collect();
        let (process, url) = binary::start_http_server(ws.path(), args, &env)
            .await
            .unwrap_or_else(|printed| panic!("the HTTP server did not start: {printed}"));
        HttpServerUnderTest {
            mock,
            marker,
            ws,
            process,
            url,
        }
    }
}

/// An agent whose only child, `fx`, is the fixture server (`mcp-agents fixture-server`),
/// carrying the workspace's marker: on the mock's Responses endpoint unless [`Self::on`]
/// says otherwise.
pub struct FixtureAgent {
    name: String,
    wire: String,
    args: Vec<String>,
    child_lines: String,
    lines: String,
    log_calls: bool,
}

/// Where a [`FixtureAgent::logging_calls`] child logs the tools it is called with, in the
/// workspace.
pub const CALL_LOG: &str = "calls.log";

impl FixtureAgent {
    pub fn named(name: &str) -> Self {
        FixtureAgent {
            name: name.to_owned(),
            wire: "responses".to_owned(),
            args: Vec::new(),
            child_lines: String::new(),
            lines: String::new(),
            log_calls: false,
        }
    }

    /// On the mock's endpoint for `wire` (a `wire_api` value).
    pub fn on(mut self, wire: &str) -> Self {
        wire.clone_into(&mut self.wire);
        self
    }

    /// The fixture's arguments (`--hang`, `--grandchild daemon`, …).
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| (*a).to_owned()));
        self
    }

    /// Lines of the child's configuration, indented by six spaces
    /// (`      startup_timeout_sec: 1\n`).
    pub fn child_lines(mut self, lines: &str) -> Self {
        self.child_lines.push_str(lines);
        self
    }

    /// Lines of the agent's frontmatter (`max_tool_calls: 3`).
    pub fn lines(mut self, lines: &str) -> Self {
        self.lines.push_str(lines);
        self
    }

    /// The child logs each tool it is called with to [`CALL_LOG`] in the workspace
    /// (`--call-log`).
    pub fn logging_calls(mut self) -> Self {
        self.log_calls = true;
        self
    }

    fn text(&self, dir: &Path, mock: &MockProvider, marker: &str) -> String {
        let log = dir.join(CALL_LOG).display().to_string();
        let mut args: Vec<&str> = Vec::new();
        if self.log_calls {
            args.extend(["--call-log", &log]);
        }
        args.extend(self.args.iter().map(String::as_str));
        let child = stdio_child("fx", &args, marker, &self.child_lines);
        children::agent_on(&self.wire, mock, &self.name, &child, &self.lines)
    }
}

/// A mock provider and a workspace written for it, served by nothing yet. The workspace is
/// deleted when this drops.
pub struct MockWorkspace {
    pub mock: MockProvider,
    /// The marker the workspace's fixture children carry in their environment.
    pub marker: String,
    pub ws: tempfile::TempDir,
}

impl MockWorkspace {
    pub fn path(&self) -> &Path {
        self.ws.path()
    }

    /// The mock, the marker and the workspace, for a test that uses them apart.
    pub fn into_parts(self) -> (MockProvider, String, tempfile::TempDir) {
        (self.mock, self.marker, self.ws)
    }
}

/// The real binary serving a [`TestWorkspace`] over stdio, with a client connected: the
/// client's calls (`spawn`, `wait`, `ok`, …) are the server's.
pub struct ServerUnderTest {
    pub mock: MockProvider,
    /// The marker the workspace's fixture children carry in their environment.
    pub marker: String,
    /// The workspace, deleted when this drops.
    pub ws: tempfile::TempDir,
    pub c: Connection,
}

impl ServerUnderTest {
    /// The standard agents (see [`TestWorkspace::standard_agents`]) over stdio.
    pub async fn stdio() -> ServerUnderTest {
        TestWorkspace::new().standard_agents().stdio().await
    }

    /// One agent `name` whose only child is the fixture server started with `args` (see
    /// [`TestWorkspace::fixture_agent`]), over stdio.
    pub async fn fixture_agent(name: &str, args: &[&str]) -> ServerUnderTest {
        TestWorkspace::new().fixture_agent(name, args).stdio().await
    }

    /// The mock, the marker, the workspace and the client, for a test that uses them apart.
    pub fn into_parts(self) -> (MockProvider, String, tempfile::TempDir, Connection) {
        (self.mock, self.marker, self.ws, self.c)
    }

    /// The tools the workspace's [`FixtureAgent::logging_calls`] children were called with,
    /// one a call.
    pub fn calls_logged(&self) -> Vec<String> {
        children::calls_logged(&self.ws.path().join(CALL_LOG))
    }

    /// Fails unless every process carrying the marker is gone within `secs` while the
    /// server still serves (no child outlives its run), then ends the session.
    pub async fn close_once_children_gone(self, secs: u64) {
        children::assert_no_process_left(&self.marker, secs).await;
        self.close().await;
    }

    /// Ends the session: the server sees its stdin close.
    pub async fn close(self) {
        self.c.close().await;
    }
}

impl std::ops::Deref for ServerUnderTest {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        &self.c
    }
}

/// The real binary serving a [`TestWorkspace`] over streamable HTTP; clients connect with
/// [`HttpServerUnderTest::connect`].
pub struct HttpServerUnderTest {
    pub mock: MockProvider,
    /// The marker the workspace's fixture children carry in their environment.
    pub marker: String,
    /// The workspace, deleted when this drops.
    pub ws: tempfile::TempDir,
    /// The server process, killed when this drops.
    pub process: tokio::process::Child,
    /// Its `/mcp` endpoint.
    pub url: String,
}

impl HttpServerUnderTest {
    /// The standard agents (see [`TestWorkspace::standard_agents`]) over HTTP on a free
    /// loopback port, with no token.
    pub async fn start() -> HttpServerUnderTest {
        TestWorkspace::new().standard_agents().http(&[]).await
    }

    /// [`Self::start`], every request needing the bearer token `token`, read from the
    /// variable `var` (`--auth-token-env`).
    pub async fn with_token(var: &str, token: &str) -> HttpServerUnderTest {
        TestWorkspace::new()
            .standard_agents()
            .env(var, token)
            .http(&["--auth-token-env", var])
            .await
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.process.id().unwrap()
    }

    /// A client of `generation`, sending `token` as its bearer token if any.
    pub async fn connect(&self, generation: Generation, token: Option<&str>) -> Connection {
        binary::connect_http(&self.url, generation, token).await
    }
}

/// A throwaway workspace for tests that build files at run time.
pub struct TempWorkspace {
    pub dir: tempfile::TempDir,
}

impl TempWorkspace {
    pub fn new() -> Self {
        TempWorkspace {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `contents` at `rel`, creating parent directories.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path
    }

    pub fn load(&self, options: &LoadOptions) -> Catalog {
        super::load_at(self.path(), options)
    }
}
