//! The metrics file's content: what it holds per key, how it is written in Prometheus's text
//! exposition format, and how redlock reads its own file back.
//!
//! The reader accepts what the writer writes (any order of lines, comments skipped) and
//! nothing else: the file is redlock's alone. Counts are whole numbers and add up exactly;
//! sums are doubles.

use std::collections::BTreeMap;
use std::fmt::Write;

/// The families, as written.
pub const WAIT: &str = "redlock_wait_seconds";
pub const HELD: &str = "redlock_held_seconds";
pub const OUTCOMES: &str = "redlock_outcomes_total";
pub const WAKEUPS: &str = "redlock_wakeups_total";
pub const LAST_SUCCESS: &str = "redlock_last_success_timestamp_seconds";

/// The outcomes counted, each written (from 0) for every key, so that a first increase shows
/// as one.
pub const OUTCOME_NAMES: [&str; 11] = [
    "acquired",
    "conflict",
    "unavailable",
    "lost",
    "max_duration",
    "outdated",
    "superseded",
    "lost_place",
    "revoked",
    "forced",
    "released",
];

/// The modes an outcome is counted by (label `mode`): `reader` for `--shared`, `writer` for
/// everything else (the lock, and a semaphore's slots, which exclude readers alike). A file
/// written before the label existed reads back as `writer`.
pub const MODES: [&str; 2] = ["reader", "writer"];

/// What started the turn in the fair queue that took the lock, each written (from 0) for every
/// key: a `heartbeat` is a lost wake-up (see the lock's `wakeup`).
pub const WAKEUP_CAUSES: [&str; 4] = ["joined", "notice", "heartbeat", "backoff"];

/// Upper bounds of the wait histogram's buckets, in seconds: from a free lock's few
/// milliseconds to an hour in a queue.
pub const WAIT_BUCKETS: [f64; 17] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0,
    3600.0,
];

/// Upper bounds of the held histogram's buckets, in seconds: from a quick critical section to
/// a day-long job.
pub const HELD_BUCKETS: [f64; 16] = [
    0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0,
    43200.0, 86400.0,
];

/// Everything in one file, by lock key.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metrics {
    pub keys: BTreeMap<String, KeyMetrics>,
}

/// One lock key's metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyMetrics {
    pub wait: Histogram,
    pub held: Histogram,
    /// By (mode, outcome): see [`MODES`].
    pub outcomes: BTreeMap<(String, String), u64>,
    /// Locks taken in the fair queue, by what started the turn that took them.
    pub wakeups: BTreeMap<String, u64>,
    /// Unix time in seconds.
    pub last_success: Option<f64>,
}

impl Default for KeyMetrics {
    fn default() -> Self {
        KeyMetrics {
            wait: Histogram::new(&WAIT_BUCKETS),
            held: Histogram::new(&HELD_BUCKETS),
            outcomes: every_outcome()
                .map(|mode_outcome| (mode_outcome, 0))
                .collect(),
            wakeups: WAKEUP_CAUSES.iter().map(|c| (c.to_string(), 0)).collect(),
            last_success: None,
        }
    }
}

/// A cumulative histogram.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    /// (upper bound, observations at or below it), by bound; +Inf is `count`.
    pub buckets: Vec<(f64, u64)>,
    pub count: u64,
    pub sum: f64,
}

impl Histogram {
    pub fn new(bounds: &[f64]) -> Histogram {
        Histogram {
            buckets: bounds.iter().map(|b| (*b, 0)).collect(),
            count: 0,
            sum: 0.0,
        }
    }

    pub fn observe(&mut self, value: f64) {
        for (bound, count) in &mut self.buckets {
            if value <= *bound {
                *count += 1;
            }
        }
        self.count += 1;
        self.sum += value;
    }
}

impl Metrics {
    /// The text exposition of everything, families in a fixed order, keys sorted.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let help = [
            (
                WAIT,
                "Seconds spent waiting for the lock, per attempt to take it (run, acquire).",
                "histogram",
            ),
            (
                HELD,
                "Seconds the lock was held, from taking it to releasing or losing it.",
                "histogram",
            ),
            (
                OUTCOMES,
                "Attempts to take and hold the lock, by mode (reader: --shared, writer) and \
                 outcome (acquired, conflict, unavailable, lost, max_duration, outdated, \
                 revoked: lost to release --force, forced: a release --force that revoked it).",
                "counter",
            ),
            (
                WAKEUPS,
                "Locks taken after waiting in the fair queue, by what started the turn that took \
                 them (joined, notice, heartbeat: a lost wake-up, backoff).",
                "counter",
            ),
            (
                LAST_SUCCESS,
                "When a command last succeeded under the lock (run: the command exited 0; \
                 release: the lock was still held), Unix time.",
                "gauge",
            ),
        ];
        for (family, text, kind) in help {
            let _ = writeln!(out, "# HELP {family} {text}\n# TYPE {family} {kind}");
            for (key, metrics) in &self.keys {
                let key = label_value(key);
                match family {
                    WAIT => histogram(&mut out, family, &key, &metrics.wait),
                    HELD => histogram(&mut out, family, &key, &metrics.held),
                    OUTCOMES => {
                        for ((mode, outcome), count) in &metrics.outcomes {
                            let _ = writeln!(
                                out,
                                "{family}{{key=\"{key}\",mode=\"{}\",outcome=\"{}\"}} {count}",
                                label_value(mode),
                                label_value(outcome)
                            );
                        }
                    }
                    WAKEUPS => counters(&mut out, family, &key, "cause", &metrics.wakeups),
                    _ => {
                        if let Some(at) = metrics.last_success {
                            let _ = writeln!(out, "{family}{{key=\"{key}\"}} {}", number(at));
                        }
                    }
                }
            }
        }
        out
    }

    /// Reads a file this module rendered. Any line it would not have written is an error
    /// naming the line.
    pub fn parse(text: &str) -> Result<Metrics, String> {
        let mut metrics = Metrics::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: &str| format!("line {}: {why}", n + 1);
            let sample = sample(line).ok_or_else(|| bad("not a sample redlock writes"))?;
            let label = |name: &str| {
                sample
                    .labels
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.as_str())
                    .ok_or_else(|| bad(&format!("no {name} label")))
            };
            let key = label("key")?.to_string();
            let entry = metrics.keys.entry(key).or_insert_with(|| {
                // Read back as written, not as a new key would start.
                KeyMetrics {
                    wait: Histogram::new(&[]),
                    held: Histogram::new(&[]),
                    outcomes: BTreeMap::new(),
                    wakeups: BTreeMap::new(),
                    last_success: None,
                }
            });
            let whole = || whole(sample.value).ok_or_else(|| bad("not a whole number"));
            let (family, part) = split_family(sample.name).ok_or_else(|| bad("unknown metric"))?;
            match (family, part) {
                (OUTCOMES, "") => {
                    // Written before the mode label existed: the lock's, a writer's.
                    let mode = label("mode").unwrap_or("writer").to_string();
                    let outcome = label("outcome")?.to_string();
                    *entry.outcomes.entry((mode, outcome)).or_insert(0) += whole()?;
                }
                (WAKEUPS, "") => {
                    entry.wakeups.insert(label("cause")?.to_string(), whole()?);
                }
                (LAST_SUCCESS, "") => entry.last_success = Some(sample.value),
                (WAIT | HELD, part) => {
                    let histogram = if family == WAIT {
                        &mut entry.wait
                    } else {
                        &mut entry.held
                    };
                    match part {
                        "_bucket" => {
                            let le = label("le")?;
                            if le == "+Inf" {
                                // The same number as _count, which is the one kept.
                                continue;
                            }
                            let bound: f64 = le.parse().map_err(|_| bad("bad le"))?;
                            histogram.buckets.push((bound, whole()?));
                        }
                        "_sum" => histogram.sum = sample.value,
                        "_count" => histogram.count = whole()?,
                        _ => return Err(bad("unknown metric")),
                    }
                }
                _ => return Err(bad("unknown metric")),
            }
        }
        for metrics in metrics.keys.values_mut() {
            for histogram in [&mut metrics.wait, &mut metrics.held] {
                histogram.buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
                histogram.buckets.dedup_by(|a, b| a.0 == b.0);
            }
            // A key written by an older layout gets what a new key has.
            for mode_outcome in every_outcome() {
                metrics.outcomes.entry(mode_outcome).or_insert(0);
            }
            for cause in WAKEUP_CAUSES {
                metrics.wakeups.entry(cause.to_string()).or_insert(0);
            }
            if metrics.wait.buckets.is_empty() && metrics.wait.count == 0 {
                metrics.wait = Histogram::new(&WAIT_BUCKETS);
            }
            if metrics.held.buckets.is_empty() && metrics.held.count == 0 {
                metrics.held = Histogram::new(&HELD_BUCKETS);
            }
        }
        Ok(metrics)
    }
}

/// Every (mode, outcome) pair, each counted from 0 for every key.
fn every_outcome() -> impl Iterator<Item = (String, String)> {
    MODES.iter().flat_map(|mode| {
        OUTCOME_NAMES
            .iter()
            .map(|outcome| (mode.to_string(), outcome.to_string()))
    })
}

/// One counter per label value: `family{key="K",label="value"} count`.
fn counters(
    out: &mut String,
    family: &str,
    key: &str,
    label: &str,
    counts: &BTreeMap<String, u64>,
) {
    for (value, count) in counts {
        let _ = writeln!(
            out,
            "{family}{{key=\"{key}\",{label}=\"{}\"}} {count}",
            label_value(value)
        );
    }
}

fn histogram(out: &mut String, family: &str, key: &str, histogram: &Histogram) {
    for (bound, count) in &histogram.buckets {
        let _ = writeln!(
            out,
            "{family}_bucket{{key=\"{key}\",le=\"{}\"}} {count}",
            number(*bound)
        );
    }
    let count = histogram.count;
    let _ = writeln!(out, "{family}_bucket{{key=\"{key}\",le=\"+Inf\"}} {count}");
    let _ = writeln!(
        out,
        "{family}_sum{{key=\"{key}\"}} {}",
        number(histogram.sum)
    );
    let _ = writeln!(out, "{family}_count{{key=\"{key}\"}} {count}");
}

/// A float as Prometheus reads it: shortest round-trip digits, never an exponent.
fn number(value: f64) -> String {
    if value.is_infinite() {
        return if value > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    format!("{value}")
}

/// A whole, non-negative count.
fn whole(value: f64) -> Option<u64> {
    (value >= 0.0 && value.fract() == 0.0 && value < 2f64.powi(64)).then_some(value as u64)
}

/// A label value, escaped as the text format wants (backslash, double quote, line feed).
/// Other control characters become U+FFFD: the format has no escape for them, and a raw
/// carriage return would end the line for some readers.
fn label_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if c.is_control() && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// What a key's label value reads back as: the key with the characters [`label_value`]
/// replaced.
pub fn label_key(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_control() && c != '\t' && c != '\n' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

struct Sample<'a> {
    name: &'a str,
    labels: Vec<(String, String)>,
    value: f64,
}

/// `name{label="value",...} number`.
fn sample(line: &str) -> Option<Sample<'_>> {
    let open = line.find('{')?;
    let name = &line[..open];
    let mut rest = &line[open + 1..];
    let mut labels = Vec::new();
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            rest = after;
            break;
        }
        let eq = rest.find("=\"")?;
        let label = rest[..eq].trim_start_matches(',').to_string();
        let mut value = String::new();
        let mut chars = rest[eq + 2..].char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i,
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    c @ ('\\' | '"') => value.push(c),
                    _ => return None,
                },
                (_, c) => value.push(c),
            }
        };
        labels.push((label, value));
        rest = &rest[eq + 2 + end + 1..];
    }
    let value = rest.trim();
    let value = match value {
        "+Inf" => f64::INFINITY,
        other => other.parse().ok()?,
    };
    Some(Sample {
        name,
        labels,
        value,
    })
}

/// `redlock_wait_seconds_bucket` → (`redlock_wait_seconds`, `_bucket`).
fn split_family(name: &str) -> Option<(&'static str, &str)> {
    [OUTCOMES, WAKEUPS, LAST_SUCCESS, WAIT, HELD]
        .into_iter()
        .find_map(|family| Some((family, name.strip_prefix(family)?)))
        .filter(|(family, part)| {
            part.is_empty() || ([WAIT, HELD].contains(family) && part.starts_with('_'))
        })
}

#[cfg(test)]
mod tests;
