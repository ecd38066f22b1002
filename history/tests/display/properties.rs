//! Properties of the projector and of reconstruction over random threads. Each body takes the
//! planted switch so the planted-bug tests can show the same property failing.

use std::collections::BTreeSet;

use history::display::{project, reconstruct, DisplayEventStore, MemoryDisplayStore, Projection};
use history::Planted;
use proptest::prelude::*;

use crate::gen::{self, Spec, SECRET};
use crate::support::*;

fn sorted_warnings(p: &Projection) -> Vec<history::display::Warning> {
    let mut w = p.warnings.clone();
    w.sort();
    w
}

/// The projection of `rows` for the lead agent.
fn projected<R: AsRef<[u8]>>(rows: &[R], planted: Planted) -> Projection {
    project(rows, Some(&lead()), &opts(planted))
}

/// `rows` and `others` project to the same messages, and to the same warnings as `warnings`
/// reads them.
fn same_projection<R: AsRef<[u8]>, S: AsRef<[u8]>, W: PartialEq + std::fmt::Debug>(
    rows: &[R],
    others: &[S],
    planted: Planted,
    warnings: fn(&Projection) -> W,
) -> Result<(), TestCaseError> {
    let (a, b) = (projected(rows, planted), projected(others, planted));
    prop_assert_eq!(&a.messages, &b.messages);
    prop_assert_eq!(warnings(&a), warnings(&b));
    Ok(())
}

/// Shuffling the input changes nothing (ids are unique, so no copy competes).
pub fn permutation_invariant(
    specs: &[Spec],
    order: &[usize],
    planted: Planted,
) -> Result<(), TestCaseError> {
    let rows = gen::rows(specs);
    let shuffled: Vec<&Vec<u8>> = order.iter().map(|&i| &rows[i]).collect();
    same_projection(&rows, &shuffled, planted, sorted_warnings)
}

/// Any number of copies of any row, in any order, changes nothing.
pub fn duplication_invariant(
    specs: &[Spec],
    order: &[usize],
    planted: Planted,
) -> Result<(), TestCaseError> {
    let rows = gen::rows(specs);
    let delivered = gen::delivered(specs, order);
    same_projection(&rows, &delivered, planted, warning_set)
}

/// Reconstruction shows text of visible displays only, and the visible displays are exactly the
/// ones holding a marker.
pub fn nothing_from_hidden_displays(
    specs: &[Spec],
    order: &[usize],
    planted: Planted,
) -> Result<(), TestCaseError> {
    let store = MemoryDisplayStore::new(planted);
    for row in gen::delivered(specs, order) {
        store
            .append(&row)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    let visible: BTreeSet<String> = specs
        .iter()
        .filter(|s| s.is_marker())
        .map(Spec::display_id)
        .collect();
    let stage1: BTreeSet<String> = store
        .visible_displays(THREAD)
        .map_err(|e| TestCaseError::fail(e.to_string()))?
        .into_iter()
        .collect();
    prop_assert_eq!(&stage1, &visible);
    let p = reconstruct(&store, THREAD, Some(&lead()), &opts(planted))
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    for m in &p.messages {
        let text = m.text();
        for k in 0..gen::DISPLAYS {
            let d = format!("d{k}");
            prop_assert!(
                visible.contains(&d) || !text.contains(&format!("<{d}>")),
                "text {:?} of hidden display {}",
                text,
                d
            );
        }
    }
    if visible.is_empty() {
        prop_assert!(p.messages.is_empty());
        prop_assert_eq!(p.warnings.len(), 1);
    }
    Ok(())
}

/// No warning text carries payload text.
pub fn warnings_carry_no_payload(specs: &[Spec], planted: Planted) -> Result<(), TestCaseError> {
    let p = projected(&gen::rows(specs), planted);
    for w in &p.warnings {
        prop_assert!(!w.text.contains(SECRET), "warning text {:?}", w.text);
        prop_assert!(!w.text.contains("<d"), "warning text {:?}", w.text);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn projection_is_permutation_invariant((specs, order) in gen::thread(30).prop_flat_map(|s| {
        let n = s.len();
        (Just(s), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
    })) {
        permutation_invariant(&specs, &order, Planted::none())?;
    }

    #[test]
    fn projection_is_duplication_invariant((specs, order) in gen::deliveries(30)) {
        duplication_invariant(&specs, &order, Planted::none())?;
    }

    #[test]
    fn reconstruction_shows_nothing_from_hidden_displays((specs, order) in gen::deliveries(30)) {
        nothing_from_hidden_displays(&specs, &order, Planted::none())?;
    }

    #[test]
    fn warnings_never_carry_payload(specs in gen::thread(30)) {
        warnings_carry_no_payload(&specs, Planted::none())?;
    }

    #[test]
    fn projector_never_panics_on_arbitrary_bytes(rows in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..80), 0..12)) {
        let p = projected(&rows, Planted::none());
        prop_assert!(p.messages.is_empty() && p.warnings.is_empty());
    }

    #[test]
    fn projector_never_panics_on_damaged_rows(specs in gen::thread(12), cuts in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6)) {
        let mut rows = gen::rows(&specs);
        for (i, (at, byte)) in cuts.iter().enumerate() {
            if rows.is_empty() { break; }
            let n = rows.len();
            let row = &mut rows[i % n];
            if row.is_empty() { continue; }
            let at = at.index(row.len());
            if byte % 2 == 0 { row.truncate(at) } else { row[at] = *byte }
        }
        let p = projected(&rows, Planted::none());
        for m in &p.messages { assert_no_empty_text(m); }
        let store = MemoryDisplayStore::new(Planted::none());
        for row in &rows { store.append(row).map_err(|e| TestCaseError::fail(e.to_string()))?; }
        reconstruct(&store, THREAD, Some(&lead()), &opts(Planted::none())).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}
