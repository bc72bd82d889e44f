//! Issue 16 §3: one spelling of the neighbour relation in every output. Every command that
//! states a relation is run with `--json`: each `neighbours` field is exactly `add_remove` or
//! `replace_one` (the one the command's relation is), and no other spelling (`add/remove-one`,
//! `add-remove`, `replace-one`, a bare `replace`, ...) occurs anywhere in its output, JSON or
//! text (a guarantee rendered as text inside the JSON included).

use serde_json::Value;

#[path = "support/cli.rs"]
mod cli;

use cli::{dptune, temp_file};

#[path = "support/fixtures.rs"]
mod fixtures;
use fixtures::{records, table, DPSGD_SPACE, SCHEMA};

/// Spellings of a relation that no output may contain (the two right ones contain none of
/// them: `replace_one` has no `replace-`/`replace"` and `add_remove` no `add-`/`add/`).
const WRONG: &[&str] = &[
    "add/remove",
    "add-remove",
    "addremove",
    "AddRemove",
    "replace-one",
    "\"replace\"",
    "replaceone",
    "ReplaceOne",
    "Replace\"",
];

/// Every value of a key naming the neighbour relation, anywhere in `v`.
fn relations(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k.contains("neighbour") {
                    out.push(x.clone());
                } else {
                    relations(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| relations(x, out)),
        _ => {}
    }
}

/// Why the output `text` (of a command whose relation is `want`) breaks the rule, if it does.
/// With `json`, the text must be one JSON object stating the relation at least once: in a
/// `neighbours` field, or (`study`, whose guarantees are rendered as text) as `[want]` in one.
fn violation(text: &str, json: bool, want: &str) -> Option<String> {
    if let Some(w) = WRONG.iter().find(|w| text.contains(*w)) {
        return Some(format!("spelling {w:?} in the output"));
    }
    if !json {
        return None;
    }
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Some(format!("not one JSON object: {e}")),
    };
    let mut found = Vec::new();
    relations(&v, &mut found);
    if found.is_empty() && !text.contains(&format!("[{want}]")) {
        return Some("no neighbour relation in the JSON".into());
    }
    found
        .iter()
        .find(|r| r.as_str() != Some(want))
        .map(|r| format!("a relation spelled {r}, expected {want:?}"))
}

/// The checker rejects each wrong form it exists for (else the test below could not fail).
#[test]
fn the_check_rejects_every_other_spelling() {
    let ok =
        r#"{"privacy": {"neighbours": "replace_one", "guarantee": {"neighbours": "replace_one"}}}"#;
    assert_eq!(violation(ok, true, "replace_one"), None);
    for bad in [
        r#"{"neighbours": "replace"}"#,
        r#"{"neighbours": "replace-one"}"#,
        r#"{"neighbours": "add/remove-one"}"#,
        r#"{"privacy": {"neighbours": "add_remove"}}"#, // the other relation
        r#"{"neighbours": "add_remove", "g": "eps = 1 (pure) [add/remove-one]"}"#,
        r#"{"epsilon": 1}"#,                               // states no relation
        r#"{"guarantee": "eps = 1 (pure) [add_remove]"}"#, // the other relation, as text
    ] {
        assert!(violation(bad, true, "replace_one").is_some(), "{bad}");
    }
    assert!(violation("privacy (add/remove-one neighbours)", false, "add_remove").is_some());
    assert_eq!(
        violation("privacy (add_remove neighbours)", false, "add_remove"),
        None
    );
}

const OBJPERT_SPACE: &str = "[regularization]\nvalues = [0.01, 0.1]\n";

fn compose(neighbours: &str) -> String {
    format!(
        r#"{{"parts": [{{"mechanism": "gaussian", "sigma": 2, "times": 3}}], "delta": 1e-5, "neighbours": "{neighbours}"}}"#
    )
}

#[test]
fn every_output_spells_the_relation_add_remove_or_replace_one() {
    let tag = "spelling";
    let path = |name: &str, text: &str| temp_file(tag, name, text).display().to_string();
    let ar = path("ar.json", &compose("add_remove"));
    let ro = path("ro.json", &compose("replace_one"));
    let scores = path("scores.txt", "0.7\n0.8\n0.75\n");
    let data = path("data.csv", &records());
    let schema = path("schema.toml", SCHEMA);
    let dpsgd_space = path("dpsgd.toml", DPSGD_SPACE);
    let objpert_space = path("objpert.toml", OBJPERT_SPACE);
    let table = path("table.csv", &table());
    let store = std::env::temp_dir().join(format!("dptune-{tag}-{}.sqlite", std::process::id()));
    let _ = std::fs::remove_file(&store);
    let store = store.display().to_string();
    let tune = |learner: &str, space: &str, extra: &str| {
        format!(
            "tune --learner {learner} --data {data} --schema {schema} --space {space} --seed 1 \
             {extra}"
        )
    };
    // (command, the relation it states). The budget commands run in order on one store.
    let commands: Vec<(String, &str)> = vec![
        ("account dpsgd --sampling-rate 0.01 --noise-multiplier 1 --steps 100 --delta 1e-5".into(), "add_remove"),
        ("account calibrate-dpsgd --sampling-rate 1 --steps 1 --epsilon 1 --delta 1e-5".into(), "add_remove"),
        (format!("account compose {ar}"), "add_remove"),
        (format!("account compose {ro}"), "replace_one"),
        (format!("account profile {ar} --points 3"), "add_remove"),
        (format!("account profile {ro} --points 3"), "replace_one"),
        (format!("select --mechanism exponential --epsilon 1 --sensitivity 0.01 {scores}"), "add_remove"),
        (format!("select --mechanism exponential --epsilon 1 --sensitivity 0.01 --neighbours replace_one {scores}"), "replace_one"),
        (format!("budget create a --epsilon 5 --delta 1e-5 --neighbours add_remove --store {store}"), "add_remove"),
        (format!("budget create r --epsilon 5 --delta 1e-5 --neighbours replace_one --store {store}"), "replace_one"),
        (format!("select --mechanism exponential --epsilon 1 --sensitivity 0.01 --neighbours replace_one --budget r --store {store} {scores}"), "replace_one"),
        (format!("budget show a --store {store}"), "add_remove"),
        (format!("budget show r --store {store}"), "replace_one"),
        (format!("budget history r --store {store}"), "replace_one"),
        (tune("dpsgd-logistic", &dpsgd_space, "--public-size 200"), "add_remove"),
        (tune("objpert", &objpert_space, ""), "replace_one"),
        ("gp --seed 3".into(), "replace_one"),
        (format!("study {table} --score acc --n 500 --epsilons 1 --repetitions 5"), "add_remove"),
        ("federated simulate --dataset mnist5k --rows 600 --clients 8 --local-epochs 1 --fedavg-rounds 1 --seed 3".into(), "replace_one"),
    ];
    for (command, want) in &commands {
        for json in [true, false] {
            // `budget create` runs once per name: its text form is checked by `show` instead.
            if !json && command.starts_with("budget create") {
                continue;
            }
            let mut args: Vec<&str> = command.split_whitespace().collect();
            if json {
                args.insert(0, "--json");
            }
            let out = dptune(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{args:?}: {stderr}");
            let text = String::from_utf8(out.stdout).expect("UTF-8 output");
            if let Some(why) = violation(&text, json, want) {
                panic!("{args:?}: {why}\n{text}");
            }
            // Progress and messages on stderr speak the same vocabulary.
            assert!(
                violation(&stderr, false, want).is_none(),
                "{args:?}: {stderr}"
            );
        }
    }
    // `budget list` states both relations, each spelled one way.
    let out = dptune(&["--json", "budget", "list", "--store", &store]);
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let mut found = Vec::new();
    relations(&v, &mut found);
    found.sort_by_key(|r| r.to_string());
    assert_eq!(found, ["add_remove", "replace_one"], "{text}");
    assert!(violation(&text, false, "").is_none(), "{text}");
    let _ = std::fs::remove_file(&store);
}
