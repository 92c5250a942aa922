//! Writing reports and tokens to standard output.

use crate::exit::Failure;

/// Writes a report to stdout. A closed pipe (`redlock status | head -1`) is not an error: the
/// reader has what it wanted. Any other failure (a full disk) is: the report was lost; and so
/// is a standard output that was closed when redlock started (`>&-`), which would swallow the
/// report as if it had been read (see [`crate::stdio`]): a script must not read success.
pub fn print(text: &str) -> Result<(), Failure> {
    if crate::stdio::stdout_was_closed() && !text.is_empty() {
        return Err(closed_at_start());
    }
    match write_stdout(text) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(cannot_write(&e)),
        _ => Ok(()),
    }
}

/// Writes one line of a stream (`status --watch`): `Ok(false)` when nobody reads any more (a
/// closed pipe: the stream ends, quietly), an error as for [`print`] otherwise.
pub fn print_unless_closed(text: &str) -> Result<bool, Failure> {
    if crate::stdio::stdout_was_closed() {
        return Err(closed_at_start());
    }
    match write_stdout(text) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(cannot_write(&e)),
    }
}

/// Writes what the caller cannot do without (a token): any failure, a closed pipe included,
/// is an error; and so is a standard output that was closed when redlock started, which
/// swallows every write (see [`crate::stdio`]).
///
/// It writes through a duplicate of descriptor 1, never taking `std::io::stdout`'s lock: the
/// write may block on a pipe nobody reads, and the caller may then abandon it on its thread
/// (see `bounded`) and exit, which flushes standard output under that lock.
pub fn print_all(text: &str) -> Result<(), Failure> {
    if crate::stdio::stdout_was_closed() {
        return Err(closed_at_start());
    }
    write_descriptor_1(text).map_err(|e| cannot_write(&e))
}

fn write_descriptor_1(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::fd::AsFd;
    let mut out = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned()?);
    out.write_all(text.as_bytes())
}

fn write_stdout(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush())
}

fn closed_at_start() -> Failure {
    Failure::os(
        "cannot write to standard output: it was closed when redlock started (>&-); give it an \
         output, such as a file, a pipe or /dev/null",
    )
}

fn cannot_write(error: &std::io::Error) -> Failure {
    Failure::os(format!("cannot write to standard output: {error}"))
}
