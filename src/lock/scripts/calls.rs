//! How a script is called: the one way a script's KEYS and ARGV are put together, so that no
//! caller builds them by hand.
//!
//! Each script is declared once, in the table (`scripts::TABLE`): a [`Script`] with its
//! arguments' type, the keys it takes ([`Through`]: the first keys of the one layout,
//! `keys::Names::keys`, named by the last) and how many arguments it reads. Its arguments are
//! a struct of their own (`calls::args`) whose builder ([`Args::argv`]) puts them in ARGV
//! order. Two checks keep a call and its script together:
//! 1. **A script takes only its own arguments' type**: [`Script<A>`] runs with an `A` and
//!    nothing else, so a call with another script's arguments does not compile;
//! 2. **A declaration says what the Lua reads**: a test (`scripts/tests.rs`) reads every
//!    script's highest `KEYS[n]` and `ARGV[n]` in the Lua that is sent and compares them with
//!    its declaration, and builds every argument type to compare its count with it; each run
//!    checks the count again (in debug builds).
//!
//! Per master, a script's arguments may differ in one thing only: the command a master
//! announces with (PUBLISH, or SPUBLISH on a cluster: `Endpoint::publish_command`), which
//! [`Args::argv`] is given.

use std::marker::PhantomData;
use std::sync::LazyLock;

use super::keys::Through;
use crate::lock::wire::endpoint::Endpoint;
use crate::lock::wire::lua::Lua;
use crate::lock::wire::node::{Node, NodeError};
use crate::lock::wire::resp::Reply;

pub(in crate::lock) mod args;

/// A script as the table declares it, whatever its arguments' type: its name, its Lua, the
/// keys it takes and how many arguments it reads.
pub(in crate::lock) struct Row {
    pub name: &'static str,
    pub lua: &'static LazyLock<Lua>,
    pub keys: Through,
    pub argv: usize,
}

/// A script that runs with arguments of type `A` (see the module header).
pub(in crate::lock) struct Script<A> {
    pub row: Row,
    args: PhantomData<fn(&A)>,
}

/// A script's arguments, in ARGV order (`publish`: the command the master announces with).
pub(in crate::lock) trait Args {
    fn argv<'a>(&'a self, publish: &'a [u8]) -> Vec<&'a [u8]>;
}

impl<A: Args> Script<A> {
    pub(in crate::lock) const fn new(
        name: &'static str,
        lua: &'static LazyLock<Lua>,
        keys: Through,
        argv: usize,
    ) -> Script<A> {
        Script {
            row: Row {
                name,
                lua,
                keys,
                argv,
            },
            args: PhantomData,
        }
    }

    /// Runs the script on `node` with `args`, over `layout` (`keys::Names::keys`, or fewer
    /// keys where the script takes fewer).
    pub(in crate::lock) async fn run(
        &self,
        node: &Endpoint,
        layout: &[&str],
        args: &A,
    ) -> Result<Reply, NodeError> {
        self.row.run(node, layout, args).await
    }

    /// [`Script::run`] on one server directly (`list`'s pages), announcing with `publish`.
    pub(in crate::lock) async fn run_on(
        &self,
        node: &Node,
        layout: &[&str],
        args: &A,
        publish: &[u8],
    ) -> Result<Reply, NodeError> {
        self.row.run_on(node, layout, args, publish).await
    }
}

impl Row {
    /// The script's keys: the first of `layout`, through its last.
    pub(in crate::lock) fn keys<'l>(&self, layout: &'l [&'l str]) -> &'l [&'l str] {
        &layout[..self.keys.count()]
    }

    fn argv<'a>(&self, args: &'a (impl Args + ?Sized), publish: &'a [u8]) -> Vec<&'a [u8]> {
        let argv = args.argv(publish);
        debug_assert_eq!(argv.len(), self.argv, "{}'s arguments", self.name);
        argv
    }

    async fn run(
        &self,
        node: &Endpoint,
        layout: &[&str],
        args: &(impl Args + ?Sized),
    ) -> Result<Reply, NodeError> {
        let argv = self.argv(args, node.publish_command().as_bytes());
        node.eval(self.lua, self.keys(layout), &argv).await
    }

    async fn run_on(
        &self,
        node: &Node,
        layout: &[&str],
        args: &(impl Args + ?Sized),
        publish: &[u8],
    ) -> Result<Reply, NodeError> {
        let argv = self.argv(args, publish);
        node.eval(self.lua, self.keys(layout), &argv, false).await
    }
}

/// `script`'s row, with how many arguments its type builds from defaults (for the table's
/// test: `scripts::built`).
#[cfg(test)]
pub(in crate::lock) fn built<A: Args + Default>(
    script: &'static Script<A>,
) -> (&'static Row, usize) {
    (&script.row, A::default().argv(b"PUBLISH").len())
}

/// One script with its arguments, as the engine sends a kind's call without knowing which it
/// is (a waiter's turn, an extension, leaving the line: see `kinds::seam`).
pub(in crate::lock) struct Call {
    script: &'static Row,
    args: Box<dyn Args + Send + Sync>,
}

impl Call {
    pub(in crate::lock) fn new<A: Args + Send + Sync + 'static>(
        script: &'static Script<A>,
        args: A,
    ) -> Call {
        Call {
            script: &script.row,
            args: Box::new(args),
        }
    }

    /// Runs it on `node`, over `layout` (`keys::Names::keys`).
    pub(in crate::lock) async fn run(
        &self,
        node: &Endpoint,
        layout: &[&str],
    ) -> Result<Reply, NodeError> {
        self.script.run(node, layout, &*self.args).await
    }

    /// [`Call::run`] on one server directly (`doctor`'s probe), announcing with `publish`.
    pub(in crate::lock) async fn run_on(
        &self,
        node: &Node,
        layout: &[&str],
        publish: &[u8],
    ) -> Result<Reply, NodeError> {
        self.script.run_on(node, layout, &*self.args, publish).await
    }
}

#[cfg(test)]
mod tests;
