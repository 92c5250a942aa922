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
//!
//! **An ACL refusal names the command and the user, whoever words it.** Servers say it three
//! ways: `NOPERM User ci has no permissions to run the 'evalsha' command` (Redis 7.2, Valkey;
//! Redis 7.0 says "this user"), and inside a script Valkey's `ERR ACL failure in script: User
//! ci has no permissions to run the 'pexpireat' command ...` but Redis's `ERR The user executing
//! the script can't run this command or subcommand script: SHA, on @user_script:106.`, which
//! names neither. What a refusal leaves out, the node that got it knows: the user it logged in
//! as, and the script it ran, whose line 106 names the command. It adds them in a note
//! (`node::acl_note`) that this classification reads as it reads the servers' words.

use super::node::NodeError;
use super::node::acl_note::{AS_USER, RUNS, SCRIPT_REFUSAL, quoted};

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
    /// The user may not run a command redlock needs, or one its scripts run.
    Permission(Refusal),
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
            Cause::Permission(refusal) => refusal.advice(),
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

/// What an ACL refusal says, or the note beside it (`node::acl_note`): the command and the
/// user, where known, and whether it was a command inside one of redlock's scripts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub command: Option<String>,
    pub user: Option<String>,
    pub in_script: bool,
}

impl Refusal {
    fn advice(&self) -> String {
        const LIST: &str = "docs/configuration-and-tls.md lists every command redlock needs";
        let user = match &self.user {
            Some(user) => format!("its ACL user {user:?}"),
            None => "its ACL user".into(),
        };
        let scripts = if self.in_script {
            ", which redlock's scripts run"
        } else {
            ""
        };
        match (&self.command, &self.user) {
            (Some(command), Some(name)) => format!(
                "{user} may not run {command}{scripts}: grant it (ACL SETUSER {name} +{}; \
                 {LIST}; see `redlock doctor`)",
                command.to_ascii_lowercase()
            ),
            (Some(command), None) => {
                format!("{user} may not run {command}{scripts}: grant it ({LIST})")
            }
            (None, _) if self.in_script => {
                format!(
                    "{user} may not run a command that redlock's scripts run: grant it ({LIST})"
                )
            }
            (None, _) => format!("{user} lacks a permission redlock needs: grant it ({LIST})"),
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
    } else if has("NOPERM")
        || lower.contains(SCRIPT_REFUSAL)
        || lower.contains("acl failure in script")
    {
        Cause::Permission(Refusal {
            command: quoted(text, "run the '", &['\''])
                .or_else(|| quoted(text, RUNS, &[')']))
                .map(|command| command.to_ascii_uppercase()),
            user: quoted(text, "User ", &[' ']).or_else(|| quoted(text, AS_USER, &[',', ')'])),
            in_script: lower.contains("script"),
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::wire::node::acl_note::permission_note;

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
            refusal(Some("EVALSHA"), Some("ci"), false)
        );
        assert_eq!(
            server(
                "ERR The user executing the script can't run this command or subcommand script: \
                 b2e7dcaa7c07082e6906fa09d9ded43b417a342f, on @user_script:106."
            ),
            refusal(None, None, true)
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

    fn refusal(command: Option<&str>, user: Option<&str>, in_script: bool) -> Cause {
        Cause::Permission(Refusal {
            command: command.map(Into::into),
            user: user.map(Into::into),
            in_script,
        })
    }

    /// Issue 48: each server's words for a refused command, inside a script or not, as
    /// Redis 7.0.15, Valkey 8.1.8 and Valkey 9.1.2 write them, with the node's note where one
    /// leaves something out: the same cause, naming the command and the user.
    #[test]
    fn acl_refusals_name_the_command_and_the_user_in_every_servers_words() {
        let script = "local a = redis.call('GET', KEYS[1])\nredis.call('PEXPIREAT', KEYS[1], 1)";
        let noted = |text: &str| {
            let note = permission_note(text, "ci", Some(script));
            server(&note.unwrap_or_else(|| text.to_string()))
        };
        let in_script = refusal(Some("PEXPIREAT"), Some("ci"), true);
        // Redis 7.0: neither named; line 2 of the script runs PEXPIREAT.
        assert_eq!(
            noted(
                "ERR The user executing the script can't run this command or subcommand script: \
                 92a511013104ea9318147493f0f946dff889947c, on @user_script:2."
            ),
            in_script
        );
        // Valkey 9.1 (EVAL: no SHA1) and 8.1: both named, nothing added.
        for valkey in [
            "ERR ACL failure in script: User ci has no permissions to run the 'pexpireat' \
             command script: on @user_script:2.",
            "ERR ACL failure in script: User ci has no permissions to run the 'pexpireat' \
             command script: 92a511013104ea9318147493f0f946dff889947c, on @user_script:2.",
        ] {
            assert_eq!(permission_note(valkey, "ci", Some(script)), None);
            assert_eq!(server(valkey), in_script);
        }
        // Outside a script: Redis 7.0 says "this user", Valkey (and Redis 7.2) the name.
        let eval = refusal(Some("EVAL"), Some("ci"), false);
        assert_eq!(
            noted("NOPERM this user has no permissions to run the 'eval' command"),
            eval
        );
        assert_eq!(
            noted("NOPERM User ci has no permissions to run the 'eval' command"),
            eval
        );
        // A line that calls two commands, or none by name: the command is not guessed.
        let two = "redis.call('GET', KEYS[1]) redis.call('PEXPIREAT', KEYS[1], 1)";
        let text = "ERR The user executing the script can't run this command or subcommand \
                    script: 92a5, on @user_script:1.";
        let note = permission_note(text, "default", Some(two)).unwrap();
        assert_eq!(server(&note), refusal(None, Some("default"), true));
        // The advice names both, and how to grant it.
        let Cause::Permission(refused) = &in_script else {
            unreachable!()
        };
        let advice = refused.advice();
        assert!(
            advice
                .contains("its ACL user \"ci\" may not run PEXPIREAT, which redlock's scripts run")
                && advice.contains("ACL SETUSER ci +pexpireat"),
            "{advice}"
        );
        assert!(in_script.is_configuration());
        // Not a refusal: no note.
        assert_eq!(
            permission_note("ERR something else", "ci", Some(script)),
            None
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
