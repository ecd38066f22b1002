//! The run journal's callbacks as they cross the SUT protocol: an invocation and a model call's
//! messages ([`super::journal_ops`] has the ops and their answer).

use history::runs::{ChatMessage, Invocation, ModelCall};
use serde::{Deserialize, Serialize};

/// An invocation of a run's graph as it crosses: its id and its parent's (`null` for the root).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireInvocation {
    pub id: String,
    pub parent: Option<String>,
}

/// One message of a model call's input as it crosses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireCallMessage {
    /// The message as the model receives it (a message dump: `type`, `content`, `id`, ...).
    pub message: ChatMessage,
    /// Kept from the user's view (DeerFlow's `additional_kwargs.hide_from_ui`).
    pub hide_from_ui: bool,
    /// The user's message as sent, when a middleware handed the model a rewritten copy.
    pub original: Option<ChatMessage>,
}

impl From<&Invocation> for WireInvocation {
    fn from(i: &Invocation) -> WireInvocation {
        WireInvocation {
            id: i.id.clone(),
            parent: i.parent.clone(),
        }
    }
}

impl From<WireInvocation> for Invocation {
    fn from(i: WireInvocation) -> Invocation {
        Invocation {
            id: i.id,
            parent: i.parent,
        }
    }
}

/// The messages of `call` as they cross.
pub fn wire_messages(call: &ModelCall) -> Vec<WireCallMessage> {
    (call.messages.iter())
        .map(|m| WireCallMessage {
            message: m.message.clone(),
            hide_from_ui: m.hide_from_ui,
            original: m.original.clone(),
        })
        .collect()
}
