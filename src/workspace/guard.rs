//! Where `edit` and `write` never write, whatever the path says (SPEC §8.6, issue 34): git's
//! own files, and the places that configure agents. Both are ways from changing files to
//! running commands: a git hook or `core.fsmonitor` runs on the next `git status`; an agent
//! definition, a skill, or a client's MCP or hook configuration runs what it names the next
//! time the client or this server starts.
//!
//! The path checked is the resolved one (links inside the workspace followed, as the change
//! itself follows them), relative to the workspace, compared without regard to ASCII case:
//! `.Claude/Agents` is `.claude/agents` on a case-insensitive file system, and a name that
//! differs only in case is refused everywhere rather than guessed about. A git directory is
//! recognised wherever it sits: a `.git` component, the `gitdir:` target of a `.git` file in
//! a directory on the path (the workspace's own, a nested repository's), or a directory that
//! holds `HEAD` with `config`, `objects`, `refs` or `commondir`, as git recognises its own.
//! What the change would add counts, so none can be assembled file by file: git takes no
//! directory without `HEAD` for one, and once `HEAD` is there nothing else may join it.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::root::{Resolved, WorkspaceRoot, lexically_normal};
use crate::limits::WORKSPACE_GITDIR_FILE_BYTES;
use crate::workspace_contract::{AGENT_CONFIG_DIRS, AGENT_CONFIG_FILES};

/// What `edit` and `write` say of a place that configures agents.
const AGENT_CONFIG_RULE: &str = "`edit` and `write` never change agent definitions, skills or \
    client configuration, which could give an agent commands to run; leave this change to the \
    user";

/// What every git refusal ends with.
const GIT_RULE: &str = "the workspace tools never change git's own files";

/// Refuses a change of `path` (canonical, inside the workspace) that lands in a git
/// directory or a place that configures agents.
pub(super) fn refuse_protected(root: &WorkspaceRoot, path: &Path) -> Result<(), String> {
    let relative = path.strip_prefix(root.path()).unwrap_or(path);
    let parts: Vec<&OsStr> = relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let shown = root.display(path);
    if parts.iter().any(|part| same(part, ".git")) {
        return Err(format!("`{shown}` is inside `.git/`: {GIT_RULE}"));
    }
    if let Some(dir) = AGENT_CONFIG_DIRS
        .iter()
        .find(|dir| starts_with(&parts, dir))
    {
        return Err(format!(
            "`{shown}` is in `{dir}`, where agents or skills are defined: {AGENT_CONFIG_RULE}"
        ));
    }
    if let Some(file) = AGENT_CONFIG_FILES
        .iter()
        .find(|file| starts_with(&parts, file) && parts.len() == file.split('/').count())
    {
        return Err(format!(
            "`{shown}` is `{file}`, a client's configuration: {AGENT_CONFIG_RULE}"
        ));
    }
    if let Some(git_dir) = git_dir_on(root, &parts) {
        return Err(format!(
            "`{shown}` is inside a git directory (`{}`): {GIT_RULE} (its hooks and \
             configuration run commands)",
            root.display(&git_dir)
        ));
    }
    Ok(())
}

/// Whether `name` is `expected` without regard to ASCII case.
fn same(name: &OsStr, expected: &str) -> bool {
    name.as_bytes().eq_ignore_ascii_case(expected.as_bytes())
}

/// Whether `parts` begin with the components of `place` (`a/b`), without regard to case.
fn starts_with(parts: &[&OsStr], place: &str) -> bool {
    let place: Vec<&str> = place.split('/').collect();
    parts.len() >= place.len() && parts.iter().zip(&place).all(|(p, q)| same(p, q))
}

/// The git directory the path `parts` (below the root) is in, if any: checked in each
/// directory on the way, the root included.
fn git_dir_on(root: &WorkspaceRoot, parts: &[&OsStr]) -> Option<PathBuf> {
    let mut dir = root.path().to_owned();
    let full: PathBuf = parts.iter().collect();
    let path = root.path().join(&full);
    for next in parts {
        if looks_like_git_dir(&dir, next) {
            return Some(dir);
        }
        if let Some(target) = gitdir_target(root, &dir)
            && path.starts_with(&target)
        {
            return Some(target);
        }
        dir.push(next);
    }
    None
}

/// Whether `dir` holds `HEAD` and one of `config`, `objects`, `refs`, `commondir` (as git
/// itself recognises its directories), counting `adding`, the name the change puts there.
fn looks_like_git_dir(dir: &Path, adding: &OsStr) -> bool {
    let has = |name: &str| adding == name || dir.join(name).symlink_metadata().is_ok();
    has("HEAD")
        && ["config", "objects", "refs", "commondir"]
            .into_iter()
            .any(has)
}

/// Where the `.git` file of `dir` says its git directory is (`gitdir: <path>`), canonical
/// when it exists, as written (made absolute) when it does not yet. Only a regular file is
/// read, never through a link.
fn gitdir_target(root: &WorkspaceRoot, dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    if !dot_git.symlink_metadata().ok()?.is_file() {
        return None;
    }
    let file = root.open_regular(&dot_git).ok()?;
    let mut text = String::new();
    file.take(WORKSPACE_GITDIR_FILE_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let written = dir.join(target);
    let relative = written.strip_prefix(root.path()).ok()?;
    match root.follow(relative) {
        Resolved::Inside(canonical) => Some(canonical),
        _ => Some(lexically_normal(&written)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_match_by_components_in_any_case() {
        let parts = |p: &'static str| p.split('/').map(OsStr::new).collect::<Vec<_>>();
        assert!(starts_with(&parts(".claude/agents/x.md"), ".claude/agents"));
        assert!(starts_with(&parts(".CLAUDE/Agents/x.md"), ".claude/agents"));
        assert!(starts_with(&parts(".claude/agents"), ".claude/agents"));
        assert!(!starts_with(&parts(".claude/agents.md"), ".claude/agents"));
        assert!(!starts_with(&parts(".claude"), ".claude/agents"));
        assert!(!starts_with(
            &parts("docs/.claude/agents/x.md"),
            ".claude/agents"
        ));
    }
}
