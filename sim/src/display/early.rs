//! What a read before settling may answer: a pure function of the model's conversation and the
//! record up to that read. The model of the rows stored by the read's time, and, to tell a
//! replica reading its own deliveries (P12) from other early-read defects, the model of the rows
//! that replica's own persister had received. The conversation is read, never changed: the
//! stored marks are given to the model apart from it ([`m::client_transcript_when_stored`]).

use super::context::EarlyExpectation;
use super::view::{view_of_model, ViewMessage};
use super::world::{Read, WorldRecord};
use model::display as m;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Which emissions (by index) were stored before op `read_op`, given the op that first stored
/// each (`None`: never), cut after the last stored one: the unstored ones after it add accepted
/// losses only, never a message (the model's property
/// `unstored_emissions_after_the_last_stored_one_change_no_message`), and modelling them was
/// 0.5 % of display's instructions.
fn stored_before(read_op: u64, first_ops: &[Option<u64>]) -> Vec<bool> {
    let mut stored: Vec<bool> = (first_ops.iter())
        .map(|first| first.is_some_and(|op| op < read_op))
        .collect();
    let up_to = stored.iter().rposition(|&s| s).map_or(0, |i| i + 1);
    stored.truncate(up_to);
    debug_assert!(
        stored.last().is_none_or(|&last| last),
        "the cut ends at a stored emission"
    );
    stored
}

/// The messages the model says a read shows when exactly `stored` (a prefix, by index) is in
/// the store.
pub(super) fn model_of_stored(conversation: &m::Conversation, stored: &[bool]) -> Vec<ViewMessage> {
    debug_assert!(stored.len() <= conversation.emissions.len());
    view_of_model(&m::client_transcript_when_stored(conversation, stored).messages)
}

/// The expectation of each read of `record` (`None` for a settled read). Reads taken between
/// the same two deliveries (every replica of a round, `shared` and `own` of a caught-up replica)
/// see the same stored set: each distinct set is modelled once.
pub(super) fn expectations(
    record: &WorldRecord,
    conversation: &m::Conversation,
) -> Vec<Option<EarlyExpectation>> {
    debug_assert_eq!(
        conversation.emissions.len(),
        record.emissions.len(),
        "one modelled emission for each the world published"
    );
    let mut modelled: BTreeMap<Vec<bool>, Rc<Vec<ViewMessage>>> = BTreeMap::new();
    let mut model_before = |read: &Read, first_ops: &[Option<u64>]| {
        (modelled.entry(stored_before(read.op, first_ops)))
            .or_insert_with_key(|stored| Rc::new(model_of_stored(conversation, stored)))
            .clone()
    };
    // The op that first stored each emission, looked up once per seed (and per replica for its
    // own persister) rather than once per emission and read.
    let ops_of = |first: &dyn Fn(u32) -> Option<u64>| -> Vec<Option<u64>> {
        (record.emissions.iter())
            .map(|emitted| first(emitted.step))
            .collect()
    };
    let shared_ops = ops_of(&|step| record.first_stored.get(&step).copied());
    let mut own_ops: BTreeMap<u8, Vec<Option<u64>>> = BTreeMap::new();
    (record.reads.iter())
        .map(|read| {
            if read.settled {
                return None;
            }
            let shared = model_before(read, &shared_ops);
            let own = own_ops.entry(read.replica).or_insert_with(|| {
                ops_of(&|step| record.first_received.get(&(read.replica, step)).copied())
            });
            let own = model_before(read, own);
            Some(EarlyExpectation { shared, own })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_sees_the_emissions_stored_before_its_op_cut_after_the_last() {
        let first_ops = [Some(3), None, Some(7), Some(1), None];
        assert_eq!(stored_before(0, &first_ops), Vec::<bool>::new());
        assert_eq!(stored_before(2, &first_ops), [false, false, false, true]);
        assert_eq!(stored_before(4, &first_ops), [true, false, false, true]);
        assert_eq!(stored_before(7, &first_ops), [true, false, false, true]);
        assert_eq!(stored_before(8, &first_ops), [true, false, true, true]);
    }
}
