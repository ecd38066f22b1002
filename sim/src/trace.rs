//! The trace of one run: every delivery, write and answer, in the order the simulation made them.
//!
//! Its hash is the determinism fingerprint: the same seed must give the same `trace-hash`, byte for
//! byte, in this process or another (a system under test's answers by their canonical JSON: see
//! [`Trace::record_text`]). The full text is kept only when asked for (`--trace`); a
//! bounded tail is always kept so a failure report can show the last events.

use std::collections::VecDeque;
use std::fmt::Write as _;
use xxhash_rust::xxh3::Xxh3;

/// How many trailing events a failure report shows.
pub const TAIL_EVENTS_MAX: usize = 40;
/// How much of a long event (a protocol line) the tail keeps.
pub const TAIL_TEXT_BYTES_MAX: usize = 400;

pub struct Trace {
    hasher: Xxh3,
    events: u64,
    tail: VecDeque<String>,
    full: Option<Vec<String>>,
}

impl Trace {
    pub fn new(keep_full: bool) -> Self {
        Trace {
            hasher: Xxh3::new(),
            events: 0,
            tail: VecDeque::with_capacity(TAIL_EVENTS_MAX),
            full: keep_full.then(Vec::new),
        }
    }

    /// Record one event. `at_us` is simulated time.
    pub fn record(&mut self, at_us: u64, event: std::fmt::Arguments<'_>) {
        self.record_with(at_us, |line| {
            let _ = line.write_fmt(event);
        });
    }

    /// Record one event that `write` appends to its line: for the most frequent events, whose
    /// pieces are cheaper to push one by one than to format.
    pub fn record_with(&mut self, at_us: u64, write: impl FnOnce(&mut String)) {
        let mut line = self.spare_line();
        push_time(&mut line, at_us);
        write(&mut line);
        // Hashed with its line end in one update (each update has a cost of its own); the
        // line kept has none.
        line.push('\n');
        self.hasher.update(line.as_bytes());
        line.pop();
        self.events += 1;
        if let Some(full) = &mut self.full {
            full.push(line.clone());
        }
        self.tail.push_back(line);
    }

    /// Record one event made of `label` and a long `text` (a protocol line): hashed whole, as
    /// [`Trace::record`] would, but the tail a failure report shows keeps only its first
    /// [`TAIL_TEXT_BYTES_MAX`] bytes, and only a full trace copies all of it. An answer line
    /// (`< ` and JSON) is hashed in its canonical form (json_digest's `canonical_xxh3`: keys
    /// sorted, numbers by value, no whitespace): an answer is the same answer whatever order
    /// its object's keys came in, while the trace keeps the line as the system wrote it.
    pub fn record_text(&mut self, at_us: u64, label: &str, text: &str) {
        let mut line = self.spare_line();
        push_time(&mut line, at_us);
        line.push_str(label);
        self.hasher.update(line.as_bytes());
        let canonical = text.strip_prefix(ANSWER_MARKER).and_then(|json| {
            crate::json_digest::canonical_xxh3(ANSWER_MARKER.as_bytes(), json.as_bytes())
        });
        match canonical {
            // The answer's canonical hash stands for its text (fixed width, so no two events'
            // bytes run together).
            Some(hash) => self.hasher.update(&hash.to_le_bytes()),
            None => self.hasher.update(text.as_bytes()),
        }
        self.hasher.update(b"\n");
        self.events += 1;
        if let Some(full) = &mut self.full {
            full.push(format!("{line}{text}"));
        }
        let mut cut = text.len().min(TAIL_TEXT_BYTES_MAX);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        line.push_str(&text[..cut]);
        if cut < text.len() {
            let _ = write!(line, "... ({} bytes)", text.len());
        }
        self.tail.push_back(line);
    }

    /// An empty line for the next event: the tail's oldest, when the tail is full, so that a
    /// long run formats its events into the same few buffers instead of allocating one each.
    fn spare_line(&mut self) -> String {
        if self.tail.len() < TAIL_EVENTS_MAX {
            return String::with_capacity(64);
        }
        let mut line = self.tail.pop_front().unwrap_or_default();
        line.clear();
        line
    }

    pub fn hash(&self) -> u64 {
        self.hasher.digest()
    }

    pub fn hash_hex(&self) -> String {
        format!("{:016x}", self.hash())
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn tail(&self) -> Vec<String> {
        self.tail.iter().cloned().collect()
    }

    pub fn full(&self) -> Option<&[String]> {
        self.full.as_deref()
    }
}

/// What `write!(line, "{at_us:>9}us ")` writes (an event's simulated time, right-aligned in
/// nine columns), without the formatting machinery: every event of every seed begins with it,
/// and its padding was a fifth of formatting a trace line.
fn push_time(line: &mut String, at_us: u64) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(at_us);
    for _ in digits.len()..TIME_COLUMNS {
        line.push(' ');
    }
    line.push_str(digits);
    line.push_str("us ");
}

/// What opens a protocol answer line in the transcript (`>` a request, histsim's own text).
const ANSWER_MARKER: &str = "< ";

/// The columns an event's time is right-aligned in.
const TIME_COLUMNS: usize = 9;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_events_time_is_written_as_the_format_would() {
        for at_us in [
            0,
            7,
            99_999_999,
            100_000_000,
            123_456_789,
            1_234_567_890,
            u64::MAX,
        ] {
            let mut line = String::from("x");
            push_time(&mut line, at_us);
            assert_eq!(line, format!("x{at_us:>9}us "));
        }
    }

    #[test]
    fn equal_events_give_equal_hashes_and_order_matters() {
        let mut a = Trace::new(false);
        let mut b = Trace::new(true);
        let mut c = Trace::new(false);
        a.record(1, format_args!("x"));
        a.record(2, format_args!("y"));
        b.record(1, format_args!("x"));
        b.record(2, format_args!("y"));
        c.record(2, format_args!("y"));
        c.record(1, format_args!("x"));
        assert_eq!(a.hash(), b.hash());
        assert_ne!(a.hash(), c.hash());
        assert_eq!(b.full().map(|f| f.len()), Some(2));
        assert_eq!(a.events(), 2);
    }

    #[test]
    fn a_long_event_hashes_like_any_other_and_is_cut_only_in_the_tail() {
        let long = "x".repeat(1000);
        let (mut a, mut b) = (Trace::new(true), Trace::new(false));
        a.record(7, format_args!("sut < {long}"));
        b.record_text(7, "sut ", &format!("< {long}"));
        assert_eq!(a.hash(), b.hash());
        let shown = &b.tail()[0];
        assert!(
            shown.len() < 500 && shown.ends_with("(1002 bytes)"),
            "{shown}"
        );
        let mut c = Trace::new(true);
        c.record_text(7, "sut ", &format!("< {long}"));
        assert_eq!(
            c.full().map(|f| f[0].len()),
            Some(a.full().expect("kept")[0].len())
        );
    }

    #[test]
    fn the_tail_is_bounded() {
        let mut t = Trace::new(false);
        for i in 0..(TAIL_EVENTS_MAX as u64 + 10) {
            t.record(i, format_args!("e{i}"));
        }
        let tail = t.tail();
        assert_eq!(tail.len(), TAIL_EVENTS_MAX);
        assert!(tail
            .last()
            .is_some_and(|l| l.ends_with(&format!("e{}", TAIL_EVENTS_MAX + 9))));
    }
}
