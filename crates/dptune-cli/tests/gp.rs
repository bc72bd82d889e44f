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

#[test]
fn demo_json_has_the_promised_keys() {
    let (code, out, err) = dptune(&["gp", "--seed", "3", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let l = v["lengthscale"].as_f64().unwrap();
    assert!([0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0].contains(&l));
    assert!(v["test_rmse"].as_f64().unwrap() > 0.0);
    assert_eq!(v["privacy"]["epsilon"].as_f64().unwrap(), 2.0);
    assert_eq!(v["privacy"]["delta"].as_f64().unwrap(), 1e-5);
    assert_eq!(v["data"]["n_train"].as_u64().unwrap(), 354);
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
            "--json",
        ],
    ));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["privacy"]["epsilon"].as_f64().unwrap(), 3.0);
    assert_eq!(v["privacy"]["delta"].as_f64().unwrap(), 1e-6);
    // Row 7 (y = 99) is either clipped in training or held out.
    assert!(v["data"]["clipped"].as_u64().unwrap() <= 1);
    assert!(v["data"]["clipped_note"]
        .as_str()
        .unwrap()
        .contains("clipped"));
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.contains("private cloaked predictions"));
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
    assert!(out.contains("clipped (not an error"), "{out}");
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
            "y_range",
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
        (vec!["gp", "--noise-ratio", "0"], "noise_var"),
        (vec!["gp", "--eps-predict=-1"], "eps_predict"),
        (vec!["gp", "--plot", "out.jpg"], ".svg or .png"),
    ];
    for (args, needle) in cases {
        let (code, _, err) = dptune(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // Singular kernel: identical inputs and a vanishing noise variance.
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
    assert!(err.contains("singular"), "{err}");
}
