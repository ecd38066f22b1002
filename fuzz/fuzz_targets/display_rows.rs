//! Fuzz target: arbitrary rows through the projector and both display stores. Must never panic.
//!
//! The input is read two ways: its raw bytes split at 0xFF into rows (garbage, truncated JSON),
//! and a structured thread built by `arbitrary` from field shapes that are each either well
//! typed or odd (numbers, bools, nulls, arrays where strings belong), so the projector's field
//! checks and the stores' admission see both.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use history::display::{
    project, reconstruct, AgentIdentity, DisplayEventStore, MemoryDisplayStore, ProjectorOptions,
    SqliteDisplayStore,
};
use history::Planted;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

const CLASSES: [&str; 10] = [
    "UserMessageEvent",
    "HumanInTheLoopRequestEvent",
    "HumanInTheLoopResponseEvent",
    "ChunkEvent",
    "StopEvent",
    "NoAnswerStopEvent",
    "XChunkEventY",
    "UserMessageEventLog",
    "RetrievalAgentInTheLoopResponseEvent",
    "BaseEvent",
];

/// A JSON value of a shape the projector has to check.
#[derive(Arbitrary, Debug)]
enum Shape {
    Str(String),
    Small(u8),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
    List(Vec<u8>),
    Text(String),
    Block {
        kind: u8,
        text: String,
        url: Option<String>,
        format: u8,
        data: Option<Vec<u8>>,
    },
}

impl Shape {
    fn value(&self) -> Value {
        match self {
            Shape::Str(s) => json!(s),
            Shape::Small(n) => json!(format!("d{}", n % 3)),
            Shape::Int(n) => json!(n),
            Shape::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Shape::Bool(b) => json!(b),
            Shape::Null => Value::Null,
            Shape::List(l) => json!(l),
            Shape::Text(s) => json!([{"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": s}]}]),
            Shape::Block {
                kind,
                text,
                url,
                format,
                data,
            } => {
                let block_type = ["text", "image", "audio", "video"][usize::from(kind % 4)];
                let format = ["wav", "mp3", "ogg"][usize::from(format % 3)];
                json!([{"role": "user", "additional_kwargs": {}, "blocks": [{
                    "block_type": block_type, "text": text, "url": url, "format": format, "audio": data,
                }]}])
            }
        }
    }
}

#[derive(Arbitrary, Debug)]
struct FuzzRow {
    agent: u8,
    display: Shape,
    event_id: Shape,
    run: Shape,
    created_at: Shape,
    payload: Shape,
    parents: Vec<u8>,
    control: bool,
}

impl FuzzRow {
    fn bytes(&self) -> Vec<u8> {
        let (class, id) = [("UserAgent", "u0"), ("LeadAgent", "a1"), ("SubAgent", "a2")]
            [usize::from(self.agent % 3)];
        let parents: Vec<&str> = self
            .parents
            .iter()
            .take(4)
            .map(|p| CLASSES[usize::from(p % 10)])
            .collect();
        let payload = self.payload.value();
        let row = json!({
            "agent_class": class, "agent_id": id, "thread_id": "T",
            "display_id": self.display.value(), "run_id": self.run.value(), "event_id": self.event_id.value(),
            "event_type": if self.control { "control_event" } else { "display_event" },
            "event_name": "E", "event_parents": parents,
            "event_data": {"created_at": self.created_at.value(), "messages": payload, "content": payload,
                "question": payload, "response": payload, "output_messages": payload},
        });
        serde_json::to_vec(&row).unwrap_or_default()
    }
}

fn exercise(rows: &[Vec<u8>]) {
    let options = ProjectorOptions {
        planted: Planted::none(),
    };
    let primary = AgentIdentity::new("LeadAgent", "a1");
    let _ = project(rows, Some(&primary), &options);
    let _ = project(rows, None, &options);
    let memory = MemoryDisplayStore::new(Planted::none());
    let sqlite = SqliteDisplayStore::open_in_memory(Planted::none()).ok();
    for row in rows {
        let m = memory.append(row).ok();
        if let Some(s) = &sqlite {
            assert_eq!(m, s.append(row).ok(), "the stores admit rows differently");
        }
    }
    let from_memory = reconstruct(&memory, "T", Some(&primary), &options).ok();
    if let Some(s) = &sqlite {
        let from_sqlite = reconstruct(s, "T", Some(&primary), &options).ok();
        assert_eq!(
            from_memory, from_sqlite,
            "the stores reconstruct differently"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let raw: Vec<Vec<u8>> = data
        .split(|b| *b == 0xFF)
        .take(64)
        .map(<[u8]>::to_vec)
        .collect();
    exercise(&raw);
    let mut u = Unstructured::new(data);
    if let Ok(rows) = Vec::<FuzzRow>::arbitrary(&mut u) {
        let rows: Vec<Vec<u8>> = rows.iter().take(64).map(FuzzRow::bytes).collect();
        exercise(&rows);
    }
});
