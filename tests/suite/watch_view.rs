//! `mcp-agents watch` on a pseudo-terminal, read back through a terminal emulator (SPEC
//! §7.1): at 80×24 the columns on the right are dropped and no row wraps, the clocks run,
//! an agent's detail shows its tool calls with their durations, `s` then `y` stops it, the
//! server going away is said with the last picture kept, and `q` gives the terminal back;
//! at 160×48 every column is shown and an agent is seen to finish. Without a terminal it
//! prints what `status` prints.

use crate::support;

use std::path::Path;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::json;
use support::binary::{self, Connection, Generation};
use support::pty::{Terminal, rows};
use support::run_kit::KEY;
use support::status as st;

const DOWN: &[u8] = b"\x1b[B";
const ENTER: &[u8] = b"\r";
const ESC: &[u8] = b"\x1b";

/// A server over [`st::workspace`], watched through `runtime`.
async fn serve(mock: &MockProvider, runtime: &Path) -> (tempfile::TempDir, Connection) {
    let ws = st::workspace(mock);
    let c = binary::stdio(ws.path(), Generation::Modern, &st::env(runtime)).await;
    (ws, c)
}

/// `mcp-agents watch WORKSPACE` on a terminal of `size` (rows, columns).
fn watch(ws: &Path, runtime: &Path, size: (u16, u16)) -> Terminal {
    Terminal::start_sized(
        &["watch", ws.to_str().unwrap()],
        Path::new("/"),
        size,
        size.0,
        |command| command.env("XDG_RUNTIME_DIR", runtime),
    )
}

fn text(screen: &vt100::Screen) -> String {
    rows(screen).join("\n")
}

/// The row showing agent `name`.
fn row_of(screen: &vt100::Screen, name: &str) -> Option<String> {
    rows(screen)
        .into_iter()
        .find(|r| r.starts_with(&format!("{name} ")))
}

/// No row of the screen wraps onto the next.
fn assert_no_row_wraps(screen: &vt100::Screen) {
    let (height, _) = screen.size();
    for r in 0..u16::from(height) {
        assert!(!screen.row_wrapped(r), "row {r} wrapped:\n{}", text(screen));
    }
}

/// The list at 80 columns: the columns that fit, the finished agent's first line, the
/// running worker, and its clock going on with no transition.
fn the_list_at_80_columns(term: &mut Terminal, short: &str) {
    let screen = term.screen.screen();
    assert_no_row_wraps(screen);
    let heading = rows(screen)
        .into_iter()
        .find(|r| r.starts_with("NAME "))
        .unwrap();
    for column in ["ID", "STATUS", "NOW", "ELAPSED", "TURNS", "TOKENS"] {
        assert!(heading.contains(column), "{heading}");
    }
    for dropped in ["COST", "FILES", "QUESTION"] {
        assert!(
            !heading.contains(dropped),
            "dropped at 80 columns: {heading}"
        );
    }
    let plain = row_of(screen, "plain").unwrap();
    assert!(
        plain.contains("completed") && plain.contains("Plain answer."),
        "{plain}"
    );
    assert!(!text(screen).contains("More that stays out"));
    let worker = row_of(screen, "worker").unwrap();
    assert!(
        worker.contains(short) && worker.contains("running"),
        "{worker}"
    );
    // The clock goes on with no transition.
    term.until(|_| {}, |s| row_of(s, "worker").is_some_and(|r| r != worker));
}

/// The worker's detail: its calls, the finished one with its duration.
fn the_workers_detail(term: &mut Terminal, short: &str) {
    term.type_keys(DOWN);
    term.type_keys(ENTER);
    term.until(|_| {}, |s| s.contents().contains("tool calls:"));
    let detail = text(term.screen.screen());
    assert!(
        detail.contains(&format!("worker {short} · running")),
        "{detail}"
    );
    let echo = rows(term.screen.screen())
        .into_iter()
        .find(|r| r.contains("fx.echo"))
        .unwrap();
    assert!(
        echo.trim_start()
            .split(' ')
            .next()
            .unwrap()
            .parse::<f64>()
            .is_ok(),
        "{echo}"
    );
    assert!(echo.contains(" s  fx.echo"), "{echo}");
    assert!(detail.contains("running  fx.sleep"), "{detail}");
    term.type_keys(ESC);
    term.until(|_| {}, |s| s.contents().contains("NAME "));
}

/// Stop the worker from the view: asked, confirmed, done.
fn stop_the_worker(term: &mut Terminal, short: &str) {
    term.type_keys(b"s");
    term.until(
        |_| {},
        |s| s.contents().contains(&format!("stop worker {short}? y/n")),
    );
    term.type_keys(b"y");
    term.until(
        |_| {},
        |s| row_of(s, "worker").is_some_and(|r| r.contains("stopped")),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_80_by_24_a_person_sees_the_agents_live_and_stops_one() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([
        Step::text("Plain answer.\nMore that stays out."),
        Step::tool_call("fx__echo", json!({"text": "hi"})),
        Step::tool_call("fx__sleep", json!({"ms": 60_000})),
    ]);
    let runtime = st::runtime_dir();
    let (ws, c) = serve(&mock, runtime.path()).await;
    c.run_to_end("plain", "Answer.").await;
    let id = c.spawn("worker", "Work.").await;
    c.wait_for_phase(&id, "tool_call").await;
    let short = id[..8].to_owned();
    let short = short.as_str();

    let runtime_dir = runtime.path().to_owned();
    let path = ws.path().to_owned();
    let mut term = tokio::task::block_in_place(|| {
        let mut term = watch(&path, &runtime_dir, (24, 80));
        term.until(|_| {}, |s| s.contents().contains("Calling fx.sleep"));
        the_list_at_80_columns(&mut term, short);
        the_workers_detail(&mut term, short);
        stop_the_worker(&mut term, short);
        term
    });
    let record = c.wait(&[&id], 0).await["agents"][0].clone();
    assert_eq!(record["error"]["message"], "stopped from mcp-agents watch");

    // The server goes away: said, and the last picture stays.
    c.close().await;
    let code = tokio::task::spawn_blocking(move || {
        term.until(|_| {}, |s| s.contents().contains("has gone away"));
        let screen = term.screen.screen();
        assert!(row_of(screen, "plain").is_some() && row_of(screen, "worker").is_some());
        assert_no_row_wraps(screen);
        term.type_keys(b"q");
        let code = term.finish(|_| {});
        let screen = term.screen.screen();
        assert!(!screen.alternate_screen(), "q gives the terminal back");
        assert!(!screen.hide_cursor(), "with its cursor");
        code
    })
    .await
    .unwrap();
    assert_eq!(code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_160_by_48_every_column_shows_and_an_agent_is_seen_to_finish() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([
        Step::tool_call("fx__sleep", json!({"ms": 1_500})),
        Step::text("Worker done."),
    ]);
    let runtime = st::runtime_dir();
    let (ws, c) = serve(&mock, runtime.path()).await;
    let id = c.spawn("worker", "Work.").await;
    c.wait_for_phase(&id, "tool_call").await;
    let runtime_dir = runtime.path().to_owned();
    let path = ws.path().to_owned();
    let done = tokio::task::spawn_blocking(move || {
        let mut term = watch(&path, &runtime_dir, (48, 160));
        term.until(|_| {}, |s| s.contents().contains("Calling fx.sleep"));
        let screen = term.screen.screen();
        let heading = rows(screen)
            .into_iter()
            .find(|r| r.starts_with("NAME "))
            .unwrap();
        for column in ["TURNS", "TOKENS", "COST", "FILES", "QUESTION"] {
            assert!(heading.contains(column), "{heading}");
        }
        // The room beyond the columns' least widths goes to NOW and QUESTION.
        let at = |column: &str| heading.find(column).unwrap();
        assert!(at("ELAPSED") > 70 && at("QUESTION") > 110, "{heading}");
        let worker = row_of(screen, "worker").unwrap();
        assert!(worker.contains('–'), "no cost without a price: {worker}");
        // It finishes while watched.
        term.until(assert_no_row_wraps, |s| {
            row_of(s, "worker")
                .is_some_and(|r| r.contains("completed") && r.contains("Worker done."))
        });
        term.type_keys(ENTER);
        term.until(|_| {}, |s| s.contents().contains("tool calls:"));
        let sleep = rows(term.screen.screen())
            .into_iter()
            .find(|r| r.contains("fx.sleep"))
            .unwrap();
        let took: f64 = sleep.split_whitespace().next().unwrap().parse().unwrap();
        assert!(
            (1.5..10.0).contains(&took),
            "the call took its 1.5 s: {sleep}"
        );
        term.type_keys(b"q");
        term.finish(|_| {})
    })
    .await
    .unwrap();
    assert_eq!(done, 0);
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_watch_prints_what_status_prints() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::text("Plain answer.")]);
    let runtime = st::runtime_dir();
    let (ws, c) = serve(&mock, runtime.path()).await;
    c.run_to_end("plain", "Answer.").await;
    let out = tokio::process::Command::new(binary::BIN)
        .arg("watch")
        .arg(ws.path())
        .env("XDG_RUNTIME_DIR", runtime.path())
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    let status = st::status(ws.path(), runtime.path(), false).await;
    assert_eq!(String::from_utf8_lossy(&out.stdout), status.stdout);
    assert!(status.stdout.contains("Plain answer."), "{}", status.stdout);
    c.close().await;
}
