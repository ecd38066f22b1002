//! The display system under test behind one trait: the replicas' persisters and request
//! handlers, either histsim's own components in this process or any system in a child process
//! over the SUT protocol (`docs/sut-protocol.md`). The world keeps the bus, the faults, the
//! replicas' hosts and the client; only these two calls cross the boundary.

use crate::sut::protocol::{Admitted, Appended, OpenOptions, Request};
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
    /// The request and answer lines exchanged since the last call, for the trace (a system in
    /// this process exchanges none).
    fn take_transcript(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// What a system in a child process wrote to its stderr (its last `bytes_max` bytes).
    fn stderr_log(&self, bytes_max: usize) -> Option<String> {
        let _ = bytes_max;
        None
    }
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
}

/// A display system in a child process.
pub struct OverProtocol {
    sut: SutProcess,
    /// The `hello` and `open` exchange, not yet handed to the trace.
    greeting: Vec<String>,
    /// The first breach: the child is killed then, and every later call answers it again, so a
    /// broken child is never spoken to out of step.
    breached: Option<SutError>,
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
        // The data directory's name is the one thing of a seed that differs between runs: the
        // trace shows it as `<data_dir>` so the trace hash stays the seed's.
        let dir = serde_json::to_string(&data_dir.path().display().to_string())
            .expect("a string serializes");
        let greeting = sut
            .take_transcript()
            .into_iter()
            .map(|line| line.replace(dir.trim_matches('"'), "<data_dir>"))
            .collect();
        Ok(OverProtocol {
            sut,
            greeting,
            breached: None,
            _data_dir: data_dir,
        })
    }
}

impl DisplaySystem for OverProtocol {
    fn deliver(
        &mut self,
        node: u8,
        rows: &[&[u8]],
    ) -> Result<Vec<Result<Delivered, String>>, SutError> {
        let answer = self.deliver_once(node, rows);
        self.poisoned(answer)
    }

    fn reconstruct(
        &mut self,
        node: u8,
        thread_id: &str,
        primary: &AgentIdentity,
    ) -> Answer<Projection> {
        let answer = self.reconstruct_once(node, thread_id, primary);
        self.poisoned(answer)
    }

    fn take_transcript(&mut self) -> Vec<String> {
        let mut lines = std::mem::take(&mut self.greeting);
        lines.extend(self.sut.take_transcript());
        lines
    }

    fn stderr_log(&self, bytes_max: usize) -> Option<String> {
        Some(self.sut.stderr_log(bytes_max))
    }
}

impl OverProtocol {
    /// Keeps the first breach (and kills the child then): every later answer is that breach.
    fn poisoned<T>(&mut self, answer: Result<T, SutError>) -> Result<T, SutError> {
        if let (Err(breach), None) = (&answer, &self.breached) {
            self.sut.kill();
            self.breached = Some(breach.clone());
        }
        answer
    }

    fn deliver_once(
        &mut self,
        node: u8,
        rows: &[&[u8]],
    ) -> Result<Vec<Result<Delivered, String>>, SutError> {
        if let Some(breach) = &self.breached {
            return Err(breach.clone());
        }
        let request = Request::Append {
            node: u32::from(node),
            // Bytes that are not UTF-8 cannot cross as a JSON string; the display workload's rows
            // are always UTF-8 (its malformed rows are malformed JSON, not malformed text).
            rows: rows
                .iter()
                .map(|row| String::from_utf8_lossy(row).into_owned())
                .collect(),
        };
        let appended: Appended = match self.sut.call(&request)? {
            // The whole batch refused: every row of it failed.
            Err(e) => return Ok(rows.iter().map(|_| Err(e.message.clone())).collect()),
            Ok(v) => self.decode("append", v)?,
        };
        if appended.admitted.len() != rows.len() {
            let why = format!(
                "{} admissions for {} rows",
                appended.admitted.len(),
                rows.len()
            );
            return Err(self.unexpected("append", why));
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

    fn reconstruct_once(
        &mut self,
        node: u8,
        thread_id: &str,
        primary: &AgentIdentity,
    ) -> Answer<Projection> {
        if let Some(breach) = &self.breached {
            return Err(breach.clone());
        }
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
