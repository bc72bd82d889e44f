//! Federated (DP-HYPE): the distributed noise plan, client votes and secure aggregation.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use dptune::federated::accounting::{NoisePlan as RsNoisePlan, Survivors};
use dptune::federated::secagg::{
    decode_signed, encode_signed, Client as RsClient, SecAggParams, Server as RsServer,
};
use dptune::federated::vote;
use dptune::noise::SecureRng;
use dptune::privacy::Guarantee;

use crate::errors::{invalid, IntoPy, R};
use crate::guarantee::{g, PyGuarantee};
use crate::input::{neighbours, rng_from, vec_f64, vec_i64, Seed};

/// A 1-D int64 numpy array.
pub(crate) type I64Array<'py> = Bound<'py, PyArray1<i64>>;

/// The distributed Skellam noise of one DP-HYPE round and its client-level accounting.
#[pyclass(module = "dptune._core", name = "NoisePlan", frozen)]
#[derive(Clone)]
pub(crate) struct PyNoisePlan {
    inner: RsNoisePlan,
    k: usize,
}

#[pymethods]
impl PyNoisePlan {
    /// Smallest total variance whose guarantee is at most (ε, δ) with `min_survivors` clients,
    /// `colluders` of whom may collude (each share is sized for `min_survivors − colluders`).
    #[staticmethod]
    #[pyo3(signature = (k, epsilon, delta, min_survivors, neighbours="replace_one", colluders=0))]
    fn calibrate(
        k: usize,
        epsilon: f64,
        delta: f64,
        min_survivors: usize,
        neighbours: &str,
        colluders: usize,
    ) -> R<Self> {
        let nb = self::neighbours(neighbours)?;
        let survivors = Survivors::new(min_survivors, colluders).py()?;
        if delta.is_nan() || delta <= 0.0 {
            // The library would name its `allowance`; the caller typed `delta`.
            return Err(invalid(
                "delta",
                delta,
                "the Skellam noise is calibrated for (epsilon, delta) with delta > 0",
            ));
        }
        let allowance = Guarantee::approx(epsilon, delta, nb).py()?;
        Ok(Self {
            inner: RsNoisePlan::calibrate(k, survivors, &allowance).py()?,
            k,
        })
    }
    /// A plan with total variance `variance` reached by any `min_survivors` clients of whom at
    /// most `colluders` collude.
    #[staticmethod]
    #[pyo3(signature = (k, variance, min_survivors, neighbours="replace_one", colluders=0))]
    fn with_variance(
        k: usize,
        variance: f64,
        min_survivors: usize,
        neighbours: &str,
        colluders: usize,
    ) -> R<Self> {
        let nb = self::neighbours(neighbours)?;
        let survivors = Survivors::new(min_survivors, colluders).py()?;
        Ok(Self {
            inner: RsNoisePlan::with_variance(k, nb, survivors, variance).py()?,
            k,
        })
    }
    /// The colluding survivors c the guarantee holds against (an assumption).
    #[getter]
    fn colluders(&self) -> usize {
        self.inner.colluders()
    }
    /// Votes per client.
    #[getter]
    fn k(&self) -> usize {
        self.k
    }
    /// Total variance μ for exactly t survivors.
    #[getter]
    fn total_variance(&self) -> f64 {
        self.inner.total_variance()
    }
    /// t.
    #[getter]
    fn min_survivors(&self) -> usize {
        self.inner.min_survivors()
    }
    /// (guarantee, ε at δ) of a release with `survivors` contributions; NoRelease below t.
    fn guarantee(&self, survivors: usize, delta: f64) -> R<(PyGuarantee, f64)> {
        let (gu, e) = self.inner.guarantee(survivors, delta).py()?;
        Ok((g(gu), e))
    }
    fn __repr__(&self) -> String {
        format!(
            "NoisePlan(k={}, total_variance={}, min_survivors={}, colluders={}, neighbours={})",
            self.k,
            self.inner.total_variance(),
            self.inner.min_survivors(),
            self.inner.colluders(),
            self.inner.neighbours()
        )
    }
}

/// Ones at the k best scores (ties to the lower index), as uint8.
#[pyfunction]
pub(crate) fn top_k_vote<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    k: usize,
) -> R<Bound<'py, PyArray1<u8>>> {
    let s = vec_f64("scores", scores)?;
    Ok(PyArray1::from_vec(py, vote::top_k_vote(&s, k).py()?))
}

pub(crate) fn client_rng(seed: Option<u64>, stream: u64) -> R<SecureRng> {
    match seed {
        Some(s) => Ok(SecureRng::seeded(s).streams().get(stream)),
        None => SecureRng::from_os().py(),
    }
}

/// A client's noisy submission: its top-k vote of `scores` plus its Skellam share, int64.
/// With `seed` (research runs only), the noise comes from stream `stream` of that seed.
#[pyfunction]
#[pyo3(signature = (scores, plan, *, seed=None, stream=0))]
pub(crate) fn noisy_vote<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    plan: &PyNoisePlan,
    seed: Option<u64>,
    stream: u64,
) -> R<Bound<'py, PyArray1<i64>>> {
    let s = vec_f64("scores", scores)?;
    let v = vote::top_k_vote(&s, plan.k).py()?;
    let share = plan.inner.share().py()?;
    let mut rng = client_rng(seed, stream)?;
    let out = vote::noisy_vote(&v, s.len(), plan.k, &share, &mut rng).py()?;
    Ok(PyArray1::from_vec(py, out))
}

/// The index of the largest count, ties broken uniformly at random.
#[pyfunction]
#[pyo3(signature = (counts, *, seed=None))]
pub(crate) fn select_argmax(counts: &Bound<'_, PyAny>, seed: Option<Seed<'_>>) -> R<usize> {
    let c = vec_i64("counts", counts)?;
    let mut rng = rng_from(seed)?;
    vote::select_argmax(&c, &mut rng).py()
}

/// int64 values → uint32 in ℤ_{2^32} (two's complement).
#[pyfunction]
pub(crate) fn encode_signed_u32<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
) -> R<Bound<'py, PyArray1<u32>>> {
    let v = vec_i64("values", values)?;
    Ok(PyArray1::from_vec(py, encode_signed("values", &v).py()?))
}

/// uint32 in ℤ_{2^32} → centred int64.
#[pyfunction]
pub(crate) fn decode_signed_u32<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
) -> R<Bound<'py, PyArray1<i64>>> {
    let v = vec_i64("values", values)?;
    let u: Vec<u32> = v
        .iter()
        .map(|&x| u32::try_from(x).map_err(|_| invalid("values", x, "must lie in [0, 2^32)")))
        .collect::<R<_>>()?;
    Ok(PyArray1::from_vec(py, decode_signed(&u)))
}

/// Complete-graph parameters (Shamir threshold max(t, ⌊n/2⌋ + 1)), refused if they cannot
/// resist a server colluding with `colluders` clients.
pub(crate) fn params(
    round: u64,
    clients: usize,
    dim: usize,
    min_survivors: usize,
    colluders: usize,
) -> R<SecAggParams> {
    let p = SecAggParams::complete(round, clients, dim, min_survivors).py()?;
    p.check_colluders(colluders).py()?;
    Ok(p)
}

/// A secure-aggregation client (complete graph, Shamir threshold max(t, ⌊n/2⌋ + 1)). Its keys
/// come from `key` (32 secret bytes); the same key and the same messages rebuild the same state
/// in a later process.
#[pyclass(module = "dptune._core", name = "SecAggClient")]
pub(crate) struct PySecAggClient {
    inner: RsClient,
}

#[pymethods]
impl PySecAggClient {
    #[new]
    #[pyo3(signature = (id, clients, min_survivors, input, key, round=0, colluders=0))]
    fn new(
        id: usize,
        clients: usize,
        min_survivors: usize,
        input: &Bound<'_, PyAny>,
        key: &[u8],
        round: u64,
        colluders: usize,
    ) -> R<Self> {
        let v = vec_i64("input", input)?;
        let enc = encode_signed("input", &v).py()?;
        let key: [u8; 32] = key
            .try_into()
            .map_err(|_| invalid("key", key.len(), "must be 32 bytes"))?;
        let p = params(round, clients, enc.len(), min_survivors, colluders)?;
        Ok(Self {
            inner: RsClient::new(id, p, enc, SecureRng::from_key(key)).py()?,
        })
    }
    /// Stage 0: this client's public keys.
    fn advertise_keys<'py>(&mut self, py: Python<'py>) -> R<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.advertise_keys().py()?))
    }
    /// Stage 1: given the server's key message, the encrypted shares.
    fn share_keys<'py>(&mut self, py: Python<'py>, msg: &[u8]) -> R<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.share_keys(msg).py()?))
    }
    /// Stage 2: given the forwarded shares, the masked input.
    fn masked_input<'py>(&mut self, py: Python<'py>, msg: &[u8]) -> R<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.masked_input(msg).py()?))
    }
    /// Stage 3: given the survivor set, this client's attestations of it.
    fn attest<'py>(&mut self, py: Python<'py>, msg: &[u8]) -> R<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.attest(msg).py()?))
    }
    /// Stage 4: given the forwarded attestations, the shares the server may see.
    fn unmask<'py>(&mut self, py: Python<'py>, msg: &[u8]) -> R<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.unmask(msg).py()?))
    }
}

/// A secure-aggregation server (complete graph, Shamir threshold max(t, ⌊n/2⌋ + 1)).
#[pyclass(module = "dptune._core", name = "SecAggServer")]
pub(crate) struct PySecAggServer {
    inner: RsServer,
}

#[pymethods]
impl PySecAggServer {
    #[new]
    #[pyo3(signature = (clients, dim, min_survivors, round=0, colluders=0))]
    fn new(
        clients: usize,
        dim: usize,
        min_survivors: usize,
        round: u64,
        colluders: usize,
    ) -> R<Self> {
        Ok(Self {
            inner: RsServer::new(params(round, clients, dim, min_survivors, colluders)?),
        })
    }
    /// Accepts one client message (refused messages raise; the sender counts as dropped).
    fn receive(&mut self, msg: &[u8]) -> R<()> {
        self.inner.receive(msg).py()
    }
    /// Closes the stage: a dict recipient id → bytes to deliver.
    fn advance<'py>(&mut self, py: Python<'py>) -> R<Bound<'py, PyDict>> {
        let out = self.inner.advance().py()?;
        let d = PyDict::new(py);
        for (id, b) in out {
            d.set_item(id, PyBytes::new(py, &b))?;
        }
        Ok(d)
    }
    /// After the unmask stage: (sum as centred int64, survivor ids as int64).
    fn finish<'py>(&mut self, py: Python<'py>) -> R<(I64Array<'py>, I64Array<'py>)> {
        let a = self.inner.finish().py()?;
        let surv: Vec<i64> = a.survivors.iter().map(|&x| x as i64).collect();
        Ok((
            PyArray1::from_vec(py, decode_signed(&a.sum)),
            PyArray1::from_vec(py, surv),
        ))
    }
}

/// Adds this file's classes and functions to the module `dptune._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNoisePlan>()?;
    m.add_class::<PySecAggClient>()?;
    m.add_class::<PySecAggServer>()?;
    m.add_function(wrap_pyfunction!(top_k_vote, m)?)?;
    m.add_function(wrap_pyfunction!(noisy_vote, m)?)?;
    m.add_function(wrap_pyfunction!(select_argmax, m)?)?;
    m.add_function(wrap_pyfunction!(encode_signed_u32, m)?)?;
    m.add_function(wrap_pyfunction!(decode_signed_u32, m)?)?;
    Ok(())
}
