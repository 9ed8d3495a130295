//! The binary on a pseudo-terminal, read back through a terminal emulator (`vt100`): what a
//! person at a terminal of that size would see, and keys typed at it.

use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use super::binary::{BIN, KEY_VAR};
use super::run_kit::KEY;

/// The terminal most tests use: 80 columns, 24 rows.
pub const ROWS: u16 = 24;
pub const COLS: u16 = 80;

/// A child of the binary on a pseudo-terminal, with what it has written so far.
pub struct Terminal {
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
    /// Kept open for the child's life: closing it hangs the terminal up.
    _master: Box<dyn portable_pty::MasterPty + Send>,
    /// What is typed at the terminal.
    keys: Box<dyn std::io::Write + Send>,
    chunks: mpsc::Receiver<Vec<u8>>,
    pub screen: vt100::Parser,
}

impl Terminal {
    pub fn start(args: &[&str], dir: &std::path::Path) -> Terminal {
        Terminal::start_in(args, dir, ROWS, |_| {})
    }

    /// [`Terminal::start`] with an emulated screen of `screen_rows` rows (the terminal still
    /// says 24), so that a long output stays on it, and `setup` applied to the command.
    pub fn start_in(
        args: &[&str],
        dir: &std::path::Path,
        screen_rows: u16,
        setup: impl FnOnce(&mut CommandBuilder),
    ) -> Terminal {
        Terminal::start_sized(args, dir, (ROWS, COLS), screen_rows, setup)
    }

    /// [`Terminal::start_in`] on a terminal of `(rows, cols)`.
    pub fn start_sized(
        args: &[&str],
        dir: &std::path::Path,
        (rows, cols): (u16, u16),
        screen_rows: u16,
        setup: impl FnOnce(&mut CommandBuilder),
    ) -> Terminal {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut command = CommandBuilder::new(BIN);
        command.args(args);
        command.cwd(dir);
        command.env(KEY_VAR, KEY);
        command.env_remove("RUST_LOG");
        command.env_remove("MCP_AGENTS_DEFAULT_MODEL");
        setup(&mut command);
        let child = pair.slave.spawn_command(command).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let keys = pair.master.take_writer().unwrap();
        let (send, chunks) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || send.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Terminal {
            child,
            _master: pair.master,
            keys,
            chunks,
            screen: vt100::Parser::new(nonzero(screen_rows), nonzero(cols), 0),
        }
    }

    /// Feeds what arrives to the emulator, calling `frame` with the screen after each
    /// piece, until `done` holds for the screen or 30 s pass (then it panics).
    pub fn until(
        &mut self,
        mut frame: impl FnMut(&vt100::Screen),
        done: impl Fn(&vt100::Screen) -> bool,
    ) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done(self.screen.screen()) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => {
                    self.screen.process(&chunk);
                    frame(self.screen.screen());
                }
                Err(_) => panic!(
                    "the screen never got there; it shows:\n{}",
                    self.screen.screen().contents()
                ),
            }
        }
    }

    /// Types `bytes` at the terminal (`\x03` is Ctrl-C).
    pub fn type_keys(&mut self, bytes: &[u8]) {
        use std::io::Write;
        self.keys.write_all(bytes).unwrap();
        self.keys.flush().unwrap();
    }

    /// Feeds everything until the child ends.
    pub fn finish(&mut self, frame: impl FnMut(&vt100::Screen)) -> u32 {
        let mut frame = frame;
        // The reader ends when the child and its pty close.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => {
                    self.screen.process(&chunk);
                    frame(self.screen.screen());
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                    "the program did not end; the screen:\n{}",
                    self.screen.screen().contents()
                ),
            }
        }
        let status = self.child.wait().unwrap();
        status.exit_code()
    }
}

pub fn nonzero(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).expect("a terminal size")
}

/// The rows of `screen`, each as its text.
pub fn rows(screen: &vt100::Screen) -> Vec<String> {
    let (_, cols) = screen.size();
    screen.rows(0, cols.into()).collect()
}
