//! Integration tests of the simulator, grouped by area.

mod bad_input;
mod browser;
mod campaigns;
mod catalog;
mod determinism;
mod differences;
mod error_answers;
mod examples;
mod first_divergence;
mod first_wrong_answers;
mod fuzz;
mod hostile_text;
mod inspect;
mod journal;
mod live;
mod plain_messages;
mod planted;
mod project;
mod readme;
mod rules;
mod runs;
mod scenarios;
mod shrinking;
mod spool;
mod store_crash;
mod store_differences;
mod support;
mod sut;
mod sut_journal;
mod sut_time;
mod sut_world;
mod tidy;
mod user_workflow;

use support::histsim_cli;
