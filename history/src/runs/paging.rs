//! The full read of a thread's messages that both views share: forward pages with `After`, until
//! a short page or a cursor that does not advance. One function, so the two views cannot drift
//! apart in filter or paging (R7), and a full read is never one capped call (R2).

use super::error::RunStoreError;
use super::event::{MessageCursor, RunEvent};
use super::store::RunEventStore;

/// Every message row of a thread, ascending by seq, read in pages of `page_size_events`.
pub fn read_all_messages<S: RunEventStore + ?Sized>(
    store: &S,
    thread_id: &str,
    page_size_events: usize,
) -> Result<Vec<RunEvent>, RunStoreError> {
    assert!(page_size_events >= 1, "page_size_events must be at least 1");
    let rows = forward_pages(page_size_events, |cursor| {
        store
            .list_messages(thread_id, page_size_events, cursor)
            .map(Some)
    })?;
    Ok(rows.unwrap_or_default())
}

/// The rows of every forward page, in order: `page_at` answers the page at a cursor (`None`: it
/// cannot, and the read ends with `None`). Ends: every full page moves the cursor strictly up,
/// and seqs are bounded.
fn forward_pages(
    page_size_events: usize,
    mut page_at: impl FnMut(MessageCursor) -> Result<Option<Vec<RunEvent>>, RunStoreError>,
) -> Result<Option<Vec<RunEvent>>, RunStoreError> {
    let mut rows: Vec<RunEvent> = Vec::new();
    let mut after = 0u64;
    loop {
        let Some(page) = page_at(MessageCursor::After(after))? else {
            return Ok(None);
        };
        let full = page.len() >= page_size_events;
        let last = page.last().map(|e| e.seq);
        rows.extend(page);
        match last {
            Some(seq) if full && seq > after => after = seq,
            _ => break,
        }
    }
    Ok(Some(rows))
}

/// The legacy read of planted R3: the same pages, but each stored row is handed to `edit` itself
/// (the seed's memory store gave out live dicts). Falls back to copies for backends that cannot
/// do that.
#[cfg(feature = "planted")]
pub(crate) fn read_all_messages_live<S: RunEventStore + ?Sized>(
    store: &S,
    thread_id: &str,
    page_size_events: usize,
    edit: &mut dyn FnMut(&mut RunEvent),
) -> Result<Vec<RunEvent>, RunStoreError> {
    let live = forward_pages(page_size_events, |cursor| {
        let mut page = Vec::new();
        let live = store.legacy_edit_messages(thread_id, page_size_events, cursor, &mut |row| {
            edit(row);
            page.push(row.clone());
        })?;
        Ok(live.then_some(page))
    })?;
    match live {
        Some(rows) => Ok(rows),
        None => read_all_messages(store, thread_id, page_size_events),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::{Category, MemoryRunEventStore, NewRunEvent};
    use crate::Planted;
    use serde_json::json;

    fn fill(store: &MemoryRunEventStore, n: usize) {
        let ev = |i: usize| NewRunEvent {
            thread_id: "t".into(),
            run_id: "r".into(),
            user_id: None,
            event_type: "human_message".into(),
            category: if i.is_multiple_of(3) {
                Category::Trace
            } else {
                Category::Message
            },
            content: json!({"type": "human", "content": i.to_string()}).into(),
            metadata: json!({}),
            created_at_ns: i as i64,
        };
        store.put_batch((0..n).map(ev).collect()).unwrap();
    }

    #[test]
    fn reads_everything_at_and_around_page_multiples() {
        for (n, page) in [(0, 5), (15, 5), (16, 5), (14, 5), (1500, 500), (2, 1)] {
            let store = MemoryRunEventStore::new(Planted::none());
            fill(&store, n);
            let rows = read_all_messages(&store, "t", page).unwrap();
            assert_eq!(rows.len() as u64, store.count_messages("t").unwrap());
            assert!(rows.windows(2).all(|w| w[0].seq < w[1].seq));
        }
    }
}
