//! The command line's edge: how values are parsed and how a library error names the flag the
//! user typed.
//!
//! * Every option that takes a value accepts negative numbers as values (`--signal-sd -1` reaches
//!   the validation and its real message, not clap's "unexpected argument" and its `-- -1` tip).
//! * A library [`Error::InvalidParameter`] names the library's parameter (`rho`, `sigma`, `mu`,
//!   ...). At the edge it is renamed to the flag of the command that was run: a flag whose id is
//!   the parameter's name (validation functions check flags under their ids), else the entry of
//!   [`DERIVED`] for parameters computed from flags. The library's errors are not rewritten; the
//!   name, value and reason are reassembled around the flag.
//! * Value-dependent refusals (a flag that another flag's value makes meaningless) are written
//!   with [`ignored`], so that every such message reads the same.
//! * The neighbour relation is typed as it is printed (`add_remove`, `replace_one`:
//!   [`NeighboursArg`]), with the dash spellings of earlier releases kept as hidden aliases so
//!   that existing scripts keep working.

use std::sync::OnceLock;

use clap::{ArgMatches, Command, CommandFactory, ValueEnum};
use dptune::privacy::Neighbours;
use dptune::Error;

use crate::report::{fmt_param, Failure};

/// Library parameters that are computed from flags rather than typed, per command (the path of
/// subcommand names): (command, parameter, the flag(s) it comes from).
const DERIVED: &[(&str, &str, &str)] = &[
    ("account gaussian", "sigma", "--noise-multiplier"),
    ("account gaussian", "rho", "--noise-multiplier"),
    ("account dpsgd", "q", "--sampling-rate"),
    ("account dpsgd", "sigma", "--noise-multiplier"),
    ("account dpsgd", "times", "--steps"),
    ("account calibrate-dpsgd", "q", "--sampling-rate"),
    ("account calibrate-dpsgd", "times", "--steps"),
    ("account repeat", "q", "--sampling-rate"),
    ("account repeat", "sigma", "--noise-multiplier"),
    ("account repeat", "mu", "--mean"),
    ("select", "t", "--epsilon and --beta"),
    ("select", "sigma", "--epsilon and --delta"),
    ("select", "scale", "--epsilon and --sensitivity"),
    ("select", "rho", "--epsilon and --delta"),
    ("tune", "gamma", "--mean-runs"),
    ("tune", "mean", "--mean-runs"),
    ("tune", "fraction", "--tune-fraction or --train-fraction"),
    ("gp", "signal_var", "--signal-sd"),
    ("gp", "noise_var", "--noise-ratio"),
    ("gp", "lengthscale", "--lengthscales"),
    ("gp", "range", "--y-range"),
    ("gp", "fraction", "--test-frac"),
    ("gp", "rho", "--eps-select"),
    (
        "federated simulate",
        "mu",
        "--epsilon, --delta and --min-survivors",
    ),
    ("study", "rho", "--epsilon(s), --n and --bound"),
    ("study", "scale", "--n and --bound"),
    ("study", "gamma", "--mean-runs"),
    ("study", "mean", "--mean-runs"),
    ("study", "sensitivity", "--n and --bound"),
];

/// Neighbour relation on the command line, spelled as every output spells it.
#[derive(Clone, Copy, ValueEnum)]
pub enum NeighboursArg {
    /// Add or remove one record (the dataset size is private).
    #[value(name = "add_remove", alias = "add-remove")]
    AddRemove,
    /// Replace one record (the dataset size is public).
    #[value(name = "replace_one", aliases = ["replace-one", "replace"])]
    ReplaceOne,
}

impl From<NeighboursArg> for Neighbours {
    fn from(a: NeighboursArg) -> Self {
        match a {
            NeighboursArg::AddRemove => Neighbours::AddRemove,
            NeighboursArg::ReplaceOne => Neighbours::Replace,
        }
    }
}

/// The command line with negative numbers accepted as values of every option that takes one.
pub fn command(cmd: Command) -> Command {
    cmd.mut_args(|a| {
        if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    })
    .mut_subcommands(command)
}

/// The subcommand path that was run (e.g. `account dpsgd`), set once by `main` after parsing.
static PATH: OnceLock<Vec<String>> = OnceLock::new();

/// Records the names of the subcommands that were run, for [`describe`].
pub fn set_path(matches: &ArgMatches) {
    let mut out = Vec::new();
    let mut m = matches;
    while let Some((name, sub)) = m.subcommand() {
        out.push(name.to_string());
        m = sub;
    }
    let _ = PATH.set(out);
}

/// The flag(s) a library parameter `name` stands for in the command at `path`: a flag whose id
/// is `name` (true), else the [`DERIVED`] entry (false).
fn flag_for(path: &[String], name: &str) -> Option<(String, bool)> {
    let cmd = command(crate::Cli::command());
    let mut leaf = &cmd;
    for p in path {
        leaf = leaf.find_subcommand(p)?;
    }
    if let Some(long) = leaf
        .get_arguments()
        .find(|a| a.get_id() == name)
        .and_then(|a| a.get_long())
    {
        return Some((format!("`--{long}`"), true));
    }
    let joined = path.join(" ");
    DERIVED
        .iter()
        .find(|(c, p, _)| *c == joined && *p == name)
        .map(|(_, _, f)| (f.to_string(), false))
}

/// A value as the library rendered it, with numbers in the one text format ([`fmt_param`]):
/// never hundreds of digits.
fn value_text(value: &str) -> String {
    value
        .parse::<f64>()
        .map_or_else(|_| value.to_string(), fmt_param)
}

/// The message for a library error: an invalid parameter names the flag the user typed in the
/// command that runs (the library's own message otherwise, or when no flag matches).
pub fn describe(e: &Error) -> String {
    let Error::InvalidParameter {
        name,
        value,
        reason,
    } = e
    else {
        return e.to_string();
    };
    let value = value_text(value);
    let path = PATH.get().map_or(&[][..], Vec::as_slice);
    match flag_for(path, name) {
        Some((flag, true)) => format!("invalid value {value} for {flag}: {reason}"),
        Some((flag, false)) => {
            format!("invalid value for {flag} (it gives {name} = {value}): {reason}")
        }
        None => format!("invalid parameter `{name}` = {value}: {reason}"),
    }
}

impl From<Error> for Failure {
    /// Exit 3 for a privacy refusal (budget exceeded, no release), 2 for bad input; the
    /// message names the flag ([`describe`]).
    fn from(e: Error) -> Self {
        Self {
            code: if e.is_refusal() { 3 } else { 2 },
            message: describe(&e),
        }
    }
}

/// A refusal of `flag`, which `because` makes meaningless (so it would be silently dropped).
pub fn ignored(flag: &str, because: &str) -> Failure {
    Failure::input(format!(
        "`{flag}` has no effect {because}; remove it (nothing was read or charged)"
    ))
}

/// Refuses the first of `flags` (name, whether it was given) that was given when this run does
/// not `read` them, with [`ignored`] and `because`: the one rule of every command's check for
/// flags that another flag's value makes meaningless.
pub fn refuse_unread(read: bool, because: &str, flags: &[(&str, bool)]) -> Result<(), Failure> {
    match flags.iter().find(|(_, given)| *given) {
        Some((flag, _)) if !read => Err(ignored(flag, because)),
        _ => Ok(()),
    }
}
