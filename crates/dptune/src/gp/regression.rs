//! Gaussian-process regression with an RBF kernel: the public kernel, the public output range
//! that bounds the sensitivity, the posterior mean and the prediction ("cloaking") matrix.

use nalgebra::{DMatrix, DVector};
use serde::Serialize;

use super::linalg::{chol_inv, rbf, rbf_from_sq, CholInv};
use crate::error::{check_positive, Error, Result};
use crate::numeric::add_up;

/// An RBF kernel k(x, x′) = σ_f²·exp(−‖x − x′‖²/(2ℓ²)) plus Gaussian observation noise σ_n².
/// All three are public constants (DPGP.md §2); they are chosen before looking at the outputs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Kernel {
    lengthscale: f64,
    signal_var: f64,
    noise_var: f64,
}

impl Kernel {
    /// Validates ℓ > 0, σ_f² > 0 and σ_n² > 0 (σ_n² = 0 makes the kernel matrix singular on
    /// repeated inputs and the cloaking matrix unbounded).
    pub fn new(lengthscale: f64, signal_var: f64, noise_var: f64) -> Result<Self> {
        check_positive("lengthscale", lengthscale)?;
        check_positive("signal_var", signal_var)?;
        check_positive("noise_var", noise_var)?;
        Ok(Self {
            lengthscale,
            signal_var,
            noise_var,
        })
    }

    /// The same kernel with another lengthscale.
    pub fn with_lengthscale(&self, lengthscale: f64) -> Result<Self> {
        Self::new(lengthscale, self.signal_var, self.noise_var)
    }

    /// ℓ.
    pub fn lengthscale(&self) -> f64 {
        self.lengthscale
    }

    /// σ_f².
    pub fn signal_var(&self) -> f64 {
        self.signal_var
    }

    /// σ_n².
    pub fn noise_var(&self) -> f64 {
        self.noise_var
    }

    /// k(A, B) for the rows of `a` and `b` (no noise term).
    pub fn matrix(&self, a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
        rbf(a, b, self.lengthscale, self.signal_var)
    }

    /// k(X, X) + σ_n² I.
    pub(crate) fn noisy_gram(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        self.noisy_gram_from_sq(&super::linalg::sq_dists(x, x))
    }

    /// k(X, X) + σ_n² I from the squared distances between the rows of X.
    pub(crate) fn noisy_gram_from_sq(&self, d2: &DMatrix<f64>) -> DMatrix<f64> {
        let mut k = rbf_from_sq(d2, self.lengthscale, self.signal_var);
        for i in 0..k.nrows() {
            k[(i, i)] += self.noise_var;
        }
        k
    }
}

/// The declared public range [lo, hi] of the outputs. Outputs are clipped into it, so one changed
/// output moves the clipped data by at most d = hi − lo (DPGP.md §2): the sensitivity comes from
/// this range, never from the data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OutputRange {
    lo: f64,
    hi: f64,
}

/// Outputs after clipping into an [`OutputRange`] and centring at its midpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Clipped {
    /// ỹ_i = clip(y_i) − m, in [−d/2, d/2].
    pub centred: Vec<f64>,
    /// How many outputs lay outside the range and were clipped (not an error). **Not private**
    /// (it reads the outputs and is not charged): never part of a release; the CLI shows it only
    /// under `--diagnostics`, labelled NOT PRIVATE.
    pub clipped: usize,
}

impl OutputRange {
    /// A finite range with lo < hi.
    pub fn new(lo: f64, hi: f64) -> Result<Self> {
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(Error::invalid(
                "y_range",
                format!("{lo},{hi}"),
                "needs finite LO < HI",
            ));
        }
        Ok(Self { lo, hi })
    }

    /// Lower end.
    pub fn lo(&self) -> f64 {
        self.lo
    }

    /// Upper end.
    pub fn hi(&self) -> f64 {
        self.hi
    }

    /// d ≥ hi − lo, the largest change of one clipped and centred output: the float difference
    /// rounded up (a rounded-down d would understate every sensitivity built on it).
    pub fn width(&self) -> f64 {
        add_up(self.hi, -self.lo)
    }

    /// m = (lo + hi)/2, the public prior mean.
    pub fn centre(&self) -> f64 {
        0.5 * (self.lo + self.hi)
    }

    /// Clips every output into the range and centres it. Non-finite outputs are an error.
    ///
    /// The centred value fl(clip(y) − m) is clamped into [−d/2, d/2] (d = [`Self::width`];
    /// halving is exact), so |ỹᵢ| ≤ d/2 and one changed output moves ỹ by at most d in any
    /// arithmetic: the bounds the sensitivities use hold for the computed ỹ, not only for the
    /// exact one.
    pub fn clip(&self, y: &[f64]) -> Result<Clipped> {
        let half = self.width() / 2.0;
        let mut clipped = 0;
        let mut centred = Vec::with_capacity(y.len());
        for (i, &v) in y.iter().enumerate() {
            if !v.is_finite() {
                return Err(Error::Data {
                    location: format!("output {i}"),
                    reason: format!("non-finite value {v}"),
                });
            }
            if v < self.lo || v > self.hi {
                clipped += 1;
            }
            centred.push((v.clamp(self.lo, self.hi) - self.centre()).clamp(-half, half));
        }
        Ok(Clipped { centred, clipped })
    }
}

/// Checks an input matrix (rows are points): non-empty, finite, and with `cols` columns if given.
pub(crate) fn check_inputs(
    name: &'static str,
    x: &DMatrix<f64>,
    cols: Option<usize>,
) -> Result<()> {
    if x.nrows() == 0 || x.ncols() == 0 {
        return Err(Error::invalid(
            name,
            format!("{}×{}", x.nrows(), x.ncols()),
            "needs at least one point and one column",
        ));
    }
    if let Some(c) = cols {
        if x.ncols() != c {
            return Err(Error::invalid(
                name,
                x.ncols(),
                format!("needs {c} columns like the training inputs"),
            ));
        }
    }
    if x.iter().any(|v| !v.is_finite()) {
        return Err(Error::invalid(
            name,
            "non-finite entry",
            "inputs must be finite",
        ));
    }
    Ok(())
}

/// A fitted GP: training inputs, kernel, the factor of K + σ_n²I and α = (K + σ_n²I)⁻¹ỹ.
#[derive(Debug)]
pub struct GpRegression {
    x: DMatrix<f64>,
    kernel: Kernel,
    chol: CholInvDebug,
    alpha: DVector<f64>,
}

/// Wrapper so that `GpRegression` can derive `Debug` without printing the factors.
struct CholInvDebug(CholInv);

impl std::fmt::Debug for CholInvDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cholesky({}×{})", self.0.l.nrows(), self.0.l.ncols())
    }
}

impl GpRegression {
    /// Fits the GP to inputs `x` (rows are points) and centred outputs `y` (zero prior mean; add
    /// the public centre back to predictions). A singular kernel matrix is a numerical error.
    pub fn fit(x: &DMatrix<f64>, y: &[f64], kernel: Kernel) -> Result<Self> {
        check_inputs("x", x, None)?;
        if y.len() != x.nrows() {
            return Err(Error::invalid(
                "y",
                y.len(),
                format!("needs one output per input row ({})", x.nrows()),
            ));
        }
        let chol = chol_inv(&kernel.noisy_gram(x), "kernel matrix K + noise_var·I")?;
        let alpha = chol.solve_vec(&DVector::from_column_slice(y));
        Ok(Self {
            x: x.clone(),
            kernel,
            chol: CholInvDebug(chol),
            alpha,
        })
    }

    /// The kernel.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Posterior mean at the rows of `x_star`.
    pub fn predict(&self, x_star: &DMatrix<f64>) -> Result<Vec<f64>> {
        check_inputs("x_star", x_star, Some(self.x.ncols()))?;
        Ok((self.kernel.matrix(x_star, &self.x) * &self.alpha)
            .as_slice()
            .to_vec())
    }

    /// The prediction ("cloaking") matrix C = k(X*, X)·(K + σ_n²I)⁻¹ (n* × N): predictions are
    /// C·ỹ, and changing output j by δ moves them by δ·c_j.
    pub fn prediction_matrix(&self, x_star: &DMatrix<f64>) -> Result<DMatrix<f64>> {
        check_inputs("x_star", x_star, Some(self.x.ncols()))?;
        let ks = self.kernel.matrix(x_star, &self.x);
        // C = Ks·L⁻ᵀ·L⁻¹
        Ok((ks * self.chol.0.l_inv.transpose()) * &self.chol.0.l_inv)
    }

    /// A = (K + σ_n²I)⁻¹.
    pub(crate) fn precision(&self) -> DMatrix<f64> {
        self.chol.0.inverse()
    }

    /// Posterior covariance k(X*, X*) − k(X*, X)·A·k(X, X*) (public: it depends on inputs only).
    pub fn posterior_variance(&self, x_star: &DMatrix<f64>) -> Result<Vec<f64>> {
        check_inputs("x_star", x_star, Some(self.x.ncols()))?;
        let v = &self.chol.0.l_inv * self.kernel.matrix(&self.x, x_star);
        Ok((0..x_star.nrows())
            .map(|i| (self.kernel.signal_var - v.column(i).norm_squared()).max(0.0))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_smooth_data_and_c_reproduces_predictions() {
        let n = 40;
        let x = DMatrix::from_fn(n, 1, |i, _| i as f64 / 8.0);
        let y: Vec<f64> = (0..n).map(|i| (i as f64 / 8.0).sin()).collect();
        let gp = GpRegression::fit(&x, &y, Kernel::new(1.0, 1.0, 1e-4).unwrap()).unwrap();
        let xs = DMatrix::from_column_slice(3, 1, &[0.55, 2.05, 3.9]);
        let p = gp.predict(&xs).unwrap();
        for (i, v) in p.iter().enumerate() {
            assert!((v - xs[(i, 0)].sin()).abs() < 1e-3, "{v}");
        }
        let c = gp.prediction_matrix(&xs).unwrap();
        let pc = &c * DVector::from_column_slice(&y);
        for i in 0..3 {
            assert!((pc[i] - p[i]).abs() < 1e-8);
        }
        let var = gp.posterior_variance(&xs).unwrap();
        assert!(var.iter().all(|v| *v < 1e-3));
        assert!(gp.predict(&DMatrix::zeros(2, 2)).is_err());
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = Kernel::new(0.0, 1.0, 1.0).unwrap_err();
        assert!(e.to_string().contains("`lengthscale`"));
        assert!(Kernel::new(-1.0, 1.0, 1.0).is_err());
        assert!(Kernel::new(1.0, 1.0, 0.0).is_err());
        assert!(OutputRange::new(2.0, 1.0).is_err());
        let r = OutputRange::new(0.0, 10.0).unwrap();
        let c = r.clip(&[-3.0, 5.0, 12.0]).unwrap();
        assert_eq!(c.clipped, 2);
        assert_eq!(c.centred, vec![-5.0, 0.0, 5.0]);
        assert!(r.clip(&[f64::NAN]).is_err());
        let x = DMatrix::from_column_slice(2, 1, &[0.0, 1.0]);
        assert!(GpRegression::fit(&x, &[1.0], Kernel::new(1.0, 1.0, 1.0).unwrap()).is_err());
    }
}
