//! One module per subcommand: glue between settings, the lock engine and the supervisor.

mod acquire;
mod acquiring;
mod bounded;
mod doctor;
mod durations;
mod extend;
mod force_release;
pub mod generate;
mod history;
mod list;
mod ordering;
mod output;
mod progress;
mod reentrance;
mod release;
mod releasing;
mod renew_while;
mod run;
mod show_config;
mod status;
mod status_revoked;
mod status_shared;
mod status_slots;
mod status_watch;
mod wording;

use std::sync::Arc;

use crate::cli::{Command, GlobalArgs};
use crate::config::Context;
use crate::exit::Failure;
use crate::lock::Redlock;

pub use output::print;

/// Runs the subcommand with the options that apply to it; returns the exit code, or a
/// failure to print.
pub fn dispatch(global: &GlobalArgs, command: Command) -> Result<i32, Failure> {
    match command {
        Command::Run { args, .. } => run::run(global, args),
        Command::Acquire { args, .. } => acquire::acquire(global, args),
        Command::Release {
            args,
            force,
            metrics,
            ..
        } if force.force => force_release::force_release(global, &args, &force, metrics),
        Command::Release { args, metrics, .. } => release::release(global, args, metrics),
        Command::Extend { args, .. } => extend::extend(global, args),
        Command::Status { args, .. } => status::status(global, args),
        Command::History { args, .. } => history::history(global, args),
        Command::List { args, .. } => list::list(global, args),
        Command::Doctor { args, .. } => doctor::doctor(global, args),
        Command::Config { args, .. } => show_config::show_config(global, args),
        Command::Completions { shell } => generate::completions(shell),
        Command::Man { subcommand } => generate::man(subcommand.as_deref()),
        Command::Help { subcommand } => generate::help(subcommand.as_deref()),
        Command::RenewWhile { args, .. } => renew_while::renew_while(global, args),
    }
}

fn open_client(context: &Context) -> Result<Arc<Redlock>, Failure> {
    use anyhow::Context as _;
    Redlock::new(context.masters.clone(), context.tls.clone())
        .context("cannot start the client")
        .map(Arc::new)
        .map_err(|e| Failure::os(format!("{e:#}")))
}
