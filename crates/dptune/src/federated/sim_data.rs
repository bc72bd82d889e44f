//! Minimal loaders for the two datasets of the DP-HYPE simulation (bundled in the crate, see
//! `data/PROVENANCE.md`). Features are scaled with public, declared bounds only (DESIGN.md rule
//! 5): no statistic of the data is used.

use std::collections::BTreeMap;
use std::io::Read;

use flate2::read::GzDecoder;

use crate::error::{Error, Result};

static ADULT: &[u8] = include_bytes!("../../data/adult.csv.gz");
static MNIST5K: &[u8] = include_bytes!("../../data/mnist5k.csv.gz");

/// The simulation's datasets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SimDataset {
    /// UCI Adult, 48 842 rows, binary label income > 50K.
    Adult,
    /// 5 000 MNIST digits, 10 classes.
    Mnist5k,
}

/// A labelled dataset with dense features in row-major order.
#[derive(Debug, Clone)]
pub struct Table {
    /// Features, `rows × dim`.
    pub x: Vec<f32>,
    /// Feature count.
    pub dim: usize,
    /// Labels in 0..classes.
    pub y: Vec<u8>,
    /// Number of classes.
    pub classes: usize,
}

impl Table {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.y.len()
    }
    /// Features of row `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.x[i * self.dim..(i + 1) * self.dim]
    }
}

fn data_err(location: &str, reason: impl Into<String>) -> Error {
    Error::Data {
        location: location.into(),
        reason: reason.into(),
    }
}

fn gunzip(bytes: &[u8], name: &str) -> Result<String> {
    let mut s = String::new();
    GzDecoder::new(bytes)
        .read_to_string(&mut s)
        .map_err(|e| data_err(name, e.to_string()))?;
    Ok(s)
}

/// Numeric Adult columns with their declared ranges (SOURCES.md) and whether to scale on log1p.
const ADULT_NUMERIC: [(&str, f64, f64, bool); 6] = [
    ("age", 17.0, 90.0, false),
    ("fnlwgt", 12_285.0, 1_490_400.0, true),
    ("educational_num", 1.0, 16.0, false),
    ("capital_gain", 0.0, 99_999.0, true),
    ("capital_loss", 0.0, 4_356.0, true),
    ("hours_per_week", 1.0, 99.0, false),
];
const ADULT_CATEGORICAL: [&str; 8] = [
    "workclass",
    "education",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "gender",
    "native_country",
];

/// Loads a bundled dataset.
pub fn load(ds: SimDataset) -> Result<Table> {
    match ds {
        SimDataset::Adult => load_adult(),
        SimDataset::Mnist5k => load_mnist(),
    }
}

fn load_adult() -> Result<Table> {
    let text = gunzip(ADULT, "adult.csv.gz")?;
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header = rd
        .headers()
        .map_err(|e| data_err("adult.csv.gz", e.to_string()))?
        .clone();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| data_err("adult.csv.gz", format!("missing column {name}")))
    };
    let num_cols: Vec<usize> = ADULT_NUMERIC
        .iter()
        .map(|c| col(c.0))
        .collect::<Result<_>>()?;
    let cat_cols: Vec<usize> = ADULT_CATEGORICAL
        .iter()
        .map(|c| col(c))
        .collect::<Result<_>>()?;
    let label = col("income")?;
    let records: Vec<csv::StringRecord> = rd
        .records()
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| data_err("adult.csv.gz", e.to_string()))?;
    // One-hot vocabularies (the schema's category sets), in sorted order.
    let vocab: Vec<BTreeMap<String, usize>> = cat_cols
        .iter()
        .map(|&c| {
            let mut m: BTreeMap<String, usize> =
                records.iter().map(|r| (r[c].to_string(), 0)).collect();
            for (i, v) in m.values_mut().enumerate() {
                *v = i;
            }
            m
        })
        .collect();
    let dim = num_cols.len() + vocab.iter().map(BTreeMap::len).sum::<usize>();
    let mut x = Vec::with_capacity(records.len() * dim);
    let mut y = Vec::with_capacity(records.len());
    for (line, r) in records.iter().enumerate() {
        for (&c, &(name, lo, hi, log)) in num_cols.iter().zip(&ADULT_NUMERIC) {
            let v: f64 = r[c]
                .parse()
                .map_err(|_| data_err("adult.csv.gz", format!("line {}: bad {name}", line + 2)))?;
            let (v, lo, hi) = if log {
                (v.ln_1p(), lo.ln_1p(), hi.ln_1p())
            } else {
                (v, lo, hi)
            };
            x.push(((v - lo) / (hi - lo)).clamp(0.0, 1.0) as f32);
        }
        for (&c, m) in cat_cols.iter().zip(&vocab) {
            let mut onehot = vec![0f32; m.len()];
            onehot[m[&r[c]]] = 1.0;
            x.extend(onehot);
        }
        y.push(match &r[label] {
            ">50K" => 1,
            "<=50K" => 0,
            other => {
                return Err(data_err(
                    "adult.csv.gz",
                    format!("line {}: label {other}", line + 2),
                ))
            }
        });
    }
    Ok(Table {
        x,
        dim,
        y,
        classes: 2,
    })
}

fn load_mnist() -> Result<Table> {
    let text = gunzip(MNIST5K, "mnist5k.csv.gz")?;
    let dim = 784;
    let mut x = Vec::with_capacity(5000 * dim);
    let mut y = Vec::with_capacity(5000);
    for (line, l) in text.lines().enumerate() {
        let vals: Vec<u32> = l
            .split(',')
            .map(str::parse)
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| data_err("mnist5k.csv.gz", format!("line {}", line + 1)))?;
        if vals.len() != dim + 1 || vals[dim] > 9 {
            return Err(data_err("mnist5k.csv.gz", format!("line {}", line + 1)));
        }
        x.extend(vals[..dim].iter().map(|&v| v.min(255) as f32 / 255.0));
        y.push(vals[dim] as u8);
    }
    Ok(Table {
        x,
        dim,
        y,
        classes: 10,
    })
}
