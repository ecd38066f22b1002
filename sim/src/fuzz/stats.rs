//! libFuzzer's figures, read from what it prints: the final stats (`-print_final_stats=1`), the
//! last status line (`#N ... cov: C ft: F corp: K/...`), and where it wrote a crash input.

use super::target::counts_in;
use serde::Serialize;

/// What a libFuzzer run reported. Every figure is optional: a run cut short prints fewer.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LibFuzzerStats {
    pub executions: Option<u64>,
    pub exec_per_s: Option<u64>,
    pub new_units: Option<u64>,
    /// Code edges covered (`cov:`), as libFuzzer last reported.
    pub edges: Option<u64>,
    /// Features (`ft:`): edges with hit counts, and the value profile when it is on.
    pub features: Option<u64>,
    /// Inputs in the corpus (`corp:`), as libFuzzer last reported.
    pub corpus_size: Option<u64>,
    /// Where libFuzzer wrote the crash input (`Test unit written to ...`).
    pub crash_input: Option<String>,
    /// Inputs libFuzzer wrote as slower than `-report_slow_units` (`slow-unit-...`): kept for
    /// a look, never a crash (a paused or starved process makes them too).
    pub slow_units: Vec<String>,
    /// The target's own count of its inputs (`histsim inputs: N, rejected R`, printed at
    /// doublings and every 65,536 inputs), the last printed: N inputs ...
    pub counted_inputs: Option<u64>,
    /// ... of which R were rejected before play (not a scenario of the workload, or over its
    /// size bound): executions that cost next to nothing.
    pub rejected_inputs: Option<u64>,
}

impl LibFuzzerStats {
    /// The percentage of the counted inputs that were rejected before play, once any are counted.
    pub fn rejected_percent(&self) -> Option<f64> {
        let (n, r) = (self.counted_inputs?, self.rejected_inputs?);
        (n > 0).then(|| 100.0 * r as f64 / n as f64)
    }
}

/// Reads `output` (libFuzzer's stderr), line by line.
pub fn parse(output: &str) -> LibFuzzerStats {
    let mut s = LibFuzzerStats::default();
    for line in output.lines() {
        let line = line.trim();
        if let Some(v) = stat(line, "stat::number_of_executed_units:") {
            s.executions = Some(v);
        } else if let Some(v) = stat(line, "stat::average_exec_per_sec:") {
            s.exec_per_s = Some(v);
        } else if let Some(v) = stat(line, "stat::new_units_added:") {
            s.new_units = Some(v);
        } else if let Some(rest) = line.split("Test unit written to ").nth(1) {
            let path = rest.trim().to_string();
            let name = path.rsplit('/').next().unwrap_or_default();
            if name.starts_with("slow-unit-") {
                s.slow_units.push(path);
            } else {
                s.crash_input = Some(path);
            }
        } else if let Some((inputs, rejected)) = counts_in(line) {
            s.counted_inputs = Some(inputs);
            s.rejected_inputs = Some(rejected);
        } else if line.starts_with('#') {
            status_line(line, &mut s);
        }
    }
    s
}

fn stat(line: &str, key: &str) -> Option<u64> {
    line.strip_prefix(key)?.trim().parse().ok()
}

/// `#1234\tNEW    cov: 567 ft: 890 corp: 12/3456b lim: 4 exec/s: 411 rss: 40Mb`
fn status_line(line: &str, s: &mut LibFuzzerStats) {
    let words: Vec<&str> = line.split_whitespace().collect();
    let after = |key: &str| -> Option<&str> {
        let i = words.iter().position(|w| *w == key)?;
        words.get(i + 1).copied()
    };
    let number = |w: Option<&str>| w.and_then(|w| w.split('/').next()?.parse::<u64>().ok());
    if let Some(v) = number(after("cov:")) {
        s.edges = Some(v);
    }
    if let Some(v) = number(after("ft:")) {
        s.features = Some(v);
    }
    if let Some(v) = number(after("corp:")) {
        s.corpus_size = Some(v);
    }
    if s.executions.is_none() || line.contains("DONE") {
        // The status line's own count; the final stats (printed after it) replace it.
        let count = words
            .first()
            .and_then(|w| w.trim_start_matches('#').parse().ok());
        if count.is_some() {
            s.executions = count;
        }
    }
    if let Some(v) = number(after("exec/s:")) {
        s.exec_per_s = Some(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DONE: &str = "INFO: Seed: 1\n\
        #2\tINITED cov: 100 ft: 120 corp: 1/1b exec/s: 0 rss: 30Mb\n\
        histsim inputs: 4096, rejected 700\n\
        #4096\tpulse  cov: 900 ft: 1500 corp: 40/2Kb lim: 40 exec/s: 1365 rss: 60Mb\n\
        histsim inputs: 8192, rejected 1500\n\
        #9000\tDONE   cov: 950 ft: 1600 corp: 44/3Kb lim: 40 exec/s: 1500 rss: 61Mb\n\
        Done 9000 runs in 6 second(s)\n\
        stat::number_of_executed_units: 9001\n\
        stat::average_exec_per_sec:     1500\n\
        stat::new_units_added:          43\n";

    #[test]
    fn reads_a_finished_run() {
        let s = parse(DONE);
        assert_eq!(s.executions, Some(9001));
        assert_eq!(s.exec_per_s, Some(1500));
        assert_eq!(s.new_units, Some(43));
        assert_eq!(
            (s.edges, s.features, s.corpus_size),
            (Some(950), Some(1600), Some(44))
        );
        assert_eq!(s.crash_input, None);
        assert_eq!(
            (s.counted_inputs, s.rejected_inputs),
            (Some(8192), Some(1500))
        );
    }

    #[test]
    fn a_slow_unit_is_no_crash() {
        // What a campaign paused for minutes printed (libFuzzer counts wall time).
        let out = "#900\tREDUCE cov: 500 ft: 700 corp: 9/1Kb exec/s: 27 rss: 50Mb\n\
            Slowest unit: 317 s:\n\
            artifact_prefix='a/'; Test unit written to a/slow-unit-e7d4\n\
            stat::number_of_executed_units: 911\n";
        let s = parse(out);
        assert_eq!(s.crash_input, None);
        assert_eq!(s.slow_units, ["a/slow-unit-e7d4"]);
        assert_eq!(s.executions, Some(911));
    }

    #[test]
    fn reads_a_crash() {
        let out = "#300\tNEW    cov: 500 ft: 700 corp: 9/1Kb exec/s: 150 rss: 50Mb\n\
            ==1== ERROR: libFuzzer: deadly signal\n\
            artifact_prefix='artifacts/sim_display/'; Test unit written to artifacts/sim_display/crash-abc\n\
            stat::number_of_executed_units: 311\n";
        let s = parse(out);
        assert_eq!(
            s.crash_input.as_deref(),
            Some("artifacts/sim_display/crash-abc")
        );
        assert_eq!(s.executions, Some(311));
        assert_eq!(s.corpus_size, Some(9));
    }
}
