//! Run-scoped singleton events (`put_if_absent`): the first write of a (thread, run, event type)
//! is the one the store keeps, and every later call answers that first record unchanged.

use std::collections::BTreeMap;

use serde_json::Value;

/// What one `put_if_absent` call must answer.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceiptAnswer {
    /// The content of the record the store must return: this call's when it creates it, the
    /// first call's otherwise.
    pub content: Value,
    /// Whether this call writes.
    pub created: bool,
}

/// Every receipt the store holds, by (thread, run, event type).
#[derive(Clone, Debug, Default)]
pub struct ReceiptTruth {
    first: BTreeMap<(String, String, String), Value>,
}

impl ReceiptTruth {
    pub fn new() -> ReceiptTruth {
        ReceiptTruth::default()
    }

    /// A `put_if_absent` call that reached the store.
    pub fn put_if_absent(
        &mut self,
        thread_id: &str,
        run_id: &str,
        event_type: &str,
        content: &Value,
    ) -> ReceiptAnswer {
        let key = (
            thread_id.to_string(),
            run_id.to_string(),
            event_type.to_string(),
        );
        match self.first.get(&key) {
            Some(first) => ReceiptAnswer {
                content: first.clone(),
                created: false,
            },
            None => {
                self.first.insert(key, content.clone());
                ReceiptAnswer {
                    content: content.clone(),
                    created: true,
                }
            }
        }
    }

    /// The thread's rows were deleted (`delete_by_thread`): every receipt of its runs with
    /// them. A later `put_if_absent` of a run the deletion removed is refused ([`super::WriteFence`],
    /// R28); one of a run it did not remove writes again.
    pub fn delete_thread(&mut self, thread_id: &str) {
        self.first.retain(|(t, _, _), _| t != thread_id);
    }

    /// The run's rows were deleted: its receipts with them.
    pub fn delete_run(&mut self, thread_id: &str, run_id: &str) {
        self.first
            .retain(|(t, r, _), _| !(t == thread_id && r == run_id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_write_wins_per_run_until_the_run_is_deleted() {
        let mut t = ReceiptTruth::new();
        let first = t.put_if_absent("t", "r1", "run.delivery", &json!(1));
        assert_eq!((first.content.clone(), first.created), (json!(1), true));
        let again = t.put_if_absent("t", "r1", "run.delivery", &json!(2));
        assert_eq!((again.content, again.created), (json!(1), false));
        assert!(
            t.put_if_absent("t", "r2", "run.delivery", &json!(3))
                .created
        );
        assert!(t.put_if_absent("t", "r1", "other", &json!(4)).created);
        t.delete_run("t", "r1");
        let after = t.put_if_absent("t", "r1", "run.delivery", &json!(5));
        assert_eq!((after.content, after.created), (json!(5), true));
    }

    #[test]
    fn a_thread_deletion_forgets_every_receipt_of_the_thread_only() {
        let mut t = ReceiptTruth::new();
        t.put_if_absent("t", "r1", "run.delivery", &json!(1));
        t.put_if_absent("t", "r2", "run.delivery", &json!(2));
        t.put_if_absent("u", "r3", "run.delivery", &json!(3));
        t.delete_thread("t");
        assert!(
            t.put_if_absent("t", "r1", "run.delivery", &json!(4))
                .created
        );
        assert!(
            t.put_if_absent("t", "r2", "run.delivery", &json!(5))
                .created
        );
        let kept = t.put_if_absent("u", "r3", "run.delivery", &json!(6));
        assert_eq!((kept.content, kept.created), (json!(3), false));
    }
}
