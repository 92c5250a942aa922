//! The wire: how a request reaches one master and its answer comes back. The lowest layer of
//! `lock/`; it names nothing above it.
//!
//! Holds: `resp` (the Redis protocol both ways, the reply value), `pipe` (a connection's ordered
//! requests and answers, proof of what was sent, coalesced pushes), `node` (every connection to
//! one server: connecting, logging in, running scripts, subscribing), `lua` (a script as a node
//! runs it: EVALSHA, falling back to EVAL), `master` and `scheme` (server URLs, redaction,
//! identity, TLS and cluster schemes), `cluster` (a whole Redis Cluster as one master: slot
//! map, MOVED/ASK/TRYAGAIN, hash slots), `endpoint` (one master as the rounds see it: a server
//! or a cluster), `notices` and `subscription` (release notices, on the kept connection
//! where the master speaks RESP3), and `cause` (why a master failed, in terms a
//! user can act on).
//!
//! Promises: a request to a master either gets that master's answer or a [`node::NodeError`]
//! that names it; nothing is retried behind the caller's back except a cluster's redirections;
//! a password never leaves `master` unredacted. Its surface is [`endpoint::Endpoint`] (eval,
//! command, subscribe) and the URL types; no redis-rs type appears in it (redis-rs only parses
//! URLs, inside `master`).

pub(super) mod cause;
pub(super) mod cluster;
pub(super) mod endpoint;
pub(super) mod lua;
pub(super) mod master;
pub(super) mod node;
pub(super) mod notices;
pub(super) mod pipe;
pub(super) mod resp;
pub(super) mod scheme;
pub(super) mod subscription;
