//! Runs the real `dptune` binary: `dptune gp`.

#[path = "support/cli.rs"]
mod cli;

/// Exit code, stdout and stderr of `dptune args`.
fn dptune(args: &[&str]) -> (i32, String, String) {
    let out = cli::dptune(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tmp(name: &str, contents: &str) -> std::path::PathBuf {
    cli::temp_file("gp", name, contents)
}

/// `dptune gp --data <path> --x <x> --y <y> --y-range <yr>` followed by `extra`.
fn data_args<'a>(
    path: &'a str,
    x: &'a str,
    y: &'a str,
    yr: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut v = vec!["gp", "--data", path, "--x", x, "--y", y, "--y-range", yr];
    v.extend_from_slice(extra);
    v
}

#[test]
fn png_plot_is_rasterised() {
    let png = std::env::temp_dir().join(format!("dptune-gp-{}.png", std::process::id()));
    let (code, _, err) = dptune(&["gp", "--seed", "3", "--plot", png.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 10_000);
}

/// Review item: `gp` worded its seeded-run note its own way. A seeded run's text carries the
/// library's one note (`dptune::noise::SEEDED_NOTE`, as `tune` and `select`); an unseeded run
/// (the operating system's generator) has none.
#[test]
fn a_seeded_run_carries_the_one_seeded_note() {
    let (code, out, err) = dptune(&["gp", "--seed", "3"]);
    assert_eq!(code, 0, "{err}");
    let notes: Vec<&str> = out.lines().filter(|l| l.contains("seeded")).collect();
    assert_eq!(notes.len(), 1, "{out}");
    assert!(
        notes[0]
            .trim_start()
            .strip_prefix("note:")
            .map(str::trim_start)
            == Some(dptune::noise::SEEDED_NOTE),
        "{out}"
    );
    let (code, out, err) = dptune(&["gp"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains("seeded") && !out.contains("NOT PRIVATE"),
        "{out}"
    );
}

#[test]
fn demo_json_has_the_promised_keys() {
    let (code, out, err) = dptune(&["gp", "--seed", "3", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let l = v["lengthscale"].as_f64().unwrap();
    assert!([0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0].contains(&l));
    assert_eq!(v["privacy"]["epsilon"].as_f64().unwrap(), 2.0);
    assert_eq!(v["privacy"]["delta"].as_f64().unwrap(), 1e-5);
    assert_eq!(v["data"]["n_train"].as_u64().unwrap(), 354);
    let values = v["predictions"]["values"].as_array().unwrap();
    assert_eq!(
        values.len() as u64,
        v["predictions"]["n_test"].as_u64().unwrap()
    );
    assert_eq!(
        v["predictions"]["test_rows"].as_array().unwrap().len(),
        values.len()
    );
}

#[test]
fn user_data_with_clipping_and_plot() {
    let mut csv = String::from("x,y\n");
    for i in 0..60 {
        let x = i as f64 / 10.0;
        let y = if i == 7 { 99.0 } else { x.sin() };
        csv.push_str(&format!("{x},{y}\n"));
    }
    let data = tmp("data.csv", &csv);
    let svg = std::env::temp_dir().join(format!("dptune-gp-{}.svg", std::process::id()));
    let path = data.to_str().unwrap();
    let (code, out, err) = dptune(&data_args(
        path,
        "x",
        "y",
        "-2,2",
        &[
            "--x-range",
            "0,6",
            "--lengthscales",
            "0.3,1,3",
            "--folds",
            "4",
            "--eps-select",
            "1",
            "--eps-predict",
            "2",
            "--delta",
            "1e-6",
            "--seed",
            "1",
            "--plot",
            svg.to_str().unwrap(),
            "--diagnostics",
            "--json",
        ],
    ));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["privacy"]["epsilon"].as_f64().unwrap(), 3.0);
    assert_eq!(v["privacy"]["delta"].as_f64().unwrap(), 1e-6);
    // Row 7 (y = 99) is either clipped in training or held out.
    let d = &v["diagnostics"];
    assert!(d["clipped_training_outputs"].as_u64().unwrap() <= 1);
    assert!(d["label"].as_str().unwrap().starts_with("NOT PRIVATE"));
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.contains("private cloaked predictions"));
    // --diagnostics draws the data and the non-private mean, under the NOT PRIVATE label.
    assert!(
        s.contains("NOT PRIVATE") && s.contains("fill=\"#999\""),
        "{s}"
    );
    assert!(v["data"]["input_scaling"]
        .as_str()
        .unwrap()
        .contains("declared public ranges (x in [0, 6])"));
    // Human output says so too; --x-standardise states that the inputs are treated as public.
    let (code, out, err) = dptune(&data_args(
        path,
        "0",
        "1",
        "-2,2",
        &[
            "--x-standardise",
            "--lengthscales",
            "0.3,1,3",
            "--seed",
            "2",
        ],
    ));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("treated as PUBLIC"), "{out}");
    assert!(out.contains("clipped into the declared range"), "{out}");
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let small = tmp("small.csv", "a,b\n1,2\n2,3\n3,4\n4,5\n5,6\n");
    let p = small.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["gp", "--lengthscales", "1,-2"], "lengthscales"),
        (vec!["gp", "--lengthscales", "0"], "lengthscales"),
        (
            data_args(p, "a", "b", "0,10", &["--x-range", "0,10", "--folds", "5"]),
            "folds",
        ),
        (
            data_args(p, "a", "b", "10,0", &["--x-range", "0,10"]),
            "--y-range",
        ),
        (
            data_args(p, "zz", "b", "0,10", &["--x-range", "0,10"]),
            "no column",
        ),
        // Input bounds: required, well-formed, and holding for every row.
        (data_args(p, "a", "b", "0,10", &[]), "--x-range"),
        (
            data_args(p, "a", "b", "0,10", &["--x-range", "0,3"]),
            "outside the declared",
        ),
        (
            data_args(p, "a", "b", "0,10", &["--x-range", "5,1"]),
            "LO < HI",
        ),
        (
            data_args(p, "a", "b", "0,10", &["--x-range", "0,1,2"]),
            "once per --x column",
        ),
        (
            data_args(
                p,
                "a",
                "b",
                "0,10",
                &["--x-range", "0,10", "--x-standardise"],
            ),
            "cannot be used with",
        ),
        (vec!["gp", "--noise-ratio", "0"], "`--noise-ratio`"),
        (vec!["gp", "--eps-predict", "-1"], "`--eps-predict`"),
        (vec!["gp", "--plot", "out.jpg"], ".svg or .png"),
    ];
    for (args, needle) in cases {
        let (code, _, err) = dptune(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // A vanishing noise variance (which made the kernel matrix of identical inputs singular) is
    // refused up front, naming the flag, before any data-dependent factorisation.
    let mut rows = String::from("a,b\n");
    for i in 0..20 {
        rows.push_str(&format!("1.0,{}\n", i % 3));
    }
    let dup = tmp("dup.csv", &rows);
    let (code, _, err) = dptune(&data_args(
        dup.to_str().unwrap(),
        "a",
        "b",
        "0,3",
        &["--x-standardise", "--noise-ratio", "1e-300", "--folds", "2"],
    ));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`--noise-ratio`: must lie in"), "{err}");
}

/// Every leaf of a JSON value by its path (`a.b.3`).
fn leaves(v: &serde_json::Value, path: String, out: &mut Vec<(String, serde_json::Value)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves(x, p, out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                leaves(x, format!("{path}.{i}"), out);
            }
        }
        _ => out.push((path, v.clone())),
    }
}

/// The charged release of `dptune gp --json` and what is computed from it and public inputs
/// (the noise scale depends on the selected ℓ): these may differ between neighbours. Every
/// other field must be a public input or computed from public inputs.
const RELEASE: [&str; 10] = [
    "lengthscale",
    "selection.index",
    "predictions.values",
    "predictions.noise_sd",
    "predictions.sigma",
    "predictions.classic_sigma_c_delta",
    "predictions.sensitivity",
    "predictions.charged_sensitivity",
    "predictions.granularity",
    "predictions.mean_noise_sd_at_test",
];

/// The non-release leaves of `dptune gp --json --seed 5 <extra>` on `csv`.
fn non_release(csv: &str, tag: &str, extra: &[&str]) -> Vec<(String, serde_json::Value)> {
    let path = tmp(tag, csv);
    let mut args = data_args(
        path.to_str().unwrap(),
        "x",
        "y",
        "-2,2",
        &[
            "--x-range",
            "0,6",
            "--lengthscales",
            "0.3,1,3",
            "--seed",
            "5",
        ],
    );
    args.extend_from_slice(extra);
    let v = cli::run_json(&args);
    let mut all = vec![];
    leaves(&v, String::new(), &mut all);
    for (k, _) in &all {
        assert!(!k.contains("time"), "timing is never printed: {k}");
    }
    all.retain(|(k, _)| {
        !RELEASE
            .iter()
            .any(|r| k == r || k.starts_with(&format!("{r}.")))
    });
    all
}

fn rows(n: usize, replaced: Option<(usize, f64)>) -> String {
    let mut csv = String::from("x,y\n");
    for i in 0..n {
        let x = i as f64 * 6.0 / n as f64;
        let y = match replaced {
            Some((j, v)) if j == i => v,
            _ => x.sin(),
        };
        csv.push_str(&format!("{x},{y}\n"));
    }
    csv
}

#[test]
fn default_output_has_no_diagnostics_and_the_flag_labels_them() {
    let csv = tmp("diag.csv", &rows(50, Some((3, 40.0))));
    let p = csv.to_str().unwrap();
    let base = [
        "--x-range",
        "0,6",
        "--lengthscales",
        "0.3,1,3",
        "--seed",
        "4",
    ];
    let v = cli::run_json(&data_args(p, "x", "y", "-2,2", &base));
    let mut all = vec![];
    leaves(&v, String::new(), &mut all);
    for (k, _) in &all {
        for word in ["rmse", "clipped", "diagnostic", "time"] {
            assert!(!k.contains(word), "default JSON has a diagnostic field {k}");
        }
    }
    let (code, out, err) = dptune(&data_args(p, "x", "y", "-2,2", &base));
    assert_eq!(code, 0, "{err}");
    // The run is seeded, so its text carries the one seeded-run note (which says NOT PRIVATE);
    // apart from that note, no NOT PRIVATE diagnostic.
    assert_eq!(out.matches(dptune::noise::SEEDED_NOTE).count(), 1, "{out}");
    let rest = out.replace(dptune::noise::SEEDED_NOTE, "");
    assert!(
        !rest.contains("RMSE") && !rest.contains("NOT PRIVATE"),
        "{out}"
    );
    assert!(!out.contains("were outside"), "{out}");
    // Default plot: the release only (no data points, no non-private mean).
    let svg = std::env::temp_dir().join(format!("dptune-gp-diag-{}.svg", std::process::id()));
    let mut with_plot = data_args(p, "x", "y", "-2,2", &base);
    with_plot.extend_from_slice(&["--plot", svg.to_str().unwrap()]);
    let (code, _, err) = dptune(&with_plot);
    assert_eq!(code, 0, "{err}");
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.contains("private cloaked predictions"), "{s}");
    assert!(!s.contains("NOT PRIVATE") && !s.contains("#999") && !s.contains("#7570b3"));
    // --diagnostics: present, and labelled NOT PRIVATE in JSON and in every text line.
    let mut diag = data_args(p, "x", "y", "-2,2", &base);
    diag.push("--diagnostics");
    let v = cli::run_json(&diag);
    let d = &v["diagnostics"];
    assert!(d["label"].as_str().unwrap().starts_with("NOT PRIVATE"));
    assert!(d["test_rmse"].as_f64().unwrap() > 0.0);
    assert!(d["clipped_training_outputs"].as_u64().unwrap() <= 1);
    let (code, out, err) = dptune(&diag);
    assert_eq!(code, 0, "{err}");
    for line in out
        .lines()
        .filter(|l| l.contains("RMSE") || l.contains("were outside"))
    {
        assert!(line.contains("NOT PRIVATE"), "{line}");
    }
    assert!(out.contains("test RMSE"), "{out}");
}

/// Neighbour differencing under the GP's relation (replace-one: one output changed, inputs and
/// hence the row count public): with the same seed, every field except the charged release is
/// identical. The same check on the --diagnostics output must fail (the deliberately leaky
/// variant: the held-out RMSE and the clipped count read the private outputs).
#[test]
fn neighbour_differencing_replace_one() {
    let d = rows(50, None);
    for (j, v) in [(7, 1.9), (20, -40.0), (41, 0.0)] {
        let d2 = rows(50, Some((j, v)));
        assert_eq!(
            non_release(&d, "nd-ab.csv", &[]),
            non_release(&d2, "nd-ab.csv", &[]),
            "a non-release field differs when output {j} changes"
        );
    }
    let d2 = rows(50, Some((20, -40.0)));
    assert_ne!(
        non_release(&d, "nd-cd.csv", &["--diagnostics"]),
        non_release(&d2, "nd-cd.csv", &["--diagnostics"]),
        "the leaky variant (diagnostics) must be caught"
    );
}

/// D and D minus one record, same seed. Removing a record removes a public input point, so the
/// fields computed from the inputs may change; this checks that nothing else does: every
/// differing non-release field is one of the declared input-derived fields (row counts, the
/// random split of the rows, the data-independent selection sensitivity).
#[test]
fn neighbour_differencing_remove_one() {
    const FROM_INPUTS: [&str; 5] = [
        "data.n_train",
        "data.n_test",
        "predictions.n_test",
        "predictions.test_rows",
        "selection.sensitivity",
    ];
    let d = rows(50, None);
    let mut minus = String::new();
    for (i, line) in d.lines().enumerate() {
        if i != 13 {
            minus.push_str(line);
            minus.push('\n');
        }
    }
    let a = non_release(&d, "rm-ab.csv", &[]);
    let b = non_release(&minus, "rm-ab.csv", &[]);
    let get = |v: &[(String, serde_json::Value)], k: &str| {
        v.iter().find(|(p, _)| p == k).map(|(_, x)| x.clone())
    };
    let keys: std::collections::BTreeSet<&String> = a.iter().chain(&b).map(|(k, _)| k).collect();
    for k in keys {
        if get(&a, k) != get(&b, k) {
            assert!(
                FROM_INPUTS
                    .iter()
                    .any(|f| k == f || k.starts_with(&format!("{f}."))),
                "undeclared field {k} differs after removing a record"
            );
        }
    }
    // The leaky variant: the diagnostics differ and are not declared input-derived.
    let a = non_release(&d, "rm-cd.csv", &["--diagnostics"]);
    let b = non_release(&minus, "rm-cd.csv", &["--diagnostics"]);
    assert_ne!(
        get(&a, "diagnostics.test_rmse"),
        get(&b, "diagnostics.test_rmse")
    );
}
