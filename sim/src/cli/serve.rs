//! `histsim serve`: histsim's own components behind the SUT protocol, on stdin and stdout.

use crate::registry;
use crate::sut::serve::{serve, PlantedSwitch, ServeOptions, StartServed};
use crate::verdict::Verdict;
use crate::workload::{DynWorkload, StoreKind};

#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// Which system to serve: `display` (the display components of seed document 000) or
    /// `runs` (the run-event store of 003): the workloads that serve one.
    #[arg(value_parser = parse_served)]
    system: Served,
    /// The store, over what `open` asks for.
    #[arg(long, value_enum)]
    store: Option<StoreKind>,
    /// Display only: answer as a system with these known differences of
    /// docs/display-projection.md (comma-separated IDs, e.g. `D1,D2`), declared in `hello`:
    /// histsim's answers without the warnings they cover. For trying the harness's handling of
    /// a declared difference without another system at hand.
    #[arg(long, value_delimiter = ',', value_parser = parse_difference)]
    emulate_differences: Vec<model::display::KnownDifference>,
    /// Serve as a system with this bug built in (a catalog ID), whatever `open` asks: a broken
    /// system to try the regression workflow on (shrink its failure, then play the file against
    /// `histsim serve` without this flag, the fixed system).
    #[arg(long, value_name = "ID", conflicts_with = "without_planted")]
    planted: Option<history::BugId>,
    /// Serve as a system without histsim's planted switches: `hello` does not declare
    /// `planted` and `open`'s `planted` is ignored, as another system's would be.
    #[arg(long)]
    without_planted: bool,
}

/// A workload that serves a system, and how it starts one.
#[derive(Clone, Copy)]
struct Served(&'static dyn DynWorkload, StartServed);

fn parse_served(name: &str) -> Result<Served, String> {
    let serving = || registry::REGISTRY.iter().filter(|w| w.serve().is_some());
    let found = serving().find(|w| w.name() == name);
    found
        .and_then(|w| Some(Served(*w, w.serve()?)))
        .ok_or_else(|| {
            let names: Vec<&str> = serving().map(|w| w.name()).collect();
            format!(
                "no system `{name}` to serve; expected {}",
                names.join(" or ")
            )
        })
}

fn parse_difference(id: &str) -> Result<model::display::KnownDifference, String> {
    model::display::KnownDifference::parse(id).ok_or_else(|| {
        let known: Vec<&str> = model::display::KnownDifference::ALL
            .iter()
            .map(|d| d.id())
            .collect();
        format!(
            "`{id}` is not a known difference (known: {})",
            known.join(", ")
        )
    })
}

pub(crate) fn cmd(args: ServeArgs) -> Verdict {
    let Served(workload, start) = args.system;
    // A bug of another system would serve a system with no bug: the user meant a broken one.
    if let Some(id) = args.planted.filter(|id| !workload.covers(*id)) {
        return Verdict::usage(&format!(
            "--planted {id}: not a bug of the {} system (its IDs start with {})",
            workload.name(),
            registry::ids_of(workload)
                .first()
                .map_or('?', |first| first.family()),
        ));
    }
    let switch = match (args.planted, args.without_planted) {
        (Some(id), _) => PlantedSwitch::Fixed(id),
        (None, true) => PlantedSwitch::Ignored,
        (None, false) => PlantedSwitch::FromOpen,
    };
    let options = ServeOptions {
        store_override: args.store.map(|s| s.as_str().to_string()),
        switch,
        emulated: args.emulate_differences.into_iter().collect(),
    };
    let mut server = match start(options) {
        Ok(server) => server,
        Err(e) => return Verdict::usage(&e),
    };
    // A long request (a big `put_batch`) in a few reads, not one per 8 KiB of stdin's buffer.
    let stdin = std::io::BufReader::with_capacity(1 << 20, std::io::stdin().lock());
    let stdout = std::io::stdout().lock();
    match serve(server.as_mut(), stdin, stdout) {
        Ok(()) => Verdict::Clean,
        Err(e) => {
            eprintln!("error: {} serve: {e}", workload.name());
            Verdict::Usage
        }
    }
}
