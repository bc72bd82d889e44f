//! How much memory and time a job needs, estimated from its parameters before anything large is
//! allocated, and the check against what this machine has.
//!
//! Without it a size parameter such as `hidden = 10⁸` or `clients = 10⁹` made the process abort
//! (the allocator gives up: exit 134), panic on a capacity overflow, be killed by the kernel, or
//! run for days, sometimes after a persistent budget had been charged. Each job states its
//! [`Estimate`] (computed next to the job: `Plan::resources`, `SimConfig::resources`,
//! `SelectionConfig::resources`, `recommend::resources`), and [`Limits::check`] refuses it with
//! [`Error::InvalidParameter`] naming the parameter that drives it, before any mechanism runs.
//! A caller may force a job that exceeds this machine's memory or time, never one that no
//! 64-bit process can address; and the big buffers are allocated with [`try_filled`], so an
//! allocation the system refuses is an error too, not an abort.
//!
//! **Estimates are rough** (within a small factor): peak bytes of the largest structures, and
//! CPU time from throughputs measured on the reference machine (docs/PERFORMANCE.md, "Resource
//! limits"), optimistic so that only runs that are clearly too long are refused.
//!
//! **Privacy.** A refusal is a data-validation step (DESIGN.md rule 4): it happens before any
//! mechanism runs and before any budget is charged. Most estimates use public parameters only.
//! Two use the number of private records n, because the work grows with it and nothing else
//! bounds it: the GP (its n × n kernel matrices) and DP-SGD's training time (unless the size is
//! declared public). Their refusal tells the operator running the command, who holds the data,
//! that n is large; it is never part of a release (docs/PRIVACY.md, "Resource limits").

use std::fmt;

use crate::error::{Error, Result};

/// The most bytes a job may ever ask for, even when forced: 2⁴⁷ = 128 TiB, the user address
/// space of a 64-bit Linux process (4-level page tables on x86-64 and AArch64). Past it an
/// allocation cannot succeed, and sizes computed in `usize` come close to overflowing.
pub const ADDRESSABLE: f64 = (1u64 << 47) as f64;

/// The memory assumed available where the operating system does not say (not Linux, or no
/// `/proc/meminfo`): 4 GB, so that a job refused here would not fit a small laptop either.
pub const FALLBACK_MEMORY: f64 = 4e9;

/// The longest run that needs no forcing: one hour of wall-clock time.
pub const LONG_RUN_SECONDS: f64 = 3600.0;

/// What a job needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// Peak memory, in bytes.
    Memory,
    /// CPU time, in core-seconds (divided over the machine's threads when checked).
    Time,
}

/// One need of a job, and the parameter that drives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    /// Memory or time.
    pub resource: Resource,
    /// The parameter named in a refusal (as the caller knows it, e.g. `hidden`, `clients`).
    pub parameter: &'static str,
    /// Its value, rendered.
    pub value: String,
    /// Bytes, or core-seconds.
    pub amount: f64,
}

/// The needs of one job (memory, and time where it can be told before running).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    needs: Vec<Need>,
}

impl Estimate {
    /// No needs yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a peak-memory need of `bytes`, driven by `parameter` = `value`.
    pub fn memory(self, parameter: &'static str, value: impl fmt::Display, bytes: f64) -> Self {
        self.with(Resource::Memory, parameter, value, bytes)
    }

    /// Adds a CPU-time need of `core_seconds`, driven by `parameter` = `value`.
    pub fn time(
        self,
        parameter: &'static str,
        value: impl fmt::Display,
        core_seconds: f64,
    ) -> Self {
        self.with(Resource::Time, parameter, value, core_seconds)
    }

    fn with(
        mut self,
        resource: Resource,
        parameter: &'static str,
        value: impl fmt::Display,
        amount: f64,
    ) -> Self {
        self.needs.push(Need {
            resource,
            parameter,
            value: value.to_string(),
            amount,
        });
        self
    }

    /// The needs, in the order they were added.
    pub fn needs(&self) -> &[Need] {
        &self.needs
    }
}

/// What a machine offers a job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Memory available, bytes.
    pub memory: f64,
    /// Threads the job's parallel parts run on.
    pub threads: usize,
    /// The longest wall-clock time that needs no forcing, seconds.
    pub seconds: f64,
}

impl Limits {
    /// This machine: available memory from the operating system ([`FALLBACK_MEMORY`] where it
    /// does not say), the worker threads of the global pool, and [`LONG_RUN_SECONDS`].
    pub fn this_machine() -> Self {
        Self {
            memory: available_memory().unwrap_or(FALLBACK_MEMORY),
            threads: rayon::current_num_threads().max(1),
            seconds: LONG_RUN_SECONDS,
        }
    }

    /// Refuses `estimate` if a need exceeds these limits, naming its parameter and the
    /// estimate, and ending with `how_to_force` (the front end's override, e.g. "use --force
    /// to try anyway"); with `force`, refuses only memory beyond [`ADDRESSABLE`] (or not a
    /// number).
    pub fn check(&self, estimate: &Estimate, force: bool, how_to_force: &str) -> Result<()> {
        for need in &estimate.needs {
            let refuse = |reason: String| Err(Error::invalid(need.parameter, &need.value, reason));
            let forcible = how_to_force;
            match need.resource {
                Resource::Memory if need.amount.is_nan() || need.amount > ADDRESSABLE => {
                    return refuse(format!(
                        "needs about {} of memory, more than a 64-bit process can address",
                        fmt_bytes(need.amount)
                    ))
                }
                Resource::Memory if !force && need.amount > self.memory => {
                    return refuse(format!(
                        "needs about {} of memory, and this machine has {} available; {forcible}",
                        fmt_bytes(need.amount),
                        fmt_bytes(self.memory)
                    ))
                }
                Resource::Time if !force && need.amount / self.threads as f64 > self.seconds => {
                    return refuse(format!(
                        "would take about {} on this machine ({} threads); {forcible}",
                        fmt_duration(need.amount / self.threads as f64),
                        self.threads
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// `MemAvailable` from `/proc/meminfo` in bytes (Linux), or `None` where it cannot be read.
pub fn available_memory() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

fn parse_meminfo(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line.split_whitespace().skip(1);
    let kib: f64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kib * 1024.0)
}

/// `len` copies of `value`, or an error naming `parameter` = `shown` if the system refuses the
/// memory (where `vec![value; len]` would abort the process).
pub fn try_filled<T: Clone>(
    len: usize,
    value: T,
    parameter: &'static str,
    shown: impl fmt::Display,
) -> Result<Vec<T>> {
    let mut v = Vec::new();
    if v.try_reserve_exact(len).is_err() {
        let bytes = len as f64 * std::mem::size_of::<T>() as f64;
        return Err(Error::invalid(
            parameter,
            shown,
            format!("could not allocate {} of memory", fmt_bytes(bytes)),
        ));
    }
    v.resize(len, value);
    Ok(v)
}

/// Bytes for people, in decimal units with two significant digits ("24 GB", "1.5 TB").
pub fn fmt_bytes(bytes: f64) -> String {
    const UNITS: [&str; 7] = ["bytes", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut x = bytes;
    for unit in UNITS {
        if x < 999.5 {
            return if x < 9.95 && unit != "bytes" {
                format!("{x:.1} {unit}")
            } else {
                format!("{x:.0} {unit}")
            };
        }
        x /= 1000.0;
    }
    format!("{bytes:.1e} bytes")
}

/// A duration for people, rounded to a whole unit ("40 minutes", "5 hours", "3 days").
pub fn fmt_duration(seconds: f64) -> String {
    let (amount, unit) = match seconds {
        s if s < 90.0 => (s, "seconds"),
        s if s < 5400.0 => (s / 60.0, "minutes"),
        s if s < 172_800.0 => (s / 3600.0, "hours"),
        s if s < 3.2e9 => (s / 86_400.0, "days"),
        s => (s / 3.156e7, "years"),
    };
    if amount < 1e6 {
        format!("{amount:.0} {unit}")
    } else {
        format!("{amount:.1e} {unit}")
    }
}

#[cfg(test)]
impl Limits {
    /// A fixed machine for tests: 22 GB available, two threads, [`LONG_RUN_SECONDS`].
    pub(crate) fn test_machine() -> Self {
        Self {
            memory: 22e9,
            threads: 2,
            seconds: LONG_RUN_SECONDS,
        }
    }

    /// The message refusing `estimate` without `--force` (panics if it is not refused).
    pub(crate) fn refusal(&self, estimate: &Estimate) -> String {
        self.check(estimate, false, "use --force to try anyway")
            .unwrap_err()
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_parameter_and_the_estimate() {
        let e = Estimate::new().memory("clients", 1_000_000_000, 24e9);
        let msg = Limits::test_machine()
            .check(&e, false, "use --force to try anyway")
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            "invalid parameter `clients` = 1000000000: needs about 24 GB of memory, and this \
             machine has 22 GB available; use --force to try anyway"
        );
        assert!(Limits::test_machine()
            .check(&e, true, "use --force to try anyway")
            .is_ok());
        // Ten hours of work on two threads is five hours of wall-clock time.
        let t = Estimate::new()
            .memory("hidden", 32, 1e6)
            .time("epochs", 100, 36_000.0);
        let msg = Limits::test_machine()
            .check(&t, false, "use --force to try anyway")
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("`epochs` = 100: would take about 5 hours"),
            "{msg}"
        );
        assert!(Limits::test_machine()
            .check(&t, true, "use --force to try anyway")
            .is_ok());
        // Just inside both limits.
        let ok = Estimate::new().memory("m", 1, 22e9).time("m", 1, 7200.0);
        assert!(Limits::test_machine()
            .check(&ok, false, "use --force to try anyway")
            .is_ok());
    }

    #[test]
    fn what_no_process_can_address_is_refused_even_when_forced() {
        for bytes in [ADDRESSABLE * 1.01, f64::INFINITY, f64::NAN] {
            let e = Estimate::new().memory("candidates", usize::MAX, bytes);
            let msg = Limits::test_machine()
                .check(&e, true, "use --force to try anyway")
                .unwrap_err()
                .to_string();
            assert!(
                msg.contains("more than a 64-bit process can address"),
                "{msg}"
            );
        }
        let e = Estimate::new().memory("candidates", 1, ADDRESSABLE);
        assert!(Limits::test_machine()
            .check(&e, true, "use --force to try anyway")
            .is_ok());
    }

    #[test]
    fn meminfo_is_read_in_kibibytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable:   23238632 kB\n";
        assert_eq!(parse_meminfo(text), Some(23_238_632.0 * 1024.0));
        assert_eq!(parse_meminfo("MemAvailable: 12 MB\n"), None);
        assert_eq!(parse_meminfo("MemFree: 12 kB\n"), None);
    }

    #[test]
    fn a_refused_allocation_is_an_error() {
        let v = try_filled(3, 1.5f64, "hidden", 3).unwrap();
        assert_eq!(v, vec![1.5; 3]);
        // 2^61 f64 = 16 EiB: more than any allocator grants (and than isize::MAX bytes).
        let e = try_filled(1usize << 61, 0.0f64, "hidden", "huge").unwrap_err();
        assert!(
            e.to_string()
                .contains("`hidden` = huge: could not allocate 18 EB"),
            "{e}"
        );
    }

    #[test]
    fn sizes_and_durations_read_naturally() {
        assert_eq!(fmt_bytes(512.0), "512 bytes");
        assert_eq!(fmt_bytes(24e9), "24 GB");
        assert_eq!(fmt_bytes(1.5e12), "1.5 TB");
        assert_eq!(fmt_bytes(636e9), "636 GB");
        assert_eq!(fmt_bytes(1.5e30), "1.5e30 bytes");
        assert_eq!(fmt_duration(30.0), "30 seconds");
        assert_eq!(fmt_duration(2400.0), "40 minutes");
        assert_eq!(fmt_duration(18_000.0), "5 hours");
        assert_eq!(fmt_duration(3.0 * 86_400.0), "3 days");
        assert_eq!(fmt_duration(1e20), "3.2e12 years");
    }
}
