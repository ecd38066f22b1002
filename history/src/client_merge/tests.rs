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
