//! Opening the files redlock is given by name (the config file, the password file, the TLS CA,
//! certificate and key, the metrics file) without ever blocking on what the name turns out to
//! be.
//!
//! The problem: `open(2)` of a FIFO for reading blocks until a writer comes, which may be never
//! (`--password-file /tmp/fifo` hung before anything else happened, and a signal handler
//! installed later could not end it); a device such as /dev/zero or /dev/urandom never ends;
//! a directory reads as an error about something else. A check of the path before opening
//! (`stat`, `is_file`) does not close this: the name can be swapped for a FIFO between the
//! check and the open. So, for every file redlock opens by a name it was given:
//! 1. open with `O_NONBLOCK`, under which opening a FIFO returns at once (and on a regular
//!    file the flag changes nothing);
//! 2. `fstat` what was opened, so the check is of that very file, not of the name;
//! 3. refuse anything but a regular file, naming what it is ([`NotRegular`]).

use std::fs::{File, FileType, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// What a path named instead of a regular file, in words: "a FIFO (named pipe)".
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("it is {0}, not a regular file: name a regular file")]
pub struct NotRegular(pub &'static str);

impl NotRegular {
    pub fn of(kind: FileType) -> NotRegular {
        use std::os::unix::fs::FileTypeExt;
        NotRegular(if kind.is_char_device() {
            "a character device"
        } else if kind.is_block_device() {
            "a block device"
        } else if kind.is_fifo() {
            "a FIFO (named pipe)"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_dir() {
            "a directory"
        } else {
            "something else"
        })
    }

    /// The [`NotRegular`] that `error` carries, if it is one from [`open_regular`].
    pub fn within(error: &std::io::Error) -> Option<NotRegular> {
        error.get_ref()?.downcast_ref::<NotRegular>().copied()
    }
}

/// Opens `path` with `options` without blocking, and only if it is a regular file (steps 1 to
/// 3 of the header); anything else is an error carrying its [`NotRegular`].
pub fn open_regular(path: &Path, options: &mut OpenOptions) -> std::io::Result<File> {
    let file = options.custom_flags(libc::O_NONBLOCK).open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(std::io::Error::other(NotRegular::of(kind)));
    }
    Ok(file)
}

/// Reads a small regular file whole: at most `limit` bytes. Anything bigger is not what the
/// option expects (a disk image), and must not be read into memory to find out; anything but
/// a regular file is refused before a byte is read (see the header).
pub fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path, OpenOptions::new().read(true))?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "larger than {} KiB: is it the right file?",
            limit / 1024
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_is_read_and_nothing_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "text\n").unwrap();
        assert_eq!(read_bounded(&file, 64).unwrap(), b"text\n");
        let fifo = dir.path().join("p");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `name` is a NUL-terminated path; mkfifo has no other preconditions.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        for (path, is) in [
            (fifo.as_path(), "a FIFO (named pipe)"),
            (dir.path(), "a directory"),
            (Path::new("/dev/zero"), "a character device"),
        ] {
            let error = read_bounded(path, 64).unwrap_err();
            assert_eq!(NotRegular::within(&error), Some(NotRegular(is)), "{error}");
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("it is {is}, not a regular file"))
            );
        }
        let error = read_bounded(&file, 2).unwrap_err();
        assert!(error.to_string().contains("larger than"), "{error}");
        assert_eq!(NotRegular::within(&error), None);
    }
}
