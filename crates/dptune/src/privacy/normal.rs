//! The standard normal CDF in log space, accurate in both tails: shared by the Gaussian
//! accounting ([`gaussian`](super::gaussian)), the privacy loss distributions and the Gaussian
//! selection mechanisms, and importing nothing of theirs.

/// Continued fraction y + (1/2)/(y + (2/2)/(y + (3/2)/(y + …))) (modified Lentz), for y ≥ 2:
/// erfc(y) = e^{−y²}/(√π · cf(y)) (Abramowitz & Stegun 7.1.14).
fn erfc_continued_fraction(y: f64) -> f64 {
    let tiny = 1e-300;
    let mut f = y;
    let (mut c, mut d) = (f, 0.0);
    for n in 1..500 {
        let a = n as f64 / 2.0;
        d = y + a * d;
        d = if d == 0.0 { 1.0 / tiny } else { 1.0 / d };
        c = y + a / c;
        if c == 0.0 {
            c = tiny;
        }
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    f
}

/// erf(y) for |y| < 2 by the series (2/√π)e^{−y²} Σ 2ⁿ y^{2n+1}/(2n+1)!! (A&S 7.1.6; all
/// terms of one sign, no cancellation).
fn erf_series(y: f64) -> f64 {
    let y2 = y * y;
    let mut term = y;
    let mut sum = y;
    for n in 1..200 {
        term *= 2.0 * y2 / (2 * n + 1) as f64;
        sum += term;
        if term.abs() <= 1e-17 * sum.abs() {
            break;
        }
    }
    std::f64::consts::FRAC_2_SQRT_PI * (-y2).exp() * sum
}

/// ln erfc(y) for y ≥ 2 (no underflow); `y_sq` = y², passed in so that callers can compute it
/// without the rounding of y.
fn log_erfc_large(y: f64, y_sq: f64) -> f64 {
    -y_sq - 0.5 * std::f64::consts::PI.ln() - erfc_continued_fraction(y).ln()
}

/// ln Φ(x) for the standard normal CDF, accurate to ~1e-15 relative in both tails and without
/// underflow (δ down to 1e-300 and far below): a continued fraction for the tails, the erf
/// series in the middle.
pub fn log_ndtr(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    // Φ(x) = erfc(y)/2 with y = −x/√2.
    let y = -x / std::f64::consts::SQRT_2;
    let y_sq = 0.5 * x * x;
    if y >= 2.0 {
        log_erfc_large(y, y_sq) - std::f64::consts::LN_2
    } else if y > -2.0 {
        (0.5 * (1.0 - erf_series(y))).ln()
    } else {
        (-0.5 * log_erfc_large(-y, y_sq).exp()).ln_1p()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ndtr_tails() {
        assert!((log_ndtr(0.0) - 0.5f64.ln()).abs() < 1e-15);
        // Φ(−10) = 7.619853024160527e-24.
        // Reference values of Φ (50-digit).
        for (x, v) in [
            (-1.0, 0.15865525393145705),
            (-3.0, 1.3498980316300946e-3),
            (-5.0, 2.866515718791939e-7),
            (-8.0, 6.220960574271784e-16),
            (-10.0, 7.619853024160526e-24),
            (-20.0, 2.7536241186062336e-89),
            (1.0, 0.8413447460685429),
        ] {
            let p = log_ndtr(x).exp();
            assert!((p - v).abs() <= 1e-14 * v, "{x}: {p:e} vs {v:e}");
        }
        // Continuity across the switch at y = 2.
        let x0 = -2.0 * std::f64::consts::SQRT_2;
        let (a, b) = (log_ndtr(x0.next_up()), log_ndtr(x0.next_down()));
        assert!((a - b).abs() < 1e-13, "{a} {b}");
        assert!(log_ndtr(-1e5).is_finite());
        assert!(log_ndtr(40.0) <= 0.0);
    }
}
