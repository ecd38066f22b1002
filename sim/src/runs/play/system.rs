//! The run-event store under test behind `history::runs::RunEventStore`: histsim's own
//! backends in this process, or a store in a child process over the SUT protocol
//! (`docs/sut-protocol.md`). The runs world keeps its workers, journals, views, feedback and
//! client on histsim's side; only the store's calls cross the boundary.
//!
//! Over the protocol, every request and answer goes into the world's trace (so the trace hash
//! covers the system's answers), a refusal comes back as the store's own error, and a breach is
//! kept for the driving loop, which ends the world broken.

use super::host::StoreHost;
use crate::sut::process::{ReadAnswer, Sent};
use crate::sut::protocol::{
    Count, Done, Durability, Events, Kept, LastSeqs, MaxSeq, Request, Seqs, StoreAnswer,
};
use crate::sut::{OpenedSut, SutError, SutOptions};
use crate::trace::Trace;
use crate::workload::StoreKind;
use history::runs::{NewRunEvent, RunEvent, RunEventStore, RunStoreError};
use history::Planted;
use serde::de::DeserializeOwned;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

/// The ops every seed of the runs workload needs of a system under test: the journals' writes,
/// the views' reads, the whole-store comparisons.
pub const RUNS_OPS: [&str; 4] = ["put_batch", "list_messages", "count_messages", "dump"];
/// What the client's `events` reads need; without it they are left out (and counted).
pub const LIST_EVENTS: &str = "list_events";
/// What the legacy writer of planted R5 needs (it numbers its batches itself).
pub const LEGACY_WRITER_OPS: [&str; 2] = ["max_seq", "insert_numbered"];

/// The first breach of any store of a world: the driving loop ends the world with it.
pub type BreachSlot = Rc<RefCell<Option<SutError>>>;

/// A run-event store in a child process.
pub struct OverProtocolStore {
    sut: RefCell<OpenedSut>,
    /// Which store of the pair this is, in trace lines.
    slot: &'static str,
    trace: Rc<RefCell<Trace>>,
    breach: BreachSlot,
    /// Simulated time of the last call: calls after the simulation ended (the final dump) are
    /// traced at it.
    last_us: Cell<u64>,
    /// The twin this store's requests are also sent to, at once ([`ask_both`]).
    mirror: RefCell<Option<Rc<OverProtocolStore>>>,
    /// Requests the twin sent here ahead of this store's own calls, oldest first: the last
    /// one's answer maybe not yet read, the others' read and not yet decoded.
    ahead: RefCell<VecDeque<(Request, Pending)>>,
}

/// A request written to a child, its answer not yet taken.
enum Pending {
    /// Its answer not yet read (or the request could not be written).
    InFlight(Result<Sent, SutError>),
    /// Its answer line read, not yet decoded.
    Read(Result<ReadAnswer, SutError>),
}

impl OverProtocolStore {
    /// Starts the system and opens it as the `store` backend of the pair; `crashes`: whether
    /// the world may crash its host (`false` lets it keep its data in memory).
    pub fn start(
        options: SutOptions,
        (store, crashes): (StoreKind, bool),
        planted: Planted,
        trace: Rc<RefCell<Trace>>,
        breach: BreachSlot,
    ) -> Result<OverProtocolStore, SutError> {
        let mut needs = RUNS_OPS.to_vec();
        if planted.is(history::BugId::R5) {
            needs.extend(LEGACY_WRITER_OPS);
        }
        let mut sut = OpenedSut::start_with(options, store, planted, crashes, &needs)?;
        if let Some(id) = (sut.hello().differences.iter())
            .find(|id| crate::runs::store_differences::parse(id).is_none())
        {
            let why = format!(
                "hello declares the known difference {id:?}, which docs/reported-bugs.md does not define for run-event systems (known: S1 to S6)"
            );
            return Err(sut.unexpected("#1 hello", why));
        }
        let slot = store.as_str();
        let opened = OverProtocolStore {
            sut: RefCell::new(sut),
            slot,
            trace,
            breach,
            last_us: Cell::new(0),
            mirror: RefCell::new(None),
            ahead: RefCell::new(VecDeque::new()),
        };
        opened.trace_exchange();
        Ok(opened)
    }

    /// Whether the system declared `op` in `hello`.
    pub fn serves(&self, op: &str) -> bool {
        self.sut.borrow().serves(op)
    }

    /// Whether the system hosts the run journal: it declared every journal op
    /// ([`crate::sut::journal_ops`]).
    pub fn hosts_journal(&self) -> bool {
        crate::sut::journal_ops::JOURNAL_OPS
            .iter()
            .all(|op| self.serves(op))
    }

    /// Hands the system's journal one callback; the records it made of it.
    pub fn journal_call(
        &self,
        request: Request,
    ) -> Result<Vec<crate::sut::journal_ops::JournalRecord>, RunStoreError> {
        self.ask::<crate::sut::journal_ops::JournalRecords>(request)
    }

    /// Whether the system declared the known difference `id` in `hello`.
    pub fn declares(&self, id: &str) -> bool {
        self.sut
            .borrow()
            .hello()
            .differences
            .iter()
            .any(|d| d == id)
    }

    /// What the system answered so far, op by op ([`crate::sut::tally`]).
    pub fn tally(&self) -> crate::coverage::Coverage {
        self.sut.borrow().tally().clone()
    }

    /// What the system wrote to its stderr (its last `bytes_max` bytes), labelled.
    pub fn stderr_log(&self, bytes_max: usize) -> String {
        format!(
            "==> the {} store's stderr <==\n{}",
            self.slot,
            self.sut.borrow().stderr_log(bytes_max)
        )
    }

    fn trace_exchange(&self) {
        let at_us = turmoil::sim_elapsed().map_or(self.last_us.get(), |d| d.as_micros() as u64);
        self.last_us.set(at_us);
        let lines = self.sut.borrow_mut().take_transcript();
        let mut trace = self.trace.borrow_mut();
        let label = format!("sut[{}] ", self.slot);
        for line in lines {
            trace.record_text(at_us, &label, &line);
        }
    }

    /// Asks `request` and makes its answer the method's.
    fn ask<A: StoreAnswer>(&self, request: Request) -> Result<A::Output, RunStoreError> {
        let sent = self.send(&request);
        self.finish::<A>(sent, &request)?.output(&request)
    }

    /// Sends `request`, or takes it as sent when the twin sent it ahead; and sends it to the
    /// twin too when mirroring.
    fn send(&self, request: &Request) -> Pending {
        let own = self
            .take_ahead(request)
            .unwrap_or_else(|| Pending::InFlight(self.sut.borrow_mut().send(request)));
        let twin = self.mirror.borrow().clone();
        if let Some(twin) = twin {
            if !twin.send_ahead(request) {
                // The twin's calls may go apart from here: mirror no further.
                self.mirror.borrow_mut().take();
            }
        }
        own
    }

    /// The twin's request sent here ahead, when it is this store's next own `request`. When
    /// this store asks something else, the stores went apart: every request sent ahead is
    /// answered (and traced) first, so the child stays in step.
    fn take_ahead(&self, request: &Request) -> Option<Pending> {
        let front = self.ahead.borrow_mut().pop_front()?;
        if front.0 == *request {
            return Some(front.1);
        }
        self.settle(&front.0, front.1);
        self.settle_ahead();
        None
    }

    /// Sends the twin's `request` here before this store's own call. The answer to the one
    /// sent before it is read first (kept undecoded): one request at a time in the pipe, so
    /// neither side can block on a full pipe. The first request of an ask is sent whatever
    /// it is; later ones only when they only read (a write the store's own calls may not
    /// repeat would change what it holds). `false`: not sent.
    fn send_ahead(&self, request: &Request) -> bool {
        let mut ahead = self.ahead.borrow_mut();
        if !ahead.is_empty() && !request.reads_only() {
            return false;
        }
        if let Some((asked, Pending::InFlight(sent))) = ahead.pop_back() {
            let read = sent.and_then(|sent| self.sut.borrow_mut().read_ahead(sent));
            ahead.push_back((asked, Pending::Read(read)));
        }
        let sent = self.sut.borrow_mut().send(request);
        ahead.push_back((request.clone(), Pending::InFlight(sent)));
        true
    }

    /// Reads (and traces) the answers to requests sent ahead that this store never asked, so
    /// the child stays in step. Never the case when both stores are asked alike.
    fn settle_ahead(&self) {
        loop {
            let front = self.ahead.borrow_mut().pop_front();
            let Some((asked, pending)) = front else {
                return;
            };
            self.settle(&asked, pending);
        }
    }

    fn settle(&self, asked: &Request, pending: Pending) {
        let _ = self.finish::<serde::de::IgnoredAny>(pending, asked);
    }

    /// Takes the answer to `pending`, traces the exchange, and gives the answer as the store's.
    fn finish<T: DeserializeOwned>(
        &self,
        pending: Pending,
        request: &Request,
    ) -> Result<T, RunStoreError> {
        let answer = match pending {
            Pending::InFlight(sent) => {
                sent.and_then(|sent| self.sut.borrow_mut().receive_for::<T>(sent, request))
            }
            Pending::Read(read) => self.sut.borrow_mut().judge::<T>(read, request),
        };
        self.trace_exchange();
        match answer {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(refusal)) => Err(RunStoreError::Answered {
                kind: refusal.kind.as_str().to_string(),
                message: refusal.message,
            }),
            Err(breach) => {
                let message = format!("the system under test broke the protocol: {breach}");
                self.breach.borrow_mut().get_or_insert(breach);
                Err(RunStoreError::Answered {
                    kind: "internal".to_string(),
                    message,
                })
            }
        }
    }
}

impl StoreHost for OverProtocolStore {
    fn durability(&self) -> Durability {
        self.sut.borrow().durability()
    }

    /// Kills the child (SIGKILL), starts the command again and opens it on the same data
    /// directory; the new `hello` and `open` lines go into the trace.
    fn restart(&self, at_us: u64) -> Result<(), String> {
        let restarted = self.sut.borrow_mut().restart();
        // The driving loop crashes the host between two steps, outside turmoil's clock.
        self.last_us.set(at_us);
        self.trace_exchange();
        restarted.map_err(|breach| {
            let message = breach.to_string();
            self.breach.borrow_mut().get_or_insert(breach);
            message
        })
    }
}

/// Two answers to one store call: the `memory` store's and the `sqlite` store's.
pub type Paired<T> = (Result<T, RunStoreError>, Result<T, RunStoreError>);

/// The pair of stores over the protocol, asked each write at once: both requests are written
/// before either answer is read, so the two children work at the same time. The trace is the
/// same as one call after the other (the `memory` store's request and answer, then the
/// `sqlite` store's), as each child's requests and answers still alternate.
pub struct ProtocolPair<'a> {
    memory: &'a Rc<OverProtocolStore>,
    sqlite: &'a Rc<OverProtocolStore>,
}

/// `ask` of the `memory` store, then of the `sqlite` store (R9 compares the two answers), the
/// two asked at once when the stores are a [`ProtocolPair`]: each request of the `memory`
/// store goes to the `sqlite` store too (after the first, only those that only read), before
/// its answer is read, and the `sqlite` store's own calls then only take the answers. The
/// first request depends on no answer, so it is the same for both; later ones (pages after a
/// cursor) are the same while the two stores answer alike, and when they do not, the
/// `sqlite` store answers the requests sent ahead before its own (traced, as the child saw
/// them). The trace is the same as one store after the other: a child's lines go into the
/// trace when its store's own call takes them, and the `memory` store's all come first.
pub fn ask_both<T>(
    suts: &[Rc<OverProtocolStore>],
    memory: &dyn RunEventStore,
    sqlite: &dyn RunEventStore,
    ask: impl Fn(&dyn RunEventStore) -> T,
) -> (T, T) {
    let pair = ProtocolPair::of(suts);
    if let Some(pair) = &pair {
        *pair.memory.mirror.borrow_mut() = Some(Rc::clone(pair.sqlite));
    }
    let from_memory = ask(memory);
    if let Some(pair) = &pair {
        // Unused when the memory store was asked nothing.
        pair.memory.mirror.borrow_mut().take();
    }
    let from_sqlite = ask(sqlite);
    if let Some(pair) = &pair {
        pair.sqlite.settle_ahead();
    }
    (from_memory, from_sqlite)
}

impl<'a> ProtocolPair<'a> {
    /// The pair among `suts`, the `memory` store first, when the world talks to one.
    pub fn of(suts: &'a [Rc<OverProtocolStore>]) -> Option<ProtocolPair<'a>> {
        // The world lists its stores `memory` first.
        match suts {
            [memory, sqlite] if memory.slot != "sqlite" && sqlite.slot == "sqlite" => {
                Some(ProtocolPair { memory, sqlite })
            }
            _ => None,
        }
    }

    /// Asks both stores `request` (an encoding error answered by both alike).
    fn ask<A: StoreAnswer>(&self, request: Result<Request, RunStoreError>) -> Paired<A::Output> {
        let request = match request {
            Ok(request) => request,
            Err(e) => return (Err(e.clone()), Err(e)),
        };
        let to_memory = self.memory.send(&request);
        let to_sqlite = self.sqlite.send(&request);
        let memory = self.memory.finish::<A>(to_memory, &request);
        let sqlite = self.sqlite.finish::<A>(to_sqlite, &request);
        let output = |answer: Result<A, RunStoreError>| answer?.output(&request);
        (output(memory), output(sqlite))
    }

    pub fn put_batch(&self, events: Vec<NewRunEvent>) -> Paired<Vec<u64>> {
        self.ask::<Seqs>(Request::put_batch(events))
    }

    pub fn insert_numbered(&self, events: Vec<RunEvent>) -> Paired<()> {
        self.ask::<Done>(Request::insert_numbered(events))
    }

    pub fn max_seq(&self, thread_id: &str) -> Paired<u64> {
        self.ask::<MaxSeq>(Request::max_seq(thread_id))
    }
}

/// The store's operations, each one request of the protocol (generated from the table).
macro_rules! over_protocol {
    ({} $($(#[$doc:meta])* $kind:ident fn $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty,
        default $default:tt; wire $variant:ident { $($field:ident: $fty:ty = $enc:expr),* }
        $(every user ($all:ident))?; serve ($($dec:expr),*) answer $answer:ident; errors $errors:ident;)*) => {
        impl RunEventStore for OverProtocolStore {
            $(fn $name(&self, $($arg: $ty),*) -> Result<$ret, RunStoreError> {
                self.ask::<$answer>(Request::$name($($arg),*)?)
            })*
        }
    };
}

history::run_store_ops!(over_protocol {});

#[cfg(test)]
mod tests {
    use super::*;

    /// A store in `sh`: greets, opens, and answers every other request with `{"count": id}`.
    fn counting_store() -> SutOptions {
        let script = r#"while read -r line; do
  id=$(printf '%s' "$line" | sed 's/^{"id":\([0-9]*\).*/\1/')
  case "$line" in
    *'"op":"hello"'*) echo "{\"id\":$id,\"ok\":{\"system\":\"counting\",\"version\":\"1\",\"protocol\":1,\"ops\":[\"put_batch\",\"list_messages\",\"count_messages\",\"dump\"]}}" ;;
    *'"op":"open"'*) echo "{\"id\":$id,\"ok\":{}}" ;;
    *) echo "{\"id\":$id,\"ok\":{\"count\":$id}}" ;;
  esac
done"#;
        SutOptions {
            timeout_ms: 5_000,
            ..SutOptions::new(format!("sh -c '{}'", script.replace('\'', r"'\''")))
        }
    }

    fn pair(trace: &Rc<RefCell<Trace>>) -> Vec<Rc<OverProtocolStore>> {
        let breach = BreachSlot::default();
        [StoreKind::Memory, StoreKind::Sqlite]
            .into_iter()
            .map(|kind| {
                let store = OverProtocolStore::start(
                    counting_store(),
                    (kind, false),
                    Planted::none(),
                    trace.clone(),
                    breach.clone(),
                );
                Rc::new(store.expect("the counting store starts"))
            })
            .collect()
    }

    /// The trace's protocol lines after `hello` and `open` (ids 1 and 2), as `slot marker line`.
    fn exchanges(trace: &Rc<RefCell<Trace>>) -> Vec<String> {
        let trace = trace.borrow();
        let lines = trace.full().expect("kept");
        lines
            .iter()
            .filter_map(|l| l.split_once("us sut[").map(|(_, rest)| rest.to_string()))
            .filter(|l| !l.contains(r#"{"id":1,"#) && !l.contains(r#"{"id":2,"#))
            .map(|l| l.replace("] ", " "))
            .collect()
    }

    /// `ask` of both stores of a [`pair`] at once ([`ask_both`]), told how many times it was
    /// called before: both answers, and the protocol lines traced ([`exchanges`]).
    fn asked_of_pair<T>(ask: impl Fn(&dyn RunEventStore, u32) -> T) -> ((T, T), Vec<String>) {
        let trace = Rc::new(RefCell::new(Trace::new(true)));
        let suts = pair(&trace);
        let asked = Cell::new(0);
        let answers = ask_both(&suts, &*suts[0], &*suts[1], |st| {
            asked.set(asked.get() + 1);
            ask(st, asked.get() - 1)
        });
        (answers, exchanges(&trace))
    }

    /// The two trace lines of one `count_messages` exchange: `slot` sent request `id` for
    /// `thread` and was answered `count`.
    fn counted(slot: &str, id: u64, thread: &str, count: u64) -> Vec<String> {
        vec![
            format!(r#"{slot} > {{"id":{id},"op":"count_messages","thread_id":"{thread}"}}"#),
            format!(r#"{slot} < {{"id":{id},"ok":{{"count":{count}}}}}"#),
        ]
    }

    #[test]
    fn a_read_asked_of_both_at_once_is_traced_as_one_after_the_other() {
        let ((m, s), lines) = asked_of_pair(|st, _| st.count_messages("t"));
        assert_eq!((m, s), (Ok(3), Ok(3)));
        assert_eq!(
            lines,
            [counted("memory", 3, "t", 3), counted("sqlite", 3, "t", 3)].concat()
        );
    }

    #[test]
    fn pages_asked_of_both_at_once_are_traced_as_one_store_after_the_other() {
        let ((m, s), lines) = asked_of_pair(|st, _| {
            let a = st.count_messages("a")?;
            let b = st.count_messages("b")?;
            Ok::<_, RunStoreError>((a, b, st.count_messages("c")?))
        });
        assert_eq!((m, s), (Ok((3, 4, 5)), Ok((3, 4, 5))));
        let mut expected = Vec::new();
        for slot in ["memory", "sqlite"] {
            for (id, thread) in [(3, "a"), (4, "b"), (5, "c")] {
                expected.extend(counted(slot, id, thread, id));
            }
        }
        assert_eq!(lines, expected);
    }

    #[test]
    fn stores_that_go_apart_answer_what_was_sent_ahead_then_their_own() {
        let ((m, s), lines) = asked_of_pair(|st, before| {
            let first = st.count_messages("a")?;
            let second = st.count_messages(if before == 0 { "b" } else { "c" })?;
            Ok::<_, RunStoreError>((first, second))
        });
        // The sqlite store answered the memory store's second request (id 4) before its own.
        assert_eq!((m, s), (Ok((3, 4)), Ok((3, 5))));
        assert_eq!(
            lines[4..],
            [
                counted("sqlite", 3, "a", 3),
                counted("sqlite", 4, "b", 4),
                counted("sqlite", 5, "c", 5)
            ]
            .concat()
        );
    }

    #[test]
    fn a_first_request_the_second_store_does_not_repeat_is_answered_and_traced_first() {
        let ((m, s), lines) =
            asked_of_pair(|st, before| st.count_messages(if before == 0 { "a" } else { "b" }));
        // The sqlite store answered the memory store's request (id 3) before its own (id 4).
        assert_eq!((m, s), (Ok(3), Ok(4)));
        assert_eq!(
            lines,
            [
                counted("memory", 3, "a", 3),
                counted("sqlite", 3, "a", 3),
                counted("sqlite", 4, "b", 4)
            ]
            .concat()
        );
    }
}
