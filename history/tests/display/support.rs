//! Row builders and the shared checks of the display tests.

use history::display::{
    project, AgentIdentity, ChatMessage, ContentPart, DisplayEventStore, MemoryDisplayStore,
    Projection, ProjectorOptions, Role, SqliteDisplayStore, Warning, WarningCode,
};
use history::Planted;
use serde_json::{json, Value};

pub const THREAD: &str = "T";

pub fn user_agent() -> AgentIdentity {
    AgentIdentity::new("UserAgent", "u0")
}
pub fn lead() -> AgentIdentity {
    AgentIdentity::new("LeadAgent", "a1")
}
pub fn sub() -> AgentIdentity {
    AgentIdentity::new("SubAgent", "a2")
}

/// A llama_index `ChatMessage` dump as the platform persists it: no `content` key.
pub fn chat_message(blocks: Value) -> Value {
    json!({"role": "user", "additional_kwargs": {}, "blocks": blocks})
}

/// A platform `Message` dump, as a stop's output message is persisted.
pub fn output_message(text: &str) -> Value {
    json!({"role": "assistant", "name": null, "tool_calls": null, "function_call_name": null,
        "function_call_arguments_json": null, "tool_call_id": null,
        "contents": [{"type": "text", "text": text}], "content": text})
}

/// One persisted row, as a JSON value that tests can bend before serializing.
#[derive(Clone, Debug)]
pub struct Ev(pub Value);

impl Ev {
    pub fn new(
        agent: &AgentIdentity,
        display: &str,
        run: &str,
        event_id: &str,
        parents: &[&str],
        data: Value,
    ) -> Ev {
        Ev(json!({
            "agent_class": agent.agent_class,
            "agent_id": agent.agent_id,
            "thread_id": THREAD,
            "display_id": display,
            "run_id": run,
            "event_id": event_id,
            "event_type": "display_event",
            "event_name": parents.first().copied().unwrap_or("Event"),
            "event_parents": parents,
            "event_data": data,
        }))
    }

    /// A user turn from the `UserAgent` (a visibility marker).
    pub fn user(display: &str, event_id: &str, t: i64, text: &str) -> Ev {
        let data = json!({"created_at": t, "messages": [chat_message(json!([{"block_type": "text", "text": text}]))]});
        Ev::new(
            &user_agent(),
            display,
            "r-user",
            event_id,
            &["UserMessageEvent", "BaseEvent"],
            data,
        )
    }

    /// A user turn whose last message carries `blocks`.
    pub fn user_blocks(display: &str, event_id: &str, t: i64, blocks: Value) -> Ev {
        let data = json!({"created_at": t, "messages": [
            chat_message(json!([{"block_type": "text", "text": "older"}])),
            chat_message(blocks)]});
        Ev::new(
            &user_agent(),
            display,
            "r-user",
            event_id,
            &["UserMessageEvent"],
            data,
        )
    }

    pub fn chunk(
        agent: &AgentIdentity,
        display: &str,
        run: &str,
        event_id: &str,
        t: i64,
        text: &str,
    ) -> Ev {
        let data = json!({"created_at": t, "content": text});
        Ev::new(
            agent,
            display,
            run,
            event_id,
            &["ChunkEvent", "BaseEvent"],
            data,
        )
    }

    pub fn stop(
        agent: &AgentIdentity,
        display: &str,
        run: &str,
        event_id: &str,
        t: i64,
        answer: &str,
    ) -> Ev {
        let data = json!({"created_at": t, "output_messages": [
            output_message("earlier"), output_message(answer)]});
        Ev::new(agent, display, run, event_id, &["StopEvent"], data)
    }

    pub fn question(
        agent: &AgentIdentity,
        display: &str,
        event_id: &str,
        t: i64,
        question: &str,
    ) -> Ev {
        let data = json!({"created_at": t, "question": question});
        Ev::new(
            agent,
            display,
            "r-q",
            event_id,
            &["HumanInTheLoopRequestEvent"],
            data,
        )
    }

    /// A HITL answer from the `UserAgent` (a visibility marker).
    pub fn answer(display: &str, event_id: &str, t: i64, response: Value) -> Ev {
        let data = json!({"created_at": t, "response": response});
        Ev::new(
            &user_agent(),
            display,
            "r-user",
            event_id,
            &["HumanInTheLoopResponseEvent"],
            data,
        )
    }

    /// A custom event of a class the reader does not know.
    pub fn custom(
        agent: &AgentIdentity,
        display: &str,
        event_id: &str,
        t: i64,
        parents: &[&str],
        data: Value,
    ) -> Ev {
        let mut data = data;
        if let Some(o) = data.as_object_mut() {
            o.insert("created_at".into(), json!(t));
        }
        Ev::new(agent, display, "r-custom", event_id, parents, data)
    }

    /// [`Ev::custom`] on display `d`, its event id `e{t}`.
    pub fn custom_at(agent: &AgentIdentity, t: i64, parents: &[&str], data: Value) -> Ev {
        Ev::custom(agent, "d", &format!("e{t}"), t, parents, data)
    }

    /// The seed's incident at `t`: the subagent's custom AITL response event, a `StopEvent`
    /// subclass without the field the legacy union required, its `result` in its data.
    pub fn aitl_response(t: i64, result: Value) -> Ev {
        let parents = ["RetrievalAgentInTheLoopResponseEvent", "StopEvent"];
        Ev::custom_at(&sub(), t, &parents, json!({ "result": result }))
    }

    /// Sets a top-level field.
    pub fn set(mut self, field: &str, value: Value) -> Ev {
        if let Some(o) = self.0.as_object_mut() {
            o.insert(field.into(), value);
        }
        self
    }

    /// Removes a top-level field.
    pub fn without(mut self, field: &str) -> Ev {
        if let Some(o) = self.0.as_object_mut() {
            o.remove(field);
        }
        self
    }

    /// Sets a field of `event_data`.
    pub fn data(mut self, field: &str, value: Value) -> Ev {
        if let Some(o) = self.0.get_mut("event_data").and_then(Value::as_object_mut) {
            o.insert(field.into(), value);
        }
        self
    }

    pub fn bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.0).expect("a Value always serializes")
    }
}

/// The client asks "go", the lead asks "Sure?" back (HITL) and the client answers `true`, all on
/// display `d` at times 0 to 2.
pub fn go_sure_true() -> Vec<Ev> {
    vec![
        Ev::user("d", "e0", 0, "go"),
        Ev::question(&lead(), "d", "e1", 1, "Sure?"),
        Ev::answer("d", "e2", 2, json!(true)),
    ]
}

pub fn bytes(rows: &[Ev]) -> Vec<Vec<u8>> {
    rows.iter().map(Ev::bytes).collect()
}

pub fn opts(planted: Planted) -> ProjectorOptions {
    ProjectorOptions { planted }
}

pub fn run(rows: &[Ev], primary: Option<&AgentIdentity>) -> Projection {
    project(&bytes(rows), primary, &opts(Planted::none()))
}

/// A message as `(role, text)` when it holds text only.
pub fn texts(p: &Projection) -> Vec<(Role, String)> {
    p.messages.iter().map(|m| (m.role, m.text())).collect()
}

pub fn u(s: &str) -> (Role, String) {
    (Role::User, s.to_string())
}
pub fn a(s: &str) -> (Role, String) {
    (Role::Assistant, s.to_string())
}

/// The data-driven check of this area: rows and primary in, expected texts and warnings out.
#[track_caller]
pub fn check(
    rows: &[Ev],
    primary: Option<&AgentIdentity>,
    want: &[(Role, String)],
    want_warnings: &[(WarningCode, &str)],
) {
    let p = run(rows, primary);
    assert_eq!(texts(&p), want, "messages of {p:#?}");
    let got: Vec<(WarningCode, String)> = p
        .warnings
        .iter()
        .map(|w| (w.code, w.field.clone().unwrap_or_default()))
        .collect();
    let want_w: Vec<(WarningCode, String)> = want_warnings
        .iter()
        .map(|(c, f)| (*c, f.to_string()))
        .collect();
    assert_eq!(got, want_w, "warnings of {p:#?}");
    for m in &p.messages {
        assert_no_empty_text(m);
    }
}

pub fn assert_no_empty_text(m: &ChatMessage) {
    assert!(!m.content.is_empty(), "empty message {m:?}");
    for part in &m.content {
        if let ContentPart::Text { text } = part {
            assert!(!text.is_empty(), "empty text part in {m:?}");
        }
    }
}

/// Warnings as a sorted list, for comparisons that ignore warning order.
pub fn warning_set(p: &Projection) -> Vec<Warning> {
    let mut w = p.warnings.clone();
    w.sort();
    w.dedup();
    w
}

/// Both backends, fresh, for tests that run one body against each.
pub fn both_stores(planted: Planted) -> Vec<(&'static str, Box<dyn DisplayEventStore>)> {
    vec![
        ("memory", Box::new(MemoryDisplayStore::new(planted))),
        (
            "sqlite",
            Box::new(SqliteDisplayStore::open_in_memory(planted).expect("sqlite opens in memory")),
        ),
    ]
}
