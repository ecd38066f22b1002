//! The floor under the simulation's speed (issue 13): for the same seeds, a bare turmoil world with
//! the workload's shape (its hosts, its messages with their delays, its fan-out, its client
//! requests, the same tick and latency) but no system under test, no model and no checker, beside
//! the real workload. Their ratio says how much of a seed's time the network simulation itself
//! costs, so work on the rest can be aimed and judged.
//!
//! Run: `cargo bench -p sim --bench floor`. The shapes are read from each seed's generated
//! scenario (`sim::run::scenario_of`), so both benches play the same seeds. Before each pair it
//! prints how many turmoil steps a seed of each takes; `turmoil_idle_steps` times a step of a
//! world with nothing to do, the part of every step no change outside turmoil takes off.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use sim::display::world::TICK_MS as DISPLAY_TICK_MS;
use sim::display::{DisplayScenario, DisplayWorkload};
use sim::run::{run_seed, scenario_of, RunConfig};
use sim::runs::play::world::TICK_MS as RUNS_TICK_MS;
use sim::runs::scenario::{MessageSpec, Op, RunsScenario};
use sim::runs::RunsWorkload;
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use turmoil::net::{TcpListener, TcpStream};

/// The allocator and page size of the `histsim` binary (sim/src/main.rs, sim/src/huge_pages.rs), so the
/// workload bench measures what a campaign runs; the floor gets the same.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SEEDS: u64 = 20;
/// What the display world's rows weigh on the wire, about (one row frame).
const ROW_BYTES: usize = 400;
/// What a client request and its answer weigh, about.
const REQUEST_BYTES: usize = 32;
const ANSWER_BYTES: usize = 2048;

/// The builder settings both worlds use (sim/src/display/world.rs, sim/src/runs/play/world.rs).
fn builder(network_seed: u64, tick_ms: u64) -> turmoil::Builder {
    let mut b = turmoil::Builder::new();
    b.rng_seed(network_seed)
        .epoch(UNIX_EPOCH + Duration::from_secs(1_700_000_000))
        .simulation_duration(Duration::from_secs(600))
        .tick_duration(Duration::from_millis(tick_ms))
        .min_message_latency(Duration::from_micros(100))
        .max_message_latency(Duration::from_micros(900));
    b
}

async fn send(stream: &mut TcpStream, bytes: usize) -> std::io::Result<()> {
    stream.write_u32(bytes as u32).await?;
    stream.write_all(&vec![0x5a; bytes]).await
}

async fn receive(stream: &mut TcpStream) -> std::io::Result<Option<usize>> {
    let Ok(n) = stream.read_u32().await else {
        return Ok(None);
    };
    let mut body = vec![0; n as usize];
    stream.read_exact(&mut body).await?;
    Ok(Some(body.len()))
}

/// The client's request and the answer it waits for.
async fn ask(stream: &mut TcpStream) -> std::io::Result<()> {
    send(stream, REQUEST_BYTES).await?;
    receive(stream).await.map(|_| ())
}

/// Waits, polling in simulated time, until `count` reaches `n`.
async fn until(count: &Cell<usize>, n: usize) {
    while count.get() < n {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// `sim` run to its end: the simulated time it took.
fn simulated_time(mut sim: turmoil::Sim<'_>) -> Duration {
    sim.run().expect("the floor world finishes");
    sim.elapsed()
}

/// The display bus: takes the agents' steps and fans each out to every replica as a row.
fn display_bus(sim: &mut turmoil::Sim<'_>, replicas: u8) {
    sim.host("bus", move || async move {
        let agents = TcpListener::bind("0.0.0.0:7000").await?;
        let mut subscribers = Vec::new();
        for k in 0..replicas {
            subscribers.push(TcpStream::connect((format!("replica-{k}"), 7001)).await?);
        }
        let (mut publisher, _) = agents.accept().await?;
        while receive(&mut publisher).await?.is_some() {
            for sub in &mut subscribers {
                send(sub, ROW_BYTES).await?;
            }
        }
        Ok(())
    });
}

/// The display replicas: each counts the rows the bus delivers into `delivered` and answers
/// every client request.
fn display_replicas(sim: &mut turmoil::Sim<'_>, replicas: u8, delivered: &Rc<Cell<usize>>) {
    for k in 0..replicas {
        let delivered = delivered.clone();
        sim.host(format!("replica-{k}"), move || {
            let delivered = delivered.clone();
            async move {
                let bus = TcpListener::bind("0.0.0.0:7001").await?;
                let requests = TcpListener::bind("0.0.0.0:8080").await?;
                let (mut feed, _) = bus.accept().await?;
                tokio::task::spawn_local(async move {
                    while let Ok(Some(_)) = receive(&mut feed).await {
                        delivered.set(delivered.get() + 1);
                    }
                });
                loop {
                    let (mut client, _) = requests.accept().await?;
                    tokio::task::spawn_local(async move {
                        if let Ok(Some(_)) = receive(&mut client).await {
                            let _ = send(&mut client, ANSWER_BYTES).await;
                        }
                    });
                }
            }
        });
    }
}

/// The display agents: publish each step to the bus after its delay.
fn display_agents(sim: &mut turmoil::Sim<'_>, steps: Vec<u32>) {
    sim.host("agents", move || {
        let steps = steps.clone();
        async move {
            let mut bus = loop {
                match TcpStream::connect(("bus", 7000)).await {
                    Ok(s) => break s,
                    Err(_) => tokio::time::sleep(Duration::from_millis(1)).await,
                }
            };
            for after_ms in steps {
                tokio::time::sleep(Duration::from_millis(after_ms.into())).await;
                send(&mut bus, ROW_BYTES).await?;
            }
            std::future::pending::<()>().await;
            Ok(())
        }
    });
}

/// The display shape: agents publish every step to a bus that fans it out to every replica; the
/// client asks the turn's replica once a turn and waits until every replica has every row.
fn display_floor(s: &DisplayScenario) -> Duration {
    let steps: Vec<u32> = s
        .turns
        .iter()
        .flat_map(|t| t.steps.iter().map(|step| step.after_ms))
        .collect();
    let expected = steps.len() * s.replicas as usize;
    let delivered = Rc::new(Cell::new(0usize));
    let mut sim = builder(s.network_seed, DISPLAY_TICK_MS).build();
    display_bus(&mut sim, s.replicas);
    display_replicas(&mut sim, s.replicas, &delivered);
    display_agents(&mut sim, steps);
    let turns: Vec<u8> = s.turns.iter().map(|t| t.replica).collect();
    sim.client("client", async move {
        tokio::time::sleep(Duration::from_millis(1)).await;
        for replica in turns {
            let mut stream = TcpStream::connect((format!("replica-{replica}"), 8080)).await?;
            ask(&mut stream).await?;
        }
        until(&delivered, expected).await;
        Ok(())
    });
    simulated_time(sim)
}

/// The runs shape: the client dispatches each run to its worker, which plays its messages with
/// their delays; every read or rating is one request and answer; the client waits for every run.
fn runs_floor(s: &RunsScenario) -> Duration {
    let stopped = Rc::new(Cell::new(0usize));
    let mut sim = builder(s.network_seed, RUNS_TICK_MS).build();
    for w in 0..s.workers {
        let stopped = stopped.clone();
        let runs: Vec<(String, Vec<u32>)> = s
            .runs
            .iter()
            .filter(|r| r.worker == w)
            .map(|r| {
                (
                    r.id.clone(),
                    r.messages.iter().map(MessageSpec::pause_ms).collect(),
                )
            })
            .collect();
        sim.host(format!("worker-{w}"), move || {
            let (stopped, runs) = (stopped.clone(), runs.clone());
            async move {
                let listener = TcpListener::bind("0.0.0.0:9000").await?;
                loop {
                    let (mut stream, _) = listener.accept().await?;
                    let (stopped, runs) = (stopped.clone(), runs.clone());
                    tokio::task::spawn_local(async move {
                        let Ok(run) = stream.read_u32().await else {
                            return;
                        };
                        let Ok(Some(_)) = receive(&mut stream).await else {
                            return;
                        };
                        let _ = send(&mut stream, ANSWER_BYTES).await;
                        // A dispatch names its run (its index among the worker's runs, plus
                        // one); a read names none.
                        if let Some((_, delays)) =
                            (run as usize).checked_sub(1).and_then(|i| runs.get(i))
                        {
                            for ms in delays {
                                tokio::time::sleep(Duration::from_millis((*ms).into())).await;
                                let _ = send(&mut stream, ROW_BYTES).await;
                            }
                            stopped.set(stopped.get() + 1);
                        }
                    });
                }
            }
        });
    }
    let ops: Vec<(u8, usize)> = s.ops.iter().filter_map(|op| op_shape(s, op)).collect();
    let started = ops.iter().filter(|(_, n)| *n > 0).count();
    sim.client("client", async move {
        tokio::time::sleep(Duration::from_millis(1)).await;
        for (worker, dispatch) in ops {
            let mut stream = TcpStream::connect((format!("worker-{worker}"), 9000)).await?;
            stream.write_u32(dispatch as u32).await?;
            ask(&mut stream).await?;
        }
        until(&stopped, started).await;
        Ok(())
    });
    simulated_time(sim)
}

/// The worker an op goes to, and for a dispatch its run's index among that worker's runs (plus
/// one), 0 for a read.
fn op_shape(s: &RunsScenario, op: &Op) -> Option<(u8, usize)> {
    match op {
        Op::Start { run } => {
            let spec = s.runs.iter().find(|r| &r.id == run)?;
            let index = s
                .runs
                .iter()
                .filter(|r| r.worker == spec.worker)
                .position(|r| &r.id == run)?;
            Some((spec.worker, index + 1))
        }
        Op::Wait { .. } | Op::Sleep { .. } => None,
        _ => Some((0, 0)),
    }
}

fn bench_pair(c: &mut Criterion, workload: &str, tick_ms: u64, floor: &dyn Fn(u64) -> Duration) {
    let config = RunConfig::only(workload);
    print_simulated_steps(workload, tick_ms, &config, floor);
    let mut g = c.benchmark_group(format!("{workload}_{SEEDS}_seeds"));
    g.sample_size(10);
    g.throughput(Throughput::Elements(SEEDS));
    g.bench_function("floor", |b| {
        b.iter(|| {
            for seed in 0..SEEDS {
                floor(seed);
            }
        })
    });
    g.bench_function("workload", |b| {
        b.iter(|| {
            for seed in 0..SEEDS {
                assert!(run_seed(seed, &config).passed(), "{workload} seed {seed}");
            }
        })
    });
    g.finish();
}

/// Prints how many turmoil steps a seed of the workload and of its floor take, on average: each
/// step enters every host's runtime whether the host has work or not (`idle_steps`), so a
/// step's fixed cost times this count is what no change outside turmoil can take off a seed.
fn print_simulated_steps(
    workload: &str,
    tick_ms: u64,
    config: &RunConfig,
    floor: &dyn Fn(u64) -> Duration,
) {
    let mut workload_ms = 0;
    let mut floor_ms = 0;
    for seed in 0..SEEDS {
        workload_ms += run_seed(seed, config).sim_elapsed_ms;
        floor_ms += floor(seed).as_millis() as u64;
    }
    let (workload_ms, floor_ms) = (workload_ms / SEEDS, floor_ms / SEEDS);
    println!(
        "{workload}, seeds 0..{SEEDS}: a workload seed runs {workload_ms} simulated ms ({} \
         steps of {tick_ms} ms), a floor seed {floor_ms} ms ({} steps)",
        workload_ms / tick_ms,
        floor_ms / tick_ms
    );
}

/// What turmoil spends on a step of a world whose hosts all wait on a timer far away: entering
/// each host's runtime, running its (empty) task queue, reading and advancing its clock. The
/// display world has 4 to 8 hosts (the bus, 1 to 5 replicas, the agents, the client); 6 is its
/// median. Throughput is in steps.
fn idle_steps(c: &mut Criterion) {
    const STEPS: u64 = 100;
    let mut g = c.benchmark_group("turmoil_idle_steps");
    g.throughput(Throughput::Elements(STEPS));
    for hosts in [1, 6] {
        g.bench_function(format!("{hosts}_hosts"), |b| {
            b.iter_batched(
                || idle_world(hosts),
                |mut sim| {
                    for _ in 0..STEPS {
                        sim.step().expect("an idle step");
                    }
                    sim
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

fn idle_world(hosts: usize) -> turmoil::Sim<'static> {
    let mut sim = builder(0, DISPLAY_TICK_MS).build();
    for h in 0..hosts {
        sim.host(format!("host-{h}"), || async {
            tokio::time::sleep(Duration::from_secs(500)).await;
            Ok(())
        });
    }
    // The hosts' first step starts their tasks; the bench times the steps after it.
    sim.step().expect("the hosts start");
    sim
}

fn floors(c: &mut Criterion) {
    sim::refuse_transparent_huge_pages();
    let display = RunConfig::only("display");
    bench_pair(c, "display", DISPLAY_TICK_MS, &|seed| {
        let any = scenario_of(seed, &display);
        display_floor(any.get::<DisplayWorkload>().expect("a display scenario"))
    });
    let runs = RunConfig::only("runs");
    bench_pair(c, "runs", RUNS_TICK_MS, &|seed| {
        let any = scenario_of(seed, &runs);
        runs_floor(any.get::<RunsWorkload>().expect("a runs scenario"))
    });
}

criterion_group!(benches, floors, idle_steps);
criterion_main!(benches);
