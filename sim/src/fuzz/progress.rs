//! Progress of a fuzzing campaign while the target runs: libFuzzer's log, followed as it grows,
//! shown as a bar on a terminal and as a line every [`PROGRESS_LINE_S`] seconds elsewhere (a CI
//! log), and its coverage sampled every [`SAMPLE_S`] seconds for the report's page. A thread of `histsim fuzz run`, outside any simulated world; it only reads the log.

use super::coverage_series::{CoveragePoint, CoverageSeries};
use super::stats::{parse, LibFuzzerStats};
use super::target::COUNTS_PREFIX;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Seconds between progress lines when stderr is not a terminal.
const PROGRESS_LINE_S: u64 = 60;

/// Seconds between samples of the log (coverage over time, the terminal's bar).
const SAMPLE_S: u64 = 1;

/// The progress thread of one run; [`FuzzProgress::finish`] ends it at once and hands back the
/// coverage it sampled.
pub struct FuzzProgress {
    stop: Sender<()>,
    thread: JoinHandle<CoverageSeries>,
}

impl FuzzProgress {
    /// Follows `log` (libFuzzer's stderr, being written) for a run of `budget_s` seconds.
    pub fn start(log: PathBuf, budget_s: u64) -> FuzzProgress {
        let (stop, stopped) = channel::<()>();
        let thread = std::thread::spawn(move || {
            let terminal = std::io::stderr().is_terminal();
            let bar = if terminal {
                let bar = ProgressBar::new(budget_s);
                bar.set_style(
                    ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                );
                bar
            } else {
                ProgressBar::hidden()
            };
            let start = Instant::now();
            let mut log = LogFollower::new(log);
            let mut series = CoverageSeries::default();
            let mut printed_s = 0;
            // A message or a closed channel both mean the run is over.
            while let Err(RecvTimeoutError::Timeout) =
                stopped.recv_timeout(Duration::from_secs(SAMPLE_S))
            {
                let elapsed_s = start.elapsed().as_secs();
                let stats = log.read_new();
                if let Some(point) = point_of(&stats, elapsed_s) {
                    series.offer(point);
                }
                let line = status_text(&stats, elapsed_s, budget_s);
                if terminal {
                    bar.set_position(elapsed_s.min(budget_s));
                    bar.set_message(line);
                } else if elapsed_s >= printed_s + PROGRESS_LINE_S {
                    printed_s = elapsed_s;
                    eprintln!("progress: {line}");
                }
            }
            bar.finish_and_clear();
            series
        });
        FuzzProgress { stop, thread }
    }

    /// Stops the thread and clears the bar; returns the coverage sampled so far.
    pub fn finish(self) -> CoverageSeries {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or_default()
    }
}

/// The coverage `stats` show at `at_s`, once the log has shown edges and features.
pub fn point_of(stats: &LibFuzzerStats, at_s: u64) -> Option<CoveragePoint> {
    Some(CoveragePoint {
        at_s,
        edges: stats.edges?,
        features: stats.features?,
    })
}

/// Reads what a log gained since the last read, keeping its last libFuzzer status line and
/// the target's last counts line (the rest of a long campaign's log is not kept).
struct LogFollower {
    path: PathBuf,
    offset: u64,
    /// The bytes after the last line break read.
    partial: Vec<u8>,
    last_status: Option<String>,
    last_counts: Option<String>,
}

impl LogFollower {
    fn new(path: PathBuf) -> LogFollower {
        LogFollower {
            path,
            offset: 0,
            partial: Vec::new(),
            last_status: None,
            last_counts: None,
        }
    }

    /// The figures of the log so far: those of its last status and counts lines.
    fn read_new(&mut self) -> LibFuzzerStats {
        let mut new = Vec::new();
        if let Ok(mut file) = std::fs::File::open(&self.path) {
            if file.seek(SeekFrom::Start(self.offset)).is_ok() {
                let _ = file.read_to_end(&mut new);
            }
        }
        self.offset += new.len() as u64;
        self.partial.extend_from_slice(&new);
        if let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') {
            let complete: Vec<u8> = self.partial.drain(..=end).collect();
            for line in String::from_utf8_lossy(&complete).lines() {
                if line.starts_with('#') {
                    self.last_status = Some(line.to_string());
                } else if line.starts_with(COUNTS_PREFIX) {
                    self.last_counts = Some(line.to_string());
                }
            }
        }
        let lines = [&self.last_status, &self.last_counts];
        parse(
            &lines
                .iter()
                .filter_map(|l| l.as_deref())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }
}

/// One progress line: `120/7500 s, 91234 executions (812 exec/s), 11020 edges, 50213
/// features, corpus 2411, rejected 31 %`; figures the log has not shown yet are left out.
fn status_text(s: &LibFuzzerStats, elapsed_s: u64, budget_s: u64) -> String {
    let mut parts = vec![format!("{elapsed_s}/{budget_s} s")];
    match (s.executions, s.exec_per_s) {
        (Some(n), Some(r)) => parts.push(format!("{n} executions ({r} exec/s)")),
        (Some(n), None) => parts.push(format!("{n} executions")),
        _ => parts.push("starting".into()),
    }
    if let Some(e) = s.edges {
        parts.push(format!("{e} edges"));
    }
    if let Some(f) = s.features {
        parts.push(format!("{f} features"));
    }
    if let Some(c) = s.corpus_size {
        parts.push(format!("corpus {c}"));
    }
    if let Some(p) = s.rejected_percent() {
        parts.push(format!("rejected {p:.0} %"));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_follower_keeps_the_last_status_and_counts_as_the_log_grows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("libfuzzer.log");
        let mut log = std::fs::File::create(&path).unwrap();
        let mut follower = LogFollower::new(path);
        assert_eq!(status_text(&follower.read_new(), 0, 60), "0/60 s, starting");
        write!(
            log,
            "INFO: Seed: 1\n#2\tINITED cov: 100 ft: 120 corp: 1/1b exec/s: 0 rss: 30Mb\n#40"
        )
        .unwrap();
        log.flush().unwrap();
        // The unfinished line `#40...` is not read yet.
        assert_eq!(
            status_text(&follower.read_new(), 1, 60),
            "1/60 s, 2 executions (0 exec/s), 100 edges, 120 features, corpus 1"
        );
        write!(
            log,
            "96\tpulse  cov: 900 ft: 1500 corp: 40/2Kb lim: 40 exec/s: 1365 rss: 60Mb\n\
             histsim inputs: 4096, rejected 1024\n"
        )
        .unwrap();
        log.flush().unwrap();
        assert_eq!(
            status_text(&follower.read_new(), 3, 60),
            "3/60 s, 4096 executions (1365 exec/s), 900 edges, 1500 features, corpus 40, rejected 25 %"
        );
        // Nothing new: the same figures.
        assert_eq!(follower.read_new().executions, Some(4096));
    }
}
