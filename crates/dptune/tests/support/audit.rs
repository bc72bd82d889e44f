//! Black-box epsilon audits: a lower bound on a mechanism's ε from samples alone.
//!
//! Run the mechanism `trials` times on a dataset D and `trials` times on a neighbour D′, count
//! how often each chosen event E happens, and bound both probabilities with Clopper–Pearson
//! intervals. If the mechanism is (ε, δ)-DP then P_D(E) ≤ e^ε·P_D′(E) + δ for every event and
//! both orders of the pair, so whenever the intervals hold,
//!
//! ```text
//! ε ≥ ε_lb = ln((lower P_D(E) − δ) / upper P_D′(E))
//! ```
//!
//! (and the same with D, D′ swapped and with E replaced by its complement; the bound is the
//! largest of the four, which needs no further intervals). With `pairs × events` events, every
//! interval is two-sided at level α/(2·pairs·events), so all hold at once with probability at
//! least 1 − α: an honest mechanism fails the audit (ε_lb > claimed ε) with probability at most
//! α. A mechanism that spends more than it claims fails it when the pair and event expose the
//! excess, which the tests check on deliberately wrong variants.
//!
//! This is the method of Jagielski, Ullman & Oprea (NeurIPS 2020, arXiv 2006.07709, §3) and
//! Nasr et al. (IEEE S&P 2021, arXiv 2101.04535), with exact binomial tails (no normal
//! approximation). The events and pairs are fixed in advance (from the mechanism's worst
//! case), never chosen from the samples.

#![allow(dead_code)] // each including test uses a different subset

use dptune::noise::SecureRng;
use statrs::function::gamma::ln_gamma;

/// The audits of this crate share one false-failure probability: at most `AUDITS` honest
/// audits, each at α = [`FALSE_FAILURE`]/`AUDITS` (Bonferroni).
pub const FALSE_FAILURE: f64 = 1e-6;
/// An upper bound on the number of honest audits in `tests/audit_*.rs`.
pub const AUDITS: u32 = 32;

/// The α of one audit.
pub fn alpha() -> f64 {
    FALSE_FAILURE / f64::from(AUDITS)
}

/// What the mechanism claims: (ε, δ)-DP (δ = 0 for pure DP).
#[derive(Debug, Clone, Copy)]
pub struct Claim {
    pub epsilon: f64,
    pub delta: f64,
}

impl Claim {
    pub fn pure(epsilon: f64) -> Self {
        Self {
            epsilon,
            delta: 0.0,
        }
    }
}

/// A worst-case pair of neighbouring inputs, as the two ways of running the mechanism.
pub struct Pair<'a, O> {
    pub label: String,
    pub on_d: Box<dyn FnMut(&mut SecureRng) -> O + 'a>,
    pub on_d_prime: Box<dyn FnMut(&mut SecureRng) -> O + 'a>,
}

impl<'a, O> Pair<'a, O> {
    pub fn new(
        label: impl Into<String>,
        on_d: impl FnMut(&mut SecureRng) -> O + 'a,
        on_d_prime: impl FnMut(&mut SecureRng) -> O + 'a,
    ) -> Self {
        Self {
            label: label.into(),
            on_d: Box::new(on_d),
            on_d_prime: Box::new(on_d_prime),
        }
    }
}

/// An event on the output, fixed before sampling.
pub struct Event<O> {
    pub label: String,
    pub test: Box<dyn Fn(&O) -> bool>,
}

impl<O> Event<O> {
    pub fn new(label: impl Into<String>, test: impl Fn(&O) -> bool + 'static) -> Self {
        Self {
            label: label.into(),
            test: Box::new(test),
        }
    }
}

/// The outcome of one audit.
#[derive(Debug, Clone)]
pub struct Audit {
    pub name: String,
    pub claim: Claim,
    pub trials: u64,
    pub alpha: f64,
    /// The lower bound on ε (−∞ if no event gave one).
    pub eps_lb: f64,
    /// Which pair and event gave it, with the counts on D and D′.
    pub witness: String,
}

impl Audit {
    /// ε_lb / claimed ε.
    pub fn tightness(&self) -> f64 {
        self.eps_lb.max(0.0) / self.claim.epsilon
    }

    /// One row of the tightness table (Markdown).
    pub fn row(&self) -> String {
        let claim = if self.claim.delta > 0.0 {
            format!("({:.3}, {:e})", self.claim.epsilon, self.claim.delta)
        } else {
            format!("{:.3}", self.claim.epsilon)
        };
        format!(
            "| {} | {claim} | {:.3} | {:.2} | {:e} | {} |",
            self.name,
            self.eps_lb.max(0.0),
            self.tightness(),
            self.trials as f64,
            self.witness
        )
    }

    /// Prints the row (visible with `--nocapture`) and asserts ε_lb ≤ claimed ε.
    pub fn assert_passes(&self) {
        println!("{}", self.row());
        assert!(
            self.eps_lb <= self.claim.epsilon,
            "{}: the samples prove eps >= {} > claimed {} ({})",
            self.name,
            self.eps_lb,
            self.claim.epsilon,
            self.witness
        );
    }

    /// For a deliberately wrong variant: asserts the audit catches it.
    pub fn assert_caught(&self) {
        println!("{} (wrong variant: must exceed the claim)", self.row());
        assert!(
            self.eps_lb > self.claim.epsilon,
            "{}: the wrong variant was not caught: eps_lb {} <= claimed {} ({})",
            self.name,
            self.eps_lb,
            self.claim.epsilon,
            self.witness
        );
    }
}

/// Runs the audit: `trials` runs on each side of each pair (independent streams of one
/// seeded generator), every event counted on every run.
pub fn audit<O>(
    name: &str,
    claim: Claim,
    mut pairs: Vec<Pair<'_, O>>,
    events: &[Event<O>],
    trials: u64,
    seed: u64,
) -> Audit {
    let alpha = alpha();
    let per_interval = alpha / (2.0 * (pairs.len() * events.len()) as f64);
    let streams = SecureRng::seeded(seed).streams();
    let mut best = (f64::NEG_INFINITY, String::from("none"));
    for (i, pair) in pairs.iter_mut().enumerate() {
        let count = |run: &mut dyn FnMut(&mut SecureRng) -> O, stream: u64| {
            let mut rng = streams.get(stream);
            let mut k = vec![0u64; events.len()];
            for _ in 0..trials {
                let o = run(&mut rng);
                for (kj, e) in k.iter_mut().zip(events) {
                    *kj += u64::from((e.test)(&o));
                }
            }
            k
        };
        let kd = count(&mut pair.on_d, 2 * i as u64);
        let kp = count(&mut pair.on_d_prime, 2 * i as u64 + 1);
        for (j, e) in events.iter().enumerate() {
            let lb = eps_lower_bound(kd[j], kp[j], trials, per_interval, claim.delta);
            if lb > best.0 {
                best = (
                    lb,
                    format!("{}, {}: {} vs {}", pair.label, e.label, kd[j], kp[j]),
                );
            }
        }
    }
    Audit {
        name: name.to_string(),
        claim,
        trials,
        alpha,
        eps_lb: best.0,
        witness: best.1,
    }
}

/// The largest ε lower bound from counts `kd` on D and `kp` on D′ out of `n` each, with
/// two-sided Clopper–Pearson intervals at level `alpha` each, over both orders of the pair
/// and the event and its complement.
pub fn eps_lower_bound(kd: u64, kp: u64, n: u64, alpha: f64, delta: f64) -> f64 {
    let (d_lo, d_hi) = clopper_pearson(kd, n, alpha);
    let (p_lo, p_hi) = clopper_pearson(kp, n, alpha);
    let ln_ratio = |num: f64, den: f64| {
        if num - delta <= 0.0 {
            f64::NEG_INFINITY
        } else {
            ((num - delta) / den).ln()
        }
    };
    [
        ln_ratio(d_lo, p_hi),
        ln_ratio(p_lo, d_hi),
        ln_ratio(1.0 - d_hi, 1.0 - p_lo),
        ln_ratio(1.0 - p_hi, 1.0 - d_lo),
    ]
    .into_iter()
    .fold(f64::NEG_INFINITY, f64::max)
}

/// The two-sided Clopper–Pearson interval for k successes in n trials at level `alpha`
/// (each tail α/2), from exact binomial tails; both ends are rounded outward by the bisection.
pub fn clopper_pearson(k: u64, n: u64, alpha: f64) -> (f64, f64) {
    assert!(k <= n && n > 0 && alpha > 0.0 && alpha < 1.0);
    let a = alpha / 2.0;
    // Lower end: the p with P[Bin(n, p) ≥ k] = a (0 if k = 0); the tail grows with p.
    let lower = if k == 0 {
        0.0
    } else {
        bisect(|p| upper_tail(k, n, p) <= a).0
    };
    // Upper end: the p with P[Bin(n, p) ≤ k] = a (1 if k = n); the tail shrinks with p.
    let upper = if k == n {
        1.0
    } else {
        bisect(|p| lower_tail(k, n, p) > a).1
    };
    (lower, upper)
}

/// The bracket [lo, hi] of the switch point of a predicate true near 0 and false near 1.
fn bisect(below: impl Fn(f64) -> bool) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if below(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, hi)
}

/// ln of the binomial pmf at j.
fn ln_pmf(j: u64, n: u64, p: f64) -> f64 {
    let (j, n) = (j as f64, n as f64);
    ln_gamma(n + 1.0) - ln_gamma(j + 1.0) - ln_gamma(n - j + 1.0)
        + j * p.ln()
        + (n - j) * (-p).ln_1p()
}

/// P[Bin(n, p) ≥ k]. Sums only away from the mode (where the terms fall monotonically, so a
/// start that underflows means a negligible tail), through the complement otherwise.
fn upper_tail(k: u64, n: u64, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if (k as f64) <= n as f64 * p {
        return 1.0 - lower_tail(k - 1, n, p);
    }
    let mut term = ln_pmf(k, n, p).exp();
    let mut sum = term;
    let odds = p / (1.0 - p);
    for j in k..n {
        term *= (n - j) as f64 / (j + 1) as f64 * odds;
        sum += term;
        if term <= sum * 1e-17 {
            break;
        }
    }
    sum.min(1.0)
}

/// P[Bin(n, p) ≤ k], as [`upper_tail`].
fn lower_tail(k: u64, n: u64, p: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    if (k as f64) >= n as f64 * p {
        return 1.0 - upper_tail(k + 1, n, p);
    }
    let mut term = ln_pmf(k, n, p).exp();
    let mut sum = term;
    let odds = (1.0 - p) / p;
    for j in (1..=k).rev() {
        term *= j as f64 / (n - j + 1) as f64 * odds;
        sum += term;
        if term <= sum * 1e-17 {
            break;
        }
    }
    sum.min(1.0)
}
