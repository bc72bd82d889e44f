//! The FFT machinery of the loss grids: transform lengths, cached plans, the buffers of one
//! composition, the T-th power of a spectrum, and the floating-point error of a transform that
//! [`super::pmf::LossPmf`] charges (Higham 2002, Thm. 24.2). Kept apart from the distribution
//! arithmetic so that what is charged for a transform sits next to the transform.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

use super::grid_limit::GridTooLarge;
use crate::error::{Error, Result};
use crate::numeric::UNIT_ROUNDOFF as U;

/// Relative L2 error of one FFT of length `n` (Higham 2002, Thm. 24.2, with a factor 2).
///
/// Higham's bound is for radix 2: log₂(n) stages, each a √2-scaled unitary map computed with
/// relative error η. Our lengths are 2^a·3^b·5^c ([`fft_len`]); a radix-p stage is a p-point
/// DFT (√p-scaled unitary) whose computed value is off by at most γ_{p+2}·|A| componentwise,
/// i.e. γ_{p+2}·√p relative in L2: 8.7u for p = 3 and 15.7u for p = 5, against log₂(p)·η of
/// 10.6u and 15.5u that the bound already grants for the same share of log₂(n), so the factor
/// 2 (kept for rustfft's radix-4/8 and hard-coded butterflies) covers them as well.
pub(super) fn fft_error(n: usize) -> f64 {
    let eta = U + 4.0 * U / (1.0 - 4.0 * U) * (std::f64::consts::SQRT_2 + U);
    2.0 * (n.max(2) as f64).log2() * eta
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

/// Forward and inverse real FFT plans of length `n`, kept process-wide by length: a plan's
/// twiddle factors (one sine and cosine each) cost about as much as a transform, and the same
/// few lengths recur, so they are computed once (as numpy's pocketfft caches its plans).
///
/// Each length gets a fresh planner. A shared planner reuses the inner transforms it made for
/// earlier lengths, so with lengths 2^a·3^b·5^c the algorithm chosen for `n` (and the last bits
/// of every result) depended on which lengths the process had planned before: the same call
/// gave 1.8412765037893584 or 1.8412765040813235 (DP-SGD, q = 0.004, z = 1.1, T = 10⁴) after
/// different earlier calls. Both were sound (the FFT error is charged), but a result must be
/// a function of its inputs.
pub(super) fn plans(n: usize) -> (Arc<dyn RealToComplex<f64>>, Arc<dyn ComplexToReal<f64>>) {
    type Plans = (Arc<dyn RealToComplex<f64>>, Arc<dyn ComplexToReal<f64>>);
    static CACHE: OnceLock<Mutex<HashMap<usize, Plans>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    cache
        .entry(n)
        .or_insert_with(|| {
            let mut planner = RealFftPlanner::new();
            (planner.plan_fft_forward(n), planner.plan_fft_inverse(n))
        })
        .clone()
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
/// A block of negligible coefficients (the high frequencies) costs no products.
pub(super) fn power_in_place(spec: &mut [Complex<f64>], t: u64, negligible: f64) {
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
        for (k, z) in block.iter_mut().enumerate() {
            *z = Complex::new(acc_re[k], acc_im[k]);
        }
    }
}
