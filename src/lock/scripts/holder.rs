//! The holder record: who holds a lock, stored beside it so that a waiting script or an operator
//! can be told who is in the way.
//!
//! It is informative only. The lock itself is the random token in the key; the record is never
//! used to decide who holds the lock. It names the token it was written with, and is shown
//! only while the lock key holds that token: a record can outlive its lock when another client
//! deletes or replaces the key, and must not then name the wrong process.

use std::ffi::CStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::escape;

/// Who holds (or is taking) a lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub host: String,
    pub pid: u32,
    pub user: String,
    /// The command line protected by the lock, shell-quoted.
    pub command: String,
    /// When the lock was taken, in milliseconds since the Unix epoch (wall clock: only for
    /// display, never for validity).
    pub since_ms: u64,
    /// Why, or for which job, it is held (`--note`, or the CI job's URL): free text, at most
    /// [`MAX_NOTE`] bytes when redlock writes it. A record without one (an older redlock's)
    /// reads as `None`.
    pub note: Option<String>,
    /// The run's order (`--order`, see `kinds::order`), when it gave one.
    pub order: Option<u64>,
}

impl Holder {
    /// A record for this process, protecting `command`.
    pub fn this_process(command: &[String]) -> Holder {
        Holder {
            host: hostname(),
            pid: std::process::id(),
            user: username(),
            command: recorded(shell_words(command)),
            since_ms: unix_millis(SystemTime::now()),
            note: None,
            order: None,
        }
    }

    /// The same record, with `note` (none: no note).
    pub fn with_note(self, note: Option<String>) -> Holder {
        Holder { note, ..self }
    }

    /// The same record, with the run's `order` (none: no order).
    pub fn with_order(self, order: Option<u64>) -> Holder {
        Holder { order, ..self }
    }

    /// A record naming another process of this host (the script that called `acquire`), with
    /// its command line from /proc.
    pub fn of_process(pid: u32) -> Holder {
        let command = std::fs::read(format!("/proc/{pid}/cmdline"))
            .ok()
            .map(|raw| {
                let words: Vec<String> = raw
                    .split(|b| *b == 0)
                    .filter(|w| !w.is_empty())
                    .map(|w| String::from_utf8_lossy(w).into_owned())
                    .collect();
                recorded(shell_words(&words))
            })
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| "?".to_string());
        Holder {
            pid,
            command,
            ..Holder::this_process(&[])
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "host": self.host,
            "pid": self.pid,
            "user": self.user,
            "command": self.command,
            "since_ms": self.since_ms,
            // Added beside the others, never in place of one: a reader of the older shape
            // (an older redlock's `status`) skips a field it does not know.
            "note": self.note,
            "order": self.order,
        })
    }

    /// The record stored beside a lock held with `token`.
    pub fn record(&self, token: &str) -> String {
        let mut record = self.to_json();
        record["token"] = Value::from(token);
        record.to_string()
    }

    /// Parses a stored record, if it is one of ours and was written for the lock held with
    /// `token` (the token now in the lock key); `None` otherwise.
    pub fn from_record(text: &[u8], token: &[u8]) -> Option<Holder> {
        let value: Value = serde_json::from_slice(text).ok()?;
        if value.get("token")?.as_str()?.as_bytes() != token {
            return None;
        }
        Holder::from_value(&value)
    }

    /// Parses a record's fields; `None` for anything that is not one of ours.
    pub fn from_json(text: &[u8]) -> Option<Holder> {
        Holder::from_value(&serde_json::from_slice(text).ok()?)
    }

    fn from_value(value: &Value) -> Option<Holder> {
        Some(Holder {
            host: value.get("host")?.as_str()?.to_string(),
            pid: u32::try_from(value.get("pid")?.as_u64()?).ok()?,
            user: value.get("user")?.as_str()?.to_string(),
            command: value.get("command")?.as_str()?.to_string(),
            since_ms: value.get("since_ms")?.as_u64()?,
            // Absent in an older redlock's record; anything but text (another writer's) is no
            // note rather than no record.
            note: value
                .get("note")
                .and_then(Value::as_str)
                .map(str::to_string),
            order: value.get("order").and_then(Value::as_u64),
        })
    }

    /// How long the lock has been held, by the wall clock of this machine.
    pub fn held_for(&self) -> Duration {
        let now = unix_millis(SystemTime::now());
        Duration::from_millis(now.saturating_sub(self.since_ms))
    }

    /// `ci-3 (pid 4412, user ci, "make deploy") for 2m10s`, on one line: the record may have
    /// been written by anyone, so its text is escaped (see `crate::escape`), the command cut
    /// to 60 characters first. A note goes inside the parentheses, quoted
    /// (`"make deploy", for "https://ci.example/job/123") for 2m10s`), so that the age stays
    /// the line's last words whatever the note says: the wait's progress line and `list`'s
    /// waiters find it there. A run's order (`--order`) goes before the note (`"make deploy",
    /// order 103)`).
    pub fn describe(&self) -> String {
        let mut held = self.held_for();
        // Whole seconds read better than "2m 10s 412ms 118us".
        held = Duration::from_secs(held.as_secs());
        format!(
            "{} for {}",
            self.identify(),
            humantime::format_duration(held)
        )
    }

    /// Who, without for how long: host, pid, user, command, order and note (`history`, where
    /// how long is the turn's).
    pub fn identify(&self) -> String {
        let note = self
            .note
            .as_deref()
            .map(|note| format!(", for {}", escape::quoted(&shown_note(note))))
            .unwrap_or_default();
        let order = self
            .order
            .map(|order| format!(", order {order}"))
            .unwrap_or_default();
        format!(
            "{} (pid {}, user {}, \"{}\"{order}{note})",
            escape::visible(&self.host),
            self.pid,
            escape::visible(&self.user),
            escape::cut(&self.command, SHOWN_COMMAND),
        )
    }
}

/// The most bytes of a command line a record keeps. A command line can be megabytes (a file
/// list from `git ls-files`); the record is read back by every contender and by `status`, whose
/// replies `resp` caps, and it is only ever shown cut to one line anyway.
pub const MAX_RECORDED_COMMAND: usize = 4096;

/// `command` cut to [`MAX_RECORDED_COMMAND`] bytes.
fn recorded(command: String) -> String {
    cut_bytes(command, MAX_RECORDED_COMMAND)
}

/// `text` cut to at most `max` bytes (at a character boundary), with an ellipsis when cut:
/// what a record keeps of a text that may be longer than it holds.
pub fn cut_bytes(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max - '…'.len_utf8();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// The most characters of a command line a description shows.
const SHOWN_COMMAND: usize = 60;

/// The most bytes of a note redlock writes (`--note` longer is refused, exit 64; an automatic
/// one is cut). Room for a CI job's URL (a GitHub Actions run's is under 120 bytes for
/// ordinary names) and a few words besides; the record is read back by every contender at
/// every turn and by `status` and `list`, and its note is shown whole on one line.
pub const MAX_NOTE: usize = 256;

/// `note` as a description shows it: whole when redlock wrote it, cut to [`MAX_NOTE`]
/// characters (before escaping) when another writer made it longer.
fn shown_note(note: &str) -> std::borrow::Cow<'_, str> {
    match note.char_indices().nth(MAX_NOTE) {
        None => note.into(),
        Some(_) => {
            let end = note
                .char_indices()
                .nth(MAX_NOTE - 1)
                .map_or(note.len(), |(i, _)| i);
            format!("{}…", &note[..end]).into()
        }
    }
}

pub(in crate::lock) fn unix_millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// This machine's host name, or "unknown-host".
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the pointer and length describe `buf`, which outlives the call; gethostname
    // writes at most `len` bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown-host".into();
    }
    // The name may be truncated without a terminating NUL; the last byte stays 0 from the
    // initialisation only if it fit, so cut at the first NUL or at the end.
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The name of the user running this process: $USER or $LOGNAME, else /etc/passwd, else the
/// name service, else the numeric uid.
fn username() -> String {
    // The environment first: cron, login shells and systemd (with User=) set it, and asking
    // the name service (nscd, /etc/passwd, LDAP) costs a good share of a whole `run`.
    if let Some(name) = ["USER", "LOGNAME"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
    {
        return name;
    }
    // SAFETY: getuid cannot fail and has no preconditions.
    let uid = unsafe { libc::getuid() };
    // Local users are in /etc/passwd, read in microseconds; the name service (nscd, LDAP)
    // answers the others, at a cost that shows in a whole `run`.
    if let Some(name) = local_user(uid) {
        return name;
    }
    let mut pwd = std::mem::MaybeUninit::<libc::passwd>::uninit();
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer refers to storage owned by this frame that outlives the call, and
    // `buf.len()` is its true length; getpwuid_r writes only inside them.
    let rc = unsafe {
        libc::getpwuid_r(
            uid,
            pwd.as_mut_ptr(),
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc == 0 && !result.is_null() {
        // SAFETY: on success `result` points to `pwd`, fully initialised, whose pw_name points
        // into `buf` as a NUL-terminated string.
        let name = unsafe { CStr::from_ptr((*result).pw_name) };
        return name.to_string_lossy().into_owned();
    }
    uid.to_string()
}

/// The name of `uid` in /etc/passwd, if it is there.
fn local_user(uid: libc::uid_t) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let entry_uid: libc::uid_t = fields.nth(1)?.parse().ok()?;
        (entry_uid == uid && !name.is_empty()).then(|| name.to_string())
    })
}

/// Joins arguments into one line a shell would split back the same way.
pub fn shell_words(args: &[String]) -> String {
    args.iter()
        .map(|arg| {
            let plain = !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                arg.clone()
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_json() {
        let holder = Holder::this_process(&["make".into(), "deploy".into()]);
        let text = holder.to_json().to_string();
        assert_eq!(Holder::from_json(text.as_bytes()), Some(holder));
        assert_eq!(Holder::from_json(b"not json"), None);
        assert_eq!(Holder::from_json(br#"{"host":"h"}"#), None);
    }

    #[test]
    fn a_record_counts_only_for_its_own_token() {
        let holder = Holder::this_process(&["true".into()]);
        let record = holder.record("t1");
        assert_eq!(
            Holder::from_record(record.as_bytes(), b"t1"),
            Some(holder.clone())
        );
        assert_eq!(Holder::from_record(record.as_bytes(), b"t2"), None);
        // A record without a token (another tool's, or an older redlock's) names nobody.
        let untokened = holder.to_json().to_string();
        assert_eq!(Holder::from_record(untokened.as_bytes(), b"t1"), None);
    }

    #[test]
    fn a_note_is_one_more_field_of_the_record() {
        let holder = Holder::this_process(&["make".into()]).with_note(Some("INC-7".into()));
        let record: Value = serde_json::from_str(&holder.record("t1")).unwrap();
        assert_eq!(record["note"], "INC-7");
        // What an older redlock reads is all there, of the same types.
        for field in ["host", "user", "command"] {
            assert!(record[field].is_string(), "{field}: {record}");
        }
        assert!(
            record["pid"].is_u64() && record["since_ms"].is_u64(),
            "{record}"
        );
        assert_eq!(
            Holder::from_record(holder.record("t1").as_bytes(), b"t1"),
            Some(holder.clone())
        );
        // An older redlock's record has none; another writer's odd one is no note.
        let mut older = record.clone();
        older.as_object_mut().unwrap().remove("note");
        let read = Holder::from_record(older.to_string().as_bytes(), b"t1").unwrap();
        assert_eq!(read.note, None);
        older["note"] = Value::from(7);
        assert_eq!(
            Holder::from_json(older.to_string().as_bytes())
                .unwrap()
                .note,
            None
        );
    }

    #[test]
    fn a_note_is_shown_quoted_before_the_age() {
        let mut holder = Holder::this_process(&["make".into()]);
        holder.host = "ci-3".into();
        holder.user = "ci".into();
        holder.pid = 7;
        holder.note = Some("job 1) for 9s \"x\"\n".into());
        let line = holder.describe();
        assert!(
            line.starts_with(r#"ci-3 (pid 7, user ci, "make", for "job 1) for 9s \"x\"\n") for "#),
            "{line}"
        );
        assert!(line.ends_with(") for 0s"), "{line}");
        // Another writer's longer note is cut, never shown whole.
        holder.note = Some("n".repeat(MAX_NOTE * 4));
        let line = holder.describe();
        assert!(line.contains(&format!("\"{}…\") for ", "n".repeat(MAX_NOTE - 1))));
    }

    #[test]
    fn a_description_is_one_line_without_escape_sequences() {
        let holder = Holder::this_process(&["sh".into(), "-c".into(), "a\nb \u{1b}[31mred".into()]);
        let line = holder.describe();
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.contains(r"a\nb \u{1b}[31mred"), "{line}");
    }

    #[test]
    fn long_commands_are_cut_before_they_are_escaped() {
        let mut holder = Holder::this_process(&[]);
        holder.command = "x".repeat(60);
        assert!(
            holder
                .describe()
                .contains(&format!("\"{}\")", "x".repeat(60)))
        );
        // A cut after escaping would end in half an escape (`\u…`).
        holder.command = format!("{}\r\u{1b}[2J{}", "x".repeat(57), "y".repeat(100));
        let line = holder.describe();
        assert!(
            line.contains(&format!("\"{}\\r\\u{{1b}}…\")", "x".repeat(57))),
            "{line}"
        );
        holder.command = format!("{}é\u{202e}", "x".repeat(58));
        assert!(holder.describe().contains(r#"é\u{202e}")"#));
    }

    #[test]
    fn a_long_command_line_is_cut_in_the_record() {
        let short = Holder::this_process(&["make".into(), "deploy".into()]);
        assert_eq!(short.command, "make deploy");
        let long: Vec<String> = (0..10_000).map(|i| format!("file-é{i}.txt")).collect();
        let holder = Holder::this_process(&long);
        assert!(
            holder.command.len() <= MAX_RECORDED_COMMAND,
            "{}",
            holder.command.len()
        );
        assert!(holder.command.len() > MAX_RECORDED_COMMAND - 8);
        assert!(holder.command.starts_with("'file-é0.txt' 'file-é1.txt'"));
        assert!(holder.command.ends_with('…'));
    }

    #[test]
    fn shell_words_quotes_what_needs_it() {
        let args = ["./deploy.sh", "--env", "prod", "it's", "a b", ""].map(String::from);
        assert_eq!(
            shell_words(&args),
            r"./deploy.sh --env prod 'it'\''s' 'a b' ''"
        );
    }
}
