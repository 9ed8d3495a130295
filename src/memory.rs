//! Giving freed memory back to the system after retained sessions are evicted (SPEC §5), or
//! HTTP answers nobody read are given up (SPEC §10).
//!
//! glibc's allocator keeps most of what a run task frees in its per-thread arenas: after 64
//! sessions of 16 MiB of history were evicted, the server still held 1.3 GB
//! (docs/performance.md, "Memory after eviction"). `malloc_trim` returns the free pages of
//! every arena. It walks them all, so it runs on a blocking thread, at most once per
//! [`MEMORY_TRIM_DELAY`] however many sessions were evicted meanwhile. Other allocators
//! (the `mimalloc` and `jemalloc` features) and other C libraries are left alone.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::limits::MEMORY_TRIM_DELAY;

/// A trim is scheduled and has not run yet.
static SCHEDULED: AtomicBool = AtomicBool::new(false);

/// Memory was freed in bulk (sessions evicted, an unread answer given up): gives it back
/// soon.
pub fn freed() {
    if !TRIMS || SCHEDULED.swap(true, Ordering::AcqRel) {
        return;
    }
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async {
                tokio::time::sleep(MEMORY_TRIM_DELAY).await;
                SCHEDULED.store(false, Ordering::Release);
                let _ = tokio::task::spawn_blocking(trim).await;
            });
        }
        Err(_) => {
            SCHEDULED.store(false, Ordering::Release);
            trim();
        }
    }
}

/// Whether this build's allocator is glibc's.
const TRIMS: bool = cfg!(all(
    target_os = "linux",
    target_env = "gnu",
    not(feature = "mimalloc"),
    not(feature = "jemalloc")
));

fn trim() {
    #[cfg(all(
        target_os = "linux",
        target_env = "gnu",
        not(feature = "mimalloc"),
        not(feature = "jemalloc")
    ))]
    // SAFETY: malloc_trim only returns free pages of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}
