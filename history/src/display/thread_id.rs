//! A thread's canonical id (docs/display-projection.md, "Thread ids"): the one spelling
//! persistence stores a row under and every history read looks the thread up by, so a thread is
//! found under any spelling of its id a client may send (P16).

use std::borrow::Cow;

/// The canonical spelling of a thread id: surrounding whitespace trimmed; a UUID in any
/// spelling `uuid` reads (any case, hyphenated or as 32 hex digits, in `{}` braces, with a
/// `urn:uuid:` prefix) as its lower-case hyphenated form; any other id unchanged. Borrowed when
/// the id already is canonical.
pub fn canonical_thread_id(id: &str) -> Cow<'_, str> {
    let trimmed = id.trim();
    match uuid::Uuid::try_parse(trimmed) {
        Ok(parsed) => {
            let mut buffer = uuid::Uuid::encode_buffer();
            let hyphenated: &str = parsed.hyphenated().encode_lower(&mut buffer);
            if hyphenated == id {
                Cow::Borrowed(id)
            } else {
                Cow::Owned(hyphenated.to_string())
            }
        }
        Err(_) => Cow::Borrowed(trimmed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_uuid_has_one_canonical_id() {
        let canonical = "6d30913e-dcd4-41c8-8941-f66c716cf359";
        for spelling in [
            canonical,
            "6D30913E-DCD4-41C8-8941-F66C716CF359",
            "{6d30913e-dcd4-41c8-8941-f66c716cf359}",
            "urn:uuid:6d30913e-dcd4-41c8-8941-f66c716cf359",
            "6d30913edcd441c88941f66c716cf359",
            "  6d30913e-dcd4-41c8-8941-f66c716cf359\t",
        ] {
            assert_eq!(canonical_thread_id(spelling), canonical, "{spelling:?}");
        }
        assert!(matches!(canonical_thread_id(canonical), Cow::Borrowed(_)));
    }

    #[test]
    fn other_ids_are_kept_but_for_surrounding_whitespace() {
        assert_eq!(
            canonical_thread_id("65f0c0ffee0000000000abcd"),
            "65f0c0ffee0000000000abcd"
        );
        assert_eq!(canonical_thread_id(" Thread-A "), "Thread-A");
        assert_eq!(canonical_thread_id("Thread-A"), "Thread-A");
        assert_eq!(canonical_thread_id(""), "");
    }
}
