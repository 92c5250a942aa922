//! `redlock`: distributed locks for shell scripts, cron jobs and CI pipelines.
//!
//! The library holds the two parts worth reusing from Rust: [`lock`], a Redlock client over N
//! independent Redis masters, and [`supervise`], which runs a command under a held lock (process
//! group, signal forwarding, renewal, stop on lock loss). The `redlock` binary is thin glue
//! around them: [`cli`] parses, [`config`] validates, [`commands`] dispatch, [`exit`] names
//! every exit code; [`metrics`] writes what commands saw for Prometheus's textfile collector.

pub mod logger;

pub mod cli;
pub mod commands;
pub mod config;
pub mod escape;
pub mod exit;
pub mod files;
pub mod lock;
pub mod metrics;
pub mod notify;
pub mod plural;
pub mod stdio;
pub mod supervise;
