//! Dense linear algebra for the GP module: the RBF kernel matrix and a recursive, gemm-based
//! Cholesky factorisation that also returns the inverse factor.
//!
//! nalgebra's own Cholesky is unblocked (about 5 GFlop/s on this machine for n = 1000); splitting
//! the matrix in halves and doing the off-diagonal work with matrix products moves almost all
//! flops into nalgebra's gemm (matrixmultiply), several times faster. The base case is nalgebra's
//! Cholesky.

use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};

/// Below this size the recursion stops and nalgebra's unblocked Cholesky takes over.
const BASE: usize = 96;

/// Squared Euclidean distances between the rows of `a` (n×p) and the rows of `b` (m×p).
fn sq_dists(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
    let (n, m) = (a.nrows(), b.nrows());
    DMatrix::from_fn(n, m, |i, j| {
        let mut s = 0.0;
        for k in 0..a.ncols() {
            let d = a[(i, k)] - b[(j, k)];
            s += d * d;
        }
        s
    })
}

/// The RBF kernel matrix σ_f²·exp(−‖a_i − b_j‖²/(2ℓ²)) between the rows of `a` and `b`.
pub(crate) fn rbf(
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    lengthscale: f64,
    signal_var: f64,
) -> DMatrix<f64> {
    let scale = -0.5 / (lengthscale * lengthscale);
    sq_dists(a, b).map(|d| signal_var * (d * scale).exp())
}

/// A lower Cholesky factor `l` of an SPD matrix and its inverse `l_inv` (both lower triangular).
pub(crate) struct CholInv {
    /// L with L·Lᵀ = A.
    pub l: DMatrix<f64>,
    /// L⁻¹.
    pub l_inv: DMatrix<f64>,
}

impl CholInv {
    /// A⁻¹ = L⁻ᵀ·L⁻¹.
    pub fn inverse(&self) -> DMatrix<f64> {
        self.l_inv.tr_mul(&self.l_inv)
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
    fn singular_matrix_is_a_numerical_error() {
        let x = DMatrix::from_row_slice(3, 1, &[0.0, 0.0, 1.0]);
        let k = rbf(&x, &x, 1.0, 1.0);
        let e = chol_inv(&k, "kernel matrix").err().unwrap();
        assert!(matches!(e, Error::Numerical { .. }), "{e}");
        let nan = DMatrix::from_element(2, 2, f64::NAN);
        assert!(chol_inv(&nan, "kernel matrix").is_err());
    }
}
