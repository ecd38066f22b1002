//! Integration tests of the history journal, one module per area, named by catalog ID.
//!
//! Bodies that touch storage run on the real filesystem (a temp dir) and on memory through
//! [`on_every_storage`]; the `sim` crate runs the same kind of body on its simulated disk too.
//! Tests of planted bugs are gated on the `planted` feature and show the legacy behaviour failing
//! the invariant that its ID names.

mod barrier;
mod dispose;
mod mirrors;
mod reads;
mod resume;
mod torn;
mod transactions;

use std::sync::Arc;

use history::journal::{
    Block, Fold, FsStorage, JournalOptions, MemStorage, Origin, Row, SharedStorage, Speaker,
};
use history::Planted;

/// Runs `body` on a fresh real-filesystem storage and on a fresh memory storage.
pub fn on_every_storage(body: impl Fn(&str, SharedStorage)) {
    let dir = tempfile::tempdir().expect("temp dir");
    let fs = FsStorage::new(dir.path()).expect("fs storage");
    body("fs", Arc::new(fs));
    body("mem", Arc::new(MemStorage::new()));
}

pub fn opts() -> JournalOptions {
    JournalOptions::default()
}

pub fn opts_with(planted: Planted) -> JournalOptions {
    JournalOptions::planted(planted)
}

pub fn row(text: &str) -> Row {
    Row::text(Speaker::Human, Origin::Main, text)
}

pub fn sub_row(agent: &str, text: &str) -> Row {
    Row::text(Speaker::Ai, Origin::Subagent(agent.into()), text)
}

pub fn rows(texts: &[&str]) -> Vec<Row> {
    texts.iter().map(|t| row(t)).collect()
}

/// The first text of every in-context row.
pub fn texts(fold: &Fold) -> Vec<String> {
    fold.in_context().iter().map(|e| text_of(&e.row)).collect()
}

pub fn text_of(r: &Row) -> String {
    match r.blocks.first() {
        Some(Block::Text { text }) => text.clone(),
        _ => String::new(),
    }
}
