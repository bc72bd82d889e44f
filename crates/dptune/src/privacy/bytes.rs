//! An exact, versioned byte encoding of a [`Guarantee`] (every bound, RDP curve and privacy loss
//! distribution), so that a guarantee can cross a process boundary (Python's pickle, a process
//! pool) and come back equal: every `f64` is stored as its IEEE-754 bit pattern (little
//! endian), so values, infinities in RDP tables and the last bit of every probability are kept.
//! Decoding checks every value as the constructors do and refuses anything malformed with
//! [`Error::InvalidParameter`] naming `bytes`; it never panics.
//!
//! Layout (version 1): `DPTG`, version byte, neighbour byte (0 add/remove-one, 1 replace-one),
//! the number of bounds (u32) and each bound (tag 0 pure ε, 1 (ε, δ), 2 ρ, 3 RDP curve: its
//! terms (u32), each a count and a part: 0 linear ρ, 1 pure-DP ε, 2 subsampled Gaussian (q, z),
//! 3 subsampled discrete Gaussian (q, z), 4 table (u32 length, orders, values)), then a byte
//! saying whether a PLD follows (its layout is in `pld::bytes`). Nothing may follow.

use super::pld::Pld;
use super::rdp::{RdpCurve, RdpPart};
use super::{Bound, Guarantee, Neighbours};
use crate::error::{check_delta, check_positive, Error, Result};

const MAGIC: &[u8; 4] = b"DPTG";
const VERSION: u8 = 1;

/// Appends values to a byte buffer.
pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    pub(crate) fn u8(&mut self, x: u8) {
        self.0.push(x);
    }
    pub(crate) fn u32(&mut self, x: usize) {
        // Lengths here are bounded far below 2^32 (grids, order lists, bound lists).
        self.0
            .extend_from_slice(&u32::try_from(x).unwrap_or(u32::MAX).to_le_bytes());
    }
    pub(crate) fn u64(&mut self, x: u64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    pub(crate) fn i64(&mut self, x: i64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    pub(crate) fn f64(&mut self, x: f64) {
        self.0.extend_from_slice(&x.to_bits().to_le_bytes());
    }
    pub(crate) fn f64s(&mut self, xs: &[f64]) {
        self.u64(xs.len() as u64);
        for &x in xs {
            self.f64(x);
        }
    }
}

/// Reads values back, refusing a truncated buffer.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

fn malformed(reason: impl Into<String>) -> Error {
    Error::invalid("bytes", "an encoded guarantee", reason)
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        if self.0.len() < N {
            return Err(malformed("truncated"));
        }
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        Ok(head.try_into().unwrap_or([0; N]))
    }
    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take::<1>()?[0])
    }
    pub(crate) fn u32(&mut self) -> Result<usize> {
        Ok(u32::from_le_bytes(self.take()?) as usize)
    }
    pub(crate) fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    pub(crate) fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_le_bytes(self.take()?))
    }
    pub(crate) fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(u64::from_le_bytes(self.take()?)))
    }
    pub(crate) fn f64s(&mut self) -> Result<Vec<f64>> {
        let n = self.u64()?;
        // Each value takes 8 bytes: a length the rest cannot hold is refused before allocating.
        if n > (self.0.len() / 8) as u64 {
            return Err(malformed("a length exceeds the data"));
        }
        (0..n).map(|_| self.f64()).collect()
    }
    pub(crate) fn flag(&mut self) -> Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(malformed(format!("flag byte {b}"))),
        }
    }
}

fn write_curve(w: &mut Writer, c: &RdpCurve) {
    w.u32(c.terms().len());
    for (count, part) in c.terms() {
        w.f64(*count);
        match part {
            RdpPart::Linear { rho } => {
                w.u8(0);
                w.f64(*rho);
            }
            RdpPart::PureDp { eps } => {
                w.u8(1);
                w.f64(*eps);
            }
            RdpPart::SubsampledGaussian { q, z } => {
                w.u8(2);
                w.f64(*q);
                w.f64(*z);
            }
            RdpPart::SubsampledDiscreteGaussian { q, z } => {
                w.u8(3);
                w.f64(*q);
                w.f64(*z);
            }
            RdpPart::Table { orders, values } => {
                w.u8(4);
                w.f64s(orders);
                w.f64s(values);
            }
        }
    }
}

fn read_curve(r: &mut Reader<'_>) -> Result<RdpCurve> {
    let n = r.u32()?;
    if n > r.0.len() / 9 {
        return Err(malformed("a length exceeds the data"));
    }
    let mut terms = Vec::with_capacity(n);
    for _ in 0..n {
        let count = r.f64()?;
        let part = match r.u8()? {
            0 => RdpPart::Linear { rho: r.f64()? },
            1 => RdpPart::PureDp { eps: r.f64()? },
            2 => RdpPart::SubsampledGaussian {
                q: r.f64()?,
                z: r.f64()?,
            },
            3 => RdpPart::SubsampledDiscreteGaussian {
                q: r.f64()?,
                z: r.f64()?,
            },
            4 => RdpPart::Table {
                orders: r.f64s()?,
                values: r.f64s()?,
            },
            t => return Err(malformed(format!("unknown RDP part {t}"))),
        };
        terms.push((count, part));
    }
    RdpCurve::from_terms(terms)
}

impl Guarantee {
    /// The exact byte encoding of this guarantee (module doc): [`Guarantee::from_bytes`] gives
    /// back an equal guarantee, bit for bit.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer(MAGIC.to_vec());
        w.u8(VERSION);
        w.u8(match self.neighbours() {
            Neighbours::AddRemove => 0,
            Neighbours::Replace => 1,
        });
        w.u32(self.bounds().len());
        for b in self.bounds() {
            match b {
                Bound::Pure { eps } => {
                    w.u8(0);
                    w.f64(*eps);
                }
                Bound::Approx { eps, delta } => {
                    w.u8(1);
                    w.f64(*eps);
                    w.f64(*delta);
                }
                Bound::Zcdp { rho } => {
                    w.u8(2);
                    w.f64(*rho);
                }
                Bound::Rdp(c) => {
                    w.u8(3);
                    write_curve(&mut w, c);
                }
            }
        }
        match self.pld() {
            None => w.u8(0),
            Some(p) => {
                w.u8(1);
                p.write(&mut w);
            }
        }
        w.0
    }

    /// Decodes [`Guarantee::to_bytes`]; a buffer that is not such an encoding (wrong magic or
    /// version, truncated, trailing bytes, a value a constructor refuses) is refused naming
    /// `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Guarantee> {
        let mut r = Reader(bytes);
        if r.take::<4>()? != *MAGIC {
            return Err(malformed("not an encoded dptune guarantee"));
        }
        let v = r.u8()?;
        if v != VERSION {
            return Err(malformed(format!(
                "encoding version {v}; this dptune reads version {VERSION}"
            )));
        }
        let nb = match r.u8()? {
            0 => Neighbours::AddRemove,
            1 => Neighbours::Replace,
            b => return Err(malformed(format!("neighbour byte {b}"))),
        };
        let n = r.u32()?;
        if n > r.0.len() {
            return Err(malformed("a length exceeds the data"));
        }
        let mut bounds = Vec::with_capacity(n);
        for _ in 0..n {
            bounds.push(match r.u8()? {
                0 => Bound::Pure {
                    eps: check_positive("epsilon", r.f64()?)?,
                },
                1 => {
                    let eps = check_positive("epsilon", r.f64()?)?;
                    let delta = check_delta("delta", r.f64()?)?;
                    Bound::Approx { eps, delta }
                }
                2 => Bound::Zcdp {
                    rho: check_positive("rho", r.f64()?)?,
                },
                3 => Bound::Rdp(read_curve(&mut r)?),
                t => return Err(malformed(format!("unknown bound {t}"))),
            });
        }
        let pld = if r.flag()? {
            Some(Pld::read(&mut r)?)
        } else {
            None
        };
        if !r.0.is_empty() {
            return Err(malformed("trailing bytes"));
        }
        if bounds.is_empty() && pld.is_none() {
            return Err(malformed("a guarantee needs a bound"));
        }
        if pld.as_ref().is_some_and(|p| p.neighbours() != nb) {
            return Err(malformed("the PLD's neighbour relation differs"));
        }
        Ok(Guarantee::from_parts(nb, bounds, pld))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy::dpsgd::dpsgd_guarantee;
    use crate::privacy::pld::PldConfig;
    use crate::privacy::Neighbours::{AddRemove, Replace};

    fn round_trip(g: &Guarantee) -> Guarantee {
        let back = Guarantee::from_bytes(&g.to_bytes()).unwrap();
        assert_eq!(&back, g);
        assert_eq!(back.to_bytes(), g.to_bytes());
        back
    }

    #[test]
    fn every_kind_of_guarantee_comes_back_equal_bit_for_bit() {
        // 0.1 + 0.2 has a 17-digit shortest decimal: a decimal or f32 route would move it.
        let odd = 0.1 + 0.2;
        round_trip(&Guarantee::pure(odd, AddRemove).unwrap());
        round_trip(&Guarantee::approx(2.0, 1e-5, Replace).unwrap());
        round_trip(&Guarantee::zcdp(odd, AddRemove).unwrap());
        let dpsgd = dpsgd_guarantee(0.01, 1.1, 1000).unwrap();
        let back = round_trip(&dpsgd);
        assert_eq!(
            back.epsilon(1e-5).unwrap().to_bits(),
            dpsgd.epsilon(1e-5).unwrap().to_bits()
        );
        // A table with +∞ (no finite bound at the largest order), composed with a closed form.
        let table = RdpCurve::table(vec![2.0, 8.0], vec![0.5, f64::INFINITY]).unwrap();
        let mixed = Guarantee::rdp(table, AddRemove)
            .compose(&Guarantee::pure(odd, AddRemove).unwrap())
            .unwrap();
        round_trip(&mixed);
        // A PLD (asymmetric, both directions) held beside closed-form bounds.
        let cfg = PldConfig {
            interval: 1e-3,
            ..PldConfig::default()
        };
        let pld = Pld::subsampled_gaussian(0.1, 1.0, 1.0, cfg).unwrap();
        let with_pld = Guarantee::zcdp(0.5, AddRemove)
            .unwrap()
            .with_pld(pld.self_compose(3).unwrap())
            .unwrap();
        let back = round_trip(&with_pld);
        assert_eq!(back.epsilon(1e-6).unwrap(), with_pld.epsilon(1e-6).unwrap());
        round_trip(&Guarantee::from_pld(
            Pld::gaussian(1.0, 1.0, Replace, cfg).unwrap(),
        ));
    }

    #[test]
    fn malformed_encodings_are_refused_naming_bytes() {
        let good = Guarantee::approx(2.0, 1e-5, AddRemove).unwrap().to_bytes();
        let refused = |b: &[u8]| {
            matches!(
                Guarantee::from_bytes(b),
                Err(Error::InvalidParameter { name, .. }) if name == "bytes"
            )
        };
        assert!(refused(&good[..good.len() - 1]), "truncated");
        assert!(refused(&[good.as_slice(), &[0]].concat()), "trailing byte");
        assert!(refused(b"XXXX"), "magic");
        let mut version = good.clone();
        version[4] = 2;
        assert!(refused(&version));
        // A value no constructor accepts: δ = 1.5 (bytes 19..27 are δ's bit pattern).
        let mut bad = good.clone();
        bad[19..27].copy_from_slice(&1.5f64.to_bits().to_le_bytes());
        assert!(Guarantee::from_bytes(&bad).is_err());
        // The check has teeth: the unmodified buffer decodes.
        assert!(Guarantee::from_bytes(&good).is_ok());
        // A length that the data cannot hold is refused before anything is allocated.
        let mut huge =
            Guarantee::rdp(RdpCurve::table(vec![2.0], vec![1.0]).unwrap(), AddRemove).to_bytes();
        let at = huge.len() - 1 - 8 - 8; // the values' length field (before one value, the flag)
        huge[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(refused(&huge));
    }
}
