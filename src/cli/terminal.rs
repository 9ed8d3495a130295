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
    let stdout = std::io::stdout();
    if !stdout.is_terminal() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Some(columns) = columns(stdout.as_fd()) {
            return Some(usize::from(columns));
        }
    }
    Some(DEFAULT_COLUMNS)
}

/// The width assumed for a terminal that does not say its own.
pub(super) const DEFAULT_COLUMNS: usize = 80;
