//! Secure continuous Laplace and Gaussian noise on a power-of-two grid (THEORY.md §14.2).
//!
//! Textbook floating-point noise leaks through its least significant bits (Mironov, CCS 2012,
//! "On significance of the least significant bits for differential privacy"; THEORY.md §14.1).
//! Here, as in Google's "Secure Noise Generation" (google/differential-privacy, June 2020) and
//! OpenDP's float mechanisms, the input is rounded to the nearest multiple of a power of two r,
//! an exact integer noise i is added in units of r, and the output is (round_r(value) + i)·r.
//! The rounding of the input is charged in the privacy guarantee (see each type), so the
//! guarantee holds for the real-valued query, not just for its rounded version. Converting the
//! exact integer grid point back to `f64` is post-processing of a private value.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive};

use super::gaussian::DiscreteGaussian;
use super::laplace::DiscreteLaplace;
use super::{exact_rational, SecureRng};
use crate::error::{check_positive, Error, Result};
use crate::numeric::{add_up, up};

/// The Laplace grid is the smallest power of two >= scale·2^-40 (as in Google's Go library).
const LAPLACE_GRID_BITS: i32 = 40;
/// The Gaussian grid is the smallest power of two >= σ·2^-30, so that σ in grid units is in
/// (2^29, 2^30] and the discrete Gaussian stays on its `u128` fast path.
const GAUSSIAN_GRID_BITS: i32 = 30;
/// The discrete Laplace rate in grid units is rounded down to a multiple of 2^-63.
const RATE_DENOMINATOR_BITS: u32 = 63;
/// Grid coordinates below this magnitude use `i128` arithmetic; above, `BigInt`.
const SMALL_COORDINATE: f64 = 1.2676506002282294e30; // 2^100

/// The smallest k with 2^k >= x for a positive finite x, clamped to the normal exponents
/// [-1022, 1023] (a coarser grid than needed at the bottom is still valid).
fn pow2_exponent_at_least(x: f64) -> i32 {
    if x < f64::MIN_POSITIVE {
        return -1022;
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1023;
    let mantissa = bits & ((1u64 << 52) - 1);
    let k = if mantissa == 0 { exp } else { exp + 1 };
    k.clamp(-1022, 1023)
}

/// 2^k as an `f64`, for k in [-1022, 1023].
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// 2^k as an exact rational.
fn pow2_rational(k: i32) -> BigRational {
    let one = BigInt::from(1);
    if k >= 0 {
        BigRational::from_integer(one << k as u32)
    } else {
        BigRational::new(one.clone(), one << (-k) as u32)
    }
}

/// A point of the grid r·ℤ, by its integer coordinate.
enum Coordinate {
    Small(i128),
    Big(BigInt),
}

/// The power-of-two grid r = 2^k.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Grid {
    k: i32,
}

impl Grid {
    fn resolution(&self) -> f64 {
        pow2(self.k)
    }

    /// The coordinate of the grid point nearest to `value` (ties away from zero); moves the
    /// value by at most r/2. Refuses non-finite values with [`Error::Numerical`], never with
    /// `InvalidParameter`: the value is private (a sum, a score, a model), so a non-finite one
    /// means a precondition of the sensitivity analysis failed on data, and the caller must
    /// abort, not treat it as an unusable configuration (a tuner turns `InvalidParameter` into
    /// a worst-scored run, which would make a data-dependent event look like a public one).
    /// Front ends validate data before any mechanism, so this does not happen on valid input.
    fn snap(&self, value: f64) -> Result<Coordinate> {
        if !value.is_finite() {
            return Err(Error::Numerical {
                what: "grid release",
                reason: format!("the released `value` is {value}: must be finite"),
            });
        }
        // Division by a power of two is exact unless the quotient overflows or is subnormal;
        // a subnormal quotient rounds to 0 either way.
        let q = value / self.resolution();
        if q.is_finite() && q.abs() < SMALL_COORDINATE {
            return Ok(Coordinate::Small(q.round() as i128));
        }
        let exact = exact_rational("value", value)? / pow2_rational(self.k);
        Ok(Coordinate::Big(exact.round().to_integer()))
    }

    /// (coordinate + noise)·r as the nearest `f64` (±∞ beyond the `f64` range).
    fn emit(&self, c: Coordinate, noise: i64) -> f64 {
        match c {
            Coordinate::Small(g) => (g + noise as i128) as f64 * self.resolution(),
            Coordinate::Big(g) => {
                let sum = g + noise;
                let sign = if sum.is_negative() { -1.0 } else { 1.0 };
                (BigRational::from_integer(sum) * pow2_rational(self.k))
                    .to_f64()
                    .unwrap_or(sign * f64::INFINITY)
            }
        }
    }
}

/// ε-DP Laplace noise for a real-valued query of L1 sensitivity Δ, on a power-of-two grid.
///
/// Construction (Google, "Secure Noise Generation", June 2020, **Proposition 1**; THEORY.md
/// §14.2): r = the smallest power of two >= (Δ/ε)·2^-40; output round_r(value) + i·r with i
/// discrete Laplace, P\[i\] ∝ exp(-|i|·x), where x = r·ε/(Δ + r) **rounded down** to a multiple of
/// 2^-63 (so the noise is, if anything, wider).
///
/// **How the rounding is charged:** for neighbouring inputs |f(D) - f(D')| <= Δ, and rounding
/// each to the grid moves it by at most r/2, so the rounded values differ by at most
/// Δ + r, i.e. (Δ + r)/r grid steps. The discrete Laplace with rate x <= rε/(Δ + r) then has
/// privacy loss at most x·(Δ + r)/r <= ε. So the guarantee is ε-DP for the real-valued query,
/// rounding included; [`GridLaplace::effective_sensitivity`] reports Δ + r. The noise is
/// sampled exactly (CKS20 Algorithm 2, see [`DiscreteLaplace`]); the expected error is within
/// a factor 1 + (1 + 2Δ/ε)·2^-40 of continuous Laplace(Δ/ε).
///
/// Preconditions: Δ > 0 and ε > 0 finite, Δ/ε finite, ε >= 2^-48 or so (the noise in grid
/// units must stay below 2^48).
#[derive(Debug, Clone, PartialEq)]
pub struct GridLaplace {
    sensitivity: f64,
    epsilon: f64,
    grid: Grid,
    noise: DiscreteLaplace,
}

impl GridLaplace {
    /// Laplace noise calibrated to ε-DP for L1 sensitivity `sensitivity`, rounding included.
    pub fn new(sensitivity: f64, epsilon: f64) -> Result<Self> {
        check_positive("sensitivity", sensitivity)?;
        check_positive("epsilon", epsilon)?;
        let scale = sensitivity / epsilon;
        if !scale.is_finite() {
            return Err(Error::invalid(
                "epsilon",
                epsilon,
                "sensitivity/epsilon overflows f64",
            ));
        }
        let grid = Grid {
            k: pow2_exponent_at_least(scale * pow2(-LAPLACE_GRID_BITS)),
        };
        let r = pow2_rational(grid.k);
        let eps = exact_rational("epsilon", epsilon)?;
        let delta = exact_rational("sensitivity", sensitivity)?;
        let rate = &r * eps / (delta + &r);
        let s = (rate * pow2_rational(RATE_DENOMINATOR_BITS as i32))
            .floor()
            .to_integer()
            .to_u64()
            .unwrap_or(0);
        let noise = DiscreteLaplace::new(s, 1u64 << RATE_DENOMINATOR_BITS).map_err(|_| {
            Error::invalid(
                "epsilon",
                epsilon,
                "too small for the grid: the noise in grid units would exceed 2^48",
            )
        })?;
        Ok(Self {
            sensitivity,
            epsilon,
            grid,
            noise,
        })
    }

    /// The grid resolution r (a power of two).
    pub fn resolution(&self) -> f64 {
        self.grid.resolution()
    }

    /// The ε this mechanism satisfies (rounding included).
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The caller's L1 sensitivity Δ.
    pub fn sensitivity(&self) -> f64 {
        self.sensitivity
    }

    /// Δ + r: the sensitivity after rounding the input to the grid, which the noise is
    /// calibrated to (rounded up to the next `f64`).
    pub fn effective_sensitivity(&self) -> f64 {
        add_up(self.sensitivity, self.resolution())
    }

    /// The integer noise in grid units.
    pub fn grid_noise(&self) -> &DiscreteLaplace {
        &self.noise
    }

    /// round_r(`value`) + i·r. Refuses non-finite values (`value`).
    pub fn release(&self, rng: &mut SecureRng, value: f64) -> Result<f64> {
        let c = self.grid.snap(value)?;
        Ok(self.grid.emit(c, self.noise.sample(rng)))
    }
}

/// Gaussian noise for a query with values in ℝ^dim of L2 sensitivity Δ, on a power-of-two
/// grid, with a zCDP guarantee that pays for the rounding.
///
/// Construction (the granularity approach of Google's "Secure Noise Generation" and of
/// OpenDP's float mechanisms, THEORY.md §14.2, with the exact discrete Gaussian of Canonne,
/// Kamath & Steinke, arXiv 2004.00010, Algorithm 3, instead of a binomial): r = the smallest
/// power of two >= σ·2^-30; each coordinate is rounded to the grid and gets independent noise
/// i·r with i ~ N_ℤ(0, n), n = ⌈(σ/r)²⌉ (so the actual standard deviation r·√n is >= σ by less
/// than one part in 2^58).
///
/// **How the rounding is charged:** rounding moves each coordinate by at most r/2, so the
/// rounded vectors of neighbouring inputs are within L2 distance Δ + r·√dim
/// ([`GridGaussian::effective_sensitivity`]). The discrete Gaussian mechanism is then
/// ρ-zCDP with ρ = (Δ + r√dim)²/(2·r²·n) ([`GridGaussian::rho`], rounded up). CKS20 add a
/// slack term for several independent coordinates (THEORY.md §14.3 marks its exact form as
/// unconfirmed); it decays like e^{-cπ²n} for a constant c, and with n >= 2^58 it is far
/// below the one-ulp upward rounding of ρ.
///
/// Preconditions: Δ > 0, σ > 0 finite, dim >= 1; σ·2^-30 must be a normal `f64`.
#[derive(Debug, Clone, PartialEq)]
pub struct GridGaussian {
    sensitivity: f64,
    sigma: f64,
    dim: usize,
    grid: Grid,
    grid_variance: u64,
    noise: DiscreteGaussian,
}

impl GridGaussian {
    /// The grid Gaussian for a ρ-zCDP allowance: σ starts at Δ/√(2ρ) and is raised until
    /// [`GridGaussian::rho`], which charges the grid rounding, is at most `rho`.
    pub fn within_rho(sensitivity: f64, rho: f64, dim: usize) -> Result<Self> {
        check_positive("rho", rho)?;
        check_positive("sensitivity", sensitivity)?;
        let mut sigma = sensitivity / (2.0 * rho).sqrt();
        for _ in 0..8 {
            let g = Self::new(sensitivity, sigma, dim)?;
            if g.rho() <= rho {
                return Ok(g);
            }
            // The excess is a factor (1 + O(2^-29·√dim)); scale σ by it, plus a margin.
            sigma *= (g.rho() / rho).sqrt() * (1.0 + 1e-12);
        }
        Err(Error::Numerical {
            what: "grid Gaussian calibration",
            reason: format!("no sigma reached rho <= {rho}"),
        })
    }

    /// Gaussian noise of standard deviation (at least) `sigma` per coordinate for a
    /// `dim`-dimensional query of L2 sensitivity `sensitivity`.
    pub fn new(sensitivity: f64, sigma: f64, dim: usize) -> Result<Self> {
        check_positive("sensitivity", sensitivity)?;
        check_positive("sigma", sigma)?;
        if dim == 0 {
            return Err(Error::invalid("dim", dim, "must be >= 1"));
        }
        let target = sigma * pow2(-GAUSSIAN_GRID_BITS);
        if target < f64::MIN_POSITIVE {
            return Err(Error::invalid("sigma", sigma, "must be >= 2^-992"));
        }
        let grid = Grid {
            k: pow2_exponent_at_least(target),
        };
        // σ/r is exact (division by a power of two into (2^29, 2^30]).
        let units = exact_rational("sigma", sigma / grid.resolution())?;
        let grid_variance = (&units * &units)
            .ceil()
            .to_integer()
            .to_u64()
            .ok_or_else(|| Error::invalid("sigma", sigma, "grid variance overflows"))?;
        let noise = DiscreteGaussian::new(grid_variance, 1)?;
        let mechanism = Self {
            sensitivity,
            sigma,
            dim,
            grid,
            grid_variance,
            noise,
        };
        if !mechanism.rho().is_finite() {
            return Err(Error::invalid(
                "sigma",
                sigma,
                "too small for the sensitivity: rho overflows f64",
            ));
        }
        Ok(mechanism)
    }

    /// The grid resolution r (a power of two).
    pub fn resolution(&self) -> f64 {
        self.grid.resolution()
    }

    /// The caller's L2 sensitivity Δ.
    pub fn sensitivity(&self) -> f64 {
        self.sensitivity
    }

    /// The requested σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The dimension the rounding is charged for.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The actual standard deviation r·√n >= σ, rounded down (it is only used as a
    /// denominator of privacy costs).
    pub fn effective_sigma(&self) -> f64 {
        ((self.grid_variance as f64).next_down().sqrt() * self.resolution()).next_down()
    }

    /// Δ + r·√dim: the L2 sensitivity after rounding every coordinate to the grid, rounded up.
    /// (√dim is rounded up one ulp, then the sum is rounded up exactly.)
    pub fn effective_sensitivity(&self) -> f64 {
        up(
            self.sensitivity + self.resolution() * (self.dim as f64).sqrt(),
            2,
        )
    }

    /// ρ = (Δ + r√dim)²/(2·r²·n), the zCDP cost of one release of all `dim` coordinates,
    /// rounded up.
    pub fn rho(&self) -> f64 {
        let ratio = up(self.effective_sensitivity() / self.effective_sigma(), 1);
        up(ratio * ratio / 2.0, 1)
    }

    /// The integer noise in grid units.
    pub fn grid_noise(&self) -> &DiscreteGaussian {
        &self.noise
    }

    /// One noisy coordinate: round_r(`value`) + i·r. A `dim`-dimensional release must draw
    /// exactly `dim` coordinates (see [`GridGaussian::release_vec`]). Refuses non-finite values.
    pub fn release(&self, rng: &mut SecureRng, value: f64) -> Result<f64> {
        let c = self.grid.snap(value)?;
        Ok(self.grid.emit(c, self.noise.sample(rng)))
    }

    /// All `dim` coordinates at once; refuses a slice of another length (`values`) and any
    /// non-finite entry before drawing any noise.
    pub fn release_vec(&self, rng: &mut SecureRng, values: &[f64]) -> Result<Vec<f64>> {
        if values.len() != self.dim {
            return Err(Error::invalid(
                "values",
                format!("{} coordinates", values.len()),
                format!("must have dim = {} coordinates", self.dim),
            ));
        }
        let snapped = values
            .iter()
            .map(|&v| self.grid.snap(v))
            .collect::<Result<Vec<_>>>()?;
        Ok(snapped
            .into_iter()
            .map(|c| self.grid.emit(c, self.noise.sample(rng)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x / r` is an integer, checked exactly (the f64 quotient can overflow).
    fn on_grid(x: f64, r: f64) -> bool {
        let k = pow2_exponent_at_least(r);
        assert_eq!(pow2(k), r);
        exact_rational("x", x)
            .map(|q| (q / pow2_rational(k)).is_integer())
            .unwrap_or(false)
    }

    const VALUES: [f64; 8] = [0.0, 0.1, -3.7, 12345.678, 1e10, -1e-12, 1e200, -7e300];

    #[test]
    fn laplace_outputs_lie_on_the_grid() {
        let m = GridLaplace::new(1.0, 0.5).unwrap();
        // Scale 2: r is the smallest power of two >= 2·2^-40.
        assert_eq!(m.resolution(), 2f64.powi(-39));
        let mut rng = SecureRng::seeded(90);
        for v in VALUES {
            for _ in 0..200 {
                let out = m.release(&mut rng, v).unwrap();
                assert!(on_grid(out, m.resolution()), "{out} from {v}");
            }
        }
        assert_eq!(m.effective_sensitivity(), 1.0 + 2f64.powi(-39));
        // Scale 6 = 3/0.5: 6·2^-40 rounds up to 2^-37.
        assert_eq!(
            GridLaplace::new(3.0, 0.5).unwrap().resolution(),
            2f64.powi(-37)
        );
        // Exactly a power of two: scale 2^40 gives r = 1.
        assert_eq!(
            GridLaplace::new(2f64.powi(40), 1.0).unwrap().resolution(),
            1.0
        );
    }

    #[test]
    fn laplace_rate_pays_for_the_rounding() {
        // The grid-unit rate is r·ε/(Δ + r) rounded down to s/2^63.
        let m = GridLaplace::new(1.0, 1.0).unwrap();
        let (t, s) = m.grid_noise().scale();
        assert_eq!(t, 1u64 << 63);
        let r = m.resolution();
        let exact = r / (1.0 + r);
        let rate = s as f64 / t as f64;
        assert!(
            rate <= exact && exact - rate <= 1.0 / t as f64,
            "{rate} vs {exact}"
        );
        // Privacy loss per grid step times the worst rounded distance stays <= ε.
        assert!(rate * (1.0 + r) / r <= 1.0);
    }

    #[test]
    fn laplace_noise_has_the_right_spread() {
        // Scale 2: E|noise| ≈ 2 (sd of |noise| ≈ 2), 20_000 draws; five standard errors
        // (false failure < 6e-7). The mean of the noise is 0 (sd 2√2).
        let m = GridLaplace::new(1.0, 0.5).unwrap();
        let mut rng = SecureRng::seeded(91);
        let n = 20_000;
        let noise: Vec<f64> = (0..n)
            .map(|_| m.release(&mut rng, 10.25).unwrap() - 10.25)
            .collect();
        let mad = noise.iter().map(|x| x.abs()).sum::<f64>() / n as f64;
        let mean = noise.iter().sum::<f64>() / n as f64;
        let se = 1.0 / (n as f64).sqrt();
        assert!((mad - 2.0).abs() < 5.0 * 2.0 * se, "{mad}");
        assert!(mean.abs() < 5.0 * 2.0 * 2f64.sqrt() * se, "{mean}");
    }

    #[test]
    fn gaussian_outputs_lie_on_the_grid_and_spread_sigma() {
        let m = GridGaussian::new(1.0, 3.0, 4).unwrap();
        // σ = 3: r is the smallest power of two >= 3·2^-30, i.e. 2^-28.
        assert_eq!(m.resolution(), 2f64.powi(-28));
        assert!(m.effective_sigma() >= 3.0 * (1.0 - 1e-15));
        let eff = m.effective_sensitivity();
        assert!(eff >= 1.0 + 2.0 * 2f64.powi(-28) && eff < 1.0 + 2.1 * 2f64.powi(-28));
        let rho = m.rho();
        assert!(
            (1.0 / 18.0..1.0 / 18.0 * (1.0 + 1e-7)).contains(&rho),
            "{rho}"
        );
        let mut rng = SecureRng::seeded(92);
        for v in VALUES {
            let out = m.release(&mut rng, v).unwrap();
            assert!(on_grid(out, m.resolution()), "{out} from {v}");
        }
        let outs = m.release_vec(&mut rng, &[0.5, -0.5, 1e250, 2.0]).unwrap();
        assert!(outs.iter().all(|&o| on_grid(o, m.resolution())));
        // Sample variance of the noise ≈ 9 with 20_000 draws; sd of a squared normal is √2·σ²;
        // five standard errors (false failure < 6e-7).
        let n = 20_000;
        let var = (0..n)
            .map(|_| (m.release(&mut rng, 1.0).unwrap() - 1.0).powi(2))
            .sum::<f64>()
            / n as f64;
        assert!(
            (var - 9.0).abs() < 5.0 * 9.0 * 2f64.sqrt() / (n as f64).sqrt(),
            "{var}"
        );
    }

    #[test]
    fn within_rho_never_exceeds_the_allowance() {
        for (sens, rho, dim) in [(1.0, 0.5, 1usize), (3.0, 0.01, 30), (0.25, 2.0, 1000)] {
            let g = GridGaussian::within_rho(sens, rho, dim).unwrap();
            assert!(g.rho() <= rho, "{} > {rho}", g.rho());
            // and not wastefully: within 1e-6 of the target
            assert!(g.rho() > rho * (1.0 - 1e-6));
        }
        assert!(GridGaussian::within_rho(1.0, 0.0, 1).is_err());
    }

    #[test]
    fn release_refuses_bad_input() {
        let l = GridLaplace::new(1.0, 1.0).unwrap();
        let g = GridGaussian::new(1.0, 1.0, 2).unwrap();
        let mut rng = SecureRng::seeded(93);
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = l.release(&mut rng, bad).unwrap_err();
            assert!(e.to_string().contains("`value`"), "{e}");
            // Not InvalidParameter: a tuner would count that as an unusable run (issue 13,
            // finding 7); e99dd64 returned InvalidParameter here.
            assert!(matches!(e, Error::Numerical { .. }), "{e:?}");
            assert!(g.release(&mut rng, bad).is_err());
            assert!(g.release_vec(&mut rng, &[0.0, bad]).is_err());
        }
        let e = g.release_vec(&mut rng, &[0.0]).unwrap_err();
        assert!(e.to_string().contains("`values`"), "{e}");
    }

    #[test]
    fn constructors_name_the_parameter() {
        for bad in [f64::NAN, f64::INFINITY, 0.0, -1.0] {
            let e = GridLaplace::new(bad, 1.0).unwrap_err();
            assert!(e.to_string().contains("`sensitivity`"), "{e}");
            let e = GridLaplace::new(1.0, bad).unwrap_err();
            assert!(e.to_string().contains("`epsilon`"), "{e}");
            let e = GridGaussian::new(1.0, bad, 1).unwrap_err();
            assert!(e.to_string().contains("`sigma`"), "{e}");
            let e = GridGaussian::new(bad, 1.0, 1).unwrap_err();
            assert!(e.to_string().contains("`sensitivity`"), "{e}");
        }
        let e = GridLaplace::new(1e300, 1e-300).unwrap_err();
        assert!(e.to_string().contains("`epsilon`"), "{e}");
        let e = GridLaplace::new(1.0, 1e-30).unwrap_err();
        assert!(e.to_string().contains("`epsilon`"), "{e}");
        // Found by proptest: ρ = (Δ/σ)²/2 would overflow f64.
        let e = GridGaussian::new(5.0681610468723383e157, 4.830745140065538e-118, 1).unwrap_err();
        assert!(e.to_string().contains("`sigma`"), "{e}");
        let e = GridGaussian::new(1.0, 1.0, 0).unwrap_err();
        assert!(e.to_string().contains("`dim`"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(super::super::testutil::proptest_config())]

        /// Constructors never panic on arbitrary f64 input, and whatever they accept releases
        /// every finite value onto its grid.
        /// The same over positive parameters spread across the whole exponent range.
        #[test]
        fn wide_range_parameters_never_panic(
            ea in -1070i32..1023,
            eb in -1070i32..1023,
            v in proptest::num::f64::NORMAL,
            seed in 0u64..1000,
        ) {
            let (a, b) = (1.37 * 2f64.powi(ea), 1.11 * 2f64.powi(eb));
            let mut rng = SecureRng::seeded(seed);
            if let Ok(m) = GridLaplace::new(a, b) {
                let out = m.release(&mut rng, v).unwrap();
                proptest::prop_assert!(out.is_infinite() || on_grid(out, m.resolution()));
            }
            if let Ok(m) = GridGaussian::new(a, b, 3) {
                let out = m.release(&mut rng, v).unwrap();
                proptest::prop_assert!(out.is_infinite() || on_grid(out, m.resolution()));
                proptest::prop_assert!(m.rho().is_finite() && m.rho() > 0.0);
            }
        }

        #[test]
        fn arbitrary_parameters_never_panic(
            a in proptest::num::f64::ANY,
            b in proptest::num::f64::ANY,
            v in proptest::num::f64::NORMAL,
            dim in 0usize..5,
            seed in 0u64..1000,
        ) {
            let mut rng = SecureRng::seeded(seed);
            if let Ok(m) = GridLaplace::new(a, b) {
                let out = m.release(&mut rng, v).unwrap();
                proptest::prop_assert!(out.is_infinite() || on_grid(out, m.resolution()));
                proptest::prop_assert!(m.effective_sensitivity() > m.sensitivity());
            }
            if let Ok(m) = GridGaussian::new(a, b, dim) {
                let out = m.release(&mut rng, v).unwrap();
                proptest::prop_assert!(out.is_infinite() || on_grid(out, m.resolution()));
                proptest::prop_assert!(m.rho().is_finite() && m.rho() > 0.0);
            }
        }
    }
}
