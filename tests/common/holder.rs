//! Who a holder record names: this machine's host name and user, and a command as messages
//! abbreviate it.

use std::process::Command;
use std::time::Duration;

/// This machine's host name, as holder records have it.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the pointer and length describe `buf`, which outlives the call.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    assert_eq!(rc, 0, "gethostname");
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The user running the tests (and so the holders they start).
pub fn this_user() -> String {
    for var in ["USER", "LOGNAME"] {
        if let Ok(name) = std::env::var(var)
            && !name.is_empty()
        {
            return name;
        }
    }
    let output = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// `command` as messages show it: cut to 60 characters, with an ellipsis when cut.
pub fn abbreviated(command: &str) -> String {
    if command.chars().count() <= 60 {
        return command.to_string();
    }
    let mut cut: String = command.chars().take(59).collect();
    cut.push('…');
    cut
}

/// Checks that `text` names the holder as `HOST (pid PID, user USER, "COMMAND") for AGE`, with
/// this machine's host name and user, and returns AGE.
pub fn holder_age(text: &str, pid: impl std::fmt::Display, command: &str) -> Duration {
    let expected = format!(
        "{} (pid {pid}, user {}, \"{}\") for ",
        hostname(),
        this_user(),
        abbreviated(command)
    );
    let start = text
        .find(&expected)
        .unwrap_or_else(|| panic!("expected `{expected}` in: {text}"))
        + expected.len();
    let rest = &text[start..];
    let end = rest.find([',', ';', '\n', '\r']).unwrap_or(rest.len());
    humantime::parse_duration(&rest[..end])
        .unwrap_or_else(|e| panic!("the holder's age is not a duration ({e}): {text}"))
}
