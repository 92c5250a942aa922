//! What /proc says about processes: parents, groups, states. For tests that look at processes
//! of any process group (the guard, the command), which `std::process` cannot see.

/// The fields of /proc/PID/stat after the command name (which may contain anything):
/// [0] state, [1] ppid, [2] pgrp. None when the process is gone.
pub fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// The state letter of a process (R, S, T for stopped, Z...), or None when it is gone.
pub fn state_of(pid: i32) -> Option<char> {
    stat_fields(pid)?.first()?.chars().next()
}

/// The pids of `parent`'s live (not zombie) children.
pub fn children_of(parent: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            stat_fields(*pid)
                .is_some_and(|f| f[0] != "Z" && f[1].parse::<i32>().ok() == Some(parent))
        })
        .collect()
}

/// The guard process of the `redlock run` with pid `redlock` whose command is `command`: its
/// other child. redlock forks it right after spawning the command, so on a loaded machine the
/// command can be ready first: wait for it a little.
pub fn guard_of(redlock: i32, command: i32) -> i32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if let Some(guard) = children_of(redlock).into_iter().find(|pid| *pid != command) {
            return guard;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no guard process next to the command"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
