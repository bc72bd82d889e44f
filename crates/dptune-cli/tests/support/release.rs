//! A command's `--json` object checked against the library's release schema
//! (`dptune::release_schema`): every leaf is walked with its dotted path and whether an
//! enclosing object carries `"not_private": true`.

#![allow(dead_code)] // each including test uses a different subset

use std::collections::BTreeMap;

use dptune::release_schema::{schema, Class, Seen, Violation};
use serde_json::Value;

/// Every leaf of `v` (scalars, null, empty arrays and objects) as (path, labelled).
pub fn leaves(v: &Value) -> Vec<(String, bool)> {
    leaf_values(v).into_iter().map(|(p, l, _)| (p, l)).collect()
}

/// Every leaf with its value, in document order.
fn leaf_values(v: &Value) -> Vec<(String, bool, Value)> {
    let mut out = Vec::new();
    walk(v, String::new(), false, &mut out);
    out
}

/// The values of the fields `command`'s schema declares public, by path (array elements in
/// order). For neighbour-differencing tests: on neighbouring datasets these must be equal,
/// since a public field may depend on public inputs only.
pub fn public_values(command: &str, json: &Value) -> BTreeMap<String, Vec<Value>> {
    let s = schema(command).unwrap_or_else(|| panic!("no release schema for `{command}`"));
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (path, _, value) in leaf_values(json) {
        if s.classify(&path).map(|f| f.class) == Some(Class::PublicInput) {
            out.entry(path).or_default().push(value);
        }
    }
    out
}

fn walk(v: &Value, path: String, labelled: bool, out: &mut Vec<(String, bool, Value)>) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            let labelled = labelled || map.get("not_private") == Some(&Value::Bool(true));
            for (k, x) in map {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(x, p, labelled, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for x in items {
                walk(x, format!("{path}[]"), labelled, out);
            }
        }
        Value::Array(_) => out.push((format!("{path}[]"), labelled, v.clone())),
        _ => out.push((path, labelled, v.clone())),
    }
}

/// The violations of `json` as the output of `command` run with `flags`.
pub fn violations(command: &str, json: &Value, flags: &[&str]) -> Vec<Violation> {
    let s = schema(command).unwrap_or_else(|| panic!("no release schema for `{command}`"));
    let leaves = leaves(json);
    let mut v = s.check(
        leaves.iter().map(|(path, labelled)| Seen {
            path,
            labelled: *labelled,
        }),
        flags,
    );
    v.dedup();
    v
}

/// Asserts that `json` releases only declared fields.
pub fn assert_declared(command: &str, json: &Value, flags: &[&str]) {
    let v = violations(command, json, flags);
    assert!(
        v.is_empty(),
        "`{command}` with {flags:?} released:\n{}\nin {json}",
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}
