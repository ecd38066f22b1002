//! The first wrong answers of a failing seed in `summary.md`: one table row per violation
//! that names its request.

use crate::outcome::Violation;
use std::fmt::Write as _;

/// A failing seed's first wrong answers: one row per violation that names its request.
pub(super) fn markdown(md: &mut String, violations: &[Violation]) {
    let named: Vec<(&Violation, &crate::divergence::Divergence)> = violations
        .iter()
        .filter_map(|v| Some((v, v.first_divergence.as_ref()?)))
        .collect();
    let whole: Vec<String> = violations
        .iter()
        .filter(|v| v.first_divergence.is_none())
        .filter_map(|v| Some(format!("{} ({})", v.id, v.whole_state.as_ref()?)))
        .collect();
    if !whole.is_empty() {
        let _ = writeln!(
            md,
            "\nWhole-state rules (no single request answered wrong): {}.",
            whole.join("; ")
        );
    }
    if named.is_empty() {
        return;
    }
    md.push_str(
        "\nFirst wrong answers:\n\n| ID | op | request | time | answered by | answered | the model expects |\n|---|---|---|---|---|---|---|\n",
    );
    let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    for (v, d) in named {
        let _ = writeln!(
            md,
            "| {} | `{}` | {} | {}us | {} | `{}` | `{}` |",
            v.id,
            cell(&d.op),
            d.request,
            d.at_us,
            cell(&d.by),
            cell(&d.answered),
            cell(&d.expected)
        );
    }
}
