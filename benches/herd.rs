//! What a section costs in CPU, on the masters and on the client (issue 35, item 3): P
//! processes take turns on ONE key, S critical sections each, with `redlock run` over 5 local
//! masters and `flock(1)` on one file, R times in a row, the tools interleaved run by run (each
//! run starting with the next tool), so that each comparison holds figures taken in the same
//! minute on a machine shared with other builds.
//!
//! Each process is a thread standing in for a looping shell script (`support/sections.rs`),
//! running `redlock run --key K --ttl 10s --wait 300s -- bash -c SECTION` or
//! `flock FILE bash -c SECTION`; the bench panics if two sections overlapped. With
//! `--baseline PATH`, a second redlock build (the one before a change) runs too, as its own
//! tool, `baseline`, in the same rounds: before and after side by side, run by run; with
//! `--also NAME=PATH`, any other build the same way, as the tool NAME (`scripts/bench herd`
//! measures the static build, the one every artifact but the `-linux-gnu` archive ships, as
//! `redlock`, and the native glibc build beside it as `native`).
//!
//! Per run and tool one line, `herd shape=64x5 run=1 tool=redlock wall_ms=… …`, per section:
//! - `client_us`: user + system CPU of every process the run started (redlock, its guard, bash;
//!   flock, bash), from getrusage(RUSAGE_CHILDREN) of the bench, which reaps them all;
//! - for redlock, what the 5 masters did (`support/master_load.rs`): `master_us` (their
//!   threads' time on a CPU, from schedstat), `master_user_us` and `master_sys_us` (their
//!   getrusage), `connections` (accepted), `commands` (every command run, those a script ran
//!   included) and `command_us` (the time inside the commands that clients sent: EVAL,
//!   EVALSHA, SUBSCRIBE, HELLO, ...; what their scripts ran is within it). The rest of
//!   `master_us` is spent outside commands: accepting and closing connections, reading and
//!   writing sockets, the event loop.
//!
//! For redlock also a `herd-commands` line: per section, each command's calls and the time
//! inside it (`evalsha=12.0/410`: 12 calls, 410 µs).
//!
//! Then per shape and tool a `herd-summary` line with the medians over the runs, and per
//! shape a `herd-ratio` line: wall time over flock's (the median of the runs' ratios), and for
//! each other build, its own wall time over flock's (`NAME_over_flock=`) and its master and
//! client CPU over redlock's. Last, a markdown table.
//!
//! Usage: `cargo bench --bench herd [-- [--runs R] [--baseline PATH] [--also NAME=PATH]...
//! PxS...]` (default: 5 runs of 1x20 and of 64x5). Without `--bench` (`cargo test --benches`): one run of 2x2, as a smoke
//! test.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/machine.rs"]
mod machine;
#[path = "support/master_load.rs"]
mod master_load;
#[path = "support/sections.rs"]
mod sections;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::Cluster;
use machine::{children_cpu_us, cpu_busy_percent, loadavg};
use master_load::{Load, MasterLoad};
use sections::{CRITICAL_SECTION, run_workers};

/// The commands a client sends (the others in commandstats ran inside a script).
const TOP_LEVEL: [&str; 9] = [
    "eval",
    "evalsha",
    "subscribe",
    "ssubscribe",
    "hello",
    "auth",
    "select",
    "ping",
    "script|load",
];

/// One tool of the comparison.
enum Tool {
    Redlock { name: String, binary: PathBuf },
    Flock,
}

impl Tool {
    fn name(&self) -> &str {
        match self {
            Tool::Redlock { name, .. } => name,
            Tool::Flock => "flock",
        }
    }
}

/// One run of one tool, per section.
struct Measured {
    wall_ms: f64,
    client_us: f64,
    masters: Option<Masters>,
    /// For redlock: `name=calls/usec` per section of every command, busiest first.
    commands: Option<String>,
}

/// The masters' side of one redlock run, per section.
#[derive(Clone, Copy)]
struct Masters {
    on_cpu_us: f64,
    user_us: f64,
    sys_us: f64,
    connections: f64,
    commands: f64,
    command_us: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes --bench; `cargo test --benches` does not, and gets a smoke test.
    let benchmarking = args.iter().any(|arg| arg == "--bench");
    let mut runs = if benchmarking { 5 } else { 1 };
    let mut others: Vec<(String, PathBuf)> = Vec::new();
    let mut shapes: Vec<(usize, usize)> = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--runs" {
            runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N");
        } else if arg == "--baseline" {
            let path = args.next().expect("--baseline PATH");
            others.push(("baseline".to_string(), PathBuf::from(path)));
        } else if arg == "--also" {
            let (name, path) = args
                .next()
                .and_then(|pair| pair.split_once('='))
                .expect("--also NAME=PATH");
            others.push((name.to_string(), PathBuf::from(path)));
        } else if let Some((p, s)) = arg.split_once('x') {
            shapes.push((p.parse().expect("PxS"), s.parse().expect("PxS")));
        }
    }
    if shapes.is_empty() {
        shapes = if benchmarking {
            vec![(1, 20), (64, 5)]
        } else {
            vec![(2, 2)]
        };
    }
    let mut tools = vec![Tool::Redlock {
        name: "redlock".to_string(),
        binary: PathBuf::from(common::redlock_binary()),
    }];
    for (name, binary) in others {
        assert!(
            binary.is_file(),
            "{name} at {}: no such file",
            binary.display()
        );
        tools.push(Tool::Redlock { name, binary });
    }
    tools.push(Tool::Flock);

    // Before the bench starts anything of its own.
    let busy = cpu_busy_percent(Duration::from_secs(1));
    println!(
        "herd masters=5 runs={runs} cpu_busy_before_pct={busy:.0} loadavg_before={}",
        loadavg()
    );
    // Started on the main thread: the servers die with the thread that spawned them.
    let cluster = Cluster::start(5);
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut sequence = 0;
    let mut fresh_dir = || {
        sequence += 1;
        let dir = tmp.path().join(sequence.to_string());
        std::fs::create_dir(&dir).expect("a run's directory");
        dir
    };
    // One untimed section with each tool first: the first lock after a server started pays
    // for warming up.
    for tool in &tools {
        measure(&fresh_dir(), &cluster, tool, 1, 1);
    }
    let mut table = Vec::new();
    for &(p, s) in &shapes {
        eprintln!("herd: {p} processes x {s} sections, {runs} runs");
        let mut by_tool: Vec<Vec<Measured>> = tools.iter().map(|_| Vec::new()).collect();
        for run in 1..=runs {
            // Each run starts with the next tool: the tool that runs second in a round was
            // measured about 6% cheaper on the masters than the first, with the same build in
            // both places, so a fixed order would bias a before/after comparison.
            for i in 0..tools.len() {
                let k = (i + run - 1) % tools.len();
                let (tool, measured) = (&tools[k], &mut by_tool[k]);
                let m = measure(&fresh_dir(), &cluster, tool, p, s);
                println!("{}", run_line(p, s, run, tool.name(), &m));
                if let Some(commands) = &m.commands {
                    println!(
                        "herd-commands shape={p}x{s} run={run} tool={} {commands}",
                        tool.name()
                    );
                }
                measured.push(m);
            }
        }
        println!("herd-load shape={p}x{s} loadavg_after={}", loadavg());
        let summaries: Vec<Summary> = tools
            .iter()
            .zip(&by_tool)
            .map(|(tool, measured)| Summary::of(tool.name(), measured))
            .collect();
        for summary in &summaries {
            println!("{}", summary.line(p, s));
        }
        let flock = by_tool.last().expect("flock runs last");
        let over_flock = |measured: &[Measured]| {
            median(
                measured
                    .iter()
                    .zip(flock)
                    .map(|(m, f)| m.wall_ms / f.wall_ms),
            )
        };
        let mut ratio = format!(
            "herd-ratio shape={p}x{s} redlock_over_flock={:.2}",
            over_flock(&by_tool[0])
        );
        let master = |s: &Summary| s.masters.expect("redlock's masters").on_cpu_us;
        let redlock = &summaries[0];
        for k in 1..tools.len() - 1 {
            let (name, other) = (tools[k].name(), &summaries[k]);
            ratio += &format!(
                " {name}_over_flock={:.2} master_cpu_{name}_over_redlock={:.2} \
                 client_cpu_{name}_over_redlock={:.2}",
                over_flock(&by_tool[k]),
                master(other) / master(redlock),
                other.client_us / redlock.client_us,
            );
        }
        println!("{ratio}");
        table.push(((p, s), summaries));
    }
    println!();
    print_table(&table);
}

/// `p` processes x `s` sections with `tool`, in `dir`.
fn measure(dir: &Path, cluster: &Cluster, tool: &Tool, p: usize, s: usize) -> Measured {
    let lock_file = dir.join("flock");
    let command = || match tool {
        Tool::Redlock { binary, .. } => {
            let mut cmd = common::redlock_at(binary);
            cmd.env("REDLOCK_SERVERS", cluster.servers_env())
                .args([
                    "run",
                    "--key",
                    "bench-herd",
                    "--ttl",
                    "10s",
                    "--wait",
                    "300s",
                ])
                .args(["--", "bash", "-c", CRITICAL_SECTION]);
            cmd
        }
        Tool::Flock => {
            let mut cmd = Command::new("flock");
            cmd.arg(&lock_file).args(["bash", "-c", CRITICAL_SECTION]);
            cmd
        }
    };
    let load = matches!(tool, Tool::Redlock { .. }).then(|| MasterLoad::start(cluster));
    let client_before = children_cpu_us();
    let run = run_workers(dir, tool.name(), p, s, command);
    let client_us = children_cpu_us() - client_before;
    let sections = run.sections.len() as f64;
    let load = load.map(MasterLoad::finish);
    Measured {
        wall_ms: run.wall.as_secs_f64() * 1e3,
        client_us: client_us / sections,
        masters: load.as_ref().map(|load| Masters::of(load, sections)),
        commands: load.as_ref().map(|load| by_command(load, sections)),
    }
}

/// `name=calls/usec` per section of every command the masters ran, the most time first.
fn by_command(load: &Load, sections: f64) -> String {
    let mut commands: Vec<_> = load.commands.iter().collect();
    commands.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
    let fields: Vec<String> = commands
        .into_iter()
        .map(|(name, (calls, usec))| {
            let (calls, usec) = (*calls as f64 / sections, *usec as f64 / sections);
            format!("{name}={calls:.1}/{usec:.0}")
        })
        .collect();
    fields.join(" ")
}

impl Masters {
    fn of(load: &Load, sections: f64) -> Masters {
        Masters {
            on_cpu_us: load.cpu.on_cpu_us / sections,
            user_us: load.cpu.user_us / sections,
            sys_us: load.cpu.sys_us / sections,
            connections: load.connections as f64 / sections,
            commands: load.calls() as f64 / sections,
            command_us: load.command_us(&TOP_LEVEL) as f64 / sections,
        }
    }

    fn fields(&self) -> String {
        format!(
            "master_us={:.0} master_user_us={:.0} master_sys_us={:.0} connections={:.2} \
             commands={:.1} command_us={:.0}",
            self.on_cpu_us,
            self.user_us,
            self.sys_us,
            self.connections,
            self.commands,
            self.command_us
        )
    }
}

fn run_line(p: usize, s: usize, run: usize, tool: &str, m: &Measured) -> String {
    let mut line = format!(
        "herd shape={p}x{s} run={run} tool={tool} wall_ms={:.1} client_us={:.0}",
        m.wall_ms, m.client_us
    );
    if let Some(masters) = &m.masters {
        line += &format!(" {}", masters.fields());
    }
    line
}

/// The medians of one tool's runs at one shape.
struct Summary {
    tool: String,
    wall_ms: f64,
    client_us: f64,
    masters: Option<Masters>,
}

impl Summary {
    fn of(tool: &str, runs: &[Measured]) -> Summary {
        let of =
            |f: fn(&Masters) -> f64| median(runs.iter().filter_map(|m| m.masters.as_ref().map(f)));
        let masters = runs[0].masters.is_some().then(|| Masters {
            on_cpu_us: of(|m| m.on_cpu_us),
            user_us: of(|m| m.user_us),
            sys_us: of(|m| m.sys_us),
            connections: of(|m| m.connections),
            commands: of(|m| m.commands),
            command_us: of(|m| m.command_us),
        });
        Summary {
            tool: tool.to_string(),
            wall_ms: median(runs.iter().map(|m| m.wall_ms)),
            client_us: median(runs.iter().map(|m| m.client_us)),
            masters,
        }
    }

    fn line(&self, p: usize, s: usize) -> String {
        let mut line = format!(
            "herd-summary shape={p}x{s} tool={} wall_ms={:.1} client_us={:.0}",
            self.tool, self.wall_ms, self.client_us
        );
        if let Some(masters) = &self.masters {
            line += &format!(" {}", masters.fields());
        }
        line
    }
}

/// The median (the mean of the middle two for an even count).
fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    let n = values.len();
    assert!(n > 0, "no values");
    (values[(n - 1) / 2] + values[n / 2]) / 2.0
}

/// The markdown table for BENCHMARKS.md: per shape and tool, the medians, per section.
fn print_table(table: &[((usize, usize), Vec<Summary>)]) {
    println!(
        "| shape | tool | wall | x flock | client CPU | masters' CPU (user, sys) | in commands \
         | connections | commands |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for ((p, s), summaries) in table {
        let flock = summaries.last().expect("flock").wall_ms;
        for summary in summaries {
            let masters = summary
                .masters
                .as_ref()
                .map_or("| - | - | - | - |".to_string(), |m| {
                    format!(
                        "| {:.0} µs ({:.0}, {:.0}) | {:.0} µs | {:.2} | {:.1} |",
                        m.on_cpu_us, m.user_us, m.sys_us, m.command_us, m.connections, m.commands
                    )
                });
            println!(
                "| {p} x {s} | {} | {:.0} ms | {:.2} | {:.0} µs {masters}",
                summary.tool,
                summary.wall_ms,
                summary.wall_ms / flock,
                summary.client_us,
            );
        }
    }
    println!();
    println!(
        "(medians over the runs; CPU, connections and commands per section; the masters' CPU \
         summed over the 5 masters.)"
    );
}
