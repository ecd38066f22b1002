//! Integration tests of `history::runs` (seed 003, R1 to R11): the same check bodies prove each
//! rule on the fixed code against the three backends (`props`) and show that each planted bug
//! breaks it (`planted`, with `--features planted`); `jsonl` holds the JSONL backend's crash
//! promises, `feedback` the feedback store and the messages view's feedback, transcribed from
//! upstream's tests; `upstream_store` holds DeerFlow's own store tests transcribed as
//! expectations, run on every backend.

mod checks;
mod feedback;
mod fence;
mod jsonl;
#[cfg(feature = "planted")]
mod planted;
mod props;
mod support;
mod upstream_ledger;
mod upstream_store;
