//! A system under test in a child process, spoken to over the SUT protocol.
//!
//! Every way a child can misbehave ends in a [`SutError`] naming the request and carrying the
//! tail of its stderr: an answer that is not JSON or not a protocol response, a wrong id, an op
//! it declared but calls unsupported, an exit nobody asked for, an answer over the size bound,
//! or no answer within the timeout. Never a hang, and never an answer taken for the system's own.
//!
//! A missing answer times out ([`AnswerLines`] waits for each with a deadline): `hello` and
//! `open` within the start timeout, every other request within the request timeout, of wall
//! time for a child asleep and of CPU time for a child still computing ([`super::liveness`]),
//! within a cap. The timeout is wall time by necessity (the child is a real process); it
//! decides only whether a seed fails as a broken world, never what it shows.

use super::answer_lines::{AnswerLines, Line};
use super::liveness;
use super::protocol::{ErrorBody, ErrorKind, Hello, RawResponseLine, Request, RequestLineOut};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::fmt;
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Duration;

/// The flag that sets [`SutOptions::timeout_ms`], named in a timeout's message.
pub const REQUEST_TIMEOUT_FLAG: &str = "--sut-timeout-ms";
/// The flag that sets [`SutOptions::start_timeout_ms`], named in a timeout's message.
pub const START_TIMEOUT_FLAG: &str = "--sut-start-timeout-ms";

/// How to start and bound a system under test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SutOptions {
    /// The command line: run directly when it is plain words, else by `sh -c`.
    pub command: String,
    /// Longest wait for the answer to one request (not `hello` or `open`), in milliseconds:
    /// of wall time while the child is asleep, of its CPU time while it computes
    /// ([`super::liveness`]).
    pub timeout_ms: u64,
    /// Longest wait for the answer to `hello` (sent as the process starts: an interpreter
    /// loading its libraries) and to each `open` (a store creating its files), in
    /// milliseconds, counted as [`SutOptions::timeout_ms`] is.
    pub start_timeout_ms: u64,
    /// Longest answer line accepted, in bytes.
    pub response_bytes_max: usize,
    /// Whether each campaign thread and the children it starts share one CPU
    /// ([`super::affinity`]); `false` lets the scheduler place them anywhere.
    pub share_cpu: bool,
}

impl SutOptions {
    pub fn new(command: impl Into<String>) -> Self {
        SutOptions {
            command: command.into(),
            timeout_ms: 10_000,
            start_timeout_ms: 60_000,
            response_bytes_max: 64 * 1024 * 1024,
            share_cpu: true,
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
    /// No answer within the timeout (`ms`, set by `flag`); `graced` when the child was waited
    /// for longer as it was still computing; `judged` says what ended the wait.
    Timeout {
        ms: u64,
        flag: &'static str,
        graced: bool,
        judged: String,
    },
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
            Breach::Timeout {
                ms,
                flag,
                graced: true,
                judged,
            } => format!(
                "gave no answer within {ms} ms ({flag}), nor after, while it computed: {judged}"
            ),
            Breach::Timeout {
                ms, flag, judged, ..
            } => format!("gave no answer within {ms} ms ({flag}): {judged}"),
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

/// The longest wait for an answer, in timeouts of wall time, however the child computes: a
/// child that spins forever on a loaded machine still ends its seed. The measured slow case
/// (the aihub adapter at 8 % of a CPU, docs/sut-protocol.md) needed a bit over two.
const WALL_CAP_TIMEOUTS: u32 = 6;

/// A request written to a child, its answer not yet read.
#[must_use = "every request sent is answered, and the answer read"]
pub struct Sent {
    id: u64,
    /// The request, as `#id op`.
    at: String,
    /// How long its answer may take, and the flag that says so.
    wait: Wait,
}

/// How long an answer may take before the child is judged ([`super::liveness`]): `ms`, the
/// value of `flag`, of wall time for a child asleep, of CPU time for one computing.
#[derive(Clone, Copy)]
struct Wait {
    ms: u64,
    flag: &'static str,
}

/// An answer line read and kept in the transcript, not yet decoded.
pub struct ReadAnswer {
    id: u64,
    /// The request, as `#id op`.
    at: String,
    text: Vec<u8>,
}

/// A response line, its answer decoded as the request expects (`Err`: why it is not one).
struct Response<T> {
    id: u64,
    ok: Option<Result<T, String>>,
    err: Option<ErrorBody>,
}

/// A response line read in one pass, straight into the answer's type.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResponseOf<T> {
    id: u64,
    #[serde(default = "none")]
    ok: Option<T>,
    #[serde(default)]
    err: Option<ErrorBody>,
}

fn none<T>() -> Option<T> {
    None
}

/// `text` as the response to an `op` request. One pass when it is a well-formed answer; only a
/// line that is not reads it again, to tell a line that is no response from an answer of
/// another shape.
fn decode<T: DeserializeOwned>(text: &[u8], op: &str) -> Result<Response<T>, Breach> {
    if let Ok(r) = serde_json::from_slice::<ResponseOf<T>>(text) {
        return Ok(Response {
            id: r.id,
            ok: r.ok.map(Ok),
            err: r.err,
        });
    }
    let raw: RawResponseLine = serde_json::from_slice(text).map_err(|e| {
        let shown = String::from_utf8_lossy(&text[..text.len().min(200)]);
        Breach::NotAResponse(format!("{e}: {shown}"))
    })?;
    let ok = raw
        .ok
        .map(|v| serde_json::from_str(v.get()).map_err(|e| format!("not a {op} answer: {e}")));
    Ok(Response {
        id: raw.id,
        ok,
        err: raw.err,
    })
}

/// A running child speaking the protocol.
pub struct SutProcess {
    options: SutOptions,
    child: Child,
    stdin: ChildStdin,
    lines: AnswerLines<ChildStdout>,
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
        let mut child = super::command::command_of(&options.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| spawn_error(format!("{}: {e}", options.command)))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        widen_pipe(&stdin);
        widen_pipe(&stdout);
        let lines = AnswerLines::new(stdout, options.response_bytes_max);
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
        let hello = sut.call(&Request::Hello {
            protocol: super::protocol::PROTOCOL_VERSION,
        })?;
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
        let sent = self.send(request);
        self.receive(sent, request)
    }

    /// Writes `request` to the child without waiting for its answer: two children asked at
    /// once work at once. The answer is read by [`SutProcess::receive`].
    pub fn send(&mut self, request: &Request) -> Sent {
        self.next_id += 1;
        let id = self.next_id;
        // The line is written after its transcript marker, so the transcript line is the same
        // buffer (no copy).
        let mut line = b"> ".to_vec();
        serde_json::to_writer(&mut line, &RequestLineOut { id, request }).expect("serializes");
        line.push(b'\n');
        // A child that already exited cannot read this; what it printed before it went is
        // still read by `receive` (and judged), then the closed stdout says it exited.
        let _ = self
            .stdin
            .write_all(&line[2..])
            .and_then(|_| self.stdin.flush());
        line.pop();
        self.transcript
            .push(String::from_utf8(line).expect("serde_json writes UTF-8"));
        Sent {
            id,
            at: format!("#{id} {}", request.op()),
            wait: self.wait_for(request),
        }
    }

    /// How long the answer to `request` may take: `hello` and `open` (a process starting: an
    /// interpreter loading its libraries, a store creating its files) the start timeout, every
    /// other request the request timeout.
    fn wait_for(&self, request: &Request) -> Wait {
        let (ms, flag) = match request {
            Request::Hello { .. } | Request::Open { .. } => {
                (self.options.start_timeout_ms, START_TIMEOUT_FLAG)
            }
            _ => (self.options.timeout_ms, REQUEST_TIMEOUT_FLAG),
        };
        Wait { ms, flag }
    }

    /// Waits for the answer to `sent` (the last request sent) and decodes it as `T`, what
    /// `request` expects: `Ok(Ok(answer))`, `Ok(Err(body))` the system's own refusal, `Err` a
    /// breach (an answer of another shape included).
    pub fn receive<T: DeserializeOwned>(
        &mut self,
        sent: Sent,
        request: &Request,
    ) -> Result<Result<T, ErrorBody>, SutError> {
        let read = self.read_answer(sent)?;
        self.judge(read, request)
    }

    /// Waits for the answer line to `sent` (the last request sent) and keeps it in the
    /// transcript, undecoded: [`SutProcess::judge`] decodes it, later if need be (so the next
    /// request can be sent before the caller wants this answer).
    pub fn read_answer(&mut self, sent: Sent) -> Result<ReadAnswer, SutError> {
        let Sent { id, at, wait } = sent;
        assert_eq!(id, self.next_id, "answers are read in request order");
        let text = self.answer_line(&at, wait)?;
        self.transcript.push(text_of(b"< ", &text));
        Ok(ReadAnswer { id, at, text })
    }

    /// Decodes an answer line read by [`SutProcess::read_answer`] as `T`, what `request`
    /// expects (see [`SutProcess::receive`]).
    pub fn judge<T: DeserializeOwned>(
        &mut self,
        read: ReadAnswer,
        request: &Request,
    ) -> Result<Result<T, ErrorBody>, SutError> {
        let ReadAnswer { id, at, text } = read;
        let response = decode::<T>(&text, request.op());
        self.lines.give_back(text);
        let response = response.map_err(|breach| self.breach(&at, breach))?;
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
            (Some(Ok(v)), None) => Ok(Ok(v)),
            (Some(Err(why)), None) => Err(self.breach(&at, Breach::Unexpected(why))),
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

    /// The next answer line, or the breach of its absence. A wait that runs long is judged by
    /// what the child does ([`super::liveness`]), read from `/proc` at each half of the timeout
    /// past the first (only a slow answer pays for that): a child that made no progress over
    /// a half (asleep) is broken, one that computes is waited for until it has used the timeout
    /// in CPU time since the first reading, or [`WALL_CAP_TIMEOUTS`] timeouts of wall time
    /// have passed.
    fn answer_line(&mut self, at: &str, wait: Wait) -> Result<Vec<u8>, SutError> {
        let full = Duration::from_millis(wait.ms);
        let half = full / 2;
        let first = self.lines.next_line(half);
        if let Some(answer) = self.settled(at, first) {
            return answer;
        }
        let pid = self.child.id();
        let start = liveness::sample(pid);
        let (mut last, mut waited, mut alive) = (start, half, None);
        let breach = loop {
            let line = self.lines.next_line(half);
            waited += half;
            if let Some(answer) = self.settled(at, line) {
                if let Some(why) = alive.filter(|_| waited > full) {
                    // Not a failure, but not silent either: a campaign that leans on the
                    // extension says so, so the timeout can be raised before it runs out too.
                    eprintln!(
                        "note: the system under test answered {at} after more than {} ms ({}), \
                         while alive: {why}",
                        wait.ms, wait.flag
                    );
                }
                return answer;
            }
            let now = liveness::sample(pid);
            let why = match liveness::progress(last, now) {
                Ok(why) => why,
                Err(why) => break (alive.is_some(), why),
            };
            let used = start
                .zip(now)
                .map_or(Duration::ZERO, |(a, b)| liveness::cpu_between(a, b));
            if used >= full {
                break (
                    true,
                    format!("it used {} ms of CPU, {why}", used.as_millis()),
                );
            }
            if waited >= full * WALL_CAP_TIMEOUTS {
                let cap = (full * WALL_CAP_TIMEOUTS).as_millis();
                break (true, format!("{cap} ms of wall time passed, {why}"));
            }
            alive = Some(why);
            last = now;
        };
        let (graced, judged) = breach;
        let breach = Breach::Timeout {
            ms: wait.ms,
            flag: wait.flag,
            graced,
            judged,
        };
        Err(self.breach(at, breach))
    }

    /// The answer `line` is, or the breach it stands for; `None` when the wait ran out.
    fn settled(&mut self, at: &str, line: Line) -> Option<Result<Vec<u8>, SutError>> {
        match line {
            Line::Text(t) => Some(Ok(t)),
            Line::TooLong => {
                let bytes_max = self.options.response_bytes_max;
                Some(Err(self.breach(at, Breach::TooLarge { bytes_max })))
            }
            Line::Closed => {
                let status = self.exit_status();
                Some(Err(self.breach(at, Breach::Exited(status))))
            }
            Line::Timeout => None,
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

/// Bytes a pipe to or from the child holds (Linux's default is 64 KiB): an answer or a request
/// up to this size crosses in one write and one wake-up of its reader, not one per 64 KiB
/// (a long answer woke histsim, and the child, a dozen times).
const PIPE_BYTES: usize = 1 << 20;

/// Asks for [`PIPE_BYTES`] of room in `pipe`. Where the system allows less (a lower
/// `/proc/sys/fs/pipe-max-size`) or none, the pipe keeps its size: only speed depends on it.
fn widen_pipe(pipe: &impl std::os::fd::AsFd) {
    let _ = rustix::pipe::fcntl_setpipe_size(pipe, PIPE_BYTES);
}

/// A transcript line: `marker` and the line's text (its bytes that are not UTF-8 replaced).
fn text_of(marker: &[u8], line: &[u8]) -> String {
    let mut out = Vec::with_capacity(marker.len() + line.len());
    out.extend_from_slice(marker);
    out.extend_from_slice(line);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
