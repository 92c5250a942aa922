//! What a bench run cost the masters: their CPU, the connections they accepted, the commands
//! they ran and the time those commands took, summed over the masters (issue 35, item 3).
//!
//! Read from each master itself, before and after the run, on one connection per master opened
//! beforehand (so that the bench's own connecting is not counted):
//! - CPU: `INFO cpu`'s `used_cpu_user` and `used_cpu_sys` (the server's getrusage of itself,
//!   every thread, in microseconds), and the time its threads were on a CPU from
//!   `/proc/PID/task/*/schedstat` (nanoseconds, the scheduler's own clock; PID from `INFO
//!   server`). The two agree within the rusage's sampling; both are printed.
//! - connections: `INFO stats`' `total_connections_received`, reset by CONFIG RESETSTAT.
//! - commands: `INFO commandstats`, also reset by CONFIG RESETSTAT: calls and `usec` (the time
//!   inside each command, as the server measures it) by command name. Every command a Lua
//!   script runs is counted too, and its time is also within the script's (see `queue.rs`).
//!
//! The bench's own CONFIG RESETSTAT and INFO calls run on the masters too: a few per master per
//! run, left out of the commands (`redlock run` sends neither), and a few tens of microseconds
//! of CPU in the CPU figures.

use std::collections::BTreeMap;

use super::common::{Cluster, Inspector};

/// One connection per master, and what they said before the run.
pub struct MasterLoad {
    masters: Vec<(Inspector, u32)>,
    before: Cpu,
}

/// CPU of all the masters together, in microseconds.
#[derive(Clone, Copy, Default)]
pub struct Cpu {
    pub user_us: f64,
    pub sys_us: f64,
    /// On a CPU, from the scheduler.
    pub on_cpu_us: f64,
}

/// What the masters did during one run, summed over them.
pub struct Load {
    pub cpu: Cpu,
    pub connections: u64,
    /// (calls, usec) by command name.
    pub commands: BTreeMap<String, (u64, u64)>,
}

impl Load {
    pub fn calls(&self) -> u64 {
        self.commands.values().map(|(calls, _)| calls).sum()
    }

    /// Time inside commands, microseconds (a script's commands within the script's time, so
    /// only the top-level ones: everything but what a script ran is a command of its own).
    pub fn command_us(&self, top_level: &[&str]) -> u64 {
        let names = self.commands.iter();
        names
            .filter(|(name, _)| top_level.contains(&name.as_str()))
            .map(|(_, (_, usec))| usec)
            .sum()
    }
}

impl MasterLoad {
    /// Resets the masters' statistics and notes their CPU so far.
    pub fn start(cluster: &Cluster) -> MasterLoad {
        let mut masters: Vec<(Inspector, u32)> = cluster
            .servers
            .iter()
            .map(|server| {
                let mut connection = server.connection();
                let pid = info_field(&info(&mut connection, "server"), "process_id");
                (connection, pid as u32)
            })
            .collect();
        for (connection, _) in &mut masters {
            let () = redis::cmd("CONFIG")
                .arg("RESETSTAT")
                .query(connection)
                .expect("CONFIG RESETSTAT");
        }
        let before = cpu_of(&mut masters);
        MasterLoad { masters, before }
    }

    /// What the masters did since [`MasterLoad::start`].
    pub fn finish(mut self) -> Load {
        let after = cpu_of(&mut self.masters);
        let mut connections = 0;
        let mut commands = BTreeMap::new();
        for (connection, _) in &mut self.masters {
            connections += info_field(&info(connection, "stats"), "total_connections_received");
            for (name, calls, usec) in parse_commandstats(&info(connection, "commandstats")) {
                let entry = commands.entry(name).or_insert((0, 0));
                entry.0 += calls;
                entry.1 += usec;
            }
        }
        // The bench's own CONFIG RESETSTAT and INFO (`redlock run` sends neither).
        commands.remove("config|resetstat");
        commands.remove("info");
        Load {
            cpu: Cpu {
                user_us: after.user_us - self.before.user_us,
                sys_us: after.sys_us - self.before.sys_us,
                on_cpu_us: after.on_cpu_us - self.before.on_cpu_us,
            },
            connections,
            commands,
        }
    }
}

/// The masters' CPU so far, summed.
fn cpu_of(masters: &mut [(Inspector, u32)]) -> Cpu {
    let mut cpu = Cpu::default();
    for (connection, pid) in masters {
        let text = info(connection, "cpu");
        cpu.user_us += info_float(&text, "used_cpu_user") * 1e6;
        cpu.sys_us += info_float(&text, "used_cpu_sys") * 1e6;
        cpu.on_cpu_us += on_cpu_ns(*pid) as f64 / 1e3;
    }
    cpu
}

/// Nanoseconds every thread of `pid` spent on a CPU (the first field of each schedstat).
fn on_cpu_ns(pid: u32) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the master's threads");
    tasks
        .filter_map(|task| {
            let path = task.ok()?.path().join("schedstat");
            let text = std::fs::read_to_string(path).ok()?;
            text.split_whitespace().next()?.parse::<u64>().ok()
        })
        .sum()
}

fn info(connection: &mut Inspector, section: &str) -> String {
    redis::cmd("INFO")
        .arg(section)
        .query(connection)
        .expect("INFO")
}

fn info_text<'a>(info: &'a str, field: &str) -> &'a str {
    let prefix = format!("{field}:");
    let line = info.lines().find_map(|line| line.strip_prefix(&prefix));
    line.unwrap_or_else(|| panic!("INFO has no {field}")).trim()
}

fn info_field(info: &str, field: &str) -> u64 {
    info_text(info, field).parse().expect("a number")
}

fn info_float(info: &str, field: &str) -> f64 {
    info_text(info, field).parse().expect("a number")
}

/// (command, calls, usec) of every `cmdstat_NAME:calls=N,usec=U,…` line.
fn parse_commandstats(info: &str) -> Vec<(String, u64, u64)> {
    info.lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let mut calls = None;
            let mut usec = None;
            for pair in stats.split(',') {
                match pair.split_once('=')? {
                    ("calls", n) => calls = n.parse().ok(),
                    ("usec", n) => usec = n.parse().ok(),
                    _ => {}
                }
            }
            Some((name.to_string(), calls?, usec?))
        })
        .collect()
}
