//! The models the learners produce: linear (logistic, softmax, ridge) and a one-hidden-layer MLP.

use serde::Serialize;

use crate::data::Records;
use crate::data::{Dataset, Task};
use crate::error::{Error, Result};
use crate::resources::try_filled;

/// How a model's outputs are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Link {
    /// One output s; P[class 1] = σ(s).
    Logistic,
    /// One output per class; probabilities by softmax.
    Softmax,
    /// One output in [-1, 1] units of the declared label range.
    Identity,
}

/// A trained model. Inputs are multiplied by `input_scale` (a public constant, typically
/// 1/‖row‖max) and a constant 1 is appended (the bias) before the first layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Model {
    /// Input features.
    pub dim: usize,
    /// Hidden units (0 for a linear model).
    pub hidden: usize,
    /// Outputs: 1 (logistic, identity) or the number of classes (softmax).
    pub outputs: usize,
    /// How outputs are read.
    pub link: Link,
    /// The public factor applied to inputs.
    pub input_scale: f64,
    /// For regression: the declared label range that [-1, 1] maps to.
    pub target: Option<(f64, f64)>,
    /// Parameters: linear: `outputs × (dim+1)`, bias last per row; MLP: `hidden × (dim+1)`
    /// then `outputs × (hidden+1)`, tanh hidden units.
    pub params: Vec<f64>,
}

/// Scratch space for forward and backward passes.
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    h: Vec<f64>,
    out: Vec<f64>,
    dh: Vec<f64>,
}

impl Model {
    /// A zero-initialised linear model for `data`'s task (the MLP gets a fixed public
    /// initialisation from [`Model::mlp`]).
    pub fn linear(dim: usize, task: &Task, input_scale: f64) -> Self {
        let (outputs, link, target) = Self::head(task);
        Self {
            dim,
            hidden: 0,
            outputs,
            link,
            input_scale,
            target,
            params: vec![0.0; outputs * (dim + 1)],
        }
    }

    /// A one-hidden-layer tanh network with a deterministic, data-independent initialisation
    /// (scaled pseudo-random weights from a fixed integer hash: initial weights are public).
    /// Refuses, naming `hidden`, a parameter count that overflows or memory the system does not
    /// grant (rather than aborting).
    pub fn mlp(dim: usize, hidden: usize, task: &Task, input_scale: f64) -> Result<Self> {
        let (outputs, link, target) = Self::head(task);
        let n1 = dim.checked_add(1).and_then(|d| hidden.checked_mul(d));
        let n2 = hidden.checked_add(1).and_then(|h| outputs.checked_mul(h));
        let Some(len) = n1.zip(n2).and_then(|(a, b)| a.checked_add(b)) else {
            return Err(Error::invalid(
                "hidden",
                hidden,
                "the model's parameter count overflows",
            ));
        };
        let n1 = hidden * (dim + 1);
        let mut params = try_filled(len, 0.0, "hidden", hidden)?;
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            // splitmix64: a public, fixed sequence (not privacy noise).
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let s1 = (3.0 / (dim + 1) as f64).sqrt();
        let s2 = (3.0 / (hidden + 1) as f64).sqrt();
        for (i, w) in params.iter_mut().enumerate() {
            *w = next() * if i < n1 { s1 } else { s2 };
        }
        Ok(Self {
            dim,
            hidden,
            outputs,
            link,
            input_scale,
            target,
            params,
        })
    }

    fn head(task: &Task) -> (usize, Link, Option<(f64, f64)>) {
        match task {
            Task::Classification { classes } if classes.len() == 2 => (1, Link::Logistic, None),
            Task::Classification { classes } => (classes.len(), Link::Softmax, None),
            Task::Regression { low, high } => (1, Link::Identity, Some((*low, *high))),
        }
    }

    /// Output layer values for input `x` (written to `s.out`).
    fn forward(&self, x: &[f64], s: &mut Scratch) {
        let d = self.dim;
        let sc = self.input_scale;
        s.out.resize(self.outputs, 0.0);
        if self.hidden == 0 {
            for (o, w) in s.out.iter_mut().zip(self.params.chunks(d + 1)) {
                *o = w[d] + sc * dot(&w[..d], x);
            }
            return;
        }
        let n1 = self.hidden * (d + 1);
        s.h.resize(self.hidden, 0.0);
        for (h, w) in s.h.iter_mut().zip(self.params[..n1].chunks(d + 1)) {
            *h = (w[d] + sc * dot(&w[..d], x)).tanh();
        }
        let k = self.hidden;
        for (o, w) in s.out.iter_mut().zip(self.params[n1..].chunks(k + 1)) {
            *o = w[k] + dot(&w[..k], &s.h);
        }
    }

    /// The predicted class of `x`.
    pub fn predict_class(&self, x: &[f64], s: &mut Scratch) -> usize {
        self.forward(x, s);
        match self.link {
            Link::Logistic | Link::Identity => usize::from(s.out[0] > 0.0),
            Link::Softmax => argmax(&s.out),
        }
    }

    /// The predicted probability of class `class` (classification models).
    pub fn probability(&self, x: &[f64], class: usize, s: &mut Scratch) -> f64 {
        self.forward(x, s);
        match self.link {
            Link::Logistic => {
                let p = sigmoid(s.out[0]);
                if class == 1 {
                    p
                } else {
                    1.0 - p
                }
            }
            Link::Softmax => {
                softmax_in_place(&mut s.out);
                s.out[class]
            }
            Link::Identity => f64::NAN,
        }
    }

    /// The predicted real label in declared units (regression models).
    pub fn predict_value(&self, x: &[f64], s: &mut Scratch) -> f64 {
        self.forward(x, s);
        let (lo, hi) = self.target.unwrap_or((-1.0, 1.0));
        lo + (s.out[0].clamp(-1.0, 1.0) + 1.0) / 2.0 * (hi - lo)
    }

    /// Per-example gradient of the loss (logistic/cross-entropy, or half squared error in
    /// [-1, 1] units) at `(x, y)`, written into `g` (length `params.len()`).
    pub fn gradient(&self, x: &[f64], y: f64, g: &mut [f64], s: &mut Scratch) {
        self.forward(x, s);
        let d = self.dim;
        let sc = self.input_scale;
        // dL/d(out)
        match self.link {
            Link::Logistic => s.out[0] = sigmoid(s.out[0]) - y,
            Link::Softmax => {
                softmax_in_place(&mut s.out);
                s.out[y as usize] -= 1.0;
            }
            Link::Identity => {
                let (lo, hi) = self.target.unwrap_or((-1.0, 1.0));
                s.out[0] -= 2.0 * (y - lo) / (hi - lo) - 1.0;
            }
        }
        if self.hidden == 0 {
            for (gw, &e) in g.chunks_mut(d + 1).zip(&s.out) {
                for (gj, &xj) in gw[..d].iter_mut().zip(x) {
                    *gj = e * sc * xj;
                }
                gw[d] = e;
            }
            return;
        }
        let k = self.hidden;
        let n1 = k * (d + 1);
        let (g1, g2) = g.split_at_mut(n1);
        s.dh.clear();
        s.dh.resize(k, 0.0);
        for ((gw, &e), w) in g2
            .chunks_mut(k + 1)
            .zip(&s.out)
            .zip(self.params[n1..].chunks(k + 1))
        {
            for j in 0..k {
                gw[j] = e * s.h[j];
                s.dh[j] += e * w[j];
            }
            gw[k] = e;
        }
        for ((gw, &dh), &h) in g1.chunks_mut(d + 1).zip(&s.dh).zip(&s.h) {
            let a = dh * (1.0 - h * h);
            for (gj, &xj) in gw[..d].iter_mut().zip(x) {
                *gj = a * sc * xj;
            }
            gw[d] = a;
        }
    }

    /// Test accuracy on `data` (fraction correct); NaN for regression models. Not private:
    /// for public test data or non-private baselines.
    pub fn accuracy(&self, data: &Dataset) -> f64 {
        if self.link == Link::Identity || data.is_empty() {
            return f64::NAN;
        }
        let mut s = Scratch::default();
        let correct = (0..data.len())
            .filter(|&i| self.predict_class(data.row(i), &mut s) == data.class(i))
            .count();
        correct as f64 / data.len() as f64
    }

    /// Root mean squared error on `data` in declared label units; NaN for classifiers. Not
    /// private: for public test data or non-private baselines.
    pub fn rmse(&self, data: &Dataset) -> f64 {
        if self.link != Link::Identity || data.is_empty() {
            return f64::NAN;
        }
        let mut s = Scratch::default();
        let se: f64 = (0..data.len())
            .map(|i| (self.predict_value(data.row(i), &mut s) - data.labels()[i]).powi(2))
            .sum();
        (se / data.len() as f64).sqrt()
    }
}

/// Dot product.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The logistic function, stable for large |s|.
pub fn sigmoid(s: f64) -> f64 {
    if s >= 0.0 {
        1.0 / (1.0 + (-s).exp())
    } else {
        let e = s.exp();
        e / (1.0 + e)
    }
}

fn softmax_in_place(v: &mut [f64]) {
    let m = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let mut z = 0.0;
    for x in v.iter_mut() {
        *x = (*x - m).exp();
        z += *x;
    }
    for x in v.iter_mut() {
        *x /= z;
    }
}

fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, x) in v.iter().enumerate() {
        if *x > v[best] {
            best = i;
        }
    }
    best
}
