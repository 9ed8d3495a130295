//! The process's stderr, written without ever blocking the caller (SPEC §8.3, §10).
//!
//! An MCP client is entitled never to read our stderr. A blocking write to a full stderr
//! pipe would then stop whichever runtime worker made it, and with every worker stopped the
//! server stops answering (and cannot even shut down). So every line the server writes while
//! it serves — log lines and the forwarded stderr of child servers alike — goes into one
//! bounded queue, and one thread of its own writes the queue to stderr. When the queue is
//! full the line is dropped and counted; once the queue has drained, a note says how many
//! lines were lost.
//!
//! Every line passes [`crate::redact::redact_stderr`] first: log lines of any level and
//! library, child servers' stderr and panic reports alike never show a secret a run used.
//!
//! Until the server starts serving ([`queue_from_now`]), and in the terminal commands
//! (`check`, `run`, `demo`, whose stderr is a person's terminal), lines are written at once,
//! in order with everything else the command prints.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::limits::{STDERR_FLUSH_BOUND, STDERR_QUEUE_LINES};

/// What the writer thread is asked to do.
enum Job {
    Write(Vec<u8>),
    /// Answer on the channel once everything queued before has been written.
    Flush(SyncSender<()>),
}

struct Console {
    queue: SyncSender<Job>,
    /// Lines dropped because the queue was full, ever.
    dropped: Arc<AtomicU64>,
}

static CONSOLE: OnceLock<Console> = OnceLock::new();

/// Whether lines go through the queue (set once the server serves).
static QUEUED: AtomicBool = AtomicBool::new(false);

/// From now on, every line goes through the queue and its writer thread, a panic's report
/// included (the standard report writes to stderr and would wait on it).
pub fn queue_from_now() {
    console();
    if !QUEUED.swap(true, Ordering::SeqCst) {
        std::panic::set_hook(Box::new(|info| {
            let backtrace = std::backtrace::Backtrace::capture();
            let report = match backtrace.status() {
                std::backtrace::BacktraceStatus::Captured => format!("{info}\n{backtrace}"),
                _ => info.to_string(),
            };
            let thread = std::thread::current();
            // `info` reads "panicked at FILE:LINE:COL:\nMESSAGE".
            line(&format!(
                "thread '{}' {report}",
                thread.name().unwrap_or("<unnamed>")
            ));
        }));
    }
}

fn console() -> &'static Console {
    CONSOLE.get_or_init(|| {
        let (queue, jobs) = std::sync::mpsc::sync_channel(STDERR_QUEUE_LINES);
        let dropped = Arc::new(AtomicU64::new(0));
        let counted = dropped.clone();
        // Without the thread the receiver is gone and every line counts as dropped: better
        // than blocking.
        let _ = std::thread::Builder::new()
            .name("mcp-agents-stderr".to_owned())
            .spawn(move || write_jobs(jobs, &mut std::io::stderr(), &counted));
        Console { queue, dropped }
    })
}

/// Queues `bytes` (one or more whole lines, each ending in a newline) for stderr, with every
/// secret a run used hidden ([`crate::redact::hide_on_stderr`]); never waits. Returns
/// whether they were queued (false: dropped and counted).
pub fn write(bytes: Vec<u8>) -> bool {
    let bytes = crate::redact::redact_stderr(bytes);
    if !QUEUED.load(Ordering::Relaxed) {
        let _ = std::io::stderr().write_all(&bytes);
        return true;
    }
    let console = console();
    match console.queue.try_send(Job::Write(bytes)) {
        Ok(()) => true,
        Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
            console.dropped.fetch_add(1, Ordering::Relaxed);
            false
        }
    }
}

/// Queues one line (a newline is added).
pub fn line(text: &str) -> bool {
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    bytes.push(b'\n');
    write(bytes)
}

/// Lines dropped so far because stderr was not being read.
pub fn dropped() -> u64 {
    CONSOLE
        .get()
        .map_or(0, |c| c.dropped.load(Ordering::Relaxed))
}

/// Waits until what was queued so far is written, at most [`STDERR_FLUSH_BOUND`], so that
/// the last lines before exit are seen when stderr is read, and the process still exits
/// when it is not.
pub fn flush() {
    let Some(console) = CONSOLE.get() else {
        return;
    };
    let (done, written) = std::sync::mpsc::sync_channel(1);
    let deadline = Instant::now() + STDERR_FLUSH_BOUND;
    // The queue may be full: keep trying until the deadline.
    let mut job = Job::Flush(done);
    loop {
        match console.queue.try_send(job) {
            Ok(()) => break,
            Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                job = back;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => return,
        }
    }
    let _ = written.recv_timeout(deadline.saturating_duration_since(Instant::now()));
}

/// The writer thread: writes each job to `out`, and after the queue drains, a note for the
/// lines dropped since the last note.
fn write_jobs(jobs: Receiver<Job>, out: &mut impl Write, dropped: &AtomicU64) {
    let mut reported = 0;
    let mut next = jobs.recv().ok();
    while let Some(job) = next {
        match job {
            Job::Write(bytes) => {
                // A failed write (stderr closed) loses the line; the next may succeed.
                let _ = out.write_all(&bytes);
            }
            Job::Flush(done) => {
                let _ = out.flush();
                let _ = done.try_send(());
            }
        }
        next = match jobs.try_recv() {
            Ok(job) => Some(job),
            Err(_) => {
                reported = note_dropped(out, reported, dropped);
                match jobs.recv_timeout(Duration::from_secs(1)) {
                    Ok(job) => Some(job),
                    // Lines dropped while the last write was stuck are reported even when
                    // nothing else is written after them.
                    Err(RecvTimeoutError::Timeout) => {
                        reported = note_dropped(out, reported, dropped);
                        jobs.recv().ok()
                    }
                    Err(RecvTimeoutError::Disconnected) => None,
                }
            }
        };
    }
}

/// Writes how many lines were dropped since `reported`; returns the new total reported.
fn note_dropped(out: &mut impl Write, reported: u64, dropped: &AtomicU64) -> u64 {
    let dropped = dropped.load(Ordering::Relaxed);
    if dropped > reported {
        let note = format!(
            "warning: {} lines for stderr were dropped because stderr was not being read \
             ({dropped} since the start)\n",
            dropped - reported
        );
        let _ = out.write_all(note.as_bytes());
    }
    dropped
}

/// A `tracing` writer that queues each formatted event as one write.
#[derive(Clone, Copy, Default)]
pub struct QueuedStderr;

impl Write for QueuedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // A dropped line is counted and reported; to the logger it is written.
        write(buf.to_vec());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for QueuedStderr {
    type Writer = QueuedStderr;

    fn make_writer(&'a self) -> Self::Writer {
        *self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Condvar, Mutex};

    /// A writer that blocks until opened, like a pipe nobody reads.
    struct Gate {
        open: Arc<(Mutex<bool>, Condvar)>,
        written: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Gate {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let (lock, cvar) = &*self.open;
            let mut open = lock.lock().unwrap();
            while !*open {
                open = cvar.wait(open).unwrap();
            }
            self.written.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_stuck_writer_never_blocks_the_caller_and_the_loss_is_reported() {
        let open = Arc::new((Mutex::new(false), Condvar::new()));
        let written = Arc::new(Mutex::new(Vec::new()));
        let dropped = Arc::new(AtomicU64::new(0));
        let (queue, jobs) = std::sync::mpsc::sync_channel(4);
        let mut gate = Gate {
            open: open.clone(),
            written: written.clone(),
        };
        let counted = dropped.clone();
        let writer = std::thread::spawn(move || write_jobs(jobs, &mut gate, &counted));
        let started = Instant::now();
        for n in 0..100 {
            // What `write` does.
            if queue
                .try_send(Job::Write(format!("line {n}\n").into_bytes()))
                .is_err()
            {
                dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "queuing never waits"
        );
        let lost = dropped.load(Ordering::Relaxed);
        assert!(lost >= 90, "{lost}");
        *open.0.lock().unwrap() = true;
        open.1.notify_all();
        drop(queue);
        writer.join().unwrap();
        let text = String::from_utf8(written.lock().unwrap().clone()).unwrap();
        assert!(text.starts_with("line 0\n"), "{text}");
        assert_eq!(
            text.lines().filter(|l| l.starts_with("line ")).count() as u64,
            100 - lost
        );
        assert!(
            text.contains(&format!("warning: {lost} lines for stderr were dropped")),
            "{text}"
        );
    }
}
