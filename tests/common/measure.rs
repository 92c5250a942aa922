//! A process's peak memory, for the tests that feed redlock hostile replies: a client that
//! buffers an endless reply shows as a growing resident set long before it runs out of time.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::{Captured, describe, eventually};

/// A finished process: what it wrote, how it ended, and the most memory it held.
pub struct Measured {
    pub output: Output,
    /// Peak resident set size in KiB: the largest VmHWM seen (see [`run_measured`]).
    pub peak_rss_kib: u64,
    pub elapsed: Duration,
    /// Why the watchdog killed it, if it did.
    pub killed: Option<String>,
}

impl Measured {
    /// For assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "peak RSS {} KiB after {:?}{}\n{}",
            self.peak_rss_kib,
            self.elapsed,
            self.killed
                .as_ref()
                .map_or(String::new(), |why| format!(", killed: {why}")),
            describe(&self.output)
        )
    }
}

/// Runs `cmd` to the end and measures its peak memory, reading VmHWM (the kernel's
/// high-water mark of the resident set) from /proc every millisecond: a spike between two
/// reads still shows in the next one; only the last millisecond before exit can escape.
/// (wait4's `ru_maxrss` cannot serve: a child spawned from this large, many-threaded test
/// process inherits its high-water mark when it execs.) A watchdog SIGKILLs the process once
/// it passes `ceiling_kib`, or once `timeout` passed, so that a runaway (a client buffering
/// an endless reply) can neither take the machine down nor hang the test; the test then
/// fails on the figures.
pub fn run_measured(cmd: &mut Command, ceiling_kib: u64, timeout: Duration) -> Measured {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdout = Captured::stdout_of(&mut child);
    let stderr = Captured::stderr_of(&mut child);
    let mut killed = None;
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        // Read before the exit check of the next turn: a process that is gone reads as 0.
        peak = peak.max(high_water_kib(child.id()));
        if killed.is_none() {
            if peak > ceiling_kib {
                killed = Some(format!("over the ceiling of {ceiling_kib} KiB"));
            } else if start.elapsed() > timeout {
                killed = Some(format!("still running after {timeout:?}"));
            }
            if killed.is_some() {
                let _ = child.kill();
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let elapsed = start.elapsed();
    // The pipes close once every process holding them is gone (a `run`'s command included).
    eventually(Duration::from_secs(5), || {
        stdout.finished() && stderr.finished()
    });
    Measured {
        output: Output {
            status,
            stdout: stdout.bytes(),
            stderr: stderr.bytes(),
        },
        peak_rss_kib: peak,
        elapsed,
        killed,
    }
}

/// VmHWM of `pid` in KiB: the most it ever had resident (0 once it is gone).
fn high_water_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}
