//! `histsim serve`: histsim's own components behind the SUT protocol, on stdin and stdout.

use crate::sut::serve::{serve, DisplayServer, Served};
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
}

pub(crate) fn cmd(args: ServeArgs) -> Verdict {
    let store = args.store.map(|s| s.as_str().to_string());
    let mut server: Box<dyn Served> = match args.system.as_str() {
        "runs" => Box::new(RunsServer::new(store)),
        _ => Box::new(DisplayServer::new(store)),
    };
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    match serve(server.as_mut(), stdin, stdout) {
        Ok(()) => Verdict::Clean,
        Err(e) => {
            eprintln!("error: {} serve: {e}", args.system);
            Verdict::Usage
        }
    }
}
