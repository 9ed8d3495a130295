//! A question the agent of `mcp-agents run` asks (SPEC §4.5), put to the person at the
//! terminal: shown on stderr, and one line read from standard input as the answer when that
//! is a terminal. An empty line declines (the agent decides for itself); without a terminal
//! nobody can answer, so the question waits out its `ask_timeout_s` and the agent decides
//! for itself then (docs/decisions.md, "Questions from `mcp-agents run`").

use std::io::{BufRead, IsTerminal, Read};

use tokio_util::sync::CancellationToken;

use crate::limits::ASK_QUESTION_CHARS;
use crate::sessions::{ParentAnswer, Question, SessionManager, Snapshot};

/// Puts `agent`'s question to the person. `None` when Ctrl-C came first.
pub(super) async fn ask_the_person(
    manager: &SessionManager,
    agent: &Snapshot,
    question: &Question,
    cancel: &CancellationToken,
) -> Option<()> {
    eprintln!("{} asks: {}", agent.name, shown(&question.text));
    if !question.options.is_empty() {
        let options: Vec<String> = question.options.iter().map(|o| shown(o)).collect();
        eprintln!("  options: {}", options.join(" | "));
    }
    let waits = agent
        .activity
        .as_ref()
        .and_then(|(activity, _)| activity.timeout)
        .map(|timeout| format!(" within {} s", timeout.as_secs()))
        .unwrap_or_default();
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "mcp-agents: standard input is not a terminal, so nobody can answer here; unless \
             an answer comes{waits}, the agent decides for itself"
        );
        return Some(());
    }
    eprint!("answer{waits} (an empty line lets the agent decide)> ");
    let line = tokio::select! {
        () = cancel.cancelled() => return None,
        line = tokio::task::spawn_blocking(read_line) => line.ok().flatten(),
    };
    let answer = match line.as_deref().map(str::trim) {
        Some(text) if !text.is_empty() => ParentAnswer::Text(text.to_owned()),
        _ => ParentAnswer::Declined,
    };
    if let Err(e) = manager.answer_question(&agent.agent_id, question.id, answer) {
        eprintln!("mcp-agents: the answer was not taken: {}", e.message);
    }
    Some(())
}

/// One line of standard input, at most a question's length times four in bytes; `None` at
/// its end or on an error.
fn read_line() -> Option<String> {
    let limit = u64::try_from(ASK_QUESTION_CHARS * 4).unwrap_or(u64::MAX);
    let mut line = String::new();
    let read = std::io::stdin()
        .lock()
        .take(limit)
        .read_line(&mut line)
        .ok()?;
    (read > 0).then_some(line)
}

/// `text` with the characters that would hide or move what a terminal shows (escape
/// sequences, bidi controls) replaced, its line breaks kept.
fn shown(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c != '\n' && crate::text::is_hidden(c) {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_cannot_hide_or_move_what_the_terminal_shows() {
        assert_eq!(
            shown("Fix \u{1b}[2Ja.py\nor b.py\u{202e}?"),
            "Fix \u{FFFD}[2Ja.py\nor b.py\u{FFFD}?"
        );
    }
}
