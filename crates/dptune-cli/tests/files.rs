//! Issue 17 §4: every file the CLI writes (`--plot` of `account profile`, `study` and `gp`) is
//! checked before any work (its folder exists and takes a new file, its extension is known),
//! and written all or nothing: a temporary file in the same folder, fsynced and renamed over the
//! target. A failed write leaves the old file whole and no temporary file behind.
//!
//! The plot is written after the report is printed, so a plot that cannot be written (exit 2)
//! does not take with it the report a `--budget` charge paid for.

#![cfg(unix)] // the failed write is provoked with `ulimit -f`

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// A scratch folder, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("dptune-files-{}-{tag}", std::process::id()));
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

/// The sorted names in `dir`.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn dptune(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dptune"))
        .args(args)
        .env_remove("DPTUNE_STORE")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `dptune args` with files limited to 1 KiB (`ulimit -f 1`; SIGXFSZ ignored, so a write past
/// the limit fails with EFBIG instead of killing the process).
fn dptune_small_files(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 1; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_dptune"))
        .args(args)
        .env_remove("DPTUNE_STORE")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const COMPOSE: &str = r#"{"parts": [{"mechanism": "gaussian", "sigma": 2}], "delta": 1e-5, "neighbours": "add_remove"}"#;

fn table() -> String {
    let mut s = String::from("lr,acc_seed0,acc_seed1\n");
    for i in 0..10 {
        let v = 0.5 + 0.04 * i as f64;
        s.push_str(&format!("{i},{v},{}\n", v - 0.01));
    }
    s
}

/// The commands that write a plot, with their inputs in `s` and the plot at `plot`.
fn plotting(s: &Scratch, plot: &str) -> Vec<Vec<String>> {
    let compose = s.file("compose.json", COMPOSE);
    let table = s.file("table.csv", &table());
    let list: Vec<Vec<&str>> = vec![
        vec![
            "account", "profile", &compose, "--points", "5", "--plot", plot,
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
            "--plot",
            plot,
        ],
        vec!["gp", "--seed", "3", "--plot", plot],
    ];
    list.into_iter()
        .map(|a| a.into_iter().map(String::from).collect())
        .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn a_plot_replaces_the_old_file_whole_and_leaves_no_temporary_file() {
    let s = Scratch::new("ok");
    let out = Scratch::new("ok-out");
    for ext in ["svg", "png"] {
        let plot = out.path(&format!("plot.{ext}"));
        for args in plotting(&s, &plot) {
            std::fs::write(&plot, "old").unwrap();
            let o = dptune(&strs(&args));
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", err(&o));
            let new = std::fs::read(&plot).unwrap();
            match ext {
                "svg" => assert!(new.starts_with(b"<svg") && new.ends_with(b"</svg>\n")),
                _ => assert!(new.starts_with(b"\x89PNG\r\n\x1a\n") && new.len() > 1000),
            }
            assert_eq!(names(&out.0), [format!("plot.{ext}")], "{args:?}");
            std::fs::remove_file(&plot).unwrap();
        }
    }
}

#[test]
fn a_failed_write_keeps_the_old_file_and_removes_the_temporary_one() {
    let s = Scratch::new("fail");
    let out = Scratch::new("fail-out");
    let plot = out.file("plot.svg", "old plot");
    for args in plotting(&s, &plot) {
        let o = dptune_small_files(&strs(&args));
        let e = err(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains("cannot write")
                && e.contains("plot.svg")
                && e.contains("report was printed"),
            "{args:?}: {e}"
        );
        // The report came first and is whole.
        let report = String::from_utf8_lossy(&o.stdout);
        assert!(
            report.lines().count() > 1 && report.ends_with('\n'),
            "{args:?}: {report}"
        );
        assert!(!e.contains("panicked"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&plot).unwrap(),
            "old plot",
            "{args:?}"
        );
        assert_eq!(names(&out.0), ["plot.svg"], "{args:?}");
    }
    // The check has teeth: the same limit with a plain overwrite in place (what dptune did
    // before) truncates the old file.
    let big = "x".repeat(4096);
    let o = Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 1; printf '%s' \"$1\" > \"$0\"")
        .arg(&plot)
        .arg(&big)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_ne!(std::fs::read_to_string(&plot).unwrap(), "old plot");
}

#[test]
fn a_bad_plot_target_is_refused_before_any_work() {
    let s = Scratch::new("bad");
    let store = s.path("store.sqlite");
    let create = [
        "budget",
        "create",
        "b",
        "--epsilon",
        "10",
        "--delta",
        "1e-3",
        "--neighbours",
        "replace-one",
        "--store",
        &store,
    ];
    assert_eq!(dptune(&create).status.code(), Some(0));
    let file = s.file("file.txt", "");
    let missing = s.path("missing/plot.svg");
    let under_a_file = format!("{file}/plot.svg");
    let a_folder = s.0.display().to_string();
    let bad_ext = s.path("plot.jpg");
    // Inputs that do not exist: a command that read them first would name them instead.
    let no_input = s.path("no-such-input.csv");
    for plot in [&missing, &under_a_file, &a_folder, &bad_ext] {
        for args in [
            vec!["account", "profile", &no_input, "--plot", plot],
            vec![
                "study", &no_input, "--score", "acc", "--n", "500", "--plot", plot,
            ],
            vec![
                "gp",
                "--data",
                &no_input,
                "--x",
                "x",
                "--y",
                "y",
                "--y-range",
                "0,1",
                "--x-standardise",
                "--plot",
                plot,
            ],
            // The budget is not charged.
            vec![
                "gp", "--seed", "3", "--budget", "b", "--store", &store, "--plot", plot,
            ],
        ] {
            let o = dptune(&args);
            let e = err(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
            assert!(e.contains("--plot"), "{args:?}: {e}");
            assert!(!e.contains("no-such-input"), "{args:?}: {e}");
        }
    }
    let history = dptune(&["--json", "budget", "history", "b", "--store", &store]);
    let v: Value = serde_json::from_slice(&history.stdout).unwrap();
    assert_eq!(v["charges"].as_array().unwrap().len(), 0);
    // Nothing was left in the folder by the checks.
    assert_eq!(names(&s.0), ["file.txt", "store.sqlite"]);
}

fn budget_charges(store: &str, name: &str) -> usize {
    let o = dptune(&["--json", "budget", "history", name, "--store", store]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["charges"].as_array().unwrap().len()
}

#[test]
fn a_plot_that_fails_after_a_charge_leaves_the_report_printed() {
    // `gp --budget` charges, releases, then its plot's folder is gone: the charge is kept (it
    // was committed before the release), so the report it paid for must be printed. The folder
    // is removed after the up-front check and before the write without a race: the data is a
    // FIFO, which dptune opens only after checking --plot, so once the FIFO has a reader the
    // check is done; the command then waits for its data.
    let s = Scratch::new("order");
    let store = s.path("store.sqlite");
    let create = [
        "budget",
        "create",
        "b",
        "--epsilon",
        "10",
        "--delta",
        "1e-3",
        "--neighbours",
        "replace-one",
        "--store",
        &store,
    ];
    assert_eq!(dptune(&create).status.code(), Some(0));
    let folder = s.0.join("plots");
    std::fs::create_dir(&folder).unwrap();
    let plot = folder.join("gp.svg").display().to_string();
    let fifo = s.path("data.csv");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_dptune"))
        .args([
            "--json",
            "gp",
            "--data",
            &fifo,
            "--x",
            "x",
            "--y",
            "y",
            "--y-range",
            "0,2",
            "--x-range",
            "0,1",
            "--seed",
            "3",
            "--budget",
            "b",
            "--store",
            &store,
            "--plot",
            &plot,
        ])
        .env_remove("DPTUNE_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opening the FIFO for writing returns once dptune has opened it for reading.
    let (tx, rx) = mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || tx.send(File::options().write(true).open(path)));
    let mut data = loop {
        if let Ok(w) = rx.recv_timeout(Duration::from_millis(100)) {
            break w.unwrap();
        }
        if let Some(status) = child.try_wait().unwrap() {
            // Releases the waiting writer before failing.
            let _ = File::open(&fifo);
            panic!("dptune ended before reading its data: {status}");
        }
    };
    std::fs::remove_dir(&folder).unwrap();
    let mut csv = String::from("x,y\n");
    for i in 0..200 {
        let x = (i * 37 % 101) as f64 / 100.0;
        csv.push_str(&format!("{x},{}\n", 1.0 + (6.0 * x).sin() / 2.0));
    }
    data.write_all(csv.as_bytes()).unwrap();
    drop(data);
    let o = child.wait_with_output().unwrap();
    let e = err(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("cannot write") && e.contains("gp.svg") && e.contains("report was printed"),
        "{e}"
    );
    // The report: the whole release, one JSON object naming the plot it was about to write.
    let v: Value = serde_json::from_slice(&o.stdout).expect("the report is printed");
    assert!(v["lengthscale"].is_number() && v["predictions"]["values"].is_array());
    assert_eq!(v["plot"].as_str(), Some(plot.as_str()));
    assert_eq!(budget_charges(&store, "b"), 1);
    assert!(!folder.exists());
}
