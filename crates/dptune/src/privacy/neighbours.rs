//! [`Neighbours`]: which datasets count as neighbours. Its own small module so that everything
//! that carries a relation (a [`Guarantee`](super::Guarantee), a privacy loss distribution) can
//! name it without importing the others.
//!
//! One spelling everywhere: `add_remove` / `replace_one` (serde, [`fmt::Display`], the budget
//! store, the command line, Python), so that a report read by a machine never has to know which
//! front end wrote it.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, Result};

/// Which datasets count as neighbours (THEORY.md §0.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Neighbours {
    /// D′ = D with one record (or client) added or removed; the dataset size is private.
    #[serde(rename = "add_remove")]
    AddRemove,
    /// D′ = D with one record replaced; the dataset size is public.
    #[serde(rename = "replace_one")]
    Replace,
}

impl Neighbours {
    /// The one spelling of the relation in every output: `add_remove` or `replace_one`.
    pub const fn name(self) -> &'static str {
        match self {
            Neighbours::AddRemove => "add_remove",
            Neighbours::Replace => "replace_one",
        }
    }
}

impl fmt::Display for Neighbours {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Neighbours {
    type Err = Error;

    /// Reads the spelling [`Neighbours::name`] writes, and nothing else.
    fn from_str(s: &str) -> Result<Self> {
        [Neighbours::AddRemove, Neighbours::Replace]
            .into_iter()
            .find(|n| n.name() == s)
            .ok_or_else(|| Error::invalid("neighbours", s, "must be add_remove or replace_one"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spelling_in_serde_display_and_parsing() {
        for (n, name) in [
            (Neighbours::AddRemove, "add_remove"),
            (Neighbours::Replace, "replace_one"),
        ] {
            assert_eq!(n.to_string(), name);
            assert_eq!(serde_json::to_string(&n).unwrap(), format!("\"{name}\""));
            assert_eq!(name.parse::<Neighbours>().unwrap(), n);
        }
        for other in ["add-remove", "add/remove-one", "replace", "replace-one", ""] {
            assert!(other.parse::<Neighbours>().is_err(), "{other}");
        }
    }
}
