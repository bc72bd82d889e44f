//! Reading a CSV file under a [`Schema`], through the one strict [`CsvReader`]. Every error
//! names the file and, where there is one, the line and the column.

use std::io::Read;
use std::path::Path;

use super::csv_reader::{open_file, CsvReader};
use super::schema::{Feature, Label, Schema, Transform};
use super::{Dataset, Task};
use crate::error::{excerpt, Error, Result};

/// Loads `path` (plain or gzip) under `schema`.
pub fn load_csv(path: &Path, schema: &Schema) -> Result<Dataset> {
    parse_csv(open_file(path)?, &path.display().to_string(), schema)
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
        .map_err(|e| Error::data(format!("{source}: schema"), e.to_string()))?;
    let mut rd = CsvReader::new(reader, source, schema.header)?;
    let position = |column: &str, field: &str| -> Result<usize> {
        if schema.header {
            rd.column(column).ok_or_else(|| {
                Error::data(
                    format!("{source} line 1"),
                    format!(
                        "the {field} column `{}` is not in the header ({})",
                        excerpt(column),
                        rd.columns_list()
                    ),
                )
            })
        } else {
            column.parse::<usize>().map_err(|_| {
                Error::data(
                    format!("{source}: schema"),
                    format!(
                        "the file has no header, so the {field} column must be a 0-based index, not `{}`",
                        excerpt(column)
                    ),
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
    while let Some(row) = rd.next_row()? {
        for (f, &col) in schema.features.iter().zip(&feature_cols) {
            match f {
                Feature::Numeric {
                    low,
                    high,
                    transform,
                    ..
                } => x.push(scale(row.number(col)?, *low, *high, *transform)),
                Feature::Categorical { values, .. } => {
                    let s = row.text(col)?;
                    let k = values
                        .iter()
                        .position(|v| v == s)
                        .ok_or_else(|| row.field_error(col, "is not one of the declared values"))?;
                    x.extend((0..values.len()).map(|j| if j == k { 1.0 } else { 0.0 }));
                }
            }
        }
        y.push(match &schema.label {
            Label::Class { values, .. } => {
                let s = row.text(label_col)?;
                values.iter().position(|v| v == s).ok_or_else(|| {
                    row.field_error(label_col, "is not one of the declared classes")
                })? as f64
            }
            Label::Numeric { low, high, .. } => row.number(label_col)?.clamp(*low, *high),
        });
    }
    if y.is_empty() {
        return Err(Error::data(source, "no data rows"));
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
    Dataset::new(x, y, schema.max_norm(), task, names)
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
        assert!(e("a,c,y,a\n5,g,yes,1\n").contains("`a` twice"));
        assert!(e("a,c,y\n5,g,yes,extra\n").contains("line 2"));
        let m = e("a,c,y\n5,g,yes\n6,\"r\n7,g,no\n");
        assert!(m.contains("closing quote"), "{m}");
        let mut s = schema();
        s.features.clear();
        assert!(parse_csv("a\n1\n".as_bytes(), "t.csv", &s)
            .unwrap_err()
            .to_string()
            .contains("feature"));
    }
}
