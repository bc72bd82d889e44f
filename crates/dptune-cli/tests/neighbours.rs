//! Neighbour differencing (issue 13's harness): every learner under every tuner, and `select`,
//! run without a seed (OS-keyed noise) on a dataset D and on D minus one record. Every field the
//! release schema (`dptune::release_schema`) declares a public input must come out identical:
//! a public field may depend on public inputs only, so it cannot differ between neighbours,
//! whatever the noise. Fields declared as charged releases may differ. The schema check itself
//! rejects any undeclared field, so a field added without a decision fails here too.
//!
//! The progress `tune`, `gp` and `federated simulate` write on stderr (not a terminal here:
//! plain lines) must be identical on neighbours too, and carry no number (issue 17 §2).
//!
//! The check has teeth: a deliberately leaky rendering (the exact record count or a wall time
//! added to the output, as dptune printed them before issue 13; a run count or a time in the
//! progress lines) fails it.

use std::path::{Path, PathBuf};

#[path = "support/cli.rs"]
mod cli;
#[path = "support/release.rs"]
mod release;

use cli::dptune;
use release::{assert_declared, public_values, violations};
use serde_json::Value;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dptune-nb-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(d.join("a")).unwrap();
    std::fs::create_dir_all(d.join("b")).unwrap();
    d
}

fn write(path: &Path, text: &str) -> String {
    std::fs::write(path, text).unwrap();
    path.display().to_string()
}

const CLASS_SCHEMA: &str =
    "[label]\nkind = \"class\"\ncolumn = \"y\"\nvalues = [\"no\", \"yes\"]\n\
                            [[feature]]\nkind = \"numeric\"\ncolumn = \"a\"\nlow = 0\nhigh = 1\n\
                            [[feature]]\nkind = \"numeric\"\ncolumn = \"b\"\nlow = 0\nhigh = 1\n";
const NUMERIC_SCHEMA: &str = "[label]\nkind = \"numeric\"\ncolumn = \"y\"\nlow = 0\nhigh = 2\n\
                              [[feature]]\nkind = \"numeric\"\ncolumn = \"a\"\nlow = 0\nhigh = 1\n\
                              [[feature]]\nkind = \"numeric\"\ncolumn = \"b\"\nlow = 0\nhigh = 1\n";
const DPSGD_SPACE: &str = "[learning_rate]\nvalues = [1.0, 4.0]\n[clip_norm]\nvalues = [1.0]\n\
                           [epochs]\nvalues = [1]\n[batch_size]\nvalues = [64]\n";
const REG_SPACE: &str = "[regularization]\nvalues = [0.001, 0.1]\n";

/// The neighbour of `rows(n)` under the learner's relation: without its last record
/// (add/remove-one), or with its last record replaced by a different one (replace-one, where the
/// number of records is public).
fn neighbour(n: usize, numeric: bool, replace: bool) -> String {
    if !replace {
        return rows(n - 1, numeric);
    }
    let mut s = rows(n - 1, numeric);
    s.push_str(if numeric {
        "0.99,0.01,1.9\n"
    } else {
        "0.99,0.01,no\n"
    });
    assert_ne!(s, rows(n, numeric));
    s
}

/// `n` records; D minus one record is `rows(n - 1)` (the same rows without the last).
fn rows(n: usize, numeric: bool) -> String {
    let mut s = String::from("a,b,y\n");
    for i in 0..n {
        let a = (i * 37 % 101) as f64 / 100.0;
        let b = (i * 53 % 97) as f64 / 96.0;
        let y = if numeric {
            format!("{}", a + b)
        } else if a + 0.3 * b > 0.6 {
            "yes".into()
        } else {
            "no".into()
        };
        s.push_str(&format!("{a},{b},{y}\n"));
    }
    s
}

/// Runs `dptune <args> --json`; exit 0 gives the JSON, exit 3 (nothing released: ⊥ is itself
/// the charged release) gives None; anything else fails the test.
fn run(args: &[&str]) -> Option<Value> {
    run_with_progress(args).0
}

/// [`run`], and what the command wrote on stderr (not a terminal here: its progress lines).
fn run_with_progress(args: &[&str]) -> (Option<Value>, String) {
    let out = dptune(&[args, &["--json"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    match out.status.code() {
        Some(0) => (Some(serde_json::from_slice(&out.stdout).unwrap()), stderr),
        Some(3) => (None, stderr),
        c => panic!("{args:?}: exit {c:?}: {stderr}"),
    }
}

/// Asserts that the progress `command` showed on stderr on neighbours is there, identical, and
/// carries no number (no count, no K, no time): lines `dptune <command>: <stage>`.
fn assert_progress_agrees(command: &str, a: &str, b: &str) {
    assert_eq!(
        a, b,
        "{command}: the progress on stderr differs between neighbours"
    );
    assert!(
        !a.is_empty(),
        "{command}: no progress on a non-terminal stderr"
    );
    let prefix = format!("dptune {command}: ");
    for line in a.lines() {
        assert!(
            line.starts_with(&prefix) && !line.contains(|c: char| c.is_ascii_digit()),
            "{command}: not a plain progress line: {line:?}"
        );
    }
}

/// Asserts that `a` and `b` (outputs of `command` on neighbours) release only declared fields
/// and agree on every public one.
fn assert_neighbours_agree(command: &str, flags: &[&str], a: &Value, b: &Value) {
    assert_declared(command, a, flags);
    assert_declared(command, b, flags);
    assert_eq!(
        public_values(command, a),
        public_values(command, b),
        "{command} {flags:?}: a public field differs between neighbours"
    );
}

#[test]
fn every_learner_and_tuner_releases_the_same_public_fields_on_neighbours() {
    let d = scratch("tune");
    let n = 300;
    let mut checked = 0;
    // (learner, numeric label, space, replace-one neighbours)
    for (learner, numeric, space, replace) in [
        ("dpsgd-logistic", false, DPSGD_SPACE, false),
        ("dpsgd-mlp", false, DPSGD_SPACE, false),
        ("objpert", false, REG_SPACE, true),
        ("ridge", true, REG_SPACE, false),
    ] {
        let schema = write(
            &d.join(format!("{learner}.toml")),
            if numeric {
                NUMERIC_SCHEMA
            } else {
                CLASS_SCHEMA
            },
        );
        let space = write(&d.join(format!("{learner}-space.toml")), space);
        // D and D minus one record at the same path (the file name is a public input).
        let path = d.join("data.csv");
        for tuner in [
            &["--tuner", "papernot-steinke"][..],
            &["--tuner", "liu-talwar", "--mean-runs", "3"],
            &["--tuner", "poisson", "--mean-runs", "20"],
            &[
                "--tuner",
                "threshold",
                "--threshold=-1000",
                "--mean-runs",
                "3",
            ],
            &["--tuner", "exhaustive"],
        ] {
            let args = |data: &str| -> Vec<String> {
                [
                    &[
                        "tune", "--data", data, "--schema", &schema, "--space", &space,
                    ][..],
                    &["--learner", learner],
                    tuner,
                ]
                .concat()
                .into_iter()
                .map(String::from)
                .collect()
            };
            let on = |text: String| {
                let file = write(&path, &text);
                let argv = args(&file);
                run_with_progress(&argv.iter().map(String::as_str).collect::<Vec<_>>())
            };
            let ((a, pa), (b, pb)) = (on(rows(n, numeric)), on(neighbour(n, numeric, replace)));
            if let (Some(a), Some(b)) = (a, b) {
                assert_neighbours_agree("tune", &[], &a, &b);
                // The stages every run goes through (the final fit's only with DP-SGD, a
                // public choice); a heartbeat line would follow a run over a minute long, on
                // one neighbour and not the other only if the two straddle the minute.
                assert_progress_agrees("tune", &pa, &pb);
                let stages: Vec<&str> = pa
                    .lines()
                    .filter(|l| !l.ends_with("still running"))
                    .collect();
                let mut expected = vec!["dptune tune: reading data", "dptune tune: tuning"];
                if learner.starts_with("dpsgd") {
                    expected.push("dptune tune: final fit");
                }
                assert_eq!(stages, expected, "{learner} {tuner:?}");
                checked += 1;
            }
        }
    }
    // Every pair counts: the repeat tuners draw K >= 1 except Poisson, whose K = 0 (no release)
    // has probability e^-20 per run (8 Poisson runs: false failure < 2e-8), and the threshold
    // tuner at a threshold of -1000 releases on its first run.
    assert_eq!(checked, 20);
    let _ = std::fs::remove_dir_all(d);
}

/// `n` rows `x,y` for `dptune gp` (x in [0, 1], y in [0, 2]).
fn gp_rows(n: usize) -> String {
    let mut s = String::from("x,y\n");
    for i in 0..n {
        let x = (i * 37 % 101) as f64 / 100.0;
        s.push_str(&format!("{x},{}\n", 1.0 + (6.0 * x).sin() / 2.0));
    }
    s
}

#[test]
fn gp_shows_the_same_progress_on_neighbours() {
    // gp's relation is replace-one (one private output changed); the progress must not depend
    // on the number of rows either, so D minus one record is checked too.
    let d = scratch("gp");
    let path = d.join("data.csv");
    let n = 200;
    let mut replaced = gp_rows(n - 1);
    replaced.push_str("0.5,0.1\n");
    assert_ne!(replaced, gp_rows(n));
    for flags in [&[][..], &["--diagnostics"]] {
        let on = |text: &str| {
            let file = write(&path, text);
            let args = [
                &[
                    "gp",
                    "--data",
                    &file,
                    "--x",
                    "x",
                    "--y",
                    "y",
                    "--y-range",
                    "0,2",
                    "--x-range",
                    "0,1",
                ][..],
                flags,
            ]
            .concat();
            let (v, progress) = run_with_progress(&args);
            assert!(v.is_some(), "gp releases");
            progress
        };
        let base = on(&gp_rows(n));
        for neighbour in [replaced.clone(), gp_rows(n - 1)] {
            assert_progress_agrees("gp", &base, &on(&neighbour));
        }
        let mut expected = vec![
            "dptune gp: reading data",
            "dptune gp: private selection and predictions",
        ];
        if !flags.is_empty() {
            expected.push("dptune gp: not-private diagnostics");
        }
        let stages: Vec<&str> = base
            .lines()
            .filter(|l| !l.ends_with("still running"))
            .collect();
        assert_eq!(stages, expected, "{flags:?}");
    }
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn federated_simulate_shows_the_same_progress_on_neighbours() {
    // The simulation reads a bundled dataset: D is its first 600 shuffled rows, D minus one
    // record the first 599 (the same partition seed). Dropouts and repetitions make the
    // numbers the progress must not show (survivors, runs) vary.
    let on = |rows: &str| {
        let more = [
            "--dropout-rate",
            "0.1",
            // The Shamir threshold is max(t, n/2 + 1) = 5 of 8 since the SecAgg consistency
            // stage, so fewer survivors release nothing.
            "--min-survivors",
            "5",
            "--repetitions",
            "2",
        ];
        let (v, progress) = run_with_progress(&[&cli::small_simulation(rows)[..], &more].concat());
        assert!(v.is_some(), "the simulation releases");
        progress
    };
    let (a, b) = (on("600"), on("599"));
    assert_progress_agrees("federated simulate", &a, &b);
    let stages: Vec<&str> = a
        .lines()
        .filter(|l| !l.ends_with("still running"))
        .collect();
    assert_eq!(
        stages,
        [
            "dptune federated simulate: reading data",
            "dptune federated simulate: reference accuracies (non-private)",
            "dptune federated simulate: local evaluation",
        ]
    );
}

#[test]
fn select_releases_the_same_public_fields_on_neighbouring_scores() {
    // Neighbouring score vectors: each score moves by at most the sensitivity (0.01 here: one
    // record changes an accuracy on 100 validation records by at most 1/100).
    let d = scratch("select");
    let a = write(&d.join("a").join("s.txt"), "0.71\n0.74\n0.69\n0.80\n");
    let b = write(&d.join("b").join("s.txt"), "0.71\n0.73\n0.69\n0.81\n");
    let sens = write(&d.join("sens.txt"), "0.01\n0.01\n0.01\n0.01\n");
    // gem reads one sensitivity per candidate (--sensitivities) instead of --sensitivity.
    let one = ["--sensitivity", "0.01"];
    for mech in [
        &["--mechanism", "exponential", one[0], one[1]][..],
        &["--mechanism", "gumbel", one[0], one[1]],
        &["--mechanism", "permute-and-flip", one[0], one[1]],
        &["--mechanism", "laplace", one[0], one[1]],
        &["--mechanism", "gaussian", "--delta", "1e-6", one[0], one[1]],
        &["--mechanism", "gem", "--sensitivities", &sens],
        &["--mechanism", "top-k", "--k", "2", one[0], one[1]],
        &[
            "--mechanism",
            "permute-and-flip",
            "--repeat",
            "5",
            one[0],
            one[1],
        ],
    ] {
        let args = |f: &str| -> Vec<String> {
            [&["select", "--epsilon", "1"][..], mech, &[f]]
                .concat()
                .into_iter()
                .map(String::from)
                .collect()
        };
        let (aa, ab) = (args(&a), args(&b));
        let (ra, rb) = (
            run(&aa.iter().map(String::as_str).collect::<Vec<_>>()),
            run(&ab.iter().map(String::as_str).collect::<Vec<_>>()),
        );
        let (ra, rb) = (ra.expect("select releases"), rb.expect("select releases"));
        assert_neighbours_agree("select", &[], &ra, &rb);
    }
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_leaky_rendering_fails_the_neighbour_check() {
    // Outputs of `tune` on neighbours with what dptune printed before issue 13 added back: the
    // exact private record count and the wall time (which reveals the number of runs).
    let d = scratch("leak");
    let schema = write(&d.join("s.toml"), CLASS_SCHEMA);
    let space = write(&d.join("sp.toml"), DPSGD_SPACE);
    let data = write(&d.join("a").join("data.csv"), &rows(200, false));
    let v = run(&[
        "tune", "--data", &data, "--schema", &schema, "--space", &space,
    ])
    .expect("released");
    let leaky = |n: usize, secs: f64| {
        let mut x = v.clone();
        x["records"] = serde_json::json!({ "private": n });
        x["wall_time_s"] = serde_json::json!(secs);
        x
    };
    let (a, b) = (leaky(200, 0.41), leaky(199, 0.55));
    let found = violations("tune", &a, &[]);
    assert!(
        found.len() == 2,
        "the undeclared count and wall time are caught: {found:?}"
    );
    assert!(std::panic::catch_unwind(|| assert_neighbours_agree("tune", &[], &a, &b)).is_err());
    // A leak through a declared public field (the planned size replaced by the exact count)
    // is caught by the differencing itself.
    let (mut a, mut b) = (v.clone(), v.clone());
    a["size"]["source"] = serde_json::json!("200 records");
    b["size"]["source"] = serde_json::json!("199 records");
    assert!(std::panic::catch_unwind(|| assert_neighbours_agree("tune", &[], &a, &b)).is_err());
    // Progress that counted runs or showed time (what an indicatif bar with {pos} or
    // {elapsed} would print to a log) is caught, whether it differs between the neighbours or
    // happens to agree.
    for (a, b) in [
        (
            "dptune tune: tuning: run 3\n",
            "dptune tune: tuning: run 4\n",
        ),
        (
            "dptune tune: tuning (12 s)\n",
            "dptune tune: tuning (12 s)\n",
        ),
    ] {
        assert!(std::panic::catch_unwind(|| assert_progress_agrees("tune", a, b)).is_err());
    }
    assert_progress_agrees("tune", "dptune tune: tuning\n", "dptune tune: tuning\n");
    // The same for gp (a row count) and the simulation (survivors, a count of finished clients).
    for (command, a, b) in [
        (
            "gp",
            "dptune gp: reading data (200 rows)\n",
            "dptune gp: reading data (199 rows)\n",
        ),
        (
            "federated simulate",
            "dptune federated simulate: local evaluation: 6 survivors\n",
            "dptune federated simulate: local evaluation: 6 survivors\n",
        ),
        (
            "federated simulate",
            "dptune federated simulate: local evaluation [3/16]\n",
            "dptune federated simulate: local evaluation [4/16]\n",
        ),
    ] {
        assert!(std::panic::catch_unwind(|| assert_progress_agrees(command, a, b)).is_err());
    }
    let _ = std::fs::remove_dir_all(d);
}
