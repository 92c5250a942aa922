//! `--metrics-file` against real masters: what `run`, `acquire` and `release` add to the file,
//! read back with a real Prometheus text-format parser (openmetrics-parser, as node_exporter's
//! collector would read it), including after many concurrent writers, whose counts must add up
//! exactly.

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common::{Cluster, Running, describe};
use openmetrics_parser::prometheus::parse_prometheus;
use openmetrics_parser::{
    HistogramValue, MetricsExposition, PrometheusType, PrometheusValue, Sample,
};

/// The metrics file as a Prometheus reader sees it.
struct Scrape {
    exposition: MetricsExposition<PrometheusType, PrometheusValue>,
    text: String,
}

impl Scrape {
    fn read(path: &Path) -> Scrape {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let exposition = parse_prometheus(&text)
            .unwrap_or_else(|e| panic!("not Prometheus text format ({e:?}):\n{text}"));
        Scrape { exposition, text }
    }

    fn sample(&self, family: &str, labels: &[(&str, &str)]) -> Option<&Sample<PrometheusValue>> {
        let family = self
            .exposition
            .families
            .get(family)
            .unwrap_or_else(|| panic!("no family {family}:\n{}", self.text));
        let values: Vec<String> = family
            .get_label_names()
            .iter()
            .map(|name| {
                labels
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.to_string())
                    .unwrap_or_else(|| panic!("label {name} not given"))
            })
            .collect();
        family.get_sample_by_label_values(&values)
    }

    /// A writer's count (the lock's, or a semaphore's: all but `--shared`).
    fn outcome(&self, key: &str, outcome: &str) -> u64 {
        self.outcome_of(key, "writer", outcome)
    }

    fn outcome_of(&self, key: &str, mode: &str, outcome: &str) -> u64 {
        let sample = self
            .sample(
                "redlock_outcomes_total",
                &[("key", key), ("mode", mode), ("outcome", outcome)],
            )
            .unwrap_or_else(|| panic!("no {outcome} count for {key:?}:\n{}", self.text));
        match &sample.value {
            PrometheusValue::Counter(counter) => {
                counter.value.as_i64().expect("a whole count") as u64
            }
            other => panic!("not a counter: {other:?}"),
        }
    }

    fn histogram(&self, family: &str, key: &str) -> &HistogramValue {
        let sample = self
            .sample(family, &[("key", key)])
            .unwrap_or_else(|| panic!("no {family} for {key:?}:\n{}", self.text));
        match &sample.value {
            PrometheusValue::Histogram(histogram) => histogram,
            other => panic!("not a histogram: {other:?}"),
        }
    }

    fn count(&self, family: &str, key: &str) -> u64 {
        let histogram = self.histogram(family, key);
        let count = histogram.count.expect("a _count");
        // Cumulative buckets, the last (+Inf) equal to the count.
        let counts: Vec<f64> = histogram.buckets.iter().map(|b| b.count.as_f64()).collect();
        assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
        let inf = histogram
            .buckets
            .iter()
            .find(|b| b.upper_bound.is_infinite())
            .expect("a +Inf bucket");
        assert_eq!(inf.count.as_f64(), count as f64, "{}", self.text);
        count
    }

    fn sum(&self, family: &str, key: &str) -> f64 {
        self.histogram(family, key)
            .sum
            .as_ref()
            .expect("a _sum")
            .as_f64()
    }

    fn last_success(&self, key: &str) -> Option<f64> {
        let sample = self.sample("redlock_last_success_timestamp_seconds", &[("key", key)])?;
        match &sample.value {
            PrometheusValue::Gauge(value) => Some(value.as_f64()),
            other => panic!("not a gauge: {other:?}"),
        }
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn metrics_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("redlock.prom")
}

fn run(cluster: &Cluster, file: &Path, key: &str, extra: &[&str], command: &[&str]) -> Output {
    cluster
        .redlock()
        .args(["run", "--key", key, "--ttl", "10s", "--metrics-file"])
        .arg(file)
        .args(extra)
        .arg("--")
        .args(command)
        .output()
        .expect("run redlock")
}

#[test]
fn a_successful_run_counts_its_wait_its_hold_and_its_success() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let file = metrics_path(&dir);
    let before = unix_now();
    let output = run(&cluster, &file, "job", &[], &["sleep", "0.2"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let scrape = Scrape::read(&file);
    assert_eq!(scrape.outcome("job", "acquired"), 1);
    for outcome in [
        "conflict",
        "unavailable",
        "lost",
        "max_duration",
        "outdated",
        "superseded",
        "lost_place",
    ] {
        assert_eq!(scrape.outcome("job", outcome), 0, "{outcome}");
    }
    assert_eq!(scrape.count("redlock_wait_seconds", "job"), 1);
    assert_eq!(scrape.count("redlock_held_seconds", "job"), 1);
    assert!(scrape.sum("redlock_held_seconds", "job") >= 0.2);
    let success = scrape.last_success("job").expect("a success time");
    assert!(
        success >= before.floor() && success <= unix_now() + 1.0,
        "{success}"
    );
    // Only the file and its lock are left in the directory.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["redlock.prom", "redlock.prom.lock"]);

    // A command that fails held the lock, but did not succeed.
    let output = run(&cluster, &file, "job", &[], &["false"]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let scrape = Scrape::read(&file);
    assert_eq!(scrape.outcome("job", "acquired"), 2);
    assert_eq!(scrape.count("redlock_held_seconds", "job"), 2);
    assert_eq!(scrape.last_success("job"), Some(success));
}

#[test]
fn conflicts_and_unavailable_masters_are_counted_and_keep_their_exit_codes() {
    let mut cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let file = metrics_path(&dir);
    let token = cluster
        .redlock()
        .args(["acquire", "--key", "busy", "--ttl", "30s"])
        .output()
        .unwrap();
    assert!(token.status.success(), "{}", describe(&token));

    let output = run(&cluster, &file, "busy", &["--wait", "300ms"], &["true"]);
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    let output = run(
        &cluster,
        &file,
        "busy",
        &["--conflict-exit-code", "0"],
        &["true"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let scrape = Scrape::read(&file);
    assert_eq!(scrape.outcome("busy", "conflict"), 2);
    assert_eq!(scrape.outcome("busy", "acquired"), 0);
    assert_eq!(scrape.count("redlock_wait_seconds", "busy"), 2);
    assert!(scrape.sum("redlock_wait_seconds", "busy") >= 0.3);
    assert_eq!(scrape.count("redlock_held_seconds", "busy"), 0);
    assert_eq!(scrape.last_success("busy"), None);

    cluster.server(0).kill();
    cluster.server(1).kill();
    let output = run(&cluster, &file, "down", &[], &["true"]);
    assert_eq!(output.status.code(), Some(69), "{}", describe(&output));
    let scrape = Scrape::read(&file);
    assert_eq!(scrape.outcome("down", "unavailable"), 1);
    // The other key's counts are still there.
    assert_eq!(scrape.outcome("busy", "conflict"), 2);
}

#[test]
fn a_lost_lock_and_a_max_duration_stop_are_counted() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let file = metrics_path(&dir);

    let output = run(
        &cluster,
        &file,
        "capped",
        &["--max-duration", "300ms"],
        &["sleep", "30"],
    );
    assert_eq!(output.status.code(), Some(124), "{}", describe(&output));

    let mut lost = Running::start(
        cluster
            .redlock()
            .args(["run", "--key", "lost", "--ttl", "3s", "--metrics-file"])
            .arg(&file),
    );
    lost.wait_ready();
    cluster.servers[0].del("lost");
    cluster.servers[1].del("lost");
    let output = lost.wait_output();
    assert_eq!(output.status.code(), Some(70), "{}", describe(&output));

    let scrape = Scrape::read(&file);
    assert_eq!(scrape.outcome("capped", "acquired"), 1);
    assert_eq!(scrape.outcome("capped", "max_duration"), 1);
    assert_eq!(scrape.count("redlock_held_seconds", "capped"), 1);
    assert_eq!(scrape.last_success("capped"), None);
    assert_eq!(scrape.outcome("lost", "acquired"), 1);
    assert_eq!(scrape.outcome("lost", "lost"), 1);
    assert_eq!(scrape.count("redlock_held_seconds", "lost"), 1);
    assert_eq!(scrape.last_success("lost"), None);
}

#[test]
fn acquire_and_release_observe_the_hold_from_the_holder_record() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let file = metrics_path(&dir);
    let redlock = |args: &[&str]| {
        cluster
            .redlock()
            .args(args)
            .arg("--metrics-file")
            .arg(&file)
            .output()
            .unwrap()
    };
    let acquired = redlock(&["acquire", "--key", "shell", "--ttl", "30s"]);
    assert!(acquired.status.success(), "{}", describe(&acquired));
    let token = String::from_utf8(acquired.stdout)
        .unwrap()
        .trim()
        .to_string();
    let scrape = Scrape::read(&file);
    assert_eq!(scrape.outcome("shell", "acquired"), 1);
    assert_eq!(scrape.count("redlock_wait_seconds", "shell"), 1);
    assert_eq!(scrape.count("redlock_held_seconds", "shell"), 0);

    std::thread::sleep(Duration::from_millis(300));
    let released = redlock(&["release", "--key", "shell", "--token", &token]);
    assert!(released.status.success(), "{}", describe(&released));
    let scrape = Scrape::read(&file);
    assert_eq!(scrape.count("redlock_held_seconds", "shell"), 1);
    let held = scrape.sum("redlock_held_seconds", "shell");
    // Since the record's wall-clock time (milliseconds), so at least the pause.
    assert!(held >= 0.29, "{held}");
    assert!(scrape.last_success("shell").is_some());

    // A release that finds the lock gone is a lost lock, and says so with 70 as before.
    let released = redlock(&["release", "--key", "shell", "--token", &token]);
    assert_eq!(released.status.code(), Some(70), "{}", describe(&released));
    let scrape = Scrape::read(&file);
    assert_eq!(scrape.outcome("shell", "lost"), 1);
    assert_eq!(scrape.count("redlock_held_seconds", "shell"), 1);
}

/// Starts a `redlock run` that adds to `file` and exits when done.
fn spawn_run(cluster: &Cluster, file: &Path, key: &str) -> Child {
    cluster
        .redlock()
        .args(["run", "--key", key, "--ttl", "10s", "--wait", "60s"])
        .arg("--metrics-file")
        .arg(file)
        .args(["--", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn concurrent_writers_lose_no_count() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let file = metrics_path(&dir);
    const KEYS: usize = 4;
    const PER_KEY: usize = 6;
    // 24 processes at once, 6 on each of 4 keys: they wait for each other's lock, and all of
    // them write the one file.
    let children: Vec<(String, Child)> = (0..KEYS * PER_KEY)
        .map(|i| {
            let key = format!("k{}", i % KEYS);
            let child = spawn_run(&cluster, &file, &key);
            (key, child)
        })
        .collect();
    for (key, child) in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{key}: {}", describe(&output));
        assert!(output.stderr.is_empty(), "{key}: {}", describe(&output));
    }
    let scrape = Scrape::read(&file);
    for k in 0..KEYS {
        let key = format!("k{k}");
        assert_eq!(scrape.outcome(&key, "acquired"), PER_KEY as u64, "{key}");
        assert_eq!(
            scrape.count("redlock_wait_seconds", &key),
            PER_KEY as u64,
            "{key}"
        );
        assert_eq!(
            scrape.count("redlock_held_seconds", &key),
            PER_KEY as u64,
            "{key}"
        );
    }
}

#[test]
fn concurrent_writers_in_many_threads_lose_no_count() {
    use redlock_cli::metrics::{Observations, Outcome, record};
    let dir = tempfile::tempdir().unwrap();
    let file = metrics_path(&dir);
    const THREADS: usize = 16;
    const EACH: usize = 25;
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let file = &file;
            scope.spawn(move || {
                for i in 0..EACH {
                    let mut seen = Observations::new(&format!("t{}", t % 4));
                    seen.wait = Some(Duration::from_millis((i * 7) as u64));
                    seen.held = Some(Duration::from_millis(250));
                    seen.outcomes = vec![Outcome::Acquired, Outcome::Conflict];
                    record(file, &seen).unwrap();
                }
            });
        }
    });
    let scrape = Scrape::read(&file);
    let per_key = (THREADS / 4 * EACH) as u64;
    for key in ["t0", "t1", "t2", "t3"] {
        assert_eq!(scrape.outcome(key, "acquired"), per_key);
        assert_eq!(scrape.outcome(key, "conflict"), per_key);
        assert_eq!(scrape.count("redlock_wait_seconds", key), per_key);
        assert_eq!(scrape.count("redlock_held_seconds", key), per_key);
        let sum = scrape.sum("redlock_held_seconds", key);
        assert!((sum - per_key as f64 * 0.25).abs() < 1e-6, "{sum}");
    }
}

#[test]
fn a_metrics_file_that_cannot_be_written_changes_nothing_but_a_warning() {
    let cluster = Cluster::start(1);
    let output = run(
        &cluster,
        Path::new("/nonexistent/redlock/metrics.prom"),
        "job",
        &[],
        &["sh", "-c", "exit 3"],
    );
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("metrics file /nonexistent/redlock/metrics.prom"),
        "{stderr}"
    );
    assert!(lines[0].contains("unaffected"), "{stderr}");

    // A file that is not redlock's is replaced, with a warning, and the run counts.
    let dir = tempfile::tempdir().unwrap();
    let file = metrics_path(&dir);
    std::fs::write(&file, "# someone else's\nnode_load1 0.5\n").unwrap();
    let output = run(&cluster, &file, "job", &[], &["true"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("was replaced"),
        "{}",
        describe(&output)
    );
    assert_eq!(Scrape::read(&file).outcome("job", "acquired"), 1);
}

#[test]
fn the_config_file_names_the_metrics_file_and_keys_are_escaped() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let file = metrics_path(&dir);
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("metrics_file = {:?}\n", file.to_str().unwrap()),
    )
    .unwrap();
    let key = "odd \"key\" \\ with\nnewline, {braces}=and,commas";
    let output = cluster
        .redlock()
        .arg("--config")
        .arg(&config)
        .args(["run", "--key", key, "--", "true"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let scrape = Scrape::read(&file);
    assert_eq!(scrape.outcome(key, "acquired"), 1);
    assert!(scrape.last_success(key).is_some());

    // An empty --metrics-file is refused before anything is taken.
    let output = cluster
        .redlock()
        .args(["run", "--key", "k", "--metrics-file", "", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(64), "{}", describe(&output));
}

/// Outcomes carry the mode: a reader (`--shared`) counts as `reader`, the lock as `writer`,
/// each from 0 for every key; a reader refused by a writer counts a reader's conflict.
#[test]
fn outcomes_are_counted_by_mode() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let file = metrics_path(&dir);
    let output = run(&cluster, &file, "rw", &["--shared"], &["true"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let scrape = Scrape::read(&file);
    assert_eq!(scrape.outcome_of("rw", "reader", "acquired"), 1);
    assert_eq!(scrape.outcome_of("rw", "writer", "acquired"), 0);
    let writer = cluster
        .redlock()
        .args(["acquire", "--key", "rw", "--ttl", "10s"])
        .output()
        .unwrap();
    assert!(writer.status.success(), "{}", describe(&writer));
    let output = run(&cluster, &file, "rw", &["--shared"], &["true"]);
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    let scrape = Scrape::read(&file);
    assert_eq!(scrape.outcome_of("rw", "reader", "conflict"), 1);
    assert_eq!(scrape.outcome_of("rw", "writer", "conflict"), 0);
}

/// An outdated run (`--order` lower than the highest that took the lock) counts as
/// `outdated`, whether refused before waiting or by the raise under the lock, and only then.
#[test]
fn outdated_runs_are_counted() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let file = metrics_path(&dir);
    let output = run(&cluster, &file, "deploy", &["--order", "5"], &["true"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert_eq!(Scrape::read(&file).outcome("deploy", "outdated"), 0);
    let output = run(&cluster, &file, "deploy", &["--order", "4"], &["true"]);
    assert_eq!(output.status.code(), Some(81), "{}", describe(&output));
    let scrape = Scrape::read(&file);
    assert_eq!(scrape.outcome("deploy", "outdated"), 1);
    assert_eq!(scrape.outcome("deploy", "acquired"), 1);
}

/// Replacing the metrics file keeps its owner, group and mode (issue 33: one run as root made
/// a user's metrics file root's). The suite runs as root, as CI does: the file is handed to
/// another user first, and root's run must give the new file back to them.
#[test]
fn a_run_as_root_keeps_the_metrics_files_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "this test gives a file to another user, which needs root: run the test suite as \
         root, as CI does"
    );
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let file = metrics_path(&dir);
    let output = run(&cluster, &file, "owned", &[], &["true"]);
    assert!(output.status.success(), "{}", describe(&output));
    std::os::unix::fs::chown(&file, Some(4242), Some(4343)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();

    let output = run(&cluster, &file, "owned", &[], &["true"]);
    assert!(output.status.success(), "{}", describe(&output));
    assert!(output.stderr.is_empty(), "{}", describe(&output));
    assert_eq!(Scrape::read(&file).outcome("owned", "acquired"), 2);
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid()),
        (4242, 4343),
        "the owner was not kept"
    );
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
}
