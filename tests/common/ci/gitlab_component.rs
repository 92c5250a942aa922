//! A GitLab CI/CD component as GitLab includes it (the `spec: inputs` header, then the
//! configuration with `$[[ inputs.NAME ]]` interpolated: GitLab's docs, "Define inputs for
//! configuration added with include"), and its job's variables as GitLab Runner expands them
//! (`$NAME` and `${NAME}` of the other variables; `$$` for a `$`), ready for the shell
//! executor of [`super::gitlab`].
//!
//! As GitLab does, an include fails (the test with it) on an input the spec does not declare,
//! a declared input without a default left out, or a value of the wrong type; an input that is
//! a whole YAML value (`script: $[[ inputs.script ]]`) takes the input's type, an array here,
//! and one inside a longer string is put in as text.

use std::collections::BTreeMap;
use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

/// An input's value, as an `include:` gives it.
#[derive(Clone, Debug)]
pub enum Input {
    Text(String),
    List(Vec<String>),
}

/// A job of the included configuration.
pub struct ComponentJob {
    pub name: String,
    pub stage: String,
    pub variables: BTreeMap<String, String>,
    pub before_script: Vec<String>,
    pub script: Vec<String>,
    pub after_script: Vec<String>,
}

/// Includes the component at `file` with `inputs`; returns its one job.
pub fn include(file: &Path, inputs: &[(&str, Input)]) -> ComponentJob {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
    let docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{file:?}: {e}"));
    assert_eq!(
        docs.len(),
        2,
        "{file:?}: the spec, `---`, then the configuration"
    );
    let values = resolve(&docs[0]["spec"]["inputs"], inputs);
    let config = interpolate(&docs[1], &values);
    let jobs = config.as_hash().expect("a mapping of jobs");
    assert_eq!(jobs.len(), 1, "{file:?}: one job");
    let (name, job) = jobs.iter().next().unwrap();
    let variables: BTreeMap<String, String> = job["variables"]
        .as_hash()
        .map(|h| {
            h.iter()
                .map(|(k, v)| (k.as_str().unwrap().to_string(), scalar(v)))
                .collect()
        })
        .unwrap_or_default();
    ComponentJob {
        name: name.as_str().expect("a job's name").to_string(),
        stage: scalar(&job["stage"]),
        variables,
        before_script: lines(&job["before_script"]),
        script: lines(&job["script"]),
        after_script: lines(&job["after_script"]),
    }
}

/// Each declared input's value: the given one, else its default; as GitLab refuses it, a
/// missing or undeclared input or a value of the wrong type fails.
fn resolve(spec: &Yaml, given: &[(&str, Input)]) -> BTreeMap<String, Input> {
    let spec = spec.as_hash().expect("spec: inputs");
    let mut values = BTreeMap::new();
    for (name, _) in given {
        assert!(
            spec.contains_key(&Yaml::String(name.to_string())),
            "unknown input: {name}"
        );
    }
    for (name, declared) in spec {
        let name = name.as_str().unwrap();
        let array = declared["type"].as_str() == Some("array");
        let value = match given.iter().find(|(n, _)| *n == name) {
            Some((_, value)) => value.clone(),
            None => match &declared["default"] {
                Yaml::BadValue => panic!("`{name}` input: required value not provided"),
                Yaml::Array(items) => Input::List(items.iter().map(scalar).collect()),
                other => Input::Text(scalar(other)),
            },
        };
        assert_eq!(
            matches!(value, Input::List(_)),
            array,
            "`{name}` input: provided value is not a {}",
            if array { "array" } else { "string" }
        );
        values.insert(name.to_string(), value);
    }
    values
}

/// `node` with every `$[[ inputs.NAME ]]` replaced, in keys and values.
fn interpolate(node: &Yaml, values: &BTreeMap<String, Input>) -> Yaml {
    match node {
        Yaml::String(text) => {
            let whole = text
                .trim()
                .strip_prefix("$[[ inputs.")
                .and_then(|r| r.strip_suffix(" ]]"));
            if let Some(Input::List(items)) = whole.and_then(|name| values.get(name)) {
                return Yaml::Array(items.iter().cloned().map(Yaml::String).collect());
            }
            let mut out = text.clone();
            for (name, value) in values {
                if let Input::Text(value) = value {
                    out = out.replace(&format!("$[[ inputs.{name} ]]"), value);
                }
            }
            assert!(!out.contains("$[["), "an input left in {out:?}");
            Yaml::String(out)
        }
        Yaml::Array(items) => Yaml::Array(items.iter().map(|i| interpolate(i, values)).collect()),
        Yaml::Hash(map) => Yaml::Hash(
            map.iter()
                .map(|(k, v)| (interpolate(k, values), interpolate(v, values)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A scalar as the text GitLab makes of it.
fn scalar(node: &Yaml) -> String {
    match node {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(n) => n.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Null | Yaml::BadValue => String::new(),
        other => panic!("not a scalar: {other:?}"),
    }
}

/// A script: a list of lines.
fn lines(node: &Yaml) -> Vec<String> {
    node.as_vec()
        .map(|v| v.iter().map(scalar).collect())
        .unwrap_or_default()
}

/// `value` with `$NAME` and `${NAME}` of `env` expanded (an unknown one is empty) and `$$`
/// made `$`, as GitLab Runner expands a job's variables.
pub fn expand(value: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, skip) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}').expect("an unclosed ${");
            (&braced[..end], end + 2)
        } else if let Some(escaped) = after.strip_prefix('$') {
            out.push('$');
            rest = escaped;
            continue;
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        if name.is_empty() {
            out.push('$');
        } else {
            out.push_str(env.get(name).map_or("", String::as_str));
        }
        rest = &after[skip..];
    }
    out.push_str(rest);
    out
}

impl ComponentJob {
    /// The job's environment: `settings` (the project's CI/CD variables), then the job's
    /// variables, each expanded with those before it.
    pub fn environment(&self, settings: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut env = settings.clone();
        for (name, value) in &self.variables {
            let expanded = expand(value, &env);
            env.insert(name.clone(), expanded);
        }
        env
    }
}
