//! `redlock completions SHELL` and `redlock man`: generated from the clap definitions, so they
//! never drift from the real options. [`files`] lists every copy checked in under
//! completions/ and man/; `tests/generated.rs` fails when one differs, and `scripts/regenerate`
//! rewrites them.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::exit::{self, Failure};

use super::output;

pub fn completions(shell: Shell) -> Result<i32, Failure> {
    output::print(&completion_script(shell))?;
    Ok(exit::OK)
}

pub fn man(subcommand: Option<&str>) -> Result<i32, Failure> {
    let page = match subcommand {
        None => man_page(),
        Some(name) => subcommand_page(name).ok_or_else(|| {
            Failure::usage(format!(
                "no subcommand {name:?}: use one of {}",
                subcommands().join(", ")
            ))
        })?,
    };
    output::print(&page)?;
    Ok(exit::OK)
}

/// The subcommands, clap's own `help` included, in `--help` order. Each gets a man page of
/// its own.
pub fn subcommands() -> Vec<String> {
    built()
        .get_subcommands()
        .map(|sub| sub.get_name().to_string())
        .collect()
}

/// The command line as clap completes it before parsing (adding its `help` subcommand).
fn built() -> clap::Command {
    let mut command = Cli::command();
    command.build();
    command
}

/// Every generated file, by its path in the repository, with its content.
pub fn files() -> Vec<(String, String)> {
    let scripts = [
        (Shell::Bash, "completions/redlock.bash"),
        (Shell::Zsh, "completions/_redlock"),
        (Shell::Fish, "completions/redlock.fish"),
        (Shell::Elvish, "completions/redlock.elv"),
        (Shell::PowerShell, "completions/_redlock.ps1"),
    ]
    .into_iter()
    .map(|(shell, path)| (path.to_string(), completion_script(shell)));
    let pages = subcommands().into_iter().map(|name| {
        let page = subcommand_page(&name).expect("a page for every subcommand");
        (format!("man/redlock-{name}.1"), page)
    });
    scripts
        .chain([("man/redlock.1".to_string(), man_page())])
        .chain(pages)
        .collect()
}

fn completion_script(shell: Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "redlock", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The man page: clap's sections (without the help's exit-code table), then exit status,
/// environment and files.
pub fn man_page() -> String {
    let mut out = Vec::new();
    // The help's exit-code table is the EXIT STATUS section here, in roff.
    let page = clap_mangen::Man::new(Cli::command().after_help(None::<&str>));
    let _ = page.render(&mut out);
    let _ = out.write_all(extra_sections().as_bytes());
    String::from_utf8_lossy(&out).into_owned()
}

/// The man page of one subcommand, e.g. `redlock-run.1`: its own options (the global ones are
/// on the main page), taken before clap's build step copies the global ones in.
pub fn subcommand_page(name: &str) -> Option<String> {
    let sub = match Cli::command().find_subcommand(name) {
        Some(sub) => sub.clone(),
        // clap's own, added by the build step; as built it lists every subcommand again as
        // `help SUBCOMMAND`, which would name pages that do not exist.
        None if name == "help" => clap::Command::new("help")
            .about("Print the help of redlock, or of one of its subcommands")
            .disable_help_flag(true)
            .arg(clap::Arg::new("SUBCOMMAND").help("The subcommand, e.g. run")),
        None => return None,
    }
    .name(format!("redlock-{name}"));
    let mut out = Vec::new();
    clap_mangen::Man::new(sub).render(&mut out).ok()?;
    let _ = out.write_all(extra_sections().as_bytes());
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// What every page ends with: exit status (from [`exit::TABLE`]), environment, files.
fn extra_sections() -> String {
    exit::man_section() + EXTRA_SECTIONS
}

const EXTRA_SECTIONS: &str = r#".SH ENVIRONMENT
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
set for the command by run (with \fBREDLOCK_VALIDITY_MS\fR), printed by acquire \-\-format env;
read by release and extend as \-\-key and \-\-token, and by run and acquire, which re\-use a lock
on the same key that the calling process already holds instead of waiting for it
.TP
\fBREDLOCK_FENCE\fR
the fencing token, set for the command by run \-\-fence
.TP
\fBXDG_CONFIG_HOME\fR
where the user's config file is looked for (default \fI~/.config\fR)
.SH FILES
.TP
\fI$XDG_CONFIG_HOME/redlock/config.toml\fR, \fI/etc/redlock/config.toml\fR
the config file, when neither \-\-config nor REDLOCK_CONFIG names one
.SH "SEE ALSO"
flock(1), redis\-server(1)
"#;
