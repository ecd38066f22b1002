//! Seeds per second of the display and runs workloads with their system under test in this
//! process against the same seeds through the SUT protocol, with `histsim serve display|runs`
//! as the child (issue 11: the protocol path should reach half the in-process path).
//!
//! One job, seeds run one after another, so both paths pay their latency in full; a campaign
//! hides the protocol's waits with more jobs than cores (`histsim run --sut` defaults to two a
//! core). Run: `cargo bench -p sim --bench sut`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sim::run::{run_seed, RunConfig};
use sim::sut::SutOptions;

/// The allocator and page size of the `histsim` binary (sim/src/main.rs, sim/src/huge_pages.rs), which
/// the protocol path's child runs with, so the in-process path is measured as a campaign runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SEEDS: u64 = 20;

fn config(workload: &str, through_protocol: bool) -> RunConfig {
    let sut = through_protocol.then(|| {
        SutOptions::new(format!(
            "{} serve {workload}",
            env!("CARGO_BIN_EXE_histsim")
        ))
    });
    RunConfig {
        sut,
        ..RunConfig::only(workload)
    }
}

fn seeds(c: &mut Criterion) {
    sim::refuse_transparent_huge_pages();
    for workload in ["display", "runs"] {
        let mut g = c.benchmark_group(format!("{workload}_{SEEDS}_seeds"));
        g.sample_size(10);
        g.throughput(Throughput::Elements(SEEDS));
        for (name, through_protocol) in [("in_process", false), ("over_protocol", true)] {
            let config = config(workload, through_protocol);
            g.bench_function(name, |b| {
                b.iter(|| {
                    for seed in 0..SEEDS {
                        let report = run_seed(seed, &config);
                        assert!(
                            report.passed(),
                            "{workload} seed {seed}: {:?}",
                            report.failure
                        );
                    }
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, seeds);
criterion_main!(benches);
