//! Running the checker over a model, and what the tests conclude from it. Shared with
//! tests/rw_model, which includes this file by its path.

use std::fmt::Debug;
use std::hash::Hash;
use std::time::Instant;

use stateright::{Checker, Expectation, Model, Path};

/// How a model's counterexample is told.
pub type Tell<M> = fn(&M, Path<<M as Model>::State, <M as Model>::Action>) -> String;

/// Explores every state of `model` (breadth first: a counterexample is a shortest one), and
/// says how many and how long.
pub fn explore<M>(model: M, threads: usize) -> impl Checker<M>
where
    M: Model + Debug + Send + Sync + 'static,
    M::State: Hash + Send + Sync + Clone + PartialEq + 'static,
    M::Action: Clone + PartialEq,
{
    let start = Instant::now();
    let described = format!("{model:?}");
    let checker = model.checker().threads(threads).spawn_bfs().join();
    println!(
        "{described}: {} states ({} distinct), {} steps deep, checked in {:.1?}",
        checker.state_count(),
        checker.unique_state_count(),
        checker.max_depth(),
        start.elapsed()
    );
    checker
}

/// Checks that every property holds in `model` (and that every `sometimes` is met), telling
/// the path to any counterexample.
pub fn holds<M>(model: M, tell: Tell<M>)
where
    M: Model + Debug + Send + Sync + 'static,
    M::State: Hash + Send + Sync + Clone + PartialEq + 'static,
    M::Action: Clone + PartialEq,
{
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let checker = explore(model, threads);
    assert!(checker.is_done());
    for property in checker.model().properties() {
        let found = checker.discovery(property.name);
        match (property.expectation, found) {
            (Expectation::Sometimes, None) => panic!("no run where {:?}", property.name),
            (Expectation::Sometimes, Some(_)) | (_, None) => {}
            (_, Some(path)) => panic!(
                "{:?} fails:\n{}",
                property.name,
                tell(checker.model(), path)
            ),
        }
    }
}
