//! Datasets: CSV loading with a declared schema, candidate scores, and the bundled datasets (UCI
//! Adult, MNIST-5k) with their public test splits. Every CSV file is read by the one strict
//! [`CsvReader`].
//!
//! Preprocessing uses only what the schema declares (DESIGN.md rule 5): numeric features are
//! clipped to their declared `[low, high]` (optionally on a `log1p` scale) and mapped to [0, 1];
//! categorical features are one-hot encoded over their declared values. No statistic of the data
//! (mean, range, vocabulary) is ever used, so the encoding of one record never depends on the
//! others. Every row therefore has L2 norm at most `sqrt(#numeric + #categorical)`, a public
//! bound ([`Dataset::max_norm`]) that learners use to scale features.

mod bundled;
mod csv_load;
mod csv_reader;
mod schema;
mod scores;

pub use bundled::{adult_schema, bundled, mnist_schema, Bundled, BUNDLED_NAMES};
pub use csv_load::{load_csv, parse_csv};
pub(crate) use csv_reader::open_file;
pub use csv_reader::{CsvReader, Row};
pub use schema::{Feature, Label, Schema, Transform};
pub use scores::{load_scores, read_scores};

/// A dataset whose records can be addressed by index (so it can be split by coins).
pub trait Records: Sync {
    /// Number of records.
    fn len(&self) -> usize;
    /// True when there are no records.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The records at `indices`, in that order.
    fn select(&self, indices: &[usize]) -> Self
    where
        Self: Sized;
}

/// What the label is.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Task {
    /// Class labels `0..classes.len()`, named by `classes`.
    Classification {
        /// The declared class names, in label order.
        classes: Vec<String>,
    },
    /// A real label clipped to the declared `[low, high]`.
    Regression {
        /// Declared lower bound.
        low: f64,
        /// Declared upper bound.
        high: f64,
    },
}

impl Task {
    /// The number of classes (0 for regression).
    pub fn classes(&self) -> usize {
        match self {
            Task::Classification { classes } => classes.len(),
            Task::Regression { .. } => 0,
        }
    }
}

/// Encoded records: dense features in row-major order and a label per row.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    x: Vec<f64>,
    y: Vec<f64>,
    dim: usize,
    max_norm: f64,
    task: Task,
    feature_names: Vec<String>,
}

impl Dataset {
    /// A dataset from encoded parts. The dimension is the number of `feature_names` (at least
    /// one; one input rather than a count that would have to agree with the names); `x` has
    /// `y.len() * dim` entries; every row's L2 norm must be at most `max_norm` (checked),
    /// labels must fit the task (checked).
    pub fn new(
        x: Vec<f64>,
        y: Vec<f64>,
        max_norm: f64,
        task: Task,
        feature_names: Vec<String>,
    ) -> crate::Result<Self> {
        let bad = |reason: String| crate::Error::Data {
            location: "dataset".into(),
            reason,
        };
        let dim = feature_names.len();
        if dim == 0 || x.len() != y.len() * dim {
            return Err(bad(format!(
                "{} values, {} labels for {dim} feature names",
                x.len(),
                y.len()
            )));
        }
        if !(max_norm.is_finite() && max_norm > 0.0) {
            return Err(bad(format!("max_norm {max_norm} must be finite and > 0")));
        }
        for (i, row) in x.chunks(dim).enumerate() {
            let n = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            if !n.is_finite() || n > max_norm * (1.0 + 1e-12) {
                return Err(bad(format!("row {i} has norm {n} > max_norm {max_norm}")));
            }
        }
        let ok = |v: f64| match &task {
            Task::Classification { classes } => {
                v >= 0.0 && v.fract() == 0.0 && (v as usize) < classes.len()
            }
            Task::Regression { low, high } => (*low..=*high).contains(&v),
        };
        if let Some(i) = y.iter().position(|&v| !ok(v)) {
            return Err(bad(format!(
                "label {} of row {i} does not fit the task",
                y[i]
            )));
        }
        Ok(Self {
            x,
            y,
            dim,
            max_norm,
            task,
            feature_names,
        })
    }

    /// Number of encoded features.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Features of row `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.dim..(i + 1) * self.dim]
    }

    /// All features, row-major.
    pub fn features(&self) -> &[f64] {
        &self.x
    }

    /// Labels: class indices (as `f64`) or real values.
    pub fn labels(&self) -> &[f64] {
        &self.y
    }

    /// Class index of row `i` (0 for regression data).
    pub fn class(&self, i: usize) -> usize {
        self.y[i] as usize
    }

    /// A public bound on every row's L2 norm, from the schema alone.
    pub fn max_norm(&self) -> f64 {
        self.max_norm
    }

    /// What the label is.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The encoded feature names (`column` or `column=value` for one-hot columns).
    pub fn feature_names(&self) -> &[String] {
        &self.feature_names
    }
}

impl Records for Dataset {
    fn len(&self) -> usize {
        self.y.len()
    }

    fn select(&self, indices: &[usize]) -> Self {
        let mut x = Vec::with_capacity(indices.len() * self.dim);
        for &i in indices {
            x.extend_from_slice(self.row(i));
        }
        Self {
            x,
            y: indices.iter().map(|&i| self.y[i]).collect(),
            dim: self.dim,
            max_norm: self.max_norm,
            task: self.task.clone(),
            feature_names: self.feature_names.clone(),
        }
    }
}
