//! The SUT protocol's client against histsim's own reference adapter and against small
//! misbehaving adapters: every breach ends in a clear error naming the request, never a hang
//! and never an answer taken for the system's own.

use history::display::{AgentIdentity, MemoryDisplayStore, ProjectorOptions, ReplicaNode};
use history::Planted;
use sim::sut::protocol::{OpenOptions, Request};
use sim::sut::{Breach, SutOptions, SutProcess};

fn histsim() -> String {
    env!("CARGO_BIN_EXE_histsim").to_string()
}

/// A misbehaving adapter: `script` runs in sh after answering `hello` correctly.
fn adapter(script: &str) -> SutOptions {
    let hello = r#"read line; echo '{"id":1,"ok":{"system":"bad","version":"0","protocol":1,"ops":["hello","open","close","append","reconstruct","project"]}}'"#;
    SutOptions {
        timeout_ms: 1_500,
        // The breaches below are at `open`, which waits the start timeout.
        start_timeout_ms: 1_500,
        ..SutOptions::new(format!("{hello}; {script}"))
    }
}

fn open() -> Request {
    Request::Open {
        data_dir: std::env::temp_dir().display().to_string(),
        options: OpenOptions {
            store: "memory".into(),
            planted: None,
            crashes: true,
        },
    }
}

fn breach_of(script: &str) -> (Breach, String) {
    let mut sut = SutProcess::start(adapter(script)).expect("the greeting works");
    let e = sut.call(&open()).expect_err("a breach");
    (e.breach.clone(), e.to_string())
}

/// The breach of an adapter running `script` is of the `kind` pattern, and its message names
/// `words`.
macro_rules! assert_breach {
    ($script:expr, $kind:pat, $words:expr) => {{
        let (breach, shown) = breach_of($script);
        assert!(matches!(breach, $kind), "{breach:?}");
        assert!(shown.contains($words), "{shown}");
    }};
}

/// The rows a generated display conversation persists, as the display world writes them (event
/// ids and timestamps from the step numbers), and its primary agent.
fn conversation_rows(seed: u64) -> (String, AgentIdentity, Vec<String>) {
    use sim::display::rows::{encode_row, RowEnvelope};
    use sim::display::{generate::generate, DisplayOptions};
    let rng = sim::SeedRng::new(seed);
    let scenario = generate(rng, &DisplayOptions::from_seed(rng, None));
    let agent = |name: &str| scenario.agents.get(name).expect("a declared agent");
    let primary = AgentIdentity {
        agent_class: agent(&scenario.primary).class.clone(),
        agent_id: agent(&scenario.primary).id.clone(),
    };
    let mut rows = Vec::new();
    for step in scenario.turns.iter().flat_map(|t| &t.steps) {
        let event_id = format!("{:016x}", step.id);
        let env = RowEnvelope {
            agent_class: &agent(&step.agent).class,
            agent_id: &agent(&step.agent).id,
            thread_id: &scenario.thread_id,
            display_id: &scenario.displays[&step.display],
            run_id: &step.run,
            event_id: &event_id,
            created_at_ns: 1_700_000_000_000_000_000 + i64::from(step.id) * 1_000_000,
        };
        let row = encode_row(&env, &step.event, step.defect.as_ref());
        rows.push(String::from_utf8(row).expect("rows are UTF-8 JSON"));
    }
    (scenario.thread_id.clone(), primary, rows)
}

fn admitted(node: &mut ReplicaNode<MemoryDisplayStore>, rows: &[String]) -> serde_json::Value {
    let names: Vec<&str> = rows
        .iter()
        .map(|r| match node.deliver(r.as_bytes()).expect("stores") {
            history::display::Admission::Stored => "stored",
            history::display::Admission::Quarantined { .. } => "quarantined",
        })
        .collect();
    serde_json::json!(names)
}

#[test]
fn the_reference_adapter_answers_as_the_components_do_in_process() {
    let mut compared_messages = 0;
    for seed in 0..6 {
        let (thread, primary, rows) = conversation_rows(seed);
        let mut sut = SutProcess::start(SutOptions::new(format!("{} serve display", histsim())))
            .expect("starts");
        assert_eq!(sut.hello().system, "histsim-display");
        assert!(sut.supports("reconstruct") && !sut.supports("put_batch"));
        sut.call(&open()).expect("no breach").expect("opens");
        let appended = sut
            .call(&Request::Append {
                node: 0,
                rows: rows.clone(),
            })
            .expect("no breach")
            .expect("appends");
        let answer = sut
            .call(&Request::Reconstruct {
                node: 1,
                thread_id: thread.clone(),
                primary: Some(primary.clone()),
            })
            .expect("no breach")
            .expect("answers");
        let projected = sut
            .call(&Request::Project {
                rows: rows.clone(),
                primary: Some(primary.clone()),
            })
            .expect("no breach")
            .expect("projects");
        let mut node = ReplicaNode::new(
            MemoryDisplayStore::new(Planted::none()),
            ProjectorOptions::default(),
        );
        assert_eq!(
            appended["admitted"],
            admitted(&mut node, &rows),
            "seed {seed}"
        );
        let in_process = node
            .reconstruct(&thread, Some(&primary))
            .expect("reconstructs");
        compared_messages += in_process.messages.len();
        assert_eq!(
            answer,
            serde_json::to_value(&in_process).expect("serializes"),
            "seed {seed}"
        );
        let pure = history::display::project(&rows, Some(&primary), &ProjectorOptions::default());
        assert_eq!(
            projected,
            serde_json::to_value(pure).expect("serializes"),
            "seed {seed}"
        );
    }
    assert!(
        compared_messages > 6,
        "the conversations were not empty: {compared_messages}"
    );
}

#[test]
fn an_answer_that_is_not_json_is_a_breach_naming_the_request() {
    assert_breach!(
        "read line; echo 'hello there'",
        Breach::NotAResponse(_),
        "#2 open"
    );
}

#[test]
fn an_answer_to_another_request_is_a_breach() {
    let (breach, _) = breach_of(r#"read line; echo '{"id":7,"ok":{}}'"#);
    assert_eq!(
        breach,
        Breach::WrongId {
            expected: 2,
            got: 7
        }
    );
}

#[test]
fn unsupported_for_a_declared_op_is_a_breach() {
    assert_breach!(
        r#"read line; echo '{"id":2,"err":{"kind":"unsupported","message":"no"}}'"#,
        Breach::Unexpected(_),
        "declared in hello"
    );
}

#[test]
fn the_systems_own_refusal_is_an_answer_not_a_breach() {
    let mut sut = SutProcess::start(adapter(
        r#"read line; echo '{"id":2,"err":{"kind":"conflict","message":"busy"}}'"#,
    ))
    .expect("greets");
    let refused = sut
        .call(&open())
        .expect("not a breach")
        .expect_err("refused");
    assert_eq!(refused.message, "busy");
}

#[test]
fn an_exit_with_no_crash_simulated_is_a_breach_with_the_stderr_tail() {
    assert_breach!(
        "read line; echo 'store exploded' >&2; exit 3",
        Breach::Exited(_),
        "store exploded"
    );
}

#[test]
fn no_answer_within_the_timeout_is_a_breach_not_a_hang() {
    // Asleep, the adapter used no CPU: a grace is granted only when the machine is loaded.
    assert_breach!(
        "read line; sleep 30",
        Breach::Timeout { ms: 1_500, .. },
        "no answer within 1500 ms (--sut-start-timeout-ms)"
    );
}

#[test]
fn an_answer_over_the_size_bound_is_a_breach() {
    let mut options = adapter("read line; head -c 5000 /dev/zero | tr '\\0' 'x'; echo");
    options.response_bytes_max = 1_000;
    let mut sut = SutProcess::start(options).expect("greets");
    let e = sut.call(&open()).expect_err("too large");
    assert_eq!(e.breach, Breach::TooLarge { bytes_max: 1_000 });
}

#[test]
fn a_command_that_does_not_speak_the_protocol_fails_at_hello() {
    let e = SutProcess::start(SutOptions {
        timeout_ms: 1_500,
        ..SutOptions::new("echo I am not a system under test")
    })
    .err()
    .expect("no greeting");
    assert!(e.request.contains("hello"), "{e}");
    assert!(matches!(e.breach, Breach::NotAResponse(_)), "{e}");
}

#[test]
fn in_process_and_over_the_protocol_the_display_system_answers_alike_planted_bugs_included() {
    use history::BugId;
    use sim::display::system::{DisplaySystem, InProcess, OverProtocol};
    use sim::workload::{StoreKind, WorldConfig};
    let mut differences_planted_bugs_made = 0;
    for planted in [None, Some(BugId::P12), Some(BugId::P14)] {
        for store in [StoreKind::Memory, StoreKind::Sqlite] {
            for seed in 0..3 {
                let (thread, primary, rows) = conversation_rows(seed);
                let config = WorldConfig::new(store, Planted::from_option(planted));
                let mut here = InProcess::new(2, &config).expect("a store");
                let options = SutOptions::new(format!("{} serve display", histsim()));
                let mut there = OverProtocol::start(options, &config).expect("starts and opens");
                // Deliveries reach replica 0 only, in batches of one to three rows; replica 1
                // answers (P12 answers from its own).
                let rows: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
                for batch in rows.chunks(1 + (seed as usize % 3)) {
                    let a = here.deliver(0, batch).expect("in process");
                    let b = there.deliver(0, batch).expect("no breach");
                    assert_eq!(a.len(), batch.len());
                    assert_eq!(a, b, "{planted:?} {store:?} seed {seed}");
                }
                for node in [0, 1] {
                    let a = here
                        .reconstruct(node, &thread, &primary)
                        .expect("in process");
                    let b = there
                        .reconstruct(node, &thread, &primary)
                        .expect("no breach");
                    assert_eq!(a, b, "{planted:?} {store:?} seed {seed} node {node}");
                }
                let zero = here.reconstruct(0, &thread, &primary).expect("answers");
                let one = here.reconstruct(1, &thread, &primary).expect("answers");
                differences_planted_bugs_made += usize::from(planted.is_some() && zero != one);
            }
        }
    }
    // The comparison saw planted behaviour cross the boundary, not only clean answers.
    assert!(differences_planted_bugs_made > 0);
}
