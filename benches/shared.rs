//! The shared lock (`--shared`, issue 25) beside `flock -s` and `flock -x` on one file, over 5
//! local masters. Three runs:
//!
//! 1. `readers`: 8 readers x 10 sections, `redlock run --shared` and `flock -s FILE`;
//! 2. `mixed`: a herd of 8, 2 writers and 6 readers, x 10 sections each, `redlock run` (writers)
//!    and `run --shared` (readers), `flock -x` and `flock -s`;
//! 3. `handoff`: a writer and R readers (R = 4 and 64) x 5 sections each, all looping, so that
//!    every writer's release hands the key to a group of readers: the masters' commands per
//!    section must not grow with R (the hand-off wakes the whole group in one script, and a
//!    reader's own calls read no group).
//!
//! Each section is a bash command that logs its start and end (`$EPOCHREALTIME`, no extra
//! process) around 10 ms of "work" (`read -t`, a builtin wait), so that readers sharing the key
//! shows in the time. The bench checks from the log that no writer's section overlapped any
//! other section, and panics otherwise; it says how many readers were inside at most.
//!
//! Prints one line per tool and run: `shared run=readers tool=redlock procs=8 sections=80
//! wall_ms=… most_readers=…`, and for redlock `commands_per_section=…` (INFO commandstats, as
//! `queue.rs` counts them); then one `shared-ratio` line per run (redlock / flock). Usage:
//! `cargo bench --bench shared`. A `shared-commands` line per run gives the busiest commands
//! per section. Without `--bench` (`cargo test --benches`) it only checks,
//! briefly, that writers are alone.

#[path = "support/commandstats.rs"]
mod commandstats;
#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/machine.rs"]
mod machine;

use std::path::Path;
use std::process::Command;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use commandstats::CommandStats;
use common::Cluster;
use machine::{cpu_busy_percent, loadavg};

/// The critical section: `$SECTION` tells sections apart, `$MODE` is R or W.
const SECTION: &str = r#"echo "start $MODE $SECTION ${EPOCHREALTIME/./}000" >> "$LOG"
read -r -t 0.01 _ <> <(:) || true
echo "end $MODE $SECTION ${EPOCHREALTIME/./}000" >> "$LOG""#;

/// One run: how many writers and readers, and how many sections each.
struct Herd {
    name: &'static str,
    writers: usize,
    readers: usize,
    sections: usize,
}

fn main() {
    let benchmarking = std::env::args().any(|arg| arg == "--bench");
    let herds = if benchmarking {
        vec![
            Herd::new("readers", 0, 8, 10),
            Herd::new("mixed", 2, 6, 10),
            Herd::new("handoff", 1, 4, 5),
            Herd::new("handoff", 1, 64, 5),
        ]
    } else {
        vec![Herd::new("mixed", 1, 2, 2)]
    };
    let busy = cpu_busy_percent(Duration::from_secs(1));
    println!(
        "shared masters=5 cpu_busy_before_pct={busy:.0} loadavg_before={}",
        loadavg()
    );
    // Started on the main thread: the servers die with the thread that spawned them.
    let cluster = Cluster::start(5);
    let tmp = tempfile::tempdir().expect("temp dir");
    for (n, herd) in herds.iter().enumerate() {
        let key = format!("bench-shared-{n}");
        let file = tmp.path().join(&key);
        let mut stats = CommandStats::reset(&cluster);
        let redlock = herd.run(tmp.path(), "redlock", |writer| {
            let mut cmd = cluster.redlock();
            cmd.args(["run", "--key", &key, "--ttl", "10s", "--wait", "300s"]);
            if !writer {
                cmd.arg("--shared");
            }
            cmd.args(["--", "bash", "-c", SECTION]);
            cmd
        });
        let commands = stats.read();
        let flock = herd.run(tmp.path(), "flock", |writer| {
            let mut cmd = Command::new("flock");
            cmd.arg(if writer { "-x" } else { "-s" })
                .arg(&file)
                .args(["bash", "-c", SECTION]);
            cmd
        });
        let sections = herd.total_sections();
        let per_section = commands.total() as f64 / sections as f64;
        println!(
            "{} commands_per_section={per_section:.1}",
            redlock.line(herd)
        );
        // The busiest commands, per section: what grows, if anything does.
        let mut busiest: Vec<(&String, &u64)> = commands.calls.iter().collect();
        busiest.sort_by(|a, b| b.1.cmp(a.1));
        let busiest: Vec<String> = busiest
            .iter()
            .take(8)
            .map(|(name, calls)| format!("{name}={:.1}", **calls as f64 / sections as f64))
            .collect();
        println!(
            "shared-commands run={} readers={} {}",
            herd.name,
            herd.readers,
            busiest.join(" ")
        );
        println!("{}", flock.line(herd));
        println!(
            "shared-ratio run={} writers={} readers={} redlock_over_flock={:.2}",
            herd.name,
            herd.writers,
            herd.readers,
            redlock.wall.as_secs_f64() / flock.wall.as_secs_f64()
        );
    }
}

/// What one tool did in one run.
struct Done {
    tool: &'static str,
    wall: Duration,
    most_readers: usize,
}

impl Done {
    fn line(&self, herd: &Herd) -> String {
        format!(
            "shared run={} tool={} writers={} readers={} sections={} wall_ms={:.1} \
             most_readers={}",
            herd.name,
            self.tool,
            herd.writers,
            herd.readers,
            herd.total_sections(),
            self.wall.as_secs_f64() * 1e3,
            self.most_readers
        )
    }
}

impl Herd {
    fn new(name: &'static str, writers: usize, readers: usize, sections: usize) -> Herd {
        Herd {
            name,
            writers,
            readers,
            sections,
        }
    }

    fn total_sections(&self) -> usize {
        (self.writers + self.readers) * self.sections
    }

    /// Lets every process go at once, each running its sections one after the other (the
    /// first `writers` as writers); the wall time, checked from the log.
    fn run(
        &self,
        dir: &Path,
        tool: &'static str,
        command: impl Fn(bool) -> Command + Sync,
    ) -> Done {
        let log = dir.join(format!("{tool}-{}-{}.log", self.name, self.readers));
        let procs = self.writers + self.readers;
        let barrier = Barrier::new(procs + 1);
        let start = std::thread::scope(|scope| {
            for proc in 0..procs {
                let (barrier, command, log) = (&barrier, &command, &log);
                let writer = proc < self.writers;
                scope.spawn(move || {
                    barrier.wait();
                    for i in 0..self.sections {
                        let status = command(writer)
                            .env("LOG", log)
                            .env("MODE", if writer { "W" } else { "R" })
                            .env("SECTION", (proc * self.sections + i).to_string())
                            .status()
                            .expect("spawn a contender");
                        assert!(status.success(), "{tool}: a contender failed: {status}");
                    }
                });
            }
            barrier.wait();
            Instant::now()
        });
        let wall = start.elapsed();
        let text = std::fs::read_to_string(&log).expect("read the section log");
        Done {
            tool,
            wall,
            most_readers: writers_alone(&text, self.total_sections()),
        }
    }
}

/// Checks that no writer's section overlapped another section, from the log's times, and
/// returns the most readers inside at once.
fn writers_alone(log: &str, expected: usize) -> usize {
    // (time, +1 start / -1 end, writer)
    let mut events: Vec<(u64, i32, bool)> = log
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [kind, mode, _, ns] = fields[..] else {
                panic!("malformed log line {line:?}");
            };
            let ns: u64 = ns.parse().expect("timestamp");
            // At equal times an end comes first: touching sections do not overlap.
            (ns, if kind == "start" { 1 } else { -1 }, mode == "W")
        })
        .collect();
    assert_eq!(
        events.len(),
        2 * expected,
        "every section logs its start and end"
    );
    events.sort_unstable_by_key(|&(ns, step, _)| (ns, step));
    let (mut readers, mut writers, mut most) = (0i32, 0i32, 0i32);
    for (_, step, writer) in events {
        if writer {
            writers += step;
        } else {
            readers += step;
        }
        assert!(
            writers == 0 || (writers == 1 && readers == 0),
            "READERS-WRITER VIOLATED: {writers} writers and {readers} readers inside at once"
        );
        most = most.max(readers);
    }
    most as usize
}
