//! `histsim serve`: histsim's own components behind the SUT protocol, on stdin and stdout.

use crate::sut::serve::{serve, DisplayServer};
use crate::verdict::Verdict;
use crate::workload::StoreKind;

#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// Which system to serve (the display components; the runs store is not served yet).
    #[arg(value_parser = ["display"])]
    system: String,
    /// The store behind the replicas, over what `open` asks for.
    #[arg(long, value_enum)]
    store: Option<StoreKind>,
}

pub(crate) fn cmd(args: ServeArgs) -> Verdict {
    let store = args.store.map(|s| match s {
        StoreKind::Memory => "memory".to_string(),
        StoreKind::Sqlite => "sqlite".to_string(),
    });
    let mut server = DisplayServer::new(store);
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    match serve(&mut server, stdin, stdout) {
        Ok(()) => Verdict::Clean,
        Err(e) => {
            eprintln!("error: {} serve: {e}", args.system);
            Verdict::Usage
        }
    }
}
