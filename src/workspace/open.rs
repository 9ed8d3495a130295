//! Opening one file of the workspace for reading (SPEC §8.6): only a regular file, never
//! through a symbolic link, never outside the workspace, and never blocking. `read`, `grep`
//! and the ignore files of a walk all open files here.
//!
//! A path is looked at first (`lstat`), so a FIFO, a device or a socket is never opened at
//! all. The open itself is relative to the workspace directory, opened once, with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where the kernel has it (Linux 5.6): a
//! directory swapped for a link since the path was resolved cannot lead the open outside.
//! Elsewhere (an older kernel, a seccomp filter that refuses the call) the path is opened
//! with `O_NOFOLLOW`, which refuses a link in its last component. Either way the open is
//! non-blocking (a FIFO put there since the look returns at once instead of waiting for a
//! writer), and the opened file is checked again (`fstat`) before a byte is read.

use std::fs::File;
use std::io;
use std::path::Path;
#[cfg(target_os = "linux")]
use std::sync::Arc;

/// Why a file was not opened.
#[derive(Debug)]
pub(super) enum Refusal {
    /// Nothing is there (or a directory on the way is not one).
    Missing,
    /// A symbolic link, in the last component or on the way.
    Link,
    /// Something other than a regular file: a directory, a FIFO, a socket, a device.
    NotRegular(&'static str),
    /// The system refused (permissions, I/O).
    Failed(io::Error),
}

impl Refusal {
    /// What the refusal says after a file's name: "is a FIFO, not a regular file".
    pub(super) fn reason(&self) -> String {
        match self {
            Refusal::Missing => "does not exist".to_owned(),
            Refusal::Link => "is a symbolic link".to_owned(),
            Refusal::NotRegular(kind) => format!("is {kind}, not a regular file"),
            Refusal::Failed(e) => format!("cannot be opened: {e}"),
        }
    }
}

/// The workspace directory, held open so files are opened relative to it.
#[derive(Debug, Clone)]
pub(super) struct Anchor {
    #[cfg(target_os = "linux")]
    dir: Option<Arc<std::os::fd::OwnedFd>>,
}

impl Anchor {
    /// Opens `root` (a canonical directory) as a path-only descriptor. Without one, files are
    /// opened by their path with `O_NOFOLLOW`.
    pub(super) fn open(root: &Path) -> Anchor {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let dir = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW)
                .open(root)
                .ok()
                .map(|f| Arc::new(std::os::fd::OwnedFd::from(f)));
            Anchor { dir }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = root;
            Anchor {}
        }
    }
}

/// Opens `path`, a canonical path inside `root`, for reading, if it is a regular file. The
/// descriptor is blocking again once open, as reads expect.
pub(super) fn open_regular(anchor: &Anchor, root: &Path, path: &Path) -> Result<File, Refusal> {
    let Ok(relative) = path.strip_prefix(root) else {
        return Err(Refusal::Failed(io::Error::other(
            "the path is outside the workspace",
        )));
    };
    let looked = std::fs::symlink_metadata(path).map_err(refusal)?;
    if let Some(kind) = not_regular(&looked.file_type()) {
        return Err(kind);
    }
    let file = open_beneath(anchor, relative, READ_FLAGS).unwrap_or_else(|| open_by_path(path));
    let file = file.map_err(refusal)?;
    let opened = file.metadata().map_err(refusal)?;
    if let Some(kind) = not_regular(&opened.file_type()) {
        return Err(kind);
    }
    blocking_again(&file);
    Ok(file)
}

/// Opens `dir`, a canonical directory inside `root` (the root itself included), to change
/// files in it: beneath the workspace and through no link where the kernel can check it,
/// else by its path with `O_NOFOLLOW` on its last component.
#[cfg(unix)]
pub(super) fn open_dir(anchor: &Anchor, root: &Path, dir: &Path) -> io::Result<File> {
    let Ok(relative) = dir.strip_prefix(root) else {
        return Err(io::Error::other("the directory is outside the workspace"));
    };
    let relative = if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    };
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
    open_beneath(anchor, relative, flags).unwrap_or_else(|| {
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        std::os::unix::fs::OpenOptionsExt::custom_flags(
            &mut options,
            libc::O_DIRECTORY | libc::O_NOFOLLOW,
        );
        options.open(dir)
    })
}

/// `name` as the C string the system calls take.
#[cfg(unix)]
pub(super) fn c_name(name: &std::ffi::OsStr) -> io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(name.as_bytes()).map_err(|_| io::Error::other("a name with a NUL byte"))
}

/// The flags a file is opened for reading with: non-blocking, so a FIFO put in its place
/// never waits for a writer.
#[cfg(unix)]
const READ_FLAGS: libc::c_int =
    libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
#[cfg(not(unix))]
const READ_FLAGS: i32 = 0;

pub(super) fn refusal(e: io::Error) -> Refusal {
    #[cfg(unix)]
    match e.raw_os_error() {
        Some(libc::ELOOP) => return Refusal::Link,
        Some(libc::ENOTDIR) => return Refusal::Missing,
        _ => {}
    }
    if e.kind() == io::ErrorKind::NotFound {
        Refusal::Missing
    } else {
        Refusal::Failed(e)
    }
}

/// `None` for a regular file; otherwise the refusal that names what it is.
pub(super) fn not_regular(kind: &std::fs::FileType) -> Option<Refusal> {
    if kind.is_file() {
        return None;
    }
    if kind.is_symlink() {
        return Some(Refusal::Link);
    }
    if kind.is_dir() {
        return Some(Refusal::NotRegular("a directory"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some(Refusal::NotRegular("a FIFO"));
        }
        if kind.is_socket() {
            return Some(Refusal::NotRegular("a socket"));
        }
        if kind.is_block_device() || kind.is_char_device() {
            return Some(Refusal::NotRegular("a device"));
        }
    }
    Some(Refusal::NotRegular("a special file"))
}

/// `openat2` below the workspace directory, with no link anywhere on the way; `None` when
/// the kernel cannot do it (then the path is opened instead).
#[cfg(target_os = "linux")]
fn open_beneath(anchor: &Anchor, relative: &Path, flags: libc::c_int) -> Option<io::Result<File>> {
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// `struct open_how` of `linux/openat2.h`.
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    /// Set once the kernel has said it has no `openat2` (or a filter refuses it).
    static UNAVAILABLE: AtomicBool = AtomicBool::new(false);

    let dir = anchor.dir.as_ref()?;
    if UNAVAILABLE.load(Ordering::Relaxed) {
        return None;
    }
    // A canonical path has no NUL (the kernel could not have named it otherwise).
    let name = std::ffi::CString::new(relative.as_os_str().as_bytes()).ok()?;
    let how = OpenHow {
        flags: flags as u64,
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: `name` is a NUL-terminated string and `how` a `struct open_how` that both
    // outlive the call; the kernel reads `size_of::<OpenHow>()` bytes of it.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            name.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        let error = io::Error::last_os_error();
        if matches!(error.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) {
            UNAVAILABLE.store(true, Ordering::Relaxed);
            return None;
        }
        return Some(Err(error));
    }
    // SAFETY: the kernel just returned this descriptor, and nothing else owns it.
    Some(Ok(unsafe { File::from_raw_fd(fd as i32) }))
}

#[cfg(not(target_os = "linux"))]
fn open_beneath(_anchor: &Anchor, _relative: &Path, _flags: i32) -> Option<io::Result<File>> {
    None
}

fn open_by_path(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY,
    );
    options.open(path)
}

/// Clears `O_NONBLOCK` on an opened regular file: local file systems ignore it, but a network
/// or FUSE one could answer a read with "try again".
pub(super) fn blocking_again(file: &File) {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: `fd` is open for as long as `file` lives; F_GETFL and F_SETFL read and set
        // its status flags only.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = file;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn only_regular_files_inside_open_and_fifos_never_block() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("dir")).unwrap();
        std::fs::write(root.join("dir/a.txt"), "a\n").unwrap();
        std::fs::write(outside.path().join("secret"), "s\n").unwrap();
        mkfifo(&root.join("fifo"));
        std::os::unix::fs::symlink("dir/a.txt", root.join("link")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        let anchor = Anchor::open(&root);
        let open = |rel: &str| open_regular(&anchor, &root, &root.join(rel));
        let mut text = String::new();
        io::Read::read_to_string(&mut open("dir/a.txt").unwrap(), &mut text).unwrap();
        assert_eq!(text, "a\n");
        assert!(matches!(open("fifo"), Err(Refusal::NotRegular("a FIFO"))));
        assert!(matches!(open("link"), Err(Refusal::Link)));
        assert!(matches!(open("zero"), Err(Refusal::Link)));
        assert!(matches!(open("out/secret"), Err(Refusal::Link)));
        assert!(matches!(
            open("dir"),
            Err(Refusal::NotRegular("a directory"))
        ));
        assert!(matches!(open("none"), Err(Refusal::Missing)));
        assert!(matches!(open("dir/a.txt/x"), Err(Refusal::Missing)));
        assert_eq!(
            open("fifo").unwrap_err().reason(),
            "is a FIFO, not a regular file"
        );
    }

    #[test]
    fn a_file_swapped_for_a_fifo_after_the_look_is_refused_without_blocking() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        mkfifo(&root.join("fifo"));
        // The open and the check on the opened file, without the look before them.
        let opened = open_beneath(&Anchor::open(&root), Path::new("fifo"), READ_FLAGS)
            .unwrap_or_else(|| open_by_path(&root.join("fifo")))
            .unwrap();
        assert!(not_regular(&opened.metadata().unwrap().file_type()).is_some());
        let linked = root.join("l");
        std::os::unix::fs::symlink("fifo", &linked).unwrap();
        assert_eq!(
            open_by_path(&linked).unwrap_err().raw_os_error(),
            Some(libc::ELOOP)
        );
        #[cfg(target_os = "linux")]
        if let Some(result) = open_beneath(&Anchor::open(&root), Path::new("l"), READ_FLAGS) {
            assert_eq!(result.unwrap_err().raw_os_error(), Some(libc::ELOOP));
        }
    }
}
