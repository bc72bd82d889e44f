//! `dptune select` end to end: the real binary, stdin/files, exit codes.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dptune"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The binary may exit on bad arguments before reading stdin: a broken pipe is expected then.
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

const COUNTS: &str = "800\n820\n850\n790\n";

/// An exponential-mechanism selection at ε = 0.1, Δ = 1 (text output, no seed).
const EXPONENTIAL: [&str; 7] = [
    "select",
    "--mechanism",
    "exponential",
    "--epsilon",
    "0.1",
    "--sensitivity",
    "1",
];

#[test]
fn exponential_json_reports_index_and_spent() {
    let o = run(
        &[&["--json"][..], &EXPONENTIAL, &["--seed", "7"]].concat(),
        COUNTS,
    );
    let v = json(&o);
    assert!(v["index"].as_u64().unwrap() < 4);
    assert_eq!(v["spent"]["epsilon"], 0.1);
    assert!((v["spent"]["rho"].as_f64().unwrap() - 0.00125).abs() < 1e-12);
}

#[test]
fn probabilities_match_theory() {
    let o = run(
        &[
            "select",
            "--json",
            "--mechanism",
            "gumbel",
            "--epsilon",
            "0.1",
            "--sensitivity",
            "1",
            "--probabilities",
        ],
        COUNTS,
    );
    let v = json(&o);
    assert_eq!(v["not_private"], true);
    let p: Vec<f64> = v["probabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!((p[2] - 0.738006).abs() < 1e-6);
}

#[test]
fn repeat_counts_and_seed_reproducible() {
    let args = [
        "select",
        "--json",
        "--mechanism",
        "permute-and-flip",
        "--epsilon",
        "0.1",
        "--sensitivity",
        "1",
        "--seed",
        "3",
        "--repeat",
        "2000",
    ];
    let a = json(&run(&args, COUNTS));
    let b = json(&run(&args, COUNTS));
    assert_eq!(a["counts"], b["counts"]);
    let total: u64 = a["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert_eq!(total, 2000);
    assert!(a["counts"][2].as_u64().unwrap() > 1500);
}

#[test]
fn csv_column_minimize_and_top_k() {
    let csv = "name,loss\na,0.9\nb,0.1\nc,0.5\n";
    let v = json(&run(
        &[
            "select",
            "--json",
            "--mechanism",
            "exponential",
            "--epsilon",
            "100",
            "--sensitivity",
            "0.01",
            "--column",
            "loss",
            "--minimize",
            "--seed",
            "1",
        ],
        csv,
    ));
    assert_eq!(v["index"], 1);
    let v = json(&run(
        &[
            "select",
            "--json",
            "--mechanism",
            "top-k",
            "--k",
            "2",
            // The total over the two rounds (1 each).
            "--epsilon",
            "2",
            "--sensitivity",
            "1",
            "--seed",
            "1",
        ],
        "3\n2\n1\n0\n",
    ));
    assert_eq!(v["indices"].as_array().unwrap().len(), 2);
    assert_eq!(v["spent"]["epsilon"], 2.0);
}

#[test]
fn gem_with_sensitivity_file() {
    let dir = std::env::temp_dir().join(format!("dptune-gem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sens = dir.join("sens.txt");
    std::fs::write(&sens, "1\n2\n5\n20\n").unwrap();
    let v = json(&run(
        &[
            "select",
            "--json",
            "--mechanism",
            "gem",
            "--epsilon",
            "1",
            "--beta",
            "0.1",
            "--sensitivities",
            sens.to_str().unwrap(),
            "--probabilities",
        ],
        "800\n860\n900\n910\n",
    ));
    assert!((v["probabilities"][2].as_f64().unwrap() - 0.7078).abs() < 1e-4);
    std::fs::write(&sens, "1\n2\n").unwrap();
    let o = run(
        &[
            "select",
            "--mechanism",
            "gem",
            "--epsilon",
            "1",
            "--sensitivities",
            sens.to_str().unwrap(),
        ],
        "800\n860\n900\n910\n",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sensitivities"));
}

#[test]
fn bad_input_exits_2_without_panic() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &[
                "select",
                "--mechanism",
                "exponential",
                "--epsilon",
                "1",
                "--sensitivity",
                "1",
            ],
            "1\nnan\n",
            "scores",
        ),
        (
            &[
                "select",
                "--mechanism",
                "exponential",
                "--epsilon",
                "1",
                "--sensitivity",
                "1",
            ],
            "1\ninf\n",
            "scores",
        ),
        (
            &[
                "select",
                "--mechanism",
                "exponential",
                "--epsilon",
                "1",
                "--sensitivity",
                "1",
            ],
            "",
            "scores",
        ),
        (
            &[
                "select",
                "--mechanism",
                "exponential",
                "--epsilon",
                "1",
                "--sensitivity",
                "1",
            ],
            "5\n",
            "scores",
        ),
        (
            &[
                "select",
                "--mechanism",
                "laplace",
                "--epsilon",
                "1",
                "--sensitivity",
                "0",
            ],
            "1\n2\n",
            "sensitivity",
        ),
        (
            &[
                "select",
                "--mechanism",
                "laplace",
                "--epsilon",
                "1",
                "--sensitivity=-1",
            ],
            "1\n2\n",
            "sensitivity",
        ),
        (
            &[
                "select",
                "--mechanism",
                "top-k",
                "--k",
                "3",
                "--epsilon",
                "1",
                "--sensitivity",
                "1",
            ],
            "1\n2\n",
            "k",
        ),
        (
            &[
                "select",
                "--mechanism",
                "gaussian",
                "--epsilon",
                "1",
                "--sensitivity",
                "1",
            ],
            "1\n2\n",
            "delta",
        ),
        (
            &[
                "select",
                "--mechanism",
                "sparse-vector",
                "--epsilon",
                "1",
                "--sensitivity",
                "1",
            ],
            "1\n2\n",
            "sparse_vector",
        ),
        (
            &[
                "select",
                "--mechanism",
                "exponential",
                "--epsilon",
                "1",
                "--sensitivity",
                "1",
            ],
            "1\nabc\n",
            "not a number",
        ),
        (
            &[
                "select",
                "--mechanism",
                "median",
                "--epsilon",
                "1",
                "--sensitivity",
                "1",
            ],
            "1\n2\n",
            "mechanism",
        ),
    ];
    for (args, input, needle) in cases {
        let o = run(args, input);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Review item: `dptune select --json --seed N` did not say that it was seeded, and its text
/// worded the seeded-run note its own way. The JSON always has `seeded`; a seeded run's text
/// ends with the library's one note (`dptune::noise::SEEDED_NOTE`, as `tune` and `gp`), an
/// unseeded one has none.
#[test]
fn a_seeded_selection_says_it_is_not_private() {
    let base = EXPONENTIAL;
    let seeded = [&base[..], &["--seed", "7"]].concat();
    let with_json = |args: &[&str]| json(&run(&[&["--json"][..], args].concat(), COUNTS));
    assert_eq!(with_json(&seeded)["seeded"], true);
    assert_eq!(with_json(&base)["seeded"], false);
    let text = |args: &[&str]| {
        let o = run(args, COUNTS);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let t = text(&seeded);
    assert_eq!(
        t.trim_end().lines().last(),
        Some(dptune::noise::SEEDED_NOTE),
        "{t}"
    );
    let t = text(&base);
    assert!(!t.contains("seeded") && !t.contains("NOT PRIVATE"), "{t}");
}
