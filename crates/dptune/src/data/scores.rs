//! Candidate scores for `dptune select`: one number a line, or one named column of a CSV file
//! with a header, read through the one strict [`CsvReader`].

use std::io::Read;
use std::path::Path;

use super::csv_reader::{open_file, CsvReader};
use crate::error::{excerpt, Error, Result};

/// Reads scores from `path` (plain or gzip); see [`read_scores`].
pub fn load_scores(path: &Path, column: Option<&str>) -> Result<Vec<f64>> {
    read_scores(open_file(path)?, &path.display().to_string(), column)
}

/// Reads scores from `reader` (`source` names it in errors): with `column`, the finite numbers
/// of that column of a CSV file with a header line; without, one finite number a line (a line
/// with a comma is refused, so a CSV file is never read as if it had one column). Blank lines
/// are skipped; there must be at least one score.
pub fn read_scores(reader: impl Read, source: &str, column: Option<&str>) -> Result<Vec<f64>> {
    let mut rd = CsvReader::new(reader, source, column.is_some())?;
    let col = match column {
        Some(name) => rd.column(name).ok_or_else(|| {
            Error::invalid(
                "column",
                excerpt(name),
                format!("not in the header of {source} ({})", rd.columns_list()),
            )
        })?,
        None => 0,
    };
    let mut scores = Vec::new();
    while let Some(row) = rd.next_row()? {
        if column.is_none() && row.len() != 1 {
            return Err(Error::data(
                format!("{source} line {}", row.line()),
                format!(
                    "{} fields: one score a line is expected (name a column to read a CSV file)",
                    row.len()
                ),
            ));
        }
        scores.push(match row.text(col)?.parse::<f64>() {
            Ok(v) if v.is_finite() => v,
            Ok(_) => return Err(row.field_error(col, "is not finite: scores must be finite")),
            Err(_) => return Err(row.field_error(col, "is not a number: scores must be finite")),
        });
    }
    if scores.is_empty() {
        return Err(Error::data(source, "no scores"));
    }
    Ok(scores)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(text: &str, column: Option<&str>) -> Result<Vec<f64>> {
        read_scores(text.as_bytes(), "s.csv", column)
    }

    #[test]
    fn one_score_a_line() {
        assert_eq!(
            scores("1\n\n 2.5 \n\"3\"\n", None).unwrap(),
            [1.0, 2.5, 3.0]
        );
        let e = scores("1\n2,3\n", None).unwrap_err().to_string();
        assert!(e.contains("s.csv line 2") && e.contains("2 fields"), "{e}");
        let e = scores("1\nabc\n", None).unwrap_err().to_string();
        assert!(e.contains("s.csv line 2: `abc` is not a number"), "{e}");
        let e = scores("1\n-inf\n", None).unwrap_err().to_string();
        assert!(e.contains("s.csv line 2: `-inf` is not finite"), "{e}");
        assert!(scores("\n \n", None)
            .unwrap_err()
            .to_string()
            .contains("no scores"));
    }

    #[test]
    fn a_named_column_with_quoted_commas_and_a_byte_order_mark() {
        let text = "\u{feff}name,score\n\"x,0.9\",0.1\ny,0.5\n";
        assert_eq!(scores(text, Some("score")).unwrap(), [0.1, 0.5]);
        let e = scores(text, Some("acc")).unwrap_err().to_string();
        assert!(
            e.contains("`column` = acc") && e.contains("name, score"),
            "{e}"
        );
        let e = scores("score,score\n1,2\n", Some("score")).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        let e = scores("name,score\nx,1,2\n", Some("score")).unwrap_err();
        assert!(e.to_string().contains("s.csv line 2"), "{e}");
        assert!(scores("score\n", Some("score")).is_err());
    }
}
