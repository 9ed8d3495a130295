//! `write`: creates a file of the workspace, or replaces all of its content (SPEC §8.6),
//! with the directories above it made as needed, inside the workspace only.

use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::change::{IfMissing, change};
use super::output::{Answer, count};
use super::root::WorkspaceRoot;
use super::seen::Seen;
use crate::limits::WORKSPACE_CHANGE_BYTES;

/// `write`'s structured content (its output schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(super) struct WriteOutput {
    /// The file, relative to the workspace root.
    pub path: String,
    /// Whether the file is new (it did not exist before).
    pub created: bool,
    /// Its size now, in bytes.
    pub bytes: u64,
    /// Its lines now.
    pub lines: u64,
}

pub(super) fn write(
    root: &WorkspaceRoot,
    seen: &Seen,
    path: &str,
    content: &str,
    cancel: &CancellationToken,
) -> Result<Answer, String> {
    if content.len() as u64 > WORKSPACE_CHANGE_BYTES {
        return Err(format!(
            "`content` is {} bytes; `write` writes files of at most {} MiB",
            content.len(),
            WORKSPACE_CHANGE_BYTES / (1024 * 1024)
        ));
    }
    let changed = change(root, seen, path, IfMissing::Create, cancel, |_, _| {
        Ok((content.as_bytes().to_vec(), ()))
    })?;
    let lines = content.lines().count() as u64;
    let output = WriteOutput {
        path: changed.shown.clone(),
        created: changed.created,
        bytes: content.len() as u64,
        lines,
    };
    let text = format!(
        "{} `{}` ({}, {}).\n",
        if changed.created {
            "Created"
        } else {
            "Replaced all of"
        },
        changed.shown,
        count(lines, "line", "lines"),
        count(content.len() as u64, "byte", "bytes"),
    );
    Ok(Answer::new(text, &output))
}
