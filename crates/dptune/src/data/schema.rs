//! The declared schema of a CSV file: which column is the label, which are features, and the
//! public bounds or value sets that the encoding uses.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A numeric feature's scale before the mapping to [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transform {
    /// The value itself.
    #[default]
    None,
    /// ln(1 + v) (bounds are transformed the same way); for heavy-tailed non-negative columns.
    Log1p,
}

/// One feature column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum Feature {
    /// A number, clipped to the public `[low, high]` and mapped to [0, 1].
    Numeric {
        /// Column name (or 0-based index when the file has no header).
        column: String,
        /// Declared lower bound.
        low: f64,
        /// Declared upper bound.
        high: f64,
        /// Optional transform applied to the value and the bounds.
        #[serde(default)]
        transform: Transform,
    },
    /// A label from a declared list, one-hot encoded; a value outside the list is an error.
    Categorical {
        /// Column name (or 0-based index when the file has no header).
        column: String,
        /// The declared values, in encoding order.
        values: Vec<String>,
    },
}

impl Feature {
    /// The column this feature reads.
    pub fn column(&self) -> &str {
        match self {
            Feature::Numeric { column, .. } | Feature::Categorical { column, .. } => column,
        }
    }

    /// Number of encoded coordinates.
    pub fn width(&self) -> usize {
        match self {
            Feature::Numeric { .. } => 1,
            Feature::Categorical { values, .. } => values.len(),
        }
    }
}

/// The label column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum Label {
    /// Classification: the declared class values, in label order.
    Class {
        /// Column name (or 0-based index when the file has no header).
        column: String,
        /// The class values.
        values: Vec<String>,
    },
    /// Regression: a number clipped to the public `[low, high]`.
    Numeric {
        /// Column name (or 0-based index when the file has no header).
        column: String,
        /// Declared lower bound.
        low: f64,
        /// Declared upper bound.
        high: f64,
    },
}

impl Label {
    /// The label's column.
    pub fn column(&self) -> &str {
        match self {
            Label::Class { column, .. } | Label::Numeric { column, .. } => column,
        }
    }
}

fn default_true() -> bool {
    true
}

/// A CSV schema: the label, the features, and whether the file has a header line. Columns not
/// named here are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schema {
    /// True (the default) when the first line names the columns; otherwise columns are named
    /// by their 0-based index ("0", "1", …).
    #[serde(default = "default_true")]
    pub header: bool,
    /// The label column.
    pub label: Label,
    /// The feature columns, in encoding order.
    #[serde(rename = "feature")]
    pub features: Vec<Feature>,
}

impl Schema {
    /// Checks the declarations themselves: at least one feature, finite bounds with low < high,
    /// non-empty distinct value lists, distinct columns. Errors name the field.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: String, reason: &str| Error::Data {
            location: format!("schema field `{field}`"),
            reason: reason.into(),
        };
        if self.features.is_empty() {
            return Err(bad("feature".into(), "declare at least one feature"));
        }
        let check_values = |field: String, values: &[String], min: usize| -> Result<()> {
            if values.len() < min {
                return Err(bad(field, &format!("declare at least {min} values")));
            }
            for (i, v) in values.iter().enumerate() {
                if values[..i].contains(v) {
                    return Err(bad(field, &format!("value {v:?} is declared twice")));
                }
            }
            Ok(())
        };
        let check_bounds = |field: String, low: f64, high: f64, t: Transform| -> Result<()> {
            let ok = low.is_finite()
                && high.is_finite()
                && low < high
                && (t == Transform::None || low > -1.0);
            if ok {
                Ok(())
            } else {
                Err(bad(
                    field,
                    "need finite low < high (and low > -1 for log1p)",
                ))
            }
        };
        match &self.label {
            Label::Class { column, values } => {
                check_values(format!("label.values ({column})"), values, 2)?
            }
            Label::Numeric { column, low, high } => {
                check_bounds(format!("label ({column})"), *low, *high, Transform::None)?
            }
        }
        let mut columns = vec![self.label.column()];
        for f in &self.features {
            let c = f.column();
            if columns.contains(&c) {
                return Err(bad(
                    format!("feature.column ({c})"),
                    "column used twice (or as both label and feature)",
                ));
            }
            columns.push(c);
            match f {
                Feature::Numeric {
                    low,
                    high,
                    transform,
                    ..
                } => check_bounds(format!("feature ({c})"), *low, *high, *transform)?,
                Feature::Categorical { values, .. } => {
                    check_values(format!("feature.values ({c})"), values, 1)?
                }
            }
        }
        Ok(())
    }

    /// Number of encoded coordinates.
    pub fn dim(&self) -> usize {
        self.features.iter().map(Feature::width).sum()
    }

    /// The public bound on an encoded row's L2 norm: each numeric coordinate lies in [0, 1] and
    /// each one-hot block has exactly one 1, so the squared norm is at most the feature count.
    pub fn max_norm(&self) -> f64 {
        (self.features.len() as f64).sqrt().next_up()
    }
}
