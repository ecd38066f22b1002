//! The display system under test behind one trait: the replicas' persisters and request
//! handlers, either histsim's own components in this process or any system in a child process
//! over the SUT protocol (`docs/sut-protocol.md`). The world keeps the bus, the faults, the
//! replicas' hosts and the client; only these two calls cross the boundary.

use crate::sut::protocol::{Admitted, Appended, Request};
use crate::sut::{OpenedSut, SutError, SutOptions};
use crate::workload::{StoreKind, WorldConfig};
use history::display::{
    Admission, AgentIdentity, DisplayEventStore, MemoryDisplayStore, Projection, ProjectorOptions,
    ReplicaNode, SqliteDisplayStore,
};
use model::display as m;
use std::rc::Rc;

/// What a replica's persister did with one delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivered {
    Stored,
    Quarantined,
}

/// A system's answer (`Err`: the system's own refusal, which the checkers judge), or a breach
/// of the protocol, which ends the seed as a broken world.
pub type Answer<T> = Result<Result<T, String>, SutError>;

/// The display system under test, addressed by replica.
pub trait DisplaySystem {
    /// Replica `node`'s persister receives one batch of deliveries (each row's exact bytes, in
    /// order); the answer has one entry a row.
    fn deliver(
        &mut self,
        node: u8,
        rows: &[&[u8]],
    ) -> Result<Vec<Result<Delivered, String>>, SutError>;
    /// Replica `node` answers a follow-up request: the thread's history.
    fn reconstruct(
        &mut self,
        node: u8,
        thread_id: &str,
        primary: &AgentIdentity,
    ) -> Answer<Projection>;
    /// The system's pure projector: the history of exactly `rows` (docs/sut-protocol.md,
    /// `project`); `None` when it serves no `project`.
    fn project(&mut self, rows: &[&[u8]], primary: &AgentIdentity) -> Option<Answer<Projection>> {
        let _ = (rows, primary);
        None
    }
    /// The request and answer lines exchanged since the last call, for the trace (a system in
    /// this process exchanges none).
    fn take_transcript(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// The known differences the system declares (docs/display-projection.md); histsim's own
    /// components declare none.
    fn declared(&self) -> m::Declared {
        m::Declared::new()
    }
    /// What a system in a child process wrote to its stderr (its last `bytes_max` bytes).
    fn stderr_log(&self, bytes_max: usize) -> Option<String> {
        let _ = bytes_max;
        None
    }
    /// What a system in a child process answered, op by op ([`crate::sut::tally`]).
    fn answers(&self) -> crate::coverage::Coverage {
        crate::coverage::Coverage::default()
    }
}

type SharedStore = Rc<dyn DisplayEventStore>;

/// histsim's own replicas over one shared store, in this process.
pub struct InProcess {
    nodes: Vec<ReplicaNode<SharedStore>>,
    options: ProjectorOptions,
}

impl InProcess {
    /// `replicas` replicas sharing a new store of `config.store`; `Err` when the store cannot
    /// be created (a broken world, not a finding).
    pub fn new(replicas: u8, config: &WorldConfig) -> Result<InProcess, String> {
        let store: SharedStore = match config.store {
            StoreKind::Memory => Rc::new(MemoryDisplayStore::new(config.planted)),
            StoreKind::Sqlite => Rc::new(
                SqliteDisplayStore::open_in_memory(config.planted).map_err(|e| e.to_string())?,
            ),
            StoreKind::Jsonl => {
                return Err("the display workload has no JSONL store (memory or sqlite)".into())
            }
        };
        let options = ProjectorOptions {
            planted: config.planted,
        };
        let nodes = (0..replicas)
            .map(|_| ReplicaNode::new(store.clone(), options))
            .collect();
        Ok(InProcess { nodes, options })
    }

    fn node(&mut self, node: u8) -> &mut ReplicaNode<SharedStore> {
        let n = self.nodes.len();
        self.nodes
            .get_mut(usize::from(node))
            .unwrap_or_else(|| panic!("replica {node} of {n}"))
    }
}

impl DisplaySystem for InProcess {
    fn deliver(
        &mut self,
        node: u8,
        rows: &[&[u8]],
    ) -> Result<Vec<Result<Delivered, String>>, SutError> {
        let node = self.node(node);
        Ok(rows
            .iter()
            .map(|row| match node.deliver(row) {
                Ok(Admission::Stored) => Ok(Delivered::Stored),
                Ok(Admission::Quarantined { .. }) => Ok(Delivered::Quarantined),
                Err(e) => Err(e.to_string()),
            })
            .collect())
    }

    fn reconstruct(
        &mut self,
        node: u8,
        thread_id: &str,
        primary: &AgentIdentity,
    ) -> Answer<Projection> {
        Ok(self
            .node(node)
            .reconstruct(thread_id, Some(primary))
            .map_err(|e| e.to_string()))
    }

    fn project(&mut self, rows: &[&[u8]], primary: &AgentIdentity) -> Option<Answer<Projection>> {
        Some(Ok(Ok(history::display::project(
            rows,
            Some(primary),
            &self.options,
        ))))
    }
}

/// A display system in a child process.
pub struct OverProtocol {
    sut: OpenedSut,
    declared: m::Declared,
}

/// The ops the display workload needs of a system under test.
pub(crate) const DISPLAY_OPS: [&str; 2] = ["append", "reconstruct"];

impl OverProtocol {
    /// Starts the system, checks it can play the display workload, and opens it on a fresh data
    /// directory with the world's store and planted bug.
    pub fn start(options: SutOptions, config: &WorldConfig) -> Result<OverProtocol, SutError> {
        let mut sut = OpenedSut::start(options, config.store, config.planted, &DISPLAY_OPS)?;
        let mut declared = m::Declared::new();
        for id in sut.hello().differences.clone() {
            match m::KnownDifference::parse(&id) {
                Some(d) => declared.insert(d),
                None => {
                    let why = format!(
                        "hello declares the known difference {id:?}, which docs/display-projection.md does not define (known: {})",
                        m::KnownDifference::ALL.map(|d| d.id()).join(", ")
                    );
                    return Err(sut.unexpected("#1 hello", why));
                }
            };
        }
        Ok(OverProtocol { sut, declared })
    }
}

/// The known differences the system under test of `world` declares in `hello` (histsim's own:
/// none): what `histsim diff` compares two display systems up to.
pub(crate) fn declared_by(world: &WorldConfig) -> Result<m::Declared, String> {
    let Some(options) = &world.sut else {
        return Ok(Default::default());
    };
    let system = OverProtocol::start((**options).clone(), world).map_err(|e| e.to_string())?;
    Ok(system.declared())
}

impl DisplaySystem for OverProtocol {
    fn declared(&self) -> m::Declared {
        self.declared.clone()
    }

    fn deliver(
        &mut self,
        node: u8,
        rows: &[&[u8]],
    ) -> Result<Vec<Result<Delivered, String>>, SutError> {
        let request = Request::Append {
            node: u32::from(node),
            // Bytes that are not UTF-8 cannot cross as a JSON string; the display workload's rows
            // are always UTF-8 (its malformed rows are malformed JSON, not malformed text).
            rows: rows
                .iter()
                .map(|row| String::from_utf8_lossy(row).into_owned())
                .collect(),
        };
        let appended: Appended = match self.sut.call_for(&request)? {
            // The whole batch refused: every row of it failed.
            Err(e) => return Ok(rows.iter().map(|_| Err(e.message.clone())).collect()),
            Ok(a) => a,
        };
        if appended.admitted.len() != rows.len() {
            let why = format!(
                "{} admissions for {} rows",
                appended.admitted.len(),
                rows.len()
            );
            return Err(self.sut.unexpected("append", why));
        }
        Ok(appended
            .admitted
            .into_iter()
            .map(|a| match a {
                Admitted::Stored => Ok(Delivered::Stored),
                Admitted::Quarantined => Ok(Delivered::Quarantined),
                Admitted::Failed(why) => Err(why),
            })
            .collect())
    }

    fn reconstruct(
        &mut self,
        node: u8,
        thread_id: &str,
        primary: &AgentIdentity,
    ) -> Answer<Projection> {
        let request = Request::Reconstruct {
            node: u32::from(node),
            thread_id: thread_id.to_string(),
            primary: Some(primary.clone()),
        };
        Ok(self.sut.call_for(&request)?.map_err(|e| e.message))
    }

    fn project(&mut self, rows: &[&[u8]], primary: &AgentIdentity) -> Option<Answer<Projection>> {
        if !self.sut.serves("project") {
            return None;
        }
        let request = Request::Project {
            rows: rows
                .iter()
                .map(|row| String::from_utf8_lossy(row).into_owned())
                .collect(),
            primary: Some(primary.clone()),
        };
        Some(
            self.sut
                .call_for(&request)
                .map(|a| a.map_err(|e| e.message)),
        )
    }

    fn take_transcript(&mut self) -> Vec<String> {
        self.sut.take_transcript()
    }

    fn stderr_log(&self, bytes_max: usize) -> Option<String> {
        Some(self.sut.stderr_log(bytes_max))
    }

    fn answers(&self) -> crate::coverage::Coverage {
        self.sut.tally().clone()
    }
}
