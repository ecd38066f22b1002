//! One replica process of a live run (`histsim live-replica`, started by `histsim live`): an API
//! replica whose persister is on a NATS Core subscription (every replica receives every event)
//! and writes into the one shared SQLite file, and whose read endpoint rebuilds the history from
//! that file. It reports each delivery on stdout ([`ReplicaLine`]) for the recording.

use super::backend::{Backend, Broken, Delivered};
use super::line::{wall_us, ReplicaLine};
use super::read::{ReadAnswer, READ_REQUEST};
use history::display::{
    AgentIdentity, ProjectorOptions, ReplicaNode, SqliteDisplayStore, StoreOptions,
};
use history::Planted;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// How long a writer waits for another process's transaction before SQLite answers busy.
pub const BUSY_TIMEOUT_MS: u64 = 10_000;

/// What a replica process is told.
#[derive(Clone, Debug)]
pub struct ReplicaSetup {
    pub nats_url: String,
    /// The subjects it subscribes to (a wildcard; the last token is the step id).
    pub subject: String,
    pub store: PathBuf,
    pub thread_id: String,
    pub primary: AgentIdentity,
    pub planted: Planted,
    /// The system under test to write through and read from, opened on the store's directory
    /// as replica `index` (`None`: histsim's own replica on the store's file).
    pub sut: Option<String>,
    pub index: u8,
}

type Node = Arc<Mutex<Backend>>;

/// What this replica writes through: the system under test, or histsim's own replica.
fn backend(setup: &ReplicaSetup) -> Result<Backend, String> {
    if let Some(command) = &setup.sut {
        let dir = (setup.store.parent()).ok_or("the store has no directory")?;
        let process = super::sut_store::open_on(command, dir, setup.planted)?;
        let node = u32::from(setup.index);
        return Ok(Backend::Sut { process, node });
    }
    let store = SqliteDisplayStore::open_shared(
        &setup.store,
        StoreOptions::planted(setup.planted),
        BUSY_TIMEOUT_MS,
    )
    .map_err(|e| {
        format!(
            "cannot open the shared store {}: {e}",
            setup.store.display()
        )
    })?;
    let options = ProjectorOptions {
        planted: setup.planted,
    };
    Ok(Backend::Own(ReplicaNode::new(store, options)))
}

/// Says the system under test broke the protocol, and exits: the run is broken, not judged.
fn broke(Broken(message): Broken) -> ! {
    say(&ReplicaLine::Broken { message });
    std::process::exit(3)
}

/// Runs the replica until it is killed (or its bus connection closes for good).
pub fn serve(setup: ReplicaSetup) -> Result<(), String> {
    // A replica must not outlive the `histsim live` that started it, even one killed by SIGKILL.
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    let node: Node = Arc::new(Mutex::new(backend(&setup)?));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| format!("cannot listen on loopback: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        say(&ReplicaLine::Listening { port });
        let reads = serve_reads(listener, node.clone(), setup.clone());
        tokio::select! {
            persisted = persist(&setup, &node) => persisted,
            () = reads => Ok(()),
        }
    })
}

/// Writes one line to stdout at once: a line written survives the process being killed.
fn say(line: &ReplicaLine) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The persister: every delivery of the subscription into the shared store, reported.
async fn persist(setup: &ReplicaSetup, node: &Node) -> Result<(), String> {
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let client = async_nats::ConnectOptions::new()
        .retry_on_initial_connect()
        .max_reconnects(None)
        .reconnect_delay_callback(|_| Duration::from_millis(50))
        .event_callback(move |event| {
            let events_tx = events_tx.clone();
            async move {
                let _ = events_tx.send(event);
            }
        })
        .connect(setup.nats_url.as_str())
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", setup.nats_url))?;
    let mut subscription = client
        .subscribe(setup.subject.clone())
        .await
        .map_err(|e| format!("cannot subscribe: {e}"))?;
    confirm_subscribed(&client).await;
    loop {
        tokio::select! {
            message = futures_next(&mut subscription) => {
                let Some(message) = message else { return Ok(()) };
                deliver(node, &message.subject, &message.payload);
            }
            Some(event) = events.recv() => {
                // After a reconnect the client subscribes again; a flush is the server's word
                // that it has.
                if matches!(event, async_nats::Event::Connected) {
                    confirm_subscribed(&client).await;
                }
            }
        }
    }
}

async fn futures_next(subscription: &mut async_nats::Subscriber) -> Option<async_nats::Message> {
    use futures_util::StreamExt as _;
    subscription.next().await
}

async fn confirm_subscribed(client: &async_nats::Client) {
    if client.flush().await.is_ok() {
        say(&ReplicaLine::Subscribed { at_us: wall_us() });
    }
}

fn deliver(node: &Node, subject: &str, payload: &[u8]) {
    let Some(step) = subject.rsplit('.').next().and_then(|s| s.parse().ok()) else {
        return;
    };
    say(&ReplicaLine::Got {
        at_us: wall_us(),
        step,
    });
    let delivered = node
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .deliver(payload)
        .unwrap_or_else(|e| broke(e));
    say(&match delivered {
        Delivered::Failed(message) => ReplicaLine::Error {
            at_us: wall_us(),
            step,
            message,
        },
        stored => ReplicaLine::Stored {
            at_us: wall_us(),
            step,
            quarantined: matches!(stored, Delivered::Quarantined),
        },
    });
}

/// The read endpoint: each connection's request answered with the history from the shared store.
async fn serve_reads(listener: TcpListener, node: Node, setup: ReplicaSetup) {
    while let Ok((stream, _)) = listener.accept().await {
        let (node, setup) = (node.clone(), setup.clone());
        tokio::spawn(async move {
            let _ = answer_read(stream, &node, &setup).await;
        });
    }
}

async fn answer_read(stream: TcpStream, node: &Node, setup: &ReplicaSetup) -> std::io::Result<()> {
    let (rd, mut wr) = stream.into_split();
    let mut request = String::new();
    BufReader::new(rd).read_line(&mut request).await?;
    if request.as_bytes() != READ_REQUEST {
        return Ok(());
    }
    let answer: ReadAnswer = node
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .reconstruct(&setup.thread_id, &setup.primary)
        .unwrap_or_else(|e| broke(e));
    let mut line = serde_json::to_vec(&answer).map_err(std::io::Error::other)?;
    line.push(b'\n');
    wr.write_all(&line).await
}
