//! How loaded the shared machine is: a bench says it beside its figures, since other builds on
//! the same CPUs move every one of them.

use std::time::Duration;

/// How busy the shared machine's CPUs were over `span` (all CPUs, from /proc/stat), in
/// percent: what else was running just before the bench. The load average lags by a minute.
pub fn cpu_busy_percent(span: Duration) -> f64 {
    // (busy, total) jiffies: every column but idle and iowait is busy.
    let sample = || -> (u64, u64) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let jiffies: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .skip(1)
            // user nice system idle iowait irq softirq steal; guest time is within user.
            .take(8)
            .filter_map(|n| n.parse().ok())
            .collect();
        let total: u64 = jiffies.iter().sum();
        let idle = jiffies.get(3).copied().unwrap_or(0) + jiffies.get(4).copied().unwrap_or(0);
        (total - idle, total)
    };
    let (busy_a, total_a) = sample();
    std::thread::sleep(span);
    let (busy_b, total_b) = sample();
    100.0 * (busy_b - busy_a) as f64 / (total_b - total_a).max(1) as f64
}

/// The 1-minute load average (it includes the previous minute's runs, the bench's own too).
pub fn loadavg() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().next().unwrap_or("?").to_string()
}

/// CPU (user + system) of every child this process has reaped so far, and of the children
/// they reaped, in microseconds (getrusage RUSAGE_CHILDREN): a run's client CPU is the
/// difference across it, when the run reaps every process it starts.
#[allow(dead_code)] // only `herd.rs` reads it
pub fn children_cpu_us() -> f64 {
    // SAFETY: getrusage writes one struct rusage into the zeroed one we own.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let rc = libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        assert_eq!(rc, 0, "getrusage(RUSAGE_CHILDREN)");
        usage
    };
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    us(usage.ru_utime) + us(usage.ru_stime)
}
