//! The terminal's size, asked of the descriptor that is one: `check` fits its report to
//! stdout's width, and `run`'s status line to stderr's.

use std::io::IsTerminal;

/// The width in columns of the terminal `fd` is, or `None` when it is not a terminal or
/// does not say.
#[cfg(unix)]
pub(super) fn columns(fd: std::os::fd::BorrowedFd<'_>) -> Option<u16> {
    use std::os::fd::AsRawFd;
    if !fd.is_terminal() {
        return None;
    }
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we own; the descriptor is
    // borrowed, so it stays open for the call.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some(size.ws_col)
}

/// The width of the terminal stdout is: `None` when stdout is not a terminal (a pipe or a
/// file has no width to fit). A terminal that does not say is taken as 80 columns.
pub(super) fn stdout_columns() -> Option<usize> {
    width_of(&std::io::stdout())
}

/// The width of the terminal stderr is, as [`stdout_columns`] for stdout: what the demo
/// and `run` wrap their lines to.
pub(super) fn stderr_columns() -> Option<usize> {
    width_of(&std::io::stderr())
}

#[cfg(unix)]
fn width_of<S: IsTerminal + std::os::fd::AsFd>(stream: &S) -> Option<usize> {
    stream
        .is_terminal()
        .then(|| columns(stream.as_fd()).map_or(DEFAULT_COLUMNS, usize::from))
}

#[cfg(not(unix))]
fn width_of<S: IsTerminal>(stream: &S) -> Option<usize> {
    stream.is_terminal().then_some(DEFAULT_COLUMNS)
}

/// `text` wrapped at spaces to `width` when there is one (a terminal), else as it is.
pub(super) fn fit(text: &str, width: Option<usize>) -> String {
    match width {
        Some(width) => text
            .lines()
            .map(|line| wrap_words(line, width, 0).join("\n"))
            .collect::<Vec<_>>()
            .join("\n"),
        None => text.to_owned(),
    }
}

/// The width assumed for a terminal that does not say its own.
pub(super) const DEFAULT_COLUMNS: usize = 80;

/// `text` in lines of at most `width` characters, broken at spaces; every line but the first
/// starts with `indent` spaces, and the first leaves room for them (its caller writes what
/// goes there). A word longer than a line is cut.
pub(super) fn wrap_words(text: &str, width: usize, indent: usize) -> Vec<String> {
    let room = width.saturating_sub(indent).max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut word: Vec<char> = word.chars().collect();
        if len > 0 && len + 1 + word.len() <= room {
            line.push(' ');
            line.extend(&word);
            len += 1 + word.len();
            continue;
        }
        if len > 0 {
            lines.push(std::mem::take(&mut line));
        }
        while word.len() > room {
            let rest = word.split_off(room);
            lines.push(word.iter().collect());
            word = rest;
        }
        line = word.iter().collect();
        len = word.len();
    }
    lines.push(line);
    let pad = " ".repeat(indent);
    lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            if i == 0 || indent == 0 {
                line
            } else {
                format!("{pad}{line}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::wrap_words;

    #[test]
    fn words_wrap_under_their_indent_and_long_ones_are_cut() {
        assert_eq!(wrap_words("a b c", 80, 0), ["a b c"]);
        assert_eq!(
            wrap_words("read, list, glob, grep", 25, 13),
            ["read, list,", "             glob, grep"]
        );
        assert_eq!(
            wrap_words("x .claude/agents/a-very-long-name.md", 16, 2),
            ["x", "  .claude/agents", "  /a-very-long-n", "  ame.md"]
        );
        assert_eq!(wrap_words("", 10, 0), [""]);
    }
}
