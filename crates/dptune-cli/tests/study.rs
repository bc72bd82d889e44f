//! `dptune study` run as a real binary: one JSON object with every (method, budget) cell, the
//! shipped Papernot–Steinke table, `--recommend`, and exit code 2 with a clear message for bad
//! tables.

use std::path::PathBuf;

#[path = "support/cli.rs"]
mod cli;

use cli::dptune;
use serde_json::Value;

fn temp(name: &str, text: &str) -> PathBuf {
    cli::temp_file("study", name, text)
}

fn synthetic_csv() -> String {
    let mut s = String::from("lr,acc_seed0,acc_seed1,acc_seed2\n");
    for i in 0..50 {
        let v = 0.5 + 0.4 * ((i * 7) % 50) as f64 / 49.0;
        s.push_str(&format!("{i},{v},{},{}\n", v - 0.01, v + 0.005));
    }
    s
}

#[test]
fn json_has_every_cell_and_a_plot_is_written() {
    let table = temp("ok.csv", &synthetic_csv());
    let plot = std::env::temp_dir().join(format!("dptune-study-{}.svg", std::process::id()));
    let out = dptune(&[
        "--json",
        "study",
        table.to_str().unwrap(),
        "--score",
        "acc",
        "--n",
        "500",
        "--epsilons",
        "0.1,1,10",
        "--repetitions",
        "50",
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.trim().lines().count(), 1);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["configurations"], 50);
    assert_eq!(v["validation_source"], "acc_seed0");
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 9 * 3);
    let np = cells
        .iter()
        .find(|c| c["method"] == "non-private-best")
        .unwrap();
    assert_eq!(np["mean"].as_f64().unwrap(), 0.0);
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("permute-and-flip") && svg.contains("log"));
}

#[test]
fn papernot_steinke_table_and_recommendation() {
    let ps = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dptune/data/papernot_steinke_2022/lr_acc.json"
    );
    let out = dptune(&[
        "--json",
        "study",
        ps,
        "--n",
        "10000",
        "--epsilons",
        "1",
        "--repetitions",
        "20",
        "--methods",
        "exponential,uniform",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["configurations"], 1012);
    let out = dptune(&[
        "--json",
        "study",
        "--recommend",
        "--candidates",
        "50",
        "--epsilon",
        "1",
        "--n",
        "1000",
        "--repetitions",
        "100",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["method"].is_string() && v["reason"].as_str().unwrap().contains("expected regret"));
}

fn fails_with_2(table: &str, name: &str, expect: &str) {
    let p = temp(name, table);
    let out = dptune(&["study", p.to_str().unwrap(), "--score", "acc", "--n", "100"]);
    assert_eq!(out.status.code(), Some(2), "{name}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(expect), "{name}: {err}");
}

#[test]
fn bad_tables_exit_2() {
    fails_with_2(
        "lr,loss_seed0,loss_seed1\n1,0.1,0.2\n2,0.3,0.4\n",
        "missing.csv",
        "no column `acc`",
    );
    fails_with_2(
        "lr,acc_seed0,acc_seed1\n1,0.1,0.2\n2,high,0.4\n",
        "nonnum.csv",
        "not a finite number",
    );
    fails_with_2(
        "lr,acc_seed0,acc_seed1\n1,0.1,0.2\n",
        "one.csv",
        "at least 2 configurations",
    );
    let out = dptune(&[
        "study",
        "/nonexistent/table.csv",
        "--score",
        "acc",
        "--n",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn png_plots_are_rasterised_and_other_formats_refused_up_front() {
    let table = temp("png.csv", &synthetic_csv());
    let plot = std::env::temp_dir().join(format!("dptune-study-{}.png", std::process::id()));
    let args = |p: &str| {
        vec![
            "study".to_string(),
            table.to_str().unwrap().to_string(),
            "--score".into(),
            "acc".into(),
            "--n".into(),
            "500".into(),
            "--epsilons".into(),
            "1".into(),
            "--repetitions".into(),
            "20".into(),
            "--plot".into(),
            p.to_string(),
        ]
    };
    let run = |p: &str| {
        let a = args(p);
        dptune(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let out = run(plot.to_str().unwrap());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&plot).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 10_000);
    let jpg = std::env::temp_dir().join(format!("dptune-study-{}.jpg", std::process::id()));
    let out = run(jpg.to_str().unwrap());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(".svg or .png"));
    assert!(!jpg.exists(), "nothing is written for a refused format");
}
