//! Where each word of a scenario's text comes from. Text in generated scenarios is made of words
//! unique to their step, so a word in an answer names the step it came from; that is how a
//! difference is attributed to an invariant.

use super::faults::FaultPlan;
use super::scenario::{Answer, Block, Defect, DisplayScenario, Event, Step};
use std::collections::BTreeSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    UserText,
    Question,
    Answer,
    Chunk,
    Stop,
    Decoy,
    Custom,
    Envelope,
}

#[derive(Clone, Debug)]
pub struct Source<'a> {
    pub step: u32,
    pub kind: Kind,
    pub agent: &'a str,
    pub display: &'a str,
    pub bad_created_at: bool,
    /// The step's row is malformed: the projector skips it, so its text may only appear through
    /// a stop's answer.
    pub defective: bool,
    /// The fault plan lets at least one copy of the step reach the store.
    pub persisted: bool,
}

/// Where each word of the scenario's text comes from, and which payload strings a warning must
/// never carry. Borrowed from the scenario: a seed's scenario holds thousands of words.
pub struct Provenance<'a> {
    /// Every word of the scenario, sorted, once for each time a step says it; `sources` holds
    /// each one's source at the same index (a map from a word to its sources, without a vector
    /// and a tree node a word: most words are said once).
    words: Vec<&'a str>,
    sources: Vec<Source<'a>>,
    pub payload_strings: BTreeSet<&'a str>,
}

/// `plan` is the scenario's fault plan (which rows were persisted).
pub fn provenance<'a>(scenario: &'a DisplayScenario, plan: &FaultPlan) -> Provenance<'a> {
    let mut said: Vec<(&str, Source<'_>)> = Vec::new();
    let mut payload_strings = BTreeSet::new();
    let mut urls = Vec::new();
    for step in scenario.steps() {
        // What a word's source says of its step, decided once for all the step's words.
        let bad_created_at = matches!(step.defect, Some(Defect::BadCreatedAt { .. }));
        let persisted = plan.persisted(step.id);
        let mut add = |kind: Kind, text| {
            for w in str::split_whitespace(text) {
                said.push((
                    w,
                    Source {
                        step: step.id,
                        kind,
                        agent: &step.agent,
                        display: &step.display,
                        bad_created_at,
                        defective: step.defect.is_some(),
                        persisted,
                    },
                ));
                if is_tagged(w) {
                    payload_strings.insert(w);
                }
            }
        };
        match &step.event {
            Event::UserMessage { blocks } => {
                for b in blocks {
                    match b {
                        Block::Text { text } => add(Kind::UserText, text),
                        Block::Image { url: Some(u) } if u.len() > 12 => {
                            urls.push(u.as_str());
                        }
                        _ => {}
                    }
                }
            }
            Event::HitlQuestion { question } => add(Kind::Question, question),
            Event::HitlAnswer { answer } => match answer {
                Answer::Text(t) => add(Kind::Answer, t),
                Answer::Bool(b) => add(Kind::Answer, if *b { "true" } else { "false" }),
            },
            Event::Chunk { text } => add(Kind::Chunk, text),
            Event::Stop { answer } => add(Kind::Stop, answer),
            Event::Decoy { text, .. } => add(Kind::Decoy, text),
            Event::Custom { text, .. } => add(Kind::Custom, text),
            Event::Envelope { text, .. } => add(Kind::Envelope, text),
        }
    }
    payload_strings.extend(urls);
    // Stable: a word's sources stay in the order of the steps that say it.
    said.sort_by(|a, b| a.0.cmp(b.0));
    let (words, sources) = said.into_iter().unzip();
    Provenance {
        words,
        sources,
        payload_strings,
    }
}

/// A generated word: a letter, digits, a letter (`c17a`).
pub fn is_tagged(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() >= 3
        && b[0].is_ascii_lowercase()
        && b[b.len() - 1].is_ascii_lowercase()
        && b[1..b.len() - 1].iter().all(u8::is_ascii_digit)
}

/// A user agent's look-alike of a user message or HITL answer: its display must stay hidden.
pub fn is_decoy_marker(scenario: &DisplayScenario, step: &Step) -> bool {
    let Event::Decoy { class, .. } = &step.event else {
        return false;
    };
    let user_agent = scenario
        .agents
        .get(&step.agent)
        .is_some_and(|a| a.class == "UserAgent");
    user_agent
        && (class.contains("UserMessageEvent") || class.contains("HumanInTheLoopResponseEvent"))
}

impl<'a> Provenance<'a> {
    /// Every step whose text holds `word`.
    pub fn sources(&self, word: &str) -> &[Source<'a>] {
        let first = self.words.partition_point(|w| *w < word);
        let end = first + self.words[first..].partition_point(|w| *w == word);
        &self.sources[first..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagged_words_are_recognised() {
        assert!(is_tagged("c17a"));
        assert!(is_tagged("s1b"));
        assert!(!is_tagged("true"));
        assert!(!is_tagged("o0"));
        assert!(!is_tagged("c17"));
    }
}
