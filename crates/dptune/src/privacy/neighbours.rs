//! [`Neighbours`]: which datasets count as neighbours. Its own small module so that everything
//! that carries a relation (a [`Guarantee`](super::Guarantee), a privacy loss distribution) can
//! name it without importing the others.

use std::fmt;

use serde::Serialize;

/// Which datasets count as neighbours (THEORY.md §0.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Neighbours {
    /// D′ = D with one record (or client) added or removed; the dataset size is private.
    AddRemove,
    /// D′ = D with one record replaced; the dataset size is public.
    Replace,
}

impl fmt::Display for Neighbours {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Neighbours::AddRemove => "add/remove-one",
            Neighbours::Replace => "replace-one",
        })
    }
}
