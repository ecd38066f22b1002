//! The worker processes of a live runs run as they come and go: started (and ready), each
//! one's stdout read into the recording, dispatched to over its stdin, signalled, killed and
//! reaped; every one stopped at the end.

use super::recording::{Dispatch, Proc, RunsRecording};
use super::setup::RunsSetup;
use crate::live::children::{spawn_logged, Tracked};
use crate::live::line::wall_us;
use std::cell::RefCell;
use std::process::Stdio;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::task::JoinHandle;

/// How long a started worker may take to open the store.
const READY_TIMEOUT_MS: u64 = 20_000;

struct Running {
    tracked: Tracked,
    stdin: ChildStdin,
    proc: Proc,
}

/// The run's worker processes and the recording every task writes into.
pub struct Workers {
    pub setup: RunsSetup,
    pub recording: Rc<RefCell<RunsRecording>>,
    running: RefCell<Vec<Option<Running>>>,
    readers: RefCell<Vec<JoinHandle<()>>>,
    /// How many processes of each worker were started.
    generations: RefCell<Vec<u32>>,
}

impl Workers {
    pub fn new(setup: RunsSetup) -> Workers {
        let n = usize::from(setup.workers);
        Workers {
            setup,
            recording: Rc::default(),
            running: RefCell::new((0..n).map(|_| None).collect()),
            readers: RefCell::default(),
            generations: RefCell::new(vec![0; n]),
        }
    }

    /// Starts worker `k` and waits for its `ready` line.
    pub async fn start(&self, k: u8) -> Result<(), String> {
        let name = format!("worker-{k}");
        let proc = {
            let mut generations = self.generations.borrow_mut();
            let generation = generations[usize::from(k)];
            generations[usize::from(k)] += 1;
            Proc {
                worker: k,
                generation,
            }
        };
        let mut program = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
        program
            .args(self.setup.worker_args(k))
            .stdin(Stdio::piped());
        let mut tracked = spawn_logged(program, name, &self.setup.dir)?;
        let (stdin, stdout) = (tracked.child.stdin.take(), tracked.child.stdout.take());
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
            tracked.stop().await;
            return Err("a worker without stdin or stdout".into());
        };
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let recording = self.recording.clone();
        let reader = tokio::task::spawn_local(async move {
            let mut lines = BufReader::new(stdout).lines();
            let mut ready = Some(ready_tx);
            while let Ok(Some(text)) = lines.next_line().await {
                recording.borrow_mut().worker_said(proc, &text);
                if let Some(tx) = ready.take() {
                    let _ = tx.send(());
                }
            }
        });
        self.readers.borrow_mut().push(reader);
        let waited = tokio::time::timeout(Duration::from_millis(READY_TIMEOUT_MS), ready_rx).await;
        if !matches!(waited, Ok(Ok(()))) {
            tracked.stop().await;
            return Err(format!(
                "worker-{k} was not ready within {READY_TIMEOUT_MS} ms (its log: {})",
                self.setup.dir.join(format!("worker-{k}.log")).display()
            ));
        }
        self.running.borrow_mut()[usize::from(k)] = Some(Running {
            tracked,
            stdin,
            proc,
        });
        Ok(())
    }

    /// SIGKILLs worker `k` (recorded just before the signal) and reaps it.
    pub async fn kill(&self, k: u8) {
        let taken = self.running.borrow_mut()[usize::from(k)].take();
        if let Some(running) = taken {
            self.recording
                .borrow_mut()
                .kills
                .push((running.proc, wall_us()));
            running.tracked.stop().await;
        }
    }

    pub fn signal(&self, k: u8, signal: rustix::process::Signal) -> Result<(), String> {
        match &self.running.borrow()[usize::from(k)] {
            Some(r) => r.tracked.signal(signal).map_err(|e| e.to_string()),
            None => Err(format!("worker-{k} is not running")),
        }
    }

    /// Sends run `run` to its worker; a worker that is down fails the dispatch (recorded).
    pub async fn dispatch(&self, run: usize) {
        let worker = self.setup.live.scenario.runs[run].worker;
        let taken = self.running.borrow_mut()[usize::from(worker)].take();
        let at_us = wall_us();
        let sent = match taken {
            None => Err(format!("worker-{worker} is down")),
            Some(mut r) => {
                let line = format!("run {run}\n");
                let sent = (r.stdin.write_all(line.as_bytes()).await).map_err(|e| e.to_string());
                self.running.borrow_mut()[usize::from(worker)] = Some(r);
                sent
            }
        };
        let dispatch = Dispatch {
            run,
            worker,
            at_us,
            sent,
        };
        self.recording.borrow_mut().dispatches.push(dispatch);
    }

    /// Closes every worker's stdin (no more dispatches), waits up to `grace` for them to
    /// finish the runs under way, then kills and reaps each, and lets each reader take the
    /// lines left.
    pub async fn stop_everything(&self, grace: Duration) {
        let running: Vec<Running> = self
            .running
            .borrow_mut()
            .iter_mut()
            .flat_map(Option::take)
            .collect();
        let deadline = tokio::time::Instant::now() + grace;
        for Running {
            mut tracked, stdin, ..
        } in running
        {
            drop(stdin);
            let _ = tokio::time::timeout_at(deadline, tracked.child.wait()).await;
            tracked.stop().await;
        }
        let readers: Vec<_> = self.readers.borrow_mut().drain(..).collect();
        for reader in readers {
            let _ = tokio::time::timeout(Duration::from_secs(5), reader).await;
        }
    }
}
