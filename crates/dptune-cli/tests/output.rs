//! Issue 17 §2: every command's report goes through one fallible writer. With standard output
//! a pipe whose reader is gone (`dptune … | head -0`), a command exits 141 quietly; with
//! standard output on a full disk (`> /dev/full`), it exits 2 naming the failure; never a panic
//! (exit 101). A `--budget` charge made before the failed write stays charged.

#![cfg(target_os = "linux")] // /dev/full

use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

#[path = "support/fixtures.rs"]
mod fixtures;
use fixtures::{records, table, DPSGD_SPACE, SCHEMA};

/// Where standard output (or standard error) goes.
#[derive(Clone, Copy, Debug)]
enum Stdout {
    /// A pipe, read in full (the ordinary run).
    Read,
    /// A pipe whose read end was closed before the command started: any write is EPIPE.
    Closed,
    /// /dev/full: any write is ENOSPC.
    Full,
}

impl Stdout {
    fn stdio(self) -> Stdio {
        match self {
            Stdout::Read => Stdio::piped(),
            Stdout::Closed => {
                let (reader, writer) = std::io::pipe().unwrap();
                drop(reader);
                writer.into()
            }
            Stdout::Full => File::options()
                .write(true)
                .open("/dev/full")
                .unwrap()
                .into(),
        }
    }
}

/// `dptune args` with standard output `stdout` (standard error read).
fn dptune(args: &[String], stdout: Stdout) -> Output {
    dptune_with(args, stdout, Stdout::Read)
}

/// `dptune args` with standard output `stdout` and standard error `stderr`.
fn dptune_with(args: &[String], stdout: Stdout, stderr: Stdout) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dptune"))
        .args(args)
        .env_remove("DPTUNE_STORE")
        .stdin(Stdio::null())
        .stdout(stdout.stdio())
        .stderr(stderr.stdio())
        .output()
        .unwrap()
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

const COMPOSE: &str = r#"{"parts": [{"mechanism": "gaussian", "sigma": 2}], "delta": 1e-5, "neighbours": "add_remove"}"#;

/// One invocation of every command and subcommand (and of clap's help and version), each a
/// quick run that succeeds and prints a report. `{name}` stands for a file of the scratch
/// folder (no spaces in it: each line is split at whitespace).
const EVERY_COMMAND: &str = "
    --help
    --version
    account --help
    account gaussian --noise-multiplier 1 --delta 1e-5
    --json account gaussian --noise-multiplier 1 --delta 1e-5
    account calibrate-gaussian --epsilon 1 --delta 1e-5
    account dpsgd --sampling-rate 0.01 --noise-multiplier 1 --steps 100 --delta 1e-5
    account calibrate-dpsgd --sampling-rate 1 --steps 1 --epsilon 1 --delta 1e-5
    account compose {compose.json}
    account profile {compose.json} --points 5
    account repeat --base zcdp --rho 0.1 --repeats geometric --mean 10 --delta 1e-5
    account zcdp --rho 1 --delta 1e-5
    budget create c --epsilon 1 --delta 0 --neighbours replace-one --store {store.sqlite}
    budget show b --store {store.sqlite}
    budget list --store {store.sqlite}
    budget history b --store {store.sqlite}
    select --mechanism exponential --epsilon 1 --sensitivity 0.01 {scores.txt}
    federated simulate --dataset mnist5k --rows 600 --clients 8 --local-epochs 1 --fedavg-rounds 1 --seed 3
    gp --seed 3
    tune --data {data.csv} --schema {schema.toml} --space {space.toml} --public-size 200
    study {table.csv} --score acc --n 500 --epsilons 1 --repetitions 5
    study --recommend --candidates 10 --epsilon 1 --n 500 --repetitions 5
";

/// [`EVERY_COMMAND`] with its files written into `s` (budget `b` created).
fn every_command(s: &Scratch) -> Vec<Vec<String>> {
    let files = [
        ("scores.txt", "0.7\n0.8\n0.75\n".to_string()),
        ("compose.json", COMPOSE.to_string()),
        ("data.csv", records()),
        ("schema.toml", SCHEMA.to_string()),
        ("space.toml", DPSGD_SPACE.to_string()),
        ("table.csv", table()),
    ];
    let mut text = EVERY_COMMAND.replace("{store.sqlite}", &s.path("store.sqlite"));
    for (name, content) in files {
        text = text.replace(&format!("{{{name}}}"), &s.file(name, &content));
    }
    assert!(!text.contains('{'), "every file is written");
    let created = create_budget(&s.path("store.sqlite"), "b");
    assert_eq!(created.status.code(), Some(0), "{}", err(&created));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

fn create_budget(store: &str, name: &str) -> Output {
    let args = format!(
        "budget create {name} --epsilon 100 --delta 1e-3 --neighbours add-remove --store {store}"
    );
    dptune(
        &args
            .split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>(),
        Stdout::Read,
    )
}

#[test]
fn every_command_exits_quietly_on_a_closed_pipe_and_2_on_a_full_disk() {
    let s = Scratch::new("every");
    for args in every_command(&s) {
        // `budget create` succeeds once per name: a new name for each of the three outputs.
        let create = args[0] == "budget" && args[1] == "create";
        for (i, out) in [Stdout::Read, Stdout::Closed, Stdout::Full]
            .into_iter()
            .enumerate()
        {
            let mut args = args.clone();
            if create {
                args[2] = format!("{}{i}", args[2]);
            }
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
    let select: Vec<String> = format!(
        "select --mechanism exponential --epsilon 1 --sensitivity 0.01 --budget b --store {store} \
         {scores}"
    )
    .split_whitespace()
    .map(String::from)
    .collect();
    for (out, code, charges) in [(Stdout::Closed, 141, 1), (Stdout::Full, 2, 2)] {
        let o = dptune(&select, out);
        assert_eq!(o.status.code(), Some(code), "{out:?}: {}", err(&o));
        // The charge was committed before the mechanism ran and was not undone.
        assert!(err(&o).contains("budget `b`: charged"), "{}", err(&o));
        assert_eq!(budget_charges(&store, "b"), charges, "{out:?}");
    }
}

#[test]
fn messages_and_progress_that_cannot_be_written_do_not_stop_a_run() {
    // Standard error is best effort: progress, the budget line and error messages are lost,
    // the report and the exit status are not.
    let s = Scratch::new("stderr");
    let commands = every_command(&s);
    let tune = commands.iter().find(|a| a[0] == "tune").unwrap();
    let select = commands.iter().find(|a| a[0] == "select").unwrap();
    let mut charged = select.clone();
    charged.extend(["--budget", "b", "--store", &s.path("store.sqlite")].map(String::from));
    let bad = ["account", "zcdp", "--rho", "-1", "--delta", "1e-5"].map(String::from);
    for stderr in [Stdout::Closed, Stdout::Full] {
        for args in [tune, select, &charged] {
            let o = dptune_with(args, Stdout::Read, stderr);
            assert_eq!(o.status.code(), Some(0), "{args:?} {stderr:?}");
            assert!(!o.stdout.is_empty(), "{args:?} {stderr:?}");
        }
        let o = dptune_with(&bad, Stdout::Read, stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr:?}");
        assert!(o.stdout.is_empty());
    }
}
