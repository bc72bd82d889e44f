//! Benchmark tables of (configuration → validation score, test score), read from CSV (plain or
//! gzip) or from a JSON object `{"<configuration>": score, ...}`.
//!
//! The shipped HPO tables carry one validation column per seed and no test column
//! (`crates/dptune/data/PROVENANCE.md`). By default the study selects on one seed's column and
//! measures regret on the mean of the other seeds' columns; any column the user names works.

use std::io::Read;
use std::path::Path;

use flate2::read::GzDecoder;

use crate::error::{Error, Result};
use crate::select::Goal;

/// Validation and test scores of every configuration of a table, in table units.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreTable {
    /// The score the tuner sees (selection is made on it).
    pub validation: Vec<f64>,
    /// The score regret is measured on.
    pub test: Vec<f64>,
    /// Whether larger or smaller scores are better (for both columns).
    pub goal: Goal,
    /// Which column(s) the validation scores came from.
    pub validation_source: String,
    /// Which column(s) the test scores came from.
    pub test_source: String,
}

impl ScoreTable {
    /// Checks that there are at least two configurations, equally many validation and test
    /// scores, and that every score is finite.
    pub fn new(validation: Vec<f64>, test: Vec<f64>, goal: Goal) -> Result<Self> {
        if validation.len() < 2 {
            return Err(Error::invalid(
                "table",
                format!("{} configurations", validation.len()),
                "a study needs at least 2 configurations to choose from",
            ));
        }
        if validation.len() != test.len() {
            return Err(Error::invalid(
                "test",
                test.len(),
                format!(
                    "need one test score per configuration ({})",
                    validation.len()
                ),
            ));
        }
        for (name, col) in [("validation", &validation), ("test", &test)] {
            if let Some(i) = col.iter().position(|x| !x.is_finite()) {
                return Err(Error::invalid(
                    if name == "validation" {
                        "validation"
                    } else {
                        "test"
                    },
                    col[i],
                    format!("configuration {i}: scores must be finite"),
                ));
            }
        }
        Ok(Self {
            validation,
            test,
            goal,
            validation_source: "validation".into(),
            test_source: "test".into(),
        })
    }

    /// The number of configurations.
    pub fn len(&self) -> usize {
        self.validation.len()
    }

    /// Always false (a table has at least two configurations).
    pub fn is_empty(&self) -> bool {
        self.validation.is_empty()
    }

    /// Both columns clipped to `[low, high]` (public bounds, THEORY.md rule 5).
    pub fn clipped(&self, low: f64, high: f64) -> Result<Self> {
        if !(low.is_finite() && high.is_finite() && low < high) {
            return Err(Error::invalid(
                "clip",
                format!("[{low}, {high}]"),
                "need finite low < high",
            ));
        }
        let c = |v: &[f64]| v.iter().map(|x| x.clamp(low, high)).collect();
        Ok(Self {
            validation: c(&self.validation),
            test: c(&self.test),
            ..self.clone()
        })
    }
}

/// Which columns of a CSV table to use.
#[derive(Debug, Clone, PartialEq)]
pub struct Columns {
    /// The validation column, or the base name `B` of per-seed columns `B_seed0`, `B_seed1`, ….
    pub score: String,
    /// The test column (or per-seed base name, whose seeds are averaged). `None`: when the score
    /// is a per-seed column `B_seed<k>` (or a base `B`, then seed 0 is used), the mean of the other
    /// seeds of `B`.
    pub test: Option<String>,
    /// Larger or smaller is better.
    pub goal: Goal,
}

fn data_err(location: impl Into<String>, reason: impl Into<String>) -> Error {
    Error::Data {
        location: location.into(),
        reason: reason.into(),
    }
}

/// Reads a file, transparently gunzipping it when it starts with the gzip magic bytes.
fn read_text(path: &Path) -> Result<String> {
    let loc = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| data_err(&loc, e.to_string()))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        GzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .map_err(|e| data_err(&loc, format!("gzip: {e}")))?;
        Ok(s)
    } else {
        String::from_utf8(bytes).map_err(|e| data_err(&loc, format!("not UTF-8: {e}")))
    }
}

/// Loads a CSV table (plain or gzip) with a header line, selected by `columns`. (A JSON object
/// of scores, such as the Papernot–Steinke `lr_acc.json`, is parsed by the caller and passed
/// to [`table_from_values`].)
pub fn load_table(path: &Path, columns: &Columns) -> Result<ScoreTable> {
    let text = read_text(path)?;
    table_from_csv(&text, &path.display().to_string(), columns)
}

/// A table with a single score per configuration: validation = test = the value (regret is
/// then measured on the selection score itself, as in Papernot & Steinke's Figure 7).
pub fn table_from_values(scores: Vec<f64>, goal: Goal) -> Result<ScoreTable> {
    let mut t = ScoreTable::new(scores.clone(), scores, goal)?;
    t.validation_source = "value".into();
    t.test_source = "value (no held-out score in this table)".into();
    Ok(t)
}

/// Per-seed columns `base_seed<k>` of `header`, as (k, column index), sorted by k.
fn seed_columns(header: &[String], base: &str) -> Vec<(u32, usize)> {
    let prefix = format!("{base}_seed");
    let mut v: Vec<(u32, usize)> = header
        .iter()
        .enumerate()
        .filter_map(|(i, h)| h.strip_prefix(&prefix)?.parse().ok().map(|k| (k, i)))
        .collect();
    v.sort();
    v
}

/// Splits `name` = `base_seed<k>` into (base, k).
fn split_seed(name: &str) -> Option<(&str, u32)> {
    let at = name.rfind("_seed")?;
    let k = name[at + 5..].parse().ok()?;
    Some((&name[..at], k))
}

/// CSV with a header; see [`Columns`] for how the columns are chosen.
pub fn table_from_csv(text: &str, location: &str, columns: &Columns) -> Result<ScoreTable> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| data_err(location, format!("header: {e}")))?
        .iter()
        .map(str::to_owned)
        .collect();
    let missing = |name: &str| {
        data_err(
            location,
            format!(
                "no column `{name}` (nor per-seed columns `{name}_seed<k>`); columns are: {}",
                header.join(", ")
            ),
        )
    };
    // Resolve the validation column and the default test columns.
    let (val_idx, default_test): (usize, Vec<usize>) =
        if let Some(i) = header.iter().position(|h| *h == columns.score) {
            let others = split_seed(&columns.score)
                .map(|(base, k)| {
                    seed_columns(&header, base)
                        .into_iter()
                        .filter(|&(j, _)| j != k)
                        .map(|(_, c)| c)
                        .collect()
                })
                .unwrap_or_default();
            (i, others)
        } else {
            let seeds = seed_columns(&header, &columns.score);
            if seeds.is_empty() {
                return Err(missing(&columns.score));
            }
            (seeds[0].1, seeds[1..].iter().map(|&(_, c)| c).collect())
        };
    let test_idx: Vec<usize> = match &columns.test {
        Some(t) => match header.iter().position(|h| h == t) {
            Some(i) => vec![i],
            None => {
                let s: Vec<usize> = seed_columns(&header, t).into_iter().map(|x| x.1).collect();
                if s.is_empty() {
                    return Err(missing(t));
                }
                s
            }
        },
        None => {
            if default_test.is_empty() {
                return Err(data_err(
                    location,
                    format!(
                        "`{}` has no other seeds to measure regret on; name a test column with \
                         --test-score (it may be the score column itself)",
                        header[val_idx]
                    ),
                ));
            }
            default_test
        }
    };
    let mut validation = Vec::new();
    let mut test = Vec::new();
    for (r, rec) in rdr.records().enumerate() {
        let line = r + 2;
        let rec = rec.map_err(|e| data_err(format!("{location}:{line}"), e.to_string()))?;
        let num = |c: usize| -> Result<f64> {
            let f = rec.get(c).unwrap_or("");
            f.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    data_err(
                        format!("{location}:{line}"),
                        format!("column `{}`: {f:?} is not a finite number", header[c]),
                    )
                })
        };
        validation.push(num(val_idx)?);
        let mut s = 0.0;
        for &c in &test_idx {
            s += num(c)?;
        }
        test.push(s / test_idx.len() as f64);
    }
    let mut t = ScoreTable::new(validation, test, columns.goal).map_err(|e| match e {
        Error::InvalidParameter { reason, .. } => data_err(location, reason),
        e => e,
    })?;
    t.validation_source = header[val_idx].clone();
    t.test_source = if test_idx.len() == 1 {
        header[test_idx[0]].clone()
    } else {
        format!(
            "mean of {}",
            test_idx
                .iter()
                .map(|&c| header[c].as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(score: &str, test: Option<&str>) -> Columns {
        Columns {
            score: score.into(),
            test: test.map(Into::into),
            goal: Goal::Maximize,
        }
    }

    const CSV: &str = "a,acc_seed0,acc_seed1,acc_seed2\n1,0.5,0.6,0.7\n2,0.9,0.1,0.3\n";

    #[test]
    fn seeds_default_to_seed_zero_and_the_mean_of_the_others() {
        let t = table_from_csv(CSV, "t", &cols("acc", None)).unwrap();
        assert_eq!(t.validation, vec![0.5, 0.9]);
        assert!((t.test[0] - 0.65).abs() < 1e-12 && (t.test[1] - 0.2).abs() < 1e-12);
        let t = table_from_csv(CSV, "t", &cols("acc_seed1", None)).unwrap();
        assert_eq!(t.validation, vec![0.6, 0.1]);
        assert!((t.test[0] - 0.6).abs() < 1e-12);
        let t = table_from_csv(CSV, "t", &cols("acc_seed1", Some("acc_seed1"))).unwrap();
        assert_eq!(t.test, t.validation);
    }

    #[test]
    fn bad_tables_are_data_errors() {
        let e = table_from_csv(CSV, "t", &cols("loss", None)).unwrap_err();
        assert!(e.to_string().contains("no column `loss`"), "{e}");
        let e = table_from_csv(
            "a,s_seed0,s_seed1\n1,x,0.2\n2,0.1,0.2\n",
            "t",
            &cols("s", None),
        )
        .unwrap_err();
        assert!(e.to_string().contains("not a finite number"), "{e}");
        let e = table_from_csv("s_seed0,s_seed1\n0.1,0.2\n", "t", &cols("s", None)).unwrap_err();
        assert!(e.to_string().contains("at least 2"), "{e}");
        let e = table_from_values(vec![1.0], Goal::Maximize).unwrap_err();
        assert!(e.to_string().contains("at least 2"), "{e}");
    }
}
