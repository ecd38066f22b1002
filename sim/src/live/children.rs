//! Every process a live run starts (nats-server and the replicas), tracked so that each one is
//! stopped and reaped at the end: after a clean run, a failure, or Ctrl-C / SIGTERM. Each child
//! is also killed when its handle is dropped, and nats-server and the replicas die with
//! `histsim live` itself (their parent-death signal) even when that is killed by SIGKILL.

use super::line::ReplicaLine;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

/// How long a started process may take to be ready.
const READY_TIMEOUT_MS: u64 = 20_000;

/// A started child and what it is.
pub struct Tracked {
    pub what: String,
    pub child: Child,
}

impl Tracked {
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Sends `signal` (SIGSTOP, SIGCONT) to the child.
    pub fn signal(&self, signal: rustix::process::Signal) -> std::io::Result<()> {
        let pid = self
            .pid()
            .and_then(|p| rustix::process::Pid::from_raw(p as i32));
        let pid = pid.ok_or_else(|| std::io::Error::other(format!("{} has exited", self.what)))?;
        rustix::process::kill_process(pid, signal).map_err(std::io::Error::from)
    }

    /// SIGKILLs the child (a stopped one too) and reaps it.
    pub async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = self.signal(rustix::process::Signal::CONT);
        let _ = self.child.wait().await;
    }
}

/// Finds a free loopback port (bound, then released for the child to take).
pub fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

/// The log file a child writes its stderr to, in the run's directory.
pub fn log_file(dir: &Path, name: &str) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(format!("{name}.log")))
}

/// Starts `command` as the child `name`, its stdout piped and its stderr appended to
/// `{name}.log` in `dir`; killed when its handle is dropped.
pub fn spawn_logged(mut command: Command, name: String, dir: &Path) -> Result<Tracked, String> {
    let log = log_file(dir, &name).map_err(|e| e.to_string())?;
    let child = command
        .stdout(Stdio::piped())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {name}: {e}"))?;
    Ok(Tracked { what: name, child })
}

/// Starts nats-server on `127.0.0.1:port` and waits until it accepts connections.
pub async fn start_nats(program: &Path, port: u16, dir: &Path) -> Result<Tracked, String> {
    let log = log_file(dir, "nats-server").map_err(|e| e.to_string())?;
    let mut command = Command::new(program);
    command
        .args(["-a", "127.0.0.1", "-p", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true);
    // SAFETY: the hook runs in the forked child before exec and only makes one system call
    // (prctl), which is async-signal-safe. The server dies with `histsim live`, SIGKILL included.
    unsafe {
        command.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(std::io::Error::from)
        });
    }
    let child = command
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
    let server = Tracked {
        what: "nats-server".into(),
        child,
    };
    let deadline = tokio::time::Instant::now() + Duration::from_millis(READY_TIMEOUT_MS);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if tokio::time::Instant::now() > deadline {
            server.stop().await;
            return Err(format!(
                "nats-server did not listen on 127.0.0.1:{port} within {READY_TIMEOUT_MS} ms (its log: {})",
                dir.join("nats-server.log").display()
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(server)
}

/// A replica process, started and ready: listening for reads and subscribed.
pub struct StartedReplica {
    pub tracked: Tracked,
    pub port: u16,
    /// Its stdout after the lines that said it was ready.
    pub lines: Lines<BufReader<ChildStdout>>,
    /// The lines read while waiting for it to be ready (its first `subscribed`).
    pub early: Vec<ReplicaLine>,
}

/// How to start replica `index`: the program (this histsim) and its arguments.
pub struct ReplicaCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// Starts replica `index` and waits until it listens and is subscribed.
pub async fn start_replica(
    index: u8,
    command: &ReplicaCommand,
    dir: &Path,
) -> Result<StartedReplica, String> {
    let mut program = Command::new(&command.program);
    program.args(&command.args).stdin(Stdio::null());
    let mut tracked = spawn_logged(program, format!("replica-{index}"), dir)?;
    let stdout = tracked.child.stdout.take();
    let Some(stdout) = stdout else {
        tracked.stop().await;
        return Err("a replica without stdout".into());
    };
    let mut lines = BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(Duration::from_millis(READY_TIMEOUT_MS), async {
        let (mut port, mut early) = (None, Vec::new());
        while let Some(text) = lines.next_line().await.ok().flatten() {
            match ReplicaLine::parse(&text) {
                Some(ReplicaLine::Listening { port: p }) => port = Some(p),
                Some(line @ ReplicaLine::Subscribed { .. }) => {
                    early.push(line);
                    return port.map(|p| (p, early));
                }
                Some(line) => early.push(line),
                None => {}
            }
        }
        None
    })
    .await;
    match ready {
        Ok(Some((port, early))) => Ok(StartedReplica {
            tracked,
            port,
            lines,
            early,
        }),
        _ => {
            let log = dir.join(format!("{}.log", tracked.what));
            let what = tracked.what.clone();
            tracked.stop().await;
            Err(format!(
                "{what} was not ready within {READY_TIMEOUT_MS} ms (its log: {})",
                log.display()
            ))
        }
    }
}
