//! R21 and R22: the feedback reads beyond a rating against the model of the ratings that stand.
//!
//! The model is the feedback calls the client made, replayed into [`RatingTruth`]: each rating
//! stored for the run the client submitted it for (whether that was the right run is R6's), each
//! withdrawal applied when the rating stood and was in the caller's scope. The ids the store
//! handed out are only handles: a row read back is named by the call that created it, and its
//! run, user and value come from the model. R22: no read (by id, by run, grouped, by run ids,
//! attached to a message) returns withdrawn feedback. R21: every read answers what the ratings
//! that stand say (aggregates count every user's and the anonymous ones).

use super::context::{of_rendered, short, Context};
use super::truth::Snapshots;
use super::wording::{listed, or_none, Call};
use crate::outcome::{Findings, Pointer};
use crate::runs::feedback_record::{FeedbackEntry, FeedbackRead};
use history::runs::{Feedback, MessageWithFeedback};
use history::BugId;
use model::runs::{attachment_choices, grouped_choices, Rater, RatingRow, RatingTruth};
use std::collections::{BTreeMap, BTreeSet};

/// A feedback call as the request a finding points at: its words (`op 12: get(3) as user-1`),
/// the store op it made and the call's place in the world's order and time.
struct Request {
    what: String,
    call: String,
    at: Call,
}

impl Request {
    /// One of the reads made together at `read`'s instant (one trace line, `feedback reads`).
    fn of_read(read: &FeedbackRead, call: &str, what: String) -> Self {
        let at = Call {
            op: read.op,
            at_us: read.at_us,
            mark: "feedback reads ".to_string(),
        };
        Request {
            what,
            call: call.to_string(),
            at,
        }
    }

    /// A rating or a withdrawal (`op`, at `at_us`): the store op it made, by its trace line
    /// (`rating refused`, `withdraw ...`).
    fn of_call(op: u64, at_us: u64, call: &str, mark: &str) -> Self {
        let at = Call {
            op,
            at_us,
            mark: mark.to_string(),
        };
        Request {
            what: String::new(),
            call: call.to_string(),
            at,
        }
    }

    fn pointer(&self, answered: impl Into<String>, expected: impl Into<String>) -> Pointer {
        self.at
            .answered(&self.call, "the feedback store", answered, expected)
    }
}

/// A call's answer the model contradicts: the call, the finding's words, both answers.
struct Mismatch {
    at: Request,
    words: String,
    answered: String,
    expected: String,
}

/// A withdrawal's answer in words: whether it deleted a rating.
fn deletion_words(deleted: bool) -> String {
    if deleted {
        "a rating deleted".to_string()
    } else {
        "nothing deleted".to_string()
    }
}

/// What a feedback id stands for: the rating the call that created it gave.
#[derive(Clone, Debug)]
struct Handle {
    thread_id: String,
    run_id: String,
    rater: Rater,
}

/// The model and the handles, replayed call by call.
#[derive(Default)]
struct Replay {
    truth: RatingTruth,
    handles: BTreeMap<u64, Handle>,
    /// Ids whose rating was withdrawn: a later rating of the same run by the same user is a
    /// new row under a new id, never this one again.
    withdrawn: BTreeSet<u64>,
}

impl Replay {
    /// Applies one call; what its answer contradicts in the model (an R21 finding), if anything:
    /// the call as the request it was, its words, then its answer and the model's.
    fn apply(&mut self, entry: &FeedbackEntry) -> Option<Mismatch> {
        match entry {
            FeedbackEntry::Rated {
                op,
                at_us,
                thread_id,
                run_id,
                user,
                value,
                answer,
            } => match answer {
                Ok(id) => {
                    self.rated(*id, thread_id, run_id, user.as_deref(), *value);
                    None
                }
                Err(e) => Some(Mismatch {
                    at: Request::of_call(
                        *op,
                        *at_us,
                        if user.is_some() { "submit" } else { "create" },
                        "rating refused",
                    ),
                    words: format!("a valid rating of {run_id} was refused: {e}"),
                    answered: format!("error {e}"),
                    expected: "a feedback id".to_string(),
                }),
            },
            FeedbackEntry::Deleted {
                op,
                at_us,
                feedback_id,
                user,
                deleted,
            } => {
                let stood = self.withdraw_by_id(*feedback_id, user.as_deref());
                (stood != *deleted).then(|| Mismatch {
                    at: Request::of_call(*op, *at_us, "delete", "withdraw "),
                    words: format!("delete of feedback {feedback_id} {} answered deleted={deleted}, the model says {stood}", as_scope(user.as_deref())),
                    answered: deletion_words(*deleted),
                    expected: deletion_words(stood),
                })
            }
            FeedbackEntry::DeletedByRun {
                op,
                at_us,
                thread_id,
                run_id,
                user,
                deleted,
            } => {
                let stood = self.withdrawn_by_run(thread_id, run_id, user);
                (stood != *deleted).then(|| Mismatch {
                    at: Request::of_call(*op, *at_us, "delete_by_run", "withdraw "),
                    words: format!("delete_by_run of {run_id} by {user} answered deleted={deleted}, the model says {stood}"),
                    answered: deletion_words(*deleted),
                    expected: deletion_words(stood),
                })
            }
            FeedbackEntry::Read(_) => None,
            FeedbackEntry::ThreadDeleted { thread_id } => {
                self.truth.delete_thread(thread_id);
                None
            }
        }
    }

    /// The rating under `id` withdrawn in `user`'s scope; whether it stood there.
    fn withdraw_by_id(&mut self, id: u64, user: Option<&str>) -> bool {
        let stood = self.value(id).is_some()
            && (self.handles.get(&id)).is_some_and(|h| in_scope(&h.rater, user));
        if stood {
            let h = &self.handles[&id];
            self.truth
                .withdraw_rating(&h.thread_id, &h.run_id, &h.rater);
            self.withdrawn.insert(id);
        }
        stood
    }

    /// A rating stored under `id`.
    fn rated(&mut self, id: u64, thread_id: &str, run_id: &str, user: Option<&str>, value: i8) {
        let rater = match user {
            Some(u) => {
                self.truth.rate(thread_id, run_id, u, value);
                Rater::User(u.to_string())
            }
            None => Rater::Anonymous(self.truth.rate_anonymously(thread_id, run_id, value)),
        };
        let handle = Handle {
            thread_id: thread_id.to_string(),
            run_id: run_id.to_string(),
            rater,
        };
        self.handles.insert(id, handle);
    }

    /// A user's rating of a run withdrawn by run; whether it stood.
    fn withdrawn_by_run(&mut self, thread_id: &str, run_id: &str, user: &str) -> bool {
        let stood = self.truth.withdraw(thread_id, run_id, user);
        let rater = Rater::User(user.to_string());
        let ids: Vec<u64> = self
            .handles
            .iter()
            .filter(|(_, h)| h.thread_id == thread_id && h.run_id == run_id && h.rater == rater)
            .map(|(id, _)| *id)
            .collect();
        self.withdrawn.extend(ids);
        stood
    }

    /// The value of the rating under `id`, while it stands.
    fn value(&self, id: u64) -> Option<i8> {
        if self.withdrawn.contains(&id) {
            return None;
        }
        let h = self.handles.get(&id)?;
        self.truth.value_of(&h.thread_id, &h.run_id, &h.rater)
    }

    /// The rating a row read back stands for, checked against the model: R22 when it was
    /// withdrawn, R21 when it is unknown or its run, user or value differ. `Some` when it stands.
    fn standing(&self, at: &Request, row: &Feedback, f: &mut Findings) -> Option<RatingRow> {
        let what = &at.what;
        let Some(h) = self.handles.get(&row.feedback_id) else {
            f.add_at(
                BugId::R21,
                at.pointer(
                    format!("feedback {}", row.feedback_id),
                    "only feedback a call created",
                ),
                format!(
                    "{what} returned feedback {}, which no call created",
                    row.feedback_id
                ),
            );
            return None;
        };
        let Some(value) = self.value(row.feedback_id) else {
            f.add_at(
                BugId::R22,
                at.pointer(
                    format!("feedback {} ({} on {})", row.feedback_id, h.rater, h.run_id),
                    "no withdrawn feedback",
                ),
                format!(
                    "{what} returned feedback {} ({} on {}), which was withdrawn",
                    row.feedback_id, h.rater, h.run_id
                ),
            );
            return None;
        };
        let want = RatingRow {
            run_id: h.run_id.clone(),
            rater: h.rater.clone(),
            value,
        };
        let got_user = row.user_id.as_deref();
        if row.run_id != want.run_id || got_user != want.user_id() || row.rating.value() != value {
            let got = format!(
                "{:+} by {} on {}",
                row.rating.value(),
                or_none(got_user),
                row.run_id
            );
            f.add_at(
                BugId::R21,
                at.pointer(got, want.to_string()),
                format!(
                    "{what} returned feedback {} as {:+} by {} on {}, the model says {want}",
                    row.feedback_id,
                    row.rating.value(),
                    or_none(got_user),
                    row.run_id
                ),
            );
            return None;
        }
        Some(want)
    }
}

fn in_scope(rater: &Rater, scope: Option<&str>) -> bool {
    scope.is_none_or(|u| *rater == Rater::User(u.to_string()))
}

/// When the feedback reads were made, as a message names them: their place in the world's
/// order of operations and their simulated time (`op 12 at 3000us`), as the trace stamps
/// their `feedback reads` line.
fn when_read(read: &FeedbackRead) -> String {
    format!("op {} at {}us", read.op, read.at_us)
}

/// A read's scope in words: `as user-1`, or `in every user's scope`.
fn as_scope(scope: Option<&str>) -> String {
    scope.map_or_else(|| "in every user's scope".into(), |u| format!("as {u}"))
}

/// The model of the feedback store after every call the client made.
pub fn replayed_ratings(cx: &Context<'_>) -> RatingTruth {
    let mut replay = Replay::default();
    for entry in cx.record.log.feedback_log() {
        replay.apply(entry);
    }
    replay.truth
}

/// R21, R22: every feedback read and every withdrawal's answer against the model.
pub fn feedback_reads_match_the_model(cx: &Context<'_>, f: &mut Findings) {
    let mut replay = Replay::default();
    let mut snapshots = Snapshots::new(cx.scenario, cx.record.log.truth());
    for entry in cx.record.log.feedback_log() {
        if let Some(m) = replay.apply(entry) {
            f.add_at(BugId::R21, m.at.pointer(m.answered, m.expected), m.words);
        }
        if let FeedbackEntry::Read(read) = entry {
            let scope = read.user.as_deref();
            check_by_id(&replay, read, f);
            check_by_run(&replay, read, f);
            check_grouped(
                &replay,
                "list_by_thread_grouped",
                &read.grouped,
                read,
                None,
                f,
            );
            let wanted = Some(&read.run_ids);
            check_grouped(
                &replay,
                "list_by_run_ids",
                &read.by_run_ids,
                read,
                wanted,
                f,
            );
            if let Ok(messages) = &read.messages {
                let emitters = snapshots.before(read.op).emitters(&read.thread_id);
                let named: Vec<_> = messages
                    .iter()
                    .map(|m| {
                        let mut e = of_rendered(&m.view.message);
                        if let Some(run) = emitters.get(e.text.as_str()) {
                            e.run_id = run.to_string();
                        }
                        e
                    })
                    .collect();
                let choices = attachment_choices(&replay.truth, &read.thread_id, &named, scope);
                check_attached(&replay, read, messages, &choices, &named, f);
            }
        }
    }
}

fn check_by_id(replay: &Replay, read: &FeedbackRead, f: &mut Findings) {
    let scope = read.user.as_deref();
    for (id, got) in &read.by_id {
        let what = format!("{}: get({id}) {}", when_read(read), as_scope(scope));
        let at = Request::of_read(read, "get", what);
        let Some(h) = replay.handles.get(id) else {
            continue;
        };
        let visible = in_scope(&h.rater, scope);
        match got {
            Some(_) if !visible => f.add_at(
                BugId::R21,
                at.pointer(
                    format!("{}'s feedback", h.rater),
                    "nothing, outside the scope",
                ),
                format!(
                    "{} returned {}'s feedback, outside the scope",
                    at.what, h.rater
                ),
            ),
            Some(row) => {
                replay.standing(&at, row, f);
            }
            None if visible && replay.value(*id).is_some() => f.add_at(
                BugId::R21,
                at.pointer("nothing", format!("feedback {id}, which stands")),
                format!("{} found nothing; the rating stands", at.what),
            ),
            None => {}
        }
    }
}

fn check_by_run(replay: &Replay, read: &FeedbackRead, f: &mut Findings) {
    let scope = read.user.as_deref();
    let rows = replay.truth.rows_in_scope(&read.thread_id, scope);
    for (run, got) in &read.by_run {
        let what = format!(
            "{}: list_by_run({run}) {}",
            when_read(read),
            as_scope(scope)
        );
        let at = Request::of_read(read, "list_by_run", what);
        let mut seen: Vec<RatingRow> = got
            .iter()
            .filter_map(|row| replay.standing(&at, row, f))
            .collect();
        seen.sort();
        let want: Vec<RatingRow> = rows.iter().filter(|r| &r.run_id == run).cloned().collect();
        if seen.len() == got.len() && seen != want {
            f.add_at(
                BugId::R21,
                at.pointer(listed(&seen), listed(&want)),
                format!(
                    "{} returned {}, the model says {}",
                    at.what,
                    listed(&seen),
                    listed(&want)
                ),
            );
        }
    }
    for a in &read.aggregates {
        let want = replay.truth.counts(&read.thread_id, &a.run_id);
        if (a.total, a.positive, a.negative) != (want.total, want.positive, want.negative) {
            let what = format!("{}: aggregate_by_run({})", when_read(read), a.run_id);
            let at = Request::of_read(read, "aggregate_by_run", what);
            let counts = |t: u64, p, n| {
                let ratings = if t == 1 { "rating" } else { "ratings" };
                format!("{t} {ratings}: {p} up, {n} down")
            };
            f.add_at(
                BugId::R21,
                at.pointer(
                    counts(a.total, a.positive, a.negative),
                    counts(want.total, want.positive, want.negative),
                ),
                format!(
                    "{} counts {} (+{} -{}), the ratings that stand are {} (+{} -{}), anonymous included",
                    at.what, a.total, a.positive, a.negative, want.total, want.positive, want.negative
                ),
            );
        }
    }
}

fn check_grouped(
    replay: &Replay,
    name: &str,
    got: &BTreeMap<String, Feedback>,
    read: &FeedbackRead,
    runs: Option<&BTreeSet<String>>,
    f: &mut Findings,
) {
    let scope = read.user.as_deref();
    let what = format!("{}: {name} {}", when_read(read), as_scope(scope));
    let at = Request::of_read(read, name, what);
    let choices = grouped_choices(&replay.truth, &read.thread_id, scope, runs);
    for (run, row) in got {
        let Some(standing) = replay.standing(&at, row, f) else {
            continue;
        };
        if &standing.run_id != run || !choices.get(run).is_some_and(|c| c.contains(&standing)) {
            let allowed = listed(choices.get(run).into_iter().flatten());
            f.add_at(
                BugId::R21,
                at.pointer(format!("{standing} under {run}"), allowed.clone()),
                format!(
                    "{} lists {standing} under {run}, the model allows {allowed}",
                    at.what
                ),
            );
        }
    }
    let got_runs: BTreeSet<&String> = got.keys().collect();
    let want_runs: BTreeSet<&String> = choices.keys().collect();
    if got_runs != want_runs {
        f.add_at(
            BugId::R21,
            at.pointer(
                format!("runs {}", listed(&got_runs)),
                format!("runs {}", listed(&want_runs)),
            ),
            format!(
                "{} lists runs {}, the ratings that stand are on {}",
                at.what,
                listed(&got_runs),
                listed(&want_runs)
            ),
        );
    }
}

fn check_attached(
    replay: &Replay,
    read: &FeedbackRead,
    messages: &[MessageWithFeedback],
    choices: &[Vec<RatingRow>],
    named: &[model::runs::ExpectedMessage],
    f: &mut Findings,
) {
    for ((m, allowed), e) in messages.iter().zip(choices).zip(named) {
        let what = format!("{}: /messages on `{}`", when_read(read), short(&e.text));
        let at = Request::of_read(read, "/messages with feedback", what);
        match &m.feedback {
            None if allowed.is_empty() => {}
            None => f.add_at(
                BugId::R21,
                at.pointer("no feedback", listed(allowed)),
                format!(
                    "{} carries no feedback, the model has {}",
                    at.what,
                    listed(allowed)
                ),
            ),
            Some(a) => {
                // The attachment names no run or user: it is read as a row of the message's
                // run, by whoever gave the rating under its id (an unknown id is named as such).
                let user_id = replay
                    .handles
                    .get(&a.feedback_id)
                    .and_then(Handle::rater_user);
                let row = Feedback {
                    feedback_id: a.feedback_id,
                    thread_id: String::new(),
                    run_id: e.run_id.clone(),
                    user_id,
                    message_id: None,
                    rating: a.rating,
                    comment: a.comment.clone(),
                    created_at_ns: 0,
                };
                if let Some(standing) = replay.standing(&at, &row, f) {
                    if !allowed.contains(&standing) {
                        f.add_at(
                            BugId::R21,
                            at.pointer(standing.to_string(), listed(allowed)),
                            format!(
                                "{} carries {standing}, the model allows {}",
                                at.what,
                                listed(allowed)
                            ),
                        );
                    }
                }
            }
        }
    }
}

impl Handle {
    fn rater_user(&self) -> Option<String> {
        match &self.rater {
            Rater::User(u) => Some(u.clone()),
            Rater::Anonymous(_) => None,
        }
    }
}
