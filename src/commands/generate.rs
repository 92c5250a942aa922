//! `redlock completions SHELL` and `redlock man`: generated from the clap definitions, so they
//! never drift from the real options. The copies under completions/ and man/ are checked by
//! `tests/generated.rs`; `scripts/regenerate` rewrites them.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::Cli;
use crate::exit::{self, Failure};

use super::common;

pub fn completions(shell: clap_complete::Shell) -> Result<i32, Failure> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "redlock", &mut out);
    common::print(&String::from_utf8_lossy(&out));
    Ok(exit::OK)
}

pub fn man(subcommand: Option<&str>) -> Result<i32, Failure> {
    let page = match subcommand {
        None => man_page(),
        Some(name) => subcommand_page(name).ok_or_else(|| {
            Failure::usage(format!(
                "no subcommand {name:?}: use one of {}",
                PAGES.join(", ")
            ))
        })?,
    };
    common::print(&page);
    Ok(exit::OK)
}

/// The subcommands that get a page of their own.
pub const PAGES: [&str; 9] = [
    "run",
    "acquire",
    "release",
    "extend",
    "status",
    "doctor",
    "config",
    "completions",
    "man",
];

/// The man page: clap's sections, then exit status, environment and files.
pub fn man_page() -> String {
    let mut out = Vec::new();
    let page = clap_mangen::Man::new(Cli::command());
    let _ = page.render(&mut out);
    let _ = out.write_all(EXTRA_SECTIONS.as_bytes());
    String::from_utf8_lossy(&out).into_owned()
}

/// The man page of one subcommand, e.g. `redlock-run.1`.
pub fn subcommand_page(name: &str) -> Option<String> {
    if !PAGES.contains(&name) {
        return None;
    }
    let command = Cli::command();
    let sub = command.find_subcommand(name)?.clone();
    let sub = sub.name(format!("redlock-{name}"));
    let mut out = Vec::new();
    clap_mangen::Man::new(sub).render(&mut out).ok()?;
    let _ = out.write_all(EXTRA_SECTIONS.as_bytes());
    Some(String::from_utf8_lossy(&out).into_owned())
}

const EXTRA_SECTIONS: &str = r#".SH "EXIT STATUS"
.TP
\fIthe command's status\fR
run: the command ran and exited normally with this code
.TP
\fB128+N\fR
run: the command was killed by signal N (also when redlock is interrupted by signal N while waiting for the lock)
.TP
\fB0\fR, \fB1\fR, \fB2\fR
status: the lock is held, free, split
.TP
\fB1\fR
doctor: some check found an error
.TP
\fB64\fR
bad arguments or values
.TP
\fB69\fR
a majority of masters could not be reached or answered with errors
.TP
\fB70\fR
the lock was lost: run stopped the command; release and extend found the token no longer holds the lock
.TP
\fB71\fR
the operating system refused something redlock needs (a thread, a pipe, a signal handler)
.TP
\fB75\fR
the lock is held by someone else and the wait ran out (see \-\-conflict\-exit\-code)
.TP
\fB78\fR
bad configuration: config file, environment, or server list
.TP
\fB124\fR
run: the command ran longer than \-\-max\-duration and was stopped
.TP
\fB126\fR, \fB127\fR
run: the command could not be executed, was not found
.SH ENVIRONMENT
.TP
\fBREDLOCK_SERVERS\fR
the masters, comma\- or space\-separated, when no \-\-server is given
.TP
\fBREDLOCK_CONFIG\fR
the config file, when no \-\-config is given
.TP
\fBREDLOCK_PASSWORD_FILE\fR, \fBREDLOCK_PASSWORD\fR
the password for masters whose URL has none
.TP
\fBREDLOCK_KEY\fR, \fBREDLOCK_TOKEN\fR
set for the command by run (with \fBREDLOCK_VALIDITY_MS\fR); read by release and extend
.SH FILES
.TP
\fI~/.config/redlock/config.toml\fR, \fI/etc/redlock/config.toml\fR
the config file, when neither \-\-config nor REDLOCK_CONFIG names one
.SH "SEE ALSO"
flock(1), redis\-server(1)
"#;
