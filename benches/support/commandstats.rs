//! What the masters ran for a bench run: CONFIG RESETSTAT before, INFO commandstats after,
//! summed over the masters (see `queue.rs` for what the count includes: every command a Lua
//! script ran, too).

use std::collections::BTreeMap;

use super::common::Cluster;

/// The masters' INFO commandstats over one run.
pub struct CommandStats {
    /// One connection per master, opened before the reset, so that connecting is not counted.
    connections: Vec<super::common::Inspector>,
}

/// Calls per command name, summed over the masters.
pub struct Commands {
    pub calls: BTreeMap<String, u64>,
}

impl Commands {
    pub fn total(&self) -> u64 {
        self.calls.values().sum()
    }
}

impl CommandStats {
    pub fn reset(cluster: &Cluster) -> CommandStats {
        let mut connections: Vec<super::common::Inspector> =
            cluster.servers.iter().map(|s| s.connection()).collect();
        for connection in &mut connections {
            let () = redis::cmd("CONFIG")
                .arg("RESETSTAT")
                .query(connection)
                .expect("CONFIG RESETSTAT");
        }
        CommandStats { connections }
    }

    pub fn read(&mut self) -> Commands {
        let mut calls = BTreeMap::new();
        for connection in &mut self.connections {
            let info: String = redis::cmd("INFO")
                .arg("commandstats")
                .query(connection)
                .expect("INFO commandstats");
            for (name, count) in parse_commandstats(&info) {
                *calls.entry(name).or_insert(0) += count;
            }
        }
        // The bench's own CONFIG RESETSTAT, once per master.
        calls.remove("config|resetstat");
        Commands { calls }
    }
}

/// (command, calls) of every `cmdstat_NAME:calls=N,…` line.
fn parse_commandstats(info: &str) -> Vec<(String, u64)> {
    info.lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = stats.strip_prefix("calls=")?.split(',').next()?;
            Some((name.to_string(), calls.parse().expect("calls")))
        })
        .collect()
}
