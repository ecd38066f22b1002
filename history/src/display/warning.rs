//! Warnings about rows the projector skipped or blocks it dropped.
//!
//! A warning is built from metadata only (code, event id, display id, field name), never from
//! payload values: message text, answers, questions, urls and media stay out of logs (P10).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::{BugId, Planted};

/// What was wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningCode {
    /// An identity field is missing, not a string, or empty.
    BadIdentity,
    /// `event_data.created_at` is not a JSON integer.
    BadCreatedAt,
    /// The family's payload field is malformed.
    BadPayload,
    /// A media block of a user message was dropped.
    BadMedia,
    /// The thread has no visible display: its history is empty.
    NoVisibleDisplay,
}

impl WarningCode {
    /// The contract's spelling, e.g. `"bad_identity"`.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::BadIdentity => "bad_identity",
            WarningCode::BadCreatedAt => "bad_created_at",
            WarningCode::BadPayload => "bad_payload",
            WarningCode::BadMedia => "bad_media",
            WarningCode::NoVisibleDisplay => "no_visible_display",
        }
    }
}

impl fmt::Display for WarningCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One warning of a projection.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Warning {
    pub code: WarningCode,
    /// The row's `event_id`, when it is a non-empty string.
    pub event_id: Option<String>,
    /// The row's `display_id`, when it is a non-empty string.
    pub display_id: Option<String>,
    /// The field that was wrong (`"agent_id"`, `"created_at"`, `"messages"`, `"url"`, ...).
    pub field: Option<String>,
    /// A human-readable line built from the fields above only.
    pub text: String,
}

impl Warning {
    /// Builds a warning and its text from metadata.
    pub fn new(
        code: WarningCode,
        event_id: Option<String>,
        display_id: Option<String>,
        field: Option<&str>,
    ) -> Warning {
        let mut text = String::from(code.as_str());
        if let Some(e) = &event_id {
            text.push_str(&format!(": event {e:?}"));
        }
        if let Some(d) = &display_id {
            text.push_str(&format!(" on display {d:?}"));
        }
        if let Some(f) = field {
            text.push_str(&format!(": field `{f}`"));
        }
        text.push_str(match code {
            WarningCode::BadIdentity => " is missing, not a string, or empty; row skipped",
            WarningCode::BadCreatedAt => " is not a JSON integer; row skipped",
            WarningCode::BadPayload => " is missing or malformed; row skipped",
            WarningCode::BadMedia => " is missing or malformed; block dropped",
            WarningCode::NoVisibleDisplay => ": no visible display; history is empty",
        });
        Warning {
            code,
            event_id,
            display_id,
            field: field.map(str::to_owned),
            text,
        }
    }

    /// The single warning of a thread without a visible display.
    pub fn no_visible_display() -> Warning {
        Warning::new(WarningCode::NoVisibleDisplay, None, None, None)
    }
}

/// Planted bug P10 appends the raw payload to a warning; otherwise the warning is unchanged.
pub(crate) fn with_raw_data(
    mut warning: Warning,
    data: Option<&RawValue>,
    planted: Planted,
) -> Warning {
    if planted.is(BugId::P10) {
        // planted P10: the legacy log line included the offending event's data.
        warning
            .text
            .push_str(&format!(" event_data={}", data.map_or("null", |d| d.get())));
    }
    warning
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_names_code_ids_and_field() {
        let w = Warning::new(
            WarningCode::BadPayload,
            Some("e1".into()),
            Some("d1".into()),
            Some("content"),
        );
        assert!(w.text.starts_with("bad_payload"));
        for part in ["\"e1\"", "\"d1\"", "`content`"] {
            assert!(w.text.contains(part), "{} lacks {part}", w.text);
        }
        assert_eq!(
            Warning::no_visible_display().code.as_str(),
            "no_visible_display"
        );
        assert_eq!(
            serde_json::to_value(WarningCode::BadCreatedAt).ok(),
            Some(serde_json::json!("bad_created_at"))
        );
    }
}
