//! Progress of a long command on standard error, leaking nothing about the private data.
//!
//! Every command that can run for seconds or more shows it (`tune`, `gp`, `federated simulate`,
//! `study`, and the `account` subcommands that compute a privacy loss distribution or search).
//!
//! On a terminal: a spinner (indicatif) with the stage's name, cleared at the end; it may show
//! details that only the person at the terminal sees (the final fit's epoch), and it turns
//! with the clock ([`SPIN`]), not with the runs.
//!
//! Anywhere else (a log file, a pipe, a CI job): plain lines that a log keeps,
//! * one when each public stage starts (`dptune tune: reading data`, `…: tuning`,
//!   `…: final fit`), the stages every run of the command goes through in the same order, named
//!   by the command, never by the data;
//! * a heartbeat every [`HEARTBEAT`] of wall-clock time since the start, always the same text
//!   (`dptune tune: still running`), so that hours without output are not mistaken for a hang.
//!
//! No line carries a number: no record count, no score, no number of candidate runs K or of
//! surviving clients, no per-run or elapsed time. What plain lines cannot hide is when they
//! appear: the number of heartbeats, and the gaps between stage lines in a log that timestamps
//! them, follow the run time, which reveals K (and grows with the data size). That is the
//! timing channel of the run time itself, which the curator running the command sees anyway:
//! docs/PRIVACY.md, "Trust model and timing" (keep such logs with the curator, or use `--cap`).

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::output;

/// Time between two heartbeat lines.
pub const HEARTBEAT: Duration = Duration::from_secs(60);

/// Time between two turns of the spinner on a terminal.
const SPIN: Duration = Duration::from_millis(200);

/// Where plain lines go (standard error, or a test's buffer).
type Sink = Arc<dyn Fn(&str) + Send + Sync>;

/// The progress display of one command; stopped when dropped.
pub struct Progress {
    command: &'static str,
    /// The current stage's name.
    stage: Mutex<String>,
    display: Display,
}

enum Display {
    Spinner(ProgressBar),
    Lines {
        sink: Sink,
        /// Dropping the sender stops the heartbeat thread.
        stop: Option<Sender<()>>,
        heartbeat: Option<JoinHandle<()>>,
    },
}

impl Progress {
    /// The display for `command` (e.g. `dptune tune`): a spinner when standard error is a
    /// terminal, plain lines otherwise.
    pub fn new(command: &'static str) -> Progress {
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
                bar.set_style(style);
            }
            bar.enable_steady_tick(SPIN);
            Progress {
                command,
                stage: Mutex::new(String::new()),
                display: Display::Spinner(bar),
            }
        } else {
            Progress::lines(command, HEARTBEAT, Arc::new(output::note))
        }
    }

    /// Plain lines into `sink`, a heartbeat every `every`.
    fn lines(command: &'static str, every: Duration, sink: Sink) -> Progress {
        let (stop, stopped) = mpsc::channel::<()>();
        let beat = Arc::clone(&sink);
        let heartbeat = std::thread::spawn(move || {
            let start = Instant::now();
            let mut next = start + every;
            // Wakes at fixed times since the start; stops when the sender is dropped.
            while let Err(RecvTimeoutError::Timeout) =
                stopped.recv_timeout(next.saturating_duration_since(Instant::now()))
            {
                beat(&format!("{command}: still running"));
                next += every;
            }
        });
        Progress {
            command,
            stage: Mutex::new(String::new()),
            display: Display::Lines {
                sink,
                stop: Some(stop),
                heartbeat: Some(heartbeat),
            },
        }
    }

    /// A public stage starts. Naming the current stage again shows nothing, so a callback
    /// called once per unit of work (from any thread) may name its stage every time.
    pub fn stage(&self, name: &str) {
        let Ok(mut current) = self.stage.lock() else {
            return;
        };
        if *current == name {
            return;
        }
        name.clone_into(&mut current);
        match &self.display {
            Display::Spinner(bar) => bar.set_message(name.to_string()),
            Display::Lines { sink, .. } => sink(&format!("{}: {name}", self.command)),
        }
    }

    /// A detail of the current stage, shown on a terminal only (see the module doc).
    pub fn detail(&self, text: &str) {
        if let Display::Spinner(bar) = &self.display {
            let stage = self.stage.lock().map(|s| s.clone()).unwrap_or_default();
            bar.set_message(format!("{stage}: {text}"));
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        match &mut self.display {
            Display::Spinner(bar) => bar.finish_and_clear(),
            Display::Lines {
                stop, heartbeat, ..
            } => {
                drop(stop.take());
                if let Some(h) = heartbeat.take() {
                    let _ = h.join();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder() -> (Arc<Mutex<Vec<String>>>, Sink) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = Arc::clone(&seen);
        let sink: Sink = Arc::new(move |line: &str| into.lock().unwrap().push(line.to_string()));
        (seen, sink)
    }

    #[test]
    fn plain_lines_name_the_stages_and_beat_with_the_same_text() {
        let (seen, sink) = recorder();
        let p = Progress::lines("dptune tune", Duration::from_millis(40), sink);
        p.stage("tuning");
        p.detail("epoch 3/10");
        p.stage("tuning");
        std::thread::sleep(Duration::from_millis(150));
        p.stage("final fit");
        p.stage("final fit");
        drop(p);
        let lines = seen.lock().unwrap().clone();
        assert_eq!(
            lines.first().map(String::as_str),
            Some("dptune tune: tuning")
        );
        assert_eq!(
            lines.last().map(String::as_str),
            Some("dptune tune: final fit")
        );
        let beats = &lines[1..lines.len() - 1];
        // 150 ms at one beat per 40 ms: 3 beats unless the machine stalls the thread.
        assert!(!beats.is_empty(), "{lines:?}");
        assert!(
            beats.iter().all(|b| b == "dptune tune: still running"),
            "{lines:?}"
        );
        // The detail (a terminal-only number) never reaches the lines.
        assert!(
            lines.iter().all(|l| !l.contains(char::is_numeric)),
            "{lines:?}"
        );
    }

    #[test]
    fn the_heartbeat_stops_with_the_display() {
        let (seen, sink) = recorder();
        let p = Progress::lines("dptune tune", Duration::from_millis(20), sink);
        drop(p);
        let after = seen.lock().unwrap().len();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(seen.lock().unwrap().len(), after);
    }
}
