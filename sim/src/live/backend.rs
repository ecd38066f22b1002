//! What a replica process writes through and reads from: histsim's own replica on the shared
//! SQLite file, or a system under test opened on the run's directory (`--sut`), spoken to over
//! the SUT protocol as replica `node`.

use super::read::ReadAnswer;
use crate::sut::protocol::{Admitted, Appended, Request};
use crate::sut::SutProcess;
use history::display::{AgentIdentity, Projection, ReplicaNode, SqliteDisplayStore};

/// What the store did with one delivery.
pub enum Delivered {
    Stored,
    Quarantined,
    /// The store answered an error (the persister goes on with the next delivery).
    Failed(String),
}

/// A replica's persister and request handler.
pub enum Backend {
    Own(ReplicaNode<SqliteDisplayStore>),
    Sut { process: SutProcess, node: u32 },
}

/// A system under test that broke the protocol: the replica cannot go on.
#[derive(Debug)]
pub struct Broken(pub String);

impl Backend {
    /// Persists one delivery.
    pub fn deliver(&mut self, payload: &[u8]) -> Result<Delivered, Broken> {
        use history::display::Admission;
        let (process, node) = match self {
            Backend::Own(node) => {
                return Ok(match node.deliver(payload) {
                    Ok(Admission::Stored) => Delivered::Stored,
                    Ok(Admission::Quarantined { .. }) => Delivered::Quarantined,
                    Err(e) => Delivered::Failed(e.to_string()),
                })
            }
            Backend::Sut { process, node } => (process, *node),
        };
        // The protocol carries rows as JSON strings: a payload that is not UTF-8 cannot cross.
        let row = String::from_utf8(payload.to_vec()).map_err(|e| Broken(e.to_string()))?;
        let request = Request::Append {
            node,
            rows: vec![row],
        };
        let answer = process.call(&request).map_err(|e| Broken(e.to_string()))?;
        let appended: Appended = match answer {
            Ok(value) => serde_json::from_value(value).map_err(|e| Broken(e.to_string()))?,
            Err(refused) => return Ok(Delivered::Failed(refused.message)),
        };
        Ok(match appended.admitted.as_slice() {
            [Admitted::Stored] => Delivered::Stored,
            [Admitted::Quarantined] => Delivered::Quarantined,
            [Admitted::Failed(why)] => Delivered::Failed(why.clone()),
            other => return Err(Broken(format!("append of one row answered {other:?}"))),
        })
    }

    /// The thread's history, as this replica answers a follow-up request.
    pub fn reconstruct(
        &mut self,
        thread_id: &str,
        primary: &AgentIdentity,
    ) -> Result<ReadAnswer, Broken> {
        let (process, node) = match self {
            Backend::Own(node) => {
                return Ok(node
                    .reconstruct(thread_id, Some(primary))
                    .map_err(|e| e.to_string()))
            }
            Backend::Sut { process, node } => (process, *node),
        };
        let request = Request::Reconstruct {
            node,
            thread_id: thread_id.into(),
            primary: Some(primary.clone()),
        };
        Ok(
            match process.call(&request).map_err(|e| Broken(e.to_string()))? {
                Ok(value) => Ok(serde_json::from_value::<Projection>(value)
                    .map_err(|e| Broken(format!("not a reconstruct answer: {e}")))?),
                Err(refused) => Err(refused.message),
            },
        )
    }
}
