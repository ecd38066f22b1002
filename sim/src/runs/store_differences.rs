//! The known differences a run-event system may declare in `hello` (docs/sut-protocol.md,
//! `hello`; defined with their reasons in docs/reported-bugs.md, "Known differences
//! with the published stores"), and the thread ids of the shapes S4 to S6 the generator writes.
//!
//! A declared S4, S5 or S6 says the system refuses thread ids of that shape, where histsim's
//! stores keep one id space (any non-empty string). The world then leaves every op on a thread
//! whose id has that shape out, counted under the ID ([`left_out_entry`]), rather than fail the
//! system on a refusal it declared. histsim's own stores declare nothing and are judged on every
//! such thread. A declared S1 to S3 says the system's answers leave out the DB store's content
//! marks (`content_is_json`, `content_is_dict`); it is counted once a world.
//!
//! The ids are drawn by [`draw`] from a workload sub-stream of their own, after every other
//! draw, and only in a few seeds, so every other seed keeps the scenario it had.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// The workload sub-stream the thread-id shapes are drawn from.
pub const SUBSTREAM: u64 = 0x2c;

/// The share of seeds one of whose threads gets an id of a shape S4 to S6.
const SHAPED_PROBABILITY: f64 = 0.15;

/// Upstream's longest thread id; S6's ids are one character longer.
const UPSTREAM_MAX_ID_CHARS: usize = 64;

/// One known difference: its ID and what the system does there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreDifference {
    pub id: &'static str,
    pub summary: &'static str,
}

/// Every known difference of a run-event system, S1 to S6.
pub const ALL: [StoreDifference; 6] = [
    StoreDifference {
        id: "S1",
        summary: "the DB store marks a list content `content_is_json`",
    },
    StoreDifference {
        id: "S2",
        summary: "the DB store marks a structured content `content_is_json` through put_batch",
    },
    StoreDifference {
        id: "S3",
        summary: "the DB store marks a dict content `content_is_dict`",
    },
    StoreDifference {
        id: "S4",
        summary: "thread ids with a dot are refused",
    },
    StoreDifference {
        id: "S5",
        summary: "thread ids naming a parent directory (`../`) are refused",
    },
    StoreDifference {
        id: "S6",
        summary: "thread ids over 64 characters are refused",
    },
];

/// The known difference `id` names, if any.
pub fn parse(id: &str) -> Option<StoreDifference> {
    ALL.iter().copied().find(|d| d.id == id)
}

/// The difference among S4 to S6 whose shape `thread_id` has, if any (S5 before S4: `../x`
/// also holds a dot).
pub fn shape_of(thread_id: &str) -> Option<StoreDifference> {
    let id = if thread_id.contains("../") {
        "S5"
    } else if thread_id.contains('.') {
        "S4"
    } else if thread_id.chars().count() > UPSTREAM_MAX_ID_CHARS {
        "S6"
    } else {
        return None;
    };
    parse(id)
}

/// The left-out entry of ops a declared difference `d` kept from the system
/// (`--allow-left-out S4`): `what for S4 (the system declares it: ...)`.
pub fn left_out_entry(what: &str, d: StoreDifference) -> String {
    format!(
        "{what} for {} (the system declares it: {})",
        d.id, d.summary
    )
}

/// In a few seeds, gives one of `threads` an id of a shape S4 to S6 made from its own (so it
/// stays unique): `<id>.v2`, `../<id>`, or the id padded with `x` to 65 characters.
pub fn draw(threads: &mut BTreeMap<String, String>, rng: &mut ChaCha8Rng) {
    if threads.is_empty() || !rng.random_bool(SHAPED_PROBABILITY) {
        return;
    }
    let pick = rng.random_range(0..threads.len());
    let shape = rng.random_range(0..3u8);
    let Some(id) = threads.values_mut().nth(pick) else {
        return;
    };
    *id = match shape {
        0 => format!("{id}.v2"),
        1 => format!("../{id}"),
        _ => format!("{id:x<width$}", width = UPSTREAM_MAX_ID_CHARS + 1),
    };
    debug_assert!(shape_of(id).is_some());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_names_its_difference() {
        let uuid = "b1be1c2d-0029-4b00-8000-000000000029";
        assert_eq!(shape_of(uuid), None);
        assert_eq!(shape_of(&format!("{uuid}.v2")).map(|d| d.id), Some("S4"));
        assert_eq!(shape_of(&format!("../{uuid}")).map(|d| d.id), Some("S5"));
        let long = format!("{uuid:x<65}");
        assert_eq!(long.len(), 65);
        assert_eq!(shape_of(&long).map(|d| d.id), Some("S6"));
        assert_eq!(parse("S7"), None);
    }

    #[test]
    fn a_few_seeds_get_one_shaped_thread_id() {
        let (mut seeds, mut shapes) = (0, std::collections::BTreeSet::new());
        for seed in 0..200 {
            let s = crate::runs::generate::of_seed(seed);
            let shaped: Vec<&str> = s
                .threads
                .values()
                .filter_map(|id| shape_of(id))
                .map(|d| d.id)
                .collect();
            assert!(shaped.len() <= 1, "seed {seed}: {shaped:?}");
            seeds += shaped.len();
            shapes.extend(shaped);
        }
        assert!(seeds > 5 && seeds < 60, "{seeds} of 200 seeds");
        assert_eq!(shapes.len(), 3, "{shapes:?}");
    }
}
