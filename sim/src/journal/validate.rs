//! What a journal scenario file can get wrong, named by its field path. The generator's output
//! passes by construction (a test asserts it).

use super::scenario::{
    Action, JournalScenario, RowSpec, SessionScript, SharedAction, SpeakerSpec, CRASHES_MAX,
    OPS_MAX, PAD_BYTES_MAX, ROWS_MAX, SESSIONS_MAX,
};
use std::collections::BTreeSet;

/// `name` is one lowercase token: letters, digits and dashes.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 40
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Journal names a fork or clone may not take (the world's own files).
const RESERVED: [&str; 2] = ["session", "shared"];

impl RowSpec {
    fn validate(&self, at: &str) -> Result<(), String> {
        if self.speaker == SpeakerSpec::Tool && self.call.is_none() {
            return Err(format!("{at}.call: a tool row names the call it answers"));
        }
        if self.pad_bytes > PAD_BYTES_MAX {
            return Err(format!(
                "{at}.pad_bytes: at most {PAD_BYTES_MAX}, found {}",
                self.pad_bytes
            ));
        }
        if let Some(o) = &self.origin {
            if !is_token(o) {
                return Err(format!(
                    "{at}.origin: expected `main` or a subagent name (lowercase letters, digits, dashes), found `{o}`"
                ));
            }
        }
        Ok(())
    }
}

fn rows_valid(rows: &[RowSpec], at: &str) -> Result<(), String> {
    if rows.len() > ROWS_MAX {
        return Err(format!(
            "{at}: at most {ROWS_MAX} rows, found {}",
            rows.len()
        ));
    }
    for (i, r) in rows.iter().enumerate() {
        r.validate(&format!("{at}[{i}]"))?;
    }
    Ok(())
}

impl JournalScenario {
    /// Checks what a file can get wrong, naming the field. The generator's output passes by
    /// construction (a test asserts it).
    pub fn validate(&self) -> Result<(), String> {
        if self.network_seed > i64::MAX as u64 {
            return Err("network_seed: expected a value below 2^63".into());
        }
        if self.recorded_storage_ops > super::recorded_storage::OPS_MAX {
            return Err(format!(
                "recorded_storage_ops: at most {}, found {}",
                super::recorded_storage::OPS_MAX,
                self.recorded_storage_ops
            ));
        }
        if self.load_step_records == 0 {
            return Err("load_step_records: expected at least 1".into());
        }
        if self.sessions.is_empty() || self.sessions.len() > SESSIONS_MAX {
            return Err(format!(
                "sessions: expected 1 to {SESSIONS_MAX} sessions, found {}",
                self.sessions.len()
            ));
        }
        for (s, session) in self.sessions.iter().enumerate() {
            session.validate(&format!("sessions[{s}]"))?;
        }
        if self.crashes.len() > CRASHES_MAX {
            return Err(format!("crashes: at most {CRASHES_MAX}"));
        }
        let mut points = BTreeSet::new();
        for (c, crash) in self.crashes.iter().enumerate() {
            let at = format!("crashes[{c}]");
            let Some(session) = self.sessions.get(crash.session as usize) else {
                return Err(format!("{at}.session: no session {}", crash.session));
            };
            let Some(op) = session.ops.get(crash.op as usize) else {
                return Err(format!(
                    "{at}.op: session {} has no op {}",
                    crash.session, crash.op
                ));
            };
            if let Some(g) = crash.during {
                match &op.action {
                    Action::Replace { groups, .. } if g as usize <= groups.len() => {}
                    Action::Replace { groups, .. } => {
                        return Err(format!(
                            "{at}.during: the replacement has {} groups, found {g}",
                            groups.len()
                        ))
                    }
                    other => {
                        return Err(format!(
                            "{at}.during: only a replace can be interrupted, op {} is a {}",
                            crash.op,
                            other.kind()
                        ))
                    }
                }
            }
            if let Some(super::scenario::Corruption::BitFlip { bit, .. }) = crash.corrupt {
                if bit > 7 {
                    return Err(format!(
                        "{at}.corrupt.bit: a bit of a byte (0..=7), found {bit}"
                    ));
                }
            }
            if !points.insert((crash.session, crash.op, crash.during)) {
                return Err(format!("{at}: another crash hits the same point"));
            }
            rows_valid(&crash.arrivals, &format!("{at}.arrivals"))?;
        }
        Ok(())
    }
}

impl SessionScript {
    /// `main` or one of the subagents.
    fn knows_origin(&self, origin: &str) -> bool {
        origin == "main" || self.subagents.iter().any(|s| s == origin)
    }

    fn validate(&self, at: &str) -> Result<(), String> {
        let mut names = BTreeSet::new();
        for (i, s) in self.subagents.iter().enumerate() {
            if !is_token(s) || s == "main" {
                return Err(format!(
                    "{at}.subagents[{i}]: expected a name of lowercase letters, digits and dashes other than `main`, found `{s}`"
                ));
            }
            if !names.insert(s.as_str()) {
                return Err(format!("{at}.subagents[{i}]: `{s}` is listed twice"));
            }
        }
        let mut mirrors = BTreeSet::new();
        for (i, m) in self.mirrors.iter().enumerate() {
            if !self.knows_origin(m) {
                return Err(format!(
                    "{at}.mirrors[{i}]: `{m}` is neither `main` nor a subagent"
                ));
            }
            if !mirrors.insert(m.as_str()) {
                return Err(format!("{at}.mirrors[{i}]: `{m}` is listed twice"));
            }
        }
        if self.ops.len() > OPS_MAX {
            return Err(format!("{at}.ops: at most {OPS_MAX} operations"));
        }
        let mut journals: BTreeSet<&str> = BTreeSet::new();
        for (k, op) in self.ops.iter().enumerate() {
            let at = format!("{at}.ops[{k}]");
            if op.fail
                && !op.action.is_solo_mutation()
                && !matches!(op.action, Action::Switch { .. })
            {
                return Err(format!(
                    "{at}.fail: a {} writes no journal of the session to fail",
                    op.action.kind()
                ));
            }
            self.validate_action(&op.action, &format!("{at}.action"), &mut journals)?;
            if let Action::Switch { arrivals, .. } = &op.action {
                if op.fail && arrivals.is_empty() {
                    return Err(format!(
                        "{at}.fail: a switch fails only when it writes: give it arrivals"
                    ));
                }
            }
            if matches!(op.action, Action::Dispose { .. }) && k + 1 != self.ops.len() {
                return Err(format!("{at}.action: dispose must be the last operation"));
            }
        }
        Ok(())
    }

    fn validate_action<'a>(
        &self,
        action: &'a Action,
        at: &str,
        journals: &mut BTreeSet<&'a str>,
    ) -> Result<(), String> {
        match action {
            Action::Append { rows } => rows_valid(rows, &format!("{at}.rows"))?,
            Action::Replace {
                groups, arrivals, ..
            } => replace_valid(groups, arrivals, at)?,
            Action::Density { rewrite_bytes, .. } if *rewrite_bytes > PAD_BYTES_MAX => {
                return Err(format!(
                    "{at}.rewrite_bytes: at most {PAD_BYTES_MAX}, found {rewrite_bytes}"
                ))
            }
            Action::Insert { row, .. } => row.validate(&format!("{at}.row"))?,
            Action::Estimate { texts, schedule } => estimate_valid(texts, schedule, at)?,
            Action::Send { budget_percent, .. }
                if *budget_percent == 0 || *budget_percent > 100 =>
            {
                return Err(format!(
                    "{at}.budget_percent: expected 1 to 100, found {budget_percent}"
                ))
            }
            Action::Fork { name, .. } | Action::Clone { name } => {
                if !is_token(name) || RESERVED.contains(&name.as_str()) {
                    return Err(format!(
                        "{at}.name: expected a name of lowercase letters, digits and dashes other than {RESERVED:?}, found `{name}`"
                    ));
                }
                if !journals.insert(name) {
                    return Err(format!("{at}.name: `{name}` is created twice"));
                }
            }
            Action::Switch { to, arrivals } => {
                if !journals.contains(to.as_str()) {
                    return Err(format!("{at}.to: no earlier fork or clone is named `{to}`"));
                }
                rows_valid(arrivals, &format!("{at}.arrivals"))?;
            }
            Action::Shared {
                origin,
                op,
                fail_mirror,
            } => self.validate_shared(at, origin, op, fail_mirror.as_deref())?,
            Action::AttachMirror { origin } => self.validate_shared_origin(at, origin)?,
            Action::SharedResume if self.subagents.is_empty() => {
                return Err(format!(
                    "{at}: the session has no shared history (no subagents)"
                ))
            }
            _ => {}
        }
        Ok(())
    }

    /// An operation on the shared history by `origin`: the session has one, and `origin` is
    /// one of its writers.
    fn validate_shared_origin(&self, at: &str, origin: &str) -> Result<(), String> {
        if self.subagents.is_empty() {
            return Err(format!(
                "{at}: the session has no shared history (no subagents)"
            ));
        }
        if !self.knows_origin(origin) {
            return Err(format!(
                "{at}.origin: `{origin}` is neither `main` nor a subagent"
            ));
        }
        Ok(())
    }

    /// A mutation of the shared history by `origin`, with a mirror whose writes fail.
    fn validate_shared(
        &self,
        at: &str,
        origin: &str,
        op: &SharedAction,
        fail_mirror: Option<&str>,
    ) -> Result<(), String> {
        self.validate_shared_origin(at, origin)?;
        if let Some(m) = fail_mirror {
            if !self.knows_origin(m) {
                return Err(format!(
                    "{at}.fail_mirror: `{m}` is neither `main` nor a subagent"
                ));
            }
        }
        match op {
            SharedAction::Append { rows } | SharedAction::Restore { rows } => {
                rows_valid(rows, &format!("{at}.op.rows"))?
            }
            SharedAction::Insert { row, .. } => row.validate(&format!("{at}.op.row"))?,
            _ => {}
        }
        Ok(())
    }
}

/// An estimate: up to 4 texts of up to 32 pieces, fed to their counters in `schedule`'s order.
fn estimate_valid(texts: &[Vec<String>], schedule: &[u8], at: &str) -> Result<(), String> {
    if texts.is_empty() || texts.len() > 4 {
        return Err(format!("{at}.texts: expected 1 to 4 texts"));
    }
    if texts.iter().any(|t| t.len() > 32) {
        return Err(format!("{at}.texts: at most 32 pieces a text"));
    }
    if schedule.len() > 256 {
        return Err(format!("{at}.schedule: at most 256 turns"));
    }
    if let Some(bad) = schedule.iter().find(|i| **i as usize >= texts.len()) {
        return Err(format!(
            "{at}.schedule: counter {bad} does not exist ({} texts)",
            texts.len()
        ));
    }
    Ok(())
}

/// A replacement: at most 64 groups of valid rows, and the rows arriving meanwhile.
fn replace_valid(groups: &[Vec<RowSpec>], arrivals: &[RowSpec], at: &str) -> Result<(), String> {
    if groups.len() > 64 {
        return Err(format!("{at}.groups: at most 64 groups"));
    }
    for (g, rows) in groups.iter().enumerate() {
        rows_valid(rows, &format!("{at}.groups[{g}]"))?;
    }
    rows_valid(arrivals, &format!("{at}.arrivals"))
}
