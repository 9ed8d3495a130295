//! `edit` and `write` of the built-in workspace server (SPEC §8.6) through the real binary:
//! a real `mcp-agents workspace-tools DIR` process driven as a run drives it. What they
//! change and answer, the read-before-edit rule and the stale-read refusal (two servers are
//! two agents' runs), every way out of the workspace the read tools refuse (links, `..`,
//! absolute paths, FIFOs, a link swapped in during the change) and `.git/`, and atomic
//! replacement (a reader never sees half a file).

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::json;
use support::workspace::{Tools, project, serve, write};

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_and_write_change_only_files_read_as_they_are_now() {
    let (ws, _outside) = project();
    let dir = ws.path();
    std::fs::set_permissions(
        dir.join("src/run.rs"),
        std::fs::Permissions::from_mode(0o751),
    )
    .unwrap();
    let tools = serve(dir).await;

    an_unread_file_is_not_changed(&tools, dir).await;
    an_edit_after_a_read_shows_the_changed_lines(&tools, dir).await;
    edits_after_its_own_change_and_what_is_refused(&tools, dir).await;
    write_creates_files_and_replaces_read_ones(&tools, dir).await;
    let leftovers: Vec<_> = walk(dir)
        .into_iter()
        .filter(|p| p.contains("mcp-agents-"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "no temporary file left: {leftovers:?}"
    );
    let _ = tools.client.cancel().await;
}

/// A file this run has not read is not changed, and the model is told what to do.
async fn an_unread_file_is_not_changed(tools: &Tools, dir: &Path) {
    let refusal = tools
        .refusal(
            "edit",
            json!({"path": "src/run.rs", "old_text": "TODO", "new_text": "DONE"}),
        )
        .await;
    assert_eq!(
        refusal,
        "`src/run.rs` exists and this run has not read it: `read` it first (a file is changed \
         only when its current content has been read), then make the change"
    );
    let refusal = tools
        .refusal("write", json!({"path": "README.md", "content": "gone\n"}))
        .await;
    assert!(refusal.contains("has not read it"), "{refusal}");
    assert_eq!(read(dir, "README.md"), "# Demo\nRun it with a limit.\n");
}

/// Read (a part is enough), then edit: the answer shows the changed lines, numbered.
async fn an_edit_after_a_read_shows_the_changed_lines(tools: &Tools, dir: &Path) {
    tools
        .text("read", json!({"path": "src/run.rs", "limit": 1}))
        .await;
    let (text, structured) = tools
        .text(
            "edit",
            json!({"path": "src/run.rs", "old_text": "    // TODO: use the limit\n",
                   "new_text": "    for _ in 0..limit {\n        step();\n    }\n"}),
        )
        .await;
    assert_eq!(
        text,
        "Edited `src/run.rs`: 1 occurrence replaced. The lines around the change, as they are \
         now:\n     1\tpub fn run(limit: u32) {\n     2\t    for _ in 0..limit {\n     3\t        \
         step();\n     4\t    }\n     5\t}\n"
    );
    assert_eq!(
        structured,
        json!({"path": "src/run.rs", "replacements": 1, "first_changed_line": 2,
               "last_changed_line": 4})
    );
    assert_eq!(
        read(dir, "src/run.rs"),
        "pub fn run(limit: u32) {\n    for _ in 0..limit {\n        step();\n    }\n}\n"
    );
    let mode = std::fs::metadata(dir.join("src/run.rs"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o751, "the file keeps its permissions");
}

/// Its own change counts as read: a second edit needs no new read.
async fn edits_after_its_own_change_and_what_is_refused(tools: &Tools, dir: &Path) {
    tools
        .text(
            "edit",
            json!({"path": "src/run.rs", "old_text": "step()", "new_text": "tick()"}),
        )
        .await;
    // Ambiguous, missing and empty texts are refused with what to do.
    let refusal = tools
        .refusal(
            "edit",
            json!({"path": "src/run.rs", "old_text": "    ", "new_text": "\t"}),
        )
        .await;
    assert!(
        refusal.contains("occurs 4 times") && refusal.contains("`replace_all`"),
        "{refusal}"
    );
    let refusal = tools
        .refusal(
            "edit",
            json!({"path": "src/run.rs", "old_text": "tock()", "new_text": "x"}),
        )
        .await;
    assert!(refusal.contains("was not found"), "{refusal}");
    let (_, structured) = tools
        .text(
            "edit",
            json!({"path": "src/run.rs", "old_text": "    ", "new_text": "\t",
                   "replace_all": true}),
        )
        .await;
    assert_eq!(structured["replacements"], 4);
    assert_eq!(
        read(dir, "src/run.rs"),
        "pub fn run(limit: u32) {\n\tfor _ in 0..limit {\n\t\ttick();\n\t}\n}\n"
    );
    let refusal = tools
        .refusal(
            "edit",
            json!({"path": "src/new.rs", "old_text": "a", "new_text": "b"}),
        )
        .await;
    assert!(refusal.contains("does not exist"), "{refusal}");
}

/// `write` creates files (and their directories) without a read.
async fn write_creates_files_and_replaces_read_ones(tools: &Tools, dir: &Path) {
    let (text, structured) = tools
        .text(
            "write",
            json!({"path": "tests/unit/run_test.rs", "content": "#[test]\nfn runs() {}\n"}),
        )
        .await;
    assert_eq!(
        text,
        "Created `tests/unit/run_test.rs` (2 lines, 21 bytes).\n"
    );
    assert_eq!(structured["created"], true);
    assert_eq!(
        read(dir, "tests/unit/run_test.rs"),
        "#[test]\nfn runs() {}\n"
    );
    // And replaces a file it has read, through a link inside the workspace to it.
    std::os::unix::fs::symlink("README.md", dir.join("readme-link")).unwrap();
    tools.text("read", json!({"path": "readme-link"})).await;
    let (_, structured) = tools
        .text(
            "write",
            json!({"path": "readme-link", "content": "# New\n"}),
        )
        .await;
    assert_eq!(
        structured,
        json!({"path": "README.md", "created": false, "bytes": 6, "lines": 1})
    );
    assert_eq!(read(dir, "README.md"), "# New\n");
    assert!(
        std::fs::symlink_metadata(dir.join("readme-link"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link is still a link"
    );
}

fn walk(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        found.push(entry.path().display().to_string());
        if kind.is_dir() {
            found.extend(walk(&entry.path()));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_since_the_read_is_refused_so_no_edit_is_lost() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    write(dir, "config.toml", "retries = 1\ntimeout = 10\n");
    // Two agents' runs: two workspace servers on one workspace.
    let first = serve(dir).await;
    let second = serve(dir).await;
    for tools in [&first, &second] {
        tools.text("read", json!({"path": "config.toml"})).await;
    }
    second
        .text(
            "edit",
            json!({"path": "config.toml", "old_text": "timeout = 10", "new_text": "timeout = 30"}),
        )
        .await;
    let refusal = first
        .refusal(
            "edit",
            json!({"path": "config.toml", "old_text": "retries = 1", "new_text": "retries = 5"}),
        )
        .await;
    assert_eq!(
        refusal,
        "`config.toml` has changed since this run read it (another agent or a person changed \
         it): `read` it again, then make the change on what it holds now"
    );
    let refusal = first
        .refusal(
            "write",
            json!({"path": "config.toml", "content": "retries = 5\n"}),
        )
        .await;
    assert!(refusal.contains("has changed since"), "{refusal}");
    assert_eq!(read(dir, "config.toml"), "retries = 1\ntimeout = 30\n");
    // Read again, the change goes through, on top of the other one.
    first.text("read", json!({"path": "config.toml"})).await;
    first
        .text(
            "edit",
            json!({"path": "config.toml", "old_text": "retries = 1", "new_text": "retries = 5"}),
        )
        .await;
    assert_eq!(read(dir, "config.toml"), "retries = 5\ntimeout = 30\n");

    // A person's change between the read and the edit is refused the same way.
    second.text("read", json!({"path": "config.toml"})).await;
    std::fs::write(
        dir.join("config.toml"),
        "retries = 5\ntimeout = 30\ndebug = true\n",
    )
    .unwrap();
    let refusal = second
        .refusal(
            "edit",
            json!({"path": "config.toml", "old_text": "retries = 5", "new_text": "retries = 0"}),
        )
        .await;
    assert!(refusal.contains("has changed since"), "{refusal}");
    assert_eq!(
        read(dir, "config.toml"),
        "retries = 5\ntimeout = 30\ndebug = true\n"
    );
    let _ = first.client.cancel().await;
    let _ = second.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_way_out_and_into_git_is_refused_and_nothing_outside_changes() {
    let (ws, outside) = project();
    let dir = ws.path();
    write(dir, ".git/config", "[core]\n");
    write(dir, "src/.GIT/hooks/pre-commit", "#!/bin/sh\n");
    let fifo = std::ffi::CString::new(dir.join("pipe").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    std::os::unix::fs::symlink(outside.path().join("made.txt"), dir.join("dangling-out")).unwrap();
    std::os::unix::fs::symlink(".git", dir.join("git-link")).unwrap();
    let tools = serve(dir).await;
    let secret = outside.path().join("secret.txt");
    let secret = secret.to_str().unwrap().to_owned();
    let made = outside.path().join("made.txt");
    let made = made.to_str().unwrap().to_owned();
    let cases: Vec<(&str, &str)> = vec![
        ("../secret.txt", "climbs out of the workspace with `..`"),
        (
            "src/../../made.txt",
            "climbs out of the workspace with `..`",
        ),
        (&secret, "is outside the workspace"),
        (&made, "is outside the workspace"),
        ("escape/secret.txt", "through a symbolic link"),
        ("escape/made.txt", "through a symbolic link"),
        ("escape/new/made.txt", "through a symbolic link"),
        ("secret-link", "through a symbolic link"),
        ("dangling-out", "through a symbolic link"),
        (".git/config", "is inside `.git/`"),
        (".git/hooks/post-checkout", "is inside `.git/`"),
        ("src/.GIT/hooks/pre-commit", "is inside `.git/`"),
        ("git-link/config", "is inside `.git/`"),
        ("pipe", "is a FIFO, not a regular file"),
        ("src", "is a directory"),
        ("", "is the workspace directory"),
        (
            "new/../../made.txt",
            "climbs out of the workspace with `..`",
        ),
    ];
    for (path, why) in &cases {
        for (tool, arguments) in [
            ("write", json!({"path": path, "content": "owned\n"})),
            (
                "edit",
                json!({"path": path, "old_text": "outside-secret", "new_text": "owned"}),
            ),
        ] {
            let refusal = tools.refusal(tool, arguments).await;
            // `edit` changes existing files only: a new one is refused before anything else.
            let why = if tool == "edit" && *path == ".git/hooks/post-checkout" {
                "does not exist in the workspace"
            } else {
                why
            };
            assert!(refusal.contains(why), "{tool} {path:?}: {refusal}");
            assert!(!refusal.contains("outside-secret"), "{refusal}");
        }
    }
    assert_eq!(read(outside.path(), "secret.txt"), "outside-secret limit\n");
    assert!(!outside.path().join("made.txt").exists());
    assert!(!outside.path().join("new").exists());
    assert_eq!(read(dir, ".git/config"), "[core]\n");
    assert!(!dir.join(".git/hooks").exists());
    assert_eq!(read(dir, "src/.GIT/hooks/pre-commit"), "#!/bin/sh\n");
    assert!(
        !dir.join("new").exists(),
        "a refused write makes no directory"
    );
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_link_during_writes_leads_nowhere() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let dir = ws.path().canonicalize().unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    let tools = serve(&dir).await;
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    // Swaps `sub` for a link out of the workspace and back, as fast as it can.
    let swapper = {
        let (dir, target, stop, swaps) = (
            dir.clone(),
            outside.path().to_owned(),
            stop.clone(),
            swaps.clone(),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::rename(dir.join("sub"), dir.join("sub.real"));
                let _ = std::os::unix::fs::symlink(&target, dir.join("sub"));
                let _ = std::fs::remove_file(dir.join("sub"));
                let _ = std::fs::rename(dir.join("sub.real"), dir.join("sub"));
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let mut written = 0;
    for i in 0..150 {
        let result = tools
            .call(
                "write",
                json!({"path": format!("sub/f{i}.txt"), "content": "x\n"}),
            )
            .await;
        if result.is_error != Some(true) {
            written += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(
        swaps.load(Ordering::Relaxed) > 10,
        "the swaps raced the writes"
    );
    let outside_entries: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
    assert!(
        outside_entries.is_empty(),
        "nothing was written outside ({written} writes went through)"
    );
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_never_sees_half_a_written_file() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path().to_owned();
    let size = 512 * 1024;
    write(&dir, "data.txt", "a".repeat(size));
    let tools = serve(&dir).await;
    tools.text("read", json!({"path": "data.txt"})).await;
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let reader = {
        let (path, stop, reads) = (dir.join("data.txt"), stop.clone(), reads.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let bytes = std::fs::read(&path).unwrap();
                assert_eq!(bytes.len(), size, "a whole file");
                assert!(
                    bytes.iter().all(|b| *b == bytes[0]),
                    "one version of the file, never a mix"
                );
                reads.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    for i in 0..20 {
        let letter = if i % 2 == 0 { "b" } else { "a" };
        tools
            .text(
                "write",
                json!({"path": "data.txt", "content": letter.repeat(size)}),
            )
            .await;
    }
    stop.store(true, Ordering::Relaxed);
    reader.join().expect("the reader saw only whole files");
    assert!(
        reads.load(Ordering::Relaxed) > 20,
        "the reader raced the writes"
    );
    let _ = tools.client.cancel().await;
}
