//! A system under test as a workload's world holds it: started, checked for the ops the
//! workload needs, opened on a fresh data directory, and poisoned by its first breach so a
//! broken child is never spoken to out of step.

use super::protocol::{ErrorBody, OpenOptions, Request};
use super::{Breach, SutError, SutOptions, SutProcess};
use crate::workload::StoreKind;
use history::Planted;

/// An opened system under test.
pub struct OpenedSut {
    process: SutProcess,
    /// The `hello` and `open` exchange, not yet handed to the trace.
    greeting: Vec<String>,
    /// The first breach: the child is killed then, and every later call answers it again.
    breached: Option<SutError>,
    /// Kept alive while the system runs: its data directory.
    _data_dir: tempfile::TempDir,
}

impl OpenedSut {
    /// Starts the system, checks that it declared every op in `needs`, and opens it on a fresh
    /// data directory with `store` and `planted`.
    pub fn start(
        options: SutOptions,
        store: StoreKind,
        planted: Planted,
        needs: &[&str],
    ) -> Result<OpenedSut, SutError> {
        let mut process = SutProcess::start(options)?;
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
            return Err(fail(&process, "#1 hello", why));
        }
        let data_dir = tempfile::tempdir().map_err(|e| fail(&process, "#2 open", e.to_string()))?;
        let store = match store {
            StoreKind::Memory => "memory",
            StoreKind::Sqlite => "sqlite",
        };
        let opened = process.call(&Request::Open {
            data_dir: data_dir.path().display().to_string(),
            options: OpenOptions {
                store: store.into(),
                planted: planted.active().map(|b| b.to_string()),
            },
        })?;
        if let Err(e) = opened {
            let why = format!("open refused: {}", e.message);
            return Err(fail(&process, "#2 open", why));
        }
        // The data directory's name is the one thing of a seed that differs between runs: the
        // trace shows it as `<data_dir>` so the trace hash stays the seed's.
        let dir = data_dir.path().display().to_string();
        let dir_in_json = serde_json::to_string(&dir).expect("a string serializes");
        let greeting = process
            .take_transcript()
            .into_iter()
            .map(|line| line.replace(dir_in_json.trim_matches('"'), "<data_dir>"))
            .collect();
        Ok(OpenedSut {
            process,
            greeting,
            breached: None,
            _data_dir: data_dir,
        })
    }

    /// Sends `request` and decodes its answer as `T`: `Ok(Ok(answer))`, `Ok(Err(body))` the
    /// system's own refusal, `Err` a breach (this one, an earlier one, or an answer of another
    /// shape). The answer is parsed once, from its text, straight into `T`.
    pub fn call_for<T: serde::de::DeserializeOwned>(
        &mut self,
        request: &Request,
    ) -> Result<Result<T, ErrorBody>, SutError> {
        if let Some(breach) = &self.breached {
            return Err(breach.clone());
        }
        let answer = self.process.call_raw(request);
        if let Err(breach) = &answer {
            self.poison(breach.clone());
        }
        match answer? {
            Err(e) => Ok(Err(e)),
            Ok(raw) => match serde_json::from_str(raw.get()) {
                Ok(t) => Ok(Ok(t)),
                Err(e) => {
                    let why = format!("not a {} answer: {e}", request.op());
                    Err(self.unexpected(request.op(), why))
                }
            },
        }
    }

    /// Breaks off: an answer of the wrong shape for `op`.
    pub fn unexpected(&mut self, op: &str, why: String) -> SutError {
        let breach = SutError {
            request: op.to_string(),
            breach: Breach::Unexpected(why),
            stderr_tail: self.process.stderr_tail(),
        };
        self.poison(breach.clone());
        breach
    }

    fn poison(&mut self, breach: SutError) {
        if self.breached.is_none() {
            self.process.kill();
            self.breached = Some(breach);
        }
    }

    /// Whether the system declared `op` in `hello`.
    pub fn serves(&self, op: &str) -> bool {
        self.process.supports(op)
    }

    /// The request and answer lines since the last call, `hello` and `open` first.
    pub fn take_transcript(&mut self) -> Vec<String> {
        let mut lines = std::mem::take(&mut self.greeting);
        lines.extend(self.process.take_transcript());
        lines
    }

    /// What the system wrote to its stderr (its last `bytes_max` bytes).
    pub fn stderr_log(&self, bytes_max: usize) -> String {
        self.process.stderr_log(bytes_max)
    }
}
