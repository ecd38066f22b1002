//! What `histsim live` prints about a run: the deliveries, the faults, the losses the model
//! accepted (and why), the reads checked, and the violations by catalog ID.

use super::outcome::LiveOutcome;
use super::patterns::fault_of;
use std::fmt::Write as _;

/// The run's report, several lines.
pub fn report(o: &LiveOutcome) -> String {
    let mut out = String::new();
    let r = &o.recording;
    let p = &o.patterns;
    let _ = writeln!(
        out,
        "deliveries: {} events published ({} refused by the client), {} deliveries to {} replicas, {} duplicate deliveries, up to {} rows of one event in the shared store, longest reorder within a display {}",
        p.published,
        r.published.iter().filter(|x| x.refused.is_some()).count(),
        p.deliveries,
        o.setup.scenario.replicas,
        p.duplicate_deliveries,
        p.store_copies_max,
        p.reorder_max
    );
    let _ = writeln!(out, "faults: {} injected", r.faults.len());
    for f in &r.faults {
        let _ = writeln!(
            out,
            "  at {:>6} ms: {:?}, healed after {} ms{}",
            f.from_us.saturating_sub(r.started_us) / 1000,
            f.fault,
            f.healed_us.saturating_sub(f.from_us) / 1000,
            f.trouble
                .as_ref()
                .map_or(String::new(), |t| format!(" (trouble: {t})"))
        );
    }
    losses(o, &mut out);
    reads(o, &mut out);
    let _ = match r.converged_after_ms {
        Some(ms) => writeln!(out, "converged: every replica answered the model's history {ms} ms after the last fault healed"),
        None => writeln!(out, "converged: no (the replicas did not all answer the model's history)"),
    };
    if r.unreadable_lines > 0 || o.unknown_rows() > 0 {
        let _ = writeln!(
            out,
            "unreadable replica lines: {}, store rows of no published event: {}",
            r.unreadable_lines,
            o.unknown_rows()
        );
    }
    out
}

fn losses(o: &LiveOutcome, out: &mut String) {
    let p = &o.patterns;
    let _ = writeln!(
        out,
        "losses accepted: {} of {} events reached no replica's store ({} published while a server restart left no replica subscribed; {} server restarts lost {})",
        p.lost_explained, p.published, p.exposed, p.server_restarts, p.lost_in_restarts
    );
    for published in &o.recording.published {
        let lost =
            (o.expectation.fates.get(&published.emitted.step)).is_none_or(|f| !f.persisted());
        if lost {
            let why = match fault_of(&o.recording, published.at_us) {
                Some(fault) => format!(
                    "accepted: NATS Core is at-most-once, published during {}",
                    fault.name()
                ),
                None => "NOT explained by any fault".to_string(),
            };
            let _ = writeln!(
                out,
                "  step {} at {} ms: {why}",
                published.emitted.step,
                published.at_us.saturating_sub(o.recording.started_us) / 1000
            );
        }
    }
    for loss in &o.expectation.transcript.accepted_losses {
        let _ = writeln!(
            out,
            "  the model accepts [{}] emission {}: {}",
            loss.rule, loss.emission, loss.why
        );
    }
}

fn reads(o: &LiveOutcome, out: &mut String) {
    let reads = &o.recording.reads;
    let answered = reads.iter().filter(|r| r.answer.is_ok()).count();
    let settled = reads
        .iter()
        .filter(|r| r.settled && r.answer.is_ok())
        .count();
    let _ = writeln!(
        out,
        "reads checked: {answered} answered ({settled} settled, {} during the run), {} unanswered (replica down or paused), {} answered with an error",
        answered - settled,
        reads.len() - answered,
        reads.iter().filter(|r| matches!(r.answer, Ok(Err(_)))).count()
    );
}
