//! In-process latency of one lock: `acquire` (one attempt) followed by `release`, through the
//! library, against real `redis-server` masters on loopback.
//!
//! Cases: 1, 3, 5 and 7 healthy masters, and 5 masters of which 2 are paused with SIGSTOP (a
//! quorum of 3 still answers, so the lock should not get much slower).
//!
//! The client is created once per case and warmed up, so connections are open and the scripts
//! loaded before anything is timed: this measures the algorithm's rounds, not connecting.
//!
//! Beside each healthy case, the same locks taken by a minimal raw-socket client
//! (`support/floor.rs`): the floor this machine sets for any client, printed as `floor-N…`.
//!
//! Besides criterion's report, each case prints one line for `scripts/bench`:
//! `latency case=N5 ops=… median_us=… p90_us=… p99_us=…`, computed from every timed
//! acquire+release (criterion's warm-up included: it runs the same warmed-up operation).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/floor.rs"]
mod floor;

use std::time::{Duration, Instant};

use common::Cluster;
use criterion::Criterion;
use redlock_cli::lock::{
    Cancel, History, Holder, Kind, Master, MasterState, Redlock, Released, Request, Timing,
};

/// The node timeout is far above loopback latency, so no healthy request ever times out and
/// the paused masters never delay a round that a majority already decided.
const TIMING: Timing = Timing {
    ttl: Duration::from_secs(30),
    node_timeout: Duration::from_secs(1),
    drift_factor: 0.01,
};

/// How many operations may pile up, unanswered, on a paused master before the bench lets it
/// catch up (untimed). Requests to a stopped server queue in its socket buffers; once those are
/// full (about 10,000 acquire+release pairs on this machine), a release can no longer be put on
/// the wire and waits out the whole node timeout. A `redlock` process sends a handful of
/// requests per lock, so a bounded backlog is the situation worth timing; see BENCHMARKS.md.
const PAUSED_BACKLOG: u64 = 1000;

/// Untimed work to run before the first timed operation and then every `PAUSED_BACKLOG` ones.
type Refresh<'a> = &'a mut dyn FnMut(&Redlock);

fn main() {
    let mut criterion = Criterion::default().without_plots().configure_from_args();

    // Started on the main thread: the servers die with the thread that spawned them.
    let healthy = Cluster::start(7);
    for n in [1, 3, 5, 7] {
        bench_case(&mut criterion, &format!("N{n}"), &healthy.urls()[..n], None);
        // Right after redlock's case, on the same masters, so that drift stays out of the
        // comparison.
        bench_floor(&mut criterion, n, &healthy.urls()[..n]);
    }

    let mut degraded = Cluster::start(5);
    let urls = degraded.urls();
    let mut paused = false;
    let mut pause_two = |client: &Redlock| {
        if paused {
            degraded.server(3).resume();
            degraded.server(4).resume();
            // Each connection is one FIFO, so once every master answered this, the paused
            // masters have worked through the requests queued for them.
            let states = client
                .read_key("bench-drain", Duration::from_secs(30))
                .inspections();
            assert!(
                states
                    .iter()
                    .all(|m| !matches!(m.state, MasterState::Unreachable(_))),
                "a resumed master did not catch up: {states:?}"
            );
        }
        degraded.server(3).pause();
        degraded.server(4).pause();
        paused = true;
    };
    bench_case(&mut criterion, "N5_2paused", &urls, Some(&mut pause_two));
    // Leave the servers running normally (the harness would also continue them before killing).
    degraded.server(3).resume();
    degraded.server(4).resume();

    criterion.final_summary();
}

/// Benchmarks acquire+release over `urls`. `refresh`, if any, runs untimed once the connections
/// are open and then every `PAUSED_BACKLOG` operations.
fn bench_case(
    criterion: &mut Criterion,
    case: &str,
    urls: &[String],
    mut refresh: Option<Refresh>,
) {
    let masters = urls
        .iter()
        .map(|url| Master::parse(url).expect("master URL"))
        .collect();
    let client = Redlock::new(masters, None).expect("client");
    // Like `redlock run`, write a holder record beside the lock; a fixed one, so that building
    // it is not part of the measurement.
    let holder = Holder::this_process(&["bench".to_string()]);
    let cancel = Cancel::default();
    let key = format!("bench-latency-{case}");
    let lock_once = || {
        let lock = client
            .acquire(
                &Request {
                    key: &key,
                    kind: Kind::Lock,
                    timing: TIMING,
                    holder: Some(&holder),
                    wait: Duration::ZERO,
                    supersede: false,
                    history: History::default(),
                },
                &cancel,
                &mut |_| {},
            )
            .expect("acquire: the key is free, so one attempt must win");
        // A release that does not find a majority would leave the key behind and make the
        // next acquire fail: stop here instead.
        assert_eq!(client.release(&lock), Released::Yes, "release");
    };
    lock_once(); // opens every connection and loads the scripts

    let mut samples = Vec::new();
    let mut since_refresh = PAUSED_BACKLOG;
    criterion.bench_function(&format!("acquire+release/{case}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if let Some(refresh) = refresh.as_mut()
                    && since_refresh == PAUSED_BACKLOG
                {
                    refresh(&client);
                    since_refresh = 0;
                }
                let start = Instant::now();
                lock_once();
                let elapsed = start.elapsed();
                since_refresh += 1;
                total += elapsed;
                samples.push(elapsed);
            }
            total
        })
    });
    print_summary(case, samples);
}

/// The same acquire+release by the minimal client of `floor`: what this machine allows.
fn bench_floor(criterion: &mut Criterion, n: usize, urls: &[String]) {
    let holder = Holder::this_process(&["bench".to_string()])
        .to_json()
        .to_string();
    let mut floor = floor::Floor::connect(urls, &format!("bench-floor-N{n}"), holder.as_bytes());
    floor.lock_once(); // the scripts are loaded; this checks that a lock goes through

    let mut samples = Vec::new();
    criterion.bench_function(&format!("floor acquire+release/N{n}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                floor.lock_once();
                let elapsed = start.elapsed();
                total += elapsed;
                samples.push(elapsed);
            }
            total
        })
    });
    print_summary(&format!("floor-N{n}"), samples);
}

fn print_summary(case: &str, mut samples: Vec<Duration>) {
    if samples.is_empty() {
        return; // filtered out on the command line
    }
    samples.sort_unstable();
    // Nearest-rank percentile.
    let us = |q: f64| {
        let rank = ((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len());
        samples[rank - 1].as_secs_f64() * 1e6
    };
    println!(
        "latency case={case} ops={} median_us={:.1} p90_us={:.1} p99_us={:.1}",
        samples.len(),
        us(0.5),
        us(0.9),
        us(0.99)
    );
}
