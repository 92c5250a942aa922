//! A client's connections to the masters: the requests written to each and not yet run, in
//! order, whatever a model's requests are (`R`).

/// The most requests one connection carries at once in the models: an ACQUIRE still running,
/// its undo, the join turn's WAIT, which a turn won elsewhere leaves on the wire, then a
/// renewal and a release (or an undo and a LEAVE): five.
const WIRE: usize = 5;

/// A request on the wire, in its connection's order.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Sent<R> {
    pub request: R,
    /// The round that sent it still waits for its answer (a decided round stops listening).
    pub awaited: bool,
}

/// One connection's requests on the wire, oldest first: a master runs them in that order.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Wire<R>([Option<Sent<R>>; WIRE]);

impl<R> Default for Wire<R> {
    fn default() -> Self {
        Wire(std::array::from_fn(|_| None))
    }
}

impl<R: Copy> Wire<R> {
    pub fn push(&mut self, sent: Sent<R>) {
        let free = self.0.iter_mut().find(|slot| slot.is_none());
        *free.expect("more requests on one connection than the model allows") = Some(sent);
    }

    /// Takes the oldest request.
    pub fn pop(&mut self) -> Option<Sent<R>> {
        let oldest = self.0[0].take();
        self.0.rotate_left(1);
        oldest
    }

    pub fn oldest(&self) -> Option<Sent<R>> {
        self.0[0]
    }

    pub fn is_empty(&self) -> bool {
        self.0[0].is_none()
    }

    /// The requests on the wire, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Sent<R>> {
        self.0.iter().flatten()
    }

    /// The connection broke: what was on the wire is gone (the next request reconnects).
    /// Whether any of it was awaited.
    pub fn cut(&mut self) -> bool {
        let awaited = self.iter().any(|sent| sent.awaited);
        *self = Wire::default();
        awaited
    }
}

/// Writes `request` to every connection, its answers `awaited` or not.
pub fn write_all<R: Copy>(wires: &mut [Wire<R>], request: R, awaited: bool) {
    for wire in wires {
        wire.push(Sent { request, awaited });
    }
}

/// The round is decided (or abandoned): later answers are not listened to.
pub fn stop_awaiting<R>(wires: &mut [Wire<R>]) {
    for sent in wires
        .iter_mut()
        .flat_map(|wire| wire.0.iter_mut().flatten())
    {
        sent.awaited = false;
    }
}
