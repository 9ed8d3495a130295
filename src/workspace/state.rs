//! What one workspace server holds from call to call (it is one process per run, so this is
//! the run's): the workspace, what the run has read, what it has written, and the server
//! user's private directory with this server's journal of temporary files.

use super::leftovers::{Journal, clean_stale};
use super::private::PrivateDir;
use super::root::WorkspaceRoot;
use super::seen::Seen;
use super::totals::Totals;

#[derive(Debug)]
pub(super) struct State {
    pub root: WorkspaceRoot,
    /// What this run has read, for the read-before-edit rule.
    pub seen: Seen,
    /// What this run has written, for its bounds.
    pub totals: Totals,
    /// `None` when no private directory could be had: changes then take turns in this
    /// process only, and no journal is kept.
    pub private: Option<PrivateDir>,
    pub journal: Journal,
}

impl State {
    /// The state of a server of `root` that starts now: the temporary files that servers of
    /// this workspace killed during a change left are removed first.
    pub(super) fn starting(root: WorkspaceRoot) -> State {
        let private = PrivateDir::open();
        clean_stale(private.as_ref(), &root);
        State {
            journal: Journal::new(&root),
            root,
            seen: Seen::default(),
            totals: Totals::default(),
            private,
        }
    }
}
