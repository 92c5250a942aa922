//! systemd's notify protocol (sd_notify(3)): what `run` tells the service manager when
//! `NOTIFY_SOCKET` is set.
//!
//! The protocol is one datagram per message on a unix socket whose address systemd puts in
//! `NOTIFY_SOCKET`: a path, or an abstract name written with a leading `@`. A message is
//! newline-separated `NAME=value` lines: `READY=1`, `STATUS=...`, `STOPPING=1`, `WATCHDOG=1`.
//! `WATCHDOG_USEC` asks for `WATCHDOG=1` at least that often (we send it at half of it, as
//! sd_watchdog_enabled(3) advises), and only if `WATCHDOG_PID` is unset or names this process.
//!
//! Written by hand, not with the sd-notify crate (0.5, small and well kept, libc only): it
//! connects to `NOTIFY_SOCKET` as a path, so an abstract socket (`@...`, what systemd uses for
//! user managers and containers) is not reached; it opens a blocking socket per message,
//! which would let a full receive queue block the supervisor's loop, whose deadlines keep
//! the command inside the lock's validity; and its way of keeping the variables from children
//! is `std::env::remove_var`, unsound once threads run. What we need is std's
//! `UnixDatagram::send_to_addr`, one call per message, on a socket made non-blocking: a
//! message systemd cannot take at once is dropped (logged with -v), never waited for.
//!
//! What each message means is decided by the callers (`src/commands/run.rs` and the
//! supervisor's loop in `src/supervise/mod.rs`); this module only knows the wire. Which
//! variables a command sees is [`Notifier::hidden_from_command`]'s answer; whether the
//! watchdog is redlock's and how often to ping it, `watchdog`'s (with the shortest interval
//! redlock keeps, 250 ms, systemd's own timer accuracy).
//!
//! A `NOTIFY_SOCKET` that reaches nothing (a path that does not exist, a regular file, a
//! socket nobody listens on) is said once on stderr, at the first message that cannot be sent
//! for that reason: a `Type=notify` unit whose READY=1 never arrives stays "activating" until
//! systemd gives up on it, and nothing else would say why. A full receive queue is not such a
//! reason (the message is dropped, logged with -vv; systemd reads on).

use std::ffi::OsStr;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

mod watchdog;

/// The variables systemd sets for the notify protocol.
pub const NOTIFY_SOCKET: &str = "NOTIFY_SOCKET";
pub const WATCHDOG_USEC: &str = "WATCHDOG_USEC";
pub const WATCHDOG_PID: &str = "WATCHDOG_PID";

/// Who speaks to systemd once the command runs (`--sd-notify`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Speaker {
    /// redlock: READY=1 once the lock is held and the command started, STATUS= throughout,
    /// WATCHDOG=1 while renewals keep a majority. The command does not see the socket.
    #[default]
    Redlock,
    /// The command: it gets `NOTIFY_SOCKET` (and `WATCHDOG_USEC`) and sends READY=1 and
    /// WATCHDOG=1 itself; redlock only says what it does before and after the command.
    Command,
}

/// The link to systemd; every method is a no-op without `NOTIFY_SOCKET`.
#[derive(Debug)]
pub struct Notifier {
    target: Option<(UnixDatagram, SocketAddr)>,
    speaker: Speaker,
    /// Half of `WATCHDOG_USEC`, when the watchdog is ours.
    watchdog: Option<Duration>,
    /// Whether systemd's watchdog is meant for redlock's process (`WATCHDOG_PID` unset or
    /// naming it), so that a command speaking for itself may be handed it.
    watchdog_is_ours: bool,
    /// Whether a socket that reaches nothing was said already.
    warned: AtomicBool,
}

impl Notifier {
    /// Reads the variables systemd set. A socket that cannot be used is logged and ignored:
    /// the command still runs, systemd only hears nothing.
    pub fn from_env(speaker: Speaker) -> Notifier {
        let target = std::env::var_os(NOTIFY_SOCKET)
            .filter(|address| !address.is_empty())
            .and_then(|address| match connect(&address) {
                Ok(target) => Some(target),
                Err(error) => {
                    log::warn!(
                        "warning: cannot use NOTIFY_SOCKET {:?} ({error}): systemd will not \
                         hear from redlock",
                        address.to_string_lossy()
                    );
                    None
                }
            });
        let usec = std::env::var_os(WATCHDOG_USEC);
        let pid = std::env::var_os(WATCHDOG_PID);
        let pid = pid.as_deref().map(|pid| pid.to_str().ok_or(()));
        let own = std::process::id();
        // The values are redlock's to judge only where redlock is the one to ping.
        let watchdog = if target.is_some() && speaker == Speaker::Redlock {
            let usec = usec.as_deref().map(|usec| usec.to_string_lossy());
            let reading = watchdog::read(usec.as_deref(), pid, own);
            if let Some(warning) = &reading.warning {
                log::warn!("{warning}");
            }
            reading.every
        } else {
            None
        };
        Notifier {
            watchdog,
            watchdog_is_ours: watchdog::is_for(pid, own),
            target,
            speaker,
            warned: AtomicBool::new(false),
        }
    }

    /// No systemd to tell.
    pub fn none() -> Notifier {
        Notifier {
            target: None,
            speaker: Speaker::Redlock,
            watchdog: None,
            watchdog_is_ours: false,
            warned: AtomicBool::new(false),
        }
    }

    /// How often to send WATCHDOG=1, if redlock is the one to send it.
    pub fn watchdog_every(&self) -> Option<Duration> {
        self.watchdog
    }

    /// The variables removed from the command's environment: all of them unless the command
    /// speaks for itself. Then `WATCHDOG_PID` always (it names redlock, or another process,
    /// never the command), and `WATCHDOG_USEC` too unless the watchdog was redlock's to hand
    /// on: a watchdog of another process's is not the command's either (see `watchdog`).
    pub fn hidden_from_command(&self) -> &'static [&'static str] {
        match self.speaker {
            Speaker::Redlock => &[NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID],
            Speaker::Command if self.watchdog_is_ours => &[WATCHDOG_PID],
            Speaker::Command => &[WATCHDOG_USEC, WATCHDOG_PID],
        }
    }

    /// Where redlock is, in words `systemctl status` shows.
    pub fn status(&self, status: &str) {
        self.send(&format!("STATUS={}", one_line(status)));
    }

    /// The lock is held and the command started: the unit becomes active. When the command
    /// speaks for itself, it says READY=1 (and its own status) when it is ready.
    pub fn ready(&self, status: &str) {
        if self.speaker == Speaker::Redlock {
            self.send(&format!("READY=1\nSTATUS={}", one_line(status)));
        }
    }

    /// What redlock says while it holds the lock; left to the command when it speaks.
    pub fn holding(&self, status: &str) {
        if self.speaker == Speaker::Redlock {
            self.status(status);
        }
    }

    /// redlock is ending: releasing the lock, or giving up.
    pub fn stopping(&self, status: &str) {
        self.send(&format!("STOPPING=1\nSTATUS={}", one_line(status)));
    }

    /// One watchdog ping. The caller decides when: only from the supervisor's loop, and only
    /// while the lock is kept.
    pub fn ping(&self) {
        if self.watchdog.is_some() {
            self.send("WATCHDOG=1");
        }
    }

    fn send(&self, message: &str) {
        let Some((socket, address)) = &self.target else {
            return;
        };
        let Err(error) = socket.send_to_addr(message.as_bytes(), address) else {
            return;
        };
        log::debug!("systemd notify socket: {message:?} not sent: {error}");
        if error.kind() != std::io::ErrorKind::WouldBlock
            && !self.warned.swap(true, Ordering::Relaxed)
        {
            log::warn!(
                "warning: NOTIFY_SOCKET {} reaches no systemd ({}): systemd will not hear from \
                 redlock, and a Type=notify unit never becomes active",
                describe(address),
                why_unreached(address, &error)
            );
        }
    }
}

/// The address as `NOTIFY_SOCKET` gave it.
fn describe(address: &SocketAddr) -> String {
    match (address.as_pathname(), address.as_abstract_name()) {
        (Some(path), _) => format!("{:?}", path.to_string_lossy()),
        (None, Some(name)) => format!("{:?}", format!("@{}", String::from_utf8_lossy(name))),
        (None, None) => "(unnamed)".to_string(),
    }
}

/// Why a message did not reach the socket, in words: a path that is no socket says what it
/// is, since "connection refused" would not.
fn why_unreached(address: &SocketAddr, error: &std::io::Error) -> String {
    use std::os::unix::fs::FileTypeExt;
    match address.as_pathname().map(std::fs::metadata) {
        Some(Ok(metadata)) if !metadata.file_type().is_socket() => {
            if metadata.is_dir() {
                "it is a directory, not a socket".to_string()
            } else {
                "it is a file, not a socket".to_string()
            }
        }
        Some(Err(missing)) if missing.kind() == std::io::ErrorKind::NotFound => {
            "no such socket".to_string()
        }
        _ => error.to_string(),
    }
}

/// An unbound, non-blocking datagram socket and the address `NOTIFY_SOCKET` names.
fn connect(address: &OsStr) -> std::io::Result<(UnixDatagram, SocketAddr)> {
    let address = parse_address(address)?;
    let socket = UnixDatagram::unbound()?;
    socket.set_nonblocking(true)?;
    Ok((socket, address))
}

/// `@name` is an abstract socket, anything else a path (sd_notify(3)).
fn parse_address(address: &OsStr) -> std::io::Result<SocketAddr> {
    match address.as_bytes().strip_prefix(b"@") {
        Some(name) => SocketAddr::from_abstract_name(name),
        None => SocketAddr::from_pathname(address),
    }
}

/// A STATUS= value is one line: a newline would start another assignment.
fn one_line(status: &str) -> String {
    status.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_at_names_an_abstract_socket() {
        let abstract_name = parse_address(OsStr::new("@redlock/notify")).unwrap();
        assert_eq!(
            abstract_name.as_abstract_name(),
            Some(&b"redlock/notify"[..])
        );
        let path = parse_address(OsStr::new("/run/systemd/notify")).unwrap();
        assert_eq!(
            path.as_pathname(),
            Some(std::path::Path::new("/run/systemd/notify"))
        );
    }

    #[test]
    fn a_status_stays_on_one_line() {
        assert_eq!(one_line("a\nb\r\nc"), "a b  c");
    }

    #[test]
    fn each_message_is_one_datagram() {
        let dir = std::env::temp_dir().join(format!("redlock-notify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify");
        let _ = std::fs::remove_file(&path);
        let systemd = UnixDatagram::bind(&path).unwrap();
        let notifier = Notifier {
            target: Some(connect(path.as_os_str()).unwrap()),
            speaker: Speaker::Redlock,
            watchdog: Some(Duration::from_secs(1)),
            watchdog_is_ours: true,
            warned: AtomicBool::new(false),
        };
        notifier.ready("holding\nlock");
        notifier.ping();
        let mut buffer = [0u8; 256];
        let n = systemd.recv(&mut buffer).unwrap();
        assert_eq!(&buffer[..n], b"READY=1\nSTATUS=holding lock");
        let n = systemd.recv(&mut buffer).unwrap();
        assert_eq!(&buffer[..n], b"WATCHDOG=1");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
