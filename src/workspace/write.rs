//! `write`: creates a file of the workspace, or replaces all of its content (SPEC §8.6),
//! with the directories above it made as needed, inside the workspace only.

use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::change::{IfMissing, change};
use super::output::{Answer, count};
use super::state::State;
use crate::limits::WORKSPACE_CHANGE_BYTES;
use crate::workspace_contract::ChangedFile;

/// `write`'s structured content (its output schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(super) struct WriteOutput {
    /// The file, and whether it is new.
    #[serde(flatten)]
    pub file: ChangedFile,
    /// Its size now, in bytes.
    pub bytes: u64,
    /// Its lines now.
    pub lines: u64,
}

pub(super) fn write(
    state: &State,
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
    let changed = change(state, path, IfMissing::Create, cancel, |_, _| {
        Ok((content.as_bytes().to_vec(), ()))
    })?;
    let lines = content.lines().count() as u64;
    let output = WriteOutput {
        file: ChangedFile {
            path: changed.shown.clone(),
            created: Some(changed.created),
        },
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
