//! One live runs run on this machine: the worker processes, the client dispatching the
//! scenario's runs, waiting for them and reading the views at the scenario's pace (and a
//! background client reading while writes land), the seed's kills and pauses at their wall
//! times; everything recorded. Every worker is stopped and reaped at the end, on a failure, and
//! on Ctrl-C or SIGTERM.

use super::client_reads;
use super::processes::Workers;
use super::recording::{ClientRead, ClientReceipt, RunsRecording};
use super::setup::RunsSetup;
use crate::live::line::wall_us;
use crate::live::plan::LiveFault;
use crate::live::run::{drive, every_few_hundred_ms, inject_all, kill_restart, pause, Ended};
use crate::runs::play::text_of;
use crate::runs::record::{Both, ReadKind};
use crate::runs::scenario::Op;
use crate::workload::StoreKind;
use history::runs::{
    current, thread_history, thread_messages, Category, Checkpointer, NewRunEvent, RunEventStore,
    ViewOptions,
};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

/// A wait for one run gives up after this long (a paused worker holds it up to 1.5 s).
const WAIT_MS_MAX: u64 = 20_000;

/// Runs `setup` and returns what it recorded.
pub fn run(setup: RunsSetup) -> Result<RunsRecording, Ended> {
    let text =
        serde_json::to_string(&setup.live.scenario).map_err(|e| Ended::Broken(e.to_string()))?;
    std::fs::write(setup.scenario_file(), text).map_err(|e| Ended::Broken(e.to_string()))?;
    // The schema is made once, before any worker opens the file. The JSONL store has one
    // process (its writer): the client reads it once that process is stopped.
    let open = || super::store_tap::open_store(setup.store_kind, &setup.store(), setup.planted);
    let client: Option<Rc<dyn RunEventStore>> = match setup.store_kind {
        StoreKind::Jsonl => None,
        _ => Some(Rc::from(open().map_err(Ended::Broken)?)),
    };
    let store_kind = setup.store_kind;
    let (store, planted) = (setup.store(), setup.planted);
    drive(
        || Ok(Rc::new(Workers::new(setup))),
        |workers| play(workers, client),
        |workers, played| async move {
            // A run that played lets the workers finish the runs under way.
            let grace = Duration::from_secs(if played { 2 } else { 0 });
            workers.stop_everything(grace).await;
            if played && store_kind == StoreKind::Jsonl {
                let store = super::store_tap::open_store(store_kind, &store, planted)?;
                read_every_thread(&workers, store.as_ref());
            }
            let recording = workers.recording.borrow().clone();
            Ok(recording)
        },
    )
}

/// The whole run: start the workers, play the client's ops under faults, wait for every run,
/// read every thread once more; the caller stops everything.
async fn play(workers: Rc<Workers>, client: Option<Rc<dyn RunEventStore>>) -> Result<(), String> {
    for k in 0..workers.setup.workers {
        workers.start(k).await?;
    }
    let started_us = wall_us();
    {
        let mut recording = workers.recording.borrow_mut();
        recording.started_us = started_us;
        recording.us_per_ms = workers.setup.us_per_ms;
    }
    let faults = tokio::task::spawn_local(inject_faults(workers.clone(), started_us));
    let reading = Rc::new(Cell::new(true));
    let background = (client.clone()).map(|client| {
        tokio::task::spawn_local(read_in_background(workers.clone(), client, reading.clone()))
    });
    let ops = workers.setup.live.scenario.ops.clone();
    for op in &ops {
        play_op(&workers, client.as_deref(), op).await;
    }
    workers.recording.borrow_mut().ops_done_us = wall_us();
    faults.await.map_err(|e| e.to_string())??;
    reading.set(false);
    if let Some(background) = background {
        let _ = background.await;
    }
    let runs = workers.setup.live.scenario.runs.len();
    for run in 0..runs {
        wait_for(&workers, run).await;
    }
    if let Some(client) = client {
        read_every_thread(&workers, client.as_ref());
    }
    Ok(())
}

/// Reads every thread's views once, after the last run stopped.
fn read_every_thread(workers: &Workers, client: &dyn RunEventStore) {
    let threads: Vec<String> = (workers.setup.live.scenario.threads.keys())
        .cloned()
        .collect();
    for thread in threads {
        read_views(workers, client, &thread);
    }
}

async fn play_op(workers: &Workers, client: Option<&dyn RunEventStore>, op: &Op) {
    let scenario = &workers.setup.live.scenario;
    match op {
        Op::Start { run } => {
            if let Some(r) = scenario.run_index(run) {
                workers.dispatch(r).await;
            }
        }
        Op::Wait { run } => {
            if let Some(r) = scenario.run_index(run) {
                wait_for(workers, r).await;
            }
        }
        Op::Sleep { ms } => {
            let us = (f64::from(*ms) * workers.setup.us_per_ms) as u64;
            tokio::time::sleep(Duration::from_micros(us)).await;
        }
        Op::Views { thread } => match client {
            Some(client) => read_views(workers, client, thread),
            // The JSONL store's one process is its writer: counted, never judged.
            None => workers.recording.borrow_mut().reads_not_made += 1,
        },
        Op::Receipt { run, attempt } => match (client, scenario.run_index(run)) {
            (Some(client), Some(r)) => receipt(workers, client, r, *attempt),
            (None, _) => workers.recording.borrow_mut().reads_not_made += 1,
            _ => {}
        },
        op if client_reads::is_read(op) => match client {
            Some(client) => read_op(workers, client, op),
            None => workers.recording.borrow_mut().reads_not_made += 1,
        },
        // The scenario was cut to the ops above (`super::scenario::cut`).
        _ => {}
    }
}

/// Waits until `run` is over (`RunsRecording::run_over`), at most `WAIT_MS_MAX`.
async fn wait_for(workers: &Workers, run: usize) {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(WAIT_MS_MAX);
    while !workers.recording.borrow().run_over(run) {
        if tokio::time::Instant::now() > deadline {
            workers.recording.borrow_mut().waits_given_up.push(run);
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The run's delivery receipt through `put_if_absent`, as a worker and its recovery path may
/// both write it (`run.delivery`, category `outputs`, content `{"attempt": attempt}`).
fn receipt(workers: &Workers, client: &dyn RunEventStore, r: usize, attempt: u32) {
    let scenario = &workers.setup.live.scenario;
    let spec = &scenario.runs[r];
    let event = NewRunEvent {
        thread_id: scenario
            .threads
            .get(&spec.thread)
            .cloned()
            .unwrap_or_default(),
        run_id: spec.id.clone(),
        user_id: spec.user.clone(),
        event_type: current::RUN_DELIVERY.to_string(),
        category: Category::Outputs,
        content: serde_json::json!({ "attempt": attempt }).into(),
        metadata: serde_json::json!({}),
        created_at_ns: (wall_us() as i64) * 1000,
    };
    let answer = text_of(client.put_if_absent(event.clone()));
    let at_us = wall_us();
    let receipt = ClientReceipt {
        at_us,
        run: r,
        event,
        answer,
    };
    workers.recording.borrow_mut().receipts.push(receipt);
}

/// A read is tried again when a write landed during it, at most this many times.
const READ_ATTEMPTS_MAX: u32 = 20;

/// One read of a thread's views from the shared store, as the runs world's client reads them
/// (no checkpoint: a thread without message rows has no history).
fn read_views(workers: &Workers, client: &dyn RunEventStore, thread: &str) {
    let scenario = &workers.setup.live.scenario;
    let tid = scenario.threads.get(thread).cloned().unwrap_or_default();
    let options = ViewOptions {
        page_size_events: scenario.page_size_events,
        planted: workers.setup.planted,
    };
    read_still(workers, client, thread, || {
        let count = text_of(client.count_messages(&tid));
        let history = text_of(thread_history(client, &Checkpointer::new(), &tid, &options));
        let messages = text_of(thread_messages(client, &tid, &options));
        ReadKind::Views {
            count: Both::new(count.clone(), count),
            history: Both::new(history.clone(), history),
            messages: Both::new(messages.clone(), messages),
        }
    });
}

/// One of the scenario's other reads (`super::client_reads`) from the shared store.
fn read_op(workers: &Workers, client: &dyn RunEventStore, op: &Op) {
    let scenario = &workers.setup.live.scenario;
    let Some(thread) = client_reads::thread_of(scenario, op) else {
        return;
    };
    read_still(workers, client, &thread, || {
        client_reads::read(scenario, client, op).expect("a read op of the scenario")
    });
}

/// Records the read `ask` makes of `thread`. The world reads in one instant; here a read is
/// several calls while other processes write, so the thread's events are counted before and
/// after and the read is tried again when a write landed between (the store only grows while
/// the client reads: an unchanged count is an unchanged thread); one that never holds still
/// is counted, not judged.
fn read_still(
    workers: &Workers,
    client: &dyn RunEventStore,
    thread: &str,
    ask: impl Fn() -> ReadKind,
) {
    let tid = (workers.setup.live.scenario.threads.get(thread))
        .cloned()
        .unwrap_or_default();
    for _ in 0..READ_ATTEMPTS_MAX {
        let started_us = wall_us();
        let before = client.count_events(&tid).ok();
        let kind = ask();
        if before.is_some() && client.count_events(&tid).ok() != before {
            workers.recording.borrow_mut().reads_retried += 1;
            continue;
        }
        let read = ClientRead {
            thread: thread.to_string(),
            started_us,
            ended_us: wall_us(),
            kind,
        };
        workers.recording.borrow_mut().reads.push(read);
        return;
    }
    workers.recording.borrow_mut().reads_never_still += 1;
}

/// A client reading a random thread's views every few hundred milliseconds while writes land.
async fn read_in_background(
    workers: Rc<Workers>,
    client: Rc<dyn RunEventStore>,
    reading: Rc<Cell<bool>>,
) {
    let threads: Vec<String> = (workers.setup.live.scenario.threads.keys())
        .cloned()
        .collect();
    every_few_hundred_ms(workers.setup.seed, reading, threads.len(), |t| {
        read_views(&workers, client.as_ref(), &threads[t]);
        std::future::ready(())
    })
    .await;
}

/// The plan's faults, each at its wall time, each healed before the next.
async fn inject_faults(workers: Rc<Workers>, started_us: u64) -> Result<(), String> {
    let faults = workers.setup.plan.faults.clone();
    let recorded = |f| workers.recording.borrow_mut().faults.push(f);
    inject_all(
        &faults,
        started_us,
        |fault| inject(&workers, fault),
        recorded,
    )
    .await;
    Ok(())
}

async fn inject(workers: &Workers, fault: LiveFault) -> Result<(), String> {
    match fault {
        LiveFault::KillRestart { replica, down_ms } => {
            kill_restart(workers.kill(replica), down_ms, workers.start(replica)).await
        }
        LiveFault::Pause { replica, ms } => {
            pause(|signal| workers.signal(replica, signal), ms).await
        }
        LiveFault::ServerRestart { .. } => Err("a runs run has no server to restart".into()),
    }
}
