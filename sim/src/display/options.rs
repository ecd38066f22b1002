//! The options a seed derives for the display workload (swarm testing).
//!
//! As TigerBeetle's VOPR does, each seed switches a random subset of features and faults on, so
//! that some seeds run quiet worlds where rare interleavings get room and others run everything at
//! once. Every probability defaults to zero; [`DisplayOptions::from_seed`] turns some on. The run
//! prints the options it derived, so a failure report says what the world was.

use crate::rng::{swarm_probability, SeedRng, Stream};
use rand::Rng;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DisplayOptions {
    /// API replicas, each with a persister on the fan-out bus (1 to 5).
    pub replicas: u8,
    /// Follow-up requests (runs) in the conversation.
    pub turns: u8,
    /// Deepest delegation chain (0: the primary agent never delegates; at most 4).
    pub delegation_depth_max: u8,
    /// Chance that a run segment delegates to another agent.
    pub delegation_probability: f64,
    /// Chance that a delegation does not share the display (share_display_id=false: hidden output).
    pub delegation_hidden_probability: f64,
    /// Chance that a delegation calls the delegating agent itself (recursive same-agent delegation).
    pub delegation_recursive_probability: f64,
    /// Chance that a run asks the user a question (HITL) and gets an answer.
    pub hitl_probability: f64,
    /// Chance of a HITL answer being a bool.
    pub hitl_bool_probability: f64,
    /// Chance, per segment, of a custom event class the API never heard of.
    pub custom_event_probability: f64,
    /// Chance, per segment, of an agent-in-the-loop envelope (a custom class reaching StopEvent).
    pub envelope_probability: f64,
    /// Chance, per segment, of a look-alike class (NoAnswerStopEvent, XChunkEventY, ...).
    pub decoy_probability: f64,
    /// Chance that a relevant row is malformed (identity, created_at or payload).
    pub defect_probability: f64,
    /// Chance that a user message carries media blocks (some of them legacy or invalid).
    pub media_probability: f64,
    /// Chance that a run streams nothing and only stops with its answer.
    pub stop_only_probability: f64,
    /// Chance that a stop's answer is longer than what was streamed.
    pub answer_tail_probability: f64,
    /// Chance that a step is emitted in the same instant as the previous one (a tied created_at).
    pub tie_probability: f64,
    /// The thread predates UserAgent markers: user events come from a legacy class.
    pub marker_less: bool,
    /// Chance that the client sends its next request without waiting for the run's stop.
    pub early_request_probability: f64,
    /// Chance, per delivery, of extra copies (redelivery, double subscription).
    pub delivery_duplicate_probability: f64,
    /// Chance, per delivery, of a delay that reorders it behind later messages.
    pub delivery_delay_probability: f64,
    /// Longest injected delivery delay.
    pub delivery_delay_ms_max: u32,
    /// Chance that a run's trailing chunk is lost at the publisher.
    pub trailing_chunk_drop_probability: f64,
    /// Chance, per turn, that one replica's subscription drops for a stretch of steps.
    pub replica_disconnect_probability: f64,
    /// Chance, again and again before each primary run, of one more crossed row: a cell of the
    /// generator map (`display/map.rs`) the usual conversation never produces.
    pub crossed_row_probability: f64,
}

impl DisplayOptions {
    /// A quiet world: one replica, no faults, no optional features.
    pub fn quiet(turns: u8) -> Self {
        DisplayOptions {
            replicas: 1,
            turns,
            delegation_depth_max: 0,
            delegation_probability: 0.0,
            delegation_hidden_probability: 0.0,
            delegation_recursive_probability: 0.0,
            hitl_probability: 0.0,
            hitl_bool_probability: 0.0,
            custom_event_probability: 0.0,
            envelope_probability: 0.0,
            decoy_probability: 0.0,
            defect_probability: 0.0,
            media_probability: 0.0,
            stop_only_probability: 0.0,
            answer_tail_probability: 0.0,
            tie_probability: 0.0,
            marker_less: false,
            early_request_probability: 0.0,
            delivery_duplicate_probability: 0.0,
            delivery_delay_probability: 0.0,
            delivery_delay_ms_max: 0,
            trailing_chunk_drop_probability: 0.0,
            replica_disconnect_probability: 0.0,
            crossed_row_probability: 0.0,
        }
    }

    /// The options of `seed`: each feature and fault is on with its own chance, with a
    /// probability drawn when on.
    pub fn from_seed(seed: SeedRng, replicas: Option<u8>) -> Self {
        let mut rng = seed.stream(Stream::Options);
        let mut maybe = |chance_on, lo, hi| swarm_probability(&mut rng, chance_on, lo, hi);
        let delegation_probability = maybe(0.7, 0.2, 0.7);
        let delegation_hidden_probability = maybe(0.7, 0.2, 0.8);
        let delegation_recursive_probability = maybe(0.4, 0.1, 0.5);
        let hitl_probability = maybe(0.6, 0.1, 0.6);
        let hitl_bool_probability = maybe(0.5, 0.2, 0.8);
        let custom_event_probability = maybe(0.6, 0.1, 0.6);
        let envelope_probability = maybe(0.4, 0.1, 0.5);
        let decoy_probability = maybe(0.5, 0.1, 0.5);
        let defect_probability = maybe(0.5, 0.02, 0.15);
        let media_probability = maybe(0.5, 0.2, 0.8);
        let stop_only_probability = maybe(0.5, 0.1, 0.5);
        let answer_tail_probability = maybe(0.5, 0.1, 0.6);
        let tie_probability = maybe(0.6, 0.1, 0.5);
        let early_request_probability = maybe(0.5, 0.1, 0.6);
        let delivery_duplicate_probability = maybe(0.6, 0.02, 0.3);
        let delivery_delay_probability = maybe(0.6, 0.05, 0.4);
        let trailing_chunk_drop_probability = maybe(0.5, 0.2, 0.8);
        let replica_disconnect_probability = maybe(0.4, 0.1, 0.5);
        // Sizes come from their own sub-stream, so adding a probability above does not change the
        // size of old seeds' worlds.
        let mut rng = seed.substream(Stream::Options, 1);
        let delivery_delay_ms_max = if delivery_delay_probability > 0.0 {
            rng.random_range(2..=40)
        } else {
            0
        };
        DisplayOptions {
            replicas: replicas.unwrap_or_else(|| rng.random_range(1..=5)),
            turns: rng.random_range(2..=10),
            delegation_depth_max: if delegation_probability > 0.0 {
                rng.random_range(1..=4)
            } else {
                0
            },
            delegation_probability,
            delegation_hidden_probability,
            delegation_recursive_probability,
            hitl_probability,
            hitl_bool_probability,
            custom_event_probability,
            envelope_probability,
            decoy_probability,
            defect_probability,
            media_probability,
            stop_only_probability,
            answer_tail_probability,
            tie_probability,
            marker_less: rng.random_bool(0.05),
            early_request_probability,
            delivery_duplicate_probability,
            delivery_delay_probability,
            delivery_delay_ms_max,
            trailing_chunk_drop_probability,
            replica_disconnect_probability,
            // A sub-stream of its own: added later, it leaves every other option of a seed as is.
            crossed_row_probability: swarm_probability(
                &mut seed.substream(Stream::Options, 2),
                0.9,
                0.4,
                0.85,
            ),
        }
    }
}

crate::workload_items::options_display!(DisplayOptions);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload_items::switch_subsets;

    #[test]
    fn swarming_switches_different_subsets_on() {
        let options = (0..64).map(|s| DisplayOptions::from_seed(SeedRng::new(s), None));
        let subsets = switch_subsets(options, |o| {
            vec![
                o.delegation_probability > 0.0,
                o.hitl_probability > 0.0,
                o.delivery_duplicate_probability > 0.0,
                o.trailing_chunk_drop_probability > 0.0,
            ]
        });
        assert!(subsets > 8, "only {subsets} subsets in 64 seeds");
    }

    #[test]
    fn a_replica_override_wins() {
        assert_eq!(
            DisplayOptions::from_seed(SeedRng::new(3), Some(3)).replicas,
            3
        );
    }

    #[test]
    fn printed_options_name_every_field() {
        let text = DisplayOptions::quiet(2).to_string();
        assert!(text.contains("replicas = 1"));
        assert!(text.contains("delivery_duplicate_probability = off"));
    }
}
