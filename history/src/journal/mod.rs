//! The file-backed history journal (seed 004).

pub mod row;

pub use row::{Block, Origin, Row, Speaker};
