//! GP regression data from a CSV file with a header: public input columns and one private
//! output column, read through the one strict [`CsvReader`] (the `dptune gp --data` loader).

use std::io::Read;
use std::path::Path;

use nalgebra::DMatrix;

use crate::data::CsvReader;
use crate::error::{excerpt, Error, Result};

/// Inputs and outputs as read (unscaled, unclipped), with their column names.
#[derive(Debug, Clone, PartialEq)]
pub struct GpData {
    /// The inputs, one row per record and one column per input column (public).
    pub x: DMatrix<f64>,
    /// The outputs (private).
    pub y: Vec<f64>,
    /// The header names of the input columns.
    pub x_names: Vec<String>,
    /// The header name of the output column.
    pub y_name: String,
}

/// Loads `path` (plain or gzip); see [`read_gp_data`].
pub fn load_gp_data(path: &Path, x: &[String], y: &str) -> Result<GpData> {
    read_gp_data(
        crate::data::open_file(path)?,
        &path.display().to_string(),
        x,
        y,
    )
}

/// Reads the input columns `x` and the output column `y` (each a header name, or else a
/// 0-based index) from CSV with a header in `reader` (`source` names it in errors). Every value
/// must be a finite number. Refused, naming the parameter: no input column, a column that is
/// not in the file, an input column named twice, and the output column among the inputs (the
/// output is private; an input is public).
pub fn read_gp_data(reader: impl Read, source: &str, x: &[String], y: &str) -> Result<GpData> {
    let mut rd = CsvReader::new(reader, source, true)?;
    let resolve = |name: &'static str, spec: &str| -> Result<usize> {
        let spec = spec.trim();
        rd.column(spec)
            .or_else(|| spec.parse().ok().filter(|&i| i < rd.header().len()))
            .ok_or_else(|| {
                Error::invalid(
                    name,
                    excerpt(spec),
                    format!(
                        "no column `{}` in the header of {source} ({}), by name or 0-based index",
                        excerpt(spec),
                        rd.columns_list()
                    ),
                )
            })
    };
    if x.is_empty() {
        return Err(Error::invalid("x", "", "name at least one input column"));
    }
    let xi = x
        .iter()
        .map(|s| resolve("x", s))
        .collect::<Result<Vec<usize>>>()?;
    let yi = resolve("y", y)?;
    let name = |i: usize| excerpt(&rd.header()[i]);
    for (k, &i) in xi.iter().enumerate() {
        if xi[..k].contains(&i) {
            return Err(Error::invalid(
                "x",
                excerpt(&x.join(",")),
                format!("column `{}` is an input twice", name(i)),
            ));
        }
    }
    if xi.contains(&yi) {
        return Err(Error::invalid(
            "y",
            excerpt(y),
            format!(
                "column `{}` is both the output and an input (`x`): the output is private, \
                 inputs are public",
                name(yi)
            ),
        ));
    }
    let mut cols = xi.clone();
    cols.push(yi);
    let mut values = rd.numeric_columns(&cols)?;
    let y_values = values.pop().unwrap_or_default();
    if y_values.is_empty() {
        return Err(Error::data(source, "no data rows"));
    }
    let header = rd.header();
    Ok(GpData {
        x: DMatrix::from_fn(y_values.len(), xi.len(), |i, j| values[j][i]),
        y: y_values,
        x_names: xi.iter().map(|&i| header[i].clone()).collect(),
        y_name: header[yi].clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, x: &[&str], y: &str) -> Result<GpData> {
        let x: Vec<String> = x.iter().map(|s| s.to_string()).collect();
        read_gp_data(text.as_bytes(), "g.csv", &x, y)
    }

    const CSV: &str = "\u{feff}a,b,\"c\"\n1,\"2\",3\n4,5,6\n";

    #[test]
    fn reads_inputs_and_output_by_name_or_index() {
        let d = read(CSV, &["c", "0"], "b").unwrap();
        assert_eq!(d.x, DMatrix::from_row_slice(2, 2, &[3.0, 1.0, 6.0, 4.0]));
        assert_eq!(d.y, [2.0, 5.0]);
        assert_eq!(
            (d.x_names, d.y_name),
            (vec!["c".into(), "a".into()], "b".into())
        );
    }

    #[test]
    fn refuses_the_output_as_an_input_and_repeated_inputs_naming_the_parameter() {
        let param = |e: Error| match e {
            Error::InvalidParameter { name, .. } => name,
            e => panic!("{e}"),
        };
        assert_eq!(param(read(CSV, &["b"], "b").unwrap_err()), "y");
        assert_eq!(param(read(CSV, &["a", "1"], "b").unwrap_err()), "y");
        assert_eq!(param(read(CSV, &["a", "a"], "b").unwrap_err()), "x");
        assert_eq!(param(read(CSV, &["a", "0"], "b").unwrap_err()), "x");
        assert_eq!(param(read(CSV, &[], "b").unwrap_err()), "x");
        assert_eq!(param(read(CSV, &["z"], "b").unwrap_err()), "x");
        assert_eq!(param(read(CSV, &["a"], "3").unwrap_err()), "y");
    }

    #[test]
    fn bad_files_are_data_errors() {
        let data = |text: &str| match read(text, &["a"], "b").unwrap_err() {
            e @ Error::Data { .. } => e.to_string(),
            e => panic!("{e}"),
        };
        assert!(data("a,b\n").contains("no data rows"));
        assert!(data("a,b\n1,2\n3,4,5\n").contains("g.csv line 3"));
        assert!(data("a,b,a\n1,2,3\n").contains("twice"));
        assert!(data("a,b\n1,x\n").contains("g.csv line 2, column `b`"));
    }
}
