//! Every exit code `redlock` can return, in one place.
//!
//! The numbers follow `sysexits.h` where a code exists for the situation, and the shell's
//! conventions (126, 127, 128+N) for the child. [`TABLE`] says what each one means: `--help`
//! and the man page are generated from it, and `tests/exit_codes.rs` checks that README.md's
//! table, `--help` and the man page each list every code in it. A code returned anywhere
//! must be a constant here, listed in [`TABLE`].

/// Success.
pub const OK: i32 = 0;
/// Bad arguments or values (`EX_USAGE`).
pub const USAGE: i32 = 64;
/// A majority of the masters could not be reached or answered with errors (`EX_UNAVAILABLE`).
pub const UNAVAILABLE: i32 = 69;
/// `status`: the lock is free.
pub const STATUS_FREE: i32 = 1;
/// `status`: masters disagree; neither one holder nor "free" has a majority.
pub const STATUS_SPLIT: i32 = 2;
/// `doctor`: some check found an error (warnings alone exit 0).
pub const DOCTOR_FOUND_ERRORS: i32 = 1;
/// `list --problems`: a leak or a stale record was found (the same code as doctor's: "the
/// check found something").
pub const LIST_FOUND_PROBLEMS: i32 = 1;
/// The lock was lost: `run` stopped the child because renewal could not keep a majority, or
/// `release --force` revoked it (also when the child ended before a renewal could tell, and
/// only the release found it); `release` and `extend` found that the token no longer holds
/// the lock (`EX_SOFTWARE`).
pub const LOCK_LOST: i32 = 70;
/// The operating system refused something redlock needs: a thread, a pipe, a signal handler,
/// writing to standard output (`EX_OSERR`).
pub const OS_ERROR: i32 = 71;
/// The lock is held by someone else and the wait ran out (`EX_TEMPFAIL`).
pub const CONFLICT: i32 = 75;
/// Bad configuration: config file, environment, or server list (`EX_CONFIG`).
pub const CONFIG: i32 = 78;
/// `release --force`: nobody held the lock on a majority of masters, so nothing was revoked.
pub const NOTHING_HELD: i32 = 79;
/// `--supersede`: a newer waiter evicted this one from the line, so it did not run its
/// command. Beside `OUTDATED`, which a skipped deploy may also end with.
pub const SUPERSEDED: i32 = 80;
/// `--order`: a higher order already took the lock, so this run is outdated and did not run
/// its command. Above `sysexits.h`'s range and below the shell's 126.
pub const OUTDATED: i32 = 81;
/// `--supersede`: the waiter lost its place in line (it was stopped or cut off, or masters
/// restarted without it) and no newer waiter is known to have evicted it, so it did not run
/// its command and does not join again (a superseding waiter cannot tell a lapsed place from
/// an eviction whose mark expired). Unlike `SUPERSEDED`, nothing newer is known to deploy: a
/// run that ends so is worth retrying.
pub const LOST_PLACE: i32 = 82;
/// `run`: the command ran longer than `--max-duration` and was stopped (as `timeout(1)`).
pub const MAX_DURATION: i32 = 124;
/// The command was found but could not be executed.
pub const CANNOT_EXECUTE: i32 = 126;
/// The command was not found.
pub const NOT_FOUND: i32 = 127;

/// The code(s) a row of [`TABLE`] documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codes {
    /// `run`: whatever the command exited with.
    Child,
    /// `run`: 128+N for a command killed by signal N.
    Signal,
    /// These numbers.
    Fixed(&'static [i32]),
}

impl Codes {
    /// How the code is written in the tables: `64`, `0, 1, 2`, `128+N`, `the command's status`.
    pub fn label(self) -> String {
        match self {
            Codes::Child => "the command's status".to_string(),
            Codes::Signal => "128+N".to_string(),
            Codes::Fixed(codes) => codes
                .iter()
                .map(i32::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// What every exit code means, in the order the docs list them.
pub const TABLE: &[(Codes, &str)] = &[
    (
        Codes::Child,
        "run: the command ran and exited normally with this code",
    ),
    (
        Codes::Signal,
        "run: the command was killed by signal N (also when redlock is interrupted by signal N \
         while waiting for the lock)",
    ),
    (
        Codes::Fixed(&[OK, STATUS_FREE, STATUS_SPLIT]),
        "status: the lock is held, free, split",
    ),
    (
        Codes::Fixed(&[DOCTOR_FOUND_ERRORS]),
        "doctor: some check found an error; list --problems: something was found",
    ),
    (Codes::Fixed(&[USAGE]), "bad arguments or values"),
    (
        Codes::Fixed(&[UNAVAILABLE]),
        "a majority of masters could not be reached or answered with errors (list: could not \
         be scanned fully; list --problems: any master)",
    ),
    (
        Codes::Fixed(&[LOCK_LOST]),
        "the lock was lost (or revoked by release --force): run stopped the command, or its \
         release found the lock revoked after the command ended; release and extend found the \
         token no longer holds the lock",
    ),
    (
        Codes::Fixed(&[OS_ERROR]),
        "the operating system refused something redlock needs (a thread, a pipe, a signal \
         handler, writing to standard output)",
    ),
    (
        Codes::Fixed(&[CONFLICT]),
        "the lock is held by someone else and the wait ran out (see --conflict-exit-code)",
    ),
    (
        Codes::Fixed(&[CONFIG]),
        "bad configuration: config file, environment, or server list",
    ),
    (
        Codes::Fixed(&[NOTHING_HELD]),
        "release --force: nobody held the lock, nothing was revoked",
    ),
    (
        Codes::Fixed(&[SUPERSEDED]),
        "superseded: a newer waiter (--supersede) evicted this one from the line, so the command \
         did not run (see --superseded-exit-code)",
    ),
    (
        Codes::Fixed(&[OUTDATED]),
        "outdated: a higher --order already took the lock (or, with --supersede, was already \
         waiting), so the command did not run (see --outdated-exit-code)",
    ),
    (
        Codes::Fixed(&[LOST_PLACE]),
        "lost its place: a --supersede waiter's place in line was gone (it was stopped or cut \
         off, or masters restarted without it) and no newer waiter is known to have evicted \
         it, so the command did not run; retry it",
    ),
    (
        Codes::Fixed(&[MAX_DURATION]),
        "run: the command ran longer than --max-duration and was stopped",
    ),
    (
        Codes::Fixed(&[CANNOT_EXECUTE]),
        "run: the command could not be executed",
    ),
    (Codes::Fixed(&[NOT_FOUND]), "run: the command was not found"),
];

/// The table for `--help`: one code per row, meanings aligned and wrapped under themselves to
/// fit the help's 100 columns (clap would wrap a long row back to the margin).
pub fn help_table() -> String {
    const COLUMNS: usize = 100;
    let labels: Vec<String> = TABLE.iter().map(|(codes, _)| codes.label()).collect();
    let width = labels.iter().map(String::len).max().unwrap_or(0);
    let indent = " ".repeat(2 + width + 2);
    let mut out = String::from("Exit codes:\n");
    for (label, (_, meaning)) in labels.iter().zip(TABLE) {
        let mut line = format!("  {label:<width$} ");
        for word in meaning.split_whitespace() {
            if line.len() + 1 + word.len() > COLUMNS {
                out.push_str(line.trim_end());
                out.push('\n');
                line = indent.clone();
            } else {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("See 'man redlock'.");
    out
}

/// The EXIT STATUS section of the man page, in roff.
pub fn man_section() -> String {
    let roff = |text: &str| text.replace('\\', "\\e").replace('-', "\\-");
    let mut out = String::from(".SH \"EXIT STATUS\"\n");
    for (codes, meaning) in TABLE {
        let label = match codes {
            Codes::Child => "\\fIthe command's status\\fR".to_string(),
            Codes::Signal => "\\fB128+N\\fR".to_string(),
            Codes::Fixed(codes) => codes
                .iter()
                .map(|code| format!("\\fB{code}\\fR"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        out.push_str(&format!(".TP\n{label}\n{}\n", roff(meaning)));
    }
    out
}

/// The exit code of a process killed by signal `signal`, as shells report it.
pub fn killed_by(signal: i32) -> i32 {
    128 + signal
}

/// A failure the user sees: one line on stderr and an exit code from the table above.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    pub code: i32,
    /// One line saying what went wrong and what to do; empty when nothing should be printed
    /// (`--quiet` on an expected conflict).
    pub message: String,
}

impl Failure {
    pub fn new(code: i32, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    pub fn usage(message: impl Into<String>) -> Failure {
        Failure::new(USAGE, message)
    }

    pub fn config(message: impl Into<String>) -> Failure {
        Failure::new(CONFIG, message)
    }

    pub fn os(message: impl Into<String>) -> Failure {
        Failure::new(OS_ERROR, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_in_the_table_once() {
        let listed: Vec<i32> = TABLE
            .iter()
            .flat_map(|(codes, _)| match codes {
                Codes::Fixed(codes) => codes.to_vec(),
                _ => Vec::new(),
            })
            .collect();
        for code in [
            OK,
            USAGE,
            UNAVAILABLE,
            STATUS_FREE,
            STATUS_SPLIT,
            DOCTOR_FOUND_ERRORS,
            LIST_FOUND_PROBLEMS,
            LOCK_LOST,
            OS_ERROR,
            CONFLICT,
            CONFIG,
            SUPERSEDED,
            OUTDATED,
            LOST_PLACE,
            NOTHING_HELD,
            MAX_DURATION,
            CANNOT_EXECUTE,
            NOT_FOUND,
        ] {
            assert!(listed.contains(&code), "{code} is not in TABLE");
        }
        // 1 means "free" to status and "found something" to doctor and list; nothing else
        // repeats.
        let mut unique = listed.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), listed.len() - 1, "{listed:?}");
    }

    #[test]
    fn tables_render() {
        let help = help_table();
        assert!(help.contains("\n  128+N "), "{help}");
        assert!(help.lines().all(|l| l.chars().count() <= 100), "{help}");
        let man = man_section();
        assert!(
            man.contains("\\fB0\\fR, \\fB1\\fR, \\fB2\\fR\nstatus"),
            "{man}"
        );
        assert!(man.contains("\\-\\-conflict\\-exit\\-code"), "{man}");
    }
}
