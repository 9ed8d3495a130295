//! The request oracle, seen from the mocks (tests only): when a mock is dropped, every request
//! it received goes to `tests/oracle/check_requests.py`, which checks it against the official
//! SDKs' request types (PyPI `openai` and `anthropic`, strictly) and the providers' documented
//! rules; any violation fails the test that made the request (SPEC §6.1: "the API would
//! accept it" is the bar, not "the mock accepted it").
//!
//! One checker process serves the whole test binary: it is started on first use (importing
//! the SDKs takes seconds), reads one JSON line per batch and answers with one line. It runs
//! from the virtual environment `scripts/install-interop` makes (`$MCP_AGENTS_INTEROP_DIR`,
//! else `target/interop`); without it, the check fails with instructions instead of
//! passing unchecked.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use super::script::{MockWire, Recorded};

/// The checker process: its input, and its output read line by line.
struct Checker {
    _child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

/// What the oracle said about one batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// One line per broken rule, naming the request and where in it.
    pub violations: Vec<String>,
    /// How often each documented exception was applied (`docs/decisions.md`).
    pub allowances: Vec<(String, u64)>,
    pub checked: usize,
}

static CHECKER: Mutex<Option<Checker>> = Mutex::new(None);

fn interop_dir() -> PathBuf {
    std::env::var_os("MCP_AGENTS_INTEROP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/interop"))
}

fn start() -> Result<Checker, String> {
    let python = interop_dir().join("venv/bin/python");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/check_requests.py");
    if !python.exists() {
        return Err(format!(
            "the request oracle needs the SDKs scripts/install-interop installs ({} is \
             missing); run the tests with scripts/test",
            python.display()
        ));
    }
    let mut child = Command::new(&python)
        .arg(&script)
        .arg("--serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| {
            format!(
                "could not start the request oracle ({}): {e}",
                python.display()
            )
        })?;
    let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the request oracle has no pipes".to_owned());
    };
    let mut checker = Checker {
        _child: child,
        input,
        output: BufReader::new(output),
    };
    let ready = read_line(&mut checker)?;
    if ready.get("ready") != Some(&Value::Bool(true)) {
        return Err(format!("the request oracle did not start: {ready}"));
    }
    Ok(checker)
}

fn read_line(checker: &mut Checker) -> Result<Value, String> {
    let mut line = String::new();
    match checker.output.read_line(&mut line) {
        Ok(0) => Err("the request oracle exited (its error is on stderr above)".to_owned()),
        Ok(_) => serde_json::from_str(&line)
            .map_err(|e| format!("the request oracle answered something that is not JSON: {e}")),
        Err(e) => Err(format!("could not read the request oracle's answer: {e}")),
    }
}

/// A recorded request as the oracle reads it: the wire, every header, the body, and the
/// provider extras the mock had sent before it (Chat Completions).
fn request_json(request: &Recorded) -> Value {
    let headers: Map<String, Value> = request
        .headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                json!(String::from_utf8_lossy(value.as_bytes())),
            )
        })
        .collect();
    json!({
        "wire": match request.wire {
            MockWire::Responses => "responses",
            MockWire::Messages => "messages",
            MockWire::Chat => "chat",
        },
        "headers": headers,
        "body": request.body,
        "extras_sent": request
            .extras_sent
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value}))
            .collect::<Vec<_>>(),
    })
}

/// Checks `requests`; an error says the oracle itself could not run.
pub fn check(requests: &[Recorded]) -> Result<Verdict, String> {
    if requests.is_empty() {
        return Ok(Verdict::default());
    }
    let mut guard = CHECKER.lock().unwrap_or_else(|p| p.into_inner());
    if guard.is_none() {
        *guard = Some(start()?);
    }
    let Some(checker) = guard.as_mut() else {
        return Err("the request oracle is not running".to_owned());
    };
    let batch = json!({"requests": requests.iter().map(request_json).collect::<Vec<_>>()});
    let sent = writeln!(checker.input, "{batch}").and_then(|()| checker.input.flush());
    let answer = match sent {
        Ok(()) => read_line(checker),
        Err(e) => Err(format!("could not reach the request oracle: {e}")),
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(e) => {
            // The next check starts a fresh process.
            *guard = None;
            return Err(e);
        }
    };
    Ok(Verdict {
        violations: answer["violations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        allowances: answer["allowances"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
            .collect(),
        checked: answer["checked"].as_u64().unwrap_or(0) as usize,
    })
}
