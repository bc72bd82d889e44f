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

/// A loss grid that would need `points` grid points (not finite, or more than [`MAX_POINTS`]).
/// Turned into an [`Error::InvalidParameter`] by the caller, which knows the parameter that
/// drives the window ([`GridTooLarge::refuse`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct GridTooLarge {
    pub(super) points: f64,
}

impl GridTooLarge {
    /// `points` (computed in f64, so nothing overflows) as a length, or the refusal.
    pub(super) fn check(points: f64) -> std::result::Result<usize, GridTooLarge> {
        if points.is_finite() && points >= 1.0 && points <= MAX_POINTS as f64 {
            Ok(points as usize)
        } else {
            Err(GridTooLarge { points })
        }
    }

    /// Whether `e` is this refusal (whatever parameter it names).
    pub(super) fn is_refusal(e: &Error) -> bool {
        matches!(e, Error::InvalidParameter { reason, .. } if reason.contains(Self::HELD))
    }

    const HELD: &'static str = "grid points are held";

    /// The refusal, naming the parameter `name` = `value` that drives the loss window.
    pub(super) fn refuse(self, name: &'static str, value: impl std::fmt::Display) -> Error {
        let needs = if self.points.is_finite() {
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
