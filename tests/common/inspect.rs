//! The tests' own connection to a master, for looking at what redlock left there
//! ([`Inspector`]): a plain TCP stream and the redis crate's reply parser, whose reads go on
//! after EINTR instead of failing.
//!
//! Why (issue 32: `KEYS: Interrupted system call (os error 4)` in a test that sends no signal
//! and installs no handler). A test process has one thread per running test, and each spawns
//! children. When a child exits, the kernel addresses SIGCHLD to the thread that spawned it.
//! SIGCHLD's default action is to ignore it, and an ignored signal is normally dropped at
//! once; but not while that thread blocks it, and glibc's `posix_spawn` (which
//! `std::process::Command::spawn` uses) blocks every signal in the calling thread until the new child has
//! exec'd. A child of test A that exits while A's thread is inside its next spawn therefore
//! leaves SIGCHLD pending for the process, and the kernel wakes *another* thread to take it:
//! test B's, waiting for a reply from Redis. A socket read with a timeout (`SO_RCVTIMEO`, which
//! every helper connection needs, so that a paused master cannot hang a test) is the one kind
//! of wait the kernel never restarts after a signal: it returns EINTR. No handler ran; the
//! signal only woke the thread. The redis crate's connection passes that EINTR up as the
//! command's failure, and the helper panicked.
//!
//! The signal cannot be kept away without changing what every child inherits: a blocked
//! SIGCHLD in the test process would be inherited through `Command` (std does not reset the
//! signal mask) by every redlock it starts. So the read is made safe instead: EINTR means
//! "no answer yet", and the read goes on, on the same connection, for the same reply (sending
//! the command again could run it twice). `harness::helper_queries_survive_a_spawning_thread`
//! fails with the redis crate's own connection.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use redis::{ConnectionLike, Parser, RedisResult, Value};

/// How long one read may wait for a reply before the helper gives up (a paused master).
const PATIENCE: Duration = Duration::from_secs(5);

/// One connection to a master on loopback, for the tests' own commands. Implements the redis
/// crate's [`ConnectionLike`], so `redis::cmd(..).query(&mut inspector)` works as with its
/// own connection.
pub struct Inspector {
    stream: TcpStream,
    parser: Parser,
}

impl Inspector {
    /// Connects to `127.0.0.1:port`, waiting at most `patience` for the connection.
    pub fn connect(port: u16, patience: Duration) -> io::Result<Inspector> {
        // std's connect_timeout waits in poll(2), which it retries after EINTR.
        let stream = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), patience)?;
        stream.set_read_timeout(Some(PATIENCE))?;
        stream.set_write_timeout(Some(PATIENCE))?;
        stream.set_nodelay(true)?;
        Ok(Inspector {
            stream,
            parser: Parser::new(),
        })
    }

    /// Connects to the master a `redis://` URL names, logs in as its user and selects its
    /// database.
    pub fn open(url: &str) -> RedisResult<Inspector> {
        use redis::IntoConnectionInfo;
        let info = url.into_connection_info()?;
        let redis::ConnectionAddr::Tcp(host, port) = info.addr() else {
            panic!("not a plain TCP URL: {url}");
        };
        assert!(["127.0.0.1", "localhost"].contains(&host.as_str()), "{url}");
        let mut inspector = Inspector::connect(*port, PATIENCE)?;
        let settings = info.redis_settings();
        if let Some(password) = settings.password() {
            let mut auth = redis::cmd("AUTH");
            if let Some(user) = settings.username() {
                auth.arg(user);
            }
            auth.arg(password).exec(&mut inspector)?;
        }
        if settings.db() != 0 {
            redis::cmd("SELECT")
                .arg(settings.db())
                .exec(&mut inspector)?;
        }
        Ok(inspector)
    }

    fn send(&mut self, bytes: &[u8]) -> RedisResult<()> {
        // write_all retries EINTR itself.
        Ok(self.stream.write_all(bytes)?)
    }

    fn reply(&mut self) -> RedisResult<Value> {
        self.parser.parse_value(GoesOn(&self.stream))
    }
}

/// Reads from the stream, reading again after EINTR (see the module header).
struct GoesOn<'a>(&'a TcpStream);

impl Read for GoesOn<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.0.read(buf) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }
}

impl ConnectionLike for Inspector {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.send(cmd)?;
        // An error reply is a value here, as with the redis crate's connection: the caller's
        // conversion turns it into the error.
        self.reply()
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.send(cmd)?;
        let mut values = Vec::with_capacity(count);
        for i in 0..offset + count {
            let value = self.reply()?;
            if i >= offset {
                values.push(value);
            }
        }
        Ok(values)
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    fn is_open(&self) -> bool {
        true
    }
}
