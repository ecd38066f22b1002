//! Seeded random probes of the journal: every seed runs each episode with random operations,
//! faults and interleavings drawn from one ChaCha stream, and checks the invariants
//! ([`super::invariants`]) after every step. With a planted bug on, most seeds find it; with none,
//! no seed may report anything. `histsim bugs` can call [`run_seed`] per planted journal bug.
//!
//! Episodes and the IDs they exercise:
//! - shared history with mirrors, resumes, late recorders and failing mirrors: J7, J8, J9, J12;
//! - one journal with replacements racing queued appends, shapes, density, incremental reads:
//!   J3, J11, J15, J16;
//! - resume with arrivals and faults after publishing: J4, J5, J6;
//! - processes killed and started, disposal with faults: J18;
//! - interleaved token counters and last-resort truncation: J13, J17;
//! - a random workload crashed at random points: J1, J2, J10, J15.

use std::sync::Arc;

use history::journal::{
    plan_truncation, Block, FaultOp, Journal, JournalOptions, JournalReader, JournalStore, Origin,
    Row, ScratchOptions, Session, SharedHistory, SharedStorage, Speaker, Tokenizer,
    TruncationOptions,
};
use history::{BugId, Planted};
use model::journal::{ModelHistory, ModelOp};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::check::check_state;
use super::explore::{run_workload, window_of};
use super::invariants::*;
use crate::disk::crash::crash_image;
use crate::disk::{CrashPoint, DiskEvent, SimDisk, SimDiskOptions};

/// How much each seed does.
#[derive(Clone, Copy, Debug)]
pub struct ProbeOptions {
    /// Operations of each stateful episode. Default 60.
    pub steps: usize,
    pub planted: Planted,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            steps: 60,
            planted: Planted::none(),
        }
    }
}

/// What one seed found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProbeReport {
    pub seed: u64,
    /// Invariant checks made.
    pub checks: u64,
    /// At most one violation per episode: an episode stops at its first.
    pub violations: Vec<Violation>,
}

impl ProbeReport {
    pub fn names(&self, id: BugId) -> bool {
        self.violations.iter().any(|v| v.bug_id == id)
    }
}

/// Runs every episode for `seed`.
pub fn run_seed(seed: u64, opts: &ProbeOptions) -> ProbeReport {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let jopts = JournalOptions::planted(opts.planted);
    let mut report = ProbeReport {
        seed,
        ..ProbeReport::default()
    };
    type Episode = fn(&mut ChaCha8Rng, &JournalOptions, usize, &mut u64) -> Result<(), Violation>;
    let episodes: [Episode; 6] = [
        shared_episode,
        journal_episode,
        resume_episode,
        dispose_episode,
        counting_episode,
        crash_episode,
    ];
    for episode in episodes {
        if let Err(v) = episode(&mut rng, &jopts, opts.steps, &mut report.checks) {
            report.violations.push(v);
        }
    }
    report
}

fn sub(name: &str) -> Origin {
    Origin::Subagent(name.into())
}

fn text_row(speaker: Speaker, origin: &Origin, text: String) -> Row {
    Row::text(speaker, origin.clone(), text)
}

/// An error no fault explains, reported under the invariant the episode guards.
fn unexpected(id: BugId, what: &str, e: impl std::fmt::Display) -> Violation {
    Violation {
        bug_id: id,
        message: format!("{what} failed with no fault injected: {e}"),
    }
}

fn count(checks: &mut u64, r: Result<(), Violation>) -> Result<(), Violation> {
    *checks += 1;
    r
}

/// The shared history: J7, J8, J9, J12.
fn shared_episode(
    rng: &mut ChaCha8Rng,
    jopts: &JournalOptions,
    steps: usize,
    checks: &mut u64,
) -> Result<(), Violation> {
    let disk = Arc::new(SimDisk::new(SimDiskOptions::default()));
    let storage: SharedStorage = disk.clone();
    let origins = [Origin::Main, sub("a"), sub("b")];
    let mut mirrors: Vec<(Origin, String)> = vec![
        (Origin::Main, "main.mirror".into()),
        (sub("a"), "a.mirror".into()),
    ];
    let primary = "shared.journal";
    let mut h = SharedHistory::create(storage.clone(), primary, jopts.clone())
        .map_err(|e| unexpected(BugId::J9, "create", e))?;
    for (o, n) in &mirrors {
        h.attach_mirror(o.clone(), n)
            .map_err(|e| unexpected(BugId::J9, "attach", e))?;
    }
    let mut truth: ModelHistory<Row> = ModelHistory::new();
    for step in 0..steps {
        let origin = origins[rng.random_range(0..origins.len())].clone();
        let n = truth.in_context.len();
        let roll = rng.random_range(0..100);
        if roll < 5 {
            drop(h);
            let names: Vec<&str> = mirrors.iter().map(|(_, n)| n.as_str()).collect();
            h = SharedHistory::resume(storage.clone(), primary, &names, jopts.clone())
                .map_err(|e| unexpected(BugId::J7, "resume", e))?;
        } else if roll < 8 && mirrors.len() < 3 {
            h.attach_mirror(sub("b"), "b.mirror")
                .map_err(|e| unexpected(BugId::J8, "late attach", e))?;
            mirrors.push((sub("b"), "b.mirror".into()));
        } else {
            let (op, fault) = shared_op(rng, roll, n, &origin, step, &truth);
            let failing = fault.then(|| mirrors[rng.random_range(0..mirrors.len())].1.clone());
            if let Some(f) = &failing {
                disk.fail(f, FaultOp::Append);
            }
            disk.reset_read_counters();
            let result = run_shared(&mut h, &origin, &op, &truth);
            let read = disk.total_bytes_read();
            disk.clear_faults();
            count(
                checks,
                check_mutation_read_cost(read, disk.bytes(primary).len() as u64),
            )?;
            match result {
                Ok(()) => {
                    truth = truth
                        .apply(&op)
                        .map_err(|e| unexpected(BugId::J8, "the model", e))?;
                }
                Err(e) if failing.is_none() => {
                    return Err(unexpected(BugId::J9, "a shared mutation", e))
                }
                Err(_) => {}
            }
            count(checks, check_origins(&truth.rows(), &h.primary().rows()))?;
            // What a crash right now would leave, before any fan-out still owed is written.
            let durable: Vec<Vec<u8>> =
                mirrors.iter().map(|(_, n)| disk.durable_bytes(n)).collect();
            h.settle().map_err(|e| unexpected(BugId::J9, "settle", e))?;
            for ((o, _), bytes) in mirrors.iter().zip(&durable) {
                let m = h.mirror(o).map(|m| m.journal().rows()).unwrap_or_default();
                count(checks, check_mirror_rows(o, &truth.rows(), &m))?;
                if failing.is_none() {
                    count(checks, check_mirror_durable(o, &truth.rows(), bytes, jopts))?;
                }
            }
            continue;
        }
        count(checks, check_origins(&truth.rows(), &h.primary().rows()))?;
        for (o, _) in &mirrors {
            let m = h.mirror(o).map(|m| m.journal().rows()).unwrap_or_default();
            count(checks, check_mirror_rows(o, &truth.rows(), &m))?;
        }
    }
    Ok(())
}

/// A random shared-history mutation as a model operation, and whether a mirror should fail it.
fn shared_op(
    rng: &mut ChaCha8Rng,
    roll: u32,
    n: usize,
    origin: &Origin,
    step: usize,
    truth: &ModelHistory<Row>,
) -> (ModelOp<Row>, bool) {
    let speaker = if *origin == Origin::Main {
        Speaker::Human
    } else {
        Speaker::Ai
    };
    let fresh = |k: usize| text_row(speaker, origin, format!("{origin:?} {step}.{k}"));
    let risky = rng.random_bool(0.3);
    match roll {
        8..=54 => (
            ModelOp::Append((0..rng.random_range(1..=2)).map(fresh).collect()),
            false,
        ),
        55..=66 if n > 0 => (
            ModelOp::SuffixCut(rng.random_range(1..=n.min(3)) as u64),
            risky,
        ),
        67..=72 => {
            let anchor =
                (n > 0 && rng.random_bool(0.8)).then(|| truth.in_context[rng.random_range(0..n)].0);
            (
                ModelOp::Insert {
                    anchor,
                    row: fresh(9),
                },
                false,
            )
        }
        73..=80 if n > 0 => {
            let (id, old) = &truth.in_context[rng.random_range(0..n)];
            let row = text_row(old.speaker, &old.origin, format!("transformed {step}"));
            (
                ModelOp::Density {
                    removed: Vec::new(),
                    replacements: vec![(*id, row)],
                },
                risky,
            )
        }
        81..=84 => (ModelOp::Clear, risky),
        85..=92 => {
            let rows = (0..rng.random_range(0..4))
                .map(|k| {
                    let o = [Origin::Main, sub("a"), sub("b")][k % 3].clone();
                    text_row(Speaker::Ai, &o, format!("restored {step}.{k}"))
                })
                .collect();
            (ModelOp::Replace(rows), risky)
        }
        93..=99 if n > 0 => (
            ModelOp::Compression {
                summary: text_row(Speaker::Ai, &Origin::Main, format!("summary {step}")),
                rows: rng.random_range(1..=n) as u64,
            },
            false,
        ),
        _ => (ModelOp::Append(vec![fresh(0)]), false),
    }
}

/// Runs a model operation on the shared history, mapping model ids to its ids by position.
fn run_shared(
    h: &mut SharedHistory,
    origin: &Origin,
    op: &ModelOp<Row>,
    truth: &ModelHistory<Row>,
) -> Result<(), history::journal::JournalError> {
    let id_at = |model_id: u64| {
        let p = truth.in_context.iter().position(|(i, _)| *i == model_id)?;
        h.primary().fold().in_context().get(p).map(|e| e.id)
    };
    let o = origin.clone();
    match op {
        ModelOp::Append(rows) => h.append(o, rows.clone()).map(|_| ()),
        ModelOp::SuffixCut(k) => h.rewind(o, *k).map(|_| ()),
        ModelOp::Insert { anchor, row } => {
            let anchor = anchor.and_then(id_at);
            h.insert_after(o, anchor, row.clone()).map(|_| ())
        }
        ModelOp::Density { replacements, .. } => {
            let (id, row) = &replacements[0];
            let id = id_at(*id).unwrap_or_default();
            h.transform(o, id, row.clone()).map(|_| ())
        }
        ModelOp::Clear => h.clear(o).map(|_| ()),
        ModelOp::Replace(rows) => h.restore(o, rows.clone()).map(|_| ()),
        ModelOp::Compression { summary, rows } => h.compress(o, summary.clone(), *rows).map(|_| ()),
    }
}

/// One journal: J3, J11, J15, J16.
fn journal_episode(
    rng: &mut ChaCha8Rng,
    jopts: &JournalOptions,
    steps: usize,
    checks: &mut u64,
) -> Result<(), Violation> {
    let disk = Arc::new(SimDisk::new(SimDiskOptions::default()));
    let name = "one.journal";
    let mut j = Journal::create(disk.clone(), name, jopts.clone(), None)
        .map_err(|e| unexpected(BugId::J3, "create", e))?;
    let mut reader = JournalReader::new(disk.clone(), name, jopts.clone());
    let inbox = j.inbox();
    let mut truth: ModelHistory<Row> = ModelHistory::new();
    for step in 0..steps {
        let n = truth.in_context.len();
        let row = |k: usize| text_row(Speaker::Human, &Origin::Main, format!("row {step}.{k}"));
        let roll = rng.random_range(0..100);
        let mut ops: Vec<ModelOp<Row>> = Vec::new();
        let res = match roll {
            0..=34 => {
                let rows: Vec<Row> = (0..rng.random_range(1..=3)).map(row).collect();
                ops.push(ModelOp::Append(rows.clone()));
                j.append(Origin::Main, rows).map(|_| ())
            }
            35..=54 => {
                let groups: Vec<Vec<Row>> = (0..rng.random_range(1..=3))
                    .map(|g| {
                        (0..rng.random_range(0..=2))
                            .map(|k| row(10 * g + k))
                            .collect()
                    })
                    .collect();
                ops.push(ModelOp::Replace(groups.concat()));
                let arrival = rng
                    .random_bool(0.6)
                    .then(|| text_row(Speaker::Ai, &sub("a"), format!("arrived {step}")));
                let run = |j: &mut Journal| -> Result<(), history::journal::JournalError> {
                    let mut g = j.begin_replace(Origin::Main)?;
                    if let Some(a) = &arrival {
                        inbox.submit(sub("a"), vec![a.clone()]);
                    }
                    for rows in &groups {
                        g.push_rows(rows.clone())?;
                    }
                    g.commit().map(|_| ())
                };
                if let Some(a) = &arrival {
                    ops.push(ModelOp::Append(vec![a.clone()]));
                }
                run(&mut j)
            }
            55..=74 if n > 0 => {
                let (kind, r) = match rng.random_range(0..3) {
                    0 => {
                        let k = rng.random_range(1..=n) as u64;
                        ops.push(ModelOp::SuffixCut(k));
                        ("suffix_cut", j.suffix_cut(Origin::Main, k))
                    }
                    1 => {
                        ops.push(ModelOp::Clear);
                        ("clear", j.clear(Origin::Main))
                    }
                    _ => {
                        let k = rng.random_range(1..=n) as u64;
                        let summary = row(99);
                        ops.push(ModelOp::Compression {
                            summary: summary.clone(),
                            rows: k,
                        });
                        ("compression", j.compress(Origin::Main, summary, k))
                    }
                };
                match r {
                    Ok(receipt) => count(checks, check_single_record_shape(kind, &receipt)),
                    Err(e) => return Err(unexpected(BugId::J15, kind, e)),
                }?;
                Ok(())
            }
            75..=84 if n > 0 => {
                let big = rng.random_bool(0.6);
                let ids: Vec<u64> = truth.in_context.iter().map(|(i, _)| *i).collect();
                let removed: Vec<u64> = ids
                    .iter()
                    .copied()
                    .filter(|_| rng.random_bool(0.3))
                    .collect();
                let replaced: Vec<(u64, Row)> = ids
                    .iter()
                    .filter(|_| rng.random_bool(if big { 0.9 } else { 0.2 }))
                    .map(|i| {
                        let words = if big { 1_500 } else { 2 };
                        let text = "dense text ".repeat(words);
                        (*i, text_row(Speaker::Tool, &Origin::Main, text))
                    })
                    .collect();
                if removed.is_empty() && replaced.is_empty() {
                    continue;
                }
                ops.push(ModelOp::Density {
                    removed: removed.clone(),
                    replacements: replaced.clone(),
                });
                let to_row_id = |i: u64| {
                    let p = truth
                        .in_context
                        .iter()
                        .position(|(m, _)| *m == i)
                        .unwrap_or(0);
                    j.fold().in_context()[p].id
                };
                let removed: Vec<_> = removed.into_iter().map(to_row_id).collect();
                let replacements: Vec<_> = replaced
                    .into_iter()
                    .map(|(i, r)| history::journal::DensityReplacement {
                        id: to_row_id(i),
                        row: r,
                    })
                    .collect();
                let r = j.density_mutation(Origin::Main, &removed, &replacements);
                count(checks, check_density_bounds(&disk.bytes(name)))?;
                r.map(|_| ())
            }
            85..=99 => {
                let appended = j.end_offset() - reader.offset();
                disk.reset_read_counters();
                let stats = reader
                    .statistics()
                    .map_err(|e| unexpected(BugId::J11, "a statistics read", e))?;
                count(checks, check_read_cost(disk.bytes_read(name), appended))?;
                count(checks, check_read_agrees(stats, j.fold().statistics()))?;
                Ok(())
            }
            _ => continue,
        };
        res.map_err(|e| unexpected(BugId::J3, "a journal mutation", e))?;
        for op in &ops {
            truth = truth
                .apply(op)
                .map_err(|e| unexpected(BugId::J3, "the model", e))?;
        }
        if (35..=54).contains(&roll) {
            count(checks, check_replacements_uninterleaved(&disk.bytes(name)))?;
        }
        if truth.rows() != j.rows() {
            return Err(Violation {
                bug_id: BugId::J3,
                message: format!(
                    "the journal holds {} rows, the model {} (a queued append was lost)",
                    j.rows().len(),
                    truth.rows().len()
                ),
            });
        }
    }
    Ok(())
}

/// Resume with arrivals and a fault after publishing: J4, J5, J6.
fn resume_episode(
    rng: &mut ChaCha8Rng,
    jopts: &JournalOptions,
    _steps: usize,
    checks: &mut u64,
) -> Result<(), Violation> {
    let disk = Arc::new(SimDisk::new(SimDiskOptions::default()));
    for round in 0..4 {
        let name = format!("resume{round}.journal");
        let mut j = Journal::create(disk.clone(), &name, jopts.clone(), None)
            .map_err(|e| unexpected(BugId::J5, "create", e))?;
        for k in 0..rng.random_range(1..12) {
            let row = text_row(Speaker::Human, &Origin::Main, format!("r{round}.{k}"));
            j.append(Origin::Main, vec![row])
                .map_err(|e| unexpected(BugId::J5, "append", e))?;
        }
        let loaded = j.rows();
        drop(j);
        let opts = JournalOptions {
            load_step_records: rng.random_range(1..6),
            ..jopts.clone()
        };
        let mut session = Session::new(disk.clone(), opts);
        let previous = format!("previous{round}.journal");
        session
            .start(&previous)
            .map_err(|e| unexpected(BugId::J4, "start", e))?;
        let fail_after_publish = rng.random_bool(0.4);
        let mut arrived: Vec<Row> = Vec::new();
        let mut draws: Vec<bool> = (0..64).map(|_| rng.random_bool(0.3)).collect();
        if fail_after_publish {
            disk.fail(&name, FaultOp::Append);
        }
        let result = session.resume(&name, &mut |p| {
            let arrive = draws.pop().unwrap_or(false) || (p.done && fail_after_publish);
            if arrive {
                let row = text_row(
                    Speaker::Human,
                    &Origin::Main,
                    format!("typed at {}", p.records_loaded),
                );
                arrived.push(row.clone());
                vec![row]
            } else {
                Vec::new()
            }
        });
        disk.clear_faults();
        match result {
            Err(_) => {
                let now = session.recording().map(|r| r.journal().name().to_string());
                *checks += 1;
                if now.as_deref() != Some(previous.as_str()) {
                    return Err(Violation {
                        bug_id: BugId::J4,
                        message: format!(
                            "a resume failed after publishing and the recording is {now:?}, not {previous}"
                        ),
                    });
                }
            }
            Ok(_) => {
                let rows = session
                    .recording()
                    .map(|r| r.journal().rows())
                    .unwrap_or_default();
                *checks += 1;
                let kept = rows.starts_with(&loaded)
                    && rows.ends_with(&arrived)
                    && rows.len() >= loaded.len() + arrived.len();
                if !kept {
                    return Err(Violation {
                        bug_id: BugId::J6,
                        message: format!(
                            "{} rows arrived while {} loaded; the resumed history has {} and does not end with them",
                            arrived.len(),
                            loaded.len(),
                            rows.len()
                        ),
                    });
                }
                let size = disk.bytes(&name).len();
                session
                    .resume(&name, &mut |_| Vec::new())
                    .map_err(|e| unexpected(BugId::J5, "a second resume", e))?;
                let again = session
                    .recording()
                    .map(|r| r.journal().rows())
                    .unwrap_or_default();
                *checks += 1;
                if again != rows || disk.bytes(&name).len() != size {
                    return Err(Violation {
                        bug_id: BugId::J5,
                        message: format!(
                            "a repeated resume changed the history ({} to {} rows) or the file ({size} to {} bytes)",
                            rows.len(),
                            again.len(),
                            disk.bytes(&name).len()
                        ),
                    });
                }
            }
        }
    }
    Ok(())
}

/// Processes killed and started, disposal with faults: J18.
fn dispose_episode(
    rng: &mut ChaCha8Rng,
    jopts: &JournalOptions,
    _steps: usize,
    checks: &mut u64,
) -> Result<(), Violation> {
    let disk = Arc::new(SimDisk::new(SimDiskOptions::default()));
    let storage: SharedStorage = disk.clone();
    let scratch = |owner: &str| ScratchOptions {
        root_dir: "scratch".into(),
        owner: owner.into(),
        planted: jopts.planted,
    };
    let mut dead: Vec<String> = Vec::new();
    for p in 0..4 {
        let owner = format!("p{p}");
        let alive = |o: &str| !dead.iter().any(|d| d == o);
        let (mut store, swept) =
            JournalStore::open(storage.clone(), jopts.clone(), &scratch(&owner), &alive)
                .map_err(|e| unexpected(BugId::J18, "open a store", e))?;
        let _ = swept;
        count(
            checks,
            check_swept(&dead, &storage.list("scratch").unwrap_or_default()),
        )?;
        let journal = format!("{owner}.journal");
        store
            .create_recorder(&journal, None)
            .map_err(|e| unexpected(BugId::J18, "create a recorder", e))?;
        let mut files = Vec::new();
        for k in 0..rng.random_range(1..4) {
            let f = store
                .scratch()
                .write(&format!("spool/{k}"), b"body")
                .map_err(|e| unexpected(BugId::J18, "write scratch", e))?;
            files.push(f);
        }
        match rng.random_range(0..3) {
            0 => {
                // Killed: no disposal.
                std::mem::forget(store);
                dead.push(owner);
            }
            kind => {
                let fault = kind == 2;
                if fault {
                    if rng.random_bool(0.5) {
                        disk.fail(&journal, FaultOp::Sync);
                    } else {
                        disk.fail(&files[0], FaultOp::Remove);
                    }
                }
                let result = store.dispose();
                disk.clear_faults();
                let left: Vec<String> = storage
                    .list(&format!("scratch/{owner}"))
                    .unwrap_or_default();
                count(checks, check_dispose(&result, fault, &left))?;
                // A process that disposed (even with leftovers) then exits: it is dead now.
                dead.push(owner);
            }
        }
    }
    Ok(())
}

/// Token counters and last-resort truncation: J13, J17.
fn counting_episode(
    rng: &mut ChaCha8Rng,
    jopts: &JournalOptions,
    _steps: usize,
    checks: &mut u64,
) -> Result<(), Violation> {
    let t = Tokenizer::o200k();
    let words = [
        "fn ",
        "main",
        "() {",
        " let x",
        " = 42;",
        "}",
        "The quick ",
        "brown fox",
        " 12345",
        "\n",
    ];
    let texts: Vec<Vec<&str>> = (0..rng.random_range(2..5))
        .map(|_| {
            (0..rng.random_range(1..5))
                .map(|_| words[rng.random_range(0..words.len())])
                .collect()
        })
        .collect();
    let mut counters: Vec<_> = texts.iter().map(|_| t.counter(jopts.planted)).collect();
    let mut fed = vec![0usize; texts.len()];
    let mut counts = vec![0u64; texts.len()];
    let mut open: Vec<usize> = (0..texts.len()).collect();
    while !open.is_empty() {
        let pick = rng.random_range(0..open.len());
        let k = open[pick];
        if fed[k] < texts[k].len() {
            counters[k].push(texts[k][fed[k]]);
            fed[k] += 1;
        } else {
            counts[k] = counters[k].end_row();
            open.swap_remove(pick);
        }
    }
    let alone: Vec<u64> = texts.iter().map(|p| t.count(&p.concat())).collect();
    count(checks, check_token_counts(&counts, &alone))?;

    let n = rng.random_range(32..160);
    let rows: Vec<Row> = (0..n)
        .map(|i| Row {
            speaker: Speaker::Tool,
            origin: Origin::Main,
            blocks: vec![Block::ToolResult {
                call_id: format!("c{i}"),
                name: "grep".into(),
                content: "m".repeat(rng.random_range(50..2_000)),
            }],
        })
        .collect();
    let total: u64 = rows.iter().map(|r| r.content_bytes() as u64).sum();
    let refs: Vec<&Row> = rows.iter().collect();
    let plan = plan_truncation(
        &refs,
        TruncationOptions {
            budget_bytes: total * rng.random_range(30..90) / 100,
            keep_bytes: rng.random_range(64..256),
            planted: jopts.planted,
        },
    );
    count(checks, check_truncation_pass(&plan, n))
}

/// A random workload crashed at random points: J1, J2, J10, J15.
fn crash_episode(
    rng: &mut ChaCha8Rng,
    jopts: &JournalOptions,
    _steps: usize,
    checks: &mut u64,
) -> Result<(), Violation> {
    let ops = rng.random_range(3..10);
    let first = rng.random_range(0..8);
    let (disk, model, spans) = run_workload(ops, first, jopts)
        .map_err(|(bug_id, message)| Violation { bug_id, message })?;
    let events = disk.events();
    let appends: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, DiskEvent::Append { .. }))
        .map(|(i, _)| i)
        .collect();
    for _ in 0..24 {
        let event = appends[rng.random_range(0..appends.len())];
        let len = match &events[event] {
            DiskEvent::Append { bytes, .. } => bytes.len() as u64,
            _ => 0,
        };
        let point = if rng.random_bool(0.2) {
            CrashPoint {
                event,
                cut_bytes: None,
                lose_unsynced: true,
            }
        } else {
            CrashPoint {
                event,
                cut_bytes: Some(rng.random_range(0..=len)),
                lose_unsynced: false,
            }
        };
        let (window, _) = window_of(&spans, point);
        *checks += 1;
        check_state(crash_image(&events, point), window, &model, jopts).map_err(
            |(bug_id, message)| Violation {
                bug_id,
                message: format!("crash at {point:?}: {message}"),
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_seeds_report_nothing() {
        for seed in 0..6 {
            let report = run_seed(seed, &ProbeOptions::default());
            assert!(
                report.violations.is_empty(),
                "seed {seed}: {:#?}",
                report.violations
            );
            assert!(report.checks > 100, "seed {seed}: {} checks", report.checks);
        }
    }

    #[test]
    fn a_seed_replays_identically() {
        let opts = ProbeOptions::default();
        assert_eq!(run_seed(42, &opts), run_seed(42, &opts));
    }

    #[test]
    fn every_planted_journal_bug_is_found_by_a_few_seeds() {
        let ids = [
            BugId::J1,
            BugId::J2,
            BugId::J3,
            BugId::J4,
            BugId::J5,
            BugId::J6,
            BugId::J7,
            BugId::J8,
            BugId::J9,
            BugId::J10,
            BugId::J11,
            BugId::J12,
            BugId::J13,
            BugId::J15,
            BugId::J16,
            BugId::J17,
            BugId::J18,
        ];
        for id in ids {
            let opts = ProbeOptions {
                planted: Planted::only(id),
                ..ProbeOptions::default()
            };
            let found = (0..4)
                .map(|seed| run_seed(seed, &opts))
                .filter(|r| r.names(id))
                .count();
            assert!(found >= 1, "{id}: no seed of 0..4 found it");
        }
    }
}
