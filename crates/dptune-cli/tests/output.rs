//! Issue 17 §2: every command's report goes through one fallible writer. With standard output
//! a pipe whose reader is gone (`dptune … | head -0`), a command exits 141 quietly; with
//! standard output on a full disk (`> /dev/full`), it exits 2 naming the failure; never a panic
//! (exit 101). A `--budget` charge made before the failed write stays charged.

#![cfg(target_os = "linux")] // /dev/full

use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Where standard output goes.
#[derive(Clone, Copy, Debug)]
enum Stdout {
    /// A pipe, read in full (the ordinary run).
    Read,
    /// A pipe whose read end was closed before the command started: any write is EPIPE.
    Closed,
    /// /dev/full: any write is ENOSPC.
    Full,
}

fn dptune(args: &[String], stdout: Stdout) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dptune"));
    c.args(args)
        .env_remove("DPTUNE_STORE")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    match stdout {
        Stdout::Read => c.stdout(Stdio::piped()),
        Stdout::Closed => {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            c.stdout(writer)
        }
        Stdout::Full => c.stdout(File::options().write(true).open("/dev/full").unwrap()),
    };
    c.output().unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch folder, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("dptune-output-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }

    fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SCHEMA: &str = "[label]\nkind = \"class\"\ncolumn = \"y\"\nvalues = [\"no\", \"yes\"]\n\
                      [[feature]]\nkind = \"numeric\"\ncolumn = \"a\"\nlow = 0\nhigh = 1\n";
const SPACE: &str = "[learning_rate]\nvalues = [1.0]\n[clip_norm]\nvalues = [1.0]\n\
                     [epochs]\nvalues = [1]\n[batch_size]\nvalues = [32]\n";
const COMPOSE: &str = r#"{"parts": [{"mechanism": "gaussian", "sigma": 2}], "delta": 1e-5, "neighbours": "add_remove"}"#;

fn records() -> String {
    let mut s = String::from("a,y\n");
    for i in 0..200 {
        let a = (i * 37 % 101) as f64 / 100.0;
        s.push_str(&format!("{a},{}\n", if a > 0.5 { "yes" } else { "no" }));
    }
    s
}

fn table() -> String {
    let mut s = String::from("lr,acc_seed0,acc_seed1\n");
    for i in 0..10 {
        let v = 0.5 + 0.04 * i as f64;
        s.push_str(&format!("{i},{v},{}\n", v - 0.01));
    }
    s
}

/// One invocation of every command and subcommand (and of clap's help and version), each a
/// quick run that succeeds and prints a report.
fn every_command(s: &Scratch) -> Vec<Vec<String>> {
    let store = s.path("store.sqlite");
    let scores = s.file("scores.txt", "0.7\n0.8\n0.75\n");
    let compose = s.file("compose.json", COMPOSE);
    let data = s.file("data.csv", &records());
    let schema = s.file("schema.toml", SCHEMA);
    let space = s.file("space.toml", SPACE);
    let table = s.file("table.csv", &table());
    let list: Vec<Vec<&str>> = vec![
        vec!["--help"],
        vec!["--version"],
        vec!["account", "--help"],
        vec![
            "account",
            "gaussian",
            "--noise-multiplier",
            "1",
            "--delta",
            "1e-5",
        ],
        vec![
            "--json",
            "account",
            "gaussian",
            "--noise-multiplier",
            "1",
            "--delta",
            "1e-5",
        ],
        vec![
            "account",
            "calibrate-gaussian",
            "--epsilon",
            "1",
            "--delta",
            "1e-5",
        ],
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
        vec![
            "account",
            "calibrate-dpsgd",
            "--sampling-rate",
            "0.01",
            "--steps",
            "100",
            "--epsilon",
            "1",
            "--delta",
            "1e-5",
        ],
        vec!["account", "compose", &compose],
        vec!["account", "profile", &compose, "--points", "5"],
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
        vec!["account", "zcdp", "--rho", "1", "--delta", "1e-5"],
        // `b` is created before the runs; `create` is added there (a new name each time).
        vec!["budget", "show", "b", "--store", &store],
        vec!["budget", "list", "--store", &store],
        vec!["budget", "history", "b", "--store", &store],
        vec![
            "select",
            "--mechanism",
            "exponential",
            "--epsilon",
            "1",
            "--sensitivity",
            "0.01",
            &scores,
        ],
        vec![
            "federated",
            "simulate",
            "--dataset",
            "mnist5k",
            "--rows",
            "600",
            "--clients",
            "8",
            "--local-epochs",
            "1",
            "--fedavg-rounds",
            "1",
            "--seed",
            "3",
        ],
        vec!["gp", "--seed", "3"],
        vec![
            "tune",
            "--data",
            &data,
            "--schema",
            &schema,
            "--space",
            &space,
            "--public-size",
            "200",
        ],
        vec![
            "study",
            &table,
            "--score",
            "acc",
            "--n",
            "500",
            "--epsilons",
            "1",
            "--repetitions",
            "5",
        ],
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
    ];
    list.into_iter()
        .map(|a| a.into_iter().map(String::from).collect())
        .collect()
}

fn create_budget(store: &str, name: &str) -> Output {
    let args = [
        "budget",
        "create",
        name,
        "--epsilon",
        "100",
        "--delta",
        "1e-3",
        "--neighbours",
        "add-remove",
        "--store",
        store,
    ];
    dptune(&args.map(String::from), Stdout::Read)
}

#[test]
fn every_command_exits_quietly_on_a_closed_pipe_and_2_on_a_full_disk() {
    let s = Scratch::new("every");
    let store = s.path("store.sqlite");
    assert_eq!(create_budget(&store, "b").status.code(), Some(0));
    let mut commands = every_command(&s);
    commands.push(
        [
            "budget",
            "create",
            "c",
            "--epsilon",
            "1",
            "--delta",
            "0",
            "--neighbours",
            "replace-one",
            "--store",
            &store,
        ]
        .map(String::from)
        .to_vec(),
    );
    for args in &commands {
        // `budget create` succeeds once per name: a new name for each of the three outputs.
        let create = args[0] == "budget" && args[1] == "create";
        for (i, out) in [Stdout::Read, Stdout::Closed, Stdout::Full]
            .into_iter()
            .enumerate()
        {
            let args = if create {
                let mut a = args.clone();
                a[2] = format!("{}-{i}", a[2]);
                a
            } else {
                args.clone()
            };
            let o = dptune(&args, out);
            let e = err(&o);
            assert!(!e.contains("panicked"), "{args:?} {out:?}: {e}");
            match out {
                Stdout::Read => {
                    assert_eq!(o.status.code(), Some(0), "{args:?}: {e}");
                    assert!(!o.stdout.is_empty(), "{args:?} prints a report");
                }
                Stdout::Closed => {
                    assert_eq!(o.status.code(), Some(141), "{args:?}: {e}");
                    assert!(!e.contains("error"), "{args:?}: quiet: {e}");
                }
                Stdout::Full => {
                    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
                    assert!(
                        e.contains("error: cannot write to standard output")
                            && e.contains("No space left on device"),
                        "{args:?}: {e}"
                    );
                }
            }
        }
    }
}

fn budget_charges(store: &str, name: &str) -> usize {
    let args = ["--json", "budget", "history", name, "--store", store].map(String::from);
    let o = dptune(&args, Stdout::Read);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["charges"].as_array().unwrap().len()
}

#[test]
fn a_charge_stays_when_the_report_cannot_be_written() {
    let s = Scratch::new("charge");
    let store = s.path("store.sqlite");
    let scores = s.file("scores.txt", "0.7\n0.8\n0.75\n");
    assert_eq!(create_budget(&store, "b").status.code(), Some(0));
    let select = [
        "select",
        "--mechanism",
        "exponential",
        "--epsilon",
        "1",
        "--sensitivity",
        "0.01",
        "--budget",
        "b",
        "--store",
        &store,
        &scores,
    ]
    .map(String::from);
    for (out, code, charges) in [(Stdout::Closed, 141, 1), (Stdout::Full, 2, 2)] {
        let o = dptune(&select, out);
        assert_eq!(o.status.code(), Some(code), "{out:?}: {}", err(&o));
        // The charge was committed before the mechanism ran and was not undone.
        assert!(err(&o).contains("budget `b`: charged"), "{}", err(&o));
        assert_eq!(budget_charges(&store, "b"), charges, "{out:?}");
    }
}
