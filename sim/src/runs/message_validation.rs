//! Validation of a run's scripted messages in a runs scenario file: texts present, unique on
//! their thread, and not the generated filler's; a tool step calls a tool; a bulk run's size in
//! bounds.

use super::scenario::{MessageSpec, RunSpec, BULK_MESSAGES_MAX};
use std::collections::BTreeSet;

impl RunSpec {
    /// One message of this run at `at`: its texts are not empty and unique on the run's thread
    /// (`texts` collects them).
    pub(super) fn validate_message<'a>(
        &'a self,
        at: &str,
        message: &'a MessageSpec,
        texts: &mut BTreeSet<(&'a str, &'a str)>,
    ) -> Result<(), String> {
        let run = self;
        let mut own: Vec<(&str, String)> = Vec::new();
        match message {
            MessageSpec::Human { text, .. } | MessageSpec::Ai { text, .. } => {
                own.push((text, format!("{at}.text")));
            }
            MessageSpec::ToolStep { text, calls, .. } => {
                own.push((text, format!("{at}.text")));
                if calls.is_empty() {
                    return Err(format!("{at}.calls: a tool step calls at least one tool"));
                }
                for (c, call) in calls.iter().enumerate() {
                    if call.name.is_empty() {
                        return Err(format!("{at}.calls[{c}].name: empty"));
                    }
                    own.push((&call.result, format!("{at}.calls[{c}].result")));
                }
            }
            MessageSpec::Bulk { messages } => {
                if !(1..=BULK_MESSAGES_MAX).contains(messages) {
                    return Err(format!(
                        "{at}.messages: expected 1 to {BULK_MESSAGES_MAX}, found {messages}"
                    ));
                }
            }
        }
        for (text, field) in own {
            if text.is_empty() {
                return Err(format!("{field}: empty text"));
            }
            if text.contains('#') {
                return Err(format!(
                    "{field}: `#` is reserved for generated filler texts"
                ));
            }
            if !texts.insert((run.thread.as_str(), text)) {
                return Err(format!(
                    "{field}: text `{text}` is used twice on thread `{}`",
                    run.thread
                ));
            }
        }
        Ok(())
    }
}
