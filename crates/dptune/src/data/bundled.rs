//! Datasets embedded in the library, loadable offline by name, each with a fixed public test
//! split that the tuner never sees. Provenance: `crates/dptune/data/PROVENANCE.md`.

use super::csv_load::parse_csv;
use super::schema::{Feature, Label, Schema, Transform};
use super::Dataset;
use super::Records;
use crate::error::{Error, Result};

static ADULT: &[u8] = include_bytes!("../../data/adult.csv.gz");
static MNIST5K: &[u8] = include_bytes!("../../data/mnist5k.csv.gz");

/// The names [`bundled`] accepts.
pub const BUNDLED_NAMES: [&str; 2] = ["adult", "mnist5k"];

/// A bundled dataset: all records in file order, and the public train/test split.
#[derive(Debug, Clone)]
pub struct Bundled {
    /// The name it was loaded by.
    pub name: &'static str,
    /// Every record, in the order of the file.
    pub all: Dataset,
    /// Indices (into `all`) of the records a tuner may use.
    pub train_rows: Vec<usize>,
    /// Indices (into `all`) of the public test records.
    pub test_rows: Vec<usize>,
    /// The schema the file was read with.
    pub schema: Schema,
}

impl Bundled {
    /// The records a tuner may use.
    pub fn train(&self) -> Dataset {
        self.all.select(&self.train_rows)
    }

    /// The public test records (never given to a tuner).
    pub fn test(&self) -> Dataset {
        self.all.select(&self.test_rows)
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The declared schema of the bundled Adult file: ranges and value sets from
/// `shared/data/SOURCES.md` (public documentation of the file, not statistics computed here).
pub fn adult_schema() -> Schema {
    let num = |c: &str, low: f64, high: f64, log: bool| Feature::Numeric {
        column: c.into(),
        low,
        high,
        transform: if log {
            Transform::Log1p
        } else {
            Transform::None
        },
    };
    let cat = |c: &str, values: &[&str]| Feature::Categorical {
        column: c.into(),
        values: strings(values),
    };
    Schema {
        header: true,
        label: Label::Class {
            column: "income".into(),
            values: strings(&["<=50K", ">50K"]),
        },
        features: vec![
            num("age", 17.0, 90.0, false),
            num("fnlwgt", 12_285.0, 1_490_400.0, true),
            num("educational_num", 1.0, 16.0, false),
            num("capital_gain", 0.0, 99_999.0, true),
            num("capital_loss", 0.0, 4_356.0, true),
            num("hours_per_week", 1.0, 99.0, false),
            cat(
                "workclass",
                &[
                    "?",
                    "Federal-gov",
                    "Local-gov",
                    "Never-worked",
                    "Private",
                    "Self-emp-inc",
                    "Self-emp-not-inc",
                    "State-gov",
                    "Without-pay",
                ],
            ),
            cat(
                "education",
                &[
                    "10th",
                    "11th",
                    "12th",
                    "1st-4th",
                    "5th-6th",
                    "7th-8th",
                    "9th",
                    "Assoc-acdm",
                    "Assoc-voc",
                    "Bachelors",
                    "Doctorate",
                    "HS-grad",
                    "Masters",
                    "Preschool",
                    "Prof-school",
                    "Some-college",
                ],
            ),
            cat(
                "marital_status",
                &[
                    "Divorced",
                    "Married-AF-spouse",
                    "Married-civ-spouse",
                    "Married-spouse-absent",
                    "Never-married",
                    "Separated",
                    "Widowed",
                ],
            ),
            cat(
                "occupation",
                &[
                    "?",
                    "Adm-clerical",
                    "Armed-Forces",
                    "Craft-repair",
                    "Exec-managerial",
                    "Farming-fishing",
                    "Handlers-cleaners",
                    "Machine-op-inspct",
                    "Other-service",
                    "Priv-house-serv",
                    "Prof-specialty",
                    "Protective-serv",
                    "Sales",
                    "Tech-support",
                    "Transport-moving",
                ],
            ),
            cat(
                "relationship",
                &[
                    "Husband",
                    "Not-in-family",
                    "Other-relative",
                    "Own-child",
                    "Unmarried",
                    "Wife",
                ],
            ),
            cat(
                "race",
                &[
                    "Amer-Indian-Eskimo",
                    "Asian-Pac-Islander",
                    "Black",
                    "Other",
                    "White",
                ],
            ),
            cat("gender", &["Female", "Male"]),
            cat(
                "native_country",
                &[
                    "?",
                    "Cambodia",
                    "Canada",
                    "China",
                    "Columbia",
                    "Cuba",
                    "Dominican-Republic",
                    "Ecuador",
                    "El-Salvador",
                    "England",
                    "France",
                    "Germany",
                    "Greece",
                    "Guatemala",
                    "Haiti",
                    "Holand-Netherlands",
                    "Honduras",
                    "Hong",
                    "Hungary",
                    "India",
                    "Iran",
                    "Ireland",
                    "Italy",
                    "Jamaica",
                    "Japan",
                    "Laos",
                    "Mexico",
                    "Nicaragua",
                    "Outlying-US(Guam-USVI-etc)",
                    "Peru",
                    "Philippines",
                    "Poland",
                    "Portugal",
                    "Puerto-Rico",
                    "Scotland",
                    "South",
                    "Taiwan",
                    "Thailand",
                    "Trinadad&Tobago",
                    "United-States",
                    "Vietnam",
                    "Yugoslavia",
                ],
            ),
        ],
    }
}

/// The declared schema of the bundled MNIST-5k file: no header, 784 pixel columns in [0, 255],
/// label (digit 0–9) in the last column.
pub fn mnist_schema() -> Schema {
    Schema {
        header: false,
        label: Label::Class {
            column: "784".into(),
            values: (0..10).map(|d| d.to_string()).collect(),
        },
        features: (0..784)
            .map(|i| Feature::Numeric {
                column: i.to_string(),
                low: 0.0,
                high: 255.0,
                transform: Transform::None,
            })
            .collect(),
    }
}

/// Rows of the Adult file that come from UCI `adult.test` (the first 16,281; SOURCES.md).
const ADULT_TEST_ROWS: usize = 16_281;

/// Loads a bundled dataset by name ([`BUNDLED_NAMES`]; `mnist` is accepted for `mnist5k`).
///
/// Public test splits, fixed and data-independent:
/// * `adult`: the UCI split, recovered by position — the first 16,281 rows (UCI `adult.test`)
///   are the test split, the remaining 32,561 (UCI `adult.data`) are for tuning.
/// * `mnist5k`: the file holds 500 images per digit sorted by label; the last 100 of each
///   digit's block (1,000 images) are the test split, the other 4,000 are for tuning.
pub fn bundled(name: &str) -> Result<Bundled> {
    let gz = |bytes: &'static [u8]| flate2::read::GzDecoder::new(bytes);
    match name {
        "adult" => {
            let schema = adult_schema();
            let all = parse_csv(gz(ADULT), "adult.csv.gz", &schema)?;
            let n = all.len();
            Ok(Bundled {
                name: "adult",
                train_rows: (ADULT_TEST_ROWS..n).collect(),
                test_rows: (0..ADULT_TEST_ROWS).collect(),
                all,
                schema,
            })
        }
        "mnist5k" | "mnist" => {
            let schema = mnist_schema();
            let all = parse_csv(gz(MNIST5K), "mnist5k.csv.gz", &schema)?;
            let (train_rows, test_rows) = (0..all.len()).partition(|i| i % 500 < 400);
            Ok(Bundled {
                name: "mnist5k",
                all,
                train_rows,
                test_rows,
                schema,
            })
        }
        other => Err(Error::invalid(
            "dataset",
            other,
            format!(
                "unknown bundled dataset; known: {}",
                BUNDLED_NAMES.join(", ")
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adult_loads_with_the_uci_split() {
        let b = bundled("adult").unwrap();
        assert_eq!(b.all.len(), 48_842);
        assert_eq!(b.all.dim(), 6 + 9 + 16 + 7 + 15 + 6 + 5 + 2 + 42);
        let test = b.test();
        assert_eq!(test.len(), 16_281);
        // SOURCES.md: adult.test has 12,435 / 3,846 label counts.
        assert_eq!(test.labels().iter().filter(|&&y| y == 1.0).count(), 3_846);
        assert_eq!(b.train().len(), 32_561);
        assert!(bundled("nope").is_err());
    }

    #[test]
    fn mnist_loads_with_a_balanced_split() {
        let b = bundled("mnist5k").unwrap();
        assert_eq!((b.all.len(), b.all.dim()), (5_000, 784));
        let t = b.test();
        assert_eq!(t.len(), 1_000);
        for d in 0..10 {
            assert_eq!(t.labels().iter().filter(|&&y| y == d as f64).count(), 100);
        }
    }
}
