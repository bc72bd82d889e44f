//! The budget store in one process: charges, refusals, and damaged files (issue 17 §1).

use std::path::{Path, PathBuf};

use dptune::budget::Store;
use dptune::privacy::{Guarantee, Neighbours};
use dptune::Error;

/// A fresh folder under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let p = std::env::temp_dir().join(format!("dptune-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn zcdp(rho: f64) -> Guarantee {
    Guarantee::zcdp(rho, Neighbours::AddRemove).unwrap()
}

/// A store with two budgets and a few charges of several kinds, closed.
fn populated(dir: &Path) -> PathBuf {
    let path = dir.join("budget.sqlite");
    let mut s = Store::open_or_create(&path).unwrap();
    s.create("study", 4.0, 1e-5, Neighbours::AddRemove).unwrap();
    s.create("replace", 2.0, 0.0, Neighbours::Replace).unwrap();
    for i in 0..6 {
        s.charge("study", &zcdp(0.01 * (i + 1) as f64), "test", "t")
            .unwrap();
    }
    let em = Guarantee::pure(0.25, Neighbours::Replace)
        .unwrap()
        .and(Guarantee::zcdp(0.25 * 0.25 / 8.0, Neighbours::Replace).unwrap())
        .unwrap();
    s.charge("replace", &em, "em", "select").unwrap();
    path
}

#[test]
fn charges_persist_and_compose() {
    let dir = TempDir::new("persist");
    let path = populated(&dir.0);
    let s = Store::open(&path).unwrap();
    assert_eq!(s.names().unwrap(), ["replace", "study"]);
    let st = s.status("study").unwrap();
    assert_eq!(st.spent.charges, 6);
    assert_eq!(st.spent.route, "zcdp");
    // rho = 0.21 in all, converted once at delta = 1e-5.
    let once = zcdp(0.21).epsilon(1e-5).unwrap();
    assert!(
        (st.spent.epsilon - once).abs() < 1e-9,
        "{}",
        st.spent.epsilon
    );
    let (b, h) = s.history("study").unwrap();
    assert_eq!((b.epsilon, b.delta, h.len()), (4.0, 1e-5, 6));
    assert_eq!(h[2].guarantee, zcdp(0.03));
    assert_eq!(h[5].seq, 6);
    // A pure budget (delta = 0) composes pure epsilons: 0.25.
    let r = s.status("replace").unwrap();
    assert_eq!((r.spent.epsilon, r.spent.route.as_str()), (0.25, "pure"));
}

#[test]
fn refusals_write_nothing() {
    let dir = TempDir::new("refuse");
    let path = populated(&dir.0);
    let mut s = Store::open(&path).unwrap();
    let before = s.history("study").unwrap();
    // Another neighbour relation.
    let other = Guarantee::zcdp(0.001, Neighbours::Replace).unwrap();
    assert!(matches!(
        s.charge("study", &other, "x", "t"),
        Err(Error::NeighboursMismatch { .. })
    ));
    // A charge that does not fit: rho = 0.21 spent, a budget of eps 4 at 1e-5 holds about
    // rho = 0.39, so 0.2 more does not fit, 0.1 does.
    let e = s.charge("study", &zcdp(0.2), "x", "t").unwrap_err();
    assert!(e.is_refusal(), "{e}");
    assert!(e.to_string().contains("budget `study`"), "{e}");
    assert_eq!(s.history("study").unwrap(), before);
    s.charge("study", &zcdp(0.1), "x", "t").unwrap();
    // Bad input: no such budget, a duplicate name, a bad allowance.
    assert!(matches!(
        s.charge("nope", &zcdp(0.1), "x", "t"),
        Err(Error::InvalidParameter { name: "budget", .. })
    ));
    assert!(s.create("study", 1.0, 1e-5, Neighbours::AddRemove).is_err());
    for (eps, delta) in [(0.0, 1e-5), (f64::NAN, 1e-5), (1.0, 1.0), (1.0, -1e-9)] {
        assert!(matches!(
            s.create("new", eps, delta, Neighbours::AddRemove),
            Err(Error::InvalidParameter { .. })
        ));
    }
    assert!(s.create("", 1.0, 1e-5, Neighbours::AddRemove).is_err());
    // A pure budget refuses a zCDP-only charge (it cannot be stated as pure eps).
    assert!(s
        .charge(
            "replace",
            &Guarantee::zcdp(0.001, Neighbours::Replace).unwrap(),
            "x",
            "t"
        )
        .unwrap_err()
        .is_refusal());
}

#[test]
fn opening_never_creates_or_resets() {
    let dir = TempDir::new("open");
    let missing = dir.0.join("none.sqlite");
    assert!(matches!(Store::open(&missing), Err(Error::Store { .. })));
    assert!(!missing.exists());
    let empty = dir.0.join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    for r in [Store::open(&empty), Store::open_or_create(&empty)] {
        let e = r.err().unwrap();
        assert!(e.to_string().contains("empty"), "{e}");
    }
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    // Some other program's SQLite database is not taken over.
    let theirs = dir.0.join("theirs.sqlite");
    let c = rusqlite::Connection::open(&theirs).unwrap();
    c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(c);
    let bytes = std::fs::read(&theirs).unwrap();
    for r in [Store::open(&theirs), Store::open_or_create(&theirs)] {
        let e = r.err().unwrap();
        assert!(e.to_string().contains("not a dptune budget store"), "{e}");
    }
    assert_eq!(std::fs::read(&theirs).unwrap(), bytes, "left as it was");
    // A text file.
    let text = dir.0.join("notes.txt");
    std::fs::write(&text, "not a database at all, just some words\n".repeat(40)).unwrap();
    assert!(matches!(Store::open(&text), Err(Error::Store { .. })));
    // A store of a newer schema.
    let path = populated(&dir.0);
    let c = rusqlite::Connection::open(&path).unwrap();
    c.pragma_update(None, "user_version", 99).unwrap();
    drop(c);
    let e = Store::open(&path).err().unwrap();
    assert!(e.to_string().contains("schema version 99"), "{e}");
}

/// Every truncation of a store is an error that leaves the file as it is.
#[test]
fn truncated_store_is_a_clear_error() {
    let dir = TempDir::new("trunc");
    let path = populated(&dir.0);
    let whole = std::fs::read(&path).unwrap();
    let page = 4096;
    assert!(whole.len() >= 3 * page, "{}", whole.len());
    let mut cuts: Vec<usize> = vec![0, 1, 50, 99, 100, 512, page - 1, page, page + 1];
    cuts.extend((2..whole.len() / page).map(|k| k * page));
    cuts.extend([whole.len() - page, whole.len() - 1]);
    for cut in cuts {
        std::fs::write(&path, &whole[..cut]).unwrap();
        let e = match Store::open(&path) {
            Err(e) => e,
            Ok(s) => s.status("study").err().unwrap_or_else(|| {
                panic!("a store truncated to {cut} of {} bytes opened", whole.len())
            }),
        };
        assert!(matches!(e, Error::Store { .. }), "cut {cut}: {e}");
        assert_eq!(std::fs::read(&path).unwrap(), &whole[..cut], "cut {cut}");
    }
}

/// Every single-byte change is either found (a store error) or harmless (the same budgets and
/// histories read back): never a different history.
#[test]
fn corrupted_store_is_found_never_misread() {
    let dir = TempDir::new("corrupt");
    let path = populated(&dir.0);
    let whole = std::fs::read(&path).unwrap();
    let read_all = |p: &Path| -> Result<Vec<_>, Error> {
        let s = Store::open(p)?;
        s.names()?.iter().map(|n| s.history(n)).collect()
    };
    let expected = read_all(&path).unwrap();
    let (mut found, mut harmless) = (0, 0);
    // Every 11th byte (all pages, headers and cells) flipped in its low bit; at the time of
    // writing 202 of 1862 flips are found, the others hit unused space.
    for at in (0..whole.len()).step_by(11) {
        let mut bytes = whole.clone();
        bytes[at] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        match read_all(&path) {
            Err(Error::Store { .. }) => found += 1,
            Err(e) => panic!("byte {at}: an error of the wrong kind: {e}"),
            Ok(got) => {
                assert_eq!(got, expected, "byte {at} changed what was read");
                harmless += 1;
            }
        }
    }
    // The check can fail: the flips that matter (headers, cells) are found.
    assert!(found >= 20, "found {found}, harmless {harmless}");
    // A flip inside a stored guarantee's text (SQLite alone would not notice it).
    let at = find(&whole, b"rho = ").unwrap() + 6;
    let mut bytes = whole.clone();
    bytes[at] = b'9';
    std::fs::write(&path, &bytes).unwrap();
    let e = read_all(&path).unwrap_err();
    assert!(e.to_string().contains("checksum"), "{e}");
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
