//! A system under test in a child process, spoken to over the SUT protocol.
//!
//! Every way a child can misbehave ends in a [`SutError`] naming the request and carrying the
//! tail of its stderr: an answer that is not JSON or not a protocol response, a wrong id, an op
//! it declared but calls unsupported, an exit nobody asked for, an answer over the size bound,
//! or no answer within the timeout. Never a hang, and never an answer taken for the system's own.
//!
//! A reader thread moves the child's stdout lines into a channel so a missing answer can time
//! out. It only moves bytes: requests and answers stay strictly alternating, so the trace of a
//! seed does not depend on it. The timeout is wall time by necessity (the child is a real
//! process); it decides only whether a seed fails as a broken world, never what it shows.

use super::protocol::{ErrorBody, ErrorKind, Hello, RawResponseLine, Request, RequestLine};
use serde_json::value::RawValue;
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

/// How to start and bound a system under test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SutOptions {
    /// The command line: run directly when it is plain words, else by `sh -c`.
    pub command: String,
    /// Longest wait for one answer, in wall milliseconds.
    pub timeout_ms: u64,
    /// Longest wait for the answer to `hello` of a process just started (an interpreter loading
    /// its libraries), in wall milliseconds; at least `timeout_ms`.
    pub startup_timeout_ms: u64,
    /// Longest answer line accepted, in bytes.
    pub response_bytes_max: usize,
}

impl SutOptions {
    pub fn new(command: impl Into<String>) -> Self {
        SutOptions {
            command: command.into(),
            timeout_ms: 10_000,
            startup_timeout_ms: 60_000,
            response_bytes_max: 64 * 1024 * 1024,
        }
    }
}

/// How the child broke the protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Breach {
    /// It could not be started.
    Spawn(String),
    /// It exited (or closed its stdout) when no crash was simulated.
    Exited(String),
    /// No answer within the timeout.
    Timeout { ms: u64 },
    /// An answer line over the bound.
    TooLarge { bytes_max: usize },
    /// An answer that is not a protocol response.
    NotAResponse(String),
    /// An answer to another request.
    WrongId { expected: u64, got: u64 },
    /// `unsupported` for an op it declared in `hello`, or an answer of the wrong shape.
    Unexpected(String),
}

/// A system under test that broke the protocol: the seed ends as a world failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SutError {
    /// The request, as `#id op`.
    pub request: String,
    pub breach: Breach,
    /// The last lines of the child's stderr.
    pub stderr_tail: String,
}

impl fmt::Display for SutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match &self.breach {
            Breach::Spawn(e) => format!("could not be started: {e}"),
            Breach::Exited(status) => format!("exited ({status}) with no crash simulated"),
            Breach::Timeout { ms } => format!("gave no answer within {ms} ms"),
            Breach::TooLarge { bytes_max } => format!("answered over {bytes_max} bytes"),
            Breach::NotAResponse(e) => format!("answered something that is not a response: {e}"),
            Breach::WrongId { expected, got } => {
                format!("answered request {got} when {expected} was asked")
            }
            Breach::Unexpected(e) => format!("answered unexpectedly: {e}"),
        };
        write!(
            f,
            "the system under test, at request {}, {what}",
            self.request
        )?;
        if !self.stderr_tail.is_empty() {
            write!(f, "; its stderr ends:\n{}", self.stderr_tail)?;
        }
        Ok(())
    }
}

impl std::error::Error for SutError {}

/// What the reader thread hands over.
enum Line {
    Text(Vec<u8>),
    TooLong,
    Closed,
}

/// A running child speaking the protocol.
pub struct SutProcess {
    options: SutOptions,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Line>,
    stderr: tempfile::NamedTempFile,
    next_id: u64,
    hello: Option<Hello>,
    /// Every request and answer line since the last [`SutProcess::take_transcript`], `>` and `<`
    /// first: the world records them in its trace, so the trace hash covers every answer.
    transcript: Vec<String>,
    /// The `hello` exchange of this process, shown again at the start of every session.
    greeting: Vec<String>,
}

impl SutProcess {
    /// Starts the child and greets it; the answer names the ops it supports.
    pub fn start(options: SutOptions) -> Result<SutProcess, SutError> {
        let spawn_error = |e: String| SutError {
            request: "#0 spawn".into(),
            breach: Breach::Spawn(e),
            stderr_tail: String::new(),
        };
        let stderr = tempfile::NamedTempFile::new().map_err(|e| spawn_error(e.to_string()))?;
        let log = stderr.reopen().map_err(|e| spawn_error(e.to_string()))?;
        let mut child = command_of(&options.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| spawn_error(format!("{}: {e}", options.command)))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let lines = spawn_reader(stdout, options.response_bytes_max);
        let mut sut = SutProcess {
            options,
            child,
            stdin,
            lines,
            stderr,
            next_id: 0,
            hello: None,
            transcript: Vec::new(),
            greeting: Vec::new(),
        };
        let timeout_ms = sut.options.timeout_ms;
        sut.options.timeout_ms = timeout_ms.max(sut.options.startup_timeout_ms);
        let hello = sut.call(&Request::Hello {
            protocol: super::protocol::PROTOCOL_VERSION,
        });
        sut.options.timeout_ms = timeout_ms;
        let hello = hello?;
        let hello: Hello = match hello {
            Ok(v) => serde_json::from_value(v)
                .map_err(|e| sut.breach("#1 hello", Breach::Unexpected(e.to_string())))?,
            Err(e) => {
                let breach = Breach::Unexpected(format!("hello refused: {}", e.message));
                return Err(sut.breach("#1 hello", breach));
            }
        };
        sut.hello = Some(hello);
        sut.greeting = sut.take_transcript();
        Ok(sut)
    }

    /// How this process was started.
    pub fn options(&self) -> &SutOptions {
        &self.options
    }

    /// Starts a session (before its `open`): ids count on from the greeting's, as in a process
    /// just started, and the transcript begins with the greeting. So a session's lines are the
    /// same whether the process is new or was kept from an earlier seed.
    pub fn begin_session(&mut self) {
        self.next_id = 1;
        self.transcript = self.greeting.clone();
    }

    /// How many bytes the child has written to its stderr so far.
    pub fn stderr_len(&self) -> u64 {
        std::fs::metadata(self.stderr.path()).map_or(0, |m| m.len())
    }

    /// What the system said of itself.
    pub fn hello(&self) -> &Hello {
        self.hello.as_ref().expect("greeted at start")
    }

    /// Whether the system declared `op`.
    pub fn supports(&self, op: &str) -> bool {
        self.hello().ops.iter().any(|o| o == op)
    }

    /// Sends `request` and waits for its answer: `Ok(Ok(value))` the system's answer,
    /// `Ok(Err(body))` the system's own refusal (part of what it shows), `Err` a breach.
    pub fn call(
        &mut self,
        request: &Request,
    ) -> Result<Result<serde_json::Value, ErrorBody>, SutError> {
        let at = format!("#{} {}", self.next_id + 1, request.op());
        match self.call_raw(request)? {
            Err(e) => Ok(Err(e)),
            Ok(raw) => serde_json::from_str(raw.get())
                .map(Ok)
                .map_err(|e| self.breach(&at, Breach::NotAResponse(e.to_string()))),
        }
    }

    /// [`SutProcess::call`] with the answer kept as its JSON text, to be parsed once into the
    /// type the request expects.
    pub fn call_raw(
        &mut self,
        request: &Request,
    ) -> Result<Result<Box<RawValue>, ErrorBody>, SutError> {
        self.next_id += 1;
        let id = self.next_id;
        let at = format!("#{id} {}", request.op());
        let mut line = serde_json::to_vec(&RequestLine {
            id,
            request: request.clone(),
        })
        .expect("requests serialize");
        line.push(b'\n');
        // A child that already exited cannot read this; what it printed before it went is
        // still read below (and judged), then the closed stdout says it exited.
        let _ = self.stdin.write_all(&line).and_then(|_| self.stdin.flush());
        line.pop();
        self.transcript.push(text_of(b"> ", line));
        let text = self.answer_line(&at)?;
        let response: Result<RawResponseLine, _> = serde_json::from_slice(&text);
        let shown = String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned();
        self.transcript.push(text_of(b"< ", text));
        let response = response
            .map_err(|e| self.breach(&at, Breach::NotAResponse(format!("{e}: {shown}"))))?;
        if response.id != id {
            return Err(self.breach(
                &at,
                Breach::WrongId {
                    expected: id,
                    got: response.id,
                },
            ));
        }
        match (response.ok, response.err) {
            (Some(v), None) => Ok(Ok(v)),
            (None, Some(e)) if e.kind == ErrorKind::Unsupported && self.declared(request) => {
                let breach = Breach::Unexpected(format!(
                    "`{}` was declared in hello but answered unsupported: {}",
                    request.op(),
                    e.message
                ));
                Err(self.breach(&at, breach))
            }
            (None, Some(e)) => Ok(Err(e)),
            _ => Err(self.breach(
                &at,
                Breach::NotAResponse("expected exactly one of `ok` and `err`".into()),
            )),
        }
    }

    /// The next answer line, or the breach of its absence.
    fn answer_line(&mut self, at: &str) -> Result<Vec<u8>, SutError> {
        match self
            .lines
            .recv_timeout(Duration::from_millis(self.options.timeout_ms))
        {
            Ok(Line::Text(t)) => Ok(t),
            Ok(Line::TooLong) => {
                let bytes_max = self.options.response_bytes_max;
                Err(self.breach(at, Breach::TooLarge { bytes_max }))
            }
            Ok(Line::Closed) | Err(RecvTimeoutError::Disconnected) => {
                let status = self.exit_status();
                Err(self.breach(at, Breach::Exited(status)))
            }
            Err(RecvTimeoutError::Timeout) => {
                let ms = self.options.timeout_ms;
                Err(self.breach(at, Breach::Timeout { ms }))
            }
        }
    }

    fn declared(&self, request: &Request) -> bool {
        self.hello
            .as_ref()
            .is_some_and(|h| h.ops.iter().any(|o| o == request.op()))
    }

    /// The request and answer lines since the last call, oldest first.
    pub fn take_transcript(&mut self) -> Vec<String> {
        std::mem::take(&mut self.transcript)
    }

    /// The child's stderr from byte `since` on (its last `bytes_max` bytes), for the log kept
    /// beside a failing seed's report.
    pub fn stderr_log(&self, since: u64, bytes_max: usize) -> String {
        let mut bytes = Vec::new();
        if let Ok(mut f) = self.stderr.reopen() {
            let _ = f.read_to_end(&mut bytes);
        }
        let since = usize::try_from(since)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let from = bytes.len().saturating_sub(bytes_max).max(since);
        String::from_utf8_lossy(&bytes[from..]).into_owned()
    }

    /// Kills the child at once (SIGKILL): a simulated crash of its host.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The last lines of the child's stderr.
    pub fn stderr_tail(&self) -> String {
        const LINES: usize = 20;
        let mut text = String::new();
        if let Ok(mut f) = self.stderr.reopen() {
            let _ = f.read_to_string(&mut text);
        }
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(LINES)..].join("\n")
    }

    fn exit_status(&mut self) -> String {
        // The child closed its end; give it a moment to be reaped so the status is known.
        for _ in 0..50 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.to_string();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        "still running, its stdout closed".into()
    }

    fn breach(&self, request: &str, breach: Breach) -> SutError {
        SutError {
            request: request.to_string(),
            breach,
            stderr_tail: self.stderr_tail(),
        }
    }
}

impl Drop for SutProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The command line as a process: words split on spaces when it is a plain list of words (one
/// process fewer a seed), else run by `sh -c` (pipes, quotes, variables, redirections).
fn command_of(line: &str) -> Command {
    let plain = line
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b" -_./:,+@".contains(&b));
    let mut words = line.split_whitespace();
    match (plain, words.next()) {
        (true, Some(program)) => {
            let mut command = Command::new(program);
            command.args(words);
            command
        }
        _ => {
            let mut command = Command::new("sh");
            command.arg("-c").arg(line);
            command
        }
    }
}

/// A transcript line: `marker` and the line's text (copied only when it is not UTF-8).
fn text_of(marker: &[u8], line: Vec<u8>) -> String {
    let mut out = Vec::with_capacity(marker.len() + line.len());
    out.extend_from_slice(marker);
    out.extend_from_slice(&line);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Reads the child's stdout line by line, each at most `bytes_max` bytes, into a channel.
fn spawn_reader(stdout: impl Read + Send + 'static, bytes_max: usize) -> Receiver<Line> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut buf = Vec::new();
            let limit = bytes_max as u64 + 1;
            let line = match (&mut reader).take(limit).read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => Line::Closed,
                Ok(_) if buf.last() == Some(&b'\n') => {
                    buf.pop();
                    Line::Text(buf)
                }
                Ok(_) if buf.len() > bytes_max => Line::TooLong,
                // A last line without its newline, then the end.
                Ok(_) => Line::Text(buf),
            };
            let stop = !matches!(line, Line::Text(_));
            if tx.send(line).is_err() || stop {
                return;
            }
        }
    });
    rx
}
