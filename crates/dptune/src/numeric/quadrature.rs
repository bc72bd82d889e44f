//! Gauss–Legendre quadrature, one rule for the whole crate: the exact-value integrals of the
//! subsampled-Gaussian RDP (whose error is bounded separately and charged, see
//! [`crate::privacy::subsampled`]), the reported probabilities of permute-and-flip and of
//! report-noisy-max with continuous noise (reported, never sampled), and the study's expected
//! regrets.

/// The `n`-point Gauss–Legendre nodes and weights on [−1, 1] (Newton's method on the Legendre
/// polynomial P_n from the Tricomi-style start cos(π(i + 3/4)/(n + 1/2)), to |Δx| < 1e-16;
/// exact for polynomials of degree ≤ 2n − 1). Nodes come in decreasing order.
pub(crate) fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    let nf = n as f64;
    (0..n)
        .map(|i| {
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (nf + 0.5)).cos();
            let mut dp = 1.0;
            for _ in 0..100 {
                // P_{n−1}(x), P_n(x) by the three-term recurrence (P_0 = 1, P_1 = x).
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=n {
                    let kf = k as f64;
                    let p2 = ((2.0 * kf - 1.0) * x * p1 - (kf - 1.0) * p0) / kf;
                    p0 = p1;
                    p1 = p2;
                }
                dp = nf * (x * p1 - p0) / (x * x - 1.0);
                let dx = p1 / dp;
                x -= dx;
                if dx.abs() < 1e-16 {
                    break;
                }
            }
            (x, 2.0 / ((1.0 - x * x) * dp * dp))
        })
        .collect()
}

/// The `n`-point rule mapped to [0, 1]: nodes (1 − x)/2 (increasing), weights halved.
pub(crate) fn gauss_legendre_unit(n: usize) -> Vec<(f64, f64)> {
    gauss_legendre(n)
        .into_iter()
        .map(|(x, w)| ((1.0 - x) / 2.0, w / 2.0))
        .collect()
}

/// ∫_a^b f by composite Gauss–Legendre (20 points) on `pieces` equal sub-intervals.
pub(crate) fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64, pieces: usize) -> f64 {
    let rule = gauss_legendre_unit(20);
    let h = (b - a) / pieces as f64;
    let mut total = 0.0;
    for p in 0..pieces {
        let lo = a + h * p as f64;
        total += rule.iter().map(|&(x, w)| w * f(lo + h * x)).sum::<f64>() * h;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_for_polynomials() {
        let r = gauss_legendre_unit(5);
        let s: f64 = r.iter().map(|&(x, w)| w * x.powi(9)).sum();
        assert!((s - 0.1).abs() < 1e-14, "{s}");
        let s: f64 = gauss_legendre_unit(1).iter().map(|&(x, w)| w * x).sum();
        assert!((s - 0.5).abs() < 1e-15);
        let i = integrate(|x| x.exp(), 0.0, 1.0, 3);
        assert!((i - (1f64.exp() - 1.0)).abs() < 1e-14);
        // On [−1, 1]: ∫x⁸ = 2/9 with 5 nodes (degree 8 ≤ 9), and the weights sum to 2.
        let r = gauss_legendre(5);
        let s: f64 = r.iter().map(|&(x, w)| w * x.powi(8)).sum();
        assert!((s - 2.0 / 9.0).abs() < 1e-15, "{s}");
        assert!((r.iter().map(|&(_, w)| w).sum::<f64>() - 2.0).abs() < 1e-15);
    }
}
