//! Campaign reports under `reports/<campaign>/`: `summary.md` for people (and CI job summaries),
//! `summary.json` for machines, `junit.xml` with one test case per invariant ID. Shard reports
//! merge into the report of the whole range (`histsim report merge`). The formats are documented
//! in reports/README.md.

use crate::campaign::{CampaignResult, SeedLine};
use crate::left_out;
use crate::outcome::Violation;
use crate::pace::SeedsOverTime;
use crate::registry;
use crate::run::RunConfig;
use crate::workload::DynWorkload;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Counts by name, summed over several reports.
fn summed<'a>(maps: impl Iterator<Item = &'a BTreeMap<String, u64>>) -> BTreeMap<String, u64> {
    let mut sum = BTreeMap::new();
    for (k, v) in maps.flatten() {
        *sum.entry(k.clone()).or_default() += v;
    }
    sum
}

mod divergences;
mod junit;
pub(crate) mod pages;
pub use junit::junit;
pub(crate) use junit::junit_xml;

/// The turmoil version seeds are comparable under.
pub(crate) const TURMOIL_VERSION: &str = "0.7.2";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigSummary {
    pub workload: String,
    pub store: String,
    pub planted: Option<String>,
    pub replicas: Option<u8>,
    /// The system under test's command (`--sut`); absent: histsim's own components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sut: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailureSummary {
    pub seed: u64,
    pub workload: String,
    pub violations: Vec<Violation>,
    pub failure: Option<String>,
    pub options: String,
    pub replay: String,
    /// The file beside the report with the system under test's stderr for this seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sut_log: Option<String>,
}

/// Seeds replayed in a fresh process and whether their trace hashes matched.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeterminismSummary {
    pub percent: u8,
    pub checked: Vec<u64>,
    pub mismatches: Vec<Mismatch>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mismatch {
    pub seed: u64,
    pub hash_here: String,
    pub hash_fresh_process: String,
    /// The first event that differs, from both traces.
    pub first_difference: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub campaign: String,
    pub histsim_version: String,
    pub turmoil_version: String,
    pub commit: Option<String>,
    pub config: ConfigSummary,
    pub seeds_start: u64,
    pub seeds_end: u64,
    /// `K/N` of every shard this report covers; empty for an unsharded run.
    pub shards: Vec<String>,
    pub seeds_run: usize,
    pub seeds_failed: usize,
    pub elapsed_s: f64,
    pub seeds_per_second: f64,
    /// `steps_total` over the elapsed seconds (summed over shards, as `seeds_per_second`).
    /// Absent from reports written before it was kept.
    #[serde(default)]
    pub steps_per_second: f64,
    pub steps_total: u64,
    /// Every probe the campaign's workloads declare, with how often it fired.
    pub coverage: BTreeMap<String, u64>,
    pub coverage_never_fired: Vec<String>,
    /// What the checks did not ask of the system under test, with counts.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub left_out: BTreeMap<String, u64>,
    /// The names (`--allow-left-out`) of the left-out work nobody allowed: not covered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out_not_covered: Vec<String>,
    /// The names of the left-out work the campaign allowed with `--allow-left-out`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out_allowed: Vec<String>,
    /// What a system under test answered, op by op: `"{op} sent"`, `"{op} ok"`,
    /// `"{op} err {kind}"`, `"{op} no answer"` ([`crate::sut::tally`]); empty in process.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub answers: BTreeMap<String, u64>,
    /// The invariant IDs the campaign's workloads check.
    pub invariants: Vec<String>,
    pub failures: Vec<FailureSummary>,
    pub determinism: Option<DeterminismSummary>,
    pub seeds: Vec<SeedLine>,
    /// Seeds finished per bucket of wall seconds (at most [`crate::pace::BUCKETS_MAX`]
    /// buckets): the campaign page's chart. Wall time: shown, never compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds_over_time: Option<SeedsOverTime>,
}

/// The project's commit, when the binary runs inside its git checkout.
pub(crate) fn current_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The registered workloads among `names` (a merged report may name workloads this build lacks).
fn registered<'a>(names: impl Iterator<Item = &'a String>) -> Vec<&'static dyn DynWorkload> {
    names.filter_map(|n| registry::by_name(n)).collect()
}

fn declared_probes(workloads: impl Iterator<Item = &'static dyn DynWorkload>) -> Vec<&'static str> {
    let mut probes: Vec<&'static str> =
        workloads.flat_map(|w| w.probes().iter().copied()).collect();
    probes.sort_unstable();
    probes.dedup();
    probes
}

fn invariants_of(workloads: impl Iterator<Item = &'static dyn DynWorkload>) -> Vec<String> {
    let mut ids: Vec<history::BugId> = workloads.flat_map(registry::ids_of).collect();
    ids.sort();
    ids.dedup();
    ids.into_iter().map(|i| i.to_string()).collect()
}

/// The report of a campaign; every left-out entry not covered until
/// [`Summary::judge_left_out`] allows it.
pub fn summary(
    campaign: &str,
    config: &RunConfig,
    seeds: std::ops::Range<u64>,
    shard: Option<(u64, u64)>,
    result: &CampaignResult,
) -> Summary {
    let judged = left_out::Judged::of(&result.left_out.counts, &[]);
    let probes = declared_probes(registered(result.workloads.iter()).into_iter());
    let coverage: BTreeMap<String, u64> = probes
        .iter()
        .map(|p| (p.to_string(), result.coverage.get(p)))
        .collect();
    Summary {
        campaign: campaign.to_string(),
        histsim_version: env!("CARGO_PKG_VERSION").to_string(),
        turmoil_version: TURMOIL_VERSION.to_string(),
        commit: current_commit(),
        config: ConfigSummary {
            workload: config.workload_name().to_string(),
            store: format!("{:?}", config.store).to_lowercase(),
            planted: config.planted.map(|p| p.to_string()),
            replicas: config.replicas,
            sut: config.sut.as_ref().map(|s| s.command.clone()),
        },
        seeds_start: seeds.start,
        seeds_end: seeds.end,
        shards: shard
            .map(|(k, n)| vec![format!("{k}/{n}")])
            .unwrap_or_default(),
        seeds_run: result.seeds_run(),
        seeds_failed: result.failures.len(),
        elapsed_s: result.elapsed.as_secs_f64(),
        seeds_per_second: result.seeds_per_second(),
        steps_per_second: result.steps_per_second(),
        steps_total: result.steps_total,
        coverage_never_fired: result
            .coverage
            .never_fired(&probes)
            .into_iter()
            .map(str::to_string)
            .collect(),
        coverage,
        left_out: result.left_out.counts.clone(),
        left_out_not_covered: judged.not_covered,
        left_out_allowed: judged.allowed,
        answers: result.answers.counts.clone(),
        invariants: invariants_of(registered(result.workloads.iter()).into_iter()),
        failures: result
            .failures
            .iter()
            .map(|f| FailureSummary {
                seed: f.seed,
                workload: f.workload.to_string(),
                violations: f.violations.clone(),
                failure: f.failure.clone(),
                options: f.options.clone(),
                replay: config.replay_command(f.seed),
                sut_log: f.sut_log.as_ref().map(|_| sut_log_name(f.seed)),
            })
            .collect(),
        determinism: None,
        seeds: result.lines.clone(),
        seeds_over_time: Some(result.seeds_over_time.clone()),
    }
}

impl Summary {
    /// Sorts the left-out work by name into what `allowed` (`--allow-left-out`) names and what
    /// is not covered.
    pub fn judge_left_out(&mut self, allowed: &[String]) {
        let judged = left_out::Judged::of(&self.left_out, allowed);
        self.left_out_not_covered = judged.not_covered;
        self.left_out_allowed = judged.allowed;
    }

    /// The report without what depends on the machine or the split: timings, the commit, the
    /// campaign name and the shards. Merged shard reports equal the unsharded report on this.
    pub fn deterministic_view(&self) -> Summary {
        Summary {
            campaign: String::new(),
            commit: None,
            shards: Vec::new(),
            elapsed_s: 0.0,
            seeds_per_second: 0.0,
            steps_per_second: 0.0,
            determinism: None,
            seeds_over_time: None,
            ..self.clone()
        }
    }

    /// Merges shard reports of one campaign (same range, config and versions) into one.
    pub fn merge(parts: &[Summary], campaign: &str) -> Result<Summary, String> {
        let Some(first) = parts.first() else {
            return Err("no reports to merge".into());
        };
        for p in parts {
            p.same_campaign_as(first)?;
        }
        let mut seeds: Vec<SeedLine> = parts.iter().flat_map(|p| p.seeds.clone()).collect();
        seeds.sort_by_key(|l| l.seed);
        let before = seeds.len();
        seeds.dedup_by_key(|l| l.seed);
        if seeds.len() != before {
            return Err("the reports overlap: a seed appears in two shards".into());
        }
        let mut failures: Vec<FailureSummary> =
            parts.iter().flat_map(|p| p.failures.clone()).collect();
        failures.sort_by_key(|f| f.seed);
        let coverage = summed(parts.iter().map(|p| &p.coverage));
        let answers = summed(parts.iter().map(|p| &p.answers));
        let left_out = summed(parts.iter().map(|p| &p.left_out));
        // The shards of one campaign share their flags: a name any shard allowed stays allowed.
        let allowed: Vec<String> = parts
            .iter()
            .flat_map(|p| p.left_out_allowed.clone())
            .collect();
        let judged = left_out::Judged::of(&left_out, &allowed);
        let mut invariants: Vec<String> = parts.iter().flat_map(|p| p.invariants.clone()).collect();
        // Catalog order, not string order (P2 before P10).
        invariants.sort_by_key(|i| (i.parse::<history::BugId>().ok(), i.clone()));
        invariants.dedup();
        let mut shards: Vec<String> = parts.iter().flat_map(|p| p.shards.clone()).collect();
        shards.sort();
        let elapsed_s = parts.iter().map(|p| p.elapsed_s).fold(0.0, f64::max);
        // Rates over the shards' summed time: what one core does, whatever the shard count.
        let busy_s = parts.iter().map(|p| p.elapsed_s).sum::<f64>().max(1e-9);
        let seeds_run = seeds.len();
        let steps_total: u64 = parts.iter().map(|p| p.steps_total).sum();
        Ok(Summary {
            campaign: campaign.to_string(),
            histsim_version: first.histsim_version.clone(),
            turmoil_version: first.turmoil_version.clone(),
            commit: first.commit.clone(),
            config: first.config.clone(),
            seeds_start: first.seeds_start,
            seeds_end: first.seeds_end,
            shards,
            seeds_run,
            seeds_failed: failures.len(),
            elapsed_s,
            seeds_per_second: seeds_run as f64 / busy_s,
            steps_per_second: steps_total as f64 / busy_s,
            steps_total,
            coverage_never_fired: coverage
                .iter()
                .filter(|(_, v)| **v == 0)
                .map(|(k, _)| k.clone())
                .collect(),
            coverage,
            left_out,
            left_out_not_covered: judged.not_covered,
            left_out_allowed: judged.allowed,
            answers,
            invariants,
            failures,
            determinism: None,
            seeds,
            seeds_over_time: merged_pace(parts),
        })
    }

    /// Whether this shard report is of the same campaign as `first`: the same range, config,
    /// versions and commit.
    fn same_campaign_as(&self, first: &Summary) -> Result<(), String> {
        if self.config != first.config
            || (self.seeds_start, self.seeds_end) != (first.seeds_start, first.seeds_end)
            || self.turmoil_version != first.turmoil_version
            || self.histsim_version != first.histsim_version
        {
            return Err(format!(
                "report `{}` is of another campaign (range, config or versions differ from `{}`)",
                self.campaign, first.campaign
            ));
        }
        // A seed's trace is a function of the seed and the code: shards of two commits are two
        // campaigns, whatever their flags.
        if let (Some(a), Some(b)) = (&self.commit, &first.commit) {
            if a != b {
                return Err(format!(
                    "report `{}` ran commit {a}, report `{}` commit {b}: seeds compare only within one commit",
                    self.campaign, first.campaign
                ));
            }
        }
        Ok(())
    }

    pub fn read(dir: &Path) -> Result<Summary, String> {
        let path = dir.join("summary.json");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// The shards' seeds over time summed, where any shard kept them.
fn merged_pace(parts: &[Summary]) -> Option<SeedsOverTime> {
    let kept: Vec<&SeedsOverTime> = parts
        .iter()
        .filter_map(|p| p.seeds_over_time.as_ref())
        .collect();
    (!kept.is_empty()).then(|| SeedsOverTime::merged(&kept))
}

pub fn markdown(s: &Summary) -> String {
    let mut md = String::new();
    let failed = s.seeds_failed > 0
        || s.determinism
            .as_ref()
            .is_some_and(|d| !d.mismatches.is_empty());
    // A campaign that ran no seed checked nothing: it never reads as passed.
    let verdict = if s.seeds_run == 0 {
        "FAILED: no seed ran"
    } else if failed {
        "FAILED"
    } else {
        "passed"
    };
    let _ = writeln!(md, "# histsim campaign `{}`: {verdict}\n", s.campaign);
    markdown_table(&mut md, s);
    markdown_failures(&mut md, s);
    left_out::markdown(&mut md, &s.left_out, &s.left_out_allowed);
    markdown_answers(&mut md, s);
    let _ = writeln!(md, "\n## coverage\n\n| probe | fired |\n|---|---|");
    for (probe, n) in &s.coverage {
        let mark = if *n == 0 { " **never**" } else { "" };
        let _ = writeln!(md, "| {probe} | {n}{mark} |");
    }
    md
}

/// What the system under test answered, op by op (Jepsen's ok/fail/info): every `err` it
/// answered is counted here whatever the checks made of it, and a request it never answered
/// (a breach) too.
fn markdown_answers(md: &mut String, s: &Summary) {
    if s.answers.is_empty() && s.left_out.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "\n## answers\n\nWhat the system under test answered, op by op (an `err` only where the \
         contract calls for one, else a violation; no answer is a breach):\n\n\
         | op | sent | ok | err | no answer | left out |\n|---|---|---|---|---|---|"
    );
    for line in answer_rows(&s.answers, &s.left_out) {
        let _ = writeln!(md, "| {} |", line.join(" | "));
    }
}

/// The tally of answers as rows: op, sent, ok, errors by kind (`-` for none), no answer, and
/// how often work needing the op was left out (an op the system does not serve is never sent,
/// so it has a row of its own here).
fn answer_rows(
    answers: &BTreeMap<String, u64>,
    left_out: &BTreeMap<String, u64>,
) -> Vec<[String; 6]> {
    let mut left_out_by_op: BTreeMap<&str, u64> = BTreeMap::new();
    for (entry, n) in left_out {
        if let Some(op) = left_out::op_not_served(entry) {
            *left_out_by_op.entry(op).or_default() += n;
        }
    }
    let mut figures: BTreeMap<String, crate::sut::tally::OpFigures> =
        crate::sut::tally::by_op(answers).into_iter().collect();
    for op in left_out_by_op.keys() {
        figures.entry(op.to_string()).or_default();
    }
    figures
        .into_iter()
        .map(|(op, f)| {
            let left = left_out_by_op.get(op.as_str()).copied().unwrap_or(0);
            let err = if f.err.is_empty() {
                "-".to_string()
            } else {
                let kinds: Vec<String> = f.err.iter().map(|(k, n)| format!("{n} {k}")).collect();
                kinds.join(", ")
            };
            [
                op,
                f.sent.to_string(),
                f.ok.to_string(),
                err,
                f.no_answer.to_string(),
                left.to_string(),
            ]
        })
        .collect()
}

/// The tally of answers as terminal lines: `answers: OP: sent N, ok N, err N KIND, ...`.
pub(crate) fn answer_lines(
    answers: &BTreeMap<String, u64>,
    left_out: &BTreeMap<String, u64>,
) -> Vec<String> {
    answer_rows(answers, left_out)
        .into_iter()
        .map(|[op, sent, ok, err, none, left]| {
            let mut line = format!("answers: {op}: sent {sent}, ok {ok}");
            if err != "-" {
                line.push_str(&format!(", err {err}"));
            }
            if none != "0" {
                line.push_str(&format!(", no answer {none}"));
            }
            if left != "0" {
                line.push_str(&format!(", left out {left}"));
            }
            line
        })
        .collect()
}

/// The campaign's figures, one row each.
fn markdown_table(md: &mut String, s: &Summary) {
    let _ = writeln!(md, "| | |\n|---|---|");
    let _ = writeln!(
        md,
        "| seeds | {}..{} ({} run) |",
        s.seeds_start, s.seeds_end, s.seeds_run
    );
    if !s.shards.is_empty() {
        let _ = writeln!(md, "| shards | {} |", s.shards.join(", "));
    }
    let _ = writeln!(md, "| failed seeds | {} |", s.seeds_failed);
    let _ = writeln!(md, "| workload | {} |", s.config.workload);
    let _ = writeln!(md, "| store | {} |", s.config.store);
    let _ = writeln!(
        md,
        "| planted | {} |",
        s.config.planted.as_deref().unwrap_or("none")
    );
    let _ = writeln!(
        md,
        "| speed | {:.1} seeds/s, {:.0} steps/s over {:.1} s |",
        s.seeds_per_second, s.steps_per_second, s.elapsed_s
    );
    let _ = writeln!(md, "| steps | {} |", s.steps_total);
    markdown_liveness(md, s);
    let _ = writeln!(
        md,
        "| versions | histsim {}, turmoil {}, commit {} |",
        s.histsim_version,
        s.turmoil_version,
        s.commit.as_deref().unwrap_or("unknown")
    );
    if let Some(d) = &s.determinism {
        let _ = writeln!(
            md,
            "| determinism | {} seeds replayed in fresh processes ({}%), {} mismatches |",
            d.checked.len(),
            d.percent,
            d.mismatches.len()
        );
    }
}

/// How fast the worlds with a healing phase converged after it.
fn markdown_liveness(md: &mut String, s: &Summary) {
    let converged: Vec<u64> = s
        .seeds
        .iter()
        .filter_map(|l| l.converged_after_ms)
        .collect();
    if converged.is_empty() {
        return;
    }
    let max = converged.iter().max().copied().unwrap_or(0);
    let mean = converged.iter().sum::<u64>() as f64 / converged.len() as f64;
    // Only the display and runs worlds have a healing phase; journal and spool seeds check their
    // state after every operation instead.
    let with_liveness_phase = s
        .seeds
        .iter()
        .filter(|l| registry::by_name(&l.workload).is_some_and(|w| w.has_liveness_phase()))
        .count();
    let _ = writeln!(
        md,
        "| liveness | {} of {with_liveness_phase} display and runs seeds converged after healing; mean {mean:.1} ms, max {max} ms (simulated) |",
        converged.len(),
    );
}

/// Every failing seed with its violations and replay command, then every nondeterministic one.
fn markdown_failures(md: &mut String, s: &Summary) {
    for f in &s.failures {
        let _ = writeln!(md, "\n## seed {} ({})\n", f.seed, f.workload);
        if let Some(e) = &f.failure {
            let _ = writeln!(md, "- world failure: {e}");
        }
        for v in &f.violations {
            let _ = writeln!(md, "- **{}** {}", v.id, v.message.replace('|', "\\|"));
        }
        divergences::markdown(md, &f.violations);
        let _ = writeln!(md, "\nReplay: `{}`\n", f.replay);
        if let Some(log) = &f.sut_log {
            let _ = writeln!(md, "The system under test's stderr: `{log}`\n");
        }
        let _ = writeln!(
            md,
            "<details><summary>options</summary>\n\n```\n{}```\n</details>",
            f.options
        );
    }
    if let Some(d) = &s.determinism {
        for m in &d.mismatches {
            let _ = writeln!(
                md,
                "\n## nondeterminism: seed {}\n\nhere `{}`, fresh process `{}`; first difference: `{}`",
                m.seed, m.hash_here, m.hash_fresh_process, m.first_difference
            );
        }
    }
}

/// The name of the file beside a report that keeps a failing seed's SUT stderr.
pub(crate) fn sut_log_name(seed: u64) -> String {
    format!("seed-{seed}.sut-stderr.log")
}

/// Writes summary.md, summary.json and junit.xml under `dir/<campaign>/`, and the stderr of
/// the system under test of every failing seed in `failed`; returns the directory.
pub fn write(
    dir: &Path,
    s: &Summary,
    failed: &[crate::run::SeedReport],
) -> std::io::Result<PathBuf> {
    let out = dir.join(&s.campaign);
    std::fs::create_dir_all(&out)?;
    for f in failed {
        if let Some(log) = &f.sut_log {
            std::fs::write(out.join(sut_log_name(f.seed)), log)?;
        }
    }
    std::fs::write(out.join("summary.md"), markdown(s))?;
    let json = serde_json::to_vec_pretty(s).map_err(std::io::Error::other)?;
    std::fs::write(out.join("summary.json"), json)?;
    std::fs::write(out.join("junit.xml"), junit(s))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use history::BugId;

    pub(super) fn summary_with_one_failure() -> Summary {
        Summary {
            campaign: "c<1>".into(),
            histsim_version: "0".into(),
            turmoil_version: TURMOIL_VERSION.into(),
            commit: None,
            config: ConfigSummary {
                workload: "display".into(),
                store: "memory".into(),
                planted: None,
                replicas: None,
                sut: None,
            },
            seeds_start: 0,
            seeds_end: 2,
            shards: Vec::new(),
            seeds_run: 2,
            seeds_failed: 1,
            elapsed_s: 1.5,
            seeds_per_second: 1.0,
            steps_per_second: 10.0,
            steps_total: 10,
            coverage: BTreeMap::from([("fired".into(), 3), ("idle".into(), 0)]),
            left_out: BTreeMap::new(),
            left_out_not_covered: Vec::new(),
            left_out_allowed: Vec::new(),
            answers: BTreeMap::new(),
            coverage_never_fired: vec!["idle".into()],
            invariants: vec!["P1".into(), "P4".into()],
            failures: vec![FailureSummary {
                seed: 1,
                workload: "display".into(),
                violations: vec![Violation::safety(BugId::P4, "a & \"b\" <c>\u{1}")],
                failure: None,
                options: String::new(),
                replay: "histsim replay --seed 1".into(),
                sut_log: None,
            }],
            determinism: None,
            seeds: Vec::new(),
            seeds_over_time: None,
        }
    }

    #[test]
    fn merged_shards_give_steps_and_seeds_a_second_over_their_summed_time() {
        let shard = |k: u64, elapsed_s: f64, steps_total: u64| Summary {
            shards: vec![format!("{k}/2")],
            seeds_run: 1,
            seeds_failed: 0,
            failures: Vec::new(),
            elapsed_s,
            steps_total,
            seeds: vec![SeedLine {
                seed: k,
                workload: "display".into(),
                trace_hash: format!("{k}"),
                passed: true,
                steps: steps_total as usize,
                converged_after_ms: None,
            }],
            ..summary_with_one_failure()
        };
        let merged = Summary::merge(&[shard(0, 2.0, 100), shard(1, 3.0, 400)], "m").unwrap();
        assert_eq!(merged.steps_total, 500);
        assert!((merged.steps_per_second - 100.0).abs() < 1e-9);
        assert!((merged.seeds_per_second - 0.4).abs() < 1e-9);
        assert!(markdown(&merged).contains("| speed | 0.4 seeds/s, 100 steps/s over 3.0 s |"));
    }

    #[test]
    fn a_report_written_before_steps_a_second_were_kept_still_reads() {
        let mut json = serde_json::to_value(summary_with_one_failure()).unwrap();
        json.as_object_mut().unwrap().remove("steps_per_second");
        let old: Summary = serde_json::from_value(json).unwrap();
        assert_eq!(old.steps_per_second, 0.0);
        assert_eq!(old.steps_total, 10);
    }
}
