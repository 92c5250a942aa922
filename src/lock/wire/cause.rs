//! Why a master failed, in the terms a user can act on.
//!
//! A master that answered with an error is not "unreachable": a refused password, a missing
//! ACL permission, a replica among the masters or EVAL renamed are configuration to fix (exit
//! 78), and the advice must say which. A master full under `noeviction` or holding something
//! else at the key needs its own words. Only a master that could not be reached at all (refused
//! connection, timeout, broken connection) gets "check that it runs and is reachable".
//!
//! The classification reads the error codes Redis puts first in an error reply (`WRONGPASS`,
//! `NOAUTH`, `NOPERM`, `READONLY`, `OOM`, `WRONGTYPE`, ...) and, for servers that answer a
//! renamed or disabled command with a plain `ERR unknown command`, that phrase.

use super::node::NodeError;

/// The cause of one master's failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// No connection, no answer in time, or the connection broke.
    Unreachable,
    /// The password or user name was refused (`WRONGPASS`, `NOAUTH`).
    Authentication,
    /// A password was given to a master that has none set (its AUTH says "called without any
    /// password configured").
    UnneededPassword,
    /// The database number in the URL (`/N`) does not exist there (SELECT refused).
    Database,
    /// The user may not run a command redlock needs (`NOPERM`); the command, when named.
    Permission(Option<String>),
    /// The user may run EVAL but not a command a script calls (Redis answers "The user executing
    /// the script can't run this command", with no error code and no command named).
    ScriptPermission,
    /// The master does not run scripts: EVAL/EVALSHA renamed or disabled, or Lua unavailable.
    ScriptsUnavailable,
    /// The server is a read-only replica, not a master (`READONLY`).
    Replica,
    /// The server is out of memory under `noeviction` (`OOM`).
    OutOfMemory,
    /// The key exists and is not a lock (`WRONGTYPE`).
    NotALock,
    /// TLS was refused: a certificate that does not verify, or TLS spoken to a plain port (or
    /// the reverse).
    Tls,
    /// What came back was not a Redis reply redlock accepts (not RESP, or over the size caps).
    BadReply,
    /// A node of a Redis Cluster given as a single server: it redirects (`MOVED`, `ASK`) the
    /// keys whose slots it does not serve.
    ClusterNode,
    /// The master is a cluster that is down (`CLUSTERDOWN`): a shard without a reachable
    /// primary, or a cluster still forming.
    ClusterDown,
    /// Anything else the master answered.
    Other,
}

impl Cause {
    /// Whether fixing it means changing configuration (ours or the server's): exit 78.
    pub fn is_configuration(&self) -> bool {
        matches!(
            self,
            Cause::Authentication
                | Cause::UnneededPassword
                | Cause::Database
                | Cause::Permission(_)
                | Cause::ScriptPermission
                | Cause::ScriptsUnavailable
                | Cause::Replica
                | Cause::Tls
                | Cause::ClusterNode
        )
    }

    /// What to do about it, as the end of a sentence.
    pub fn advice(&self) -> String {
        match self {
            Cause::Unreachable => {
                "check that each runs and is reachable, and that its URL is right".into()
            }
            Cause::Authentication => {
                "authentication failed: check the password (and user name) for it".into()
            }
            Cause::UnneededPassword => "it has no password set, but one was given: remove the \
                                        password from its URL, REDLOCK_PASSWORD or the config \
                                        file (or set one on the server)"
                .into(),
            Cause::Database => {
                "the database number in its URL (/N) does not exist there: check the URL (Redis \
                 has 16 by default, 0 to 15)"
                    .into()
            }
            Cause::Permission(Some(command)) => format!(
                "its ACL user may not run {command}: grant it (docs/configuration-and-tls.md \
                 lists every command redlock needs; see `redlock doctor`)"
            ),
            Cause::Permission(None) => "its ACL user lacks a permission redlock needs: grant \
                                        it (docs/configuration-and-tls.md lists every command \
                                        redlock needs)"
                .into(),
            Cause::ScriptPermission => "its ACL user may not run a command that redlock's scripts \
                                        run: grant it (docs/configuration-and-tls.md lists \
                                        every command redlock needs)"
                .into(),
            Cause::ScriptsUnavailable => {
                "it does not run Lua scripts (EVAL/EVALSHA renamed or disabled): redlock needs \
                 them"
                    .into()
            }
            Cause::Replica => "it is a read-only replica: list independent masters only".into(),
            Cause::OutOfMemory => {
                "it is out of memory (maxmemory with noeviction): free memory or raise maxmemory"
                    .into()
            }
            Cause::NotALock => {
                "the key there holds something that is not a lock (a value of another type, \
                 written by something other than redlock): choose another --key, or delete that \
                 key"
                .into()
            }
            Cause::Tls => "check its TLS settings (scheme, port, certificates)".into(),
            Cause::BadReply => {
                "what it sent is not a Redis reply redlock accepts: check that the URL points at \
                 a Redis server"
                    .into()
            }
            Cause::ClusterNode => "it is a node of a Redis Cluster: give the cluster as \
                                   redis+cluster://host:port (rediss+cluster:// with TLS)"
                .into(),
            Cause::ClusterDown => {
                "its cluster is down (a shard without a reachable primary): see `redlock doctor`"
                    .into()
            }
            Cause::Other => "see the master's answer".into(),
        }
    }
}

impl NodeError {
    /// Why the master failed, in terms a user can act on.
    pub fn cause(&self) -> Cause {
        cause(self)
    }
}

/// Classifies one master's failure.
pub fn cause(error: &NodeError) -> Cause {
    let text = match error {
        NodeError::Timeout | NodeError::Io(_) => return Cause::Unreachable,
        NodeError::BadReply(_) => return Cause::BadReply,
        NodeError::Connect(text) | NodeError::Server(text) => text,
    };
    // An error reply may come prefixed ("AUTH refused: WRONGPASS ..."): look at each word that
    // could be the error code. Before Redis 7.0 an error inside a script comes wrapped, its code
    // with the protocol's dash ("ERR Error running script ...: -OOM command not allowed ...").
    let codes: Vec<&str> = text
        .split([' ', ':'])
        .map(|word| word.strip_prefix('-').unwrap_or(word))
        .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_uppercase()))
        .collect();
    let has = |code: &str| codes.contains(&code);
    let lower = text.to_ascii_lowercase();
    // The log-in steps of a new connection (see `node`) say which step was refused.
    let refused = |verb: &str| {
        matches!(error, NodeError::Connect(_)) && text.starts_with(&format!("{verb} refused:"))
    };
    if refused("AUTH") && lower.contains("without any password configured") {
        Cause::UnneededPassword
    } else if refused("SELECT") {
        Cause::Database
    } else if has("WRONGPASS")
        || has("NOAUTH")
        || lower.contains("invalid password")
        || refused("AUTH")
    {
        Cause::Authentication
    } else if has("NOPERM") {
        Cause::Permission(permission_command(text))
    } else if lower.contains("user executing the script can't run") {
        Cause::ScriptPermission
    } else if has("READONLY") {
        Cause::Replica
    } else if has("OOM") {
        Cause::OutOfMemory
    } else if has("WRONGTYPE") {
        Cause::NotALock
    } else if matches!(error, NodeError::Server(_))
        && (text.starts_with("MOVED ") || text.starts_with("ASK "))
    {
        Cause::ClusterNode
    } else if has("CLUSTERDOWN") {
        Cause::ClusterDown
    } else if has("NOSCRIPT") || unknown_script_command(&lower) {
        Cause::ScriptsUnavailable
    } else if matches!(error, NodeError::Connect(_))
        && (lower.contains("tls") || lower.contains("certificate"))
    {
        Cause::Tls
    } else if matches!(error, NodeError::Connect(_)) && !lower.contains(" refused:") {
        // Connection refused, no route, name not found: nothing answered.
        Cause::Unreachable
    } else {
        Cause::Other
    }
}

/// `ERR unknown command 'EVALSHA'` (and older servers' spelling with backquotes).
fn unknown_script_command(lower: &str) -> bool {
    lower.contains("unknown command") && (lower.contains("eval") || lower.contains("script"))
}

/// The command named in a NOPERM reply: "... has no permissions to run the 'evalsha' command".
fn permission_command(text: &str) -> Option<String> {
    let start = text.find("run the '")? + "run the '".len();
    let end = text[start..].find('\'')? + start;
    Some(text[start..end].to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(text: &str) -> Cause {
        cause(&NodeError::Server(text.into()))
    }

    #[test]
    fn error_codes_name_the_cause() {
        assert_eq!(
            cause(&NodeError::Connect(
                "AUTH refused: WRONGPASS invalid username-password pair or user is disabled."
                    .into()
            )),
            Cause::Authentication
        );
        assert_eq!(
            server("NOAUTH Authentication required."),
            Cause::Authentication
        );
        assert_eq!(
            server("NOPERM User ci has no permissions to run the 'evalsha' command"),
            Cause::Permission(Some("EVALSHA".into()))
        );
        assert_eq!(
            server(
                "ERR The user executing the script can't run this command or subcommand script: \
                 b2e7dcaa7c07082e6906fa09d9ded43b417a342f, on @user_script:106."
            ),
            Cause::ScriptPermission
        );
        assert_eq!(
            server("READONLY You can't write against a read only replica."),
            Cause::Replica
        );
        assert_eq!(
            server("OOM command not allowed when used memory > 'maxmemory'."),
            Cause::OutOfMemory
        );
        assert_eq!(
            server("WRONGTYPE Operation against a key holding the wrong kind of value"),
            Cause::NotALock
        );
        // Redis 6.2 wraps an error raised inside a script.
        assert_eq!(
            server(
                "ERR Error running script (call to f_39fcf578ba0bc856626fceac884ad813ccb1ac6c): \
                 @user_script:138: @user_script: 138: -OOM command not allowed when used memory \
                 > 'maxmemory'."
            ),
            Cause::OutOfMemory
        );
        assert_eq!(
            server("ERR unknown command 'EVALSHA', with args beginning with: "),
            Cause::ScriptsUnavailable
        );
        assert_eq!(server("ERR something else"), Cause::Other);
        assert_eq!(server("MOVED 15495 127.0.0.1:7002"), Cause::ClusterNode);
        assert_eq!(server("ASK 15495 127.0.0.1:7002"), Cause::ClusterNode);
        assert!(Cause::ClusterNode.is_configuration());
        // A cluster master names the node; only a plain server's own MOVED is this mistake.
        assert_eq!(server("node h:1: MOVED 1 h:2"), Cause::Other);
        assert_eq!(
            server("CLUSTERDOWN Hash slot not served"),
            Cause::ClusterDown
        );
    }

    #[test]
    fn refused_log_in_steps_are_configuration() {
        let connect = |text: &str| cause(&NodeError::Connect(text.into()));
        let unneeded = connect(
            "AUTH refused: ERR AUTH <password> called without any password configured for the \
             default user. Are you sure your configuration is correct?",
        );
        assert_eq!(unneeded, Cause::UnneededPassword);
        assert!(unneeded.is_configuration());
        assert_eq!(
            connect("AUTH refused: ERR something new"),
            Cause::Authentication
        );
        let database = connect("SELECT refused: ERR DB index is out of range");
        assert_eq!(database, Cause::Database);
        assert!(database.is_configuration());
    }

    #[test]
    fn only_silence_is_unreachable() {
        assert_eq!(cause(&NodeError::Timeout), Cause::Unreachable);
        assert_eq!(
            cause(&NodeError::Connect(
                "Connection refused (os error 111)".into()
            )),
            Cause::Unreachable
        );
        assert_eq!(
            cause(&NodeError::Io("connection closed".into())),
            Cause::Unreachable
        );
        assert!(!Cause::Unreachable.is_configuration());
        assert!(Cause::Authentication.is_configuration());
        assert!(!Cause::OutOfMemory.is_configuration());
    }

    #[test]
    fn tls_failures_are_configuration() {
        let tls = cause(&NodeError::Connect(
            "TLS handshake failed: invalid peer certificate: UnknownIssuer".into(),
        ));
        assert_eq!(tls, Cause::Tls);
        assert!(tls.is_configuration());
    }
}
