//! Many waiters on one key (issue 14, the fair queue): W waiters take turns on ONE lock, 5
//! critical sections each, for W = 4, 8, 16, 32 and 64 in one run, with `redlock run` over 5
//! local masters, `flock(1)` on one file, and `etcdctl lock` against one local etcd member
//! (whose lock is FIFO and wakes only the next waiter).
//!
//! Each waiter is a thread standing in for a looping shell script (`support/sections.rs`): it
//! runs, one after the other,
//! `redlock run --key K --ttl 10s --wait 300s -- bash -c SECTION`,
//! `flock FILE bash -c SECTION` or `etcdctl --endpoints=URL lock NAME -- bash -c SECTION`. The
//! section logs its start and end; the bench panics if two sections overlapped. Before the
//! first W, each tool runs one untimed section (the first lock after a server starts pays for
//! warming up).
//!
//! First it prints how busy the CPUs were in the second before it started anything
//! (`cpu_busy_before_pct`, from /proc/stat): on a shared machine, other builds move every
//! figure. Then per tool and W one line, `queue tool=redlock waiters=4 sections=20 wall_ms=… …`:
//! - `wall_ms`: from letting every waiter go until the last one finished;
//! - `wait_*`: each section's wait, from its waiter spawning the locked command to the
//!   section's logged start, both on CLOCK_REALTIME (the waiter's clock just before the spawn,
//!   bash's `$EPOCHREALTIME` in the section): the tool starting, waiting for the lock, taking
//!   it, starting bash. p50, p99 (nearest rank), max, mean, and max / mean;
//! - `handoff_*`: the gap from one section's end to the next one's start, as in
//!   `contention.rs`;
//! - `fairness`: the slowest waiter's total wait over the fastest's (1 is perfectly fair);
//! - for redlock, `commands_per_section`: what the 5 masters ran for the run, per section.
//!
//! Then per W a `queue-ratio` line (total time redlock / flock and redlock / etcdctl, and
//! redlock's commands per section at W over those at the smallest W), a `queue-commands` line
//! per W (redlock's commands per section by command name), and last, markdown tables for
//! BENCHMARKS.md.
//!
//! What the command count counts: before each redlock run the bench sends CONFIG RESETSTAT to
//! every master; after it, it reads INFO commandstats and adds up the `calls=` of every line,
//! over the 5 masters, less the CONFIG RESETSTAT itself (the server counts a command once it
//! has run, so the reset leaves itself at 1; INFO is not yet counted in its own answer). That
//! is every command the masters executed for the run: connecting, EVAL/EVALSHA, SUBSCRIBE and
//! PUBLISH for the notices, and also every command that a Lua script ran: Redis 7 counts a
//! `redis.call('set', …)` inside an EVALSHA under `set` as well as the EVALSHA under `evalsha`
//! (checked on redis-server 7.0.15: after one EVAL whose script runs a SET and a GET, INFO
//! commandstats shows calls=1 for eval, set and get). A command that ran and answered an error
//! counts (NOSCRIPT: `calls` and `failed_calls`); one rejected before it ran (wrong number of
//! arguments) does not (only `rejected_calls`).
//!
//! etcd: the bench starts one member itself (`support/etcd.rs`) on loopback ports below 32768,
//! with its data in a temporary directory, and stops it at the end. If etcd cannot be started,
//! the bench says why and prints etcdctl's rows as skipped; it never makes them up.
//!
//! Usage: `cargo bench --bench queue [-- [--sections N] WAITERS...]` (default: 4 8 16 32 64,
//! 5 sections per waiter). Without `--bench` (`cargo test --benches`) it runs a smoke version
//! in a few seconds: 2 waiters, 2 sections each, redlock and flock only, with the overlap
//! check.

#[path = "support/commandstats.rs"]
mod commandstats;
#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/etcd.rs"]
mod etcd;
#[path = "support/machine.rs"]
mod machine;
#[path = "support/sections.rs"]
mod sections;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use commandstats::{CommandStats, Commands};
use common::Cluster;
use etcd::Etcd;
use machine::{cpu_busy_percent, loadavg};
use sections::{CRITICAL_SECTION, Run, handoff_gaps, percentile, run_workers};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes --bench; `cargo test --benches` does not, and gets a smoke test.
    let benchmarking = args.iter().any(|arg| arg == "--bench");
    let mut per_waiter = if benchmarking { 5 } else { 2 };
    let mut waiters: Vec<usize> = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--sections" {
            let n = args.next().and_then(|n| n.parse().ok());
            per_waiter = n.expect("--sections takes a number of sections per waiter");
        } else if let Ok(w) = arg.parse() {
            waiters.push(w);
        }
    }
    if waiters.is_empty() {
        waiters = if benchmarking {
            vec![4, 8, 16, 32, 64]
        } else {
            vec![2]
        };
    }
    assert!(
        waiters.iter().all(|&w| w >= 2) && per_waiter >= 1,
        "waiters must be at least 2, sections at least 1"
    );

    // Before the bench starts anything of its own.
    let busy = cpu_busy_percent(Duration::from_secs(1));
    let load = loadavg();
    // Started on the main thread: the servers die with the thread that spawned them.
    let cluster = Cluster::start(5);
    let etcd = if benchmarking {
        Etcd::start()
    } else {
        Err("not in the smoke run (cargo test --benches)".to_string())
    };
    match &etcd {
        Ok(etcd) => println!("queue etcd={}", etcd.endpoint),
        Err(why) => {
            eprintln!("queue: etcdctl lock skipped: {why}");
            println!("queue etcd=skipped reason: {why}");
        }
    }
    let list: Vec<String> = waiters.iter().map(usize::to_string).collect();
    println!(
        "queue masters=5 sections_per_waiter={per_waiter} waiters={} cpu_busy_before_pct={:.0} \
         loadavg_before={}",
        list.join(","),
        busy,
        load
    );

    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let etcd = etcd.as_ref().ok();
    // One untimed section with each tool first: the first lock after a server started pays
    // for warming up (etcd's first log writes, the binaries' pages), which would otherwise
    // land in the smallest W's figures. (W >= 2 below, so the logs do not collide.)
    run_tools(dir, &cluster, etcd, 1, 1);
    let mut rows = Vec::new();
    for &w in &waiters {
        eprintln!("queue: {w} waiters x {per_waiter} sections");
        let runs = run_tools(dir, &cluster, etcd, w, per_waiter);
        let redlock = Figures::of(&runs.redlock, Some(runs.commands));
        let flock = Figures::of(&runs.flock, None);
        let etcdctl = runs.etcdctl.map(|run| Figures::of(&run, None));
        for figures in [Some(&redlock), Some(&flock), etcdctl.as_ref()]
            .into_iter()
            .flatten()
        {
            println!("{}", figures.line());
        }
        if etcdctl.is_none() {
            println!("queue tool=etcdctl waiters={w} skipped=yes");
        }
        rows.push(Row {
            waiters: w,
            redlock,
            flock,
            etcdctl,
        });
    }

    println!();
    for row in &rows {
        println!("{}", row.ratio_line(&rows[0]));
        println!("{}", row.redlock.commands_line());
    }
    println!();
    print_tables(&rows, per_waiter);
}

/// The three tools' runs at one W, and the masters' command counts for redlock's.
struct Runs {
    redlock: Run<'static>,
    commands: Commands,
    flock: Run<'static>,
    etcdctl: Option<Run<'static>>,
}

/// `w` waiters x `per_waiter` sections with each tool in turn, on a key (file, lock name) of
/// this W's own.
fn run_tools(
    dir: &Path,
    cluster: &Cluster,
    etcd: Option<&Etcd>,
    w: usize,
    per_waiter: usize,
) -> Runs {
    let key = format!("bench-queue-{w}");
    let redlock = || {
        let mut cmd = cluster.redlock();
        cmd.args(["run", "--key", &key, "--ttl", "10s", "--wait", "300s", "--"])
            .args(["bash", "-c", CRITICAL_SECTION]);
        cmd
    };
    let mut stats = CommandStats::reset(cluster);
    let redlock = run_workers(dir, "redlock", w, per_waiter, redlock);
    let commands = stats.read();

    let lock_file = dir.join(format!("flock-{w}"));
    let flock = || {
        let mut cmd = Command::new("flock");
        cmd.arg(&lock_file).args(["bash", "-c", CRITICAL_SECTION]);
        cmd
    };
    let flock = run_workers(dir, "flock", w, per_waiter, flock);

    let etcdctl = etcd.map(|etcd| {
        let etcdctl = || {
            let mut cmd = Command::new("etcdctl");
            cmd.arg(format!("--endpoints={}", etcd.endpoint)).args([
                "lock",
                &key,
                "--",
                "bash",
                "-c",
                CRITICAL_SECTION,
            ]);
            cmd
        };
        run_workers(dir, "etcdctl", w, per_waiter, etcdctl)
    });
    Runs {
        redlock,
        commands,
        flock,
        etcdctl,
    }
}

/// What one tool did at one W, summed up.
struct Figures {
    tool: String,
    waiters: usize,
    sections: usize,
    wall: Duration,
    /// Every section's wait, in nanoseconds, sorted.
    waits: Vec<u64>,
    /// The hand-off gaps, in nanoseconds, sorted.
    gaps: Vec<u64>,
    /// The slowest waiter's total wait over the fastest's.
    fairness: f64,
    /// For redlock: the masters' command counts for the whole run.
    commands: Option<Commands>,
}

impl Figures {
    fn of(run: &Run, commands: Option<Commands>) -> Figures {
        // The clock is the same on both sides; saturating only guards against a clock step.
        let waits_by_id: Vec<u64> = run
            .sections
            .iter()
            .zip(&run.spawned)
            .map(|(&(start, _), &spawned)| start.saturating_sub(spawned))
            .collect();
        let totals: Vec<u64> = waits_by_id
            .chunks(run.per_worker)
            .map(|worker| worker.iter().sum())
            .collect();
        let slowest = *totals.iter().max().expect("at least one waiter");
        let fastest = *totals.iter().min().expect("at least one waiter");
        let mut waits = waits_by_id;
        waits.sort_unstable();
        Figures {
            tool: run.tool.to_string(),
            waiters: run.workers,
            sections: run.sections.len(),
            wall: run.wall,
            waits,
            gaps: handoff_gaps(&run.sections),
            fairness: slowest as f64 / fastest.max(1) as f64,
            commands,
        }
    }

    fn wall_ms(&self) -> f64 {
        self.wall.as_secs_f64() * 1e3
    }

    fn wait_ms(&self, q: f64) -> f64 {
        percentile(&self.waits, q) as f64 / 1e6
    }

    fn mean_wait_ms(&self) -> f64 {
        self.waits.iter().sum::<u64>() as f64 / self.waits.len() as f64 / 1e6
    }

    fn gap_us(&self, q: f64) -> f64 {
        percentile(&self.gaps, q) as f64 / 1e3
    }

    fn commands_per_section(&self) -> Option<f64> {
        let commands = self.commands.as_ref()?;
        Some(commands.total() as f64 / self.sections as f64)
    }

    fn line(&self) -> String {
        let mut line = format!(
            "queue tool={} waiters={} sections={} wall_ms={:.1} per_s={:.1} wait_p50_ms={:.2} \
             wait_p99_ms={:.2} wait_max_ms={:.2} wait_mean_ms={:.2} wait_max_over_mean={:.2} \
             handoff_p50_us={:.0} handoff_p99_us={:.0} fairness={:.2}",
            self.tool,
            self.waiters,
            self.sections,
            self.wall_ms(),
            self.sections as f64 / self.wall.as_secs_f64(),
            self.wait_ms(0.5),
            self.wait_ms(0.99),
            self.wait_ms(1.0),
            self.mean_wait_ms(),
            self.wait_ms(1.0) / self.mean_wait_ms(),
            self.gap_us(0.5),
            self.gap_us(0.99),
            self.fairness,
        );
        if let Some(per_section) = self.commands_per_section() {
            line += &format!(" commands_per_section={per_section:.1}");
        }
        line
    }

    /// redlock's commands per section by command name, most first.
    fn commands_line(&self) -> String {
        let mut line = format!("queue-commands tool={} waiters={}", self.tool, self.waiters);
        if let Some(commands) = &self.commands {
            let mut by_name: Vec<(&String, &u64)> = commands.calls.iter().collect();
            by_name.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (name, calls) in by_name {
                line += &format!(" {name}={:.1}", *calls as f64 / self.sections as f64);
            }
        }
        line
    }
}

/// One W: the three tools side by side.
struct Row {
    waiters: usize,
    redlock: Figures,
    flock: Figures,
    etcdctl: Option<Figures>,
}

impl Row {
    fn over_flock(&self) -> f64 {
        self.redlock.wall_ms() / self.flock.wall_ms()
    }

    fn over_etcdctl(&self) -> Option<f64> {
        Some(self.redlock.wall_ms() / self.etcdctl.as_ref()?.wall_ms())
    }

    /// Commands per section here over those at the first (smallest) W.
    fn commands_growth(&self, first: &Row) -> f64 {
        let per_section = |row: &Row| row.redlock.commands_per_section().expect("redlock counts");
        per_section(self) / per_section(first)
    }

    fn ratio_line(&self, first: &Row) -> String {
        format!(
            "queue-ratio waiters={} redlock_over_flock={:.2} redlock_over_etcdctl={} \
             commands_vs_{}_waiters={:.2}",
            self.waiters,
            self.over_flock(),
            self.over_etcdctl()
                .map_or("skipped".to_string(), |r| format!("{r:.2}")),
            first.waiters,
            self.commands_growth(first),
        )
    }
}

/// The markdown tables for BENCHMARKS.md: totals side by side, then each tool's waits.
fn print_tables(rows: &[Row], per_waiter: usize) {
    let first = &rows[0];
    println!(
        "| waiters | redlock | server commands per section | flock | etcdctl lock \
         | redlock / flock | redlock / etcdctl | commands vs {} waiters |",
        first.waiters
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        let etcdctl = row.etcdctl.as_ref();
        println!(
            "| {} | {:.0} ms | {:.0} | {:.0} ms | {} | {:.2}x | {} | {:.2}x |",
            row.waiters,
            row.redlock.wall_ms(),
            row.redlock.commands_per_section().expect("redlock counts"),
            row.flock.wall_ms(),
            etcdctl.map_or("skipped".to_string(), |e| format!("{:.0} ms", e.wall_ms())),
            row.over_flock(),
            row.over_etcdctl()
                .map_or("skipped".to_string(), |r| format!("{r:.2}x")),
            row.commands_growth(first),
        );
    }
    println!();
    println!(
        "| tool | waiters | wait p50 | p99 | max | mean | max / mean | hand-off p50 | p99 | fairness |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        for figures in [Some(&row.redlock), Some(&row.flock), row.etcdctl.as_ref()]
            .into_iter()
            .flatten()
        {
            println!(
                "| {} | {} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {:.2}x | {:.2} ms | {:.2} ms | {:.2}x |",
                figures.tool,
                figures.waiters,
                figures.wait_ms(0.5),
                figures.wait_ms(0.99),
                figures.wait_ms(1.0),
                figures.mean_wait_ms(),
                figures.wait_ms(1.0) / figures.mean_wait_ms(),
                figures.gap_us(0.5) / 1e3,
                figures.gap_us(0.99) / 1e3,
                figures.fairness,
            );
        }
    }
    println!();
    println!(
        "({per_waiter} sections per waiter; wait: spawning the locked command to the section's \
         start; fairness: slowest waiter's total wait / fastest's.)"
    );
}
