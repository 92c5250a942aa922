use super::*;

fn sample_metrics() -> Metrics {
    let mut metrics = Metrics::default();
    for key in ["deploy", "we\"ird\\key\nwith, {braces}=x", "ünï"] {
        let entry = metrics.keys.entry(key.to_string()).or_default();
        entry.wait.observe(0.003);
        entry.wait.observe(7.5);
        entry.held.observe(42.25);
        let acquired = ("writer".to_string(), "acquired".to_string());
        *entry.outcomes.get_mut(&acquired).unwrap() += 2;
        let lost = ("reader".to_string(), "lost".to_string());
        *entry.outcomes.get_mut(&lost).unwrap() += 1;
        *entry.wakeups.get_mut("notice").unwrap() += 3;
        entry.last_success = Some(1_763_700_000.125);
    }
    metrics
}

#[test]
fn what_is_written_reads_back_the_same() {
    let metrics = sample_metrics();
    let text = metrics.render();
    assert_eq!(Metrics::parse(&text).unwrap(), metrics, "{text}");
    assert!(
        text.contains("redlock_wait_seconds_bucket{key=\"deploy\",le=\"0.005\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("redlock_wait_seconds_bucket{key=\"deploy\",le=\"+Inf\"} 2\n"),
        "{text}"
    );
    assert!(text.contains("key=\"we\\\"ird\\\\key\\nwith, {braces}=x\""));
    assert!(
        text.contains("redlock_last_success_timestamp_seconds{key=\"deploy\"} 1763700000.125\n")
    );
}

#[test]
fn outcomes_written_before_the_mode_label_read_back_as_a_writers() {
    let old = "redlock_outcomes_total{key=\"k\",outcome=\"acquired\"} 4\n";
    let metrics = Metrics::parse(old).unwrap();
    let count = |mode: &str| metrics.keys["k"].outcomes[&(mode.into(), "acquired".into())];
    assert_eq!((count("writer"), count("reader")), (4, 0));
}

#[test]
fn observations_fill_every_bucket_at_or_above_them() {
    let mut histogram = Histogram::new(&[1.0, 5.0, 10.0]);
    histogram.observe(5.0);
    histogram.observe(0.5);
    histogram.observe(11.0);
    assert_eq!(histogram.buckets, [(1.0, 1), (5.0, 2), (10.0, 2)]);
    assert_eq!(histogram.count, 3);
    assert_eq!(histogram.sum, 16.5);
}

#[test]
fn a_new_key_counts_every_outcome_from_zero() {
    let text = Metrics {
        keys: [("k".to_string(), KeyMetrics::default())].into(),
    }
    .render();
    for outcome in OUTCOME_NAMES {
        for mode in MODES {
            let line = format!("{{key=\"k\",mode=\"{mode}\",outcome=\"{outcome}\"}} 0\n");
            assert!(text.contains(&line), "{text}");
        }
    }
    for cause in WAKEUP_CAUSES {
        assert!(
            text.contains(&format!(
                "redlock_wakeups_total{{key=\"k\",cause=\"{cause}\"}} 0\n"
            )),
            "{text}"
        );
    }
}

#[test]
fn control_characters_in_keys_become_replacement_characters() {
    assert_eq!(label_value("a\rb\u{1b}c\td"), "a\u{FFFD}b\u{FFFD}c\td");
    assert_eq!(label_key("a\rb\nc"), "a\u{FFFD}b\nc");
}

#[test]
fn anything_else_is_refused_with_its_line() {
    for (text, line) in [
        ("other_metric{key=\"k\"} 1\n", 1),
        (
            "# ok\nredlock_outcomes_total{key=\"k\",outcome=\"lost\"} 1.5\n",
            2,
        ),
        ("redlock_outcomes_total{outcome=\"lost\"} 1\n", 1),
        ("redlock_wait_seconds_bucket{key=\"k\",le=\"x\"} 1\n", 1),
        ("redlock_wait_seconds_bucket{key=\"k\\q\",le=\"1\"} 1\n", 1),
        ("redlock_wait_secondsX{key=\"k\"} 1\n", 1),
        ("redlock_outcomes_total 1\n", 1),
    ] {
        let error = Metrics::parse(text).unwrap_err();
        assert!(
            error.starts_with(&format!("line {line}:")),
            "{text:?}: {error}"
        );
    }
    assert_eq!(Metrics::parse("").unwrap(), Metrics::default());
}
