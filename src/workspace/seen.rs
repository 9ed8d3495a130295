//! What this run has read (SPEC §8.6, the read-before-edit rule): the content hash of each
//! file `read` showed, as it was when read, so that `edit` and `write` change a file only
//! when the model has seen it and it has not changed since.
//!
//! The memory lives in the server process, and the server is one child process per run: it
//! is the run's own, begins empty, and ends with the run. It is bounded: past
//! [`WORKSPACE_READ_MEMORY_FILES`] files the one read longest ago is forgotten (editing it
//! then asks for a fresh read, which is always safe).

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::limits::WORKSPACE_READ_MEMORY_FILES;

/// A SHA-256 of a file's bytes.
pub(super) type ContentHash = [u8; 32];

pub(super) fn hash_of(bytes: &[u8]) -> ContentHash {
    Sha256::digest(bytes).into()
}

/// The files read so far by this run, by canonical path.
#[derive(Debug, Default)]
pub(super) struct Seen {
    files: Mutex<Files>,
}

#[derive(Debug, Default)]
struct Files {
    /// The hash each file had when it was last read or changed, and when that was (a
    /// counter, for forgetting the oldest).
    by_path: HashMap<PathBuf, (u64, ContentHash)>,
    clock: u64,
}

impl Seen {
    /// Notes that the model has seen `path` with this content (a `read`, or its own change).
    pub(super) fn remember(&self, path: &Path, hash: ContentHash) {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        files.clock += 1;
        let now = files.clock;
        files.by_path.insert(path.to_owned(), (now, hash));
        if files.by_path.len() > WORKSPACE_READ_MEMORY_FILES {
            let oldest = files
                .by_path
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(path, _)| path.clone());
            if let Some(oldest) = oldest {
                files.by_path.remove(&oldest);
            }
        }
    }

    /// The hash `path` had when the model last saw it, if it has.
    pub(super) fn hash(&self, path: &Path) -> Option<ContentHash> {
        let files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        files.by_path.get(path).map(|(_, hash)| *hash)
    }
}

/// A reader that hashes every byte read through it, so that `read` hashes exactly the bytes
/// it showed lines from, in the same pass.
pub(super) struct Hashing<R> {
    inner: R,
    hasher: Sha256,
    bytes: u64,
}

impl<R: Read> Hashing<R> {
    pub(super) fn new(inner: R) -> Self {
        Hashing {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    /// Reads the rest, up to `limit` bytes in all, and gives the hash of everything read;
    /// `None` when the file holds more than `limit` bytes.
    pub(super) fn finish(mut self, limit: u64) -> io::Result<Option<ContentHash>> {
        let mut block = vec![0u8; 64 * 1024];
        loop {
            if self.bytes > limit {
                return Ok(None);
            }
            let n = self.read(&mut block)?;
            if n == 0 {
                return Ok(Some(self.hasher.finalize().into()));
            }
        }
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_covers_what_was_read_and_the_rest() {
        let text = b"one\ntwo\nthree\n";
        let mut reader = Hashing::new(&text[..]);
        let mut first = [0u8; 4];
        reader.read_exact(&mut first).unwrap();
        assert_eq!(reader.finish(100).unwrap(), Some(hash_of(text)));
        let reader = Hashing::new(&text[..]);
        assert_eq!(reader.finish(5).unwrap(), None, "larger than the limit");
    }

    #[test]
    fn the_oldest_file_is_forgotten_past_the_bound() {
        let seen = Seen::default();
        for i in 0..=WORKSPACE_READ_MEMORY_FILES {
            seen.remember(Path::new(&format!("/w/{i}")), hash_of(b"x"));
        }
        assert_eq!(seen.hash(Path::new("/w/0")), None);
        assert_eq!(seen.hash(Path::new("/w/1")), Some(hash_of(b"x")));
        seen.remember(Path::new("/w/1"), hash_of(b"y"));
        assert_eq!(seen.hash(Path::new("/w/1")), Some(hash_of(b"y")));
    }
}
