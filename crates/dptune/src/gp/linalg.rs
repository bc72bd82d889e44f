//! Dense linear algebra for the GP module: the RBF kernel matrix and a recursive, gemm-based
//! Cholesky factorisation that also returns the inverse factor.
//!
//! nalgebra's own Cholesky is unblocked (about 5 GFlop/s on this machine for n = 1000); splitting
//! the matrix in halves and doing the off-diagonal work with matrix products moves almost all
//! flops into nalgebra's gemm (matrixmultiply), several times faster. The base case is nalgebra's
//! Cholesky.

use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};
use crate::numeric::{abs_sum_up, gamma, norm_up, MIN_SUBNORMAL};
use crate::numeric::{add_up, mul_up};
use crate::resources::try_filled;

/// Below this size the recursion stops and nalgebra's unblocked Cholesky takes over.
const BASE: usize = 96;

/// Squared Euclidean distances between the rows of `a` (n×p) and the rows of `b` (m×p).
pub(crate) fn sq_dists(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
    let mut out = DMatrix::zeros(a.nrows(), b.nrows());
    fill_sq_dists(a, b, &mut out);
    out
}

/// [`sq_dists`] in memory the system grants, or an error naming `data`: the first n × n matrix
/// of a large training set must be a refusal, not an abort.
pub(crate) fn try_sq_dists(a: &DMatrix<f64>, b: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let (n, m) = (a.nrows(), b.nrows());
    let shown = || format!("{n} x {m} distances");
    let len = n
        .checked_mul(m)
        .ok_or_else(|| Error::invalid("data", shown(), "the distance matrix overflows"))?;
    let mut out = DMatrix::from_vec(n, m, try_filled(len, 0.0, "data", shown())?);
    fill_sq_dists(a, b, &mut out);
    Ok(out)
}

fn fill_sq_dists(a: &DMatrix<f64>, b: &DMatrix<f64>, out: &mut DMatrix<f64>) {
    for j in 0..b.nrows() {
        for i in 0..a.nrows() {
            let mut s = 0.0;
            for k in 0..a.ncols() {
                let d = a[(i, k)] - b[(j, k)];
                s += d * d;
            }
            out[(i, j)] = s;
        }
    }
}

/// The RBF kernel matrix σ_f²·exp(−‖a_i − b_j‖²/(2ℓ²)) between the rows of `a` and `b`.
pub(crate) fn rbf(
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    lengthscale: f64,
    signal_var: f64,
) -> DMatrix<f64> {
    rbf_from_sq(&sq_dists(a, b), lengthscale, signal_var)
}

/// The RBF kernel matrix from precomputed squared distances (shared across a lengthscale grid).
pub(crate) fn rbf_from_sq(d2: &DMatrix<f64>, lengthscale: f64, signal_var: f64) -> DMatrix<f64> {
    let scale = -0.5 / (lengthscale * lengthscale);
    d2.map(|d| signal_var * (d * scale).exp())
}

/// A lower Cholesky factor `l` of an SPD matrix and its inverse `l_inv` (both lower triangular).
pub(crate) struct CholInv {
    /// L with L·Lᵀ = A.
    pub l: DMatrix<f64>,
    /// L⁻¹.
    pub l_inv: DMatrix<f64>,
}

impl CholInv {
    /// A⁻¹ = L⁻ᵀ·L⁻¹ (an explicit transpose so that the product goes through gemm; nalgebra's
    /// `tr_mul` does not).
    pub fn inverse(&self) -> DMatrix<f64> {
        self.l_inv.transpose() * &self.l_inv
    }

    /// A⁻¹·b.
    pub fn solve_vec(&self, b: &DVector<f64>) -> DVector<f64> {
        self.l_inv.tr_mul(&(&self.l_inv * b))
    }

    /// log det A = 2·Σ log L_ii.
    pub fn log_det(&self) -> f64 {
        2.0 * self.l.diagonal().iter().map(|x| x.ln()).sum::<f64>()
    }
}

/// Cholesky factor and inverse factor of the symmetric positive-definite matrix `a`. A matrix that
/// is not numerically positive definite is a [`Error::Numerical`] naming `what`.
pub(crate) fn chol_inv(a: &DMatrix<f64>, what: &'static str) -> Result<CholInv> {
    let n = a.nrows();
    if n != a.ncols() || n == 0 {
        return Err(Error::Numerical {
            what,
            reason: format!(
                "expected a non-empty square matrix, got {}×{}",
                n,
                a.ncols()
            ),
        });
    }
    if a.iter().any(|v| !v.is_finite()) {
        return Err(Error::Numerical {
            what,
            reason: "matrix has non-finite entries".into(),
        });
    }
    // A pivot below 1e-13 of the largest diagonal entry means the matrix is singular to working
    // precision: refuse rather than return a factor whose inverse is dominated by rounding.
    let max_diag = a.diagonal().iter().fold(0.0f64, |m, v| m.max(*v));
    let (l, l_inv) = chol_rec(a, 1e-13 * max_diag).ok_or_else(|| Error::Numerical {
        what,
        reason: "matrix is singular or not positive definite (Cholesky failed); \
                 a larger noise variance or fewer duplicate inputs helps"
            .into(),
    })?;
    Ok(CholInv { l, l_inv })
}

fn chol_rec(a: &DMatrix<f64>, min_pivot: f64) -> Option<(DMatrix<f64>, DMatrix<f64>)> {
    let n = a.nrows();
    if n <= BASE {
        let ch = a.clone().cholesky()?;
        let l = ch.l();
        if l.diagonal()
            .iter()
            .any(|d| !(d.is_finite() && *d > 0.0 && d * d >= min_pivot))
        {
            return None;
        }
        let l_inv = l.solve_lower_triangular(&DMatrix::identity(n, n))?;
        return Some((l, l_inv));
    }
    let n1 = n / 2;
    let n2 = n - n1;
    let (l11, l11i) = chol_rec(&a.view((0, 0), (n1, n1)).into_owned(), min_pivot)?;
    // L21 = A21·L11⁻ᵀ
    let l21 = a.view((n1, 0), (n2, n1)) * l11i.transpose();
    // S = A22 − L21·L21ᵀ
    let mut s = a.view((n1, n1), (n2, n2)).into_owned();
    s.gemm(-1.0, &l21, &l21.transpose(), 1.0);
    let (l22, l22i) = chol_rec(&s, min_pivot)?;
    // (L⁻¹)21 = −L22⁻¹·L21·L11⁻¹
    let l21i = -(&l22i * (&l21 * &l11i));
    let mut l = DMatrix::zeros(n, n);
    let mut li = DMatrix::zeros(n, n);
    l.view_mut((0, 0), (n1, n1)).copy_from(&l11);
    l.view_mut((n1, 0), (n2, n1)).copy_from(&l21);
    l.view_mut((n1, n1), (n2, n2)).copy_from(&l22);
    li.view_mut((0, 0), (n1, n1)).copy_from(&l11i);
    li.view_mut((n1, 0), (n2, n1)).copy_from(&l21i);
    li.view_mut((n1, n1), (n2, n2)).copy_from(&l22i);
    Some((l, li))
}

/// The inverse of the symmetric positive-definite matrix `a` by recursive block inversion with
/// Schur complements (about 4n³/3 flops, almost all in gemm), for the CV scores where the whole
/// inverse is needed. Singular matrices are a [`Error::Numerical`] naming `what`.
pub(crate) fn spd_inverse(a: &DMatrix<f64>, what: &'static str) -> Result<DMatrix<f64>> {
    if a.nrows() <= BASE {
        return Ok(chol_inv(a, what)?.inverse());
    }
    if a.iter().any(|v| !v.is_finite()) {
        return Err(Error::Numerical {
            what,
            reason: "matrix has non-finite entries".into(),
        });
    }
    let n = a.nrows();
    let n1 = n / 2;
    let n2 = n - n1;
    let p_inv = spd_inverse(&a.view((0, 0), (n1, n1)).into_owned(), what)?;
    let q = a.view((0, n1), (n1, n2));
    let pq = &p_inv * q; // P⁻¹Q
    let mut s = a.view((n1, n1), (n2, n2)).into_owned();
    s.gemm(-1.0, &q.transpose(), &pq, 1.0); // S = R − QᵀP⁻¹Q
    let s = (&s + s.transpose()) * 0.5;
    let s_inv = spd_inverse(&s, what)?;
    let top_right = -(&pq * &s_inv); // −P⁻¹QS⁻¹
    let mut top_left = p_inv;
    top_left.gemm(-1.0, &top_right, &pq.transpose(), 1.0); // P⁻¹ + P⁻¹QS⁻¹QᵀP⁻¹
    let mut out = DMatrix::zeros(n, n);
    out.view_mut((0, 0), (n1, n1)).copy_from(&top_left);
    out.view_mut((0, n1), (n1, n2)).copy_from(&top_right);
    out.view_mut((n1, 0), (n2, n1))
        .copy_from(&top_right.transpose());
    out.view_mut((n1, n1), (n2, n2)).copy_from(&s_inv);
    Ok(out)
}

/// An orthonormal basis (n × r) of the numerical range of the PSD matrix `g`, by Cholesky with
/// complete pivoting stopped when every residual diagonal entry is at most `tol2`·max diag(g),
/// followed by a thin QR. Cost O(n²r): far cheaper than an eigendecomposition when r ≪ n.
pub(crate) fn range_basis(g: &DMatrix<f64>, tol2: f64) -> DMatrix<f64> {
    let n = g.nrows();
    let mut diag: Vec<f64> = g.diagonal().iter().cloned().collect();
    let top = diag.iter().cloned().fold(0.0, f64::max);
    let mut cols: Vec<DVector<f64>> = Vec::new();
    let mut pivots: Vec<usize> = Vec::new();
    while cols.len() < n {
        let (p, &dp) = diag
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap_or((0, &0.0));
        if dp.is_nan() || dp <= tol2 * top || pivots.contains(&p) {
            break;
        }
        let mut v = g.column(p).into_owned();
        for c in &cols {
            v.axpy(-c[p], c, 1.0);
        }
        v /= dp.sqrt();
        for (d, x) in diag.iter_mut().zip(v.iter()) {
            *d -= x * x;
        }
        diag[p] = 0.0;
        pivots.push(p);
        cols.push(v);
    }
    if cols.is_empty() {
        return DMatrix::zeros(n, 0);
    }
    DMatrix::from_columns(&cols).qr().q()
}

/// fl(M·y) for private inputs with |y_j| ≤ h, and for each output coordinate a bound on its
/// floating-point error that depends on M and h only (public values):
/// |fl(M·y)_i − (M·y)_i| ≤ γ_N·h·Σ_j|M_ij| + N·2⁻¹⁰⁷⁴ (Higham 2002, eq. (3.5): a dot product of
/// length N in any summation order, gemv included; the last term covers products that
/// underflow). Neighbouring computed values therefore differ by at most the exact map's
/// sensitivity plus twice this bound, which the GP releases and scores charge.
pub(crate) fn bounded_matvec(
    m: &DMatrix<f64>,
    y: &DVector<f64>,
    h: f64,
) -> (DVector<f64>, Vec<f64>) {
    let n = m.ncols();
    let g = gamma(n);
    let tiny = n as f64 * MIN_SUBNORMAL;
    let err = m
        .row_iter()
        .map(|row| add_up(mul_up(g, mul_up(h, abs_sum_up(row.iter().copied()))), tiny))
        .collect();
    (m * y, err)
}

/// max_j ‖M_{:,j}‖₂, rounded up (each column norm by [`norm_up`]).
pub(crate) fn max_col_norm_up(m: &DMatrix<f64>) -> f64 {
    m.column_iter()
        .map(|c| norm_up(c.iter().copied()))
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recursive_cholesky_matches_definition() {
        let n = 250;
        let x = DMatrix::from_fn(n, 1, |i, _| (i as f64 * 0.37).sin() * 3.0);
        let mut k = rbf(&x, &x, 0.7, 2.0);
        for i in 0..n {
            k[(i, i)] += 0.3;
        }
        let c = chol_inv(&k, "test").unwrap();
        let err = (&c.l * c.l.transpose() - &k).amax();
        assert!(err < 1e-10, "{err}");
        let err = (&c.l * &c.l_inv - DMatrix::identity(n, n)).amax();
        assert!(err < 1e-8, "{err}");
        let err = (&k * c.inverse() - DMatrix::identity(n, n)).amax();
        assert!(err < 1e-8, "{err}");
        let ld = k
            .clone()
            .cholesky()
            .unwrap()
            .l()
            .diagonal()
            .map(|d| d.ln())
            .sum()
            * 2.0;
        assert!((c.log_det() - ld).abs() < 1e-8);
    }

    #[test]
    fn schur_inverse_and_range_basis() {
        let n = 300;
        let x = DMatrix::from_fn(n, 1, |i, _| (i as f64 * 0.61).cos() * 3.0);
        let mut k = rbf(&x, &x, 0.4, 1.5);
        for i in 0..n {
            k[(i, i)] += 0.2;
        }
        let inv = spd_inverse(&k, "test").unwrap();
        let err = (&k * &inv - DMatrix::identity(n, n)).amax();
        assert!(err < 1e-8, "{err}");
        // A rank-3 PSD matrix: the basis has 3 orthonormal columns spanning its range.
        let b = DMatrix::from_fn(40, 3, |i, j| ((i * (j + 2)) as f64).sin());
        let g = &b * b.transpose();
        let q = range_basis(&g, 1e-14);
        assert_eq!(q.ncols(), 3);
        let proj = &q * (q.transpose() * &b);
        assert!((proj - &b).amax() < 1e-8);
        assert_eq!(range_basis(&DMatrix::zeros(4, 4), 1e-14).ncols(), 0);
    }

    #[test]
    fn singular_matrix_is_a_numerical_error() {
        let x = DMatrix::from_row_slice(3, 1, &[0.0, 0.0, 1.0]);
        let k = rbf(&x, &x, 1.0, 1.0);
        let e = chol_inv(&k, "kernel matrix").err().unwrap();
        assert!(matches!(e, Error::Numerical { .. }), "{e}");
        let nan = DMatrix::from_element(2, 2, f64::NAN);
        assert!(chol_inv(&nan, "kernel matrix").is_err());
    }

    /// Catastrophic cancellation in a private linear map: rows of ±10^8 entries that nearly
    /// cancel. Among neighbouring inputs (one coordinate moved from −h to h) the computed change
    /// exceeds the exact sensitivity d·‖M_{:,j}‖ for some pairs (so trusting exact arithmetic is
    /// refuted), and never exceeds it plus twice the charged error bound. Exact values in
    /// rationals.
    #[test]
    fn matvec_error_bound_covers_cancellation() {
        use num_rational::BigRational;
        use num_traits::Zero;
        let q = |x: f64| BigRational::from_float(x).unwrap();
        let mut rng = crate::noise::SecureRng::seeded(5);
        let (rows, n, h) = (4, 64, 1.0);
        let mut beyond_exact = 0;
        for _ in 0..300 {
            let m = DMatrix::from_fn(rows, n, |_, j| {
                let big = if j % 2 == 0 { 1e8 } else { -1e8 };
                big + rng.unit_f64()
            });
            let j = rng.below_u64(n as u64) as usize;
            let mut y = DVector::from_fn(n, |_, _| rng.unit_f64() * 2.0 - 1.0);
            y[j] = -h;
            let (a, err) = bounded_matvec(&m, &y, h);
            y[j] = h;
            let (b, _) = bounded_matvec(&m, &y, h);
            // Exact squared sensitivity (2h)²·‖M_{:,j}‖² and the computed change, in rationals.
            let sens2 = (0..rows).fold(BigRational::zero(), |s, i| {
                s + q(2.0 * h) * q(2.0 * h) * q(m[(i, j)]) * q(m[(i, j)])
            });
            let change2 = (0..rows).fold(BigRational::zero(), |s, i| {
                let d = q(b[i]) - q(a[i]);
                s + d.clone() * d
            });
            if change2 > sens2 {
                beyond_exact += 1;
            }
            // Charged: ‖change‖ ≤ ‖exact change‖ + ‖2·err‖ (triangle inequality), checked as
            // ‖change‖² ≤ (√sens² + ‖2err‖)² with an upward-rounded f64 square root.
            let s = norm_up((0..rows).map(|i| 2.0 * h * m[(i, j)]));
            let e = norm_up(err.iter().map(|v| 2.0 * v));
            let charged = q(s) + q(e);
            assert!(
                change2 <= charged.clone() * charged,
                "slack does not cover the error"
            );
        }
        assert!(
            beyond_exact > 10,
            "exact arithmetic refuted only {beyond_exact} times"
        );
    }
}
