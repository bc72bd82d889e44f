//! The one CSV reader of dptune: every file of records or scores (`tune --data`, `select`,
//! `gp --data`, `study` tables, the bundled datasets) is read through [`CsvReader`].
//!
//! It is the `csv` crate (RFC 4180 quoting, so a quoted `"x,0.9"` is one field; a UTF-8 byte
//! order mark is stripped; fields and header names are trimmed; lines end in `\n` or `\r\n`)
//! made strict:
//! - every record has exactly as many fields as the header (or, without a header, as the first
//!   record); a record with extra or missing fields is refused naming its line;
//! - header names are distinct (a duplicate name would make a named lookup ambiguous);
//! - blank lines (empty or whitespace only) are skipped;
//! - gzip files are recognised by their magic bytes.
//!
//! Errors name the source, the line and the column, and quote file content only through
//! [`excerpt`], because the fields are private records.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{excerpt, Error, Result};

/// A strict CSV reader; see the module documentation.
pub struct CsvReader<R: Read> {
    source: String,
    inner: csv::Reader<Tracked<R>>,
    header: Option<Vec<String>>,
    record: csv::StringRecord,
    /// The line the current record starts on.
    line: u64,
    /// The field count every record must have (from the header, or the first record).
    width: Option<usize>,
}

/// The input, noting when it has ended, so that a record's first line can be computed: the
/// `csv` crate's own record positions are wrong after skipped blank lines and in `\r\n` files,
/// but its running line count (one plus the `\n` bytes consumed) is right. A record ended by a
/// line break is returned as soon as the `\n` is consumed, before the end of the input is seen;
/// so the end has been seen exactly when the record was ended by it.
struct Tracked<R> {
    inner: R,
    /// The input has ended.
    eof: bool,
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.eof |= n == 0 && !buf.is_empty();
        Ok(n)
    }
}

/// Opens `path` for reading, gunzipped when it starts with the gzip magic bytes.
pub(crate) fn open_file(path: &Path) -> Result<Box<dyn Read>> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| Error::data(&name, e.to_string()))?;
    let mut file = BufReader::new(file);
    let gzip = file
        .fill_buf()
        .map_err(|e| Error::data(&name, e.to_string()))?
        .starts_with(&[0x1f, 0x8b]);
    Ok(if gzip {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    })
}

impl CsvReader<Box<dyn Read>> {
    /// Opens the CSV file `path` (plain or gzip); `header`: the first line names the columns.
    pub fn open(path: &Path, header: bool) -> Result<Self> {
        CsvReader::new(open_file(path)?, &path.display().to_string(), header)
    }
}

impl<R: Read> CsvReader<R> {
    /// Reads CSV from `reader`; `source` names it in errors; `header`: the first line names the
    /// columns (read and checked here: present, UTF-8, names distinct).
    pub fn new(reader: R, source: &str, header: bool) -> Result<Self> {
        // `\n` alone ends a record, so the crate consumes it with the record; the `\r` of a
        // `\r\n` stays at the end of the last field, and trimming removes it.
        let inner = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_reader(Tracked {
                inner: reader,
                eof: false,
            });
        let mut rd = Self {
            source: source.to_owned(),
            inner,
            header: None,
            record: csv::StringRecord::new(),
            line: 0,
            width: None,
        };
        if header {
            if !rd.read_nonblank()? {
                return Err(Error::data(source, "empty: no header line"));
            }
            let names: Vec<String> = rd.record.iter().map(|n| n.trim().to_owned()).collect();
            let mut seen = std::collections::HashMap::with_capacity(names.len());
            for (i, name) in names.iter().enumerate() {
                if let Some(first) = seen.insert(name.as_str(), i) {
                    return Err(Error::data(
                        format!("{source} line {}", rd.line),
                        format!(
                            "the header names column `{}` twice (columns {} and {})",
                            excerpt(name),
                            first + 1,
                            i + 1
                        ),
                    ));
                }
            }
            rd.width = Some(names.len());
            rd.header = Some(names);
        }
        Ok(rd)
    }

    /// The source named in errors.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The header's column names (empty when the file has no header line).
    pub fn header(&self) -> &[String] {
        self.header.as_deref().unwrap_or_default()
    }

    /// The index of the column named `name` in the header, if there is one.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header().iter().position(|h| h == name)
    }

    /// The header's names for a message: each through [`excerpt`], at most ten.
    pub fn columns_list(&self) -> String {
        let h = self.header();
        let mut names: Vec<String> = h.iter().take(10).map(|n| excerpt(n)).collect();
        if h.len() > 10 {
            names.push(format!("… ({} columns)", h.len()));
        }
        names.join(", ")
    }

    /// The name of column `col` in messages: its header name, or its 0-based index.
    fn column_name(&self, col: usize) -> String {
        match self.header.as_ref().and_then(|h| h.get(col)) {
            Some(name) => excerpt(name),
            None => col.to_string(),
        }
    }

    /// Reads the next record that is not blank into `self.record` and sets `self.line`; false
    /// at the end.
    fn read_nonblank(&mut self) -> Result<bool> {
        let mut raw = std::mem::take(&mut self.record).into_byte_record();
        loop {
            let more = self
                .inner
                .read_byte_record(&mut raw)
                .map_err(|e| csv_error(&self.source, e))?;
            if !more {
                return Ok(false);
            }
            // The line count after the record, less the line breaks inside its fields and the
            // one that ended it (none for a last line without a line break).
            let ended = !self.inner.get_ref().eof;
            let inside = raw.iter().flatten().filter(|&&b| b == b'\n').count();
            self.line = self.inner.position().line() - inside as u64 - u64::from(ended);
            let blank = raw.len() == 1 && raw[0].trim_ascii().is_empty();
            if !blank {
                self.record = csv::StringRecord::from_byte_record(raw).map_err(|e| {
                    Error::data(
                        format!("{} line {}", self.source, self.line),
                        format!("field {} is not UTF-8 text", e.utf8_error().field() + 1),
                    )
                })?;
                return Ok(true);
            }
        }
    }

    /// The next record, or `None` at the end of the input. Refuses a record whose field count
    /// differs from the header's (or the first record's).
    pub fn next_row(&mut self) -> Result<Option<Row<'_, R>>> {
        if !self.read_nonblank()? {
            return Ok(None);
        }
        let len = self.record.len();
        let width = *self.width.get_or_insert(len);
        if len != width {
            let what = if self.header.is_some() {
                "the header"
            } else {
                "the first line"
            };
            return Err(Error::data(
                format!("{} line {}", self.source, self.line),
                format!(
                    "{len} field{}, but {what} has {width}{}",
                    if len == 1 { "" } else { "s" },
                    quote_hint(&self.record)
                ),
            ));
        }
        Ok(Some(Row { reader: &*self }))
    }

    /// Reads every remaining record and returns the columns `cols` as finite numbers, one
    /// vector per entry of `cols`, in record order.
    pub fn numeric_columns(&mut self, cols: &[usize]) -> Result<Vec<Vec<f64>>> {
        let mut out = vec![Vec::new(); cols.len()];
        while let Some(row) = self.next_row()? {
            for (v, &c) in out.iter_mut().zip(cols) {
                v.push(row.number(c)?);
            }
        }
        Ok(out)
    }
}

/// One record of a [`CsvReader`], valid until the next call of `next_row`.
pub struct Row<'a, R: Read> {
    reader: &'a CsvReader<R>,
}

impl<R: Read> Row<'_, R> {
    /// The line the record starts on (1-based).
    pub fn line(&self) -> u64 {
        self.reader.line
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.reader.record.len()
    }

    /// Always false: blank lines are skipped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A data error located at this record's column `col` (the line alone in a file of one
    /// unnamed column).
    pub fn error(&self, col: usize, reason: impl Into<String>) -> Error {
        let rd = self.reader;
        let at = format!("{} line {}", rd.source, rd.line);
        if rd.header.is_none() && rd.width == Some(1) {
            return Error::data(at, reason);
        }
        Error::data(format!("{at}, column `{}`", rd.column_name(col)), reason)
    }

    /// The text of column `col`, trimmed.
    pub fn text(&self, col: usize) -> Result<&str> {
        self.reader.record.get(col).map(str::trim).ok_or_else(|| {
            self.error(
                col,
                format!(
                    "the record has {} fields, no column {}",
                    self.len(),
                    col + 1
                ),
            )
        })
    }

    /// Column `col` as a finite number; anything else is refused.
    pub fn number(&self, col: usize) -> Result<f64> {
        match self.text(col)?.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.field_error(col, "is not a finite number")),
        }
    }

    /// The error for a field of column `col` that is refused because it `is_wrong` (e.g. "is
    /// not a finite number"): it quotes an [`excerpt`] of the field, and says so when a field
    /// of the record runs over several lines (most often an unterminated quote).
    pub fn field_error(&self, col: usize, is_wrong: &str) -> Error {
        let field = self.reader.record.get(col).unwrap_or_default().trim();
        self.error(
            col,
            format!(
                "`{}` {is_wrong}{}",
                excerpt(field),
                quote_hint(&self.reader.record)
            ),
        )
    }
}

/// A hint for a record with a field that runs over several lines: most often an unterminated
/// quote that swallowed the lines after it.
fn quote_hint(record: &csv::StringRecord) -> &'static str {
    if record.iter().any(|f| f.contains('\n')) {
        " (a quoted field runs over several lines: is a closing quote missing?)"
    } else {
        ""
    }
}

/// A `csv` error as a data error. With byte records and no length check, only I/O errors
/// reach here; neither they nor the crate's other messages quote field content.
fn csv_error(source: &str, e: csv::Error) -> Error {
    match e.kind() {
        csv::ErrorKind::Io(io) => Error::data(source, io.to_string()),
        _ => Error::data(source, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(text: &str, header: bool) -> Result<CsvReader<&[u8]>> {
        CsvReader::new(text.as_bytes(), "t.csv", header)
    }

    fn column(text: &str, name: &str) -> Result<Vec<f64>> {
        let mut rd = reader(text, true)?;
        let c = rd.column(name).expect("column present");
        Ok(rd.numeric_columns(&[c])?.remove(0))
    }

    #[test]
    fn quoted_fields_keep_their_commas() {
        let v = column("name,score\n\"x,0.9\",0.1\ny,0.5\n", "score").unwrap();
        assert_eq!(v, vec![0.1, 0.5]);
    }

    #[test]
    fn a_byte_order_mark_does_not_hide_the_first_name() {
        let rd = reader("\u{feff}score,b\n1,2\n", true).unwrap();
        assert_eq!(rd.column("score"), Some(0));
        let v = column("\u{feff}score\n0.25\n", "score").unwrap();
        assert_eq!(v, vec![0.25]);
    }

    #[test]
    fn names_and_fields_are_trimmed_and_blank_lines_skipped() {
        let mut rd = reader(" a , b \n\n 1 , 2 \n   \n3,4\n", true).unwrap();
        assert_eq!(rd.header(), ["a", "b"]);
        let cols = rd.numeric_columns(&[1, 0]).unwrap();
        assert_eq!(cols, vec![vec![2.0, 4.0], vec![1.0, 3.0]]);
    }

    #[test]
    fn extra_or_missing_fields_are_refused_naming_the_line() {
        let e = column("a,b\n1,2\n3,4,5\n", "a").unwrap_err().to_string();
        assert!(e.contains("t.csv line 3") && e.contains("3 fields"), "{e}");
        let e = column("a,b\n1,2\n\n3\n", "a").unwrap_err().to_string();
        assert!(e.contains("t.csv line 4") && e.contains("1 field,"), "{e}");
        // Far past the reader's first buffer, in a \r\n file.
        let mut text = "a,b\r\n".to_owned() + &"1,2\r\n".repeat(9_998);
        text.push_str("3,4,5\r\n");
        let e = column(&text, "a").unwrap_err().to_string();
        assert!(e.contains("t.csv line 10000:"), "{e}");
        // Without a header the first record sets the width.
        let mut rd = reader("1,2\n3\n", false).unwrap();
        let e = rd.numeric_columns(&[0]).unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("the first line has 2"),
            "{e}"
        );
    }

    #[test]
    fn line_numbers_count_blank_lines_crlf_and_quoted_line_breaks() {
        let lines = |text: &str| {
            let mut rd = reader(text, false).unwrap();
            let mut v = Vec::new();
            while let Some(row) = rd.next_row().unwrap() {
                v.push((row.text(0).unwrap().to_owned(), row.line()));
            }
            v
        };
        let expect = |pairs: &[(&str, u64)]| -> Vec<(String, u64)> {
            pairs.iter().map(|&(s, l)| (s.to_owned(), l)).collect()
        };
        assert_eq!(
            lines("a\n\n\nb\nc\n"),
            expect(&[("a", 1), ("b", 4), ("c", 5)])
        );
        assert_eq!(
            lines("a\r\n\r\nb\r\nc"),
            expect(&[("a", 1), ("b", 3), ("c", 4)])
        );
        assert_eq!(lines("a\n  \nb"), expect(&[("a", 1), ("b", 3)]));
        assert_eq!(
            lines("\"x\ny\"\n\"\n\nz\"\r\nb\n"),
            expect(&[("x\ny", 1), ("z", 3), ("b", 6)])
        );
    }

    #[test]
    fn duplicate_header_names_are_refused() {
        let e = reader("a,b, a\n1,2,3\n", true).err().unwrap().to_string();
        assert!(e.contains("`a` twice (columns 1 and 3)"), "{e}");
        assert!(reader("", true).is_err());
        assert!(reader("\n\n", true).is_err());
    }

    #[test]
    fn bad_numbers_name_line_and_column() {
        for bad in ["x", "NaN", "inf", "1e400", ""] {
            let e = column(&format!("a,b\n1,2\n3,{bad}\n"), "b")
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("t.csv line 3, column `b`") && e.contains("not a finite number"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn an_unterminated_quote_is_not_quoted_whole() {
        // 2 MB of records after an opening quote that never closes: the csv crate reads them as
        // one field; the message quotes 40 characters of it and points at the quote.
        let mut text = String::from("score\n\"0.5\n");
        for i in 0.. {
            if text.len() >= 2_000_000 {
                break;
            }
            text.push_str(&format!("0.123456789,record-{i:06}\n"));
        }
        let e = column(&text, "score").unwrap_err().to_string();
        assert!(e.len() < 300, "{} bytes: {}", e.len(), &e[..300]);
        assert!(e.contains("line 2") && e.contains("closing quote"), "{e}");
        assert!(!e.contains("record-000001"), "{e}");
        // Two columns: the swallowed record is one field short.
        let text = text.replacen("score\n", "score,b\n", 1);
        let e = column(&text, "score").unwrap_err().to_string();
        assert!(e.len() < 300 && e.contains("closing quote"), "{e}");
    }

    #[test]
    fn invalid_utf8_is_a_data_error() {
        let mut rd = CsvReader::new(&b"a\n\xff\n"[..], "t.csv", true).unwrap();
        let e = rd.numeric_columns(&[0]).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("not UTF-8"), "{e}");
    }

    #[test]
    fn gzip_files_are_recognised_by_their_bytes() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("dptune-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all("\u{feff}a\n7\n".as_bytes()).unwrap();
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
        let mut rd = CsvReader::open(&path, true).unwrap();
        assert_eq!(rd.numeric_columns(&[0]).unwrap(), vec![vec![7.0]]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
