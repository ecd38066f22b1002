//! Message ids for messages stored without one (human and tool messages): derived from the row's
//! identity, so every read of every view gives the same id for the same message (R10).

use sha1::{Digest, Sha1};
use uuid::Uuid;

/// `uuid5(NAMESPACE_URL, "{thread_id}:{seq}")`, as the seed's history helper computes it.
///
/// The SHA-1 is RustCrypto's, which uses the CPU's SHA extensions where it has them: every view
/// computes the id of every message it renders, and `uuid`'s portable SHA-1 was 3 % of the runs
/// workload's instructions. `uuid` still sets the version and variant bits.
pub fn message_id(thread_id: &str, seq: u64) -> String {
    let mut sha1 = Sha1::new();
    sha1.update(Uuid::NAMESPACE_URL.as_bytes());
    sha1.update(thread_id.as_bytes());
    sha1.update(b":");
    sha1.update(itoa::Buffer::new().format(seq).as_bytes());
    let digest = sha1.finalize();
    let mut first = [0u8; 16];
    first.copy_from_slice(&digest[..16]);
    uuid::Builder::from_sha1_bytes(first)
        .into_uuid()
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

    proptest::proptest! {
        #[test]
        fn ids_are_uuids_own_uuid5(thread in "\\PC{0,40}", seq in proptest::prelude::any::<u64>()) {
            let by_uuid = Uuid::new_v5(&Uuid::NAMESPACE_URL, format!("{thread}:{seq}").as_bytes());
            proptest::prop_assert_eq!(message_id(&thread, seq), by_uuid.to_string());
        }
    }

    #[test]
    fn the_seq_is_written_in_decimal() {
        // The proptest above draws seqs from all of u64; these are the ones at digit boundaries.
        for seq in [0, 7, 10, 99, 100, 12_345, u64::MAX] {
            let by_uuid = Uuid::new_v5(&Uuid::NAMESPACE_URL, format!("t:{seq}").as_bytes());
            assert_eq!(message_id("t", seq), by_uuid.to_string());
        }
    }
}
