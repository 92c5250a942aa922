//! Running the checker over a model, and what the tests conclude from it.

use std::fmt::Debug;
use std::hash::Hash;
use std::time::Instant;

use stateright::{Checker, Expectation, HasDiscoveries, Model, Path};

/// How a model's counterexample is told.
pub type Tell<M> = fn(&M, Path<<M as Model>::State, <M as Model>::Action>) -> String;

/// Explores every state of `model` breadth first, and says how many and how long. (Each
/// counterexample the checker keeps is the last one it visited: see `shortest`.)
pub fn explore<M>(model: M, threads: usize) -> impl Checker<M>
where
    M: Model + Debug + Send + Sync + 'static,
    M::State: Hash + Send + Sync + Clone + PartialEq + 'static,
    M::Action: Clone + PartialEq,
{
    search(model, threads, HasDiscoveries::All)
}

/// Explores `model` breadth first, on one thread (the same figures every run), until a state
/// where `property` fails is found, and says how many states that took and how deep the search
/// went; the path to that state (none when the whole model was explored without one). For a
/// known-bad rule whose full search costs more than finding its counterexample.
#[allow(dead_code)]
pub fn until_caught<M>(model: M, property: &'static str) -> Option<Path<M::State, M::Action>>
where
    M: Model + Debug + Send + Sync + 'static,
    M::State: Hash + Send + Sync + Clone + PartialEq + 'static,
    M::Action: Clone + PartialEq,
{
    let found = HasDiscoveries::AnyOf([property].into());
    search(model, 1, found).discovery(property)
}

/// Explores `model` breadth first until `finish` (or every state), and says how many states,
/// how deep and how long.
fn search<M>(model: M, threads: usize, finish: HasDiscoveries) -> impl Checker<M>
where
    M: Model + Debug + Send + Sync + 'static,
    M::State: Hash + Send + Sync + Clone + PartialEq + 'static,
    M::Action: Clone + PartialEq,
{
    let start = Instant::now();
    let described = format!("{model:?}");
    let checker = model
        .checker()
        .threads(threads)
        .finish_when(finish)
        .spawn_bfs()
        .join();
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

/// A shortest path to a state where `property` fails, which `full` (the exploration of all
/// of `model`) found. The checker keeps the last counterexample it visits (a deep one, once
/// it explores on for other properties), so this bisects the depth bound within which it
/// finds one; on one thread, so that the same path is told every run. (tests/rw_model tells
/// its counterexamples so; queue_model's are long enough that it tells the one it keeps.)
#[allow(dead_code)]
pub fn shortest<M>(
    model: &M,
    full: &impl Checker<M>,
    property: &'static str,
) -> Path<M::State, M::Action>
where
    M: Model + Clone + Debug + Send + Sync + 'static,
    M::State: Hash + Send + Sync + Clone + PartialEq + 'static,
    M::Action: Clone + PartialEq,
{
    let within = |depth: usize| {
        let checker = model.clone().checker().target_max_depth(depth);
        checker.spawn_bfs().join().discovery(property)
    };
    full.assert_any_discovery(property);
    let (mut low, mut high) = (1, full.max_depth() + 1);
    while low < high {
        let middle = (low + high) / 2;
        match within(middle) {
            Some(_) => high = middle,
            None => low = middle + 1,
        }
    }
    within(high).expect("a counterexample within the bound found")
}
