//! Benchmark tables of (configuration → validation score, test score), read from CSV (plain or
//! gzip, through the one strict [`CsvReader`]) or from a JSON object
//! `{"<configuration>": score, ...}` (duplicate keys refused).
//!
//! The shipped HPO tables carry one validation column per seed and no test column
//! (`crates/dptune/data/PROVENANCE.md`). By default the study selects on one seed's column and
//! measures regret on the mean of the other seeds' columns; any column the user names works.

use std::io::Read;
use std::path::Path;

use crate::data::CsvReader;
use crate::error::{excerpt, Error, Result};
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

/// Loads a CSV table (plain or gzip) with a header line, selected by `columns`, through the one
/// strict [`CsvReader`]. (A JSON object of scores, such as the Papernot–Steinke `lr_acc.json`,
/// is read by [`load_json_table`].)
pub fn load_table(path: &Path, columns: &Columns) -> Result<ScoreTable> {
    let mut rd = CsvReader::open(path, true)?;
    table_from_reader(&mut rd, columns)
}

/// Loads a JSON object `{"<configuration>": score, ...}`; see [`table_from_json`].
pub fn load_json_table(path: &Path, goal: Goal) -> Result<ScoreTable> {
    let location = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Error::data(&location, e.to_string()))?;
    table_from_json(&bytes, &location, goal)
}

/// A JSON object `{"<configuration>": score, ...}` as a table of single scores
/// ([`table_from_values`]), in the order of its keys as `serde_json` maps them. Every score
/// must be a number, and a key given twice is refused (`serde_json` would keep the last).
/// Messages quote keys through [`excerpt`] and never quote a value.
pub fn table_from_json(bytes: &[u8], location: &str, goal: Goal) -> Result<ScoreTable> {
    let not_json = |e: serde_json::Error| {
        // A syntax error's message names a position and never the input; a data error from
        // the visitor below is one of ours.
        Error::data(location, format!("not a JSON table: {e}"))
    };
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(not_json)?;
    let serde_json::Value::Object(obj) = value else {
        return Err(Error::data(
            location,
            "expected a JSON object {configuration: score}",
        ));
    };
    serde_json::from_slice::<DistinctKeys>(bytes).map_err(not_json)?;
    let scores = obj
        .iter()
        .map(|(k, v)| {
            v.as_f64().ok_or_else(|| {
                Error::data(
                    location,
                    format!("the score of key `{}` is not a number", excerpt(k)),
                )
            })
        })
        .collect::<Result<Vec<f64>>>()?;
    table_from_values(scores, goal).map_err(|e| match e {
        Error::InvalidParameter { reason, .. } => Error::data(location, reason),
        e => e,
    })
}

/// A JSON object whose keys are distinct (values are skipped): read only to refuse duplicates.
struct DistinctKeys;

impl<'de> serde::Deserialize<'de> for DistinctKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = DistinctKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<DistinctKeys, A::Error> {
                let mut seen = std::collections::HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    if let Some(key) = seen.replace(key) {
                        return Err(serde::de::Error::custom(format!(
                            "key `{}` appears twice",
                            excerpt(&key)
                        )));
                    }
                }
                Ok(DistinctKeys)
            }
        }
        d.deserialize_map(Keys)
    }
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

/// CSV with a header read from `reader` (`location` names it in errors); see [`Columns`] for
/// how the columns are chosen.
pub fn table_from_csv(reader: impl Read, location: &str, columns: &Columns) -> Result<ScoreTable> {
    table_from_reader(&mut CsvReader::new(reader, location, true)?, columns)
}

fn table_from_reader<R: Read>(rd: &mut CsvReader<R>, columns: &Columns) -> Result<ScoreTable> {
    let location = rd.source().to_owned();
    let header = rd.header().to_vec();
    let missing = |name: &str| {
        Error::data(
            &location,
            format!(
                "no column `{0}` (nor per-seed columns `{0}_seed<k>`); columns are: {1}",
                excerpt(name),
                rd.columns_list()
            ),
        )
    };
    // Resolve the validation column and the default test columns.
    let (val_idx, default_test): (usize, Vec<usize>) = if let Some(i) = rd.column(&columns.score) {
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
        Some(t) => match rd.column(t) {
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
                return Err(Error::data(
                    &location,
                    format!(
                        "`{}` has no other seeds to measure regret on; name a test column with \
                         --test-score (it may be the score column itself)",
                        excerpt(&header[val_idx])
                    ),
                ));
            }
            default_test
        }
    };
    let mut cols = vec![val_idx];
    cols.extend(&test_idx);
    let values = rd.numeric_columns(&cols)?;
    let validation = values[0].clone();
    let test = (0..validation.len())
        .map(|r| values[1..].iter().fold(0.0, |s, c| s + c[r]) / test_idx.len() as f64)
        .collect();
    let mut t = ScoreTable::new(validation, test, columns.goal).map_err(|e| match e {
        Error::InvalidParameter { reason, .. } => Error::data(&location, reason),
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
        let t = table_from_csv(CSV.as_bytes(), "t", &cols("acc", None)).unwrap();
        assert_eq!(t.validation, vec![0.5, 0.9]);
        assert!((t.test[0] - 0.65).abs() < 1e-12 && (t.test[1] - 0.2).abs() < 1e-12);
        let t = table_from_csv(CSV.as_bytes(), "t", &cols("acc_seed1", None)).unwrap();
        assert_eq!(t.validation, vec![0.6, 0.1]);
        assert!((t.test[0] - 0.6).abs() < 1e-12);
        let t = table_from_csv(CSV.as_bytes(), "t", &cols("acc_seed1", Some("acc_seed1"))).unwrap();
        assert_eq!(t.test, t.validation);
    }

    #[test]
    fn bad_tables_are_data_errors() {
        let e = table_from_csv(CSV.as_bytes(), "t", &cols("loss", None)).unwrap_err();
        assert!(e.to_string().contains("no column `loss`"), "{e}");
        let e = table_from_csv(
            "a,s_seed0,s_seed1\n1,x,0.2\n2,0.1,0.2\n".as_bytes(),
            "t",
            &cols("s", None),
        )
        .unwrap_err();
        assert!(e.to_string().contains("not a finite number"), "{e}");
        let e = table_from_csv(
            "s_seed0,s_seed1\n0.1,0.2\n".as_bytes(),
            "t",
            &cols("s", None),
        )
        .unwrap_err();
        assert!(e.to_string().contains("at least 2"), "{e}");
        let e = table_from_values(vec![1.0], Goal::Maximize).unwrap_err();
        assert!(e.to_string().contains("at least 2"), "{e}");
    }

    #[test]
    fn csv_tables_are_read_strictly() {
        let csv = |text: &str| table_from_csv(text.as_bytes(), "t", &cols("acc", None));
        let t = csv("\u{feff}acc_seed0,acc_seed1\n0.5,0.6\n0.9,0.1\n").unwrap();
        assert_eq!(
            t.validation,
            vec![0.5, 0.9],
            "a byte order mark hides no name"
        );
        let e = csv("acc_seed0,acc_seed1\n0.5,0.6\n0.9,0.1,0.7\n").unwrap_err();
        assert!(
            e.to_string().contains("t line 3") && e.to_string().contains("3 fields"),
            "{e}"
        );
        let e = csv("acc_seed0,acc_seed1,acc_seed1\n0.5,0.6,0.7\n0.9,0.1,0.2\n").unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
    }

    #[test]
    fn json_tables_refuse_duplicate_keys_and_non_numbers() {
        let json = |text: &str| table_from_json(text.as_bytes(), "t.json", Goal::Maximize);
        let t = json(r#"{"b": 0.2, "a": 0.1, "c": 3}"#).unwrap();
        assert_eq!(t.len(), 3);
        let e = json(r#"{"a": 0.1, "b": 0.2, "a": 0.3}"#).unwrap_err();
        assert!(matches!(e, Error::Data { .. }), "{e}");
        assert!(e.to_string().contains("key `a` appears twice"), "{e}");
        // The same key spelled with an escape is the same key.
        let e = json(r#"{"a": 0.1, "\u0061": 0.3}"#).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        let secret = "s".repeat(10_000);
        let e = json(&format!(r#"{{"a": 0.1, "b": "{secret}"}}"#)).unwrap_err();
        assert!(
            e.to_string().contains("key `b`") && e.to_string().len() < 200,
            "{e}"
        );
        let e = json(&format!(r#""{secret}""#)).unwrap_err();
        assert!(
            e.to_string().contains("JSON object") && e.to_string().len() < 200,
            "{e}"
        );
        let e = json(&format!(r#"{{"a": 0.1, "b": "{secret}"#)).unwrap_err();
        assert!(
            e.to_string().contains("not a JSON table") && e.to_string().len() < 200,
            "{e}"
        );
        assert!(json(r#"{"a": 0.1}"#)
            .unwrap_err()
            .to_string()
            .contains("at least 2"));
    }
}
