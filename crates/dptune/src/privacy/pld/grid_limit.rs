//! How many grid points a privacy loss distribution may hold, and the typed refusal when a
//! mechanism, a composition or an FFT buffer would need more (instead of aborting the process
//! on a failed allocation). Shared by the grids ([`super::pmf`]), their transforms
//! ([`super::fft`]) and the constructions that size a window before building it.

use crate::error::Error;

/// The most grid points one direction (or one FFT buffer) may hold: 2²⁶, i.e. 512 MiB of f64
/// and about 1.5 GiB at the peak of a self-composition (the buffer, its spectrum and the
/// result). A default grid (h = 1e-4) covers losses across a window of 6,700 at this size;
/// only a mechanism with almost no noise (σ ≲ 0.003 on the default grid), a very fine grid or
/// an astronomical number of compositions needs more, and none of them gives a usable
/// guarantee, so they are refused instead of aborting the process.
pub(super) const MAX_POINTS: usize = 1 << 26;

/// 2^53: grid indices at or beyond it are not all representable in f64.
const INDEX_LIMIT: f64 = 9_007_199_254_740_992.0;

/// A loss grid that would need `points` grid points (not finite, or more than [`MAX_POINTS`]).
/// Turned into an [`Error::InvalidParameter`] by the caller, which knows the parameter that
/// drives the window ([`GridTooLarge::refuse`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct GridTooLarge {
    pub(super) points: f64,
}

/// The `points` of a window refused because its grid indices reach 2^53, whatever its width
/// ([`GridTooLarge::window`]): reported as such, not as a number of points it would need.
const BEYOND_INDICES: f64 = f64::MAX;

impl GridTooLarge {
    /// `points` (computed in f64, so nothing overflows) as a length, or the refusal.
    pub(super) fn check(points: f64) -> std::result::Result<usize, GridTooLarge> {
        if points.is_finite() && points >= 1.0 && points <= MAX_POINTS as f64 {
            Ok(points as usize)
        } else {
            Err(GridTooLarge { points })
        }
    }

    /// The number of points of the grid window [lo, hi] (grid indices, in f64 so that nothing
    /// overflows), or the refusal: more than [`MAX_POINTS`], or an index at or beyond 2^53.
    /// There neighbouring grid points share a float: a window can collapse onto one index (a
    /// Gaussian with noise multiplier 1e-18 has losses near 5e35 and a spread of 1e19) and the
    /// bucket walks never end, and a loss (offset + i)·h puts mass on the wrong point. Such a
    /// window is reported by `span`, its width in grid intervals computed without the indices,
    /// when that is more than [`MAX_POINTS`], and otherwise as beyond the indices (it used to be
    /// reported as needing 9.0e15 points whatever its width).
    pub(super) fn window(lo: f64, hi: f64, span: f64) -> std::result::Result<usize, GridTooLarge> {
        let exact = lo.abs() < INDEX_LIMIT && hi.abs() < INDEX_LIMIT;
        if exact {
            Self::check(hi - lo + 1.0)
        } else if span > MAX_POINTS as f64 {
            Err(GridTooLarge { points: span })
        } else {
            Err(GridTooLarge {
                points: BEYOND_INDICES,
            })
        }
    }

    /// Whether `e` is this refusal (whatever parameter it names).
    pub(super) fn is_refusal(e: &Error) -> bool {
        matches!(e, Error::InvalidParameter { reason, .. } if reason.contains(Self::HELD))
    }

    const HELD: &'static str = "grid points are held";

    /// The refusal, naming the parameter `name` = `value` that drives the loss window.
    pub(super) fn refuse(self, name: &'static str, value: impl std::fmt::Display) -> Error {
        let needs = if self.points == BEYOND_INDICES {
            "grid indices of 2^53 or more (where neighbouring grid points share a float)".into()
        } else if self.points.is_finite() {
            format!("{:.1e} grid points", self.points)
        } else {
            "an unbounded loss window".to_string()
        };
        Error::invalid(
            name,
            value,
            format!(
                "the privacy loss distribution would need {needs}, and at most {MAX_POINTS} {} \
                 (more noise, fewer compositions or a coarser grid interval would fit)",
                Self::HELD
            ),
        )
    }
}
