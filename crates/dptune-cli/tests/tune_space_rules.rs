//! `dptune tune` refuses bad hyperparameter values, a non-finite `--threshold` and `--compare`
//! without `--test` before any data is read (issue 17 §2): exit 2 naming the hyperparameter and
//! the value, nothing on stdout, nothing charged to a budget. Before, each was found inside the
//! runs, after the budget was spent, and ended in exit 3 "no release".

#[path = "support/cli.rs"]
mod cli;

use std::path::{Path, PathBuf};

use cli::{dptune, run_json};

/// A fresh scratch directory for this test's files.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dptune-rules-{}-{tag}", std::process::id()));
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
"#;

fn csv(n: usize) -> String {
    let mut s = String::from("a,y\n");
    for i in 0..n {
        let a = (i * 37 % 101) as f64 / 100.0;
        s.push_str(&format!("{a},{}\n", if a > 0.5 { "yes" } else { "no" }));
    }
    s
}

/// A valid DP-SGD space with `spec` replacing (or adding) the table of hyperparameter `name`.
fn dpsgd_space(name: &str, spec: &str) -> String {
    let mut tables = vec![
        ("learning_rate", "values = [2.0]"),
        ("clip_norm", "values = [1.0]"),
        ("epochs", "values = [1]"),
        ("batch_size", "values = [64]"),
    ];
    tables.retain(|(n, _)| *n != name);
    tables.push((name, spec));
    tables
        .iter()
        .map(|(n, s)| format!("[{n}]\n{s}\n"))
        .collect()
}

/// Runs `dptune tune args` and asserts exit 2, empty stdout, and every needle on stderr.
fn refused(args: &[&str], needles: &[&str]) -> String {
    let out = dptune(&[&["tune"], args].concat());
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in {err}");
    }
    err
}

#[test]
fn bad_values_are_refused_before_the_data_is_read() {
    let d = scratch("values");
    let schema = write(&d, "schema.toml", SCHEMA);
    // The data file does not exist: a refusal that names the hyperparameter (and not the data
    // file) was made before the data was opened.
    let missing = d.join("no-such-dir").join("data.csv").display().to_string();
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "dpsgd-logistic",
            "batch_size",
            "values = [64, 0]",
            "`batch_size` = 0",
        ),
        (
            "dpsgd-logistic",
            "batch_size",
            "values = [-5]",
            "`batch_size` = -5",
        ),
        (
            "dpsgd-logistic",
            "batch_size",
            "values = [256.5]",
            "`batch_size` = 256.5",
        ),
        (
            "dpsgd-logistic",
            "batch_size",
            "uniform = [1, 512]",
            "`batch_size`",
        ),
        (
            "dpsgd-logistic",
            "batch_size",
            "int = [0, 512]",
            "`batch_size` = 0",
        ),
        (
            "dpsgd-logistic",
            "clip_norm",
            "values = [0]",
            "`clip_norm` = 0",
        ),
        (
            "dpsgd-logistic",
            "clip_norm",
            "values = [1e308]",
            "`clip_norm` = 1e308",
        ),
        ("dpsgd-logistic", "epochs", "values = [0]", "`epochs` = 0"),
        (
            "dpsgd-logistic",
            "epochs",
            "values = [1e12]",
            "`epochs` = 1e12",
        ),
        (
            "dpsgd-logistic",
            "epochs",
            "values = [1000000000000]",
            "`epochs` = 1000000000000",
        ),
        (
            "dpsgd-logistic",
            "learning_rate",
            "values = [\"fast\"]",
            "`learning_rate` = fast",
        ),
        (
            "dpsgd-logistic",
            "learning_rate",
            "uniform = [0, 1]",
            "`learning_rate` = 0",
        ),
        (
            "dpsgd-logistic",
            "noise_multiplier",
            "values = [-1]",
            "`noise_multiplier` = -1",
        ),
    ];
    for (learner, name, spec, needle) in cases {
        let space = write(&d, "space.toml", &dpsgd_space(name, spec));
        let err = refused(
            &[
                "--data",
                &missing,
                "--schema",
                &schema,
                "--space",
                &space,
                "--learner",
                learner,
            ],
            &[needle],
        );
        assert!(!err.contains("data.csv"), "{name} {spec}: {err}");
    }
    for learner in ["ridge", "objpert"] {
        let space = write(&d, "space.toml", "[regularization]\nvalues = [0.1, 0]\n");
        let err = refused(
            &[
                "--data",
                &missing,
                "--schema",
                &schema,
                "--space",
                &space,
                "--learner",
                learner,
            ],
            &["`regularization` = 0", "must be a finite number > 0"],
        );
        assert!(!err.contains("data.csv"), "{err}");
    }
    // The same valid space gets as far as the data file, and with real data it runs.
    let space = write(
        &d,
        "space.toml",
        &dpsgd_space("noise_multiplier", "values = [50, 100]"),
    );
    refused(
        &["--data", &missing, "--schema", &schema, "--space", &space],
        &["data.csv"],
    );
    let data = write(&d, "data.csv", &csv(600));
    let v = run_json(&[
        "tune",
        "--data",
        &data,
        "--schema",
        &schema,
        "--space",
        &space,
        "--public-size",
        "600",
        "--epsilon",
        "4",
        "--seed",
        "3",
    ]);
    assert!(v["best"]["noise_multiplier"].is_number(), "{v}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn threshold_and_compare_are_refused_before_the_data_is_read() {
    let d = scratch("flags");
    let schema = write(&d, "schema.toml", SCHEMA);
    let missing = d.join("no-such-dir").join("data.csv").display().to_string();
    for t in ["NaN", "inf", "-inf"] {
        let thr = format!("--threshold={t}");
        refused(
            &[
                "--data",
                &missing,
                "--schema",
                &schema,
                "--tuner",
                "threshold",
                &thr,
            ],
            &["`--threshold`", "must be a finite"],
        );
    }
    let err = refused(
        &["--data", &missing, "--schema", &schema, "--compare"],
        &["--compare needs a public test split (--test)"],
    );
    assert!(!err.contains("data.csv"), "{err}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_refused_space_charges_nothing_to_a_budget() {
    let d = scratch("budget");
    let schema = write(&d, "schema.toml", SCHEMA);
    let data = write(&d, "data.csv", &csv(600));
    let store = d.join("budget.sqlite").display().to_string();
    let created = dptune(&[
        "budget",
        "create",
        "b",
        "--epsilon",
        "2",
        "--delta",
        "1e-5",
        "--neighbours",
        "add-remove",
        "--store",
        &store,
    ]);
    assert!(created.status.success(), "{created:?}");
    let space = write(&d, "space.toml", &dpsgd_space("batch_size", "values = [0]"));
    refused(
        &[
            "--data", &data, "--schema", &schema, "--space", &space, "--budget", "b", "--store",
            &store,
        ],
        &["`batch_size` = 0"],
    );
    let v = run_json(&["budget", "show", "b", "--store", &store]);
    assert_eq!(v["spent"]["charges"], 0, "{v}");
    let _ = std::fs::remove_dir_all(d);
}
