//! Reading redlock's environment variables.
//!
//! The invariant: a variable that is set is either used or refused, never silently taken for
//! unset. `std::env::var(..).ok()` does exactly that to a value that is not UTF-8, and for
//! `REDLOCK_SERVERS` the fallback is the default server: the lock would be taken on whatever
//! Redis runs locally. So every text variable is read through [`text`], which turns a value
//! that is not UTF-8 into exit 78 naming the variable (never showing the value: it may be a
//! password). A variable is checked even where a flag overrides it, so that a broken
//! environment is found the first time, not the day the flag is dropped.
//!
//! File names are the exception: on Unix they are bytes, and a name that is not UTF-8 is still
//! a name (`REDLOCK_CONFIG`, `REDLOCK_PASSWORD_FILE`, `XDG_CONFIG_HOME`, `HOME` are read with
//! [`std::env::var_os`] and used as they are).

use std::ffi::OsString;

use crate::exit::Failure;

/// The lock's key: set for the command by `run`, printed by `acquire --format env`; read by
/// `release` and `extend` (as `--key`), and by `run` and `acquire` to re-use an enclosing lock.
pub const KEY_ENV: &str = "REDLOCK_KEY";
/// The lock's token, alongside [`KEY_ENV`].
pub const TOKEN_ENV: &str = "REDLOCK_TOKEN";
/// The fencing token of an enclosing `run --fence`.
pub const FENCE_ENV: &str = "REDLOCK_FENCE";

/// The value of variable `name`: `None` when unset; an error (78, naming the variable, not
/// showing the value) when set to something that is not UTF-8 text.
pub fn text(name: &str) -> Result<Option<String>, Failure> {
    match std::env::var_os(name) {
        None => Ok(None),
        Some(value) => value.into_string().map(Some).map_err(|_| not_text(name)),
    }
}

fn not_text(name: &str) -> Failure {
    Failure::config(format!(
        "${name} is set but is not valid UTF-8 text; fix its value or unset it"
    ))
}

/// Checks the variables clap reads for the command line `args` (`env = "..."` on an argument of
/// the top-level command or of the subcommand named in `args`). Clap itself would report a
/// value that is not UTF-8 as "invalid UTF-8 was detected in one or more arguments", exit 64,
/// without naming the variable.
pub fn check_declared(
    command: impl FnOnce() -> clap::Command,
    args: &[OsString],
) -> Result<(), Failure> {
    // Building clap's command costs more than a look at the environment: only when needed.
    if std::env::vars_os().all(|(_, value)| value.to_str().is_some()) {
        return Ok(());
    }
    // Built: each subcommand's arguments are added only when it is built (see `cli::Command`).
    let mut command = command();
    command.build();
    let subcommand = args
        .iter()
        .skip(1)
        .filter_map(|arg| arg.to_str())
        .find_map(|arg| command.find_subcommand(arg));
    let arguments = command.get_arguments().chain(
        subcommand
            .into_iter()
            .flat_map(clap::Command::get_arguments),
    );
    for name in arguments.filter_map(clap::Arg::get_env) {
        if let Some(name) = name.to_str() {
            text(name)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn release_and_extend_read_key_and_token_from_the_environment() {
        // Guards check_declared's reach: if these move out of clap, check them where read.
        let mut command = crate::cli::Cli::command();
        command.build();
        for sub in ["release", "extend"] {
            let names: Vec<_> = command
                .find_subcommand(sub)
                .unwrap()
                .get_arguments()
                .filter_map(clap::Arg::get_env)
                .collect();
            assert!(names.iter().any(|n| *n == KEY_ENV), "{sub}");
            assert!(names.iter().any(|n| *n == TOKEN_ENV), "{sub}");
        }
    }
}
