//! llama.cpp's `llama-server` with SmolLM2-135M, for `suite::real_engine`: found through
//! `scripts/install-engine --check` (the env file the install writes; never built from a
//! test), started once per test process on a free loopback port, and killed with that
//! process however it ends (`PR_SET_PDEATHSIG`, armed from a thread that lives as long as
//! the server does).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

/// The key the server is started with (`--api-key`): every request needs it, as a bearer
/// token or in `x-api-key`.
pub const ENGINE_KEY: &str = "real-engine-test-key";

/// The server's context window, in tokens (`-c`): room for the reader's 1.5k-token first
/// turn in several slots at once, and small enough that a 20k-token task overflows it at
/// the cost of tokenizing it (a quarter of a second).
pub const CONTEXT_TOKENS: usize = 8192;

/// How long the server may take to load the model (3.6 s on a cold page cache, 0.6 s warm;
/// much more on a loaded machine).
const START_LIMIT: Duration = Duration::from_secs(120);

/// A running server.
pub struct Engine {
    pub port: u16,
    /// Its stdout and stderr.
    pub log: PathBuf,
    exited: Arc<Mutex<Option<ExitStatus>>>,
}

impl Engine {
    /// `http://127.0.0.1:PORT`: the origin (Messages `base_url`).
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The last lines of the server's log, for a failure's message.
    pub fn log_tail(&self) -> String {
        log_tail(&self.log)
    }

    /// Fails the test if the server has exited.
    pub fn assert_alive(&self) {
        if let Some(status) = *self.exited.lock().unwrap() {
            panic!(
                "llama-server exited ({status}); the end of its log ({}):\n{}",
                self.log.display(),
                self.log_tail()
            );
        }
    }
}

/// The server, started by the first test that asks; a test fails with a message saying
/// how to install it when it is not installed (never passes without it).
pub async fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();
    let started = tokio::task::spawn_blocking(|| ENGINE.get_or_init(start))
        .await
        .expect("the start of llama-server");
    match started {
        Ok(engine) => {
            engine.assert_alive();
            engine
        }
        Err(why) => panic!("{why}"),
    }
}

/// What `scripts/install-engine --check` printed: `LLAMA_SERVER`, `LLAMA_MODEL`,
/// `LLAMA_TEMPLATE`…
fn installed() -> Result<HashMap<String, String>, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-engine");
    let out = Command::new(&script)
        .arg("--check")
        .output()
        .map_err(|e| format!("could not run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "suite::real_engine needs llama.cpp's server and its model, which are not \
             installed:\n{}\nInstall them once with `scripts/install-engine` (it keeps them in \
             a cache outside the clone), then run `cargo test --test all -- --ignored \
             suite::real_engine`.",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let env: HashMap<String, String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    for name in ["LLAMA_SERVER", "LLAMA_MODEL", "LLAMA_TEMPLATE"] {
        match env.get(name) {
            Some(path) if Path::new(path).exists() => {}
            _ => {
                return Err(format!(
                    "scripts/install-engine --check printed no existing {name}: rerun \
                     scripts/install-engine"
                ));
            }
        }
    }
    Ok(env)
}

fn start() -> Result<Engine, String> {
    let env = installed()?;
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free loopback port: {e}"))?
        .port();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("real-engine");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let log = dir.join(format!("llama-server-{port}.log"));
    let out = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut command = Command::new(&env["LLAMA_SERVER"]);
    command
        .args(["-m", &env["LLAMA_MODEL"], "--host", "127.0.0.1"])
        .args(["--port", &port.to_string()])
        // One thread: the other engineers' builds and the binary under test share the
        // cores, and two threads were slower than one then (docs/performance.md).
        .args(["-t", "1", "-c", &CONTEXT_TOKENS.to_string()])
        // SmolLM2's own template knows no tools: the server would drop them silently.
        .args(["--jinja", "--chat-template-file", &env["LLAMA_TEMPLATE"]])
        .args(["--api-key", ENGINE_KEY])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    die_with_this_process(&mut command);
    let exited = Arc::new(Mutex::new(None));
    let (sent, spawned) = mpsc::channel();
    let slot = exited.clone();
    std::thread::Builder::new()
        .name("llama-server".into())
        .spawn(move || {
            // This thread forks the server and waits for it, so it lives exactly as long as
            // the server: the death signal is armed against the thread that forked.
            let mut child = match command.spawn() {
                Ok(child) => child,
                Err(e) => {
                    let _ = sent.send(Err(e.to_string()));
                    return;
                }
            };
            let _ = sent.send(Ok(()));
            let status = child.wait();
            *slot.lock().unwrap() = status.ok();
        })
        .map_err(|e| e.to_string())?;
    spawned
        .recv()
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("could not start {}: {e}", env["LLAMA_SERVER"]))?;
    let engine = Engine { port, log, exited };
    let deadline = Instant::now() + START_LIMIT;
    while Instant::now() < deadline {
        if let Some(status) = *engine.exited.lock().unwrap() {
            return Err(format!(
                "llama-server exited at start ({status}):\n{}",
                engine.log_tail()
            ));
        }
        if healthy(port) {
            return Ok(engine);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!(
        "llama-server did not answer /health within {START_LIMIT:?}:\n{}",
        engine.log_tail()
    ))
}

/// Arms `PR_SET_PDEATHSIG` in the child, so that the server dies with the test process.
fn die_with_this_process(command: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: runs between fork and exec and only calls prctl, which is
        // async-signal-safe and allocates nothing.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// Whether `GET /health` answers 200 (the model is loaded).
fn healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}
