//! Passwords: where they come from, and keeping them off the screen and out of reach.
//!
//! A password may sit in a server URL (from `REDLOCK_SERVERS` or the config file), in a password
//! file (`--password-file`, `$REDLOCK_PASSWORD_FILE`, or `password_file` in the config file), or
//! in `$REDLOCK_PASSWORD`. It never has to appear on a command line, and redlock never prints
//! it: masters are shown as `redis://user:***@host:port`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::exit::Failure;

pub const PASSWORD_ENV: &str = "REDLOCK_PASSWORD";
pub const PASSWORD_FILE_ENV: &str = "REDLOCK_PASSWORD_FILE";

/// True when users other than the owner may read `path`.
pub fn readable_by_others(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o044 != 0)
}

/// Reads a password file: its first line, without the line ending.
pub fn read_password_file(path: &Path, source: &str) -> Result<String, Failure> {
    let unreadable = |why: String| {
        Failure::config(format!(
            "cannot read the password file {} (from {source}): {why}",
            path.display()
        ))
    };
    let bytes =
        crate::files::read_bounded(path, 64 * 1024).map_err(|e| unreadable(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| unreadable("it is not text".into()))?;
    let password = text.lines().next().unwrap_or("").to_string();
    if password.is_empty() {
        return Err(Failure::config(format!(
            "the password file {} (from {source}) is empty: put the password on its first line",
            path.display()
        )));
    }
    Ok(password)
}

/// The warning for a secret that other users can read.
pub fn exposed(path: &Path, what: &str) -> String {
    format!(
        "warning: {what} {} is readable by other users but holds a password; restrict it with \
         chmod 600 {}",
        path.display(),
        path.display()
    )
}
