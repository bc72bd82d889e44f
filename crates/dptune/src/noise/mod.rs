//! Where randomness comes from: [`SecureRng`] and exact samplers.
//!
//! Rule 1 of DESIGN.md: noise is sampled exactly (integer arithmetic on uniform integers) or on
//! a power-of-two grid with the rounding charged. There is no textbook floating-point Laplace,
//! Gaussian, Gumbel or exponential sampler anywhere in dptune's private paths.
//!
//! Samplers (each a plain struct with a validating constructor and `sample(&self, rng)`):
//! [`Geometric`] (by rate), [`GeometricTrials`] (by stop probability), [`GeometricGap`] (the
//! gaps of a Poisson sample, in O(log 1/q) per gap), [`DiscreteLaplace`],
//! [`DiscreteGaussian`], [`Poisson`], [`TruncatedNegativeBinomial`] (with its logarithmic
//! case), and the secure continuous [`GridLaplace`] and [`GridGaussian`] on a power-of-two grid.

mod bernoulli;
mod gap;
mod gaussian;
mod geometric;
mod grid;
mod laplace;
mod negbin;
mod poisson;
mod rng;
#[cfg(test)]
pub(crate) mod testutil;
mod wide;

pub use bernoulli::{
    below_big, bernoulli_exp, bernoulli_exp_u64, bernoulli_rational, exact_rational,
};
pub use gap::{GeometricGap, Included};
pub use gaussian::DiscreteGaussian;
pub use geometric::{Geometric, GeometricTrials};
pub use grid::{GridGaussian, GridLaplace};
pub(crate) use laplace::discrete_laplace_wide;
pub use laplace::DiscreteLaplace;
pub use negbin::TruncatedNegativeBinomial;
pub use poisson::Poisson;
pub use rng::{SecureRng, Streams, SEEDED_NOTE};
pub use wide::bernoulli_exp_u128;
pub(crate) use wide::{geometric_rate_one, geometric_remainder};

#[cfg(test)]
mod tests {
    use rayon::prelude::*;

    use super::*;

    /// One task's draws: a few of every sampler from stream `i`.
    fn task(streams: &Streams, i: u64) -> Vec<i64> {
        let mut rng = streams.get(i);
        let laplace = DiscreteLaplace::from_scale(1 << 10, 1).unwrap();
        let gauss = DiscreteGaussian::new(9, 4).unwrap();
        let big_gauss = DiscreteGaussian::from_sigma(0.7).unwrap();
        let geo = GeometricTrials::from_success_prob(0.1).unwrap();
        let tnb = TruncatedNegativeBinomial::new(0.5, 0.2).unwrap();
        let poisson = Poisson::new(7, 2).unwrap();
        let grid = GridLaplace::new(1.0, 1.0).unwrap();
        let mut out = Vec::new();
        for _ in 0..5 {
            out.push(laplace.sample(&mut rng));
            out.push(gauss.sample(&mut rng));
            out.push(big_gauss.sample(&mut rng));
            out.push(geo.sample(&mut rng) as i64);
            out.push(tnb.sample(&mut rng) as i64);
            out.push(poisson.sample(&mut rng) as i64);
            let x = grid.release(&mut rng, 0.25).unwrap_or(f64::NAN);
            out.push((x / grid.resolution()) as i64);
        }
        out
    }

    #[test]
    fn seeded_runs_are_identical_on_one_and_many_threads() {
        let streams = SecureRng::seeded(2024).streams();
        let sequential: Vec<Vec<i64>> = (0..32).map(|i| task(&streams, i)).collect();
        for threads in [1, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let parallel: Vec<Vec<i64>> =
                pool.install(|| (0..32).into_par_iter().map(|i| task(&streams, i)).collect());
            assert_eq!(parallel, sequential, "{threads} threads");
        }
        // Different streams do differ, and a different seed gives different draws.
        assert_ne!(sequential[0], sequential[1]);
        let other = SecureRng::seeded(2025).streams();
        assert_ne!(task(&other, 0), sequential[0]);
    }

    proptest::proptest! {
        #![proptest_config(super::testutil::proptest_config())]

        /// No constructor panics on arbitrary `f64` input; the constant-cost samplers that
        /// accept a parameter draw from it without panicking.
        #[test]
        fn constructors_never_panic(
            x in proptest::num::f64::ANY,
            e in -1070i32..1023,
            y in proptest::num::f64::ANY,
            seed in 0u64..1000,
        ) {
            let mut rng = SecureRng::seeded(seed);
            for v in [x, 1.37 * 2f64.powi(e)] {
                if let Ok(d) = DiscreteLaplace::from_scale_f64(v) {
                    d.sample(&mut rng);
                }
                if let Ok(d) = DiscreteGaussian::from_sigma(v) {
                    d.sample(&mut rng);
                }
                if let Ok(d) = Geometric::from_rate_f64(v) {
                    d.sample(&mut rng);
                }
                let _ = GeometricTrials::from_success_prob(v);
                let _ = Poisson::from_mean(v);
                let _ = TruncatedNegativeBinomial::new(v, y);
                let _ = TruncatedNegativeBinomial::new(y, v);
            }
        }
    }
}
