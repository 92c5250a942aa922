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
//! 3. refuse anything but a regular file, naming what it is ([`NotRegular`]);
//! 4. except a pipe where a small file is read whole ([`read_bounded`]): `--password-file
//!    <(pass show redis)` is how scripts keep a secret off the command line and out of the
//!    environment. A pipe is read until its writer closes it, for at most [`PIPE_PATIENCE`]:
//!    a FIFO nobody writes to is refused then, instead of blocking forever. The wait is in
//!    `poll(2)`, with the descriptor non-blocking, so that nothing waits past the deadline
//!    (`read` on such a FIFO before any writer came would say end of file at once).

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

/// How long a pipe given as a file may take to deliver it whole (see the header, step 4).
pub const PIPE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// What a FIFO whose writer never finished is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "it is a FIFO (named pipe) and nothing wrote it whole within {}s: name a regular file, or \
     a pipe whose writer closes it",
    PIPE_PATIENCE.as_secs()
)]
pub struct PipeNeverEnded;

/// Reads a small file whole: at most `limit` bytes. Anything bigger is not what the option
/// expects (a disk image), and must not be read into memory to find out. A pipe is read until
/// its writer closes it, within [`PIPE_PATIENCE`]; anything else but a regular file is refused
/// before a byte is read (see the header).
pub fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if std::os::unix::fs::FileTypeExt::is_fifo(&kind) {
        read_pipe(&file, limit, &mut bytes)?;
    } else if kind.is_file() {
        file.take(limit + 1).read_to_end(&mut bytes)?;
    } else {
        return Err(std::io::Error::other(NotRegular::of(kind)));
    }
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "larger than {} KiB: is it the right file?",
            limit / 1024
        )));
    }
    Ok(bytes)
}

/// Reads the non-blocking pipe `file` until its writer closes it (at most `limit` + 1 bytes),
/// waiting in poll(2) until [`PIPE_PATIENCE`] has passed (see the header, step 4).
fn read_pipe(mut file: &File, limit: u64, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let deadline = std::time::Instant::now() + PIPE_PATIENCE;
    let mut chunk = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let mut poll = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, and its count.
        let ready =
            unsafe { libc::poll(&mut poll, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if ready == -1 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        if ready == 0 {
            return Err(std::io::Error::other(PipeNeverEnded));
        }
        // Readable, or its writer is gone: read what is there.
        match file.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() as u64 > limit {
                    return Ok(());
                }
            }
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                ) => {}
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

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
        let error = read_bounded(&fifo, 64).unwrap_err();
        assert_eq!(
            error
                .get_ref()
                .and_then(|e| e.downcast_ref::<PipeNeverEnded>()),
            Some(&PipeNeverEnded),
            "{error}"
        );
        for (path, is) in [
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
        // A pipe whose writer closes it is read whole.
        let (reader, mut writer) = std::io::pipe().unwrap();
        writer.write_all(b"secret").unwrap();
        drop(writer);
        use std::os::fd::AsRawFd;
        let path = format!("/proc/self/fd/{}", reader.as_raw_fd());
        assert_eq!(read_bounded(Path::new(&path), 64).unwrap(), b"secret");
        let error = read_bounded(&file, 2).unwrap_err();
        assert!(error.to_string().contains("larger than"), "{error}");
        assert_eq!(NotRegular::within(&error), None);
    }
}
