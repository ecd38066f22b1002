//! Message ids for messages stored without one (human and tool messages): derived from the row's
//! identity, so every read of every view gives the same id for the same message (R10).

use uuid::Uuid;

/// `uuid5(NAMESPACE_URL, "{thread_id}:{seq}")`, as the seed's history helper computes it.
pub fn message_id(thread_id: &str, seq: u64) -> String {
    Uuid::new_v5(
        &Uuid::NAMESPACE_URL,
        format!("{thread_id}:{seq}").as_bytes(),
    )
    .to_string()
}

/// planted R10: a random-looking id derived from the message's position counted from the newest
/// message of this read. Unique within one read, but every new message shifts it.
pub(crate) fn legacy_unstable_id(thread_id: &str, from_newest: usize) -> String {
    Uuid::new_v5(
        &Uuid::NAMESPACE_OID,
        format!("{thread_id}#{from_newest}").as_bytes(),
    )
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_uuid5_of_thread_and_seq() {
        let id = message_id("6d30913e-dcd4-41c8-8941-f66c716cf359", 1);
        assert_eq!(id, message_id("6d30913e-dcd4-41c8-8941-f66c716cf359", 1));
        let parsed = Uuid::parse_str(&id).unwrap();
        assert_eq!(parsed.get_version_num(), 5);
        assert_ne!(id, message_id("6d30913e-dcd4-41c8-8941-f66c716cf359", 2));
        assert_ne!(message_id("a:1", 2), message_id("a", 12));
        // The value Python's uuid.uuid5(uuid.NAMESPACE_URL, "<thread>:1") gives, as the seed's
        // helper computes it.
        assert_eq!(id, "e1c4656e-8a62-555e-9148-c76d07df49a5");
    }
}
