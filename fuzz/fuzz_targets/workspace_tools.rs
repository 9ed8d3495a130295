//! The workspace tools' arguments, on any JSON, against a small hostile workspace (ignore
//! files that are a FIFO and a link to a device, a link out, a name with a right-to-left
//! override, a file of control bytes): no input may panic, block, or make an answer larger
//! than 1 MiB as JSON, and no answer's text may carry a right-to-left override unescaped.
//! The input's first byte picks the tool; the rest is its arguments as a JSON object, or
//! else the text of its main argument (`path`, or `pattern`).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_agents::limits::TOOL_OUTPUT_BYTES;
use mcp_agents::workspace::{WorkspaceRoot, WorkspaceTools};
use serde_json::{Value, json};

/// The six tools, and a name that is none of them.
const TOOLS: [&str; 7] = ["read", "list", "glob", "grep", "edit", "write", "delete"];

fn workspace() -> &'static WorkspaceTools {
    static TOOLS: OnceLock<WorkspaceTools> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let dir: PathBuf =
            std::env::temp_dir().join(format!("mcp-agents-fuzz-workspace-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let write = |rel: &str, bytes: &[u8]| {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        };
        write("src/main.rs", b"fn main() {\n    let limit = 8;\n}\n");
        write("src/lib.rs", b"pub fn run() {}\n// TODO\n");
        write(".gitignore", b"target/\n*.log\n!keep.log\n");
        write("target/out.rs", b"fn built() {}\n");
        write("keep.log", b"kept\n");
        write("run.log", b"dropped\n");
        write("controls.txt", &[1u8; 4096]);
        write("bin.dat", b"\x7fELF\x00\x01");
        write("invoice_\u{202E}fdp.exe", b"payload\n");
        write("sub/a.txt", b"a\n");
        let fifo = std::ffi::CString::new(dir.join("sub/.ignore").to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) };
        let _ = std::os::unix::fs::symlink("/dev/zero", dir.join("src/.gitignore"));
        let _ = std::os::unix::fs::symlink("/etc", dir.join("escape"));
        let _ = std::os::unix::fs::symlink("loop", dir.join("loop"));
        WorkspaceTools::new(WorkspaceRoot::open(&dir).unwrap())
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let tool = TOOLS[usize::from(pick) % TOOLS.len()];
    let text = String::from_utf8_lossy(rest);
    let arguments = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(mut map)) => {
            // What `edit` and `write` put in a file is shown as it is by `read`: keep the
            // override out of it, so the check below stays about names and quotes.
            for field in ["content", "new_text"] {
                if let Some(Value::String(written)) = map.get_mut(field) {
                    *written = written.replace('\u{202E}', "");
                }
            }
            Value::Object(map)
        }
        _ => match tool {
            "grep" => json!({"pattern": text, "glob": text}),
            "glob" => json!({"pattern": text}),
            "edit" => json!({"path": text, "old_text": text, "new_text": "x"}),
            "write" => json!({"path": text, "content": "x\n"}),
            _ => json!({"path": text}),
        },
    };
    let result = workspace().call_now(tool, arguments);
    let answer = serde_json::to_value(&result).expect("a result serializes");
    let size = answer.to_string().len();
    assert!(size <= TOOL_OUTPUT_BYTES, "{tool}: {size} bytes as JSON");
    // What the model reads: file names and quoted arguments show their hidden characters
    // escaped (the files' own text has none here).
    let text = answer["content"][0]["text"].as_str().expect("a text block");
    assert!(!text.contains('\u{202E}'), "{tool}: {text}");
});
