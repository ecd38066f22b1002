//! Live mode (`histsim live`): the display workload's topology on real processes. A real
//! nats-server fans every event out (NATS Core) to N replica processes, each persisting into one
//! shared SQLite file, while the seed's faults kill, pause and restart real processes. It runs on
//! the wall clock, records everything, and is judged by the display workload's own model and
//! checks; a failing run is written as a scenario file the simulation plays.
//!
//! Nothing here runs inside a simulated world: live mode alone uses real time and processes.

pub mod backend;
pub mod children;
pub mod compare;
pub mod delivery;
pub mod judge;
pub mod line;
pub mod outcome;
pub mod patterns;
pub mod plan;
pub mod read;
pub mod recording;
pub mod regression;
pub mod replica;
pub mod report;
pub mod run;
pub mod runs;
pub mod schedule;
pub mod seed_table;
mod settle;
pub mod setup;
pub mod state;
pub mod store_rows;
pub mod sut_store;

#[cfg(test)]
pub(crate) mod fixtures {
    use crate::display::DisplayScenario;

    /// Two replicas of a thread one agent publishes three chunks to, step k on display
    /// `on[k - 1]` (`main` or `other`), then `faults` (TOML `[[faults]]` tables).
    pub(crate) fn three_chunks(on: [&str; 3], faults: &str) -> DisplayScenario {
        let [d1, d2, d3] = on;
        let text = format!(
            r#"
thread_id = "t"
primary = "a"
replicas = 2
[agents.a]
class = "A"
id = "a1"
[displays]
main = "d1"
other = "d2"
[[turns]]
steps = [
  {{ id = 1, agent = "a", display = "{d1}", run = "r", event = {{ kind = "chunk", text = "x" }} }},
  {{ id = 2, agent = "a", display = "{d2}", run = "r", event = {{ kind = "chunk", text = "y" }} }},
  {{ id = 3, agent = "a", display = "{d3}", run = "r", event = {{ kind = "chunk", text = "z" }} }},
]
{faults}"#
        );
        toml::from_str(&text).expect("a scenario")
    }
}
