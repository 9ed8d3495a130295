//! The live status line of `mcp-agents run` on a terminal: one line, redrawn in place by
//! `indicatif` and cut to the terminal's width, so it never wraps and no redraw leaves a
//! line behind.
//!
//! Everything else the process writes to stderr while the line is shown (log lines, child
//! servers' stderr, a panic message) would land on the line's row and leave a stale copy of
//! it. So on Unix, while the line is up, stderr (fd 2) is a pipe: a thread reads it and
//! prints each line above the status line, and the status line itself is drawn on the
//! terminal stderr was. Stderr is put back when the line is finished.

use std::fs::File;
use std::io::{self, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

/// Spinner frames, one per redraw.
const TICKS: &str = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ ";

/// Redraws per second at most.
const REFRESH_HZ: u8 = 15;

/// The shortest a model id is cut to when the line does not fit.
const MODEL_CHARS_KEPT: usize = 12;

/// The line, while it is shown.
pub(super) struct StatusLine {
    bar: ProgressBar,
    /// The terminal, to ask its width and to print lines above the status line (`None`: the
    /// bar draws on stderr itself, and stderr is the terminal).
    tty: Option<Tty>,
    /// Held only to be dropped: last (fields drop in order), once the bar has been cleared.
    #[cfg(unix)]
    _capture: Option<capture::StderrCapture>,
}

impl StatusLine {
    /// Starts the line on the terminal stderr is, or `None` when stderr is not a terminal.
    pub(super) fn start() -> Option<StatusLine> {
        use std::io::IsTerminal;
        if !io::stderr().is_terminal() {
            return None;
        }
        let style = ProgressStyle::with_template("{spinner} {wide_msg} {prefix}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner())
            .tick_chars(TICKS);
        #[cfg(unix)]
        {
            if let (Some(tty), Some(sized)) = (Tty::dup_stderr(), Tty::dup_stderr()) {
                let bar = ProgressBar::with_draw_target(
                    None,
                    ProgressDrawTarget::term_like_with_hz(Box::new(tty), REFRESH_HZ),
                )
                .with_style(style);
                let capture = capture::StderrCapture::start(bar.clone());
                return Some(StatusLine {
                    bar,
                    tty: Some(sized),
                    _capture: capture,
                });
            }
        }
        let bar =
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(REFRESH_HZ))
                .with_style(style);
        Some(StatusLine {
            bar,
            tty: None,
            #[cfg(unix)]
            _capture: None,
        })
    }

    /// The columns the line may fill.
    fn width(&self) -> usize {
        match &self.tty {
            Some(tty) => usize::from(tty.width()),
            None => super::terminal::DEFAULT_COLUMNS - usize::from(FREE_COLUMNS),
        }
    }

    /// Shows `text` (what the agent is doing, readable first) and the time spent on it.
    /// When the line is wider than the terminal, `model` (an id `text` contains, often the
    /// longest word of it) is shortened first, then the end of `text` is cut.
    pub(super) fn show(&self, text: &str, model: &str, elapsed: Duration) {
        let prefix = format!("{:.1} s", elapsed.as_secs_f64());
        // The spinner and two spaces.
        let room = self.width().saturating_sub(prefix.chars().count() + 3);
        self.bar.set_prefix(prefix);
        self.bar.set_message(fit(text, model, room));
        self.bar.tick();
    }

    /// Prints `text` above the line, cut to the terminal's width: the line is cleared, the
    /// text written where it was, and the line drawn again below it.
    pub(super) fn println(&self, text: &str) {
        let line = fit(text, "", self.width());
        self.bar.suspend(|| match &self.tty {
            Some(tty) => {
                let _ = tty.write(&format!("{line}\n"));
            }
            None => eprintln!("{line}"),
        });
    }

    /// Clears the line and puts stderr back; what was written meanwhile has been printed.
    /// (Dropping the line without finishing puts stderr back too, as on a panic.)
    pub(super) fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// `text` within `room` characters: `model` cut to make room (not below
/// [`MODEL_CHARS_KEPT`]), then the end of the text, each cut marked with `…`.
pub(super) fn fit(text: &str, model: &str, room: usize) -> String {
    let chars = |s: &str| s.chars().count();
    if chars(text) <= room {
        return text.to_owned();
    }
    let mut text = text.to_owned();
    let excess = chars(&text) - room;
    let model_len = chars(model);
    if model_len > MODEL_CHARS_KEPT && text.contains(model) {
        let keep = model_len.saturating_sub(excess + 1).max(MODEL_CHARS_KEPT);
        let short: String = model.chars().take(keep).chain(['…']).collect();
        text = text.replacen(model, &short, 1);
    }
    if chars(&text) > room {
        text = text
            .chars()
            .take(room.saturating_sub(1))
            .chain(['…'])
            .collect();
    }
    text
}

/// The terminal the line is drawn on: a duplicate of stderr's descriptor taken before
/// stderr became a pipe.
#[derive(Debug)]
struct Tty {
    file: File,
}

impl Tty {
    #[cfg(unix)]
    fn dup_stderr() -> Option<Tty> {
        use std::os::fd::{AsFd, OwnedFd};
        let fd: OwnedFd = io::stderr().as_fd().try_clone_to_owned().ok()?;
        Some(Tty {
            file: File::from(fd),
        })
    }

    fn write(&self, text: &str) -> io::Result<()> {
        (&self.file).write_all(text.as_bytes())
    }
}

/// Columns the line leaves free at the end of its row: one, since a line that fills the last
/// column makes some terminals wrap, and two for the `^C` the terminal echoes where the
/// cursor is when Ctrl-C is pressed. Without them the echo wrapped, and clearing the line
/// cleared only the echo's row, leaving the line's own (`…0.9 s^`) on screen.
const FREE_COLUMNS: u16 = 3;

impl TermLike for Tty {
    /// The terminal's width less [`FREE_COLUMNS`].
    fn width(&self) -> u16 {
        terminal_width(&self.file)
            .saturating_sub(FREE_COLUMNS)
            .max(1)
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.write(&format!("\x1b[{n}A"))
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.write(&format!("\x1b[{n}B"))
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.write(&format!("\x1b[{n}C"))
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.write(&format!("\x1b[{n}D"))
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.write(&format!("{s}\n"))
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        self.write(s)
    }

    fn clear_line(&self) -> io::Result<()> {
        self.write("\r\x1b[2K")
    }

    fn flush(&self) -> io::Result<()> {
        (&self.file).flush()
    }
}

/// The terminal's width in columns (80 when it cannot be asked).
fn terminal_width(file: &File) -> u16 {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Some(columns) = super::terminal::columns(file.as_fd()) {
            return columns;
        }
    }
    let _ = file;
    u16::try_from(super::terminal::DEFAULT_COLUMNS).unwrap_or(u16::MAX)
}

#[cfg(unix)]
mod capture {
    //! Stderr as a pipe while the line is shown, its lines printed above the line.

    use std::fs::File;
    use std::io::{BufRead, BufReader, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::mpsc;
    use std::time::Duration;

    use indicatif::ProgressBar;

    /// How long finishing waits for the last captured lines to be printed.
    const DRAIN_BOUND: Duration = Duration::from_secs(2);

    pub(super) struct StderrCapture {
        /// Stderr as it was.
        saved: OwnedFd,
        drained: mpsc::Receiver<()>,
    }

    impl StderrCapture {
        /// Makes fd 2 a pipe whose lines `bar` prints above itself; `None` (stderr left as
        /// it is) when the pipe cannot be made.
        pub(super) fn start(bar: ProgressBar) -> Option<StderrCapture> {
            let mut fds = [0; 2];
            // SAFETY: `pipe` fills the two-element array we own.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                return None;
            }
            // SAFETY: both descriptors were just created and are owned by nothing else.
            let (read, write) =
                unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            // No child may inherit the read end (fd 2 itself, the write end, is inherited
            // as stderr is, by children that do not redirect it).
            // SAFETY: setting a flag on a descriptor we own.
            unsafe { libc::fcntl(read.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
            // SAFETY: duplicating fd 2, which is open (stderr is a terminal); the duplicate
            // is close-on-exec so no child inherits the terminal through it.
            let saved = unsafe { libc::fcntl(2, libc::F_DUPFD_CLOEXEC, 3) };
            if saved < 0 {
                return None;
            }
            // SAFETY: `saved` was just created and is owned by nothing else.
            let saved = unsafe { OwnedFd::from_raw_fd(saved) };
            let mut terminal = File::from(saved.try_clone().ok()?);
            // SAFETY: replaces fd 2 with the pipe's write end; `write` stays ours and is
            // closed below, so fd 2 is the pipe's only writer.
            if unsafe { libc::dup2(write.as_raw_fd(), 2) } < 0 {
                return None;
            }
            drop(write);
            let (done, drained) = mpsc::channel();
            let spawned = std::thread::Builder::new()
                .name("stderr-above-status".into())
                .spawn(move || {
                    let mut lines = BufReader::new(File::from(read));
                    let mut line = Vec::new();
                    while matches!(lines.read_until(b'\n', &mut line), Ok(n) if n > 0) {
                        if line.last() != Some(&b'\n') {
                            line.push(b'\n');
                        }
                        bar.suspend(|| {
                            let _ = terminal.write_all(&line);
                            let _ = terminal.flush();
                        });
                        line.clear();
                    }
                    let _ = done.send(());
                });
            if spawned.is_err() {
                // Nobody would read the pipe: put stderr back at once.
                // SAFETY: restoring fd 2 from the descriptor saved above.
                unsafe { libc::dup2(saved.as_raw_fd(), 2) };
                return None;
            }
            Some(StderrCapture { saved, drained })
        }
    }

    impl Drop for StderrCapture {
        /// Puts stderr back. That closes the pipe's last writer, so the reader prints what
        /// is left and ends; waits for it, within a bound (a grandchild could hold a copy).
        fn drop(&mut self) {
            // SAFETY: restoring fd 2 from the descriptor saved in `start`.
            unsafe { libc::dup2(self.saved.as_raw_fd(), 2) };
            let _ = self.drained.recv_timeout(DRAIN_BOUND);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn the_model_is_cut_before_the_text_is() {
        let model = "claude-sonnet-5-5-20261101-preview";
        let text = format!("a · Waiting for {model} (turn 1 of 32) (retry 1 of 4)");
        assert_eq!(fit(&text, model, 200), text, "what fits is left alone");
        // The model gives up what the line lacks, and the rest is whole.
        assert_eq!(
            fit(&text, model, 62),
            "a · Waiting for claude-sonnet-5… (turn 1 of 32) (retry 1 of 4)"
        );
        // Not below twelve characters; then the end is cut.
        let tight = fit(&text, model, 50);
        assert_eq!(tight, "a · Waiting for claude-sonne… (turn 1 of 32) (ret…");
        assert_eq!(tight.chars().count(), 50);
        assert_eq!(fit("short", "", 3), "sh…");
    }
}
