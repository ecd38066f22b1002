//! The one role every workload plays, and the registry of the workloads this build has.
//!
//! A workload turns a seed into options (swarm testing), the options into a scenario (plain data,
//! the same type a scenario file holds), and plays a scenario in its deterministic world against
//! the components under test, checked against its model. Everything the harness does with a
//! workload (run a seed, replay it, shrink a failure, read and write scenario files, count
//! coverage, find which workload checks a catalog ID) goes through [`Workload`], so adding a
//! workload means one folder that implements it plus one line in [`crate::registry::REGISTRY`].
//!
//! [`Workload`] has associated types, so the registry holds [`DynWorkload`], its object-safe
//! face: the same operations on a type-erased [`AnyScenario`]. The registry of the workloads
//! this build has is [`crate::registry`], apart, so that this file names no workload.

use crate::coverage::Coverage;
use crate::outcome::Violation;
use crate::rng::SeedRng;
pub use crate::store_kind::StoreKind;
use crate::sut::serve::StartServed;
use crate::trace::Trace;
use history::{BugId, Planted};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::any::Any;
use std::fmt;
use std::marker::PhantomData;

use erased_serde as erased;

/// How `histsim fuzz` treats a workload's target: what it measured for that target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuzzTuning {
    /// The most steps a generated scenario may have (a few milliseconds a play).
    pub steps_bound: usize,
    /// How many times over `steps_bound` a generated scenario may be and still get its edits,
    /// which can cut it down to size.
    pub edit_room: usize,
    /// Whether libFuzzer's entropic schedule (its default) stays on for the target.
    pub entropic: bool,
}

impl FuzzTuning {
    /// A workload that measured nothing else: 20 steps, no room, libFuzzer's defaults.
    pub const DEFAULT: FuzzTuning = FuzzTuning {
        steps_bound: 20,
        edit_room: 1,
        entropic: true,
    };
}

/// How a world is played: the same for every workload.
#[derive(Clone, Debug)]
pub struct WorldConfig {
    pub store: StoreKind,
    pub planted: Planted,
    /// Keep every trace line and the answers beside the model's, for `replay --trace`.
    pub keep_trace: bool,
    /// The system under test in a child process (`--sut`); `None`: histsim's own components in
    /// this process. Only the workloads with a process boundary (display, runs) accept one.
    pub sut: Option<std::sync::Arc<crate::sut::SutOptions>>,
    /// Display only: the known differences (docs/display-projection.md) an answer's trace event
    /// disregards, so that `histsim diff` compares two systems up to what either declares.
    /// Empty everywhere else: a trace shows every warning.
    pub alike_up_to: model::display::Declared,
}

impl WorldConfig {
    pub fn new(store: StoreKind, planted: Planted) -> Self {
        WorldConfig {
            store,
            planted,
            keep_trace: false,
            sut: None,
            alike_up_to: Default::default(),
        }
    }
}

/// What the system under test of a world declares it does differently from the model on
/// purpose ([`Workload::DECLARED_DIFFERENCES`]); `Err` says why it could not be asked.
pub(crate) type DeclaredBy = fn(&WorldConfig) -> Result<model::display::Declared, String>;

/// Options a user pins on the command line over what a seed derives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OptionOverrides {
    /// API replicas of the display workload (1 to 5).
    pub replicas: Option<u8>,
}

/// What one played scenario produced, whatever the workload.
pub struct WorkloadRun {
    /// Broken invariants, most specific first.
    pub violations: Vec<Violation>,
    /// The world did not finish (a host error or a hang): neither safe nor unsafe, broken.
    pub failure: Option<String>,
    pub trace: Trace,
    /// What the workload did: events the agents emitted, operations issued, requests sent.
    pub steps: usize,
    pub sim_elapsed_ms: u64,
    /// Simulated ms from healing every fault until the answers converged (worlds with a
    /// liveness phase only).
    pub converged_after_ms: Option<u64>,
    /// Probes fired: faults injected, features exercised.
    pub coverage: Coverage,
    /// With `keep_trace`: the answers beside the model's expectation, as text, for people.
    pub details: Option<String>,
    /// With `keep_trace`: what a page of this world shows beside its trace (`--html`).
    pub picture: Option<crate::picture::Facts>,
    /// What a system under test in a child process wrote to its stderr: kept beside the report
    /// of a failing seed.
    pub sut_log: Option<String>,
    /// What the checks did not ask of the system under test (an op it does not serve, a known
    /// difference it declares), counted: the report and `replay` print them, so no check
    /// weakens in silence.
    pub left_out: Coverage,
    /// What a system under test in a child process answered, op by op ([`crate::sut::tally`]);
    /// empty in process.
    pub answers: Coverage,
}

impl WorkloadRun {
    /// The run of a world that panicked: no verdict, a failure naming the panic's message.
    fn panicked(world: &WorldConfig, panic: &(dyn Any + Send)) -> WorkloadRun {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(a panic without a message)".into());
        WorkloadRun {
            violations: Vec::new(),
            failure: Some(format!("the world panicked: {message}")),
            trace: Trace::new(world.keep_trace),
            steps: 0,
            sim_elapsed_ms: 0,
            converged_after_ms: None,
            coverage: Coverage::default(),
            details: None,
            picture: None,
            sut_log: None,
            left_out: Coverage::default(),
            answers: Coverage::default(),
        }
    }
}

/// How big a scenario is, for the shrinker and its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ScenarioSize {
    pub steps: usize,
    pub faults: usize,
}

/// One way to simplify a scenario, made only when applied (to the scenario it was listed for):
/// a fuzz input's edit makes the one move it picks, never the others.
pub(crate) type Move<S> = Box<dyn Fn(&S) -> S>;

/// A move that changes a copy of the scenario in place, then passes it through `tidy` (which
/// drops what a removal left dangling; `std::convert::identity` when nothing can dangle).
pub(crate) fn move_by<S: Clone + 'static>(
    change: impl Fn(&mut S) + 'static,
    tidy: fn(S) -> S,
) -> Move<S> {
    Box::new(move |s: &S| {
        let mut c = s.clone();
        change(&mut c);
        tidy(c)
    })
}

/// Halving blocks of `0..n`, largest first, never the whole range: what a shrinker cuts from a
/// list of `n` before it tries single elements (`0..2, 2..4, 0..1, 1..2, 2..3, 3..4` for 4).
pub fn halving_blocks(n: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut width = n / 2;
    while width >= 1 {
        let mut start = 0;
        while start < n {
            let end = (start + width).min(n);
            if end - start < n {
                out.push(start..end);
            }
            start = end;
        }
        width /= 2;
    }
    out
}

/// One move per element of a list of the scenario (`len` elements, where `list` finds the list
/// in a copy), in the list's order: the scenario without that element, nothing else changed.
pub(crate) fn removals<S: Clone + 'static, T: 'static>(
    len: usize,
    list: fn(&mut S) -> &mut Vec<T>,
) -> impl DoubleEndedIterator<Item = Move<S>> {
    (0..len).map(move |i| {
        let change = move |c: &mut S| {
            list(c).remove(i);
        };
        move_by(change, std::convert::identity)
    })
}

/// An integer of a scenario (a limit, a message count, a latency, a fault's time) that the
/// shrinker bisects toward its smallest value still failing, as proptest shrinks integers.
pub struct Integer<S> {
    /// Where it is, for people (`ops[3].limit`).
    pub path: String,
    pub value: u64,
    /// The smallest value the scenario's validation accepts there.
    pub min: u64,
    /// Whether it scales the work the scenario does (a message count, a page's size or limit):
    /// its smallest value is tried with the large cuts, where a time's or an index's is tried
    /// after the small ones.
    pub scales: bool,
    /// The scenario with this integer set to the value given.
    pub set: SetInteger<S>,
}

/// How an [`Integer`] is set: the scenario with it at the value given.
pub(crate) type SetInteger<S> = Box<dyn Fn(&S, u64) -> S>;

impl<S> Integer<S> {
    /// This integer, marked as one that scales the work ([`Integer::scales`]).
    pub fn scaling(self) -> Self {
        Integer {
            scales: true,
            ..self
        }
    }
}

/// The integer at `path` of a scenario, now `value`, at least `min`, written by `write`; `None`
/// when it is already at its smallest.
pub fn integer<S: Clone + 'static>(
    path: String,
    value: u64,
    min: u64,
    write: impl Fn(&mut S, u64) + 'static,
) -> Option<Integer<S>> {
    (value > min).then(|| Integer {
        path,
        value,
        min,
        scales: false,
        set: Box::new(move |s: &S, v: u64| {
            let mut c = s.clone();
            write(&mut c, v);
            c
        }),
    })
}

/// One workload: seed -> options -> scenario -> played and checked.
pub trait Workload: 'static {
    /// The options a seed derives; printed before a run, one `name = value` a line.
    type Options: fmt::Display;
    /// The script a world plays; also the workload's table in a scenario file.
    type Scenario: Clone + fmt::Debug + PartialEq + Serialize + DeserializeOwned + 'static;

    /// The name on the command line and in reports (`--workload display`).
    const NAME: &'static str;
    /// One line for `--help`.
    const ABOUT: &'static str;
    /// The table a scenario file holds this workload's script in (`[display]`): its name.
    const SECTION: &'static str = Self::NAME;
    /// The coverage probes this workload declares.
    const PROBES: &'static [&'static str];
    /// Whether the world heals its faults and then waits for convergence (reports the time it
    /// took as `converged_after_ms`); the others check after every operation instead.
    const HAS_LIVENESS_PHASE: bool = false;
    /// The protocol ops a system under test in a child process must declare to play this
    /// workload (`--sut`); empty: the workload has no process boundary.
    const SUT_OPS: &'static [&'static str] = &[];
    /// The stores `--store` may name for this workload (the first is the default).
    const STORES: &'static [StoreKind] = &[StoreKind::Memory, StoreKind::Sqlite];
    /// How `histsim fuzz` treats this workload's target.
    const FUZZ: FuzzTuning = FuzzTuning::DEFAULT;
    /// Starts histsim's own system of this workload behind the protocol (`histsim serve
    /// NAME`); `None`: nothing to serve.
    const SERVE: Option<StartServed> = None;

    /// The known differences a system under test declares (`hello`), which `histsim diff`
    /// compares two systems up to unless `--strict`; `None`: this workload's answers are
    /// compared whole.
    const DECLARED_DIFFERENCES: Option<DeclaredBy> = None;

    /// Whether this workload's checkers cover catalog ID `id`.
    fn covers(id: BugId) -> bool;
    /// Loads the read-only tables its system under test shares for the whole process (the
    /// o200k vocabulary), for a caller that loads them beside its own start-up; the first play
    /// loads them otherwise. `None`: no such tables.
    const LOAD_SHARED_TABLES: Option<fn()> = None;
    fn from_seed(rng: SeedRng, overrides: &OptionOverrides) -> Self::Options;
    fn generate(rng: SeedRng, options: &Self::Options) -> Self::Scenario;
    /// Plays `scenario` in the deterministic world and checks every invariant.
    fn play(scenario: &Self::Scenario, world: &WorldConfig) -> WorkloadRun;
    /// Checks a scenario read from a file: `Err` names the field path first (`turns[0].agent:
    /// ...`).
    fn validate(scenario: &Self::Scenario) -> Result<(), String>;
    /// Every one-move simplification of `scenario`, largest cut first, not yet made or validated:
    /// each move makes its simpler scenario when applied to `scenario`.
    fn shrink_moves(scenario: &Self::Scenario) -> Vec<Move<Self::Scenario>>;
    /// Simpler scenarios to try while shrinking, largest cut first: the moves that are valid and
    /// change something.
    fn shrink_candidates(scenario: &Self::Scenario) -> Vec<Self::Scenario> {
        Self::shrink_moves(scenario)
            .iter()
            .map(|m| m(scenario))
            .filter(|c| Self::validate(c).is_ok() && c != scenario)
            .collect()
    }
    /// The integers of `scenario` above their smallest value, for the shrinker to bisect
    /// (sizes first: a block's message count before a page's limit). None by default.
    fn shrink_integers(_scenario: &Self::Scenario) -> Vec<Integer<Self::Scenario>> {
        Vec::new()
    }
    fn size(scenario: &Self::Scenario) -> ScenarioSize;
    /// About how much work playing `scenario` is, in steps of the usual cost: what a fuzz input's
    /// size bound is measured in. The steps by default; a workload whose steps differ widely in
    /// cost (the runs workload's bulk messages are written in batches) says so.
    fn play_cost(scenario: &Self::Scenario) -> usize {
        Self::size(scenario).steps
    }
}

/// A scenario of some registered workload.
pub struct AnyScenario {
    workload: &'static dyn DynWorkload,
    value: Box<dyn Any>,
}

impl AnyScenario {
    pub fn new<W: Workload>(scenario: W::Scenario) -> Self {
        AnyScenario {
            workload: &Registered::<W>(PhantomData),
            value: Box::new(scenario),
        }
    }

    pub fn workload(&self) -> &'static dyn DynWorkload {
        self.workload
    }

    /// The scenario, when it is `W`'s.
    pub fn get<W: Workload>(&self) -> Option<&W::Scenario> {
        self.value.downcast_ref()
    }

    pub fn get_mut<W: Workload>(&mut self) -> Option<&mut W::Scenario> {
        self.value.downcast_mut()
    }

    pub fn play(&self, world: &WorldConfig) -> WorkloadRun {
        self.workload.play(self, world)
    }

    pub fn size(&self) -> ScenarioSize {
        self.workload.size(self)
    }

    pub fn play_cost(&self) -> usize {
        self.workload.play_cost(self)
    }
}

impl Clone for AnyScenario {
    fn clone(&self) -> Self {
        self.workload.clone_scenario(self)
    }
}

impl PartialEq for AnyScenario {
    fn eq(&self, other: &Self) -> bool {
        self.workload.name() == other.workload.name() && self.workload.eq_scenario(self, other)
    }
}

impl fmt::Debug for AnyScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.workload.debug_scenario(self, f)
    }
}

/// [`Workload`] as an object: what the registry holds.
pub trait DynWorkload: Sync {
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    fn section(&self) -> &'static str;
    fn probes(&self) -> &'static [&'static str];
    fn has_liveness_phase(&self) -> bool;
    fn sut_ops(&self) -> &'static [&'static str];
    fn stores(&self) -> &'static [StoreKind];
    fn fuzz_tuning(&self) -> FuzzTuning;
    fn serve(&self) -> Option<StartServed>;
    fn declared_differences(&self) -> Option<DeclaredBy>;
    /// Whether its system under test can be a child process over the SUT protocol (`--sut`).
    fn has_sut_boundary(&self) -> bool {
        !self.sut_ops().is_empty()
    }
    fn covers(&self, id: BugId) -> bool;
    /// [`Workload::LOAD_SHARED_TABLES`].
    fn load_shared_tables(&self) -> Option<fn()>;
    /// The scenario seed `rng` generates, and the options it derived on the way, as text.
    fn derive(&self, rng: SeedRng, overrides: &OptionOverrides) -> (AnyScenario, String);
    /// The scenario seed `rng` generates.
    fn scenario_of(&self, rng: SeedRng, overrides: &OptionOverrides) -> AnyScenario {
        self.derive(rng, overrides).0
    }
    fn play(&self, scenario: &AnyScenario, world: &WorldConfig) -> WorkloadRun;
    fn validate(&self, scenario: &AnyScenario) -> Result<(), String>;
    fn shrink_candidates(&self, scenario: &AnyScenario) -> Vec<AnyScenario>;
    /// [`Workload::shrink_moves`]: a fuzz input's edit makes and validates only the move it
    /// picks.
    fn shrink_moves(&self, scenario: &AnyScenario) -> Vec<Move<AnyScenario>>;
    /// [`Workload::shrink_integers`].
    fn shrink_integers(&self, scenario: &AnyScenario) -> Vec<Integer<AnyScenario>>;
    fn size(&self, scenario: &AnyScenario) -> ScenarioSize;
    fn play_cost(&self, scenario: &AnyScenario) -> usize;
    /// Reads this workload's table of a scenario file.
    fn deserialize_section<'de>(
        &self,
        de: &mut dyn erased::Deserializer<'de>,
    ) -> Result<AnyScenario, erased::Error>;
    /// The scenario as something serde can write (this workload's table of a scenario file).
    fn serializable<'a>(&self, scenario: &'a AnyScenario) -> &'a dyn erased::Serialize;
    fn clone_scenario(&self, scenario: &AnyScenario) -> AnyScenario;
    fn eq_scenario(&self, a: &AnyScenario, b: &AnyScenario) -> bool;
    fn debug_scenario(&self, scenario: &AnyScenario, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

/// The object of workload `W`.
pub(crate) struct Registered<W>(PhantomData<fn() -> W>);

impl<W> Registered<W> {
    pub const fn new() -> Self {
        Registered(PhantomData)
    }
}

impl<W> Default for Registered<W> {
    fn default() -> Self {
        Registered::new()
    }
}

impl<W: Workload> Registered<W> {
    fn of(scenario: &AnyScenario) -> &W::Scenario {
        scenario.get::<W>().unwrap_or_else(|| {
            panic!(
                "a {} scenario handed to {}",
                scenario.workload.name(),
                W::NAME
            )
        })
    }
}

impl<W: Workload> DynWorkload for Registered<W> {
    fn name(&self) -> &'static str {
        W::NAME
    }
    fn about(&self) -> &'static str {
        W::ABOUT
    }
    fn section(&self) -> &'static str {
        W::SECTION
    }
    fn probes(&self) -> &'static [&'static str] {
        W::PROBES
    }
    fn has_liveness_phase(&self) -> bool {
        W::HAS_LIVENESS_PHASE
    }
    fn sut_ops(&self) -> &'static [&'static str] {
        W::SUT_OPS
    }
    fn stores(&self) -> &'static [StoreKind] {
        W::STORES
    }
    fn fuzz_tuning(&self) -> FuzzTuning {
        W::FUZZ
    }
    fn serve(&self) -> Option<StartServed> {
        W::SERVE
    }
    fn declared_differences(&self) -> Option<DeclaredBy> {
        W::DECLARED_DIFFERENCES
    }
    fn covers(&self, id: BugId) -> bool {
        W::covers(id)
    }
    fn load_shared_tables(&self) -> Option<fn()> {
        W::LOAD_SHARED_TABLES
    }
    fn derive(&self, rng: SeedRng, overrides: &OptionOverrides) -> (AnyScenario, String) {
        let options = W::from_seed(rng, overrides);
        let scenario = AnyScenario::new::<W>(W::generate(rng, &options));
        (scenario, options.to_string())
    }
    fn play(&self, scenario: &AnyScenario, world: &WorldConfig) -> WorkloadRun {
        // A panic inside the world (a model precondition, a checker or component bug) is a
        // broken world for this one scenario, reported with its seed or file like any other,
        // not the end of a campaign of thousands.
        let played = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            W::play(Self::of(scenario), world)
        }));
        played.unwrap_or_else(|panic| WorkloadRun::panicked(world, panic.as_ref()))
    }
    fn validate(&self, scenario: &AnyScenario) -> Result<(), String> {
        W::validate(Self::of(scenario))
    }
    fn shrink_candidates(&self, scenario: &AnyScenario) -> Vec<AnyScenario> {
        W::shrink_candidates(Self::of(scenario))
            .into_iter()
            .map(AnyScenario::new::<W>)
            .collect()
    }
    fn shrink_moves(&self, scenario: &AnyScenario) -> Vec<Move<AnyScenario>> {
        W::shrink_moves(Self::of(scenario))
            .into_iter()
            .map(|m| {
                Box::new(move |s: &AnyScenario| AnyScenario::new::<W>(m(Self::of(s))))
                    as Move<AnyScenario>
            })
            .collect()
    }
    fn shrink_integers(&self, scenario: &AnyScenario) -> Vec<Integer<AnyScenario>> {
        W::shrink_integers(Self::of(scenario))
            .into_iter()
            .map(|i| {
                let set = i.set;
                Integer {
                    path: i.path,
                    value: i.value,
                    min: i.min,
                    scales: i.scales,
                    set: Box::new(move |s: &AnyScenario, v: u64| {
                        AnyScenario::new::<W>(set(Self::of(s), v))
                    }),
                }
            })
            .collect()
    }
    fn size(&self, scenario: &AnyScenario) -> ScenarioSize {
        W::size(Self::of(scenario))
    }
    fn play_cost(&self, scenario: &AnyScenario) -> usize {
        W::play_cost(Self::of(scenario))
    }
    fn deserialize_section<'de>(
        &self,
        de: &mut dyn erased::Deserializer<'de>,
    ) -> Result<AnyScenario, erased::Error> {
        let scenario: W::Scenario = erased::deserialize(de)?;
        Ok(AnyScenario::new::<W>(scenario))
    }
    fn serializable<'a>(&self, scenario: &'a AnyScenario) -> &'a dyn erased::Serialize {
        Self::of(scenario)
    }
    fn clone_scenario(&self, scenario: &AnyScenario) -> AnyScenario {
        AnyScenario::new::<W>(Self::of(scenario).clone())
    }
    fn eq_scenario(&self, a: &AnyScenario, b: &AnyScenario) -> bool {
        match (a.get::<W>(), b.get::<W>()) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }
    fn debug_scenario(&self, scenario: &AnyScenario, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple(W::NAME).field(Self::of(scenario)).finish()
    }
}

impl fmt::Debug for dyn DynWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
