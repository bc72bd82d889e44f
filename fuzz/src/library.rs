//! In-process fuzz entry points into the `dptune` library, one per input kind.
//!
//! Each function takes arbitrary bytes and drives one public parser with them. A parser may
//! refuse the input with an error (that is the point); it must never panic, so every panic
//! here is a bug. The same functions are used by the libFuzzer targets in `fuzz_targets/` and
//! by the stable replay test `crates/dptune/tests/fuzz_replay.rs`, which includes this file.

use std::sync::OnceLock;

use dptune::data::{parse_csv, read_scores, Schema};
use dptune::federated::secagg::{Client, SecAggParams, Server};
use dptune::gp::read_gp_data;
use dptune::noise::SecureRng;
use dptune::select::Goal;
use dptune::study::{
    run_study, table_from_csv, table_from_json, Columns, ScoreModel, StudyOptions,
};

/// Separates the schema TOML from the CSV text in a `csv_schema` input.
const SEPARATOR: &[u8] = b"\n---\n";

/// The schema used when a `csv_schema` input has no [`SEPARATOR`]: a class label and one
/// feature of each kind, so the CSV half alone reaches every encoding path.
const DEFAULT_SCHEMA: &str = r#"
[label]
kind = "class"
column = "y"
values = ["no", "yes"]

[[feature]]
kind = "numeric"
column = "a"
low = 0
high = 1
transform = "log1p"

[[feature]]
kind = "categorical"
column = "c"
values = ["r", "g"]
"#;

/// CSV + schema loader: `SCHEMA_TOML \n---\n CSV`, or CSV alone under [`DEFAULT_SCHEMA`].
/// The schema goes through the same serde path as `dptune tune --schema`.
pub fn csv_schema(data: &[u8]) {
    let (schema_text, csv) = match data.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        Some(at) => (
            String::from_utf8_lossy(&data[..at]).into_owned(),
            &data[at + SEPARATOR.len()..],
        ),
        None => (DEFAULT_SCHEMA.to_owned(), data),
    };
    let Ok(schema) = toml::from_str::<Schema>(&schema_text) else {
        return;
    };
    if schema.validate().is_ok() {
        let _ = (schema.dim(), schema.max_norm());
    }
    let _ = parse_csv(csv, "fuzz", &schema);
}

/// `dptune select` input: byte 0 odd → the rest is a CSV file read with `--column score`, even
/// → one score a line (the seeds are shared with the CLI replay, where byte 0 also picks the
/// mechanism).
pub fn select(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let column = (mode & 1 == 1).then_some("score");
    let _ = read_scores(rest, "fuzz", column);
}

/// The column choices (`--x`, `--y`) of the `gp` target: by index, two inputs, by name, and the
/// output among the inputs (refused).
const GP_COLUMNS: [(&[&str], &str); 4] = [
    (&["0"], "1"),
    (&["0", "2"], "1"),
    (&["x"], "y"),
    (&["1", "0"], "1"),
];

/// `dptune gp --data` loader: bits 1-2 of byte 0 pick the columns from [`GP_COLUMNS`], the rest
/// is the CSV file (the seeds are shared with the CLI replay, where bit 0 picks the input
/// scaling).
pub fn gp(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (x, y) = GP_COLUMNS[(mode as usize >> 1) % GP_COLUMNS.len()];
    let x: Vec<String> = x.iter().map(|s| s.to_string()).collect();
    let _ = read_gp_data(rest, "fuzz", &x, y);
}

/// Study tables. The first byte picks the goal (bit 0) and the format (bit 1): CSV, whose first
/// line names the score column and optionally, after a comma, the test column; or a JSON object
/// `{configuration: score}` (`study::table_from_json`, as `dptune study` reads it). A table that loads is run through a
/// small study (two repetitions at ε = 1), as `dptune study` does.
pub fn study(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let goal = if mode & 1 == 0 {
        Goal::Maximize
    } else {
        Goal::Minimize
    };
    let table = if mode & 2 == 0 {
        let text = String::from_utf8_lossy(rest);
        let (first, csv) = text.split_once('\n').unwrap_or((&text, ""));
        let (score, test) = match first.split_once(',') {
            Some((s, t)) => (s.to_owned(), Some(t.to_owned())),
            None => (first.to_owned(), None),
        };
        table_from_csv(csv.as_bytes(), "fuzz", &Columns { score, test, goal })
    } else {
        table_from_json(rest, "fuzz", goal)
    };
    let Ok(table) = table else {
        return;
    };
    let model = ScoreModel::new(100, 1.0, true).expect("valid fuzz model");
    let options = StudyOptions {
        epsilons: vec![1.0],
        repetitions: 2,
        ..StudyOptions::default()
    };
    let _ = run_study(&table, &model, &options, None);
}

/// Clients, dimension and threshold of the fuzzed SecAgg round: small, so that an honest
/// prefix of the protocol costs little per input.
const CLIENTS: usize = 3;
const DIM: usize = 2;
const THRESHOLD: usize = 2;
/// The last SecAgg stage (unmask).
const LAST_STAGE: usize = 4;

fn params() -> SecAggParams {
    SecAggParams::complete(7, CLIENTS, DIM, THRESHOLD).expect("valid fuzz parameters")
}

/// Client `i` of the fuzzed round; its keys and seeds are the same on every call.
fn client(i: usize) -> Client {
    let streams = SecureRng::seeded(17).streams();
    Client::new(i, params(), vec![i as u32 + 1; DIM], streams.get(i as u64)).expect("valid client")
}

/// Client `c`'s answer in `stage` (0 keys, 1 shares, 2 masked input, 3 attestation, 4 unmask)
/// to `msg`.
fn answer(c: &mut Client, stage: usize, msg: &[u8]) -> Result<Vec<u8>, dptune::Error> {
    match stage {
        0 => c.advertise_keys(),
        1 => c.share_keys(msg),
        2 => c.masked_input(msg),
        3 => c.attest(msg),
        _ => c.unmask(msg),
    }
}

/// The messages of one honest round, computed once: the targets replay them into a fresh
/// server or client, which skips everyone else's key generation and encryption per input.
struct Transcript {
    /// `to_server[stage][i]`: client i's message in `stage` (0 keys … 4 unmask).
    to_server: Vec<Vec<Vec<u8>>>,
    /// `to_client0[stage]`: the server's message to client 0 that `stage` answers (empty for
    /// stage 0, which answers nothing).
    to_client0: Vec<Vec<u8>>,
}

fn transcript() -> &'static Transcript {
    static TRANSCRIPT: OnceLock<Transcript> = OnceLock::new();
    TRANSCRIPT.get_or_init(|| {
        let mut clients: Vec<Client> = (0..CLIENTS).map(client).collect();
        let mut server = Server::new(params());
        let mut inbox = vec![Vec::new(); CLIENTS];
        let mut t = Transcript {
            to_server: Vec::new(),
            to_client0: Vec::new(),
        };
        for stage in 0..=LAST_STAGE {
            let sent: Vec<Vec<u8>> = clients
                .iter_mut()
                .zip(&inbox)
                .map(|(c, m)| answer(c, stage, m).expect("honest client answers"))
                .collect();
            for m in &sent {
                server.receive(m).expect("honest message accepted");
            }
            t.to_server.push(sent);
            t.to_client0.push(std::mem::take(&mut inbox[0]));
            if stage < LAST_STAGE {
                for (to, bytes) in server.advance().expect("honest round advances") {
                    inbox[to as usize] = bytes;
                }
            }
        }
        t
    })
}

/// The fuzzed message: `mode` odd → `rest` patches `honest` (triples of little-endian offset
/// and XOR mask; a trailing byte truncates); even → `rest` verbatim.
fn fuzzed(mode: u8, rest: &[u8], honest: &[u8]) -> Vec<u8> {
    if mode & 1 == 0 || honest.is_empty() {
        return rest.to_vec();
    }
    let mut m = honest.to_vec();
    let mut triples = rest.chunks_exact(3);
    for t in &mut triples {
        let at = u16::from_le_bytes([t[0], t[1]]) as usize % m.len();
        m[at] ^= t[2];
    }
    if let [cut, ..] = triples.remainder() {
        m.truncate(*cut as usize * m.len() / 256);
    }
    m
}

/// SecAgg client decoder: byte 0 picks the stage (1 keys list, 2 forwarded shares, 3 survivor
/// set, 4 forwarded attestations) and byte 1 the mode of [`fuzzed`]; client 0 goes honestly through the earlier
/// stages, then receives the fuzzed server message.
pub fn secagg_client(data: &[u8]) {
    let [stage, mode, rest @ ..] = data else {
        return;
    };
    let stage = (*stage as usize % LAST_STAGE) + 1;
    let t = transcript();
    let mut c = client(0);
    for (s, msg) in t.to_client0[..stage].iter().enumerate() {
        answer(&mut c, s, msg).expect("honest client answers");
    }
    let _ = answer(&mut c, stage, &fuzzed(*mode, rest, &t.to_client0[stage]));
}

/// SecAgg server decoder: byte 0 picks the stage (0 keys … 4 unmask) and byte 1 the mode of
/// [`fuzzed`]; the earlier stages are honest, in the picked stage client 0's message is
/// replaced by the fuzzed one and the others are honest, then the server closes the stage.
pub fn secagg_server(data: &[u8]) {
    let [stage, mode, rest @ ..] = data else {
        return;
    };
    let stage = *stage as usize % (LAST_STAGE + 1);
    let t = transcript();
    let mut server = Server::new(params());
    for sent in &t.to_server[..stage] {
        for m in sent {
            server.receive(m).expect("honest message accepted");
        }
        server.advance().expect("honest round advances");
    }
    let _ = server.receive(&fuzzed(*mode, rest, &t.to_server[stage][0]));
    for m in &t.to_server[stage][1..] {
        let _ = server.receive(m);
    }
    if stage == LAST_STAGE {
        let _ = server.finish();
    } else {
        let _ = server.advance();
    }
}
