//! Why one master did not answer usefully: the error every round records per master, shown
//! escaped (it may carry what a server sent).

/// Why one master did not answer usefully.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeError {
    /// No answer before the per-node deadline.
    Timeout,
    /// Could not connect or log in.
    Connect(String),
    /// The master answered with an error (read-only replica, out of memory, loading, ...).
    Server(String),
    /// The connection broke.
    Io(String),
    /// The master sent something that cannot be a reply to our request (not RESP, or over
    /// the caps of `resp`); its connection was closed.
    BadReply(String),
}

/// The text is shown escaped (see `crate::escape`): it may carry what a server sent.
impl NodeError {
    /// Whether the master itself answered (with an error, or with bytes that are no reply):
    /// reachable, unlike a timeout, a broken connection or one never made.
    pub fn answered(&self) -> bool {
        matches!(self, NodeError::Server(_) | NodeError::BadReply(_))
    }
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, why) = match self {
            NodeError::Timeout => return f.write_str("timed out"),
            NodeError::Connect(why) => ("cannot connect", why),
            NodeError::Server(why) => ("error reply", why),
            NodeError::Io(why) => ("connection failed", why),
            NodeError::BadReply(why) => ("bad reply", why),
        };
        write!(f, "{what}: {}", crate::escape::visible(why))
    }
}
