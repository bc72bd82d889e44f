//! `dptune tune` run as a real binary: the default run's JSON keys and privacy, user CSV data
//! with a schema and a search space, and bad input (exit 2, the file/line/field named,
//! nothing on stdout). Issue 13: neighbouring datasets (D and D minus one record, same seed)
//! give the same output except for charged releases; no exact record count, wall time or run
//! count is released; `--public-size`, `--cap` and empty split sides.

use std::collections::{BTreeMap, BTreeSet};
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
    // Nor the exact record count or the run time (issue 13): the schedule's size is a charged
    // noisy count, inside the total.
    assert_eq!(v["size"]["source"], "noisy_count", "{v}");
    assert!(v["size"]["label"].as_str().unwrap().contains("charged"));
    assert!(v["privacy"]["record_count"]["epsilon"].as_f64().unwrap() <= 0.02);
    assert!(forbidden_fields(&v).is_empty(), "{v}");
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
    assert_eq!(v["privacy"]["neighbours"], "replace_one");
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

/// Review item: `dptune tune --seed N` printed nothing about the seed, while `select` and `gp`
/// say that a seeded run is not private. A seeded run says so in its JSON and its text; an
/// unseeded run (the default, the operating system's generator) says `seeded: false` and
/// prints no such note.
#[test]
fn a_seeded_run_says_it_is_not_private() {
    let d = scratch("noise-source");
    let data = write(&d, "train.csv", &csv(600));
    let schema = write(&d, "schema.toml", SCHEMA);
    let space = write(&d, "space.toml", "[regularization]\nvalues = [0.01]\n");
    let base = [
        "--data",
        &data,
        "--schema",
        &schema,
        "--learner",
        "objpert",
        "--space",
        &space,
    ];
    let seeded = [&base[..], &["--seed", "4"]].concat();
    assert_eq!(ok_json(&seeded)["seeded"], true);
    assert_eq!(ok_json(&base)["seeded"], false);
    let text = human(&seeded);
    let note: Vec<&str> = text.lines().filter(|l| l.contains("seeded run")).collect();
    assert_eq!(note.len(), 1, "{text}");
    assert!(
        note[0].starts_with("NOT PRIVATE") && note[0].contains("predict the noise"),
        "{text}"
    );
    let text = human(&base);
    assert!(
        !text.contains("seeded") && !text.contains("NOT PRIVATE"),
        "{text}"
    );
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

/// A split fraction outside (0, 1) is refused with the plan, before the data are read and so
/// before a budget is charged or a noisy count drawn (it used to fail at the first coin split).
#[test]
fn bad_fraction_is_refused_before_anything_runs() {
    for (flag, name) in [
        ("--tune-fraction=1.5", "--tune-fraction"),
        ("--train-fraction=0", "--train-fraction"),
    ] {
        let out = dptune(&["tune", flag]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(err.contains(name), "{flag}: {err}");
        assert!(
            !err.contains("reading data"),
            "{flag}: refused too late: {err}"
        );
    }
    // Refusals that need the data's declared task or the plan come before the tuning stage
    // (and so before any budget charge or noisy count).
    for args in [
        &["tune", "--learner", "ridge"][..],
        &["tune", "--delta", "0"],
    ] {
        let out = dptune(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("tuning"), "{args:?}: refused too late: {err}");
    }
}

// ---- Issue 13: nothing computed from the private record count or the clock is released ----

/// Every leaf of a JSON value by its dotted path.
fn leaves(v: &Value, path: &str, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves(x, &p, out);
            }
        }
        _ => {
            out.insert(path.to_string(), v.clone());
        }
    }
}

/// The paths whose values differ between two outputs (or that only one of them has).
fn differing(a: &Value, b: &Value) -> BTreeSet<String> {
    let (mut la, mut lb) = (BTreeMap::new(), BTreeMap::new());
    leaves(a, "", &mut la);
    leaves(b, "", &mut lb);
    la.keys()
        .chain(lb.keys())
        .filter(|k| la.get(*k) != lb.get(*k))
        .cloned()
        .collect()
}

/// Fields that must never be released: the exact record count, the clock, the run count.
fn forbidden_fields(v: &Value) -> Vec<String> {
    let mut all = BTreeMap::new();
    leaves(v, "", &mut all);
    all.into_keys()
        .filter(|k| {
            [
                "records.private",
                "wall",
                "time_s",
                "elapsed",
                "runs_executed",
            ]
            .iter()
            .any(|f| k.contains(f))
        })
        .collect()
}

/// Human output must not name the exact count `n`, a wall time or "private records".
fn assert_human_clean(text: &str, n: usize) {
    for bad in ["wall time", "private records", "elapsed"] {
        assert!(!text.contains(bad), "`{bad}` in {text}");
    }
    let exact = n.to_string();
    assert!(
        !text
            .split(|c: char| !c.is_ascii_digit())
            .any(|t| t == exact),
        "the exact record count {n} appears in {text}"
    );
}

fn human(args: &[&str]) -> String {
    let out = dptune(&[&["tune"], args].concat());
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// One configuration, so that the chosen configuration (a charged release) is the same on
/// both neighbours and every ε can be compared.
const ONE_CONFIG: &str = "[learning_rate]\nvalues = [2.0]\n[clip_norm]\nvalues = [1.0]\n\
                          [epochs]\nvalues = [2]\n[batch_size]\nvalues = [256]\n";

/// D (1500 records) and D minus its last record, each in its own directory, and a space.
fn neighbours(tag: &str) -> (PathBuf, String, String, String, String) {
    let d = scratch(tag);
    let (a, b) = (d.join("a"), d.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let big = write(&a, "data.csv", &csv(1500));
    let small = write(&b, "data.csv", &csv(1499));
    assert!(csv(1500).starts_with(&csv(1499)), "D minus its last record");
    let schema = write(&d, "schema.toml", SCHEMA);
    let space = write(&d, "space.toml", ONE_CONFIG);
    (d, big, small, schema, space)
}

#[test]
fn neighbours_give_identical_output_with_a_public_size() {
    let (d, big, small, schema, space) = neighbours("public");
    let args = |data: &str| {
        [
            "--data",
            data,
            "--schema",
            &schema,
            "--space",
            &space,
            "--public-size",
            "1500",
            "--seed",
            "5",
        ]
        .map(String::from)
    };
    let run = |data: &str| {
        let a = args(data);
        ok_json(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (a, b) = (run(&big), run(&small));
    // Every field but the (public) file name is identical: all epsilons included.
    assert_eq!(differing(&a, &b), BTreeSet::from(["dataset".to_string()]));
    assert_eq!(a["size"]["source"], "public");
    assert!(a["privacy"].get("record_count").is_none(), "nothing spent");
    assert!(a["privacy"]["epsilon"].as_f64().unwrap() <= 1.0);
    assert!(forbidden_fields(&a).is_empty(), "{a}");
    // The human rendering too, once the file names are removed.
    let h = |data: &str| {
        let a = args(data);
        human(&a.iter().map(String::as_str).collect::<Vec<_>>()).replace(data, "DATA")
    };
    let (ha, hb) = (h(&big), h(&small));
    assert_eq!(ha, hb);
    assert!(ha.contains("declared public with --public-size"), "{ha}");
    // A deliberately leaky variant of the output (the fields dptune printed before issue 13)
    // is caught by both checks.
    let leak = |v: &Value, n: usize, secs: f64| {
        let mut v = v.clone();
        v["records"] = serde_json::json!({"private": n, "public_test": null});
        v["wall_time_s"] = serde_json::json!(secs);
        v
    };
    let (la, lb) = (leak(&a, 1500, 0.41), leak(&b, 1499, 0.43));
    let d_leak = differing(&la, &lb);
    assert!(
        d_leak.contains("records.private") && d_leak.contains("wall_time_s"),
        "{d_leak:?}"
    );
    assert_eq!(forbidden_fields(&la), ["records.private", "wall_time_s"]);
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn neighbours_differ_only_in_the_charged_count_by_default() {
    let (d, big, small, schema, space) = neighbours("noisy");
    let args = |data: &str| {
        [
            "--data", data, "--schema", &schema, "--space", &space, "--seed", "5",
        ]
        .map(String::from)
    };
    let run = |data: &str| {
        let a = args(data);
        ok_json(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (a, b) = (run(&big), run(&small));
    // The noisy count is a charged release, and so is the per-run allowance calibrated to it
    // (DP-SGD plans its schedule with it), and the final fit's noise multiplier and route
    // (calibrated for the selected configuration at the planned size: post-processing of both
    // releases). Every printed epsilon is a function of public inputs only (with a noisy count
    // the report states the parts' allowance), so they are identical.
    let allowed: BTreeSet<String> = [
        "dataset",
        "size.value",
        "privacy.per_run",
        "privacy.final_fit.noise_multiplier",
        "privacy.final_fit.route",
    ]
    .map(String::from)
    .into();
    let diff = differing(&a, &b);
    assert!(diff.is_subset(&allowed), "{diff:?}");
    assert!(diff.contains("size.value"), "{diff:?}");
    // Same seed, same noise: the counts differ by the one record.
    let (ca, cb) = (
        a["size"]["value"].as_i64().unwrap(),
        b["size"]["value"].as_i64().unwrap(),
    );
    assert_eq!(ca - cb, 1);
    assert_ne!(
        ca, 1500,
        "this seed's noise is not zero (else the check below is void)"
    );
    for v in [&a, &b] {
        assert_eq!(v["size"]["source"], "noisy_count");
        assert!(v["privacy"]["epsilon"].as_f64().unwrap() <= 1.0, "{v}");
        assert!(forbidden_fields(v).is_empty(), "{v}");
    }
    assert_eq!(
        a["privacy"]["record_count"],
        serde_json::json!({"epsilon": 85_899_345.0 / 4_294_967_296.0, "delta": 0.0})
    );
    let a0 = args(&big);
    let text = human(&a0.iter().map(String::as_str).collect::<Vec<_>>());
    assert_human_clean(&text, 1500);
    assert!(
        text.contains(&format!("noisy count {ca} (a charged release")),
        "{text}"
    );
    let timing: Vec<&str> = text.lines().filter(|l| l.starts_with("timing:")).collect();
    assert_eq!(timing.len(), 1, "{text}");
    assert!(
        timing[0].contains("curator") && timing[0].contains("must not be published"),
        "{text}"
    );
    // The check catches a leaky rendering of the old first line.
    let leaky = text.replace("dptune tune: ", "dptune tune: (1500 private records) ");
    assert!(std::panic::catch_unwind(|| assert_human_clean(&leaky, 1500)).is_err());
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn capped_mode_runs_within_the_budget_or_is_refused_before_data() {
    let d = scratch("cap");
    let data = write(&d, "data.csv", &csv(400));
    let schema = write(&d, "schema.toml", SCHEMA);
    let space = write(&d, "space.toml", ONE_CONFIG);
    let base = [
        "--data",
        data.as_str(),
        "--schema",
        schema.as_str(),
        "--space",
        space.as_str(),
        "--tuner",
        "liu-talwar",
        "--mean-runs",
        "3",
        "--seed",
        "2",
    ];
    let v = ok_json(&[&base[..], &["--cap", "40"]].concat());
    assert_eq!(v["cap"], 40);
    assert!(v["privacy"]["epsilon"].as_f64().unwrap() <= 1.0, "{v}");
    assert_eq!(v["privacy"]["delta"].as_f64().unwrap(), 1e-5);
    assert!(v["timing"].as_str().unwrap().contains("--cap 40"), "{v}");
    // Too small a cap for delta: exit 2, naming the cap and the smallest one that fits, before
    // the data is read (a missing file would be the error otherwise).
    let mut early = base;
    early[1] = "/nonexistent/data.csv";
    bad(
        &[&early[..], &["--cap", "20"]].concat(),
        &["cap", "smallest cap that fits is"],
    );
    // Exhaustive search has a public number of runs: nothing to cap.
    bad(
        &["--tuner", "exhaustive", "--cap", "100"],
        &["cap", "exhaustive"],
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn empty_split_sides_still_release() {
    // One record: a side of each coin split is always empty. Before issue 13 this was refused
    // (NoRelease, exit 3) with a probability that depends on the private size.
    let d = scratch("empty");
    let data = write(&d, "one.csv", "a,c,y\n0.2,r,no\n");
    let schema = write(&d, "schema.toml", SCHEMA);
    let space = write(&d, "space.toml", ONE_CONFIG);
    for seed in ["1", "2", "3"] {
        for extra in [&[][..], &["--public-size", "1"][..]] {
            let v = ok_json(
                &[
                    &[
                        "--data", &data, "--schema", &schema, "--space", &space, "--seed", seed,
                    ][..],
                    extra,
                ]
                .concat(),
            );
            assert!(v["privacy"]["epsilon"].as_f64().unwrap() <= 1.0, "{v}");
        }
    }
    let reg = write(
        &d,
        "reg.toml",
        "[label]\nkind = \"numeric\"\ncolumn = \"y\"\nlow = 0\nhigh = 1\n\n\
         [[feature]]\nkind = \"numeric\"\ncolumn = \"a\"\nlow = 0\nhigh = 1\n",
    );
    let one = write(&d, "reg.csv", "a,y\n0.2,0.3\n");
    let v = ok_json(&[
        "--data",
        &one,
        "--schema",
        &reg,
        "--learner",
        "ridge",
        "--seed",
        "4",
    ]);
    assert_eq!(v["size"]["source"], "not_needed");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn size_flags_are_checked() {
    bad(&["--public-size", "0"], &["`--public-size`"]);
    bad(&["--count-share", "1.5"], &["`--count-share`"]);
    bad(&["--count-share", "0"], &["`--count-share`"]);
}
