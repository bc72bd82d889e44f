//! Bisection, one loop for the whole crate: noise calibrations (Gaussian σ, federated noise,
//! DP-SGD multipliers, per-run allowances), ε and δ conversions (the zCDP order, ρ for an ε),
//! and the truncated negative binomial's γ for a mean.
//!
//! The callers differ only in where they split the bracket (arithmetic mean for quantities on
//! a linear scale, geometric for scale parameters spanning decades), when they stop, and which
//! end they return; so those are the parameters, and the loop, its float-resolution stop and
//! its step limit exist once.

/// Where the bracket is split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Split {
    /// (lo + hi)/2.
    Arithmetic,
    /// √(lo·hi), for lo > 0.
    Geometric,
}

/// More halvings than any f64 bracket needs to reach float resolution (an arithmetic bisection
/// of [0, 1] down to the smallest subnormal takes 1,074 + 53).
const MAX_STEPS: usize = 2_200;

/// Shrinks the bracket (lo, hi) of a monotone predicate: `upper(x)` is false below some point
/// and true from it on, and the point lies in (lo, hi] (neither end is evaluated). Halves until
/// `done(lo, hi)`, or until the split no longer falls strictly inside the bracket (adjacent
/// floats), and returns the final (lo, hi): `upper` is false at lo (or lo is the caller's end)
/// and true at hi (or hi is the caller's end). Errors of `upper` abort the search.
pub(crate) fn bisect<E>(
    mut lo: f64,
    mut hi: f64,
    split: Split,
    done: impl Fn(f64, f64) -> bool,
    mut upper: impl FnMut(f64) -> Result<bool, E>,
) -> Result<(f64, f64), E> {
    for _ in 0..MAX_STEPS {
        if done(lo, hi) {
            break;
        }
        let mid = match split {
            Split::Arithmetic => 0.5 * (lo + hi),
            Split::Geometric => (lo * hi).sqrt(),
        };
        if mid <= lo || mid >= hi {
            break;
        }
        if upper(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok((lo, hi))
}

/// The smallest point that fits, between `lo` (known not to fit) and `hi` (known to fit, with
/// `best` what `fits_at(hi)` said): geometric bisection until hi ≤ lo·`ratio`, returning what
/// `fits_at` said at the final `hi`. `fits_at` is `None` below some point and `Some` from it
/// on (noise scales: more noise always fits better); every value returned comes from a call
/// that said `Some`, so it is valid even where `fits_at` is not exactly monotone. Shared by
/// the noise calibrations that bracket their answer first (`tune::cost::smallest_fitting`,
/// `privacy::pld::calibrate_dpsgd_noise`).
pub(crate) fn smallest_between<T, E>(
    lo: f64,
    hi: f64,
    best: T,
    ratio: f64,
    fits_at: impl Fn(f64) -> Result<Option<T>, E>,
) -> Result<T, E> {
    let mut best = best;
    bisect(lo, hi, Split::Geometric, within_factor(ratio), |z| {
        Ok(fits_at(z)?.map(|b| best = b).is_some())
    })?;
    Ok(best)
}

/// A bracket found by [`halve_to_failure`].
pub(crate) enum Halved<T> {
    /// `lo` does not fit; `hi` fits, and `fits_at(hi)` said `best`.
    Bracket { lo: f64, hi: f64, best: T },
    /// Every point down to the floor fits: what `fits_at(low)` said (or `best`, if the start
    /// was already at the floor).
    Floor(T),
}

/// From `hi`, known to fit with `best`, halves down (never below `low`) until a point does not
/// fit: the bracket for [`smallest_between`], or the floor when even `low` fits. The first
/// step of the noise calibrations that start from a point that fits (`tune::cost::
/// smallest_dpsgd_noise` from the RDP answer, `privacy::pld::calibrate_dpsgd_noise` from 1):
/// probing down by halves keeps away from the small noise scales, whose PLD grids are the
/// largest, until the answer is known to lie there.
pub(crate) fn halve_to_failure<T, E>(
    low: f64,
    hi: f64,
    best: T,
    fits_at: impl Fn(f64) -> Result<Option<T>, E>,
) -> Result<Halved<T>, E> {
    let (mut hi, mut best) = (hi, best);
    loop {
        if hi <= low {
            return Ok(Halved::Floor(best));
        }
        let lo = (hi / 2.0).max(low);
        match fits_at(lo)? {
            Some(b) => (hi, best) = (lo, b),
            None => return Ok(Halved::Bracket { lo, hi, best }),
        }
    }
}

/// Never stop early: bisect to float resolution.
pub(crate) fn to_resolution(_: f64, _: f64) -> bool {
    false
}

/// Stop once hi ≤ lo·`factor`.
pub(crate) fn within_factor(factor: f64) -> impl Fn(f64, f64) -> bool {
    move |lo, hi| hi <= lo * factor
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    fn ok(b: bool) -> Result<bool, Infallible> {
        Ok(b)
    }

    #[test]
    fn finds_the_boundary_of_a_monotone_predicate() {
        // √2 to float resolution: the bracket ends are adjacent floats around it.
        let (lo, hi) = bisect(1.0, 2.0, Split::Arithmetic, to_resolution, |x| {
            ok(x * x >= 2.0)
        })
        .unwrap();
        assert_eq!(lo.next_up(), hi);
        assert!(lo * lo < 2.0 && hi * hi >= 2.0);
        // Geometric split to a relative 1e-9 on a scale spanning 12 decades: 1e-3.
        let (lo, hi) = bisect(
            1e-9,
            1e3,
            Split::Geometric,
            within_factor(1.0 + 1e-9),
            |x| ok(x >= 1e-3),
        )
        .unwrap();
        assert!(
            hi <= lo * (1.0 + 1e-9) && lo < 1e-3 && hi >= 1e-3,
            "{lo} {hi}"
        );
        // A deliberately non-monotone predicate still terminates inside the bracket.
        let (lo, hi) = bisect(0.0, 1.0, Split::Arithmetic, to_resolution, |x| {
            ok(x.to_bits() % 2 == 0)
        })
        .unwrap();
        assert!((0.0..=1.0).contains(&lo) && lo < hi && hi <= 1.0);
    }

    #[test]
    fn errors_abort_the_search() {
        let mut calls = 0;
        let r = bisect(0.0, 1.0, Split::Arithmetic, to_resolution, |_| {
            calls += 1;
            Err::<bool, _>("boom")
        });
        assert_eq!((r, calls), (Err("boom"), 1));
    }
}
