//! The Lua scripts run directly on a real master, for the properties the rounds rely on when a
//! request is sent a second time (after its connection failed).

use crate::common::{Cluster, Inspector};
use redis::Value;
use redlock_cli::lock::keys;
use redlock_cli::lock::scripts::lock::ACQUIRE;

fn acquire(connection: &mut Inspector, token: &str) -> Value {
    let names = keys::Names::of("lock");
    redis::Script::new(ACQUIRE.code)
        .key(&names.keys("lock")[..keys::LOCK_KEYS])
        .arg(token)
        .arg(30_000)
        .arg("{\"pid\":1}")
        .arg("")
        .arg(10_000)
        .invoke(connection)
        .expect("ACQUIRE")
}

#[test]
fn an_acquire_sent_twice_with_its_token_wins_once_and_refuses_others() {
    let mut cluster = Cluster::start(1);
    let mut connection = cluster.server(0).connection();
    assert_eq!(acquire(&mut connection, "token-a"), Value::Int(1));
    // The same request again (its first answer was lost with the connection): still ours.
    assert_eq!(acquire(&mut connection, "token-a"), Value::Int(1));
    // Anyone else is refused and told who holds it and for how long.
    match acquire(&mut connection, "token-b") {
        Value::Array(fields) => {
            assert_eq!(fields[0], Value::BulkString(b"{\"pid\":1}".to_vec()));
            assert!(matches!(fields[1], Value::Int(ms) if ms > 0 && ms <= 30_000));
            // ...and which token holds it, so a record can be checked against it.
            assert_eq!(fields[2], Value::BulkString(b"token-a".to_vec()));
        }
        other => panic!("token-b was not refused: {other:?}"),
    }
    assert_eq!(cluster.server(0).get("lock").as_deref(), Some("token-a"));
}
