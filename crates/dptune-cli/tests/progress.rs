//! Issue 17 §2: every command that can run long shows its progress on a standard error that is
//! not a terminal (here a pipe) as plain lines: exactly its public stages, in order, with no
//! number (`src/progress.rs`). A run longer than a minute adds the fixed-text heartbeat, which
//! is set aside. The commands that finish at once (`account gaussian`, `select`, `budget`) show
//! nothing.

#[path = "support/cli.rs"]
mod cli;

use cli::{dptune, temp_file};

/// The plain progress lines `args` writes to stderr, without heartbeats; the command must
/// succeed.
fn stages(args: &[&str]) -> Vec<String> {
    let o = dptune(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    err.lines()
        .filter(|l| !l.ends_with(": still running"))
        .map(String::from)
        .collect()
}

/// Whether `lines` are `dptune <command>: <stage>` for the given stages exactly, with no digit.
fn shows(lines: &[String], command: &str, expected: &[&str]) -> bool {
    let want: Vec<String> = expected
        .iter()
        .map(|s| format!("dptune {command}: {s}"))
        .collect();
    lines == want.as_slice()
        && !lines
            .iter()
            .any(|l| l.contains(|c: char| c.is_ascii_digit()))
}

#[test]
fn every_long_command_shows_its_public_stages_and_no_number() {
    let compose = temp_file(
        "progress",
        "compose.json",
        r#"{"parts": [{"mechanism": "gaussian", "sigma": 2, "q": 0.01, "times": 100}], "delta": 1e-5, "neighbours": "add_remove"}"#,
    );
    let compose_file = compose;
    let compose = compose_file.display().to_string();
    let mut table = String::from("lr,acc_seed0,acc_seed1\n");
    for i in 0..10 {
        let v = 0.5 + 0.04 * i as f64;
        table.push_str(&format!("{i},{v},{}\n", v - 0.01));
    }
    let table = temp_file("progress", "table.csv", &table);
    let table_file = table;
    let table = table_file.display().to_string();
    let study = [
        &table,
        "--score",
        "acc",
        "--n",
        "500",
        "--epsilons",
        "1",
        "--repetitions",
        "5",
    ];
    let cases: Vec<(Vec<&str>, &str, Vec<&str>)> = vec![
        (
            vec![
                "account",
                "dpsgd",
                "--sampling-rate",
                "0.01",
                "--noise-multiplier",
                "1",
                "--steps",
                "100",
                "--delta",
                "1e-5",
            ],
            "account dpsgd",
            vec!["accounting"],
        ),
        (
            vec![
                "account",
                "calibrate-dpsgd",
                "--sampling-rate",
                "1",
                "--steps",
                "1",
                "--epsilon",
                "1",
                "--delta",
                "1e-5",
            ],
            "account calibrate-dpsgd",
            vec!["calibrating"],
        ),
        (
            vec!["account", "compose", &compose],
            "account compose",
            vec!["composing"],
        ),
        (
            vec!["account", "profile", &compose, "--points", "5"],
            "account profile",
            vec!["composing", "computing the profile"],
        ),
        (
            vec![
                "account",
                "repeat",
                "--base",
                "zcdp",
                "--rho",
                "0.1",
                "--repeats",
                "geometric",
                "--mean",
                "10",
                "--delta",
                "1e-5",
            ],
            "account repeat",
            vec!["accounting"],
        ),
        (
            [&["study"][..], &study].concat(),
            "study",
            vec!["reading the table", "simulating the tuners"],
        ),
        (
            // --epsilons has no effect with --recommend, which refuses it.
            [
                &["study"][..],
                &study[..5],
                &["--repetitions", "5", "--recommend", "--epsilon", "1"],
            ]
            .concat(),
            "study",
            vec!["reading the table", "comparing the methods"],
        ),
        (
            vec![
                "study",
                "--recommend",
                "--candidates",
                "10",
                "--epsilon",
                "1",
                "--n",
                "500",
                "--repetitions",
                "5",
            ],
            "study",
            vec!["comparing the methods"],
        ),
        (
            vec!["gp", "--seed", "3"],
            "gp",
            vec!["reading data", "private selection and predictions"],
        ),
    ];
    for (args, command, expected) in &cases {
        let lines = stages(args);
        assert!(shows(&lines, command, expected), "{args:?}: {lines:?}");
    }
    // Commands that finish at once show nothing.
    for args in [
        &[
            "account",
            "gaussian",
            "--noise-multiplier",
            "1",
            "--delta",
            "1e-5",
        ][..],
        &["account", "zcdp", "--rho", "1", "--delta", "1e-5"],
    ] {
        assert_eq!(stages(args), Vec::<String>::new(), "{args:?}");
    }
    // The check has teeth: a count, an extra stage or a missing one is rejected.
    let line = |s: &str| format!("dptune study: {s}");
    for leaky in [
        vec![
            line("reading the table"),
            line("simulating the tuners (3/6 cells)"),
        ],
        vec![
            line("reading the table (10 rows)"),
            line("simulating the tuners"),
        ],
        vec![line("reading the table")],
        vec![
            line("reading the table"),
            line("simulating the tuners"),
            line("simulating the tuners"),
        ],
    ] {
        assert!(
            !shows(
                &leaky,
                "study",
                &["reading the table", "simulating the tuners"]
            ),
            "{leaky:?}"
        );
    }
    let _ = std::fs::remove_file(compose_file);
    let _ = std::fs::remove_file(table_file);
}
