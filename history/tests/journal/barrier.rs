//! A record is appended only behind durable ones (J19): at every step at most one record is
//! unsynced, so no file system can persist a later record while an earlier one is missing.

use std::sync::Arc;

use history::journal::{dump_records, Journal, MemStorage};
#[cfg(feature = "planted")]
use history::{BugId, Planted};

use super::{opts, row, rows};
use history::journal::JournalOptions;

/// Records in the bytes written since the last sync.
fn unsynced_records(s: &MemStorage) -> usize {
    let bytes = s.bytes("j");
    let durable = s.durable_bytes("j").len();
    dump_records(&bytes[durable..])
        .flatten()
        .filter(|v| v.get("torn_tail_bytes").is_none())
        .count()
}

/// The most records unsynced at once while a replacement of three row groups and a batch of
/// queued appends are written.
fn most_unsynced(o: JournalOptions) -> usize {
    let s = Arc::new(MemStorage::new());
    let mut j = Journal::create(s.clone(), "j", o, None).expect("create");
    let mut most = unsynced_records(&s);
    let mut g = j
        .begin_replace(history::journal::Origin::Main)
        .expect("begin");
    for group in [&["a"][..], &["b", "c"], &["d"]] {
        g.push_rows(rows(group)).expect("rows");
        most = most.max(unsynced_records(&s));
    }
    g.commit().expect("commit");
    let inbox = j.inbox();
    for t in ["q1", "q2", "q3"] {
        inbox.submit(history::journal::Origin::Main, vec![row(t)]);
    }
    j.pump().expect("pump");
    assert_eq!(unsynced_records(&s), 0, "a pump ends synced");
    assert_eq!(j.fold().in_context().len(), 7);
    most.max(unsynced_records(&s))
}

#[test]
fn at_most_one_record_is_ever_unsynced() {
    assert_eq!(most_unsynced(opts()), 1);
}

#[cfg(feature = "planted")]
#[test]
fn planted_j19_leaves_a_transaction_unsynced_behind_its_records() {
    let o = JournalOptions::planted(Planted::only(BugId::J19));
    assert!(most_unsynced(o) >= 3);
}
