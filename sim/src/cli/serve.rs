//! `histsim serve`: histsim's own components behind the SUT protocol, on stdin and stdout.

use crate::sut::serve::{serve, DisplayServer, PlantedSwitch, Served};
use crate::sut::serve_runs::RunsServer;
use crate::verdict::Verdict;
use crate::workload::StoreKind;

#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// Which system to serve: the display components (seed 000) or the run-event store (003).
    #[arg(value_parser = ["display", "runs"])]
    system: String,
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
    let store = args.store.map(|s| s.as_str().to_string());
    // A bug of another system would serve a system with no bug: the user meant a broken one.
    let family = if args.system == "runs" { 'R' } else { 'P' };
    if let Some(id) = args.planted.filter(|id| id.family() != family) {
        return Verdict::usage(&format!(
            "--planted {id}: not a bug of the {} system (its IDs start with {family})",
            args.system
        ));
    }
    let switch = match (args.planted, args.without_planted) {
        (Some(id), _) => PlantedSwitch::Fixed(id),
        (None, true) => PlantedSwitch::Ignored,
        (None, false) => PlantedSwitch::FromOpen,
    };
    let mut server: Box<dyn Served> = match args.system.as_str() {
        "runs" if !args.emulate_differences.is_empty() => {
            eprintln!("error: --emulate-differences: the known differences are display ones");
            return Verdict::Usage;
        }
        "runs" => Box::new(RunsServer::new(store).with_planted(switch)),
        _ => Box::new(
            DisplayServer::new(store, args.emulate_differences.into_iter().collect())
                .with_planted(switch),
        ),
    };
    // A long request (a big `put_batch`) in a few reads, not one per 8 KiB of stdin's buffer.
    let stdin = std::io::BufReader::with_capacity(1 << 20, std::io::stdin().lock());
    let stdout = std::io::stdout().lock();
    match serve(server.as_mut(), stdin, stdout) {
        Ok(()) => Verdict::Clean,
        Err(e) => {
            eprintln!("error: {} serve: {e}", args.system);
            Verdict::Usage
        }
    }
}
