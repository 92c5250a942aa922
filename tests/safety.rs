//! Mutual exclusion under contention, observed from the outside: many `redlock run` processes
//! doing a read-modify-write on a shared file.

use crate::common::{Cluster, describe};

/// 8 processes × 25 critical sections. Each section logs its start and end, reads a counter,
/// sleeps a little (to widen any race), and writes the counter back plus one. If two sections
/// ever overlapped, the log would show two starts in a row and an update would be lost.
#[test]
fn concurrent_read_modify_write_loses_no_update_and_never_overlaps() {
    const PROCESSES: usize = 8;
    const SECTIONS: usize = 25;
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("counter");
    let log = dir.path().join("log");
    std::fs::write(&counter, "0\n").unwrap();
    let section = format!(
        "echo \"begin $$\" >> {log}; n=$(cat {counter}); sleep 0.005; echo $((n + 1)) > {counter}; echo \"end $$\" >> {log}",
        log = log.display(),
        counter = counter.display()
    );

    std::thread::scope(|scope| {
        for _ in 0..PROCESSES {
            scope.spawn(|| {
                for _ in 0..SECTIONS {
                    let output = cluster
                        .redlock()
                        .args(["run", "--key", "rmw", "--ttl", "5s", "--wait", "120s"])
                        .args(["--", "sh", "-c", &section])
                        .output()
                        .unwrap();
                    assert!(output.status.success(), "{}", describe(&output));
                }
            });
        }
    });

    let total: usize = std::fs::read_to_string(&counter)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(total, PROCESSES * SECTIONS, "updates were lost");

    let log = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2 * PROCESSES * SECTIONS);
    for pair in lines.chunks(2) {
        let begin = pair[0]
            .strip_prefix("begin ")
            .expect("a section began inside another");
        let end = pair[1]
            .strip_prefix("end ")
            .expect("two sections began in a row");
        assert_eq!(begin, end, "sections interleaved: {pair:?}");
    }
    assert!(cluster.key_gone_everywhere("rmw"));
}
