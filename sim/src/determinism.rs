//! The determinism self-check in separate processes (as FoundationDB re-runs a share of its seeds
//! and madsim's `check_determinism` does): replay chosen seeds with `histsim replay` in a fresh
//! process and compare trace hashes. Static state, thread-locals, hash-map order and the wall
//! clock all differ between processes, so a leak of any of them shows up here.

use crate::report::Mismatch;
use crate::run::{run_seed, RunConfig};
use std::process::Command;

/// The seeds of `seeds` a `percent` check replays: a fixed pseudo-random share (by the seed's
/// hash), at least one when the share is not zero.
pub fn chosen(seeds: &[u64], percent: u8) -> Vec<u64> {
    if percent == 0 || seeds.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<u64> = seeds
        .iter()
        .copied()
        .filter(|s| xxhash_rust::xxh3::xxh3_64(&s.to_le_bytes()) % 100 < u64::from(percent))
        .collect();
    if out.is_empty() {
        out.push(seeds[0]);
    }
    out
}

fn replay_args(seed: u64, config: &RunConfig, trace: bool) -> Vec<String> {
    let mut args = vec!["replay".to_string(), "--seed".into(), seed.to_string()];
    args.extend(config.replay_args());
    if trace {
        args.push("--trace".into());
    }
    args
}

/// Runs `histsim replay` for `seed` in a fresh process; returns its trace hash and, with `trace`,
/// its trace lines.
fn fresh_process(
    seed: u64,
    config: &RunConfig,
    trace: bool,
) -> Result<(String, Vec<String>), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find histsim: {e}"))?;
    let out = Command::new(exe)
        .args(replay_args(seed, config, trace))
        .output()
        .map_err(|e| format!("cannot start histsim replay: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let hash = text
        .lines()
        .find_map(|l| l.strip_prefix("trace-hash: "))
        .ok_or_else(|| format!("histsim replay --seed {seed} printed no trace-hash"))?
        .to_string();
    let lines = text
        .lines()
        .skip_while(|l| *l != "trace:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l[2..].to_string())
        .collect();
    Ok((hash, lines))
}

/// Replays `seed` in a fresh process; `None` when its trace hash equals `hash_here`.
pub fn check_seed(seed: u64, config: &RunConfig, hash_here: &str) -> Option<Mismatch> {
    let (fresh, _) = match fresh_process(seed, config, false) {
        Ok(r) => r,
        Err(e) => {
            return Some(Mismatch {
                seed,
                hash_here: hash_here.to_string(),
                hash_fresh_process: String::new(),
                first_difference: e,
            })
        }
    };
    if fresh == hash_here {
        return None;
    }
    // Find the first event that differs: both traces in full.
    let mut traced = config.clone();
    traced.keep_trace = true;
    let here = run_seed(seed, &traced).trace_full.unwrap_or_default();
    let there = fresh_process(seed, config, true)
        .map(|(_, lines)| lines)
        .unwrap_or_default();
    let at = here
        .iter()
        .zip(&there)
        .position(|(a, b)| !same_event(a, b))
        .unwrap_or(here.len().min(there.len()));
    let first_difference = format!(
        "event {at}: here `{}`, fresh process `{}`",
        here.get(at).map(String::as_str).unwrap_or("<end>"),
        there.get(at).map(String::as_str).unwrap_or("<end>")
    );
    Some(Mismatch {
        seed,
        hash_here: hash_here.to_string(),
        hash_fresh_process: fresh,
        first_difference,
    })
}

/// Whether two trace events are the same: equal text, or the same protocol answer (`sut < `
/// or `sut[slot] < `, then JSON) whose JSON means the same, as the trace hash compares answers.
fn same_event(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match (answer_of(a), answer_of(b)) {
        (Some((head_a, json_a)), Some((head_b, json_b))) => {
            head_a == head_b
                && crate::json_digest::canonical_text(json_a).is_some_and(|canonical| {
                    crate::json_digest::canonical_text(json_b).as_ref() == Some(&canonical)
                })
        }
        _ => false,
    }
}

/// A protocol answer event split into what comes before its JSON (time, label, `< `) and the
/// JSON.
fn answer_of(event: &str) -> Option<(&str, &str)> {
    let label = event.find("us sut")? + "us sut".len();
    let marker = label + event[label..].find(" < ")? + " < ".len();
    Some((&event[..marker], &event[marker..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_the_same_event_when_their_json_means_the_same() {
        let a = r#"     120us sut[memory] < {"id":3,"ok":{"count":2,"seq":1}}"#;
        let b = r#"     120us sut[memory] < {"ok":{"seq":1.0,"count":2},"id":3}"#;
        let other_slot = r#"     120us sut[sqlite] < {"ok":{"seq":1.0,"count":2},"id":3}"#;
        let other_value = r#"     120us sut[memory] < {"ok":{"seq":2,"count":2},"id":3}"#;
        assert!(same_event(a, b));
        assert!(!same_event(a, other_slot));
        assert!(!same_event(a, other_value));
        assert!(!same_event("   5us bus deliver x", "   5us bus deliver y"));
        assert!(same_event("   5us sut < not json", "   5us sut < not json"));
    }

    #[test]
    fn the_share_is_fixed_and_roughly_the_percent() {
        let seeds: Vec<u64> = (0..1000).collect();
        let a = chosen(&seeds, 5);
        assert_eq!(a, chosen(&seeds, 5));
        assert!((20..=80).contains(&a.len()), "{}", a.len());
        assert!(chosen(&seeds, 0).is_empty());
        assert_eq!(chosen(&[7], 1), vec![7]);
        assert_eq!(chosen(&seeds, 100).len(), 1000);
    }
}
