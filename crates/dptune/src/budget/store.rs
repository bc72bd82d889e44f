//! [`Store`]: budgets and charges in one SQLite file (see the module doc of `budget`).

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::account::{self, Spent};
use super::schema::{self, sql_err, store_err};
use super::seal::{self, Seal};
use super::{codec, neighbours_name, parse_neighbours};
use crate::error::{check_delta, check_positive, Error, Result};
use crate::privacy::{Guarantee, Neighbours};

/// A named allowance.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// Its name in the store.
    pub name: String,
    /// ε of the allowance.
    pub epsilon: f64,
    /// δ of the allowance (0: pure ε-DP).
    pub delta: f64,
    /// The neighbour relation every charge must be stated under.
    pub neighbours: Neighbours,
    /// When it was created, in seconds since the Unix epoch.
    pub created: i64,
}

/// One committed charge.
#[derive(Debug, Clone, PartialEq)]
pub struct ChargeRecord {
    /// Its position in the budget's history, from 1.
    pub seq: u64,
    /// What was charged.
    pub guarantee: Guarantee,
    /// A human label given by the caller (the CLI stores its command line).
    pub label: String,
    /// The command that charged it.
    pub command: String,
    /// When it was committed, in seconds since the Unix epoch.
    pub time: i64,
}

/// A budget and what it has spent.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// The budget.
    pub budget: Budget,
    /// The composition of its charges at its δ.
    pub spent: Spent,
}

/// An open budget store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// A budget row and its charges, as read and verified inside one transaction.
struct Loaded {
    budget: Budget,
    charges: Vec<ChargeRecord>,
    head: Seal,
}

impl Loaded {
    fn guarantees(&self) -> Vec<Guarantee> {
        self.charges.iter().map(|c| c.guarantee.clone()).collect()
    }

    fn status(&self) -> Result<Status> {
        let b = &self.budget;
        Ok(Status {
            spent: account::spent(b.delta, b.neighbours, &self.guarantees())?,
            budget: b.clone(),
        })
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Checks a budget name: 1 to 128 characters, no control characters.
fn check_name(name: &str) -> Result<()> {
    let n = name.chars().count();
    if !(1..=128).contains(&n) || name.chars().any(char::is_control) {
        return Err(Error::invalid(
            "budget",
            format!("{name:?}"),
            "a budget name has 1 to 128 characters and no control characters",
        ));
    }
    Ok(())
}

impl Store {
    /// Opens the existing store at `path` (see [`super::store_path`]); never creates one.
    pub fn open(path: &Path) -> Result<Self> {
        Ok(Self {
            conn: schema::open(path)?,
            path: path.to_path_buf(),
        })
    }

    /// Opens the store at `path`, creating it (and its folder) if there is no file there.
    pub fn open_or_create(path: &Path) -> Result<Self> {
        Ok(Self {
            conn: schema::open_or_create(path)?,
            path: path.to_path_buf(),
        })
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds a budget of (`epsilon`, `delta`) under `neighbours`. Refuses a name already in use.
    pub fn create(
        &mut self,
        name: &str,
        epsilon: f64,
        delta: f64,
        neighbours: Neighbours,
    ) -> Result<Status> {
        check_name(name)?;
        check_positive("epsilon", epsilon)?;
        check_delta("delta", delta)?;
        let err = sql_err(&self.path);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&err)?;
        let exists: Option<i64> = tx
            .query_row("SELECT 1 FROM budgets WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()
            .map_err(&err)?;
        if exists.is_some() {
            return Err(Error::invalid(
                "budget",
                name,
                format!("a budget of this name exists in {}", self.path.display()),
            ));
        }
        let budget = Budget {
            name: name.to_string(),
            epsilon,
            delta,
            neighbours,
            created: now(),
        };
        let head = seal::genesis(name);
        write_budget(&tx, &budget, 0, &head, false).map_err(&err)?;
        tx.commit().map_err(&err)?;
        Ok(Status {
            spent: account::spent(delta, neighbours, &[])?,
            budget,
        })
    }

    /// Names of all budgets, sorted.
    pub fn names(&self) -> Result<Vec<String>> {
        let err = sql_err(&self.path);
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM budgets ORDER BY name")
            .map_err(&err)?;
        let names = stmt
            .query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(&err)?;
        Ok(names)
    }

    /// The budget `name` and what it has spent.
    pub fn status(&self, name: &str) -> Result<Status> {
        self.read(name)?.status()
    }

    /// The budget `name` and its charges, oldest first.
    pub fn history(&self, name: &str) -> Result<(Budget, Vec<ChargeRecord>)> {
        let l = self.read(name)?;
        Ok((l.budget, l.charges))
    }

    /// Charges `cost` to the budget `name` if it fits with everything charged before, and
    /// commits it before returning; otherwise refuses ([`Error::BudgetExceeded`],
    /// [`Error::NeighboursMismatch`]) and writes nothing. Release only after this returns `Ok`.
    pub fn charge(
        &mut self,
        name: &str,
        cost: &Guarantee,
        label: &str,
        command: &str,
    ) -> Result<Status> {
        let text = codec::encode(cost)?;
        let path = self.path.clone();
        let err = sql_err(&path);
        // One write transaction from the read to the commit: no other charge can slip between
        // the check and the write.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&err)?;
        let mut loaded = load(&tx, &path, name)?;
        let b = loaded.budget.clone();
        if cost.neighbours() != b.neighbours {
            return Err(Error::NeighboursMismatch {
                left: format!("budget `{name}` ({})", b.neighbours),
                right: format!("the charge ({})", cost.neighbours()),
            });
        }
        let allowance = account::allowance(b.epsilon, b.delta, b.neighbours)?;
        let fits = account::replay(&allowance, &loaded.guarantees())
            .and_then(|mut ledger| ledger.charge(cost));
        if let Err(e) = fits {
            // (A stored charge that no longer fits under this build's accounting also means
            // that nothing more fits: it is reported against the new charge.)
            return Err(match e {
                Error::BudgetExceeded { .. } => {
                    let s = loaded.status()?.spent;
                    Error::BudgetExceeded {
                        allowance: format!(
                            "budget `{name}` (eps = {}, delta = {:e})",
                            b.epsilon, b.delta
                        ),
                        spent: format!(
                            "eps = {} at delta = {:e} over {} charges ({})",
                            s.epsilon, s.delta, s.charges, s.route
                        ),
                        requested: cost.to_string(),
                    }
                }
                e => e,
            });
        }
        let seq = loaded.charges.len() as i64 + 1;
        let time = now();
        let link = seal::charge(&seal::ChargeFields {
            prev: &loaded.head,
            budget: name,
            seq,
            guarantee: &text,
            label,
            command,
            time,
        });
        tx.execute(
            "INSERT INTO charges (budget, seq, guarantee, label, command, time, seal)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![name, seq, text, label, command, time, link.as_slice()],
        )
        .map_err(&err)?;
        write_budget(&tx, &b, seq, &link, true).map_err(&err)?;
        tx.commit().map_err(&err)?;
        loaded.charges.push(ChargeRecord {
            seq: seq as u64,
            guarantee: cost.clone(),
            label: label.to_string(),
            command: command.to_string(),
            time,
        });
        loaded.status()
    }

    /// Reads the budget `name` in one read transaction (a consistent snapshot).
    fn read(&self, name: &str) -> Result<Loaded> {
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(sql_err(&self.path))?;
        load(&tx, &self.path, name)
    }
}

/// Inserts (or, with `update`, rewrites) a budget row with its chain state and seal.
fn write_budget(
    conn: &Connection,
    b: &Budget,
    charges: i64,
    head: &[u8],
    update: bool,
) -> rusqlite::Result<()> {
    let neighbours = neighbours_name(b.neighbours);
    let sealed = seal::budget(&seal::BudgetFields {
        name: &b.name,
        epsilon: b.epsilon,
        delta: b.delta,
        neighbours,
        created: b.created,
        charges,
        head,
    });
    let sql = if update {
        "UPDATE budgets SET charges = ?6, head = ?7, seal = ?8
         WHERE name = ?1 AND epsilon = ?2 AND delta = ?3 AND neighbours = ?4 AND created = ?5"
    } else {
        "INSERT INTO budgets (name, epsilon, delta, neighbours, created, charges, head, seal)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
    };
    let n = conn.execute(
        sql,
        params![
            b.name,
            b.epsilon,
            b.delta,
            neighbours,
            b.created,
            charges,
            head,
            sealed.as_slice()
        ],
    )?;
    if n == 1 {
        Ok(())
    } else {
        Err(rusqlite::Error::StatementChangedRows(n))
    }
}

/// Reads and verifies the budget `name` and its charges (module `seal`): any mismatch is a
/// corrupted store, reported as such.
fn load(conn: &Connection, path: &Path, name: &str) -> Result<Loaded> {
    let err = sql_err(path);
    let corrupt = |what: String| {
        store_err(
            path,
            format!("the file is corrupted: {what}; it was left as it is"),
        )
    };
    let row = conn
        .query_row(
            "SELECT epsilon, delta, neighbours, created, charges, head, seal
             FROM budgets WHERE name = ?1",
            [name],
            |r| {
                Ok((
                    r.get::<_, f64>(0)?,
                    r.get::<_, f64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, Vec<u8>>(5)?,
                    r.get::<_, Vec<u8>>(6)?,
                ))
            },
        )
        .optional()
        .map_err(&err)?;
    let Some((epsilon, delta, neighbours_text, created, count, head, sealed)) = row else {
        return Err(Error::invalid(
            "budget",
            name,
            format!(
                "no budget of this name in {} (`dptune budget list` shows them)",
                path.display()
            ),
        ));
    };
    let expected = seal::budget(&seal::BudgetFields {
        name,
        epsilon,
        delta,
        neighbours: &neighbours_text,
        created,
        charges: count,
        head: &head,
    });
    if sealed != expected {
        return Err(corrupt(format!(
            "the row of budget `{name}` fails its checksum"
        )));
    }
    let neighbours = parse_neighbours(&neighbours_text)
        .ok_or_else(|| corrupt(format!("unknown neighbour relation {neighbours_text:?}")))?;
    let budget = Budget {
        name: name.to_string(),
        epsilon,
        delta,
        neighbours,
        created,
    };
    let mut stmt = conn
        .prepare(
            "SELECT seq, guarantee, label, command, time, seal FROM charges
             WHERE budget = ?1 ORDER BY seq",
        )
        .map_err(&err)?;
    let rows = stmt
        .query_map([name], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, Vec<u8>>(5)?,
            ))
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(&err)?;
    let mut prev = seal::genesis(name);
    let mut charges = Vec::with_capacity(rows.len());
    for (i, (seq, text, label, command, time, sealed)) in rows.into_iter().enumerate() {
        let link = seal::charge(&seal::ChargeFields {
            prev: &prev,
            budget: name,
            seq,
            guarantee: &text,
            label: &label,
            command: &command,
            time,
        });
        if seq != i as i64 + 1 || sealed != link {
            return Err(corrupt(format!(
                "charge {} of budget `{name}` fails its checksum",
                i + 1
            )));
        }
        let guarantee = codec::decode(&text)
            .map_err(|e| corrupt(format!("charge {seq} of budget `{name}`: {}", e.0)))?;
        if guarantee.neighbours() != neighbours {
            return Err(corrupt(format!(
                "charge {seq} of budget `{name}` has another neighbour relation"
            )));
        }
        charges.push(ChargeRecord {
            seq: seq as u64,
            guarantee,
            label,
            command,
            time,
        });
        prev = link;
    }
    if charges.len() as i64 != count || prev.as_slice() != head.as_slice() {
        return Err(corrupt(format!(
            "budget `{name}` records {count} charges, {} were found intact",
            charges.len()
        )));
    }
    Ok(Loaded {
        budget,
        charges,
        head: prev,
    })
}
