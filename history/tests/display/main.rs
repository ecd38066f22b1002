//! Integration tests of `history::display`: the contract's rules, the two stores run through the
//! same bodies, projector properties, query plans, and one test per planted bug (P1 to P14).

mod gen;
mod plans;
#[cfg(feature = "planted")]
mod planted;
mod properties;
mod rules;
mod stores;
mod support;
