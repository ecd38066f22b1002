//! The known differences S1 to S6 a run-event system declares in `hello`: a thread whose id has
//! a declared shape (S4: a dot) is kept from that system, every op on it left out and counted
//! under the ID; histsim's own stores, which declare nothing, are judged on the same thread; an
//! ID outside S1 to S6 is a breach.

use history::Planted;
use sim::runs::run_scenario;
use sim::runs::scenario::RunsScenario;
use sim::sut::SutOptions;
use sim::workload::{StoreKind, WorldConfig};

/// One run on a thread whose id holds a dot (S4's shape), waited for and read.
fn dotted_thread() -> RunsScenario {
    let text = r#"
        workers = 1
        [threads]
        t = "b1be1c2d-0030-4b00-8000-000000000030.v2"
        [[runs]]
        id = "run-1"
        thread = "t"
        user = "user-1"
        messages = [
          { kind = "human", text = "where does the dot go" },
          { kind = "ai", text = "into the thread id", after_ms = 1 },
        ]
        [[ops]]
        op = "start"
        run = "run-1"
        [[ops]]
        op = "wait"
        run = "run-1"
        [[ops]]
        op = "views"
        thread = "t"
    "#;
    toml::from_str(text).expect("a runs scenario")
}

/// `histsim serve runs` with `differences` put into its greeting (the only answer with `ops`).
fn declaring(differences: &str) -> WorldConfig {
    let command = format!(
        "{} serve runs | sed -u 's/\"ops\":/\"differences\":{differences},\"ops\":/'",
        env!("CARGO_BIN_EXE_histsim")
    );
    WorldConfig {
        sut: Some(std::sync::Arc::new(SutOptions::new(command))),
        ..WorldConfig::new(StoreKind::Sqlite, Planted::none())
    }
}

#[test]
fn a_declared_thread_id_shape_leaves_the_threads_ops_out_and_counts_them() {
    let run = run_scenario(&dotted_thread(), &declaring(r#"["S4"]"#));
    assert_eq!(run.failure, None);
    assert!(run.violations.is_empty(), "{:?}", run.violations);
    let s4: Vec<(&String, &u64)> = (run.left_out.counts.iter())
        .filter(|(what, _)| what.contains(" for S4 (the system declares it: "))
        .collect();
    assert_eq!(s4.len(), 1, "{:?}", run.left_out.counts);
    assert_eq!(*s4[0].1, 3, "start, wait and views");
    assert_eq!(run.coverage.get("runs.feature.thread_id_with_a_dot"), 0);
}

#[test]
fn histsims_own_stores_are_judged_on_the_same_thread() {
    for store in [StoreKind::Memory, StoreKind::Sqlite, StoreKind::Jsonl] {
        let run = run_scenario(&dotted_thread(), &WorldConfig::new(store, Planted::none()));
        assert_eq!(run.failure, None, "{store:?}");
        assert!(run.violations.is_empty(), "{store:?}: {:?}", run.violations);
        assert!(run.left_out.counts.is_empty(), "{:?}", run.left_out.counts);
        assert!(run.coverage.get("runs.feature.thread_id_with_a_dot") > 0);
    }
}

#[test]
fn an_undefined_difference_breaks_the_world() {
    let run = run_scenario(&dotted_thread(), &declaring(r#"["S9"]"#));
    let failure = run.failure.expect("a breach");
    assert!(failure.contains("S9"), "{failure}");
}
