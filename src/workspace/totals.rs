//! What one run has written (SPEC §8.6, §12; issue 34): the bytes of every change and the
//! files it created, each bounded for the whole run ([`WORKSPACE_RUN_WRITTEN_BYTES`],
//! [`WORKSPACE_RUN_CREATED_FILES`]). The server is one process per run, so its own count is
//! the run's. A change takes its share before it writes and gives it back if it does not
//! land, so calls made at once cannot pass the bounds together.

use std::sync::Mutex;

use super::output::count;
use crate::limits::{WORKSPACE_RUN_CREATED_FILES, WORKSPACE_RUN_WRITTEN_BYTES};

/// What this run has written so far (and what changes under way have taken).
#[derive(Debug, Default)]
pub(super) struct Totals {
    spent: Mutex<Spent>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Spent {
    bytes: u64,
    files: u64,
}

/// A change's share of the totals, given back when dropped unless it [`landed`](Self::landed).
#[derive(Debug)]
pub(super) struct Share<'a> {
    totals: &'a Totals,
    taken: Spent,
}

/// What a run that needs more is told.
const TOO_MUCH: &str = "a run that needs more is too large for one agent: finish here and say \
    what is left";

impl Totals {
    /// Takes `bytes` and, when the change creates the file, one file; refused (nothing
    /// taken) past either bound.
    pub(super) fn take(&self, shown: &str, bytes: u64, creates: bool) -> Result<Share<'_>, String> {
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        if creates && spent.files >= WORKSPACE_RUN_CREATED_FILES {
            return Err(format!(
                "`{shown}` was not created: this run has created {} with `write`, the most one \
                 run creates; {TOO_MUCH}",
                count(spent.files, "file", "files")
            ));
        }
        if spent.bytes.saturating_add(bytes) > WORKSPACE_RUN_WRITTEN_BYTES {
            return Err(format!(
                "`{shown}` was not changed: this run has written {} bytes with `edit` and \
                 `write`, and one run writes at most {} MiB (this change adds {}); {TOO_MUCH}",
                spent.bytes,
                WORKSPACE_RUN_WRITTEN_BYTES / (1024 * 1024),
                count(bytes, "byte", "bytes")
            ));
        }
        let taken = Spent {
            bytes,
            files: u64::from(creates),
        };
        spent.bytes += taken.bytes;
        spent.files += taken.files;
        Ok(Share {
            totals: self,
            taken,
        })
    }
}

impl Share<'_> {
    /// The change landed: its share stays spent.
    pub(super) fn landed(mut self) {
        self.taken = Spent::default();
    }
}

impl Drop for Share<'_> {
    fn drop(&mut self) {
        let mut spent = self.totals.spent.lock().unwrap_or_else(|p| p.into_inner());
        spent.bytes -= self.taken.bytes;
        spent.files -= self.taken.files;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_kept_when_they_land_and_given_back_when_not() {
        let totals = Totals::default();
        totals
            .take("a", WORKSPACE_RUN_WRITTEN_BYTES - 10, true)
            .unwrap()
            .landed();
        let pending = totals.take("b", 10, false).unwrap();
        let refused = totals.take("c", 1, false).unwrap_err();
        assert!(refused.contains("this change adds 1 byte"), "{refused}");
        drop(pending);
        totals.take("c", 10, false).unwrap().landed();
        assert!(totals.take("d", 1, false).is_err());
        assert!(
            totals.take("e", 0, false).is_ok(),
            "an empty change writes nothing"
        );
    }
}
