//! Reading a CSV file under a [`Schema`]. Every error names the file and, where there is one,
//! the line and the column.

use std::io::Read;
use std::path::Path;

use super::schema::{Feature, Label, Schema, Transform};
use super::{Dataset, Task};
use crate::error::{Error, Result};

fn err(location: String, reason: impl Into<String>) -> Error {
    Error::Data {
        location,
        reason: reason.into(),
    }
}

/// Loads `path` (plain or `.gz`) under `schema`.
pub fn load_csv(path: &Path, schema: &Schema) -> Result<Dataset> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| err(name.clone(), e.to_string()))?;
    if name.ends_with(".gz") {
        parse_csv(flate2::read::GzDecoder::new(file), &name, schema)
    } else {
        parse_csv(file, &name, schema)
    }
}

fn scale(v: f64, low: f64, high: f64, t: Transform) -> f64 {
    let f = |u: f64| match t {
        Transform::None => u,
        Transform::Log1p => u.ln_1p(),
    };
    let (lo, hi) = (f(low), f(high));
    ((f(v.clamp(low, high)) - lo) / (hi - lo)).clamp(0.0, 1.0)
}

/// Parses CSV text from `reader` (`source` names it in errors) under `schema`.
pub fn parse_csv(reader: impl Read, source: &str, schema: &Schema) -> Result<Dataset> {
    schema
        .validate()
        .map_err(|e| err(format!("{source}: schema"), e.to_string()))?;
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(schema.header)
        .flexible(true)
        .from_reader(reader);
    let header: Vec<String> = if schema.header {
        rd.headers()
            .map_err(|e| err(format!("{source} line 1"), e.to_string()))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect()
    } else {
        Vec::new()
    };
    let position = |column: &str, field: &str| -> Result<usize> {
        if schema.header {
            header.iter().position(|h| h == column).ok_or_else(|| {
                err(
                    format!("{source} line 1"),
                    format!("the {field} column `{column}` is not in the header"),
                )
            })
        } else {
            column.parse::<usize>().map_err(|_| {
                err(
                    format!("{source}: schema"),
                    format!("the file has no header, so the {field} column must be a 0-based index, not `{column}`"),
                )
            })
        }
    };
    let label_col = position(schema.label.column(), "label")?;
    let feature_cols: Vec<usize> = schema
        .features
        .iter()
        .map(|f| position(f.column(), "feature"))
        .collect::<Result<_>>()?;
    let dim = schema.dim();
    let mut x = Vec::new();
    let mut y = Vec::new();
    let first_line = if schema.header { 2 } else { 1 };
    for (i, rec) in rd.records().enumerate() {
        let line = rec
            .as_ref()
            .ok()
            .and_then(|r| r.position())
            .map_or(i as u64 + first_line, |p| p.line());
        let rec = rec.map_err(|e| err(format!("{source} line {line}"), e.to_string()))?;
        let field = |col: usize, name: &str| -> Result<&str> {
            rec.get(col).map(str::trim).ok_or_else(|| {
                err(
                    format!("{source} line {line}, column `{name}`"),
                    format!("the row has {} fields, no column {}", rec.len(), col + 1),
                )
            })
        };
        let number = |col: usize, name: &str| -> Result<f64> {
            let s = field(col, name)?;
            match s.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(err(
                    format!("{source} line {line}, column `{name}`"),
                    format!("`{s}` is not a finite number"),
                )),
            }
        };
        for (f, &col) in schema.features.iter().zip(&feature_cols) {
            match f {
                Feature::Numeric {
                    column,
                    low,
                    high,
                    transform,
                } => x.push(scale(number(col, column)?, *low, *high, *transform)),
                Feature::Categorical { column, values } => {
                    let s = field(col, column)?;
                    let k = values.iter().position(|v| v == s).ok_or_else(|| {
                        err(
                            format!("{source} line {line}, column `{column}`"),
                            format!("`{s}` is not one of the declared values"),
                        )
                    })?;
                    x.extend((0..values.len()).map(|j| if j == k { 1.0 } else { 0.0 }));
                }
            }
        }
        y.push(match &schema.label {
            Label::Class { column, values } => {
                let s = field(label_col, column)?;
                values.iter().position(|v| v == s).ok_or_else(|| {
                    err(
                        format!("{source} line {line}, column `{column}`"),
                        format!("label `{s}` is not one of the declared classes"),
                    )
                })? as f64
            }
            Label::Numeric { column, low, high } => number(label_col, column)?.clamp(*low, *high),
        });
    }
    if y.is_empty() {
        return Err(err(source.to_string(), "no data rows"));
    }
    let task = match &schema.label {
        Label::Class { values, .. } => Task::Classification {
            classes: values.clone(),
        },
        Label::Numeric { low, high, .. } => Task::Regression {
            low: *low,
            high: *high,
        },
    };
    let names = schema
        .features
        .iter()
        .flat_map(|f| match f {
            Feature::Numeric { column, .. } => vec![column.clone()],
            Feature::Categorical { column, values } => {
                values.iter().map(|v| format!("{column}={v}")).collect()
            }
        })
        .collect();
    debug_assert_eq!(x.len(), y.len() * dim);
    Dataset::new(x, y, dim, schema.max_norm(), task, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Schema {
        Schema {
            header: true,
            label: Label::Class {
                column: "y".into(),
                values: vec!["no".into(), "yes".into()],
            },
            features: vec![
                Feature::Numeric {
                    column: "a".into(),
                    low: 0.0,
                    high: 10.0,
                    transform: Transform::None,
                },
                Feature::Categorical {
                    column: "c".into(),
                    values: vec!["r".into(), "g".into()],
                },
            ],
        }
    }

    #[test]
    fn encodes_with_declared_bounds_only() {
        let d = parse_csv("a,c,y\n5,g,yes\n20,r,no\n".as_bytes(), "t.csv", &schema()).unwrap();
        assert_eq!(d.row(0), &[0.5, 0.0, 1.0]);
        assert_eq!(d.row(1), &[1.0, 1.0, 0.0], "clipped to the declared high");
        assert_eq!(d.labels(), &[1.0, 0.0]);
        assert!((d.max_norm() - 2f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let e = |text: &str| {
            parse_csv(text.as_bytes(), "t.csv", &schema())
                .unwrap_err()
                .to_string()
        };
        let m = e("a,c,y\n5,g,yes\nx,r,no\n");
        assert!(
            m.contains("t.csv line 3, column `a`") && m.contains("`x`"),
            "{m}"
        );
        assert!(e("a,c\n5,g\n").contains("label column `y`"));
        assert!(e("a,c,y\n").contains("no data rows"));
        assert!(e("a,c,y\n5,b,yes\n").contains("column `c`"));
        assert!(e("a,c,y\n5,g,maybe\n").contains("line 2, column `y`"));
        let mut s = schema();
        s.features.clear();
        assert!(parse_csv("a\n1\n".as_bytes(), "t.csv", &s)
            .unwrap_err()
            .to_string()
            .contains("feature"));
    }
}
