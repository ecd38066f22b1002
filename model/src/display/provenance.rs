//! Where a piece of text came from: a plain index for checkers, no checks of its own.
//!
//! A checker that finds text in a reconstructed transcript can look it up here to name the
//! emission (and so the display and agent) it came from, e.g. to report that output of a hidden
//! display leaked (P2) or that a nested stop supplied an answer (P6).

use serde::Serialize;

use super::conversation::{Agent, Conversation, EmissionKind, UserBlock};

/// One piece of text carried by an emission.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TextSource {
    /// The emission's index.
    pub emission: usize,
    pub display: String,
    pub agent: Agent,
    /// [`EmissionKind::name`] of the emission.
    pub kind: &'static str,
    /// For a user message: the index of the text block among its blocks; otherwise `None`.
    pub block: Option<usize>,
    /// Whether the emission reached the store.
    pub persisted: bool,
    /// The text exactly as emitted (may be empty; a bool HITL answer as `"true"`/`"false"`).
    pub text: String,
}

/// Every text carried by an emission, in emission order (user text blocks in block order): chunk
/// text, stop answers, HITL questions and answers, user text blocks. Whatever the emission's
/// persistence, defect or display.
pub fn text_sources(conversation: &Conversation) -> Vec<TextSource> {
    let mut sources = Vec::new();
    for emission in &conversation.emissions {
        let texts: Vec<(Option<usize>, String)> = match &emission.kind {
            EmissionKind::UserMessage { blocks } => blocks
                .iter()
                .enumerate()
                .filter_map(|(position, block)| match block {
                    UserBlock::Text(text) => Some((Some(position), text.clone())),
                    _ => None,
                })
                .collect(),
            EmissionKind::HitlQuestion { question } => vec![(None, question.clone())],
            EmissionKind::HitlAnswer { answer } => vec![(None, answer.render())],
            EmissionKind::Chunk { text } => vec![(None, text.clone())],
            EmissionKind::Stop { answer } => vec![(None, answer.clone())],
            EmissionKind::Decoy { .. } | EmissionKind::Unrelated { .. } => Vec::new(),
        };
        for (block, text) in texts {
            sources.push(TextSource {
                emission: emission.index,
                display: emission.display.clone(),
                agent: emission.agent.clone(),
                kind: emission.kind.name(),
                block,
                persisted: emission.persisted,
                text,
            });
        }
    }
    sources
}

#[cfg(test)]
mod tests {
    use super::super::build::*;
    use super::*;

    #[test]
    fn lists_every_text_with_its_origin() {
        let conversation = Build::new()
            .emit(
                USER,
                "d",
                user_blocks(vec![
                    image(Some("u")),
                    UserBlock::Text("hi".into()),
                    UserBlock::Text(String::new()),
                ]),
            )
            .emit(SUB, "h", chunk("c"))
            .lost()
            .emit(LEAD, "d", question("q"))
            .emit(USER, "d", answer_bool(false))
            .emit(LEAD, "d", unrelated("Custom"))
            .emit(LEAD, "d", stop("A"))
            .done();
        let sources = text_sources(&conversation);
        let got: Vec<(usize, &str, &str, Option<usize>, bool)> = sources
            .iter()
            .map(|s| (s.emission, s.display.as_str(), s.kind, s.block, s.persisted))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, "d", "user_message", Some(1), true),
                (0, "d", "user_message", Some(2), true),
                (1, "h", "chunk", None, false),
                (2, "d", "hitl_question", None, true),
                (3, "d", "hitl_answer", None, true),
                (5, "d", "stop", None, true),
            ]
        );
        let texts: Vec<String> = text_sources(&conversation)
            .into_iter()
            .map(|s| s.text)
            .collect();
        assert_eq!(texts, vec!["hi", "", "c", "q", "false", "A"]);
        assert_eq!(text_sources(&conversation)[2].agent, agent(SUB));
    }
}
