//! The display workload (seed 000): a thread's conversation persisted by every API replica from a
//! fan-out bus and rebuilt by the display-scoped projector, checked against the client-view model.
//!
//! Seed -> [`generate`] -> [`DisplayScenario`] -> [`world::World`] -> [`check::check`] against
//! [`model::display::client_transcript`] of the [`truth`]. The world plays and records, the
//! model is computed once per world outside it (once every run emitted), the world's liveness
//! phase polls until the answers show the model's history, the checker compares against the
//! same model, and what a read before settling may answer is [`early`]'s function of the model
//! and the record up to that read.

mod bus;
pub(crate) mod check;
mod client;
pub(crate) mod context;
pub(crate) mod departure;
mod digest;
mod early;
pub(crate) mod faults;
pub mod generate;
mod live;
mod liveness;
pub(crate) mod lookup_rule;
pub(crate) mod map;
pub(crate) mod options;
mod picture;
pub(crate) mod probes;
pub(crate) mod provenance;
pub(crate) mod record;
pub mod rows;
pub mod scenario;
pub(crate) mod served;
pub(crate) mod shrink;
mod state;
mod stored_rows;
pub mod system;
mod thread_ids;
pub(crate) mod truth;
pub(crate) mod view;
pub(crate) mod wire;
pub(crate) mod word_diff;
pub(crate) mod words;
pub mod world;

pub use crate::workload::{StoreKind, WorldConfig};
pub use options::DisplayOptions;
pub use scenario::DisplayScenario;

use crate::sut::serve::StartServed;
use crate::workload::{FuzzTuning, Workload, WorkloadRun};
use history::BugId;
use model::display as m;
use std::rc::Rc;
use world::Emitted;

/// What the client must see: the model of the ground truth.
struct Model {
    conversation: m::Conversation,
    transcript: m::Transcript,
}

impl Model {
    fn of(
        scenario: &DisplayScenario,
        plan: &faults::FaultPlan,
        emissions: &[Emitted],
        declared: &m::Declared,
    ) -> Self {
        let conversation = truth::conversation(scenario, plan, emissions);
        let transcript = m::client_transcript_declaring(&conversation, declared);
        Model {
            conversation,
            transcript,
        }
    }
}

/// Plays `scenario` and models it. The world plays until every run has emitted; the model is
/// computed then, once, outside the world, from the ground truth (the scenario, the fault plan,
/// what was published) and the system's declared differences; the world, handed the history
/// the model says the replicas must converge on, polls until they show it. Nothing the world
/// does after that changes the model: the emissions were final.
fn play_and_model(
    scenario: &DisplayScenario,
    plan: &Rc<faults::FaultPlan>,
    config: &WorldConfig,
) -> (world::WorldRecord, Model) {
    // One copy of the scenario and one fault plan, shared by the world's hosts (which outlive
    // this borrow) and the model: a copy each and a plan each were 0.7 % of the instructions.
    let mut world = match world::World::start(Rc::new(scenario.clone()), plan.clone(), config) {
        Ok(world) => world,
        Err(broken) => {
            let model = Model::of(scenario, plan, &broken.emissions, &broken.declared);
            return (*broken, model);
        }
    };
    let modelled = world
        .until_every_run_emitted()
        .then(|| Model::of(scenario, plan, &world.published(), world.declared()));
    if let Some(model) = &modelled {
        world.settle_on(view::SettledHistory::of(
            &model.conversation,
            &model.transcript,
        ));
    }
    let record = world.finish();
    let model = match modelled {
        Some(model) => model,
        // The world ended before every run emitted (it broke): the model of what it published.
        None => Model::of(scenario, plan, &record.emissions, &record.declared),
    };
    debug_assert_eq!(
        model.conversation.emissions.len(),
        (record.emissions.iter())
            .filter(|e| scenario.steps().any(|s| s.id == e.step))
            .count(),
        "the model holds every emission the world published"
    );
    (record, model)
}

/// Plays `scenario` and checks every invariant.
pub fn run_scenario(scenario: &DisplayScenario, config: &WorldConfig) -> WorkloadRun {
    let plan = Rc::new(faults::FaultPlan::new(scenario));
    let (record, model) = play_and_model(scenario, &plan, config);
    let early_expected = if record.failure.is_some() {
        Vec::new()
    } else {
        early::expectations(&record, &model.conversation)
    };
    let mut violations = if record.failure.is_some() {
        Vec::new()
    } else {
        check::check(
            scenario,
            &plan,
            &model.conversation,
            &model.transcript,
            &record,
            &early_expected,
        )
    };
    if let Some(sut) = &config.sut {
        departure::name_the_system(&mut violations, &sut.command);
    }
    let details = config
        .keep_trace
        .then(|| describe(&record.reads, &model.transcript));
    let picture = config
        .keep_trace
        .then(|| picture::facts(&record.reads, &early_expected, &model.transcript));
    let mut coverage = record.coverage.clone();
    probes::scenario_probes(scenario, &mut coverage);
    probes::record_probes(scenario, &record, &mut coverage);
    probes::model_probes(&model.transcript, &mut coverage);
    WorkloadRun {
        left_out: declared_losses(&model.transcript),
        sut_log: record.sut_log,
        answers: record.answers,
        converged_after_ms: record.converged_after_ms,
        coverage,
        details,
        picture,
        violations,
        failure: record.failure,
        steps: record.emissions.len(),
        trace: record.trace,
        sim_elapsed_ms: record.sim_elapsed_ms,
    }
}

/// The places where the model expected a declared known difference's behaviour instead of
/// histsim's, counted per difference for the report, so no check weakens in silence.
fn declared_losses(transcript: &m::Transcript) -> crate::coverage::Coverage {
    let mut left_out = crate::coverage::Coverage::default();
    for d in transcript
        .accepted_losses
        .iter()
        .filter_map(m::KnownDifference::of_loss)
    {
        left_out.hit(&format!(
            "{} for {} (the system declares it: {})",
            d.rule(),
            d.id(),
            d.summary()
        ));
    }
    left_out
}

/// Every answer and the expected transcript, one message a line, for `histsim replay --trace`.
fn describe(reads: &[world::Read], transcript: &m::Transcript) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let show = |out: &mut String, view: &[view::ViewMessage]| {
        for m in view {
            let text: Vec<String> = m
                .parts
                .iter()
                .map(|p| match p {
                    view::ViewPart::Text(t) => t.trim_end().to_string(),
                    view::ViewPart::Image(u) => format!("[image {u}]"),
                    view::ViewPart::Audio { format, data } => format!("[audio {format} {data}]"),
                })
                .collect();
            let _ = writeln!(out, "    {:<9} {}", m.role, text.join(" "));
        }
    };
    for read in reads {
        let label = match (read.turn, read.settled) {
            (Some(t), _) => format!("turn {t}"),
            (None, true) => "settled".to_string(),
            (None, false) => "poll after healing".to_string(),
        };
        let _ = writeln!(
            out,
            "  answer of replica-{} ({label}) at {}us:",
            read.replica, read.at_us
        );
        match &read.result {
            Ok(p) => {
                show(&mut out, &view::view_of_projection(&p.messages));
                for w in &p.warnings {
                    let _ = writeln!(out, "    warning   {}", w.text);
                }
            }
            Err(e) => {
                let _ = writeln!(out, "    error     {e}");
            }
        }
    }
    let _ = writeln!(out, "  the model's transcript:");
    show(&mut out, &view::view_of_model(&transcript.messages));
    for w in &transcript.expected_warnings {
        let _ = writeln!(
            out,
            "    expected warning {} (emission {:?}, field {:?})",
            w.code, w.emission, w.field
        );
    }
    for l in &transcript.accepted_losses {
        let _ = writeln!(
            out,
            "    accepted loss [{}] emission {}: {}",
            l.rule, l.emission, l.why
        );
    }
    out
}

/// The display workload in the registry.
pub struct DisplayWorkload;

impl Workload for DisplayWorkload {
    const NAME: &'static str = "display";
    const ABOUT: &'static str =
        "Display events through the fan-out bus, persisters and the projector (P IDs)";
    const HAS_LIVENESS_PHASE: bool = true;
    const SUT_OPS: &'static [&'static str] = &system::DISPLAY_OPS;
    const SERVE: Option<StartServed> = Some(served::start);
    /// Compared up to what either system declares: each such difference is documented.
    const DECLARED_DIFFERENCES: Option<crate::workload::DeclaredBy> = Some(system::declared_by);
    /// A play takes about 4 ms at 60 steps (release build), room for delegation, a crash and a
    /// recovery in one input. The entropic schedule weighs every feature of every execution,
    /// tens of thousands an input here: off, 60 s from an empty corpus made 895 exec/s against
    /// 683 with the same coverage (docs/fuzz-detection.md, "The entropic schedule off").
    const FUZZ: FuzzTuning = FuzzTuning {
        steps_bound: 60,
        entropic: false,
        ..FuzzTuning::DEFAULT
    };

    fn covers(id: BugId) -> bool {
        id.family() == 'P'
    }
    crate::workload_items::workload_items!(
        DisplayOptions,
        DisplayScenario,
        from_seed(rng, overrides) => DisplayOptions::from_seed(rng, overrides.replicas)
    );
}
