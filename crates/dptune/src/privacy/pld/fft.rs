//! The FFT machinery of the loss grids: transform lengths, cached plans, the buffers of one
//! composition, the T-th power of a spectrum, and the floating-point error of a transform that
//! [`super::pmf::LossPmf`] charges. Kept apart from the distribution arithmetic so that what is
//! charged for a transform sits next to the transform.
//!
//! Three bounds, each tested against double-double references in `fft_tests.rs` on every
//! family of lengths used (2^k, 3·2^k, even 2^a·3^b·5^c up to 400,000):
//!
//! * [`fft_error`]: relative L2 error of a transform (Higham 2002, Thm. 24.2), used for the
//!   inverse transforms and as one side of each Hölder pairing;
//! * [`coefficient_error`]: the error of every forward coefficient, 128·log₂(n)·u·‖x‖₁
//!   (Higham §24.1, componentwise; observed at most 0.67·log₂(n)·u·‖x‖₁);
//! * [`power_error`] and [`product_error`]: the error of a T-th power or of a product of two
//!   spectra, a posteriori from the L2 norm of the computed spectrum ([`spectrum_norm`]), so that
//!   a composed law spread over many points (small L2 norm) is charged accordingly.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

use super::grid_limit::GridTooLarge;
use crate::error::{Error, Result};
use crate::numeric::UNIT_ROUNDOFF as U;

/// Bound on |ŵ − w| for a twiddle factor w = e^{−2πik/m} as rustfft's and realfft's
/// `compute_twiddle` compute it: the angle fl(fl(−2π/m)·k) carries the rounding of π, of the
/// division and of the product, a relative error of at most γ₃ on an angle below 2π in magnitude,
/// so at most 2π·γ₃ < 19u absolute; `cos` and `sin` of the system libm are within one ulp (≤ 2u
/// for values in [−1, 1]) each, 2√2·u together. 24u covers both (realfft halves its twiddles,
/// which is exact).
const TWIDDLE_ERROR: f64 = 24.0 * U;

/// Relative L2 error of one FFT of length `n` (Higham 2002, Thm. 24.2, with a factor 2).
///
/// Higham's bound is for radix 2: log₂(n) stages, each a √2-scaled unitary map computed with
/// relative error η = μ + γ₄(√2 + μ), where μ bounds the error of a computed twiddle factor
/// ([`TWIDDLE_ERROR`]: rustfft computes each from an angle that is itself rounded, so μ is 24u,
/// not u). Our lengths are 2^a·3^b·5^c ([`fft_len`]); a radix-p stage is a p-point DFT
/// (√p-scaled unitary) whose computed value is off by at most γ_{p+2}·|A| componentwise, i.e.
/// γ_{p+2}·√p relative in L2 (plus the twiddle, μ): 8.7u for p = 3 and 15.7u for p = 5, against
/// log₂(p)·η of 47u and 69u that the bound grants for the same share of log₂(n), so the factor
/// 2 (kept for rustfft's radix-4/8 and hard-coded butterflies) covers them as well. realfft
/// transforms length n/2 and adds one pre- or post-processing pass (a twiddled 2-point
/// butterfly on each pair k, n/2 − k): one more radix-2 stage, log₂(n/2) + 1 = log₂(n).
pub(super) fn fft_error(n: usize) -> f64 {
    let mu = TWIDDLE_ERROR;
    let eta = mu + 4.0 * U / (1.0 - 4.0 * U) * (std::f64::consts::SQRT_2 + mu);
    2.0 * (n.max(2) as f64).log2() * eta
}

/// Componentwise error of a forward real FFT of length `n`, per unit of the input's L1 norm:
/// every computed coefficient is within `coefficient_error(n)·‖x‖₁` of the exact DFT.
///
/// An FFT is a chain of passes, each a sparse matrix whose entries are unit-modulus weights (a
/// twiddle times an entry of a small DFT). The absolute values of these matrices multiply out to
/// the all-ones matrix (every output is a signed sum of every input along exactly one path), so
/// if pass j computes each output within c_j·u·Σ|its inputs|, the result is within
/// (exp(Σ_j c_j·u) − 1)·‖x‖₁ ≤ (Σ_j c_j)·u·(1 + 10⁻¹²)·‖x‖₁ of the exact DFT (Higham 2002, §24.1,
/// componentwise form). Per pass of radix p: the twiddle product errs by at most μ + √2γ₂ < 27u
/// of its input ([`TWIDDLE_ERROR`], Higham Lemma 3.5), the p-point kernel by at most
/// β_p·u·Σ|inputs| with β₂ = 1, β₄ = 2, β₈ ≤ 7, β₁₆ ≤ 31 (additions of inputs bounded by
/// Σ|inputs|; the √½ and e^{iπk/8} constants of the larger kernels) and β₃ ≤ 40, β₅ ≤ 60: the
/// 3-point kernel (rustfft's `Butterfly3`) forms x₁ ± x₂, multiplies them by the computed cos
/// and sin of 2π/3 (their joint error ≤ 24u costs ≤ 24√2·u·Σ|x|) and adds, about 6u·Σ|x| of
/// roundings; the 5-point kernel does the same with two twiddles. Composite kernels (6, 9, 12,
/// ...) are chains of these with an internal twiddle pass. Per level of log₂ this is at most
/// 43u (radix 3 or 9: (27 + 40)/log₂3), 29u for powers of two; we take 64u. rustfft's
/// hard-coded butterflies up to 512 points and its mixed-radix passes (2, 3, 4, 5, 6, 8, 9, 12,
/// 16) are chains of such kernels (fused multiply-adds, where its AVX code uses them, round
/// less); for 2^a·3^b·5^c lengths its planners never choose Bluestein's or Rader's algorithm
/// (planned only for a prime factor of 7 or more that no butterfly covers), nor does any other
/// step multiply by weights larger than 1.
/// realfft transforms z_m = x_{2m} + i·x_{2m+1} (‖z‖₁ ≤ ‖x‖₁) with a complex FFT of length
/// n/2 and post-processes each pair (k, n/2 − k): every output combines two inner coefficients
/// with weights of modulus at most 1 each (so at most doubling their error) and adds at most
/// about 32u·‖x‖₁ of its own rounding (the sum and difference, and the halved twiddle's 12u on
/// terms of modulus up to 2‖x‖₁), inside the 64u of one more pass. Hence
/// 2·64·log₂(n/2)·u + 64u ≤ 128·log₂(n)·u. Observed (`fft_tests.rs`, double-double reference,
/// all three families of lengths): at most 0.67·log₂(n)·u·‖x‖₁.
pub(super) fn coefficient_error(n: usize) -> f64 {
    128.0 * (n.max(2) as f64).log2() * U
}

/// Relative error of one complex product as `Complex` and [`power_in_place`] compute it
/// (re = a·c − b·d, im = a·d + b·c): at most √2γ₂ (Higham 2002, Lemma 3.5; Rust contracts no
/// product into an FMA), rounded up.
const PRODUCT_ERROR: f64 = std::f64::consts::SQRT_2 * 2.0 * U / (1.0 - 2.0 * U) * (1.0 + 2.0 * U);

/// Relative error of z^t computed by [`power_in_place`] (repeated squaring): the factors
/// (1 + δ), |δ| ≤ [`PRODUCT_ERROR`], of the t − 1 products multiply out to at most
/// (1 + √2γ₂)^{t−1} − 1 ≤ exp((t − 1)·√2γ₂) − 1 (each squaring doubles the relative error it
/// receives, and the exponents add up to the number of products). Rounded up by a relative 16u.
pub(super) fn power_rounding(t: u64) -> f64 {
    ((t - 1) as f64 * PRODUCT_ERROR).exp_m1() * (1.0 + 16.0 * U)
}

/// An absolute allowance per coefficient for what the relative error model of
/// [`power_rounding`] does not cover: a coefficient set to 0 by [`power_in_place`]
/// (|z|^t < e^{−800}) and products that underflow (each errs by at most 2⁻¹⁰⁷⁵, amplified by at
/// most 2 per later squaring of a value of modulus ≤ 1: at most 128 products, 2^64 amplification,
/// below 10⁻³⁰⁰ together).
pub(super) const POWER_FLOOR: f64 = 2e-300;

/// Σ|z|² over `half`, four partial sums at a time (so that the additions overlap in the
/// pipeline; any order of summation is within γ of the exact sum).
fn sum_sqr(half: &[Complex<f64>]) -> f64 {
    let mut lanes = [0.0; 4];
    let chunks = half.chunks_exact(4);
    let rest: f64 = chunks.remainder().iter().map(|z| z.norm_sqr()).sum();
    for c in chunks {
        for (l, z) in lanes.iter_mut().zip(c) {
            *l += z.norm_sqr();
        }
    }
    lanes.iter().sum::<f64>() + rest
}

/// The L2 norm of the full spectrum (n coefficients, Hermitian) whose first n/2 + 1 coefficients
/// realfft returns for an even length n, rounded up: the first and last coefficients appear once,
/// the others twice.
pub(super) fn spectrum_norm(half: &[Complex<f64>]) -> f64 {
    spectrum_norm_from(sum_sqr(half), half)
}

/// [`spectrum_norm`] from `sum`, Σ|z|² over `half` as computed in any order: 2·sum minus the
/// first and last |z|², plus γ_{2m+8}·2·sum (m = half.len()), which covers the rounding of the
/// m squared moduli, of their sum and of the two subtractions (Higham eq. (3.5)); a relative
/// 4u more for the square root.
pub(super) fn spectrum_norm_from(sum: f64, half: &[Complex<f64>]) -> f64 {
    let twice = 2.0 * sum;
    let ends = match half {
        [] | [_] => sum,
        [first, .., last] => first.norm_sqr() + last.norm_sqr(),
    };
    let full = twice - ends + crate::numeric::gamma(2 * half.len() + 8) * twice;
    full.max(0.0).sqrt() * (1.0 + 4.0 * U)
}

/// The FFT length for `width` points: the smallest even 2^a·3^b·5^c ≥ `width`. Lengths of this
/// form are as fast per point as powers of two, and much nearer the width: a power of two
/// wastes up to half the transform, and at 2^19 rustfft's transposes also stride through the
/// cache badly (measured: two real transforms of 400,000 points took about half the time of
/// two of 524,288).
pub(super) fn fft_len(width: usize) -> usize {
    let width = width.max(2);
    let mut best = width.next_power_of_two();
    let mut p5 = 1usize;
    while p5 < best {
        let mut p35 = p5;
        while p35 < best {
            // The smallest p35·2^k ≥ width with k ≥ 1 (the length must be even).
            let mut m = 2 * p35;
            while m < width {
                m *= 2;
            }
            best = best.min(m);
            p35 *= 3;
        }
        p5 *= 5;
    }
    best
}

/// The smallest 2^k or 3·2^k (k ≥ 1) that is at least `m`: the lengths rustfft transforms
/// fastest per point (chains of radix-8, 12 and 16 passes on its AVX butterflies; measured
/// 4.9 ns per point for a forward and an inverse real transform near 400,000 points, against
/// 5.0–5.8 ns for lengths with factors of 5, which take radix-5 passes). Used only where a
/// transform may be shorter than its window
/// ([`LossPmf::power`](super::pmf::LossPmf::power)), to pick a faster length than
/// [`fft_len`]'s nearest one.
pub(super) fn fast_len(m: usize) -> usize {
    let two = m.max(2).next_power_of_two();
    let three = 3 * m.div_ceil(3).max(2).next_power_of_two();
    two.min(three)
}

/// A forward and an inverse real FFT plan of one length.
type Plans = (Arc<dyn RealToComplex<f64>>, Arc<dyn ComplexToReal<f64>>);

/// The most transform points whose plans [`plans`] keeps at once, summed over the cached
/// lengths. A plan holds O(n) twiddle factors (tens of bytes per point for the pair), so an
/// unbounded cache grew with every new length a process met: a noise calibration that probed
/// noise multipliers near the grid limit kept about 1 GB per probe and peaked at 13 GB
/// (`dptune account calibrate-dpsgd --sampling-rate 0.01 --steps 1000 --epsilon 1000
/// --delta 0.5`). 2²² points hold the lengths of every default-grid golden case at once.
const PLAN_CACHE_POINTS: usize = 1 << 22;

/// Plans kept by length, the oldest evicted first once their lengths sum past `budget`; a
/// length above the budget is planned and not kept.
struct PlanCache {
    budget: usize,
    plans: HashMap<usize, Plans>,
    order: VecDeque<usize>,
    points: usize,
}

impl PlanCache {
    fn new(budget: usize) -> Self {
        Self {
            budget,
            plans: HashMap::new(),
            order: VecDeque::new(),
            points: 0,
        }
    }

    /// The plans of length `n`, planned by a fresh planner if not kept (see [`plans`]).
    fn get(&mut self, n: usize) -> Plans {
        if let Some(p) = self.plans.get(&n) {
            return p.clone();
        }
        let mut planner = RealFftPlanner::new();
        let made: Plans = (planner.plan_fft_forward(n), planner.plan_fft_inverse(n));
        if n <= self.budget {
            while self.points + n > self.budget {
                let Some(old) = self.order.pop_front() else {
                    break;
                };
                self.plans.remove(&old);
                self.points -= old;
            }
            self.plans.insert(n, made.clone());
            self.order.push_back(n);
            self.points += n;
        }
        made
    }
}

/// Forward and inverse real FFT plans of length `n`, kept process-wide by length (up to
/// [`PLAN_CACHE_POINTS`] points in all): a plan's twiddle factors (one sine and cosine each)
/// cost about as much as a transform, and the same few lengths recur, so they are computed
/// once (as numpy's pocketfft caches its plans).
///
/// Each length gets a fresh planner. A shared planner reuses the inner transforms it made for
/// earlier lengths, so with lengths 2^a·3^b·5^c the algorithm chosen for `n` (and the last bits
/// of every result) depended on which lengths the process had planned before: the same call
/// gave 1.8412765037893584 or 1.8412765040813235 (DP-SGD, q = 0.004, z = 1.1, T = 10⁴) after
/// different earlier calls. Both were sound (the FFT error is charged), but a result must be
/// a function of its inputs; with a fresh planner per length, evicting a plan cannot change
/// a result either.
pub(super) fn plans(n: usize) -> Plans {
    static CACHE: OnceLock<Mutex<PlanCache>> = OnceLock::new();
    CACHE
        .get_or_init(|| Mutex::new(PlanCache::new(PLAN_CACHE_POINTS)))
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get(n)
}

/// An empty FFT buffer with room for `len` points, or the refusal (`len` is checked against
/// [`MAX_POINTS`](super::grid_limit::MAX_POINTS) first, and an allocation the system refuses
/// is a refusal too, not an abort).
/// Not zeroed here: [`Ffts::forward`] writes every point.
pub(super) fn buffer(len: usize) -> std::result::Result<Vec<f64>, GridTooLarge> {
    let too_large = GridTooLarge { points: len as f64 };
    GridTooLarge::check(len as f64)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| too_large)?;
    Ok(v)
}

/// L1 error per unit of L1 mass of [`normalised`]: 1/n and each product round once.
pub(super) const SCALE_ERROR: f64 = 2.0 * U * (1.0 + U);

/// A point of an inverse transform of length `n`, normalised, with its rounding noise below zero
/// clamped (which moves no point farther from its exact, non-negative value).
pub(super) fn normalised(n: usize) -> impl Fn(&f64) -> f64 {
    let s = 1.0 / n as f64;
    move |x| (x * s).max(0.0)
}

/// [`normalised`] in place, in one pass.
pub(super) fn scale(v: &mut [f64], n: usize) {
    let norm = normalised(n);
    for x in v {
        *x = norm(x);
    }
}

pub(super) fn fft_failed(e: impl std::fmt::Display) -> Error {
    Error::Numerical {
        what: "privacy loss distribution FFT",
        reason: e.to_string(),
    }
}

/// The buffers of one composition: a real buffer of length n (the input of every forward
/// transform, then the output of the inverse one) and one scratch shared by both plans, so a
/// composition allocates (and the system zeroes) as little as it can.
pub(super) struct Ffts<'a> {
    fwd: &'a dyn RealToComplex<f64>,
    inv: &'a dyn ComplexToReal<f64>,
    buf: Vec<f64>,
    n: usize,
    scratch: Vec<Complex<f64>>,
}

impl<'a> Ffts<'a> {
    pub(super) fn new(
        fwd: &'a dyn RealToComplex<f64>,
        inv: &'a dyn ComplexToReal<f64>,
        n: usize,
    ) -> std::result::Result<Self, GridTooLarge> {
        let buf = buffer(n)?;
        let scratch = vec![Complex::default(); fwd.get_scratch_len().max(inv.get_scratch_len())];
        Ok(Self {
            fwd,
            inv,
            buf,
            n,
            scratch,
        })
    }

    /// The spectrum of `v`, zero-padded to n.
    pub(super) fn forward(&mut self, v: &[f64], out: &mut [Complex<f64>]) -> Result<()> {
        self.buf.clear();
        self.buf.extend_from_slice(v);
        self.buf.resize(self.n, 0.0);
        self.fwd
            .process_with_scratch(&mut self.buf, out, &mut self.scratch)
            .map_err(fft_failed)
    }

    /// Inverse real FFT of `spec` (destroyed), not normalised (the caller normalises the part
    /// it keeps); the buffer is handed out as the result.
    pub(super) fn inverse(mut self, spec: &mut [Complex<f64>]) -> Result<Vec<f64>> {
        // The imaginary parts of the first and last coefficients are zero in exact arithmetic.
        spec[0].im = 0.0;
        if let Some(last) = spec.last_mut() {
            last.im = 0.0;
        }
        self.inv
            .process_with_scratch(spec, &mut self.buf, &mut self.scratch)
            .map_err(fft_failed)?;
        Ok(self.buf)
    }
}

/// Every z of `spec` raised to the power t ≥ 1 by repeated squaring; exactly 0 when |z|² <
/// `negligible` = e^{−1600/t}, i.e. |z|^t < e^{−800} (below the smallest subnormal, so the
/// rounding charge 2tU already covers it). The product starts at the square z^{2^k} of the
/// lowest set bit of t instead of at 1 (the same numbers: a product by 1 is exact). Four
/// coefficients at a time, real and imaginary parts in separate arrays, so that the four
/// independent chains of products overlap in the pipeline and run two to a vector
/// instruction; each product rounds as `Complex`'s does (re = a·c − b·d, im = a·d + b·c).
/// (Eight at a time needs more than the sixteen vector registers of x86-64 and spills:
/// measured 28 % slower at t = 20, 12 % at t ≥ 300, with bit-identical results.)
/// A block of negligible coefficients (the high frequencies) costs no products. Returns Σ|z^t|²
/// over the results, summed on the way (for [`spectrum_norm_from`]: a separate pass over the
/// spectrum cost 3 % of a Laplace T = 20 call).
pub(super) fn power_in_place(spec: &mut [Complex<f64>], t: u64, negligible: f64) -> f64 {
    const LANES: usize = 4;
    type Lanes = [f64; LANES];
    fn times(re: &mut Lanes, im: &mut Lanes, by_re: &Lanes, by_im: &Lanes) {
        for k in 0..LANES {
            let (a, b, c, d) = (re[k], im[k], by_re[k], by_im[k]);
            re[k] = a * c - b * d;
            im[k] = a * d + b * c;
        }
    }
    let zero = Complex::new(0.0, 0.0);
    let mut sums = [0.0; LANES];
    for block in spec.chunks_mut(LANES) {
        let (mut re, mut im) = ([0.0; LANES], [0.0; LANES]);
        let mut any = false;
        for (k, z) in block.iter().enumerate() {
            if z.norm_sqr() >= negligible {
                (re[k], im[k]) = (z.re, z.im);
                any = true;
            }
        }
        if !any {
            block.fill(zero);
            continue;
        }
        let square = |re: &mut Lanes, im: &mut Lanes| {
            let (r, i) = (*re, *im);
            times(re, im, &r, &i);
        };
        for _ in 0..t.trailing_zeros() {
            square(&mut re, &mut im);
        }
        let (mut acc_re, mut acc_im) = (re, im);
        // (t = 2^63 shifts out every bit.)
        let mut t = t.checked_shr(t.trailing_zeros() + 1).unwrap_or(0);
        while t > 0 {
            square(&mut re, &mut im);
            if t & 1 == 1 {
                times(&mut acc_re, &mut acc_im, &re, &im);
            }
            t >>= 1;
        }
        for k in 0..LANES {
            sums[k] += acc_re[k] * acc_re[k] + acc_im[k] * acc_im[k];
        }
        for (k, z) in block.iter_mut().enumerate() {
            *z = Complex::new(acc_re[k], acc_im[k]);
        }
    }
    sums.iter().sum()
}

/// L2 bound, over the n circular points of the normalised result, on the floating-point error
/// of a T-fold self-composition by [`power_in_place`] between a forward and an inverse real FFT
/// of length `n`: the computed result against the exact T-fold circular convolution of the
/// stored vector x (L1 norm at most `x_l1`, L2 norm at most `x_l2`), given `z`, an upper bound on
/// the L2 norm of the computed powered spectrum (all n coefficients, [`spectrum_norm`]).
///
/// Write X for the exact spectrum, Y = X + E for the computed one, |E_k| ≤ e =
/// [`coefficient_error`]·‖x‖₁, and m_k = |Y_k| + e ≥ max(|X_k|, |Y_k|). The spectral error of
/// the power is at most, per coefficient, T·|E_k|·m_k^{T−1} (from a^T − b^T = (a − b)·Σ a^j
/// b^{T−1−j}) plus ρ·|Y_k|^T ([`power_rounding`]) plus [`POWER_FLOOR`]. In L2 over k:
///
/// * T·e·‖m^{T−1}‖₂ = T·e·‖m‖_{2T−2}^{T−1} ≤ T·e·n^{1/(2T)}·‖m‖_{2T}^{T−1} (‖v‖_p ≤
///   n^{1/p − 1/q}‖v‖_q for p < q), and ‖m‖_{2T} ≤ ‖Y‖_{2T} + n^{1/(2T)}·e (Minkowski), with
///   ‖Y‖_{2T}^T = ‖Y^T‖₂ ≤ (z + √n·floor)/(1 − ρ) =: y, since the computed |Z_k| ≥ (1 − ρ)|Y_k|^T −
///   floor. This a-posteriori bound uses the decay of the powered spectrum: it is about
///   √(number of frequencies the composed law uses) where Higham's L2 bound on E (Thm. 24.2)
///   with max(|X_k|, |Y_k|) ≤ ‖x‖₁ + e gives T·ef·√n·‖x‖₂·max(1, ‖x‖₁ + e)^{T−1}; the smaller
///   of the two is taken (both hold);
/// * ρ·‖Y^T‖₂ ≤ ρ·y, and √n·floor.
///
/// The inverse transform of the computed spectrum Z errs by at most ef·√n·‖Z‖₂ (Higham, Thm.
/// 24.2, [`fft_error`]; zeroing the imaginary parts of the first and last coefficients only
/// brings them nearer the real exact ones), and the inverse of a spectral error S has L2 norm
/// √n·‖S‖₂ (Parseval); after the normalisation by 1/n the result is within
/// (spectral + ef·z)/√n. The powers and roots are computed by `powf`, whose relative error the
/// exponent T − 1 amplifies: the result is raised by a relative exp(16(T + 16)u), which covers a
/// relative error of 16u in each base.
pub(super) fn power_error(n: usize, t: u64, x_l1: f64, x_l2: f64, z: f64) -> f64 {
    let (nf, tf) = (n as f64, t as f64);
    let sn = nf.sqrt();
    let (ef, e, rho) = (fft_error(n), coefficient_error(n) * x_l1, power_rounding(t));
    if rho >= 1.0 {
        // t ≳ 2.2e15: the relative model gives no bound (and 1 − ρ is not positive).
        return f64::INFINITY;
    }
    let y = (z + sn * POWER_FLOOR) / (1.0 - rho);
    let r = (nf.ln() / (2.0 * tf)).exp();
    let componentwise = tf * e * r * (y.powf(1.0 / tf) + r * e).powf(tf - 1.0);
    let higham = tf * ef * sn * x_l2 * ((tf - 1.0) * (x_l1 + e).max(1.0).ln()).exp();
    let spectral = componentwise.min(higham) + rho * y + sn * POWER_FLOOR;
    let margin = (16.0 * (tf + 16.0) * U).exp();
    (spectral + ef * z) / sn * margin
}

#[cfg(test)]
#[path = "fft_tests.rs"]
mod tests;

/// L2 bound, over the n points of the normalised result, on the floating-point error of a
/// linear convolution by FFT ([`super::pmf::LossPmf::compose`]): two forward transforms of
/// length `n` of vectors a and b (L1 and L2 norms at most `a` and `b`), their product, an
/// inverse transform; `p` an upper bound on the L2 norm of the computed product (all n
/// coefficients, [`spectrum_norm`]). With A, B the exact spectra and ΔA, ΔB the errors of the
/// computed ones, ÂB̂ − AB = ΔA·B + A·ΔB + ΔA·ΔB, and each term is bounded in L2 by whichever
/// of two Hölder pairings is smaller: ‖ΔA‖₂·max|B| ≤ ef·√n·‖a‖₂·‖b‖₁ (Higham's L2 bound,
/// [`fft_error`]) or ‖ΔA‖_∞·‖B‖₂ ≤ e_a·√n·‖b‖₂ (the componentwise bound e_a =
/// [`coefficient_error`]·‖a‖₁, and Parseval), and ‖ΔA·ΔB‖₂ ≤ e_a·ef·√n·‖b‖₂. The rounding of the
/// product is at most [`PRODUCT_ERROR`]·|ÂB̂| ≤ PRODUCT_ERROR/(1 − PRODUCT_ERROR)·|P̂| per
/// coefficient, the inverse transform errs by at most ef·√n·‖P̂‖₂, and the inverse of a
/// spectral error S has L2 norm √n·‖S‖₂; after the normalisation by 1/n every term loses its √n.
/// Rounded up by a relative 64u (a dozen operations).
pub(super) fn product_error(n: usize, a: (f64, f64), b: (f64, f64), p: f64) -> f64 {
    let (ef, c) = (fft_error(n), coefficient_error(n));
    let (ea, eb) = (c * a.0, c * b.0);
    let forward = (ef * a.1 * b.0).min(ea * b.1) + (ef * a.0 * b.1).min(eb * a.1) + ea * ef * b.1;
    let rounding = (ef + PRODUCT_ERROR / (1.0 - PRODUCT_ERROR)) * p / (n as f64).sqrt();
    (forward + rounding) * (1.0 + 64.0 * U)
}
