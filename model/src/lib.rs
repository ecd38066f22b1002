//! Reference models: small, obviously correct, and independent of the code under test.
//!
//! A model computes what a client must see from the ground truth of what agents emitted and from
//! the simulation's own fault decisions. It never reads persisted rows or journal bytes.
//!
//! **Architecture invariant:** `model` depends on no crate of this workspace.

pub mod journal;
