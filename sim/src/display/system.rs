//! The display system under test behind one trait: the replicas' persisters and request
//! handlers, either histsim's own components in this process or any system in a child process
//! over the SUT protocol (`docs/sut-protocol.md`). The world keeps the bus, the faults, the
//! replicas' hosts and the client; only these two calls cross the boundary.

use crate::sut::protocol::{Appended, OpenOptions, Request};
use crate::sut::{Breach, SutError, SutOptions, SutProcess};
use crate::workload::{StoreKind, WorldConfig};
use history::display::{
    Admission, AgentIdentity, DisplayEventStore, MemoryDisplayStore, Projection, ProjectorOptions,
    ReplicaNode, SqliteDisplayStore,
};
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
    /// Replica `node`'s persister receives one delivery (the row's exact bytes).
    fn deliver(&mut self, node: u8, row: &[u8]) -> Answer<Delivered>;
    /// Replica `node` answers a follow-up request: the thread's history.
    fn reconstruct(
        &mut self,
        node: u8,
        thread_id: &str,
        primary: &AgentIdentity,
    ) -> Answer<Projection>;
}

type SharedStore = Rc<dyn DisplayEventStore>;

/// histsim's own replicas over one shared store, in this process.
pub struct InProcess {
    nodes: Vec<ReplicaNode<SharedStore>>,
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
        };
        let options = ProjectorOptions {
            planted: config.planted,
        };
        let nodes = (0..replicas)
            .map(|_| ReplicaNode::new(store.clone(), options))
            .collect();
        Ok(InProcess { nodes })
    }

    fn node(&mut self, node: u8) -> &mut ReplicaNode<SharedStore> {
        let n = self.nodes.len();
        self.nodes
            .get_mut(usize::from(node))
            .unwrap_or_else(|| panic!("replica {node} of {n}"))
    }
}

impl DisplaySystem for InProcess {
    fn deliver(&mut self, node: u8, row: &[u8]) -> Answer<Delivered> {
        Ok(match self.node(node).deliver(row) {
            Ok(Admission::Stored) => Ok(Delivered::Stored),
            Ok(Admission::Quarantined { .. }) => Ok(Delivered::Quarantined),
            Err(e) => Err(e.to_string()),
        })
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
}

/// A display system in a child process.
pub struct OverProtocol {
    sut: SutProcess,
    /// Kept alive while the system runs: its data directory.
    _data_dir: tempfile::TempDir,
}

/// The ops the display workload needs of a system under test.
pub const DISPLAY_OPS: [&str; 2] = ["append", "reconstruct"];

impl OverProtocol {
    /// Starts the system, checks it can play the display workload, and opens it on a fresh data
    /// directory with the world's store and planted bug.
    pub fn start(options: SutOptions, config: &WorldConfig) -> Result<OverProtocol, SutError> {
        let mut sut = SutProcess::start(options)?;
        let missing: Vec<&str> = DISPLAY_OPS
            .iter()
            .copied()
            .filter(|op| !sut.supports(op))
            .collect();
        let fail = |sut: &SutProcess, request: &str, why: String| SutError {
            request: request.to_string(),
            breach: Breach::Unexpected(why),
            stderr_tail: sut.stderr_tail(),
        };
        if !missing.is_empty() {
            let why = format!("the display workload needs {missing:?}, which it did not declare");
            return Err(fail(&sut, "#1 hello", why));
        }
        let data_dir = tempfile::tempdir().map_err(|e| fail(&sut, "#2 open", e.to_string()))?;
        let store = match config.store {
            StoreKind::Memory => "memory",
            StoreKind::Sqlite => "sqlite",
        };
        let opened = sut.call(&Request::Open {
            data_dir: data_dir.path().display().to_string(),
            options: OpenOptions {
                store: store.into(),
                planted: config.planted.active().map(|b| b.to_string()),
            },
        })?;
        if let Err(e) = opened {
            return Err(fail(
                &sut,
                "#2 open",
                format!("open refused: {}", e.message),
            ));
        }
        Ok(OverProtocol {
            sut,
            _data_dir: data_dir,
        })
    }
}

impl DisplaySystem for OverProtocol {
    fn deliver(&mut self, node: u8, row: &[u8]) -> Answer<Delivered> {
        let request = Request::Append {
            node: u32::from(node),
            // Bytes that are not UTF-8 cannot cross as a JSON string; the display workload's rows
            // are always UTF-8 (its malformed rows are malformed JSON, not malformed text).
            rows: vec![String::from_utf8_lossy(row).into_owned()],
        };
        let appended: Appended = match self.sut.call(&request)? {
            Err(e) => return Ok(Err(e.message)),
            Ok(v) => self.decode("append", v)?,
        };
        match appended.admitted.as_slice() {
            [one] if one == "stored" => Ok(Ok(Delivered::Stored)),
            [one] if one == "quarantined" => Ok(Ok(Delivered::Quarantined)),
            other => Err(self.unexpected(
                "append",
                format!("expected one admission, stored or quarantined, got {other:?}"),
            )),
        }
    }

    fn reconstruct(
        &mut self,
        node: u8,
        thread_id: &str,
        primary: &AgentIdentity,
    ) -> Answer<Projection> {
        let answer = self.sut.call(&Request::Reconstruct {
            node: u32::from(node),
            thread_id: thread_id.to_string(),
            primary: Some(primary.clone()),
        })?;
        Ok(match answer {
            Err(e) => Err(e.message),
            Ok(v) => Ok(self.decode("reconstruct", v)?),
        })
    }
}

impl OverProtocol {
    /// An answer of the wrong shape for `op`: a breach, not the system's answer.
    fn unexpected(&self, op: &str, why: String) -> SutError {
        SutError {
            request: op.to_string(),
            breach: Breach::Unexpected(why),
            stderr_tail: self.sut.stderr_tail(),
        }
    }

    fn decode<T: serde::de::DeserializeOwned>(
        &self,
        op: &str,
        v: serde_json::Value,
    ) -> Result<T, SutError> {
        serde_json::from_value(v)
            .map_err(|e| self.unexpected(op, format!("not a {op} answer: {e}")))
    }
}
