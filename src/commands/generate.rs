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

/// The subcommands users see, clap's own `help` included, in `--help` order (the hidden
/// `__renew-while` is not one). Each gets a man page of its own.
pub fn subcommands() -> Vec<String> {
    built()
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
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
    clap_complete::generate(shell, &mut visible(), "redlock", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// [`Cli`] without its hidden subcommands, for the completion scripts: clap_complete offers
/// every subcommand, hidden ones included (clap-rs/clap#1335), and a `clap::Command` cannot
/// drop one. So the root is put together again from what completions read of it: its name,
/// version, descriptions, settings, arguments and visible subcommands, all taken from [`Cli`], so
/// nothing is restated here. (`tests::visible_is_cli_without_hidden_subcommands` checks it.)
fn visible() -> clap::Command {
    let cli = Cli::command();
    let mut root = clap::Command::new(cli.get_name().to_string())
        .propagate_version(cli.is_propagate_version_set())
        .disable_help_subcommand(cli.is_disable_help_subcommand_set())
        .subcommand_required(cli.is_subcommand_required_set())
        .args(cli.get_arguments().cloned())
        .subcommands(
            cli.get_subcommands()
                .filter(|sub| !sub.is_hide_set())
                .cloned(),
        );
    if let Some(version) = cli.get_version() {
        root = root.version(version.to_string());
    }
    if let Some(about) = cli.get_about() {
        root = root.about(about.clone());
    }
    // Also decides the words of -h/--help ("see more with '--help'").
    if let Some(about) = cli.get_long_about() {
        root = root.long_about(about.clone());
    }
    root
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Completions are generated from [`visible`]: it must be [`Cli`] as clap builds it, minus
    /// the hidden subcommands.
    #[test]
    fn visible_is_cli_without_hidden_subcommands() {
        let mut cli = Cli::command();
        cli.build();
        let mut shown = visible();
        shown.build();
        let args = |c: &clap::Command| -> Vec<String> {
            c.get_arguments().map(|a| format!("{a:?}")).collect()
        };
        assert_eq!(args(&shown), args(&cli));
        // Subcommands as they are, but for clap's extensions: there `max_term_width` is kept,
        // which has no getter to copy it by, and which no completion script uses.
        let subcommand = |sub: &clap::Command| {
            let debug = format!("{sub:?}");
            let mut kept = String::new();
            let mut rest = debug.as_str();
            while let Some(start) = rest.find("app_ext: ") {
                kept.push_str(&rest[..start]);
                let end = rest[start..]
                    .find(" } }")
                    .map_or(rest.len(), |e| start + e + 4);
                rest = &rest[end..];
            }
            kept + rest
        };
        // clap's `help` lists the subcommands again: there too, the hidden ones are left out.
        let others = |c: &clap::Command| -> Vec<String> {
            c.get_subcommands()
                .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
                .map(subcommand)
                .collect()
        };
        assert!(!others(&cli).is_empty());
        assert_eq!(others(&shown), others(&cli));
        let names = |c: &clap::Command| -> Vec<String> {
            c.get_subcommands()
                .filter(|sub| !sub.is_hide_set())
                .map(|sub| sub.get_name().to_string())
                .collect()
        };
        let help = shown.find_subcommand("help").expect("clap's help");
        assert_eq!(names(help), names(&shown));
        assert!(cli.get_subcommands().any(|sub| sub.is_hide_set()));
        assert_eq!(shown.get_name(), cli.get_name());
        assert_eq!(shown.get_version(), cli.get_version());
    }
}
