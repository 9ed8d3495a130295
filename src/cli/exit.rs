//! The exit statuses of every command (docs/decisions.md, "Exit statuses").

/// Exit status for a usage or workspace error (clap uses the same for bad arguments).
pub(super) const EXIT_USAGE: u8 = 2;
/// Exit status of `check` when a definition was rejected.
pub(super) const EXIT_REJECTED: u8 = 1;
/// Exit status when the run failed (the error code is printed).
pub(super) const EXIT_FAILED: u8 = 1;
/// Exit status after Ctrl-C.
pub(super) const EXIT_INTERRUPTED: u8 = 130;
