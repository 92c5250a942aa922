//! `redlock completions SHELL`, `redlock man` and `redlock help`: generated from the clap
//! definitions, so they never drift from the real options. [`files`] lists every copy checked
//! in under completions/ and man/; `tests/generated.rs` fails when one differs, and
//! `scripts/regenerate` rewrites them.

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::{self, Cli};
use crate::exit::{self, Failure};

use super::output;

pub fn completions(shell: Shell) -> Result<i32, Failure> {
    output::print(&completion_script(shell))?;
    Ok(exit::OK)
}

/// `redlock help [SUBCOMMAND]`: exactly what `redlock [SUBCOMMAND] --help` prints.
pub fn help(subcommand: Option<&str>) -> Result<i32, Failure> {
    let mut words = vec!["redlock"];
    words.extend(subcommand);
    words.push("--help");
    // clap's own rendering, so that the two can never differ.
    let text = match Cli::command().try_get_matches_from(words) {
        Err(shown) if shown.kind() == clap::error::ErrorKind::DisplayHelp => shown.to_string(),
        _ => {
            return Err(Failure::usage(format!(
                "no subcommand {:?}: use one of {}",
                subcommand.unwrap_or_default(),
                subcommands().join(", ")
            )));
        }
    };
    output::print(&text)?;
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

/// The subcommands users see, `help` included, in `--help` order (the hidden `__renew-while`
/// is not one). Each gets a man page of its own.
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
    let mut command = visible();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "redlock", &mut out);
    let script = String::from_utf8_lossy(&out).into_owned();
    // What clap_complete leaves out for these two shells (zsh has both from clap): the command
    // line after `run ... --`, and the values of positional arguments.
    match shell {
        Shell::Bash => {
            script.replace("complete -F _redlock ", "complete -F _redlock_run_aware ")
                + BASH_COMMAND_LINE
        }
        Shell::Fish => script + &fish_positional_values(&command) + FISH_COMMAND_LINE,
        _ => script,
    }
}

/// bash: clap's `_redlock` offers run's options after `--` too, then file names. Completion
/// goes through `_redlock_run_aware` instead, which hands the words after `run ... --` to the
/// shell's own command completion (bash-completion's, when it is loaded; else command names
/// first, file names after). tests/generated.rs runs it in bash.
const BASH_COMMAND_LINE: &str = r#"
# After `redlock run ... --` comes a command line of its own: complete the command, then its
# arguments, as the shell does for any command.
_redlock_run_aware() {
    local i j
    for (( i = 1; i < COMP_CWORD; i++ )); do
        [[ ${COMP_WORDS[i]} == -- ]] || continue
        for (( j = 1; j < i; j++ )); do
            if [[ ${COMP_WORDS[j]} == run ]]; then
                _redlock_command_at $(( i + 1 ))
                return
            fi
        done
        break
    done
    _redlock "$@"
}

# Completes COMP_WORDS from index $1 on as a command line.
_redlock_command_at() {
    local cur=${COMP_WORDS[COMP_CWORD]} IFS=$'
'
    if declare -F _comp_command_offset >/dev/null; then
        _comp_command_offset "$1"
    elif declare -F _command_offset >/dev/null; then
        _command_offset "$1"
    elif (( COMP_CWORD == $1 )); then
        COMPREPLY=( $(compgen -c -- "$cur") )
    else
        compopt -o filenames 2>/dev/null
        COMPREPLY=( $(compgen -f -- "$cur") )
    fi
}
"#;

/// fish: clap_complete completes no positional argument; those with a fixed set of values
/// (`completions SHELL`, `man SUBCOMMAND`, `help SUBCOMMAND`) get one line each.
fn fish_positional_values(command: &clap::Command) -> String {
    let mut command = command.clone();
    command.build();
    let mut out = String::new();
    for sub in command.get_subcommands() {
        for arg in sub.get_positionals() {
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .filter(|value| !value.is_hide_set())
                .map(|value| value.get_name().to_string())
                .collect();
            if !values.is_empty() {
                out.push_str(&format!(
                    "complete -c redlock -n \"__fish_redlock_using_subcommand {}\" -f -a \"{}\"\n",
                    sub.get_name(),
                    values.join(" ")
                ));
            }
        }
    }
    out
}

/// fish: after `run ... --`, the rest is completed as a command line of its own.
const FISH_COMMAND_LINE: &str = r#"
# After `redlock run ... --` comes a command line of its own: complete the command, then its
# arguments, as fish does for any command.
function __fish_redlock_after_double_dash
    contains -- -- (commandline -opc)
end

function __fish_redlock_command_line
    set -l words (commandline -opc)
    set -l dash (contains -i -- -- $words)
    set -e words[1..$dash]
    complete -C (string join -- ' ' (string escape -- $words) (commandline -ct))
end

complete -c redlock -f -a "(__fish_redlock_command_line)" \
    -n "__fish_redlock_using_subcommand run; and __fish_redlock_after_double_dash"
"#;

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
    if let Some(version) = cli.get_long_version() {
        root = root.long_version(version.to_string());
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

/// The man page: clap's sections, then exit status, environment, files, examples and see also.
pub fn man_page() -> String {
    page(Cli::command(), "redlock")
}

/// The man page of one subcommand, e.g. `redlock-run.1`: its own options (the global ones are
/// on the main page), taken before clap's build step copies the global ones in.
pub fn subcommand_page(name: &str) -> Option<String> {
    let sub = Cli::command()
        .find_subcommand(name)
        .filter(|sub| !sub.is_hide_set())?
        .clone()
        .name(format!("redlock-{name}"));
    Some(page(sub, name))
}

/// One page: clap_mangen's sections, but for what the help says after the options (the
/// main page's exit-code table, a subcommand's examples), which clap_mangen would put under
/// EXTRA and which gets sections of its own here.
fn page(command: clap::Command, name: &str) -> String {
    let mut out = Vec::new();
    // The long version names the commit: a checked-in page would be stale after every one.
    let command = command.after_help(None::<&str>).long_version(None::<&str>);
    let _ = clap_mangen::Man::new(command).render(&mut out);
    let mut page = String::from_utf8_lossy(&out).into_owned();
    page.push_str(&exit::man_section());
    page.push_str(ENVIRONMENT_AND_FILES);
    page.push_str(&examples_section(cli::examples(name)));
    page.push_str(".SH \"SEE ALSO\"\n");
    if name != "redlock" {
        page.push_str("redlock(1), ");
    }
    page.push_str("flock(1), redis\\-server(1)\n");
    page
}

/// The EXAMPLES section: each example as it is typed, unfilled, indented.
fn examples_section(examples: &[&str]) -> String {
    if examples.is_empty() {
        return String::new();
    }
    let mut out = String::from(".SH EXAMPLES\n");
    for example in examples {
        out.push_str(".PP\n.RS 4\n.nf\n");
        for line in example.lines() {
            out.push_str(&roff_line(line));
            out.push('\n');
        }
        out.push_str(".fi\n.RE\n");
    }
    out
}

/// `text` as a line of roff that prints it as is.
fn roff_line(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    // A line that starts with a dot or a quote would be read as a request.
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

const ENVIRONMENT_AND_FILES: &str = r#".SH ENVIRONMENT
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
        let visible = |c: &clap::Command| -> Vec<String> {
            c.get_subcommands()
                .filter(|sub| !sub.is_hide_set())
                .map(subcommand)
                .collect()
        };
        assert!(!visible(&cli).is_empty());
        assert_eq!(visible(&shown), visible(&cli));
        assert_eq!(shown.get_subcommands().count(), visible(&cli).len());
        assert!(cli.get_subcommands().any(|sub| sub.is_hide_set()));
        assert_eq!(shown.get_name(), cli.get_name());
        assert_eq!(shown.get_version(), cli.get_version());
    }
}
