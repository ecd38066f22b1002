//! What the summarization middleware must make of a checkpoint's messages (seed 003, R20; the
//! contract is docs/runs-summarization.md, written from the seed and LangChain's
//! `SummarizationMiddleware`).
//!
//! Given the message list the middleware was handed before a model call and its settings, the
//! contract fixes the whole result:
//!
//! - **Trigger.** It summarizes only when the list's o200k token estimate is above the budget
//!   (every message costs [`MESSAGE_OVERHEAD_TOKENS`] plus the tokens of its text and of each tool
//!   call's name and JSON arguments), and only when something can be folded away.
//! - **Kept window.** The last `keep_messages` messages are kept verbatim; the cut moves back
//!   (keeping more) only while a tool result at or after it answers a call before it, to the
//!   largest cut that separates no answered call from its result. With `keep_current_request`
//!   (histsim's middleware; LangChain's has no such rule) the cut also never passes the latest
//!   human message: the request being answered stays in the window (R29).
//! - **The summary.** One human message, first, opening with [`SUMMARY_PREFIX`]; the summarizer
//!   histsim runs opens its text by counting the folded messages per role, so the model also
//!   knows which messages the summary claims to cover.
//! - **Afterwards.** The model's next call sees that list: the run continues from the summary
//!   and the kept window, with its new messages after them ([`check_continuation`]).
//!
//! The cut is stated as a search over every candidate (the largest safe cut at or below the
//! target), not as the middleware's walk back from pair to pair: the two must agree.

use std::collections::BTreeMap;
use std::fmt;

/// The text that opens the summary message (LangChain's and the seed's wording).
pub const SUMMARY_PREFIX: &str = "Here is a summary of the conversation to date:\n\n";

/// Tokens every message costs for its role and framing, beyond its text.
pub const MESSAGE_OVERHEAD_TOKENS: usize = 4;

/// Who wrote a message of the agent's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Human,
    Ai,
    Tool,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Human => "human",
            Role::Ai => "ai",
            Role::Tool => "tool",
        }
    }
}

/// One tool call of an AI message, as the token estimate reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateCall {
    pub id: String,
    pub name: String,
    /// The call's arguments as compact JSON text.
    pub args_json: String,
}

/// One message of the agent's working state (the checkpoint's `messages`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateMessage {
    pub role: Role,
    /// The id the message carries (kept messages keep it).
    pub id: Option<String>,
    /// The plain text (text blocks joined by newlines).
    pub text: String,
    /// AI messages: the tools it calls.
    pub tool_calls: Vec<StateCall>,
    /// Tool messages: the call this one answers.
    pub tool_call_id: Option<String>,
}

/// The middleware's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SummarizationContract {
    /// Summarize when the estimate is above this many tokens.
    pub budget_tokens: usize,
    /// Messages kept verbatim after the summary, at least.
    pub keep_messages: usize,
    /// The latest human message (the request being answered) is never folded.
    pub keep_current_request: bool,
}

/// What one summarization must have done to the list it was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedSummary {
    /// The list's token estimate.
    pub tokens: usize,
    /// Where the list is cut: `[..cut]` folded into the summary, `[cut..]` kept.
    pub cut: usize,
    /// The opening the summary text must have: the folded messages counted per role.
    pub opening: String,
}

/// How a summarized list breaks the contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SummaryMismatch {
    /// Summarized although the estimate was within the budget.
    UnderBudget { tokens: usize, budget_tokens: usize },
    /// Summarized although no cut could fold anything away.
    NothingToFold {
        messages: usize,
        keep_messages: usize,
    },
    /// The first message is not a human message opening with the prefix.
    NoSummaryFirst { found: String },
    /// The summary does not claim to cover exactly the folded messages.
    WrongCoverage { expected: String, found: String },
    /// The kept window is not `before[cut..]`, verbatim. `position` is the first differing
    /// position within the window.
    KeptWindow {
        cut: usize,
        expected_len: usize,
        kept_len: usize,
        position: usize,
    },
    /// The state a later model call saw does not start with what the summary left.
    StateLost { position: usize },
}

impl fmt::Display for SummaryMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SummaryMismatch::UnderBudget { tokens, budget_tokens } => write!(
                f,
                "summarized {tokens} tokens, within the budget of {budget_tokens}"
            ),
            SummaryMismatch::NothingToFold { messages, keep_messages } => write!(
                f,
                "summarized {messages} messages although keeping {keep_messages} folds nothing away"
            ),
            SummaryMismatch::NoSummaryFirst { found } => {
                write!(f, "the first message is not the summary but {found}")
            }
            SummaryMismatch::WrongCoverage { expected, found } => write!(
                f,
                "the summary should cover `{expected}` and covers `{found}`"
            ),
            SummaryMismatch::KeptWindow { cut, expected_len, kept_len, position } => write!(
                f,
                "kept {kept_len} messages where the contract keeps {expected_len} (from message {cut} on); first difference at kept position {position}"
            ),
            SummaryMismatch::StateLost { position } => write!(
                f,
                "the next model call's state differs from what the summary left at position {position}"
            ),
        }
    }
}

/// Tokens of a text under o200k_base (special tokens read as text).
///
/// Counted once per text and thread: every summary's check estimates the messages before and
/// after it, and most of them were estimated at the summary before; encoding them again was a
/// twentieth of the runs workload's instructions. A count depends on the text alone, so
/// remembering it changes no answer.
pub fn text_tokens(text: &str) -> usize {
    COUNTED.with_borrow_mut(|counted| counted.tokens_of(text))
}

fn encoded_tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

thread_local! {
    static COUNTED: std::cell::RefCell<Counted> = const {
        std::cell::RefCell::new(Counted { tokens: BTreeMap::new(), bytes: 0 })
    };
}

/// The bytes of text a thread remembers counts for at most; past them it starts again.
const COUNTED_BYTES_MAX: usize = 4 * 1024 * 1024;

/// Token counts by text, bounded by the bytes of the texts.
struct Counted {
    tokens: BTreeMap<String, usize>,
    bytes: usize,
}

impl Counted {
    fn tokens_of(&mut self, text: &str) -> usize {
        if let Some(&tokens) = self.tokens.get(text) {
            return tokens;
        }
        let tokens = encoded_tokens(text);
        if self.bytes + text.len() > COUNTED_BYTES_MAX {
            self.tokens.clear();
            self.bytes = 0;
        }
        self.bytes += text.len();
        self.tokens.insert(text.to_string(), tokens);
        tokens
    }
}

/// The estimate of a message list the budget is compared with.
pub fn estimate_tokens(messages: &[StateMessage]) -> usize {
    messages
        .iter()
        .map(|m| {
            let calls: usize = m
                .tool_calls
                .iter()
                .map(|c| text_tokens(&c.name) + text_tokens(&c.args_json))
                .sum();
            MESSAGE_OVERHEAD_TOKENS + text_tokens(&m.text) + calls
        })
        .sum()
}

/// Whether cutting before `cut` keeps every answered call with its results: no tool result at
/// or after `cut` answers a call made before it.
pub fn cut_is_safe(messages: &[StateMessage], cut: usize) -> bool {
    let mut called_at: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, m) in messages.iter().enumerate() {
        if m.role == Role::Ai {
            for c in &m.tool_calls {
                called_at.insert(&c.id, i);
            }
        }
        let answers_earlier_call = m.role == Role::Tool
            && m.tool_call_id
                .as_deref()
                .and_then(|id| called_at.get(id))
                .is_some_and(|&at| at < cut);
        if i >= cut && answers_earlier_call {
            return false;
        }
    }
    true
}

/// The cut the contract makes: the largest safe cut at or below `len - keep_messages`.
pub fn expected_cut(messages: &[StateMessage], keep_messages: usize) -> usize {
    let target = messages.len().saturating_sub(keep_messages);
    (0..=target)
        .rev()
        .find(|&c| cut_is_safe(messages, c))
        .unwrap_or(0)
}

/// The cut the contract makes when it also keeps the current request: the largest safe cut at
/// or below both `len - keep_messages` and the index of the latest human message.
pub fn expected_cut_keeping_request(messages: &[StateMessage], keep_messages: usize) -> usize {
    let plain = messages.len().saturating_sub(keep_messages);
    let current = messages.iter().rposition(|m| m.role == Role::Human);
    let target = current.map_or(plain, |c| c.min(plain));
    (0..=target)
        .rev()
        .find(|&c| cut_is_safe(messages, c))
        .unwrap_or(0)
}

/// The opening of a summary covering `folded`: `"N messages (h human, a ai, t tool)."`.
pub fn coverage_line(folded: &[StateMessage]) -> String {
    let count = |r: Role| folded.iter().filter(|m| m.role == r).count();
    format!(
        "{} messages ({} {}, {} {}, {} {}).",
        folded.len(),
        count(Role::Human),
        Role::Human.name(),
        count(Role::Ai),
        Role::Ai.name(),
        count(Role::Tool),
        Role::Tool.name()
    )
}

impl SummarizationContract {
    /// What summarizing `before` must do, or `None` when the contract leaves it untouched.
    pub fn expect(&self, before: &[StateMessage]) -> Option<ExpectedSummary> {
        let tokens = estimate_tokens(before);
        if tokens <= self.budget_tokens {
            return None;
        }
        let cut = if self.keep_current_request {
            expected_cut_keeping_request(before, self.keep_messages)
        } else {
            expected_cut(before, self.keep_messages)
        };
        (cut > 0).then(|| ExpectedSummary {
            tokens,
            cut,
            opening: coverage_line(&before[..cut]),
        })
    }

    /// Checks that `after` is what summarizing `before` must give; returns the expectation met.
    pub fn check(
        &self,
        before: &[StateMessage],
        after: &[StateMessage],
    ) -> Result<ExpectedSummary, SummaryMismatch> {
        let Some(expected) = self.expect(before) else {
            let tokens = estimate_tokens(before);
            return Err(if tokens <= self.budget_tokens {
                SummaryMismatch::UnderBudget {
                    tokens,
                    budget_tokens: self.budget_tokens,
                }
            } else {
                SummaryMismatch::NothingToFold {
                    messages: before.len(),
                    keep_messages: self.keep_messages,
                }
            });
        };
        let summary_text = match after.first() {
            Some(m) if m.role == Role::Human && m.text.starts_with(SUMMARY_PREFIX) => {
                &m.text[SUMMARY_PREFIX.len()..]
            }
            other => {
                return Err(SummaryMismatch::NoSummaryFirst {
                    found: other.map_or("nothing".into(), |m| {
                        format!("a {} message `{}`", m.role.name(), opening_of(&m.text))
                    }),
                })
            }
        };
        let window = &before[expected.cut..];
        let kept = &after[1..];
        if let Some(position) = first_difference(window, kept) {
            return Err(SummaryMismatch::KeptWindow {
                cut: expected.cut,
                expected_len: window.len(),
                kept_len: kept.len(),
                position,
            });
        }
        let found = summary_text.lines().next().unwrap_or("");
        if found != expected.opening {
            return Err(SummaryMismatch::WrongCoverage {
                expected: expected.opening,
                found: found.to_string(),
            });
        }
        Ok(expected)
    }
}

/// Checks that the state a later model call of the same run was handed starts with what the
/// previous summary left (the run went on from the summarized list, not from the old one).
pub fn check_continuation(
    left: &[StateMessage],
    next_before: &[StateMessage],
) -> Result<(), SummaryMismatch> {
    match first_difference(left, &next_before[..left.len().min(next_before.len())]) {
        Some(position) => Err(SummaryMismatch::StateLost { position }),
        None => Ok(()),
    }
}

/// The first position where two lists differ (a missing element counts), or `None`.
fn first_difference(expected: &[StateMessage], found: &[StateMessage]) -> Option<usize> {
    let n = expected.len().max(found.len());
    (0..n).find(|&i| expected.get(i) != found.get(i))
}

fn opening_of(text: &str) -> String {
    text.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract(
        budget_tokens: usize,
        keep_messages: usize,
        keep_current_request: bool,
    ) -> SummarizationContract {
        SummarizationContract {
            budget_tokens,
            keep_messages,
            keep_current_request,
        }
    }

    #[test]
    fn a_remembered_count_is_the_encoders_and_the_memory_starts_again_when_full() {
        let texts = [
            "hello there",
            "hello there",
            "",
            "tool_call_1 {\"x\": [1, 2]}",
            "日本語の文",
        ];
        for text in texts {
            assert_eq!(text_tokens(text), encoded_tokens(text), "{text:?}");
        }
        let mut counted = Counted {
            tokens: BTreeMap::new(),
            bytes: COUNTED_BYTES_MAX - 3,
        };
        counted.tokens.insert("stale".into(), 999);
        // Over the bound: the memory is emptied first, then this text kept.
        assert_eq!(counted.tokens_of("four"), encoded_tokens("four"));
        assert_eq!((counted.tokens.len(), counted.bytes), (1, 4));
        assert_eq!(counted.tokens_of("four"), encoded_tokens("four"));
        assert_eq!(counted.tokens.get("stale"), None);
    }

    fn human(t: &str) -> StateMessage {
        StateMessage {
            role: Role::Human,
            id: None,
            text: t.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    fn ai(t: &str, calls: &[&str]) -> StateMessage {
        StateMessage {
            role: Role::Ai,
            id: Some(format!("lc_run--{t}")),
            text: t.into(),
            tool_calls: calls
                .iter()
                .map(|id| StateCall {
                    id: (*id).into(),
                    name: "search".into(),
                    args_json: "{}".into(),
                })
                .collect(),
            tool_call_id: None,
        }
    }

    fn tool(t: &str, id: &str) -> StateMessage {
        StateMessage {
            role: Role::Tool,
            id: None,
            text: t.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(id.into()),
        }
    }

    /// human, ai(calls a, b), tool a, tool b, ai, human
    fn thread() -> Vec<StateMessage> {
        vec![
            human("question one"),
            ai("", &["a", "b"]),
            tool("result a", "a"),
            tool("result b", "b"),
            ai("answer", &[]),
            human("question two"),
        ]
    }

    fn summarized(before: &[StateMessage], cut: usize, opening: &str) -> Vec<StateMessage> {
        let mut out = vec![human(&format!("{SUMMARY_PREFIX}{opening}\n- human: x"))];
        out.extend_from_slice(&before[cut..]);
        out
    }

    #[test]
    fn the_cut_is_the_largest_safe_one_at_or_below_the_target() {
        let m = thread();
        let cuts: Vec<usize> = (0..=7).map(|keep| expected_cut(&m, keep)).collect();
        // keep 0..=7 -> targets 6,5,4,3,2,1,0,0; targets 3 and 2 fall inside the tool pair.
        assert_eq!(cuts, vec![6, 5, 4, 1, 1, 1, 0, 0]);
        assert!(!cut_is_safe(&m, 2) && !cut_is_safe(&m, 3) && cut_is_safe(&m, 4));
    }

    #[test]
    fn an_orphaned_result_does_not_move_the_cut() {
        // A result whose call is nowhere before it answers no call: histsim keeps it where it
        // falls (LangChain would advance past it, docs/runs-summarization.md).
        let m = vec![human("q"), tool("stray", "zz"), ai("a", &[])];
        assert_eq!(expected_cut(&m, 2), 1);
    }

    #[test]
    fn tokens_count_text_calls_and_overhead() {
        let m = vec![human("hello world")];
        assert_eq!(estimate_tokens(&m), 2 + MESSAGE_OVERHEAD_TOKENS);
        let with_call = vec![ai("", &["a"])];
        assert_eq!(
            estimate_tokens(&with_call),
            MESSAGE_OVERHEAD_TOKENS + text_tokens("search") + text_tokens("{}")
        );
    }

    #[test]
    fn a_contract_summary_passes_and_each_departure_is_named() {
        let before = thread();
        let c = contract(1, 3, false);
        let e = c.expect(&before).expect("over budget");
        assert_eq!(
            (e.cut, e.opening.as_str()),
            (1, "1 messages (1 human, 0 ai, 0 tool).")
        );
        let good = summarized(&before, 1, &e.opening);
        assert_eq!(c.check(&before, &good), Ok(e.clone()));
        // One message too few kept: the window starts one later.
        let short = summarized(&before, 2, &e.opening);
        assert!(matches!(
            c.check(&before, &short),
            Err(SummaryMismatch::KeptWindow {
                kept_len: 4,
                expected_len: 5,
                position: 0,
                ..
            })
        ));
        let wrong_cover = summarized(&before, 1, "2 messages (1 human, 1 ai, 0 tool).");
        assert!(matches!(
            c.check(&before, &wrong_cover),
            Err(SummaryMismatch::WrongCoverage { .. })
        ));
        let no_summary = before[1..].to_vec();
        assert!(matches!(
            c.check(&before, &no_summary),
            Err(SummaryMismatch::NoSummaryFirst { .. })
        ));
        let roomy = contract(10_000, 3, false);
        assert_eq!(roomy.expect(&before), None);
        assert!(matches!(
            roomy.check(&before, &good),
            Err(SummaryMismatch::UnderBudget { .. })
        ));
        let keep_all = contract(1, 6, false);
        assert!(matches!(
            keep_all.check(&before, &good),
            Err(SummaryMismatch::NothingToFold {
                messages: 6,
                keep_messages: 6
            })
        ));
    }

    #[test]
    fn keeping_the_current_request_moves_the_cut_back_to_it() {
        let mut before = thread();
        before.push(ai("step", &[]));
        before.push(ai("step two", &[]));
        assert_eq!(expected_cut(&before, 2), 6);
        assert_eq!(expected_cut_keeping_request(&before, 2), 5);
        // Within the window already: nothing moves.
        assert_eq!(expected_cut_keeping_request(&before, 3), 5);
        assert_eq!(expected_cut_keeping_request(&before, 7), 1);
        let c = contract(1, 2, true);
        let e = c.expect(&before).expect("over budget");
        assert_eq!(e.cut, 5);
        let plain = summarized(&before, 6, &coverage_line(&before[..6]));
        assert!(matches!(
            c.check(&before, &plain),
            Err(SummaryMismatch::KeptWindow { .. })
        ));
    }

    #[test]
    fn the_next_call_must_start_from_what_the_summary_left() {
        let left = summarized(&thread(), 1, "1 messages (1 human, 0 ai, 0 tool).");
        let mut next = left.clone();
        next.push(ai("more", &[]));
        assert_eq!(check_continuation(&left, &next), Ok(()));
        assert_eq!(
            check_continuation(&left, &thread()),
            Err(SummaryMismatch::StateLost { position: 0 })
        );
        assert_eq!(
            check_continuation(&left, &left[..3]),
            Err(SummaryMismatch::StateLost { position: 3 })
        );
    }
}
