//! One module per subcommand: glue between settings, the lock engine and the supervisor.

mod common;
mod run;

use crate::cli::{Cli, Command};
use crate::exit::Failure;

/// Runs the parsed command line; returns the exit code, or a failure to print.
pub fn dispatch(cli: Cli) -> Result<i32, Failure> {
    match cli.command {
        Command::Run(args) => run::run(&cli.global, args),
    }
}
