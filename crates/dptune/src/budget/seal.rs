//! Checksums that make damage to a store's rows visible.
//!
//! SQLite's own checks ([`super::schema`]: `PRAGMA integrity_check`) find a damaged page
//! structure, but not a changed byte inside a stored value, nor a row that vanished with a
//! consistent page around it. So every budget row carries a SHA-256 over its fields, and the
//! charges of a budget form a hash chain: each charge's digest covers the previous one, and the
//! budget row holds the number of charges and the last digest (its head). Reading a budget
//! recomputes the chain; any changed, missing, extra or reordered charge breaks it. This
//! protects against accidents (a bad disk, a stray write), not against someone who rewrites
//! the file on purpose: they could recompute the digests.

use sha2::{Digest, Sha256};

/// A SHA-256 digest.
pub(super) type Seal = [u8; 32];

/// SHA-256 of the fields, each prefixed by its length so that no two field lists collide.
fn digest(domain: &str, fields: &[&[u8]]) -> Seal {
    let mut h = Sha256::new();
    for f in std::iter::once(&domain.as_bytes()).chain(fields) {
        h.update((f.len() as u64).to_le_bytes());
        h.update(f);
    }
    h.finalize().into()
}

/// The chain's starting point for the budget `name` (no charge yet).
pub(super) fn genesis(name: &str) -> Seal {
    digest("dptune budget genesis v1", &[name.as_bytes()])
}

/// The fields of a budget row that its seal covers.
pub(super) struct BudgetFields<'a> {
    pub name: &'a str,
    pub epsilon: f64,
    pub delta: f64,
    pub neighbours: &'a str,
    pub created: i64,
    pub charges: i64,
    pub head: &'a [u8],
}

/// The seal of a budget row.
pub(super) fn budget(f: &BudgetFields<'_>) -> Seal {
    digest(
        "dptune budget row v1",
        &[
            f.name.as_bytes(),
            &f.epsilon.to_bits().to_le_bytes(),
            &f.delta.to_bits().to_le_bytes(),
            f.neighbours.as_bytes(),
            &f.created.to_le_bytes(),
            &f.charges.to_le_bytes(),
            f.head,
        ],
    )
}

/// The fields of a charge row that its seal covers, with the previous link of the chain.
pub(super) struct ChargeFields<'a> {
    pub prev: &'a [u8],
    pub budget: &'a str,
    pub seq: i64,
    pub guarantee: &'a str,
    pub label: &'a str,
    pub command: &'a str,
    pub time: i64,
}

/// The seal of a charge row: the next link of its budget's chain.
pub(super) fn charge(f: &ChargeFields<'_>) -> Seal {
    digest(
        "dptune charge row v1",
        &[
            f.prev,
            f.budget.as_bytes(),
            &f.seq.to_le_bytes(),
            f.guarantee.as_bytes(),
            f.label.as_bytes(),
            f.command.as_bytes(),
            &f.time.to_le_bytes(),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_prefixes_separate_fields() {
        // Without the prefixes, ("ab", "c") and ("a", "bc") would hash alike.
        assert_ne!(digest("d", &[b"ab", b"c"]), digest("d", &[b"a", b"bc"]));
        assert_ne!(genesis("a"), genesis("b"));
    }
}
