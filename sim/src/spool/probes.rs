//! The spool workload's coverage probes: shapes, histories and sources the requests exercised.

use super::scenario::{ShapeSpec, SourceKind, SpoolScenario};
use super::world::WorldRecord;
use crate::coverage::Coverage;
use crate::hostile_text::hit_classes;

pub const PROBES: &[&str] = &[
    "spool.feature.openai",
    "spool.feature.anthropic",
    "spool.feature.tool_heavy",
    "spool.feature.compressed",
    "spool.feature.journal_source",
    "spool.feature.rows_source",
    "spool.feature.continuation",
    "spool.feature.system_prompt",
    "spool.feature.chunked_send",
    "spool.text.line_separator",
    "spool.text.paragraph_separator",
    "spool.text.nel",
    "spool.text.nul",
    "spool.text.c0_control",
    "spool.text.crlf",
    "spool.text.escapes",
    "spool.text.astral",
    "spool.text.bidi",
    "spool.text.zero_width",
    "spool.text.combining",
];

pub fn probes(scenario: &SpoolScenario, record: &WorldRecord, cov: &mut Coverage) {
    let sent: Vec<_> = scenario
        .requests
        .iter()
        .zip(&record.requests)
        .filter(|(_, r)| r.report.is_ok())
        .collect();
    if sent.is_empty() {
        return;
    }
    if let Some(system) = &scenario.system {
        hit_classes(system, "spool", PROBES, cov);
    }
    for (spec, seen) in &sent {
        cov.hit(match spec.shape {
            ShapeSpec::Openai => "spool.feature.openai",
            ShapeSpec::Anthropic => "spool.feature.anthropic",
        });
        if seen.spool.len() > scenario.chunk_bytes as usize {
            cov.hit("spool.feature.chunked_send");
        }
    }
    if scenario.history.tool_heavy {
        cov.hit("spool.feature.tool_heavy");
    }
    if scenario.compress_keep.is_some() {
        cov.hit("spool.feature.compressed");
    }
    cov.hit(match scenario.source {
        SourceKind::Journal => "spool.feature.journal_source",
        SourceKind::Rows => "spool.feature.rows_source",
    });
    if sent.len() > 1 {
        cov.hit("spool.feature.continuation");
    }
    if scenario.system.is_some() {
        cov.hit("spool.feature.system_prompt");
    }
}
