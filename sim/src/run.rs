//! One seed, end to end: pick the workload, derive its options, generate, play, check.

use crate::display::{self, DisplayOptions, StoreKind, WorldConfig};
use crate::journal::{self, JournalSimOptions};
use crate::outcome::Violation;
use crate::rng::{SeedRng, Stream};
use crate::runs::{self, RunsOptions};
use crate::scenario_file::{ScenarioFile, Script};
use crate::spool::{self, SpoolSimOptions};
use history::{BugId, Planted};
use rand::Rng;
use serde::Serialize;
use std::fmt;

/// The workloads a seed can run.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// Display events through the fan-out bus, persisters and the projector (P IDs).
    Display,
    /// Run journals, the run-event stores, summarization, the views and feedback (R IDs).
    Runs,
    /// Sessions recording to history journals on crashing hosts' disks (J IDs but J14).
    Journal,
    /// Request bodies streamed from histories into sealed spools and sent (J14).
    Spool,
}

impl Workload {
    pub const ALL: [Workload; 4] = [
        Workload::Display,
        Workload::Runs,
        Workload::Journal,
        Workload::Spool,
    ];

    /// The workload whose invariants cover `id`.
    pub fn covering(id: BugId) -> Option<Workload> {
        match id.family() {
            'P' => Some(Workload::Display),
            'R' => Some(Workload::Runs),
            'J' if id == BugId::J14 => Some(Workload::Spool),
            'J' => Some(Workload::Journal),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Workload::Display => "display",
            Workload::Runs => "runs",
            Workload::Journal => "journal",
            Workload::Spool => "spool",
        }
    }

    /// The coverage probes this workload declares.
    pub fn probes(self) -> &'static [&'static str] {
        match self {
            Workload::Display => display::probes::PROBES,
            Workload::Runs => runs::probes::PROBES,
            Workload::Journal => journal::probes::PROBES,
            Workload::Spool => spool::probes::PROBES,
        }
    }

    /// The catalog IDs whose invariants this workload checks.
    pub fn ids(self) -> Vec<BugId> {
        BugId::ALL
            .iter()
            .copied()
            .filter(|id| Workload::covering(*id) == Some(self))
            .collect()
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which workloads a campaign runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadChoice {
    /// Every workload, mixed by seed.
    All,
    Display,
    Runs,
    Journal,
    Spool,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunConfig {
    pub workload: WorkloadChoice,
    pub store: StoreKind,
    pub planted: Option<BugId>,
    pub replicas: Option<u8>,
    #[serde(skip)]
    pub keep_trace: bool,
}

impl RunConfig {
    pub fn new() -> Self {
        RunConfig {
            workload: WorkloadChoice::All,
            store: StoreKind::Memory,
            planted: None,
            replicas: None,
            keep_trace: false,
        }
    }

    fn planted(&self) -> Planted {
        Planted::from_option(self.planted)
    }

    /// The workload seed `seed` runs under this config. A planted bug pins the workload that can
    /// see it.
    pub fn workload_of(&self, seed: u64) -> Workload {
        if let Some(w) = self.planted.and_then(Workload::covering) {
            return w;
        }
        match self.workload {
            WorkloadChoice::Display => Workload::Display,
            WorkloadChoice::Runs => Workload::Runs,
            WorkloadChoice::Journal => Workload::Journal,
            WorkloadChoice::Spool => Workload::Spool,
            WorkloadChoice::All => {
                let mut rng = SeedRng::new(seed).stream(Stream::Mix);
                Workload::ALL[rng.random_range(0..Workload::ALL.len())]
            }
        }
    }

    /// The flags that make `histsim replay` reproduce a seed of this config.
    pub fn replay_flags(&self) -> String {
        let mut flags = String::new();
        if self.workload != WorkloadChoice::All {
            flags.push_str(&format!(
                " --workload {}",
                workload_choice_name(self.workload)
            ));
        }
        if self.store != StoreKind::Memory {
            flags.push_str(" --store sqlite");
        }
        if let Some(r) = self.replicas {
            flags.push_str(&format!(" --replicas {r}"));
        }
        if let Some(id) = self.planted {
            flags.push_str(&format!(" --planted {id}"));
        }
        flags
    }

    pub fn replay_command(&self, seed: u64) -> String {
        format!(
            "cargo run --release -p sim -- replay --seed {seed}{}",
            self.replay_flags()
        )
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig::new()
    }
}

pub fn workload_choice_name(w: WorkloadChoice) -> &'static str {
    match w {
        WorkloadChoice::All => "all",
        WorkloadChoice::Display => "display",
        WorkloadChoice::Runs => "runs",
        WorkloadChoice::Journal => "journal",
        WorkloadChoice::Spool => "spool",
    }
}

/// What one seed did.
#[derive(Clone, Debug, Serialize)]
pub struct SeedReport {
    pub seed: u64,
    pub workload: Workload,
    /// The options the seed derived, one `name = value` a line.
    pub options: String,
    pub violations: Vec<Violation>,
    /// The world broke down (a host error, a hang): distinct from a violation.
    pub failure: Option<String>,
    pub trace_hash: String,
    pub trace_events: u64,
    /// Events the agents emitted (or operations the workload issued).
    pub steps: usize,
    pub sim_elapsed_ms: u64,
    #[serde(skip)]
    pub trace_tail: Vec<String>,
    #[serde(skip)]
    pub trace_full: Option<Vec<String>>,
    /// Probes that fired in this seed.
    pub coverage: crate::coverage::Coverage,
    /// Simulated ms from healing every fault until the answers converged on the model.
    pub converged_after_ms: Option<u64>,
    /// With `keep_trace`: the answers and the model's expectation, as text.
    #[serde(skip)]
    pub details: Option<String>,
}

impl SeedReport {
    pub fn passed(&self) -> bool {
        self.violations.is_empty() && self.failure.is_none()
    }

    /// The invariant that fired first (the most specific one).
    pub fn first_violation(&self) -> Option<&Violation> {
        self.violations.first()
    }
}

/// The display scenario seed `seed` plays under `config`, if it runs the display workload.
pub fn display_scenario_of(seed: u64, config: &RunConfig) -> Option<display::DisplayScenario> {
    if config.workload_of(seed) != Workload::Display {
        return None;
    }
    let rng = SeedRng::new(seed);
    let options = DisplayOptions::from_seed(rng, config.replicas);
    Some(display::generate::generate(rng, &options))
}

/// Runs `seed` under `config`.
pub fn run_seed(seed: u64, config: &RunConfig) -> SeedReport {
    let workload = config.workload_of(seed);
    let rng = SeedRng::new(seed);
    match workload {
        Workload::Display => {
            let options = DisplayOptions::from_seed(rng, config.replicas);
            let scenario = display::generate::generate(rng, &options);
            let world = WorldConfig {
                store: config.store,
                planted: config.planted(),
                keep_trace: config.keep_trace,
            };
            let run = display::run_scenario(&scenario, &world);
            SeedReport {
                seed,
                workload,
                options: options.to_string(),
                violations: run.violations,
                failure: run.failure,
                trace_hash: run.trace.hash_hex(),
                trace_events: run.trace.events(),
                steps: run.emissions,
                sim_elapsed_ms: run.sim_elapsed_ms,
                trace_tail: run.trace.tail(),
                trace_full: run.trace.full().map(<[String]>::to_vec),
                details: run.details,
                coverage: run.coverage,
                converged_after_ms: run.converged_after_ms,
            }
        }
        Workload::Runs => {
            let options = RunsOptions::from_seed(rng);
            let scenario = runs::generate::generate(rng, &options);
            let world = WorldConfig {
                store: config.store,
                planted: config.planted(),
                keep_trace: config.keep_trace,
            };
            let run = runs::run_scenario(&scenario, &world);
            SeedReport {
                seed,
                workload,
                options: options.to_string(),
                violations: run.violations,
                failure: run.failure,
                trace_hash: run.trace.hash_hex(),
                trace_events: run.trace.events(),
                steps: run.events,
                sim_elapsed_ms: run.sim_elapsed_ms,
                trace_tail: run.trace.tail(),
                trace_full: run.trace.full().map(<[String]>::to_vec),
                details: run.details,
                coverage: run.coverage,
                converged_after_ms: run.converged_after_ms,
            }
        }
        Workload::Journal => {
            let options = JournalSimOptions::from_seed(rng);
            let scenario = journal::generate::generate(rng, &options);
            let run = journal::run_scenario(
                &scenario,
                &journal::WorldConfig {
                    planted: config.planted(),
                    keep_trace: config.keep_trace,
                },
            );
            SeedReport {
                seed,
                workload,
                options: options.to_string(),
                violations: run.violations,
                failure: run.failure,
                trace_hash: run.trace.hash_hex(),
                trace_events: run.trace.events(),
                steps: run.ops,
                sim_elapsed_ms: run.sim_elapsed_ms,
                trace_tail: run.trace.tail(),
                trace_full: run.trace.full().map(<[String]>::to_vec),
                details: run.details,
                coverage: run.coverage,
                converged_after_ms: None,
            }
        }
        Workload::Spool => {
            let options = SpoolSimOptions::from_seed(rng);
            let scenario = spool::generate::generate(rng, &options);
            let run = spool::run_scenario(
                &scenario,
                &spool::WorldConfig {
                    planted: config.planted(),
                    keep_trace: config.keep_trace,
                },
            );
            SeedReport {
                seed,
                workload,
                options: options.to_string(),
                violations: run.violations,
                failure: None,
                trace_hash: run.trace.hash_hex(),
                trace_events: run.trace.events(),
                steps: run.requests,
                sim_elapsed_ms: 0,
                trace_tail: run.trace.tail(),
                trace_full: run.trace.full().map(<[String]>::to_vec),
                details: run.details,
                coverage: run.coverage,
                converged_after_ms: None,
            }
        }
    }
}

/// The scenario seed `seed` plays under `config`, whatever its workload.
pub fn scenario_of(seed: u64, config: &RunConfig) -> crate::shrink::Scenario {
    let rng = SeedRng::new(seed);
    match config.workload_of(seed) {
        Workload::Display => crate::shrink::Scenario::Display(display::generate::generate(
            rng,
            &DisplayOptions::from_seed(rng, config.replicas),
        )),
        Workload::Runs => crate::shrink::Scenario::Runs(runs::generate::generate(
            rng,
            &RunsOptions::from_seed(rng),
        )),
        Workload::Journal => crate::shrink::Scenario::Journal(journal::generate::generate(
            rng,
            &JournalSimOptions::from_seed(rng),
        )),
        Workload::Spool => crate::shrink::Scenario::Spool(spool::generate::generate(
            rng,
            &SpoolSimOptions::from_seed(rng),
        )),
    }
}

/// What running a scenario file produced.
pub struct ScenarioRun {
    pub violations: Vec<Violation>,
    pub failure: Option<String>,
    pub trace_hash: String,
}

/// Plays a scenario file's script with `planted` (or none).
pub fn run_scenario_file(
    file: &ScenarioFile,
    store: StoreKind,
    planted: Option<BugId>,
) -> ScenarioRun {
    match file.script() {
        Some(Script::Display(d)) => {
            let run = display::run_scenario(
                d,
                &WorldConfig {
                    store,
                    planted: Planted::from_option(planted),
                    keep_trace: false,
                },
            );
            ScenarioRun {
                violations: run.violations,
                failure: run.failure,
                trace_hash: run.trace.hash_hex(),
            }
        }
        Some(Script::Runs(r)) => {
            let run = runs::run_scenario(
                r,
                &WorldConfig {
                    store,
                    planted: Planted::from_option(planted),
                    keep_trace: false,
                },
            );
            ScenarioRun {
                violations: run.violations,
                failure: run.failure,
                trace_hash: run.trace.hash_hex(),
            }
        }
        Some(Script::Journal(j)) => {
            let run = journal::run_scenario(
                j,
                &journal::WorldConfig {
                    planted: Planted::from_option(planted),
                    keep_trace: false,
                },
            );
            ScenarioRun {
                violations: run.violations,
                failure: run.failure,
                trace_hash: run.trace.hash_hex(),
            }
        }
        Some(Script::Spool(sp)) => {
            let run = spool::run_scenario(
                sp,
                &spool::WorldConfig {
                    planted: Planted::from_option(planted),
                    keep_trace: false,
                },
            );
            ScenarioRun {
                violations: run.violations,
                failure: None,
                trace_hash: run.trace.hash_hex(),
            }
        }
        None => ScenarioRun {
            violations: Vec::new(),
            failure: Some("the scenario has no workload".into()),
            trace_hash: String::new(),
        },
    }
}
