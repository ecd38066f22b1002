use super::*;
use crate::Planted;

fn live(id: &str, role: Role, run: u32, step: u32) -> LiveMessage {
    LiveMessage {
        id: id.into(),
        role,
        text: format!("text of {id}"),
        position: Position { run, step },
        hidden: false,
    }
}

fn row(id: &str, seq: u64, run: u32, step: u32) -> PersistedMessage {
    PersistedMessage {
        id: id.into(),
        seq,
        role: if step == 0 { Role::Human } else { Role::Ai },
        text: format!("text of {id}"),
        position: Position { run, step },
    }
}

fn ids(merge: &ClientMerge) -> Vec<String> {
    merge.view().into_iter().map(|s| s.id).collect()
}

#[test]
fn pages_in_any_order_show_by_seq_then_the_live_tail() {
    let mut m = ClientMerge::new("t", Planted::none());
    m.page(
        "t",
        PageScope::Thread,
        &[row("c", 3, 1, 0), row("d", 4, 1, 1)],
    );
    m.frame("t", LiveFrame::Message(live("e", Role::Ai, 1, 2)));
    m.page(
        "t",
        PageScope::Thread,
        &[row("a", 1, 0, 0), row("b", 2, 0, 1)],
    );
    assert_eq!(ids(&m), ["a", "b", "c", "d", "e"]);
    assert_eq!(m.cursor(PageScope::Thread), Some(1));
    assert_eq!(m.cursor(PageScope::Run(0)), None);
}

#[test]
fn a_reset_keeps_what_it_moved_and_hides_its_summary() {
    let mut m = ClientMerge::new("t", Planted::none());
    for (k, id) in ["h", "a1", "a2"].iter().enumerate() {
        let role = if k == 0 { Role::Human } else { Role::Ai };
        m.frame("t", LiveFrame::Message(live(id, role, 0, k as u32)));
    }
    let mut summary = live("s", Role::Human, 0, 3);
    summary.hidden = true;
    let kept = vec![live("a2", Role::Ai, 0, 2)];
    m.frame("t", LiveFrame::Reset { kept, summary });
    assert_eq!(ids(&m), ["h", "a1", "a2"]);
    m.frame("t", LiveFrame::Reconnect);
    assert_eq!(ids(&m), ["h", "a1", "a2"]);
}

#[test]
fn copies_show_once_and_other_threads_never() {
    let mut m = ClientMerge::new("t", Planted::none());
    m.optimistic("opt", "hello", 0);
    m.frame("t", LiveFrame::Message(live("a", Role::Ai, 0, 1)));
    assert_eq!(ids(&m), ["opt", "a"]);
    m.frame("t", LiveFrame::Message(live("h::ctx", Role::Human, 0, 0)));
    m.frame("t", LiveFrame::Message(live("h", Role::Human, 0, 0)));
    m.frame("u", LiveFrame::Message(live("x", Role::Ai, 0, 1)));
    assert_eq!(ids(&m), ["h", "a"]);
    assert_eq!(injected_copy_of("h::ctx"), Some("h"));
    assert_eq!(injected_copy_of("::ctx"), None);
}

#[cfg(feature = "planted")]
#[test]
fn each_legacy_switch_breaks_its_own_rule() {
    let mut m1 = ClientMerge::new("t", Planted::only(crate::BugId::M1));
    m1.optimistic("opt", "hello", 0);
    m1.frame("t", LiveFrame::Message(live("a", Role::Ai, 0, 1)));
    assert_eq!(ids(&m1), ["a"], "the optimistic message is gone");

    let mut m2 = ClientMerge::new("t", Planted::only(crate::BugId::M2));
    m2.page("t", PageScope::Thread, &[row("c", 3, 1, 0)]);
    m2.page("t", PageScope::Thread, &[row("a", 1, 0, 0)]);
    assert_eq!(ids(&m2), ["c", "a"], "an older page is appended");

    let mut m3 = ClientMerge::new("t", Planted::only(crate::BugId::M3));
    m3.frame("t", LiveFrame::Message(live("h", Role::Human, 0, 0)));
    m3.frame("t", LiveFrame::Message(live("h::ctx", Role::Human, 0, 0)));
    assert_eq!(ids(&m3), ["h", "h::ctx"], "the injected copy stays");
}

#[test]
fn a_reload_merges_the_restored_state_with_the_pages_by_id() {
    let mut m = ClientMerge::new("t", Planted::none());
    m.frame("t", LiveFrame::Message(live("x", Role::Ai, 0, 1)));
    m.reopen(
        "t",
        vec![live("a", Role::Human, 0, 0), live("b", Role::Ai, 0, 1)],
    );
    assert_eq!(ids(&m), ["a", "b"], "nothing held before the reload");
    m.page(
        "t",
        PageScope::Thread,
        &[row("a", 1, 0, 0), row("b", 2, 0, 1)],
    );
    assert_eq!(ids(&m), ["a", "b"]);
    let seqs: Vec<Option<u64>> = m.view().into_iter().map(|s| s.seq).collect();
    assert_eq!(seqs, [Some(1), Some(2)]);
}

#[cfg(feature = "planted")]
#[test]
fn the_seq_reload_and_window_switches_break_their_own_rules() {
    let mut m4 = ClientMerge::new("t", Planted::only(crate::BugId::M4));
    m4.page(
        "t",
        PageScope::Thread,
        &[row("a", 1, 0, 0), row("b", 2, 0, 1)],
    );
    m4.frame("t", LiveFrame::Message(live("a", Role::Human, 0, 0)));
    let shown = m4.view();
    assert_eq!(
        shown[1].id, "a",
        "the frame's copy falls into the live tail"
    );
    assert_eq!(shown[1].seq, None);

    let mut m5 = ClientMerge::new("t", Planted::only(crate::BugId::M5));
    m5.reopen("t", vec![live("a", Role::Human, 0, 0)]);
    m5.page("t", PageScope::Thread, &[row("a", 1, 0, 0)]);
    assert_eq!(
        ids(&m5),
        ["a", "a"],
        "the restored copy stays beside the page's"
    );

    let mut m6 = ClientMerge::new("t", Planted::only(crate::BugId::M6));
    m6.reopen("t", vec![live("c", Role::Human, 1, 0)]);
    m6.page(
        "t",
        PageScope::Thread,
        &[row("b", 2, 0, 1), row("c", 3, 1, 0)],
    );
    m6.page("t", PageScope::Thread, &[row("a", 1, 0, 0)]);
    assert_eq!(ids(&m6), ["a", "c"], "b fell out with the earlier window");
}
