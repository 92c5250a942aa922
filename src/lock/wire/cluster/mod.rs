//! A Redis Cluster as one master (`redis+cluster://`): every request for lock K goes to the
//! node that owns K's hash slot, so the rounds and the algorithm see one master that answers
//! for K, as a single server does.
//!
//! What keeps it sound:
//! 1. **One slot, one node, one script.** Every key and channel of lock K is in K's slot (see
//!    `keys`), so each script runs whole on one node, atomically, as on a single server.
//! 2. **Only the owner runs a request.** A node that does not own the slot (any more, or not
//!    yet) does not run the request: it answers MOVED (the slot lives elsewhere), ASK (the slot
//!    is moving and the request's keys are not here: ask the importing node) or TRYAGAIN (the
//!    request's keys are split between the two while the slot moves). So following a redirection
//!    never runs a request on two nodes; sending it again elsewhere is as safe as sending it again
//!    after a broken connection (every script is idempotent, see `node`).
//! 3. **Order per node.** Each node has one kept connection (a `Node`, whose pipe keeps the
//!    caller's order), so the owner of K's slot runs K's requests in the order they were
//!    made: a release never overtakes an acquire there. ASKING and the request it is for are
//!    queued as one (`pipe::asking`), so no other request can take its one-shot flag.
//! 4. **Bounded.** At most [`MAX_REDIRECTS`] redirections and [`MAX_WAITS`] TRYAGAIN pauses per
//!    request, and all of it inside the round's per-node deadline (the round drops the
//!    request's future when the deadline passes).
//!
//! What it costs: a plain server pays nothing. A cluster's first request goes to the node the
//! URL names (the seed): no slot map is needed first, since a MOVED answer names the owner.
//! Once the seed's connection is open, its slot map (CLUSTER SLOTS) is asked for alongside a
//! request (on that connection, not waited for by it), so that a failover of any slot, the
//! seed's own included, can be followed; and it is asked again of other nodes when a node
//! cannot be reached, or let a request's deadline pass (a failover or a partition): the new
//! primary is found there. (A request the round stopped waiting for because it had decided
//! without this master says nothing about the node, and changes nothing.)
//!
//! Release notices use sharded pub/sub: the release script publishes with SPUBLISH on the node
//! that runs it (K's slot owner, which is where the channel's slot lives too), and waiters
//! SSUBSCRIBE there. A slot that moves ends its subscriptions (the server sends SUNSUBSCRIBE,
//! which ends the pipe): waiters fall back to polling, as for any lost notice.
//!
//! What it does not change (docs/redis-cluster.md): a cluster counts as one master. Its
//! replication is asynchronous, so a failover can promote a replica that never saw a lock its
//! old primary acknowledged: the lock is then gone from this master, as it would be from a
//! single server restarted empty. Redlock's quorum over several masters is what covers that.

pub(in crate::lock) mod hash_slot;
mod nodes;
pub(in crate::lock) mod slots;

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};

use super::cause::{Cause, cause};
use super::lua::Lua;
use super::master::{Address, Master};
use super::node::{Node, NodeError};
use super::pipe::Pipe;
use super::resp::Reply;
use super::subscription::Subscription;
use hash_slot::key_slot;
use slots::{Redirect, SLOTS};

/// The most MOVED and ASK redirections one request follows: a slot moves once at a time, and a
/// failover is one more hop. More is a cluster whose nodes disagree; the request fails.
const MAX_REDIRECTS: u32 = 5;

/// The most TRYAGAIN answers one request waits out, with pauses from [`FIRST_PAUSE`] doubling
/// up to [`LONGEST_PAUSE`] (about a second in all): MIGRATE moves a slot's keys in moments.
const MAX_WAITS: u32 = 16;
const FIRST_PAUSE: Duration = Duration::from_millis(2);
const LONGEST_PAUSE: Duration = Duration::from_millis(100);

/// How many other nodes are asked at once for the slot map when one fails.
const ASKED_FOR_MAP: usize = 3;

/// Index of the seed in `State::nodes`.
const SEED: usize = 0;
/// A slot whose owner is not known: ask the seed.
const UNKNOWN: u16 = u16::MAX;

/// A Redis Cluster, reached through the node its URL names.
pub(crate) struct Cluster {
    /// The URL: its scheme and login are every node's.
    seed: Master,
    tls: Option<Arc<rustls::ClientConfig>>,
    state: Mutex<State>,
}

struct State {
    /// Every node known: the seed first, then those named by MOVED, ASK and CLUSTER SLOTS.
    nodes: Vec<Known>,
    /// The owner of each slot, as an index into `nodes`; empty until one is learned.
    owners: Vec<u16>,
    /// Whether a slot map was applied, or refused (then it is asked for only on failures).
    mapped: bool,
    /// The node of the latest request: the one to blame when a deadline passes.
    last: usize,
}

struct Known {
    /// `host:port`, as the cluster writes it (see `slots`).
    address: String,
    node: Arc<Node>,
    /// A request to it found its deadline passed: look at the slot map before the next one.
    suspect: bool,
}

impl Cluster {
    pub(crate) fn new(seed: Master, tls: Option<Arc<rustls::ClientConfig>>) -> Cluster {
        let address = match seed.address() {
            Address::Tcp { host, port, .. } => format!("{host}:{port}"),
            // `redis+cluster://` is always TCP (see `scheme`).
            Address::Unix(path) => path.display().to_string(),
        };
        let node = Arc::new(Node::new(seed.clone(), tls.clone()));
        Cluster {
            seed,
            tls,
            state: Mutex::new(State {
                nodes: vec![Known {
                    address,
                    node,
                    suspect: false,
                }],
                owners: Vec::new(),
                mapped: false,
                last: SEED,
            }),
        }
    }

    /// Runs `script` on the node that owns the slot of `keys[0]` (every key of a script is in
    /// one slot, see `keys`).
    pub(crate) async fn eval(
        &self,
        script: &Lua,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<Reply, NodeError> {
        self.routed(key_slot(keys[0]), move |node: Arc<Node>, asking| async move {
            node.eval(script, keys, args, asking).await
        })
        .await
    }

    /// Runs a plain command about `key` on the node that owns its slot.
    pub(crate) async fn command(&self, key: &str, args: &[&[u8]]) -> Result<Reply, NodeError> {
        self.routed(key_slot(key), move |node: Arc<Node>, asking| async move {
            node.command_asking(args, asking).await
        })
        .await
    }

    /// A connection subscribed (SSUBSCRIBE) to `channel` on the node that owns its slot.
    pub(crate) async fn subscribe(&self, channel: &str) -> Result<Pipe, NodeError> {
        self.routed(key_slot(channel), move |node: Arc<Node>, _| async move {
            node.subscribe(channel, true).await
        })
        .await
    }

    /// A subscription (SSUBSCRIBE) to `channel` on the node that owns its slot, on the kept
    /// connection where the node allows it (see `Node::listen`).
    pub(crate) async fn listen(&self, channel: &str) -> Result<Subscription, NodeError> {
        self.routed(key_slot(channel), move |node: Arc<Node>, _| async move {
            node.listen(channel, true).await
        })
        .await
    }

    /// True when every request queued to any node is on the wire (see `Node::is_flushed`).
    pub(crate) fn is_flushed(&self, patience: Duration) -> bool {
        let state = self.lock();
        state
            .nodes
            .iter()
            .all(|known| known.node.is_flushed(patience))
    }

    /// True while a kept connection to any node is open.
    pub(crate) fn is_connected(&self) -> bool {
        self.lock()
            .nodes
            .iter()
            .any(|known| known.node.is_connected())
    }

    /// See `Node::stranded_since`; for any node.
    /// See [`Node::take_unwanted_refusal`]; of any of its nodes.
    pub(crate) fn take_unwanted_refusal(&self) -> Option<NodeError> {
        self.lock()
            .nodes
            .iter()
            .find_map(|known| known.node.take_unwanted_refusal())
    }

    pub(crate) fn stranded_since(&self, since: Instant) -> bool {
        let state = self.lock();
        state
            .nodes
            .iter()
            .any(|known| known.node.stranded_since(since))
    }

    /// What to report when a deadline passed: about the node the latest request went to,
    /// which becomes suspect: before the next request to it, the slot map is asked of the
    /// others (a failover, or a partition, may have moved its slots).
    pub(crate) fn timed_out(&self) -> NodeError {
        let (index, node) = {
            let mut state = self.lock();
            let last = state.last;
            state.nodes[last].suspect = true;
            (last, state.nodes[last].node.clone())
        };
        self.named(index, node.timed_out())
    }

    /// Sends a request (`send`: to this node, after ASKING or not) to the owner of `slot`,
    /// following redirections and failures (see the module header).
    async fn routed<T, F, Fut>(&self, slot: u16, send: F) -> Result<T, NodeError>
    where
        F: Fn(Arc<Node>, bool) -> Fut,
        Fut: Future<Output = Result<T, NodeError>>,
    {
        let mut redirects = 0;
        let mut waits = 0;
        let mut refreshed = false;
        let mut ask: Option<usize> = None;
        loop {
            let asking = ask.is_some();
            let index = match ask.take() {
                Some(index) => index,
                None => {
                    let owner = self.owner(slot);
                    if self.lock().nodes[owner].suspect && !refreshed {
                        refreshed = true;
                        self.refresh(owner).await;
                        self.owner(slot)
                    } else {
                        owner
                    }
                }
            };
            let (node, address) = {
                let mut state = self.lock();
                state.last = index;
                let known = &state.nodes[index];
                (known.node.clone(), known.address.clone())
            };
            let answer = self.with_map(send(node, asking)).await;
            self.lock().nodes[index].suspect = false;
            let error = match answer {
                Ok(value) => return Ok(value),
                Err(error) => error,
            };
            let redirect = match &error {
                NodeError::Server(text) => Redirect::parse(text, &address),
                _ => None,
            };
            // Told apart from a node given as a single server (see `cause`): this one is in a
            // cluster, but where it sends us cannot be reached.
            let error = match error {
                NodeError::Server(text) if redirect.is_none() && slots::is_redirection(&text) => {
                    NodeError::Server(format!(
                        "the node sent a redirection that cannot be followed (check the \
                         addresses the cluster's nodes announce): {text}"
                    ))
                }
                error => error,
            };
            match redirect {
                Some(Redirect::Moved { slot, address }) if redirects < MAX_REDIRECTS => {
                    redirects += 1;
                    let owner = self.index_of(&address)?;
                    let mut state = self.lock();
                    if state.owners.is_empty() {
                        state.owners = vec![UNKNOWN; SLOTS];
                    }
                    state.owners[usize::from(slot)] = owner as u16;
                    log::debug!("{}: slot {slot} is at {address}", self.seed);
                    continue;
                }
                Some(Redirect::Ask { address }) if redirects < MAX_REDIRECTS => {
                    redirects += 1;
                    ask = Some(self.index_of(&address)?);
                    log::debug!("{}: slot {slot} is moving to {address}", self.seed);
                    continue;
                }
                Some(Redirect::TryAgain) if waits < MAX_WAITS => {
                    let pause = (FIRST_PAUSE * 2u32.pow(waits.min(6))).min(LONGEST_PAUSE);
                    waits += 1;
                    // From the importing node: ask it again, not the old owner (which would
                    // only send us back with another ASK).
                    ask = asking.then_some(index);
                    log::debug!(
                        "{}: slot {slot} is moving: TRYAGAIN in {pause:?}",
                        self.seed
                    );
                    tokio::time::sleep(pause).await;
                    continue;
                }
                Some(Redirect::Moved { .. } | Redirect::Ask { .. }) => {
                    let last = match &error {
                        NodeError::Server(text) => text.as_str(),
                        _ => "",
                    };
                    let why =
                        format!("still redirected after {MAX_REDIRECTS} redirections: {last}");
                    return Err(self.named(index, NodeError::Server(why)));
                }
                _ => {}
            }
            let unreachable = matches!(error, NodeError::Connect(_) | NodeError::Io(_))
                && cause(&error) == Cause::Unreachable;
            if unreachable && !refreshed {
                // Gone, or no longer the owner (a failover): the other nodes know.
                refreshed = true;
                if self.refresh(index).await && self.owner(slot) != index {
                    continue;
                }
            }
            return Err(self.named(index, error));
        }
    }

    /// Runs `request`, and meanwhile asks the seed for the slot map if it was never had and
    /// the seed's connection is open (so asking costs no connection and no wait: the request's
    /// answer is not held up by it; a map that arrives after it is dropped, and asked again).
    async fn with_map<T>(&self, request: impl Future<Output = T>) -> T {
        let seed = {
            let state = self.lock();
            let seed = &state.nodes[SEED].node;
            if state.mapped || !seed.is_connected() {
                None
            } else {
                Some(seed.clone())
            }
        };
        let Some(seed) = seed else {
            return request.await;
        };
        let mut request = pin!(request);
        let mut map = pin!(async move { seed.command(&[b"CLUSTER", b"SLOTS"]).await });
        let mut map_done = false;
        poll_fn(|cx| {
            // The request first: on a shared connection, it is queued ahead of the map.
            let answer = request.as_mut().poll(cx);
            if !map_done && let Poll::Ready(map) = map.as_mut().poll(cx) {
                map_done = true;
                self.apply(SEED, map);
            }
            answer
        })
        .await
    }

    /// Asks up to [`ASKED_FOR_MAP`] nodes other than `failed` at once for the slot map, and
    /// applies the first that answers with one. True when one did.
    async fn refresh(&self, failed: usize) -> bool {
        let asked: Vec<(usize, Arc<Node>)> = {
            let state = self.lock();
            let mut candidates: Vec<usize> =
                (0..state.nodes.len()).filter(|&i| i != failed).collect();
            // Nodes that answered lately first, the seed before the rest.
            candidates.sort_by_key(|&i| (state.nodes[i].suspect, i));
            candidates
                .into_iter()
                .take(ASKED_FOR_MAP)
                .map(|i| (i, state.nodes[i].node.clone()))
                .collect()
        };
        let mut answers: FuturesUnordered<_> = asked
            .into_iter()
            .map(
                |(index, node)| async move { (index, node.command(&[b"CLUSTER", b"SLOTS"]).await) },
            )
            .collect();
        while let Some((index, answer)) = answers.next().await {
            if self.apply(index, answer) {
                return true;
            }
        }
        false
    }

    /// Takes a CLUSTER SLOTS answer of node `asked` as the slot map; true when it was one.
    fn apply(&self, asked: usize, answer: Result<Reply, NodeError>) -> bool {
        let address = self.lock().nodes[asked].address.clone();
        let ranges = match answer {
            Ok(reply) => slots::parse_slots(&reply, &address),
            Err(error) => {
                log::debug!("{}: no slot map from {address}: {error}", self.seed);
                // Refused (an ACL without CLUSTER, a server that is no cluster node): redirects
                // still find every owner; ask again only when a node fails.
                self.lock().mapped |= matches!(error, NodeError::Server(_));
                return false;
            }
        };
        let Some(ranges) = ranges else {
            log::debug!("{}: {address} sent no slot map", self.seed);
            return false;
        };
        let mut owners = vec![UNKNOWN; SLOTS];
        for range in &ranges {
            for member in std::iter::once(&range.primary).chain(&range.replicas) {
                // A node the map names at no usable address: its slots stay unknown.
                let _ = self.index_of(&member.address);
            }
            if let Ok(owner) = self.index_of(&range.primary.address) {
                owners[usize::from(range.first)..=usize::from(range.last)].fill(owner as u16);
            }
        }
        let mut state = self.lock();
        state.owners = owners;
        state.mapped = true;
        log::debug!(
            "{}: slot map from {address}: {} ranges over {} nodes",
            self.seed,
            ranges.len(),
            state.nodes.len()
        );
        true
    }

    /// The node to ask about `slot`: its owner if known, else the seed.
    fn owner(&self, slot: u16) -> usize {
        let state = self.lock();
        match state.owners.get(usize::from(slot)) {
            Some(&owner) if owner != UNKNOWN => usize::from(owner),
            _ => SEED,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("cluster state poisoned")
    }
}
