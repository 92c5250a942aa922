//! Updating the metrics file in place of other writers: under an exclusive lock on a sidecar
//! file, read, change, write to a temporary file beside it, rename over it.
//!
//! Only a regular file is ever replaced. The rename puts a new regular file where the path was:
//! run as root with `--metrics-file /dev/null` (a natural way to say "no metrics"), it would turn
//! the host's /dev/null into a file of metrics that every program then writes to. And opening a
//! FIFO blocks until a writer comes, which may be never. So, in order:
//! 1. The path is resolved (a symbolic link is followed: the link stays, its target is
//!    replaced) and must name a regular file or nothing; anything else (a device, a FIFO, a
//!    socket, a directory) is refused before anything is created beside it, the sidecar lock
//!    included, and the refusal names what the path is.
//! 2. The sidecar lock and the current file are opened with `O_NONBLOCK` and checked with
//!    `fstat` to be regular files (`files::open_regular`, as every file redlock opens by name),
//!    so one swapped in after step 1 is refused, not waited on.
//! 3. Under the lock, just before the rename, the path is checked again: a node made there in
//!    the meantime is left alone.
//!
//! The new file keeps the old one's mode, owner and group (see `keep_owner`): a rename replaces
//! the file, and the new one would otherwise belong to whoever ran redlock last (root).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::files::{self, NotRegular};

/// The most a metrics file may hold: far more than any number of keys redlock writes, and
/// not something to read into memory when a wrong path names a disk image.
const MAX_BYTES: u64 = 16 << 20;

/// How long to wait for another writer's lock before giving up on this update.
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Runs `change` on the file's current text (empty when there is none) and replaces the file
/// with what it returns, holding the sidecar lock throughout.
pub fn update(
    path: &Path,
    change: impl FnOnce(&str) -> Result<String, String>,
) -> Result<(), String> {
    let path = &resolve(path)?;
    let name = path
        .file_name()
        .ok_or_else(|| "the path names no file".to_string())?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let lock_path = sidecar(path);
    regular_or_missing(&lock_path, Some(&lock_path))?;
    let lock = open_lock(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    exclusive(&lock, LOCK_WAIT).map_err(|e| format!("{}: {e}", lock_path.display()))?;

    let (current, old) = match open_regular(path, OpenOptions::new().read(true), false) {
        Ok(file) => {
            let meta = file.metadata().map_err(|e| e.to_string())?;
            (
                Some(read_bounded(file).map_err(|e| e.to_string())?),
                Some(meta),
            )
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
        Err(e) => return Err(e.to_string()),
    };
    let mode = old
        .as_ref()
        .map_or(0o644, |m| m.permissions().mode() & 0o777);
    let owner = old.as_ref().map(|m| (m.uid(), m.gid()));
    let text = change(current.as_deref().unwrap_or(""))?;

    let temp = dir.join(format!(
        ".{}.{}.{:08x}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        fastrand::u32(..)
    ));
    let written = write_file(&temp, text.as_bytes(), mode, owner).and_then(|()| {
        // Step 3 of the header: whatever appeared at the path meanwhile is not replaced.
        regular_or_missing(path, None).map_err(std::io::Error::other)?;
        std::fs::rename(&temp, path)?;
        // The rename is durable once the directory is.
        File::open(&dir).and_then(|d| d.sync_all())
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(e.to_string());
    }
    // The lock goes with `lock`, closed here.
    Ok(())
}

/// The lock file beside `path`: `PATH.lock`. Not the metrics file itself: each update renames
/// a new file over it, so a lock on the old one would not exclude a writer that opened the
/// new one. Its name does not end in `.prom`, so the textfile collector ignores it.
pub fn sidecar(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// The file an update replaces: `path`, or where it leads when it is a symbolic link (the
/// link is kept; a link to a file not made yet leads to where that file will be). Refuses a
/// path that names something other than a regular file.
fn resolve(path: &Path) -> Result<PathBuf, String> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let target = if !is_link {
        path.to_path_buf()
    } else {
        match std::fs::canonicalize(path) {
            Ok(target) => target,
            // A dangling link: its target, relative to the link's own directory.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let to = std::fs::read_link(path).map_err(|e| e.to_string())?;
                path.parent().map_or(to.clone(), |dir| dir.join(&to))
            }
            Err(e) => return Err(e.to_string()),
        }
    };
    regular_or_missing(&target, None)?;
    Ok(target)
}

/// Ok when `path` is a regular file or does not exist; otherwise why it must not be written.
/// `sidecar` is the lock file's path when that is what `path` is.
fn regular_or_missing(path: &Path, sidecar: Option<&Path>) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) => Err(not_a_file(sidecar, NotRegular::of(meta.file_type()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The refusal for a path that is not a regular file, naming what it is: the metrics file
/// itself, or its lock file when `sidecar` names it.
fn not_a_file(sidecar: Option<&Path>, NotRegular(is): NotRegular) -> String {
    match sidecar {
        None => format!(
            "it is {is}: metrics are only ever written to a regular file, so nothing was \
             written; name a regular file, or leave --metrics-file out to write no metrics"
        ),
        Some(lock) => format!(
            "its lock file {} is {is}: nothing was written; remove it or name another metrics \
             file",
            lock.display()
        ),
    }
}

/// Opens `path` without blocking (a FIFO would block until a writer came) and only if it is a
/// regular file: step 2 of the header, done as for every file redlock opens (see `files`),
/// with the metrics file's own refusal.
fn open_regular(path: &Path, options: &mut OpenOptions, sidecar: bool) -> std::io::Result<File> {
    files::open_regular(path, options).map_err(|e| match NotRegular::within(&e) {
        Some(is) => std::io::Error::other(not_a_file(sidecar.then_some(path), is)),
        None => e,
    })
}

fn open_lock(path: &Path) -> std::io::Result<File> {
    let opened = open_regular(
        path,
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644),
        true,
    );
    match opened {
        // Another user's lock file: reading is enough to lock it.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            open_regular(path, OpenOptions::new().read(true), true)
        }
        other => other,
    }
}

/// Takes an exclusive flock on `file`, trying for `patience`.
fn exclusive(file: &File, patience: Duration) -> std::io::Result<()> {
    let give_up = Instant::now() + patience;
    loop {
        // SAFETY: flock takes a descriptor that `file` keeps open for the call.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EWOULDBLOCK) if Instant::now() < give_up => {
                std::thread::sleep(Duration::from_millis(2 + u64::from(fastrand::u8(..8))));
            }
            Some(libc::EINTR) => {}
            Some(libc::EWOULDBLOCK) => {
                return Err(std::io::Error::other(format!(
                    "another process held the lock for more than {}s",
                    patience.as_secs()
                )));
            }
            _ => return Err(error),
        }
    }
}

fn read_bounded(file: File) -> std::io::Result<String> {
    let mut text = String::new();
    file.take(MAX_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB: is it the right file?",
            MAX_BYTES >> 20
        )));
    }
    Ok(text)
}

/// Gives the new file the old one's owner and group. The rename puts a new file in place of
/// the old, and a new file belongs to whoever made it: one `sudo redlock run` (or a root cron
/// job beside a user's) would hand the user's metrics file to root, and in a sticky directory
/// (/tmp) the user's own runs could then no longer replace it. Only root can give a file away,
/// so root must manage to (else nothing is replaced: the update fails with a warning); anyone
/// else can only have made a file of their own, and keeps the group where they belong to it.
fn keep_owner(file: &File, uid: u32, gid: u32) -> std::io::Result<()> {
    use std::os::unix::fs::fchown;
    let made = file.metadata()?;
    if (made.uid(), made.gid()) == (uid, gid) {
        return Ok(());
    }
    match fchown(file, Some(uid), Some(gid)) {
        Ok(()) => Ok(()),
        // SAFETY: geteuid has no preconditions and cannot fail.
        Err(e) if unsafe { libc::geteuid() } == 0 => Err(e),
        Err(_) => {
            // Not root: the owner stays ours; the group too, unless we belong to the old one.
            let _ = fchown(file, None, Some(gid));
            Ok(())
        }
    }
}

/// Writes the new file at `path` with the old one's `mode` and, where it had one, its `owner`
/// (uid, gid), see [`keep_owner`].
fn write_file(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    if let Some((uid, gid)) = owner {
        keep_owner(&file, uid, gid)?;
    }
    // The umask may have taken bits the old file had (the collector must be able to read it).
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    file.write_all(bytes)?;
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_replace_the_file_and_leave_only_the_lock_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("redlock.prom");
        update(&path, |old| Ok(format!("{old}a\n"))).unwrap();
        update(&path, |old| Ok(format!("{old}b\n"))).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\n");
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["redlock.prom", "redlock.prom.lock"]);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
    }

    #[test]
    fn a_failed_change_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.prom");
        update(&path, |_| Ok("kept\n".into())).unwrap();
        let error = update(&path, |_| Err("no".into())).unwrap_err();
        assert_eq!(error, "no");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "kept\n");
    }

    #[test]
    fn a_held_lock_is_waited_for_then_given_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.prom");
        let held = open_lock(&sidecar(&path)).unwrap();
        exclusive(&held, Duration::ZERO).unwrap();
        let other = open_lock(&sidecar(&path)).unwrap();
        let error = exclusive(&other, Duration::from_millis(20)).unwrap_err();
        assert!(error.to_string().contains("held the lock"), "{error}");
        drop(held);
        exclusive(&other, Duration::from_millis(20)).unwrap();
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let error = update(Path::new("/nonexistent/redlock/m.prom"), |_| {
            Ok(String::new())
        })
        .unwrap_err();
        assert!(
            error.contains("/nonexistent/redlock/m.prom.lock"),
            "{error}"
        );
    }
}
