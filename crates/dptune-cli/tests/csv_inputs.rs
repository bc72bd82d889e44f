//! Inputs read from files, end to end (issue 17 §3): every command reads CSV through the
//! library's one strict reader (quoted fields, byte order marks, field counts, duplicate names),
//! JSON study tables refuse duplicate keys, no error quotes more than an excerpt of a field, and
//! a refused input is exit 2 with nothing charged to a budget.

use std::path::{Path, PathBuf};
use std::process::Output;

#[path = "support/cli.rs"]
mod cli;

fn tmp(name: &str, contents: &str) -> PathBuf {
    cli::temp_file("csv", name, contents)
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts exit 2 and a message containing every one of `needles`; returns the message.
fn refused(o: Output, needles: &[&str]) -> String {
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
    err
}

/// `dptune --json select --column score FILE` with the exponential mechanism at ε = 10 and
/// Δ = 0.01: between scores 0.1 and 0.5 the better candidate's odds are e^200 to 1, so the
/// choice is the better one with probability 1 − e^−200 (and the run is seeded).
fn select_column(file: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "--json",
        "select",
        "--mechanism",
        "exponential",
        "--epsilon",
        "10",
        "--sensitivity",
        "0.01",
        "--seed",
        "1",
        "--column",
        "score",
        path(file),
    ];
    args.extend_from_slice(extra);
    cli::dptune(&args)
}

fn selected(o: Output) -> u64 {
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["index"].as_u64().unwrap()
}

#[test]
fn select_reads_a_quoted_comma_as_part_of_its_field() {
    // Split by hand at commas, the first row's score column read `0.9"`, and candidate 0 won.
    let f = tmp("quoted.csv", "name,score\n\"x,0.9\",0.1\ny,0.5\n");
    assert_eq!(selected(select_column(&f, &[])), 1);
}

#[test]
fn select_sees_the_first_column_behind_a_byte_order_mark() {
    let f = tmp("bom.csv", "\u{feff}score,name\n0.1,a\n0.5,b\n");
    assert_eq!(selected(select_column(&f, &[])), 1);
    // Windows line ends too.
    let f = tmp("bom-crlf.csv", "\u{feff}score\r\n0.5\r\n0.1\r\n");
    assert_eq!(selected(select_column(&f, &[])), 0);
}

#[test]
fn select_refuses_extra_fields_and_duplicate_names() {
    let f = tmp("extra.csv", "name,score\na,0.1\nb,0.5,0.9\n");
    refused(
        select_column(&f, &[]),
        &["line 3", "3 fields", "header has 2"],
    );
    let f = tmp("dup.csv", "score,name,score\n0.1,a,0.2\n");
    refused(select_column(&f, &[]), &["`score` twice"]);
    let f = tmp("nocol.csv", "name,acc\na,0.1\n");
    refused(select_column(&f, &[]), &["`--column`", "name, acc"]);
}

/// 2 MB of records after an opening quote that is never closed.
fn unterminated(header: &str, first: &str) -> String {
    let mut text = format!("{header}\n{first}\"0.5\n");
    let mut i = 0;
    while text.len() < 2_000_000 {
        text.push_str(&format!("0.25,0.5,private-record-{i:06}\n"));
        i += 1;
    }
    text
}

/// The message is short, names the line of the quote, and shows no record past the excerpt.
fn short(err: &str) {
    assert!(err.len() < 400, "{} bytes: {}", err.len(), &err[..400]);
    assert!(!err.contains("private-record-000001"), "{err}");
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn an_unterminated_quote_gives_a_short_message_in_every_command() {
    let f = tmp("quote1.csv", &unterminated("score", ""));
    short(&refused(select_column(&f, &[]), &["closing quote"]));
    let f = tmp("quote3.csv", &unterminated("a,b,score", "1,2,"));
    short(&refused(select_column(&f, &[]), &["closing quote"]));
    let f = tmp("quote-gp.csv", &unterminated("x,y", "1,"));
    let o = cli::dptune(&[
        "gp",
        "--data",
        path(&f),
        "--x",
        "x",
        "--y",
        "y",
        "--y-range",
        "0,1",
        "--x-standardise",
    ]);
    short(&refused(o, &["closing quote"]));
    let f = tmp("quote-study.csv", &unterminated("lr,acc", "1,"));
    let o = cli::dptune(&[
        "study",
        path(&f),
        "--n",
        "100",
        "--score",
        "acc",
        "--test-score",
        "acc",
    ]);
    short(&refused(o, &["closing quote"]));
}

#[test]
fn gp_refuses_the_output_as_an_input_and_repeated_inputs() {
    let f = tmp("gp.csv", "x,y,z\n1,2,3\n2,3,4\n3,4,5\n");
    let gp = |x: &str, y: &str| {
        cli::dptune(&[
            "gp",
            "--data",
            path(&f),
            "--x",
            x,
            "--y",
            y,
            "--y-range",
            "0,10",
            "--x-standardise",
        ])
    };
    refused(gp("y", "y"), &["`y`", "both the output and an input"]);
    refused(gp("x,1", "1"), &["`y`", "both the output and an input"]);
    refused(gp("x,x", "y"), &["`x`", "an input twice"]);
    refused(gp("x,0", "y"), &["`x`", "an input twice"]);
    let f = tmp("gp-dup.csv", "x,y,x\n1,2,3\n2,3,4\n");
    let o = cli::dptune(&[
        "gp",
        "--data",
        path(&f),
        "--x",
        "x",
        "--y",
        "y",
        "--y-range",
        "0,10",
        "--x-standardise",
    ]);
    refused(o, &["`x` twice"]);
}

#[test]
fn study_refuses_duplicate_json_keys_and_extra_csv_fields() {
    let f = tmp(
        "dup.json",
        r#"{"lr=0.1": 0.5, "lr=0.2": 0.7, "lr=0.1": 0.9}"#,
    );
    refused(
        cli::dptune(&["study", path(&f), "--n", "100"]),
        &["key `lr=0.1` appears twice"],
    );
    let f = tmp("study-extra.csv", "lr,acc\n1,0.5\n2,0.7,0.1\n");
    refused(
        cli::dptune(&[
            "study",
            path(&f),
            "--n",
            "100",
            "--score",
            "acc",
            "--test-score",
            "acc",
        ]),
        &["line 3", "3 fields"],
    );
    let f = tmp("study-bom.csv", "\u{feff}acc,lr\n0.5,1\n0.7,2\n");
    let o = cli::dptune(&[
        "study",
        path(&f),
        "--score",
        "acc",
        "--test-score",
        "acc",
        "--n",
        "100",
        "--repetitions",
        "2",
        "--epsilons",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn tune_refuses_extra_fields_in_its_data() {
    let schema = tmp(
        "schema.toml",
        "[label]\nkind = \"class\"\ncolumn = \"y\"\nvalues = [\"0\", \"1\"]\n\n\
         [[feature]]\nkind = \"numeric\"\ncolumn = \"a\"\nlow = 0\nhigh = 1\n",
    );
    let data = tmp("tune.csv", "a,y\n0.5,1\n0.2,0,7\n");
    let o = cli::dptune(&[
        "tune",
        "--data",
        path(&data),
        "--schema",
        path(&schema),
        "--seed",
        "1",
    ]);
    refused(o, &["line 3", "3 fields"]);
}

/// A refused file is refused before anything is charged: the budget's spend stays zero.
#[test]
fn data_errors_charge_nothing() {
    let dir = std::env::temp_dir().join(format!("dptune-csv-budget-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("budget.sqlite");
    let store = path(&store);
    let o = cli::dptune(&[
        "budget",
        "create",
        "b",
        "--epsilon",
        "100",
        "--delta",
        "1e-5",
        "--neighbours",
        "add-remove",
        "--store",
        store,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bad = tmp("budget-bad.csv", "name,score\na,0.1\nb,0.5,0.9\n");
    refused(
        select_column(&bad, &["--budget", "b", "--store", store]),
        &["3 fields"],
    );
    let gp_bad = tmp("budget-gp.csv", "x,y\n1,2\n2,3\n");
    let o = cli::dptune(&[
        "gp",
        "--data",
        path(&gp_bad),
        "--x",
        "y",
        "--y",
        "y",
        "--y-range",
        "0,10",
        "--x-standardise",
        "--budget",
        "b",
        "--store",
        store,
    ]);
    refused(o, &["both the output and an input"]);
    let v = cli::run_json(&["budget", "show", "b", "--store", store]);
    assert_eq!(v["spent"]["charges"], 0, "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}
