//! A trace read as a timeline: one lane per host (the first word of an event), every event a
//! row in simulated time, a message an arrow to the lane its `to=` names, faults marked, and
//! repeated events (polling) collapsed into one row with a count.

/// How many recent rows a repeated event may fold into: polls of a few replicas interleave.
const FOLD_WINDOW: usize = 6;
/// Rows a timeline keeps folding only events of the same text; past it, events alike but for
/// their numbers fold too, so a long seed's page stays small.
const ROWS_EXACT_MAX: usize = 2500;

/// What kind of event a row is, for its colour and mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Plain,
    /// A crash, restart, disconnect, partition, pause or failure injected.
    Fault,
    /// A delivery dropped.
    Drop,
    /// A delivery duplicated (a later copy).
    Duplicate,
    /// A delivery held back (delayed).
    Held,
}

impl Kind {
    pub fn class(self) -> &'static str {
        match self {
            Kind::Plain => "",
            Kind::Fault => "fault",
            Kind::Drop => "drop",
            Kind::Duplicate => "dup",
            Kind::Held => "held",
        }
    }
}

/// One row: an event, or several alike folded together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub at_us: u64,
    pub last_us: u64,
    pub lane: usize,
    /// A message: the lanes it went from and to.
    pub arrow: Option<(usize, usize)>,
    pub text: String,
    pub kind: Kind,
    /// How many events this row stands for.
    pub count: u32,
    /// A fault's band: the lanes of the hosts its event names (empty: it names none, and the
    /// band spans the whole row).
    pub fault_lanes: Vec<usize>,
    /// The index of its first event in the trace.
    pub first_event: u64,
    shape: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    pub lanes: Vec<String>,
    pub rows: Vec<Row>,
    pub events: usize,
}

impl Timeline {
    /// The timeline of trace lines (`{at_us}us {host} {what}`, as `Trace` writes them).
    pub fn of_trace(lines: &[String]) -> Timeline {
        let exact = Self::folded(lines, &|rest| rest.to_string());
        if exact.rows.len() <= ROWS_EXACT_MAX {
            return exact;
        }
        Self::folded(lines, &shape_of)
    }

    /// The timeline where events of one `key` within [`FOLD_WINDOW`] rows fold together.
    fn folded(lines: &[String], key: &dyn Fn(&str) -> String) -> Timeline {
        let mut t = Timeline::default();
        for line in lines {
            let Some((at_us, rest)) = split_time(line) else {
                continue;
            };
            t.push(at_us, rest, key(rest));
        }
        t
    }

    /// The index of lane `name`, added when new.
    pub fn lane(&mut self, name: &str) -> usize {
        match self.lanes.iter().position(|l| l == name) {
            Some(i) => i,
            None => {
                self.lanes.push(name.to_string());
                self.lanes.len() - 1
            }
        }
    }

    /// The lanes of the hosts `text` names (`partition replica-0 replica-2`, `to=worker-1`),
    /// in lane order.
    fn named_lanes(&mut self, text: &str) -> Vec<usize> {
        let mut lanes: Vec<usize> = text
            .split_whitespace()
            .map(|w| {
                w.trim_start_matches("to=")
                    .trim_matches([',', ';', ':', '(', ')'])
            })
            .filter(|w| is_host(w))
            .map(|w| self.lane(w))
            .collect();
        lanes.sort_unstable();
        lanes.dedup();
        lanes
    }

    fn push(&mut self, at_us: u64, rest: &str, shape: String) {
        let first_event = self.events as u64;
        self.events += 1;
        let (host, what) = host_and_text(rest);
        let lane = self.lane(&host);
        let arrow = match target(what) {
            Some(name) => Some((lane, self.lane(name))),
            // A protocol line: a request to the system under test, or its answer.
            None if host.starts_with("sut")
                && (what.starts_with("> ") || what.starts_with("< ")) =>
            {
                let caller = self.lane(sut_caller(&host));
                Some(if what.starts_with('>') {
                    (caller, lane)
                } else {
                    (lane, caller)
                })
            }
            // A copy of a delivery (`copy=0`) came over the bus.
            None if what.split_whitespace().any(|w| w.starts_with("copy=")) => {
                Some((self.lane("bus"), lane))
            }
            None => None,
        };
        let kind = kind_of(what);
        if kind != Kind::Fault {
            let start = self.rows.len().saturating_sub(FOLD_WINDOW);
            if let Some(row) = self.rows[start..].iter_mut().find(|r| r.shape == shape) {
                row.count += 1;
                row.last_us = at_us;
                return;
            }
        }
        let fault_lanes = if kind == Kind::Fault {
            self.named_lanes(rest)
        } else {
            Vec::new()
        };
        self.rows.push(Row {
            fault_lanes,
            at_us,
            last_us: at_us,
            lane,
            arrow,
            text: what.to_string(),
            kind,
            count: 1,
            first_event,
            shape,
        });
    }
}

/// `(at_us, rest)` of a trace line.
fn split_time(line: &str) -> Option<(u64, &str)> {
    let (time, rest) = line.trim_start().split_once("us ")?;
    Some((time.parse().ok()?, rest))
}

/// The lane of an event and its text: the host its first word names (`replica-1 persist ...`),
/// or, for an event that opens with what was done (`write ...`, `views t1 ...`), the part of
/// the world that does it.
fn host_and_text(rest: &str) -> (String, &str) {
    let (first, what) = rest.split_once(' ').unwrap_or((rest, ""));
    let first = first.trim_end_matches(':');
    if is_host(first) {
        return (first.to_string(), what);
    }
    // A fault happens on the host it names (`crash worker-1 kills 2 runs`).
    if is_fault_word(first) {
        if let Some(host) = what.split_whitespace().find(|w| is_host(w)) {
            return (host.to_string(), rest);
        }
    }
    let lane = match first {
        "write" => "store",
        "stop" | "start" => "workers",
        // The spool world: the history made ready, then each request's rows read and its
        // spool built, sealed and sent.
        "history" => "history",
        "request" => "spool",
        _ if what.starts_with("summarized") => "summarizer",
        _ => "client",
    };
    (lane.to_string(), rest)
}

/// The lane that speaks to a system under test: the host its name holds (`sut[replica-1]`),
/// else the store side (`sut[sqlite]`, `sut` of the display world's replicas).
fn sut_caller(sut: &str) -> &str {
    let inner = sut.strip_prefix("sut[").and_then(|s| s.strip_suffix(']'));
    match inner {
        Some(host) if is_host(host) => host,
        Some(_) => "store",
        None => "replicas",
    }
}

/// Whether `word` names a host of some world: `agents`, `bus`, `client`, `replica-2`,
/// `worker-0`, `s1` (a journal session), `sut[sqlite]` (a system under test), ...
fn is_host(word: &str) -> bool {
    if word.starts_with("sut[") && word.ends_with(']') {
        return true;
    }
    const HOSTS: &[&str] = &[
        "agents",
        "bus",
        "client",
        "sut",
        "store",
        "responder",
        "spool",
    ];
    const NUMBERED: &[&str] = &["replica-", "worker-", "session-", "s"];
    HOSTS.contains(&word)
        || NUMBERED.iter().any(|p| {
            word.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// The host a message names as its receiver (`to=replica-1`, `to worker-0`).
fn target(what: &str) -> Option<&str> {
    let words: Vec<&str> = what.split_whitespace().collect();
    let named = words.iter().find_map(|w| w.strip_prefix("to="));
    let after_to = words
        .windows(2)
        .find(|w| w[0] == "to" && is_host(w[1]))
        .map(|w| w[1]);
    named
        .or(after_to)
        .map(|t| t.trim_end_matches([',', ';', ')']))
        .filter(|t| !t.is_empty())
}

/// What kind of event `what` (the words after the host) is, by its words.
fn kind_of(what: &str) -> Kind {
    let verb = what.split_whitespace().next().unwrap_or("");
    let has = |word: &str| what.split_whitespace().any(|w| w == word);
    if matches!(verb, "drop" | "dropped" | "lost") {
        Kind::Drop
    } else if matches!(verb, "duplicate" | "dup" | "redeliver")
        || has("duplicate")
        || later_copy(what)
    {
        Kind::Duplicate
    } else if matches!(verb, "delay" | "hold" | "held") {
        Kind::Held
    } else if is_fault_word(verb) {
        Kind::Fault
    } else {
        Kind::Plain
    }
}

/// Whether `what` names a later copy of a delivery (`copy=1`): a duplicate.
fn later_copy(what: &str) -> bool {
    what.split_whitespace()
        .filter_map(|w| w.strip_prefix("copy="))
        .any(|n| n.parse::<u32>().is_ok_and(|n| n > 0))
}

fn is_fault_word(word: &str) -> bool {
    matches!(
        word,
        "crash"
            | "crashed"
            | "bounce"
            | "restart"
            | "restarted"
            | "cut"
            | "disconnect"
            | "partition"
            | "repair"
            | "pause"
            | "fault"
            | "fail"
            | "failed"
            | "kill"
            | "killed"
            | "store-crash"
    )
}

/// An event with its numbers blanked: events of one shape are repeats of one another.
fn shape_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(80));
    let mut in_number = false;
    for c in text.chars().take(80) {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hosts_become_lanes_and_to_names_the_receiver() {
        let t = Timeline::of_trace(&lines(&[
            "      10us agents emit step=0",
            "      20us bus cut step=0 to=replica-1",
            "      30us replica-1 persist step=0 copy=0 ok",
        ]));
        assert_eq!(t.lanes, ["agents", "bus", "replica-1"]);
        assert_eq!(t.rows[2].arrow, Some((1, 2)), "a copy comes over the bus");
        assert_eq!(t.rows[1].arrow, Some((1, 2)));
        assert_eq!(t.rows[1].kind, Kind::Fault);
        assert_eq!(t.rows[2].kind, Kind::Plain);
    }

    #[test]
    fn an_event_opening_with_its_verb_goes_to_the_lane_that_does_it() {
        let t = Timeline::of_trace(&lines(&[
            "    2000us worker-1 start run-0",
            "    2000us write 34973 run-0 n=23 seqs=1..23",
            "    3000us dispatch run-0 to worker-1 ok",
            "    4000us crash worker-1 kills 2 runs",
            "    5000us sut[sqlite] > {\"id\":3}",
            "    5000us sut[sqlite] < {\"id\":3,\"ok\":{}}",
        ]));
        assert_eq!(t.lanes, ["worker-1", "store", "client", "sut[sqlite]"]);
        assert_eq!((t.rows[3].lane, t.rows[3].kind), (0, Kind::Fault));
        // The store side calls the system under test, which answers it.
        assert_eq!(
            (t.rows[4].arrow, t.rows[5].arrow),
            (Some((1, 3)), Some((3, 1)))
        );
        assert_eq!(t.rows[1].text, "write 34973 run-0 n=23 seqs=1..23");
        assert_eq!(t.rows[2].arrow, Some((2, 0)));
        let spool = Timeline::of_trace(&lines(&[
            "       0us history rows=162 source=Journal compress=None",
            "       0us request 0 row 0 content=211 row=71f873c3e8276e55",
            "       1us request 0 Openai rows=1 built=true sealed=42404",
        ]));
        assert_eq!(spool.lanes, ["history", "spool"]);
        assert_eq!(spool.rows[2].lane, 1);
    }

    #[test]
    fn a_fault_band_spans_the_lanes_of_the_hosts_it_names() {
        let t = Timeline::of_trace(&lines(&[
            "      10us agents emit step=0",
            "      20us replica-0 persist step=0 copy=0 ok",
            "      30us partition replica-0, replica-2 (healed at 90us)",
            "      40us bus cut step=0 to=replica-1",
            "      50us fault injected",
        ]));
        assert_eq!(
            t.lanes,
            [
                "agents",
                "replica-0",
                "bus",
                "replica-2",
                "replica-1",
                "client"
            ]
        );
        assert_eq!(
            t.rows[2].fault_lanes,
            [1, 3],
            "the partition's two replicas"
        );
        assert_eq!(
            t.rows[3].fault_lanes,
            [2, 4],
            "the bus and the replica it cut"
        );
        assert!(
            t.rows[4].fault_lanes.is_empty(),
            "no host named: the whole row"
        );
        assert!(t.rows[0].fault_lanes.is_empty() && t.rows[1].fault_lanes.is_empty());
    }

    #[test]
    fn repeated_polls_fold_into_one_row_with_a_count() {
        let mut l = Vec::new();
        for i in 0..100 {
            l.push(format!("{:>9}us client poll replica-{}", i * 10, i % 3));
        }
        l.push("     2000us s0 crash op=3".to_string());
        let t = Timeline::of_trace(&l);
        assert_eq!(t.events, 101);
        assert_eq!(t.rows.len(), 4);
        assert_eq!(t.rows[0].count, 34);
        assert_eq!(t.rows[0].last_us, 990);
        assert_eq!(t.rows[3].kind, Kind::Fault);
    }

    #[test]
    fn past_the_row_budget_events_alike_but_for_numbers_fold() {
        let l: Vec<String> = (0..3 * ROWS_EXACT_MAX as u64)
            .map(|i| format!("{:>9}us client poll n={i}", i * 10))
            .collect();
        let t = Timeline::of_trace(&l);
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.rows[0].count as usize, 3 * ROWS_EXACT_MAX);
    }

    #[test]
    fn a_later_copy_is_a_duplicate() {
        let t = Timeline::of_trace(&lines(&[
            "      30us replica-1 persist step=0 copy=0 ok",
            "      31us replica-1 persist step=0 copy=1 ok",
        ]));
        assert_eq!(t.rows[0].kind, Kind::Plain);
        assert_eq!(t.rows[1].kind, Kind::Duplicate);
    }
}
