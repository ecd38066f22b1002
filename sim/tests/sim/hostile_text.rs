//! Every class of the hostile alphabet reaches every store and comes back byte-exact: the
//! run-event stores (memory, SQLite on a file, JSONL on a directory, the last two reopened),
//! the journal (real file system and memory, reopened) and the display stores (memory, SQLite),
//! through the projector too.

use history::journal::{
    Block as JournalBlock, FsStorage, Journal, JournalOptions, MemStorage, Origin, Row,
    SharedStorage, Speaker,
};
use history::runs::{
    Category, JsonlRunEventStore, MemoryRunEventStore, NewRunEvent, RunEventStore,
    SqliteRunEventStore,
};
use history::Planted;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use sim::hostile_text::{TextClass, CLASSES};
use std::sync::Arc;

/// One text of each class (two variants each), and the class it stands for.
fn samples() -> Vec<(TextClass, String)> {
    let mut rng = ChaCha8Rng::seed_from_u64(49);
    let mut out = Vec::new();
    for class in CLASSES {
        for k in 0..2 {
            let text = class.material(&mut rng, &format!("m{k}"));
            assert!(class.found_in(&text), "{class:?}: {text:?}");
            out.push((class, text));
        }
    }
    out
}

fn event(text: &str, n: usize) -> NewRunEvent {
    NewRunEvent {
        thread_id: "thread-hostile".into(),
        run_id: format!("run-{n}"),
        user_id: Some(text.to_string()),
        event_type: history::runs::HUMAN_MESSAGE.into(),
        category: Category::Message,
        content: Arc::new(json!({ "type": "human", "content": text })),
        metadata: json!({ "note": text }),
        created_at_ns: 1_000 + n as i64,
    }
}

/// Writes every sample as its own run, then reads each run back from `store`.
fn write_all(store: &dyn RunEventStore) {
    for (n, (_, text)) in samples().iter().enumerate() {
        store.put_batch(vec![event(text, n)]).expect("write");
    }
}

fn read_back(name: &str, store: &dyn RunEventStore) {
    for (n, (class, text)) in samples().iter().enumerate() {
        let events = store
            .list_events("thread-hostile", &format!("run-{n}"))
            .unwrap_or_else(|e| panic!("{name}, {class:?}: {e}"));
        assert_eq!(events.len(), 1, "{name}, {class:?}");
        let e = &events[0];
        let what = format!("{name}, class {}", class.name());
        assert_eq!(e.content["content"].as_str(), Some(text.as_str()), "{what}");
        assert_eq!(e.metadata["note"].as_str(), Some(text.as_str()), "{what}");
        assert_eq!(e.user_id.as_deref(), Some(text.as_str()), "{what}");
    }
}

#[test]
fn every_hostile_class_comes_back_byte_exact_from_every_run_event_store() {
    let memory = MemoryRunEventStore::new(Planted::none());
    write_all(&memory);
    read_back("memory", &memory);

    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("runs.sqlite");
    {
        let sqlite = SqliteRunEventStore::open(&db, Planted::none()).expect("sqlite");
        write_all(&sqlite);
        read_back("sqlite", &sqlite);
    }
    let reopened = SqliteRunEventStore::open(&db, Planted::none()).expect("sqlite again");
    read_back("sqlite reopened", &reopened);

    let base = dir.path().join("jsonl");
    {
        let jsonl = JsonlRunEventStore::open_dir(&base, Planted::none()).expect("jsonl");
        write_all(&jsonl);
        read_back("jsonl", &jsonl);
    }
    let reopened = JsonlRunEventStore::open_dir(&base, Planted::none()).expect("jsonl again");
    assert!(reopened.dropped_tails().is_empty(), "no tail is cut");
    read_back("jsonl reopened", &reopened);
}

fn journal_texts(j: &Journal) -> Vec<String> {
    j.rows()
        .iter()
        .map(|r| match r.blocks.first() {
            Some(JournalBlock::Text { text }) => text.clone(),
            _ => panic!("a text row"),
        })
        .collect()
}

#[test]
fn every_hostile_class_comes_back_byte_exact_from_the_journal() {
    let dir = tempfile::tempdir().expect("temp dir");
    let storages: [(&str, SharedStorage); 2] = [
        ("fs", Arc::new(FsStorage::new(dir.path()).expect("fs"))),
        ("mem", Arc::new(MemStorage::new())),
    ];
    let texts: Vec<String> = samples().into_iter().map(|(_, t)| t).collect();
    for (name, storage) in storages {
        let opts = JournalOptions::default();
        let mut j = Journal::create(storage.clone(), "j", opts.clone(), None).expect("create");
        for (n, text) in texts.iter().enumerate() {
            let origin = if n % 2 == 0 {
                Origin::Main
            } else {
                Origin::Subagent("helper".into())
            };
            let row = Row::text(Speaker::Human, origin.clone(), text.clone());
            j.append(origin, vec![row]).expect("append");
        }
        assert_eq!(journal_texts(&j), texts, "{name}: as written");
        drop(j);
        let reopened = Journal::open(storage, "j", opts).expect("reopen");
        assert_eq!(journal_texts(&reopened), texts, "{name}: reopened");
    }
}
