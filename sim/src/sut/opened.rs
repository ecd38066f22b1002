//! A system under test as a workload's world holds it: started, checked for the ops the
//! workload needs, opened on a fresh data directory, and poisoned by its first breach so a
//! broken child is never spoken to out of step.
//!
//! A process that closed cleanly at the end of a seed is kept for the next seed of the same
//! thread (`close`, then `open` on a fresh directory): an interpreter that takes seconds to load
//! its libraries starts once a campaign thread, not once a seed. A session's transcript is the
//! same either way (the greeting, then ids counting on from it), so the trace of a seed does not
//! depend on which seeds ran before it; `--check-determinism` replays seeds in fresh processes
//! and so catches a system whose `open` does not start afresh.
//!
//! A simulated crash of the system's host ([`OpenedSut::restart`]) kills the process and starts
//! a new one on the same data directory; a killed process is never kept for another seed.

use super::process::{ReadAnswer, Sent};
use super::protocol::{Durability, ErrorBody, OpenOptions, Opened, Request};
use super::{Breach, SutError, SutOptions, SutProcess};
use crate::store_kind::StoreKind;
use history::Planted;
use serde::de::DeserializeOwned;
use std::path::Path;

/// An opened system under test.
pub struct OpenedSut {
    /// `None` only once dropped (handed back to the thread's idle processes).
    process: Option<SutProcess>,
    /// The `hello` and `open` exchange, not yet handed to the trace.
    greeting: Vec<String>,
    /// The first breach: the child is killed then, and every later call answers it again.
    breached: Option<SutError>,
    /// Where this seed's part of the child's stderr begins.
    stderr_from: u64,
    /// The stderr of the processes this seed killed (simulated crashes), oldest first.
    killed_stderr: String,
    /// What `open` declared, last time.
    durability: Durability,
    /// How it was opened: a restart opens it again the same way.
    store: StoreKind,
    planted: Planted,
    /// Whether the world may crash the host (`open`'s `crashes`).
    crashes: bool,
    /// Kept alive while the system runs (and across its restarts): its data directory.
    data_dir: tempfile::TempDir,
    /// Every answer of this session (restarts included), by op and outcome.
    tally: crate::coverage::Coverage,
}

/// The bytes of a killed process's stderr kept for the seed's log.
const KILLED_STDERR_BYTES_MAX: usize = 512 * 1024;

/// Idle processes a campaign thread keeps between seeds, at most this many.
const IDLE_MAX: usize = 4;

thread_local! {
    static IDLE: std::cell::RefCell<Vec<SutProcess>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A process of `options` kept from an earlier seed of this thread, or a new one.
fn process_for(options: SutOptions) -> Result<SutProcess, SutError> {
    let kept = IDLE.with(|idle| {
        let mut idle = idle.borrow_mut();
        let at = idle.iter().position(|p| *p.options() == options)?;
        Some(idle.swap_remove(at))
    });
    match kept {
        Some(process) => Ok(process),
        None => SutProcess::start(options),
    }
}

/// An open session's greeting (the `hello` and `open` lines, the data directory shown as
/// `<data_dir>`) and the durability its `open` declared.
struct Session {
    greeting: Vec<String>,
    durability: Durability,
}

/// How a session is opened: `open`'s options.
#[derive(Clone, Copy)]
struct Opening {
    store: StoreKind,
    planted: Planted,
    crashes: bool,
}

/// Checks that `process` declared every op in `needs` and opens it on `data_dir`.
fn open_session(
    process: &mut SutProcess,
    data_dir: &Path,
    opening: Opening,
    needs: &[&str],
) -> Result<Session, SutError> {
    let Opening {
        store,
        planted,
        crashes,
    } = opening;
    process.begin_session();
    let fail = |process: &SutProcess, request: &str, why: String| SutError {
        request: request.to_string(),
        breach: Breach::Unexpected(why),
        stderr_tail: process.stderr_tail(),
    };
    let missing: Vec<&str> = needs
        .iter()
        .copied()
        .filter(|op| !process.supports(op))
        .collect();
    if !missing.is_empty() {
        let why = format!("the workload needs {missing:?}, which it did not declare");
        return Err(fail(process, "#1 hello", why));
    }
    let dir = data_dir.display().to_string();
    let opened = process.call(&Request::Open {
        data_dir: dir.clone(),
        options: OpenOptions {
            store: store.as_str().into(),
            planted: planted.active().map(|b| b.to_string()),
            crashes,
        },
    })?;
    let opened: Opened = match opened {
        Ok(answer) => serde_json::from_value(answer)
            .map_err(|e| fail(process, "#2 open", format!("not an open answer: {e}")))?,
        Err(e) => {
            return Err(fail(
                process,
                "#2 open",
                format!("open refused: {}", e.message),
            ))
        }
    };
    // The data directory's name is the one thing of a seed that differs between runs: the
    // trace shows it as `<data_dir>` so the trace hash stays the seed's.
    let dir_in_json = serde_json::to_string(&dir).expect("a string serializes");
    let greeting = process
        .take_transcript()
        .into_iter()
        .map(|line| line.replace(dir_in_json.trim_matches('"'), "<data_dir>"))
        .collect();
    Ok(Session {
        greeting,
        durability: opened.durability,
    })
}

impl OpenedSut {
    /// Starts the system, checks that it declared every op in `needs`, and opens it on a fresh
    /// data directory with `store` and `planted`, promising nothing about crashes of its host.
    pub fn start(
        options: SutOptions,
        store: StoreKind,
        planted: Planted,
        needs: &[&str],
    ) -> Result<OpenedSut, SutError> {
        Self::start_with(options, store, planted, true, needs)
    }

    /// [`OpenedSut::start`], telling the system whether the world may crash its host
    /// (`crashes`; `false` is a promise that lets a store keep its data in memory).
    pub fn start_with(
        options: SutOptions,
        store: StoreKind,
        planted: Planted,
        crashes: bool,
        needs: &[&str],
    ) -> Result<OpenedSut, SutError> {
        let opening = Opening {
            store,
            planted,
            crashes,
        };
        let mut process = process_for(options)?;
        let stderr_from = process.stderr_len();
        let data_dir = tempfile::tempdir().map_err(|e| SutError {
            request: "#2 open".into(),
            breach: Breach::Unexpected(e.to_string()),
            stderr_tail: process.stderr_tail(),
        })?;
        let session = open_session(&mut process, data_dir.path(), opening, needs)?;
        Ok(OpenedSut {
            process: Some(process),
            greeting: session.greeting,
            durability: session.durability,
            breached: None,
            stderr_from,
            killed_stderr: String::new(),
            store,
            planted,
            crashes,
            data_dir,
            tally: Default::default(),
        })
    }

    /// What the system's `open` declared it keeps across a crash of its host.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// A simulated crash of the system's host: kills the process (SIGKILL, no `close`), starts
    /// the same command again and opens it on the SAME data directory with the same options.
    /// The killed process is never handed to the idle pool; its stderr is kept for the log.
    /// The new `hello` and `open` lines come out of the next [`OpenedSut::take_transcript`].
    pub fn restart(&mut self) -> Result<(), SutError> {
        if let Some(breach) = &self.breached {
            return Err(breach.clone());
        }
        let from = self.stderr_from;
        let killed = self.process_mut();
        killed.kill();
        let log = killed.stderr_log(from, KILLED_STDERR_BYTES_MAX);
        let options = killed.options().clone();
        self.killed_stderr.push_str(&format!(
            "{log}\n==> killed (a simulated crash), restarted <==\n"
        ));
        let needs: Vec<&str> = Vec::new();
        let started = SutProcess::start(options).and_then(|mut process| {
            let dir = self.data_dir.path();
            let opening = Opening {
                store: self.store,
                planted: self.planted,
                crashes: self.crashes,
            };
            let session = open_session(&mut process, dir, opening, &needs)?;
            Ok((process, session))
        });
        match started {
            Ok((process, session)) => {
                // The killed process is dropped here (its Drop only reaps it), never pooled.
                self.process = Some(process);
                self.stderr_from = 0;
                self.greeting.extend(session.greeting);
                self.durability = session.durability;
                Ok(())
            }
            Err(breach) => {
                // The killed process stays in place (so the log can still be read) and the
                // session is poisoned: it never reaches the idle pool.
                self.breached = Some(breach.clone());
                Err(breach)
            }
        }
    }

    /// Sends `request` and decodes its answer as `T`: `Ok(Ok(answer))`, `Ok(Err(body))` the
    /// system's own refusal, `Err` a breach (this one, an earlier one, or an answer of another
    /// shape). The answer is parsed once, from its text, straight into `T`.
    pub fn call_for<T: DeserializeOwned>(
        &mut self,
        request: &Request,
    ) -> Result<Result<T, ErrorBody>, SutError> {
        let sent = self.send(request)?;
        self.receive_for(sent, request)
    }

    /// Sends `request` without waiting for its answer ([`OpenedSut::receive_for`] reads it).
    pub fn send(&mut self, request: &Request) -> Result<Sent, SutError> {
        if let Some(breach) = &self.breached {
            return Err(breach.clone());
        }
        Ok(self.process_mut().send(request))
    }

    /// The answer to `sent`, decoded as `T` (see [`OpenedSut::call_for`]).
    pub fn receive_for<T: DeserializeOwned>(
        &mut self,
        sent: Sent,
        request: &Request,
    ) -> Result<Result<T, ErrorBody>, SutError> {
        let answer = self.process_mut().receive(sent, request);
        super::tally::count(&mut self.tally, request.op(), &answer);
        if let Err(breach) = &answer {
            self.poison(breach.clone());
        }
        answer
    }

    /// Reads the answer line to `sent` without decoding it ([`SutProcess::read_answer`]), so
    /// the next request can go out first; [`OpenedSut::judge`] decodes it.
    pub fn read_ahead(&mut self, sent: Sent) -> Result<ReadAnswer, SutError> {
        let read = self.process_mut().read_answer(sent);
        if let Err(breach) = &read {
            // Poisoned at once: no later request waits out a timeout again.
            self.poison(breach.clone());
        }
        read
    }

    /// Decodes an answer read ahead as `T` (see [`OpenedSut::call_for`]).
    pub fn judge<T: DeserializeOwned>(
        &mut self,
        read: Result<ReadAnswer, SutError>,
        request: &Request,
    ) -> Result<Result<T, ErrorBody>, SutError> {
        let answer = read.and_then(|read| self.process_mut().judge(read, request));
        super::tally::count(&mut self.tally, request.op(), &answer);
        if let Err(breach) = &answer {
            self.poison(breach.clone());
        }
        answer
    }

    fn process_ref(&self) -> &SutProcess {
        self.process.as_ref().expect("present until dropped")
    }

    fn process_mut(&mut self) -> &mut SutProcess {
        self.process.as_mut().expect("present until dropped")
    }

    /// Breaks off: an answer of the wrong shape for `op`.
    pub fn unexpected(&mut self, op: &str, why: String) -> SutError {
        let breach = SutError {
            request: op.to_string(),
            breach: Breach::Unexpected(why),
            stderr_tail: self.process_ref().stderr_tail(),
        };
        self.poison(breach.clone());
        breach
    }

    fn poison(&mut self, breach: SutError) {
        if self.breached.is_none() {
            self.process_mut().kill();
            self.breached = Some(breach);
        }
    }

    /// What the system answered to `hello`.
    pub fn hello(&self) -> &super::protocol::Hello {
        self.process_ref().hello()
    }

    /// Whether the system declared `op` in `hello`.
    pub fn serves(&self, op: &str) -> bool {
        self.process_ref().supports(op)
    }

    /// The request and answer lines since the last call, `hello` and `open` first.
    /// Every answer of this session so far, by op and outcome ([`super::tally`]).
    pub fn tally(&self) -> &crate::coverage::Coverage {
        &self.tally
    }

    pub fn take_transcript(&mut self) -> Vec<String> {
        let mut lines = std::mem::take(&mut self.greeting);
        lines.extend(self.process_mut().take_transcript());
        lines
    }

    /// What the system wrote to its stderr in this seed (its last `bytes_max` bytes), the
    /// processes killed by simulated crashes first.
    pub fn stderr_log(&self, bytes_max: usize) -> String {
        let current = self.process_ref().stderr_log(self.stderr_from, bytes_max);
        format!("{}{current}", self.killed_stderr)
    }
}

impl Drop for OpenedSut {
    /// Closes the session; a process that closes cleanly waits for the thread's next seed.
    fn drop(&mut self) {
        if self.breached.is_some() {
            return;
        }
        let closed = self
            .process_mut()
            .call(&Request::Close {})
            .is_ok_and(|answer| answer.is_ok());
        if !closed {
            return;
        }
        let _ = self.process_mut().take_transcript();
        let Some(process) = self.process.take() else {
            return;
        };
        IDLE.with(|idle| {
            let mut idle = idle.borrow_mut();
            if idle.len() < IDLE_MAX {
                idle.push(process);
            }
        });
    }
}
