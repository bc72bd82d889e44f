//! The report of `dptune study` (a study over a table): the finished [`StudyReport`] and the
//! title it is drawn and printed under, as one serialisable type the CLI renders (text or
//! `--json`). (`dptune study --recommend` prints the library's [`super::Recommendation`].)
//!
//! A study computes from public inputs only: the table is the analyst's research input and no
//! guarantee is claimed for it (DESIGN.md, `Report`); the non-private reference is labelled as
//! such in its cells.

use serde::Serialize;

use super::StudyReport;

/// What `dptune study` prints for a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TitledStudy {
    /// Public, computed: the study, its fields at the top level.
    #[serde(flatten)]
    pub study: StudyReport,
    /// Public input: the title (the `--title` given, else the table's file name).
    pub title: String,
}
