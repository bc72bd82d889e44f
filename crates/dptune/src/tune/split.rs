//! Data splits by one data-independent coin per record.
//!
//! Under add/remove neighbours a fixed-size cut is not a function of each record alone (adding a
//! record shifts the cut), so it can move other records between the sides. Flipping an
//! independent coin per record keeps every record's side independent of the others, so the two
//! sides are disjoint functions of the data and mechanisms on them compose in parallel
//! (THEORY.md §9, §10).
//!
//! A side may come out empty (probability p^n + (1 − p)^n): that is not an error. Refusing it
//! would be a data-dependent refusal (its probability depends on the private size n), so the
//! mechanisms downstream run on empty data instead: DP-SGD releases noise only, the scorers a
//! noisy zero, ridge its noisy statistics.

use num_rational::BigRational;

use crate::error::{Error, Result};
use crate::noise::{bernoulli_rational, exact_rational, SecureRng};

/// The indices on each side of a split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Records whose coin came up "first".
    pub first: Vec<usize>,
    /// The others.
    pub second: Vec<usize>,
}

/// The fractions of split–tune–final's two coin splits (THEORY.md §10).
#[derive(Debug, Clone, Copy)]
pub struct Fractions {
    /// Probability that a record goes to the tuning part (the rest is for the final fit).
    pub tune: f64,
    /// Probability that a tuning record is used for training (the rest scores).
    pub train: f64,
}

impl Fractions {
    /// Refuses a fraction outside (0, 1), naming it (`tune_fraction` or `train_fraction`):
    /// checked with the rest of a plan, before any data is touched or budget spent (the coin
    /// splits would refuse it only after the noisy count).
    pub fn check(&self) -> Result<()> {
        for (name, f) in [("tune_fraction", self.tune), ("train_fraction", self.train)] {
            if !(f > 0.0 && f < 1.0) {
                return Err(Error::invalid(name, f, "must lie in (0, 1)"));
            }
        }
        Ok(())
    }
}

/// Splits records `0..n` by an exact Bernoulli(`fraction`) coin each: heads go to `first`.
/// `fraction` must lie in (0, 1) (a public parameter). Either side may be empty.
pub fn split_by_coin(n: usize, fraction: f64, rng: &mut SecureRng) -> Result<Split> {
    if !(fraction > 0.0 && fraction < 1.0) {
        return Err(Error::invalid("fraction", fraction, "must lie in (0, 1)"));
    }
    let p: BigRational = exact_rational("fraction", fraction)?;
    let mut first = Vec::new();
    let mut second = Vec::new();
    for i in 0..n {
        if bernoulli_rational(rng, &p)? {
            first.push(i);
        } else {
            second.push(i);
        }
    }
    debug_assert_eq!(first.len() + second.len(), n);
    Ok(Split { first, second })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coins_are_independent_and_sides_disjoint() {
        let mut rng = SecureRng::seeded(5);
        let s = split_by_coin(10_000, 0.3, &mut rng).unwrap();
        assert_eq!(s.first.len() + s.second.len(), 10_000);
        // Binomial(10 000, 0.3): sd 45.8; 5 sd gives a false failure below 6e-7.
        assert!(
            (s.first.len() as f64 - 3000.0).abs() < 5.0 * 45.83,
            "{}",
            s.first.len()
        );
        assert!(split_by_coin(10, 1.0, &mut rng).is_err());
    }

    #[test]
    fn empty_sides_are_splits_not_refusals() {
        // Regression (issue 13, finding 13): an empty side used to be NoRelease, a refusal
        // whose probability p^n + (1 - p)^n depends on the private n.
        let mut rng = SecureRng::seeded(6);
        let none = split_by_coin(0, 0.5, &mut rng).unwrap();
        assert!(none.first.is_empty() && none.second.is_empty());
        // One record at p = 0.5: one side is always empty; 64 draws land on both sides
        // (a false failure has probability 2^-63).
        let mut seen = [false, false];
        for _ in 0..64 {
            let s = split_by_coin(1, 0.5, &mut rng).unwrap();
            assert_eq!(s.first.len() + s.second.len(), 1);
            seen[s.first.len()] = true;
        }
        assert_eq!(seen, [true, true]);
    }
}
