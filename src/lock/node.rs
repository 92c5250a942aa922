//! One connection per master, opened on first use and kept for the whole invocation.
//!
//! The connection is a redis-rs multiplexed connection: requests are written in the order they
//! are queued and answered in that order, and a request whose caller stopped waiting (a per-node
//! timeout) stays in the queue; its reply is read and dropped when it comes. That FIFO is what
//! keeps a release from overtaking an acquire still in flight on a slow or paused master: both
//! travel the same connection, so the master runs them in order. For the same reason a
//! connection is never dropped because a reply is late, only when it is broken.

use std::sync::Mutex;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ErrorKind, RedisError, ServerErrorKind, Value};

use super::master::Master;
use super::scripts::Lua;

/// Why one master did not answer usefully.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeError {
    /// No answer before the per-node deadline.
    Timeout,
    /// Could not connect or log in.
    Connect(String),
    /// The master answered with an error (read-only replica, out of memory, loading, ...).
    Server(String),
    /// The connection broke or the reply made no sense.
    Io(String),
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeError::Timeout => f.write_str("timed out"),
            NodeError::Connect(why) => write!(f, "cannot connect: {why}"),
            NodeError::Server(why) => write!(f, "error reply: {why}"),
            NodeError::Io(why) => write!(f, "connection failed: {why}"),
        }
    }
}

pub(crate) struct Node {
    pub master: Master,
    client: redis::Client,
    slot: Mutex<Slot>,
}

/// The cached connection and a generation number, so that a caller who saw connection 3 fail
/// does not throw away connection 4 that another thread opened meanwhile.
#[derive(Default)]
struct Slot {
    generation: u64,
    connection: Option<MultiplexedConnection>,
}

impl Node {
    pub fn new(master: Master) -> Result<Node, RedisError> {
        let mut info = master.connection_info().clone();
        // No CLIENT SETINFO round trip at connect: without a password or database to select,
        // the first command is the first thing sent.
        let settings = info.redis_settings().clone().set_skip_set_lib_name();
        info = info.set_redis_settings(settings);
        let tcp = info.tcp_settings().clone().set_nodelay(true);
        info = info.set_tcp_settings(tcp);
        Ok(Node {
            client: redis::Client::open(info)?,
            master,
            slot: Mutex::new(Slot::default()),
        })
    }

    async fn connection(&self) -> Result<(u64, MultiplexedConnection), NodeError> {
        if let Some(found) = self.cached() {
            return Ok(found);
        }
        // Deadlines are the caller's: the whole request, connecting included, runs under the
        // round's per-node timeout, so none is set here.
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(None)
            .set_response_timeout(None);
        let connection = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| NodeError::Connect(describe(&e)))?;
        let mut slot = self.slot.lock().expect("node slot poisoned");
        // Another thread may have connected meanwhile; keep one connection so that everything
        // sent to this master shares one FIFO.
        if slot.connection.is_none() {
            slot.generation += 1;
            slot.connection = Some(connection);
        }
        let current = slot.connection.clone().expect("just set");
        Ok((slot.generation, current))
    }

    fn cached(&self) -> Option<(u64, MultiplexedConnection)> {
        let slot = self.slot.lock().expect("node slot poisoned");
        slot.connection.clone().map(|c| (slot.generation, c))
    }

    fn forget(&self, generation: u64) {
        let mut slot = self.slot.lock().expect("node slot poisoned");
        if slot.generation == generation {
            slot.connection = None;
        }
    }

    /// Runs `script` with EVALSHA, falling back to EVAL when the master does not have it cached
    /// (first use since it started). Must be awaited in the caller's task, never spawned: when
    /// the caller stops waiting it drops this future, and what was not yet queued is then
    /// never sent, so requests reach the master in the order the caller made them.
    pub async fn eval(
        &self,
        script: &Lua,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<Value, NodeError> {
        let (generation, mut connection) = self.connection().await?;
        let mut evalsha = redis::cmd("EVALSHA");
        evalsha.arg(&script.sha).arg(keys.len()).arg(keys).arg(args);
        let mut result = send(&mut connection, &evalsha).await;
        if matches!(&result, Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript)) {
            let mut eval = redis::cmd("EVAL");
            eval.arg(script.code).arg(keys.len()).arg(keys).arg(args);
            result = send(&mut connection, &eval).await;
        }
        result.map_err(|e| self.failure(generation, &e))
    }

    /// Classifies a failed request; a broken connection is forgotten so that the next request
    /// reconnects, while an error reply leaves it in place.
    fn failure(&self, generation: u64, error: &RedisError) -> NodeError {
        if error.is_io_error() || error.is_connection_dropped() || error.is_unrecoverable_error() {
            self.forget(generation);
            NodeError::Io(describe(error))
        } else {
            NodeError::Server(describe(error))
        }
    }
}

/// Sends one command; an error reply (which the multiplexed connection hands back as a value)
/// becomes an error.
async fn send(
    connection: &mut MultiplexedConnection,
    cmd: &redis::Cmd,
) -> redis::RedisResult<Value> {
    connection
        .send_packed_command(cmd)
        .await
        .and_then(Value::extract_error)
}

/// A one-line description of a redis-rs error, without the noise of its Debug form.
fn describe(error: &RedisError) -> String {
    let text = error.to_string();
    text.lines().next().unwrap_or_default().trim().to_string()
}
