//! Gauss–Legendre quadrature for the closed-form (numerical) probabilities of permute-and-flip
//! and of report-noisy-max with continuous noise. Used only to *report* probabilities, never to
//! sample.

/// Nodes and weights of the n-point Gauss–Legendre rule on [0, 1] (Newton on P_n; exact for
/// polynomials of degree ≤ 2n − 1).
pub(crate) fn gauss_legendre_unit(n: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(n);
    let nf = n as f64;
    for i in 0..n {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (nf + 0.5)).cos();
        let mut dp = 1.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=n {
                let kf = k as f64;
                let p2 = ((2.0 * kf - 1.0) * x * p1 - (kf - 1.0) * p0) / kf;
                p0 = p1;
                p1 = p2;
            }
            let pn = if n == 1 { x } else { p1 };
            let pn1 = if n == 1 { 1.0 } else { p0 };
            dp = nf * (x * pn - pn1) / (x * x - 1.0);
            let dx = pn / dp;
            x -= dx;
            if dx.abs() < 1e-16 {
                break;
            }
        }
        let w = 2.0 / ((1.0 - x * x) * dp * dp);
        out.push(((1.0 - x) / 2.0, w / 2.0));
    }
    out
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
    }
}
