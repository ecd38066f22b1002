//! Integration tests of `history::runs` (seed 003, R1 to R11): the same check bodies prove each
//! rule on the fixed code against both backends (`props`) and show that each planted bug breaks
//! it (`planted`, with `--features planted`); `upstream_store` holds DeerFlow's own store tests
//! transcribed as expectations, run on every backend.

mod checks;
#[cfg(feature = "planted")]
mod planted;
mod props;
mod support;
mod upstream_store;
