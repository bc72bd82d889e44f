//! `dptune tune` run as a real binary: the default run's JSON keys and privacy, user CSV data
//! with a schema and a search space, and bad input (exit 2, the file/line/field named,
//! nothing on stdout).

use std::path::{Path, PathBuf};

#[path = "support/cli.rs"]
mod cli;

use cli::{dptune, run_json};
use serde_json::Value;

fn ok_json(args: &[&str]) -> Value {
    run_json(&[&["tune"], args].concat())
}

/// A scratch directory for this test's files.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dptune-tune-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

const SCHEMA: &str = r#"
[label]
kind = "class"
column = "y"
values = ["no", "yes"]

[[feature]]
kind = "numeric"
column = "a"
low = 0
high = 1

[[feature]]
kind = "categorical"
column = "c"
values = ["r", "g"]
"#;

fn csv(n: usize) -> String {
    let mut s = String::from("a,c,y\n");
    for i in 0..n {
        let a = (i * 37 % 101) as f64 / 100.0;
        let c = if i % 3 == 0 { "r" } else { "g" };
        let y = if a > 0.5 { "yes" } else { "no" };
        s.push_str(&format!("{a},{c},{y}\n"));
    }
    s
}

#[test]
fn default_run_reports_config_accuracy_and_privacy_only() {
    let v = ok_json(&["--seed", "3"]);
    assert!(v["best"].is_object(), "{v}");
    for k in ["learning_rate", "clip_norm", "epochs", "batch_size"] {
        assert!(!v["best"][k].is_null(), "{k} in {v}");
    }
    let acc = v["test_accuracy"].as_f64().unwrap();
    assert!(acc > 0.8, "{acc}");
    assert!(v["privacy"]["epsilon"].as_f64().unwrap() <= 1.0);
    assert_eq!(v["privacy"]["delta"].as_f64().unwrap(), 1e-5);
    assert!(v["privacy"]["tuning"]["epsilon"].as_f64().unwrap() <= 1.0);
    assert!(v["privacy"]["final_fit"]["epsilon"].as_f64().unwrap() <= 1.0);
    // The number of candidate runs is never released.
    let text = v.to_string();
    assert!(
        !text.contains("\"runs\"") && !text.contains("\"k\""),
        "{text}"
    );
}

#[test]
fn user_csv_with_schema_space_and_test_split() {
    let d = scratch("user");
    let data = write(&d, "train.csv", &csv(3000));
    let test = write(&d, "test.csv", &csv(500));
    let schema = write(&d, "schema.toml", SCHEMA);
    let space = write(
        &d,
        "space.toml",
        "[regularization]\nvalues = [0.001, 0.01]\n",
    );
    let v = ok_json(&[
        "--data",
        &data,
        "--schema",
        &schema,
        "--test",
        &test,
        "--learner",
        "objpert",
        "--space",
        &space,
        "--seed",
        "1",
        "--epsilon",
        "2",
    ]);
    assert!(v["test_accuracy"].as_f64().unwrap() > 0.7, "{v}");
    assert_eq!(v["privacy"]["neighbours"], "replace-one");
    assert!(v.get("compare").is_none());
    let c = ok_json(&[
        "--data",
        &data,
        "--schema",
        &schema,
        "--test",
        &test,
        "--learner",
        "objpert",
        "--space",
        &space,
        "--seed",
        "1",
        "--compare",
    ]);
    assert_eq!(c["compare"]["not_private"], true, "{c}");
    assert!(c["compare"]["label"]
        .as_str()
        .unwrap()
        .contains("NOT PRIVATE"));
    assert!(c["compare"]["test_accuracy"].as_f64().unwrap() > 0.5);
    assert!(v["privacy"]["epsilon"].as_f64().unwrap() <= 2.0);
    let v = ok_json(&[
        "--data",
        &data,
        "--schema",
        &schema,
        "--learner",
        "dpsgd-logistic",
        "--tuner",
        "exhaustive",
        "--seed",
        "2",
    ]);
    assert!(v["test_accuracy"].is_null());
    assert!(v["privacy"]["epsilon"].as_f64().unwrap() <= 1.0);
    let _ = std::fs::remove_dir_all(d);
}

fn bad(args: &[&str], needles: &[&str]) {
    let mut all = vec!["tune"];
    all.extend_from_slice(args);
    let out = dptune(&all);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "nothing written on bad input");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in {err}");
    }
}

#[test]
fn bad_input_exits_2_naming_file_line_or_field() {
    let d = scratch("bad");
    let schema = write(&d, "schema.toml", SCHEMA);
    let good = write(&d, "good.csv", &csv(50));
    bad(
        &["--data", "/nonexistent/x.csv", "--schema", &schema],
        &["/nonexistent/x.csv"],
    );
    let nonnum = write(&d, "nonnum.csv", "a,c,y\n0.1,r,no\nabc,g,yes\n");
    bad(
        &["--data", &nonnum, "--schema", &schema],
        &["nonnum.csv line 3", "column `a`", "abc"],
    );
    let nolabel = write(&d, "nolabel.csv", "a,c\n0.1,r\n");
    bad(
        &["--data", &nolabel, "--schema", &schema],
        &["nolabel.csv", "label column `y`"],
    );
    let mismatch = write(&d, "mismatch.csv", "a,colour,y\n0.1,r,no\n");
    bad(
        &["--data", &mismatch, "--schema", &schema],
        &["mismatch.csv", "`c`"],
    );
    let ragged = write(&d, "ragged.csv", "a,c,y\n0.1,r\n");
    bad(
        &["--data", &ragged, "--schema", &schema],
        &["ragged.csv line 2"],
    );
    let empty = write(&d, "empty.csv", "a,c,y\n");
    bad(
        &["--data", &empty, "--schema", &schema],
        &["empty.csv", "no data rows"],
    );
    let broken = write(&d, "broken.toml", "[label\nkind = 1\n");
    bad(&["--data", &good, "--schema", &broken], &["broken.toml"]);
    let wrong = write(&d, "wrong.toml", &SCHEMA.replace("low = 0", "lo = 0"));
    bad(
        &["--data", &good, "--schema", &wrong],
        &["wrong.toml", "lo"],
    );
    let space = write(&d, "space.toml", "[momentum]\nvalues = [0.9]\n");
    bad(&["--space", &space], &["space.toml", "momentum"]);
    let space2 = write(&d, "space2.toml", "[learning_rate]\nbetween = [1, 2]\n");
    bad(&["--space", &space2], &["space2.toml", "learning_rate"]);
    bad(&["--dataset", "cifar"], &["cifar"]);
    bad(&["--epsilon=-1"], &["epsilon"]);
    let _ = std::fs::remove_dir_all(d);
}
