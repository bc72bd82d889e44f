//! `dptune budget` and `--budget` end to end (issue 17 §1): the real binary, a store in a
//! scratch folder, exit codes (0 ok, 2 bad input, 3 a charge that does not fit), nothing
//! released without a committed charge, also when the process is killed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

#[path = "support/cli.rs"]
mod cli;
#[path = "support/release.rs"]
mod release;

/// A fresh scratch folder, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let d = std::env::temp_dir().join(format!(
            "dptune-budget-cli-{}-{tag}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        Self(d)
    }

    fn store(&self) -> String {
        self.0.join("budget.sqlite").display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `dptune` with `args`, `stdin` and `DPTUNE_STORE` set to `env_store` (or unset).
fn cmd(args: &[&str], env_store: Option<&str>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dptune"));
    c.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match env_store {
        Some(s) => c.env("DPTUNE_STORE", s),
        None => c.env_remove("DPTUNE_STORE"),
    };
    c
}

fn run(args: &[&str], stdin: &str, env_store: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = cmd(args, env_store).spawn().unwrap();
    // The binary may exit before reading stdin: a broken pipe is fine then.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    assert_eq!(code(o), 0, "{}", err(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

const SCORES: &str = "800\n820\n850\n790\n";

/// `select` with the exponential mechanism at `eps`, charged to `budget` in `store`.
fn select(eps: &str, budget: &str, store: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "--json",
        "select",
        "--mechanism",
        "exponential",
        "--epsilon",
        eps,
        "--sensitivity",
        "1",
        "--budget",
        budget,
        "--store",
        store,
    ];
    args.extend_from_slice(extra);
    run(&args, SCORES, None)
}

fn create(store: &str, name: &str, eps: &str, delta: &str, neighbours: &str) -> Output {
    run(
        &[
            "budget",
            "create",
            name,
            "--epsilon",
            eps,
            "--delta",
            delta,
            "--neighbours",
            neighbours,
            "--store",
            store,
        ],
        "",
        None,
    )
}

fn show(store: &str, name: &str) -> Value {
    json(&run(
        &["--json", "budget", "show", name, "--store", store],
        "",
        None,
    ))
}

#[test]
fn create_show_list_history() {
    let d = Scratch::new("basic");
    let s = d.store();
    let o = create(&s, "study", "1", "1e-5", "add-remove");
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("created budget `study`"));
    assert_eq!(code(&create(&s, "pure", "2", "0", "replace-one")), 0);
    let v = show(&s, "study");
    assert_eq!(v["epsilon"], 1.0);
    assert_eq!(v["neighbours"], "add_remove");
    assert_eq!(v["spent"]["epsilon"], 0.0);
    assert_eq!(v["spent"]["route"], "none");
    // Two exponential mechanisms at 0.3: pure 0.6 beats zCDP (rho = 0.0225) at delta = 1e-5.
    for _ in 0..2 {
        let r = json(&select("0.3", "study", &s, &[]));
        assert!(r["index"].as_u64().unwrap() < 4);
    }
    let v = show(&s, "study");
    assert_eq!(
        (
            v["spent"]["epsilon"].as_f64(),
            v["spent"]["charges"].as_u64()
        ),
        (Some(0.6), Some(2))
    );
    assert_eq!(v["spent"]["route"], "pure");
    let h = json(&run(
        &["--json", "budget", "history", "study", "--store", &s],
        "",
        None,
    ));
    let charges = h["charges"].as_array().unwrap();
    assert_eq!(charges.len(), 2);
    assert_eq!(charges[1]["seq"], 2);
    assert_eq!(charges[0]["command"], "select");
    assert_eq!(charges[0]["epsilon"], 0.3);
    assert_eq!(charges[0]["guarantee"]["bounds"][0]["pure"]["eps"], 0.3);
    assert!(charges[0]["label"]
        .as_str()
        .unwrap()
        .contains("--mechanism exponential"));
    let text = run(&["budget", "history", "study", "--store", &s], "", None);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("#2 "),
        "{}",
        err(&text)
    );
    let l = json(&run(&["--json", "budget", "list", "--store", &s], "", None));
    let names: Vec<&str> = l["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["pure", "study"]);
    let text = run(&["budget", "show", "study", "--store", &s], "", None);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("spent:     eps = 0.6 at delta = 1e-5"),
        "{text}"
    );
}

#[test]
fn a_charge_that_does_not_fit_exits_3_and_releases_nothing() {
    let d = Scratch::new("fit");
    let s = d.store();
    create(&s, "b", "1", "1e-5", "add-remove");
    // Dyadic epsilons, so that the pure sums are exact.
    for _ in 0..3 {
        json(&select("0.25", "b", &s, &[]));
    }
    // 0.75 spent: 0.375 more does not fit (pure 1.125; zCDP, rho = 0.041, 1.16 at 1e-5).
    let o = select("0.375", "b", &s, &[]);
    assert_eq!(code(&o), 3, "{}", err(&o));
    assert!(
        o.stdout.is_empty(),
        "released: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(err(&o).contains("budget exceeded") && err(&o).contains("nothing was released"));
    assert_eq!(show(&s, "b")["spent"]["charges"], 3);
    // --repeat 2 at 0.125 costs 0.25 (pure), charged as one composed cost. The pure sum is
    // now 1.0, but the composition is tighter: rho = 0.02734, eps = 0.9414 at 1e-5.
    json(&select("0.125", "b", &s, &["--repeat", "2"]));
    let v = show(&s, "b");
    assert_eq!(v["spent"]["charges"], 4);
    assert_eq!(v["spent"]["route"], "zcdp");
    let e = v["spent"]["epsilon"].as_f64().unwrap();
    assert!((e - 0.9414).abs() < 1e-4, "{e}");
}

#[test]
fn bad_input_exits_2_and_charges_nothing() {
    let d = Scratch::new("bad");
    let s = d.store();
    create(&s, "b", "1", "1e-5", "add-remove");
    let bad = |o: Output, needle: &str| {
        assert_eq!(code(&o), 2, "{}", err(&o));
        assert!(o.stdout.is_empty());
        assert!(err(&o).contains(needle), "`{needle}` not in {}", err(&o));
    };
    // Another neighbour relation.
    bad(
        select("0.1", "b", &s, &["--neighbours", "replace"]),
        "neighbour relations differ",
    );
    // No such budget; no store at all (never created by a charge).
    bad(select("0.1", "nope", &s, &[]), "no budget of this name");
    let missing = d.0.join("none.sqlite").display().to_string();
    bad(select("0.1", "b", &missing, &[]), "no budget store here");
    assert!(!Path::new(&missing).exists());
    // Bad allowances and names; a duplicate.
    bad(create(&s, "x", "-1", "1e-5", "add-remove"), "epsilon");
    bad(create(&s, "x", "1", "1", "add-remove"), "delta");
    bad(create(&s, "b", "1", "1e-5", "add-remove"), "exists");
    bad(create(&s, "x", "1", "1e-5", "both"), "neighbours");
    // --store needs --budget; --probabilities releases nothing private and is not charged.
    bad(
        run(
            &[
                "select",
                "--mechanism",
                "exponential",
                "--epsilon",
                "1",
                "--sensitivity",
                "1",
                "--store",
                &s,
            ],
            SCORES,
            None,
        ),
        "--budget",
    );
    bad(
        select("0.1", "b", &s, &["--probabilities"]),
        "--probabilities",
    );
    // A damaged store is a clear error, and is left as it is.
    let bytes = std::fs::read(&s).unwrap();
    std::fs::write(&s, &bytes[..bytes.len() / 2]).unwrap();
    bad(select("0.1", "b", &s, &[]), "corrupted or truncated");
    assert_eq!(std::fs::read(&s).unwrap(), &bytes[..bytes.len() / 2]);
    std::fs::write(&s, &bytes).unwrap();
    assert_eq!(show(&s, "b")["spent"]["charges"], 0);
}

#[test]
fn the_store_comes_from_the_option_then_the_environment() {
    let d = Scratch::new("env");
    let (a, b) = (d.store(), d.0.join("other.sqlite").display().to_string());
    let o = run(
        &[
            "budget",
            "create",
            "e",
            "--epsilon",
            "1",
            "--delta",
            "0",
            "--neighbours",
            "add-remove",
        ],
        "",
        Some(&a),
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(Path::new(&a).exists());
    create(&b, "e", "5", "0", "add-remove");
    let args = [
        "--json",
        "select",
        "--mechanism",
        "laplace",
        "--epsilon",
        "0.25",
        "--sensitivity",
        "1",
        "--budget",
        "e",
    ];
    json(&run(&args, SCORES, Some(&a)));
    json(&run(
        &[&args[..], &["--store", &b]].concat(),
        SCORES,
        Some(&a),
    ));
    assert_eq!(show(&a, "e")["spent"]["epsilon"], 0.25);
    assert_eq!(show(&b, "e")["spent"]["charges"], 1);
}

#[test]
fn gp_and_federated_charge_what_they_report() {
    let d = Scratch::new("cmds");
    let s = d.store();
    // Both costs are stated in (eps, delta) only, so they add up in delta too.
    create(&s, "r", "3", "1e-4", "replace-one");
    let g = json(&run(
        &[
            "--json", "gp", "--seed", "3", "--budget", "r", "--store", &s,
        ],
        "",
        None,
    ));
    assert_eq!(g["privacy"]["epsilon"], 2.0);
    let v = show(&s, "r");
    assert_eq!(v["spent"]["epsilon"], 2.0);
    let more = [
        "--seed",
        "3",
        "--epsilon",
        "0.5",
        "--budget",
        "r",
        "--store",
        &s,
    ];
    let fed = [&["--json"][..], &cli::small_simulation("600"), &more].concat();
    json(&run(&fed, "", None));
    let v = show(&s, "r");
    assert_eq!(v["spent"]["charges"], 2);
    assert!((v["spent"]["epsilon"].as_f64().unwrap() - 2.5).abs() < 1e-12);
    // 0.5 more does not fit: exit 3, nothing on stdout; a gp does not fit either.
    let o = run(&[&fed[..], &["--repetitions", "2"]].concat(), "", None);
    assert_eq!(code(&o), 3, "{}", err(&o));
    assert!(o.stdout.is_empty());
    let o = run(
        &[
            "--json", "gp", "--seed", "3", "--budget", "r", "--store", &s,
        ],
        "",
        None,
    );
    assert_eq!(code(&o), 3, "{}", err(&o));
    assert!(o.stdout.is_empty());
    assert_eq!(show(&s, "r")["spent"]["charges"], 2);
}

#[test]
fn tune_is_refused_before_it_runs() {
    let d = Scratch::new("tune");
    let s = d.store();
    create(&s, "t", "0.5", "1e-5", "add-remove");
    // Its whole cost, (1, 1e-5), does not fit in (0.5, 1e-5): exit 3, nothing released.
    let o = run(
        &[
            "--json",
            "tune",
            "--dataset",
            "adult",
            "--budget",
            "t",
            "--store",
            &s,
        ],
        "",
        None,
    );
    assert_eq!(code(&o), 3, "{}", err(&o));
    assert!(o.stdout.is_empty());
    assert_eq!(show(&s, "t")["spent"]["charges"], 0);
}

/// 20 `dptune select --budget` processes killed (SIGKILL) at random points: every process that
/// printed its selection has its charge in the store.
#[test]
fn killed_commands_never_release_uncharged() {
    let d = Scratch::new("kill");
    let s = d.store();
    create(&s, "k", "1000", "1e-5", "add-remove");
    let mut printed = 0;
    let mut killed_early = 0;
    for i in 0..20u64 {
        let mut child = cmd(
            &[
                "select",
                "--mechanism",
                "exponential",
                "--epsilon",
                "0.01",
                "--sensitivity",
                "1",
                "--budget",
                "k",
                "--store",
                &s,
            ],
            None,
        )
        .spawn()
        .unwrap();
        {
            use std::io::Write;
            let _ = child.stdin.take().unwrap().write_all(SCORES.as_bytes());
        }
        // Delays 0, 3, ..., 57 ms: from before the store is opened to after the release (a
        // whole run takes about 30 ms).
        std::thread::sleep(Duration::from_millis(3 * i));
        let _ = child.kill();
        let o = child.wait_with_output().unwrap();
        if String::from_utf8_lossy(&o.stdout).contains("selected candidate") {
            printed += 1;
        } else {
            killed_early += 1;
        }
        let charged = show(&s, "k")["spent"]["charges"].as_u64().unwrap();
        assert!(charged >= printed, "{printed} released, {charged} charged");
    }
    // The kills landed on both sides of the release.
    assert!(
        printed >= 1 && killed_early >= 1,
        "{printed} {killed_early}"
    );
}

/// Review item: each charge's `time` was released as a public input, but a charge is committed
/// as its command starts, so the gaps between charges reveal run times. By default the history
/// has no time; `--times` shows it as a NOT PRIVATE curator-side record, labelled.
#[test]
fn charge_times_are_a_curator_record_shown_on_request() {
    let d = Scratch::new("times");
    let s = d.store();
    assert_eq!(code(&create(&s, "b", "1", "1e-5", "add-remove")), 0);
    json(&select("0.3", "b", &s, &[]));
    let history = |extra: &[&str]| {
        let args = [
            &["--json", "budget", "history", "b", "--store", &s][..],
            extra,
        ]
        .concat();
        json(&run(&args, "", None))
    };
    let plain = history(&[]);
    assert_eq!(plain["charges"].as_array().unwrap().len(), 1);
    release::assert_declared("budget history", &plain, &[]);
    assert!(plain["charges"][0].get("time").is_none(), "{plain}");
    assert!(plain["charges"][0].get("curator").is_none(), "{plain}");
    let timed = history(&["--times"]);
    release::assert_declared("budget history", &timed, &["--times"]);
    let record = &timed["charges"][0]["curator"];
    assert_eq!(record["not_private"], true, "{timed}");
    assert!(record["time"].as_str().unwrap().ends_with('Z'), "{timed}");
    // Teeth: the timed history is not a clean release without the flag.
    assert!(!release::violations("budget history", &timed, &[]).is_empty());
    let text = run(&["budget", "history", "b", "--store", &s], "", None);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("#1 select:") && !text.contains("NOT PRIVATE"),
        "{text}"
    );
    let text = run(
        &["budget", "history", "b", "--store", &s, "--times"],
        "",
        None,
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("#1 [NOT PRIVATE, curator only: "), "{text}");
}
