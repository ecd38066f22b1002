//! Pictures of a played world: one self-contained HTML page per seed (`histsim replay --html`,
//! the failing seeds of a report), a page per diverging seed of `histsim diff`, a campaign's
//! `index.html`, and a fuzzing campaign's `index.html` (coverage over time). No network and no script: inline SVG and CSS only.
//!
//! A page is drawn from what the world already records: the full trace (`keep_trace`), the
//! options, the violations, and the [`Facts`] a workload hands over beside its `details` (reads
//! with the model's expectation, the journal's record bytes at a crash, each spool's sealed
//! bytes, recovered histories and request bodies).
//! Drawing reads nothing the trace hash covers and decides nothing: it only shows.

mod campaign_page;
mod diff_page;
mod facts;
mod fuzz_page;
mod html;
mod journal_strip;
mod seed_page;
mod strip;
mod timeline;

pub use campaign_page::{campaign_page, CampaignPicture};
pub use diff_page::diff_page;
pub use facts::{Facts, ReadBox, Recovered, Strip, StripPart};
pub use fuzz_page::fuzz_page;
pub use journal_strip::journal_strip;
pub use seed_page::{seed_page, SeedPicture};
