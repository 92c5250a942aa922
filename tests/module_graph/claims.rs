//! docs/architecture.md's claims about who names whom, checked against the module graph, so
//! that the page cannot go on saying what the code no longer does (issue 36).
//!
//! The claims are the lines of the page's fenced block tagged `names`, one per line:
//! - `A names B`: some module in A (A or one below it) has an arrow into B;
//! - `A names no B`: no module in A has an arrow into B;
//! - `A names only B, C`: every arrow that leaves A goes into B or C.
//!
//! Each side may list several modules (`cli, config names no lock::wire` claims it of each
//! pair); a module is written as in code (`lock::kinds::client`), `crate` being the root. A
//! module that does not exist is a false claim too: a move must update the page.

use std::collections::{BTreeMap, BTreeSet};

use super::{Module, graph};
use crate::common::manual;

#[derive(Debug, PartialEq)]
enum Relation {
    Names,
    NamesNo,
    NamesOnly,
}

#[derive(Debug, PartialEq)]
struct Claim {
    line: String,
    from: Vec<Module>,
    relation: Relation,
    to: Vec<Module>,
}

fn module(name: &str) -> Module {
    match name.trim() {
        "crate" => Vec::new(),
        name => name.split("::").map(str::to_string).collect(),
    }
}

fn modules(list: &str) -> Vec<Module> {
    list.split(',').map(module).collect()
}

/// The claims in `page`: the lines of its fenced blocks tagged `names`.
fn claims(page: &str) -> Vec<Claim> {
    let mut claims = Vec::new();
    let mut inside = false;
    for line in page.lines() {
        if line.starts_with("```") {
            inside = !inside && line.trim() == "```names";
            continue;
        }
        if !inside || line.trim().is_empty() {
            continue;
        }
        let (from, relation, to) = [
            (" names no ", Relation::NamesNo),
            (" names only ", Relation::NamesOnly),
            (" names ", Relation::Names),
        ]
        .into_iter()
        .find_map(|(word, relation)| {
            let (from, to) = line.split_once(word)?;
            Some((from, relation, to))
        })
        .unwrap_or_else(|| panic!("a claim says `names`, `names no` or `names only`: {line}"));
        claims.push(Claim {
            line: line.trim().to_string(),
            from: modules(from),
            relation,
            to: modules(to),
        });
    }
    claims
}

/// The arrows from modules in `from` (it or below it) into modules outside it.
fn leaving<'g>(
    graph: &'g BTreeMap<Module, BTreeSet<Module>>,
    from: &'g Module,
) -> impl Iterator<Item = (&'g Module, &'g Module)> {
    graph
        .iter()
        .filter(move |(m, _)| m.starts_with(from))
        .flat_map(|(m, tos)| tos.iter().map(move |t| (m, t)))
        .filter(move |(_, t)| !t.starts_with(from))
}

/// What is false in `claim` (empty when it holds).
fn falsehoods(graph: &BTreeMap<Module, BTreeSet<Module>>, claim: &Claim) -> Vec<String> {
    let name = |m: &Module| match m.is_empty() {
        true => "crate".to_string(),
        false => m.join("::"),
    };
    let mut wrong: Vec<String> = claim
        .from
        .iter()
        .chain(&claim.to)
        .filter(|m| !graph.keys().any(|k| k.starts_with(m)))
        .map(|m| format!("no module {}", name(m)))
        .collect();
    if !wrong.is_empty() {
        return wrong;
    }
    for from in &claim.from {
        let into = |to: &Module| -> Vec<(&Module, &Module)> {
            leaving(graph, from)
                .filter(|(_, t)| t.starts_with(to))
                .collect()
        };
        match claim.relation {
            Relation::Names => wrong.extend(
                claim
                    .to
                    .iter()
                    .filter(|to| into(to).is_empty())
                    .map(|to| format!("no arrow from {} into {}", name(from), name(to))),
            ),
            Relation::NamesNo => {
                for to in &claim.to {
                    let arrows = into(to).into_iter();
                    wrong.extend(arrows.map(|(m, t)| format!("{} -> {}", name(m), name(t))));
                }
            }
            Relation::NamesOnly => wrong.extend(
                leaving(graph, from)
                    .filter(|(_, t)| !claim.to.iter().any(|to| t.starts_with(to)))
                    .map(|(m, t)| format!("{} -> {}", name(m), name(t))),
            ),
        }
    }
    wrong
}

#[test]
fn the_architecture_page_says_who_names_whom_truly() {
    let page = manual::page("docs/architecture.md");
    let claims = claims(&page.text);
    assert!(claims.len() >= 10, "too few claims read: {claims:#?}");
    let graph = graph();
    let false_claims: Vec<String> = claims
        .iter()
        .filter_map(|claim| {
            let wrong = falsehoods(&graph, claim);
            (!wrong.is_empty()).then(|| format!("  {}\n    {}", claim.line, wrong.join("\n    ")))
        })
        .collect();
    assert!(
        false_claims.is_empty(),
        "docs/architecture.md claims what the code does not do (tests/module_graph.rs reads \
         the arrows):\n{}",
        false_claims.join("\n")
    );
}

#[test]
fn the_claims_are_read_and_judged() {
    let page = "text\n```names\na names b\na, b names no c::d\nc names only a\n```\n";
    let read = claims(page);
    assert_eq!(read.len(), 3);
    assert_eq!(read[1].from, [module("a"), module("b")]);
    assert_eq!(read[1].relation, Relation::NamesNo);
    assert_eq!(read[1].to, [module("c::d")]);
    let graph: BTreeMap<Module, BTreeSet<Module>> = [
        (module("a"), [module("b")].into()),
        (module("b"), [module("c::d")].into()),
        (module("c"), BTreeSet::new()),
        (module("c::d"), [module("a"), module("b")].into()),
    ]
    .into();
    let judged: Vec<Vec<String>> = read.iter().map(|c| falsehoods(&graph, c)).collect();
    assert_eq!(judged[0], Vec::<String>::new());
    assert_eq!(judged[1], ["b -> c::d"]);
    assert_eq!(judged[2], ["c::d -> b"]);
    let gone = &claims("```names\nx names a\n```")[0];
    assert_eq!(falsehoods(&graph, gone), ["no module x"]);
}
