//! The identity of an agent: the pair a request names as its primary agent.

use serde::{Deserialize, Serialize};

/// `(agent_class, agent_id)`. A stop event supplies an answer suffix only when its row carries the
/// request's primary identity (contract, `StopEvent`; catalog P6).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AgentIdentity {
    /// The agent's class name, e.g. `"LeadAgent"`.
    pub agent_class: String,
    /// The agent's instance id (a 24-hex ObjectId in practice).
    pub agent_id: String,
}

impl AgentIdentity {
    /// Builds an identity from its two parts.
    pub fn new(agent_class: impl Into<String>, agent_id: impl Into<String>) -> Self {
        AgentIdentity {
            agent_class: agent_class.into(),
            agent_id: agent_id.into(),
        }
    }
}
