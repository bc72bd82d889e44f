//! Fuzz entry points that run the `dptune` binary as a subprocess: for the search-space TOML
//! (parsed in the CLI) and the JSON study table, and, on the stable replay only, the whole
//! `select` and `gp` commands over the seeds of those in-process targets (their loaders are
//! library functions, fuzzed in `library.rs`).
//!
//! The bytes become a file (or stdin) of one fixed command line; the only failure is an exit
//! that is not an orderly error: code 101 (a Rust panic) or death by a signal (134 = SIGABRT).
//! Used by the libFuzzer targets in `fuzz_targets/` and by the stable replay test
//! `crates/dptune-cli/tests/fuzz_replay.rs`, which includes this file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which command an input drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `dptune tune --space FILE`: byte 0 picks the learner and the tuner, the rest is the TOML. The
    /// data file does not exist, so the run stops at the first data access, after every
    /// check of the space.
    SpaceToml,
    /// `dptune select`: byte 0 picks the mechanism and whether the rest is stdin (one score a
    /// line) or a CSV file read with `--column score`.
    Select,
    /// `dptune gp --data FILE`: byte 0 picks `--x-standardise` or `--x-range`, the rest is CSV.
    Gp,
    /// `dptune study FILE.json`: the whole input is the JSON table.
    StudyJson,
}

impl Target {
    /// Every target with its folder name (under `fuzz/seeds/` and the crash folders).
    pub const ALL: [(Target, &'static str); 4] = [
        (Target::SpaceToml, "space_toml"),
        (Target::Select, "select"),
        (Target::Gp, "gp"),
        (Target::StudyJson, "study_json"),
    ];
}

const MECHANISMS: [&[&str]; 7] = [
    &["--mechanism", "exponential"],
    &["--mechanism", "gumbel"],
    &["--mechanism", "laplace"],
    &["--mechanism", "permute-and-flip"],
    &["--mechanism", "gaussian", "--delta", "1e-6"],
    &["--mechanism", "top-k", "--k", "2"],
    &["--mechanism", "exponential", "--minimize", "--monotonic"],
];

const LEARNERS: [&str; 4] = ["dpsgd-logistic", "dpsgd-mlp", "objpert", "ridge"];
const TUNERS: [&str; 2] = ["papernot-steinke", "exhaustive"];

/// A private scratch directory per call (the fuzzer and parallel tests never share files).
fn scratch() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "dptune-fuzz-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Runs `bin` on `data` as `target` and returns its exit status.
pub fn run(bin: &Path, target: Target, data: &[u8]) -> ExitStatus {
    let dir = scratch();
    let (mode, rest) = data.split_first().map_or((0, &[][..]), |(m, r)| (*m, r));
    let file = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).expect("scratch file");
        p.display().to_string()
    };
    let mut stdin = Vec::new();
    let args: Vec<String> = match target {
        Target::SpaceToml => {
            let space = file("space.toml", rest);
            let missing = dir.join("absent.csv").display().to_string();
            let schema = dir.join("absent.toml").display().to_string();
            let learner = LEARNERS[mode as usize % LEARNERS.len()];
            let tuner = TUNERS[(mode as usize / LEARNERS.len()) % TUNERS.len()];
            [
                "tune",
                "--space",
                &space,
                "--learner",
                learner,
                "--tuner",
                tuner,
                "--data",
                &missing,
                "--schema",
                &schema,
                "--seed",
                "1",
            ]
            .map(str::to_owned)
            .to_vec()
        }
        Target::Select => {
            let mut a: Vec<String> = ["select", "--epsilon", "1", "--sensitivity", "0.01"]
                .map(str::to_owned)
                .to_vec();
            a.extend(
                MECHANISMS[(mode as usize >> 1) % MECHANISMS.len()]
                    .iter()
                    .map(|s| s.to_string()),
            );
            a.extend(["--seed", "1"].map(str::to_owned));
            if mode & 1 == 1 {
                a.extend([
                    "--column".to_owned(),
                    "score".to_owned(),
                    file("s.csv", rest),
                ]);
            } else {
                stdin = rest.to_vec();
            }
            a
        }
        Target::Gp => {
            let data = file("gp.csv", rest);
            let mut a: Vec<String> = [
                "gp",
                "--data",
                &data,
                "--x",
                "0",
                "--y",
                "1",
                "--y-range",
                "0,1",
                "--folds",
                "2",
                "--seed",
                "1",
            ]
            .map(str::to_owned)
            .to_vec();
            if mode & 1 == 0 {
                a.push("--x-standardise".to_owned());
            } else {
                a.extend(["--x-range".to_owned(), "-1,1".to_owned()]);
            }
            a
        }
        Target::StudyJson => {
            let table = file("t.json", data);
            [
                "study",
                &table,
                "--n",
                "100",
                "--epsilons",
                "1",
                "--repetitions",
                "2",
            ]
            .map(str::to_owned)
            .to_vec()
        }
    };
    let mut child = Command::new(bin)
        .args(&args)
        .env("HOME", &dir)
        .env("XDG_DATA_HOME", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the dptune binary starts");
    // A child that exits before reading all of stdin closes the pipe: not a failure.
    let _ = child.stdin.take().expect("piped stdin").write_all(&stdin);
    let status = child.wait().expect("the dptune binary finishes");
    let _ = std::fs::remove_dir_all(&dir);
    status
}

/// Whether `status` is an orderly exit: not a panic (101) and not killed by a signal (abort).
pub fn orderly(status: ExitStatus) -> bool {
    status.code().is_some_and(|c| c != 101 && c != 134)
}
