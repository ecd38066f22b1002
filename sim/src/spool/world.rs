//! Playing a spool scenario: the history reaches the builder from a journal on a simulated disk
//! or from memory, one row at a time; every request is built into a sealed spool in one
//! request-scoped directory on the real filesystem (a temporary directory), then sent over an
//! in-memory stream to the [`Loopback`] responder. The world records what each step returned and
//! what the responder received; it judges nothing.

use super::responder::{Loopback, Received};
use super::scenario::{ShapeSpec, SourceKind, SpoolScenario};
use super::source::{compressed, history_rows, prefix, JournalRows};
use crate::compression::compression;
use crate::disk::{SimDisk, SimDiskOptions};
use crate::trace::Trace;
use history::journal::{
    Block, Journal, JournalOptions, JournalReader, Origin, Row, SharedStorage, Speaker,
};
use history::spool::{
    build, BuildOptions, Compressed, NeverAbort, RequestHead, RowSource, SendOptions, Shape,
    SpoolDir, SpoolReport, VecSource,
};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

/// The journal file a journal-sourced history lives in.
pub const HISTORY_JOURNAL: &str = "history.journal";
/// Rows per append when the history is written to its journal.
const APPEND_ROWS: usize = 3;

pub use crate::workload::WorldConfig;

/// One request as the world saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestSeen {
    pub shape: ShapeSpec,
    /// Rows the request took from its source.
    pub rows: usize,
    pub built: Result<(), String>,
    /// The sealed spool's bytes, read back before the send.
    pub spool: Vec<u8>,
    pub report: Result<SpoolReport, String>,
    pub received: Option<Received>,
    /// Files left in the request directory after the send.
    pub left: Vec<String>,
    /// The sealed spool's file name in the request directory (empty when the build failed).
    pub spool_file: String,
    /// Trace events recorded up to and including this request's line: where a page places it.
    pub traced_events: u64,
}

/// The journal a journal-sourced history was written to, as the requests read it (kept with
/// the full trace only: the page draws it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryFile {
    pub bytes: Vec<u8>,
    /// Bytes synced when the requests began (what a crash then would keep).
    pub synced: u64,
    /// Trace events recorded when the history was ready.
    pub traced_events: u64,
}

pub struct WorldRecord {
    /// Setting up the history or the directory failed: nothing was sent.
    pub setup: Result<(), String>,
    pub requests: Vec<RequestSeen>,
    /// The synthetic history the scenario names, as generated before anything read it: the
    /// ground truth the check computes each request's rows from (generating it again there was
    /// a twentieth of the workload's time).
    pub history: Vec<Row>,
    /// The history's journal, with the full trace and a journal source.
    pub history_file: Option<HistoryFile>,
    /// Removing the request directory at the end.
    pub dir_closed: Result<(), String>,
    pub trace: Trace,
}

pub fn shape(s: ShapeSpec) -> Shape {
    match s {
        ShapeSpec::Openai => Shape::OpenAiChat,
        ShapeSpec::Anthropic => Shape::AnthropicMessages,
    }
}

/// The request head every request of `scenario` carries.
pub fn head(scenario: &SpoolScenario) -> RequestHead {
    RequestHead {
        system: scenario.system.clone(),
        ..RequestHead::default()
    }
}

/// Where the request directories go: memory-backed when the machine has it (spools are fsynced
/// when sealed), the system's temporary directory otherwise.
fn scratch_root() -> std::path::PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// The history, prepared for the requests.
enum Prepared {
    /// Written to a journal: requests read its first rows back through the conversation's
    /// reader.
    Journal {
        reader: Rc<RefCell<JournalReader>>,
        rows: usize,
        disk: Arc<SimDisk>,
    },
    /// In memory; `summary_first` when the first row is a compression's summary.
    Rows { rows: Vec<Row>, summary_first: bool },
}

fn prepare(
    scenario: &SpoolScenario,
    rows: &[Row],
    opts: &JournalOptions,
) -> Result<Prepared, String> {
    match scenario.source {
        SourceKind::Rows => {
            let list = compressed(rows, scenario.compress_keep);
            Ok(Prepared::Rows {
                summary_first: list.len() != rows.len() || list.first() != rows.first(),
                rows: list,
            })
        }
        SourceKind::Journal => {
            let disk = Arc::new(SimDisk::new(SimDiskOptions::default()));
            let storage: SharedStorage = disk.clone();
            let mut j = Journal::create(storage.clone(), HISTORY_JOURNAL, opts.clone(), None)
                .map_err(|e| e.to_string())?;
            for chunk in rows.chunks(APPEND_ROWS) {
                j.append(Origin::Main, chunk.to_vec())
                    .map_err(|e| e.to_string())?;
            }
            if let Some(keep) = scenario.compress_keep {
                if let Some((summary, cut)) = compression(&j.rows(), keep, &Origin::Main) {
                    j.compress(Origin::Main, summary, cut)
                        .map_err(|e| e.to_string())?;
                }
            }
            Ok(Prepared::Journal {
                reader: Rc::new(RefCell::new(JournalReader::new(
                    storage,
                    HISTORY_JOURNAL,
                    opts.clone(),
                ))),
                rows: j.fold().in_context().len(),
                disk,
            })
        }
    }
}

impl Prepared {
    fn len(&self) -> usize {
        match self {
            Prepared::Journal { rows, .. } => *rows,
            Prepared::Rows { rows, .. } => rows.len(),
        }
    }

    /// The history's journal file as it stands, when there is one.
    fn file(&self, traced_events: u64) -> Option<HistoryFile> {
        match self {
            Prepared::Journal { disk, .. } => Some(HistoryFile {
                bytes: disk.bytes(HISTORY_JOURNAL),
                synced: disk
                    .synced_prefixes()
                    .get(HISTORY_JOURNAL)
                    .copied()
                    .unwrap_or(0),
                traced_events,
            }),
            Prepared::Rows { .. } => None,
        }
    }

    /// The first `n` rows, as a source that hands them over one at a time.
    fn source(&self, n: usize) -> Box<dyn RowSource> {
        match self {
            Prepared::Journal { reader, .. } => Box::new(JournalRows::new(reader.clone(), n)),
            Prepared::Rows {
                rows,
                summary_first: true,
            } if n >= 1 => Box::new(Compressed::new(
                rows[0].clone(),
                VecSource::new(rows[1..n].to_vec()),
            )),
            Prepared::Rows { rows, .. } => Box::new(VecSource::new(rows[..n].to_vec())),
        }
    }
}

/// A source that writes every row it hands over into the trace (its size and hash).
struct Traced<'a> {
    inner: Box<dyn RowSource>,
    trace: &'a mut Trace,
    request: usize,
    rows: u64,
}

impl RowSource for Traced<'_> {
    fn next_row(&mut self) -> Option<Result<Row, history::spool::SpoolError>> {
        let next = self.inner.next_row();
        if let Some(Ok(row)) = &next {
            self.trace.record(
                self.request as u64,
                format_args!(
                    "request {} row {} content={} row={:016x}",
                    self.request,
                    self.rows,
                    row.content_bytes(),
                    row_digest(row)
                ),
            );
            self.rows += 1;
        }
        next
    }
}

/// The trace's hash of a row: xxh3 of its fields, each string behind its length, in one
/// buffer. Not its JSON text: escaping every byte of the row's text for a hash was a fifteenth
/// of the spool workload's time (2026-12-05 profile), and a row is hashed at every request that
/// sends it. Not through `Row`'s derived `Hash` either: std promises those bytes neither across
/// versions nor platforms, and a trace hash must compare across builds. Destructured whole, so
/// a field added to `Row` or `Block` fails to compile here rather than go unhashed.
fn row_digest(row: &Row) -> u64 {
    fn put(text: &mut Vec<u8>, s: &str) {
        text.extend_from_slice(&(s.len() as u64).to_le_bytes());
        text.extend_from_slice(s.as_bytes());
    }
    crate::json_digest::xxh3_of_text(|text| {
        let Row {
            speaker,
            origin,
            blocks,
        } = row;
        text.push(match speaker {
            Speaker::Human => b'h',
            Speaker::Ai => b'a',
            Speaker::Tool => b't',
        });
        match origin {
            Origin::Main => text.push(b'm'),
            Origin::Subagent(name) => {
                text.push(b's');
                put(text, name);
            }
        }
        for block in blocks {
            match block {
                Block::Text { text: t } => {
                    text.push(b'T');
                    put(text, t);
                }
                Block::ToolCall {
                    id,
                    name,
                    arguments,
                } => {
                    text.push(b'C');
                    put(text, id);
                    put(text, name);
                    put(text, arguments);
                }
                Block::ToolResult {
                    call_id,
                    name,
                    content,
                } => {
                    text.push(b'R');
                    put(text, call_id);
                    put(text, name);
                    put(text, content);
                }
            }
        }
        Ok(())
    })
}

/// Plays `scenario` once.
pub fn play(scenario: &SpoolScenario, config: &WorldConfig) -> WorldRecord {
    let mut trace = Trace::new(config.keep_trace);
    let opts = JournalOptions::planted(config.planted);
    let history = history_rows(&scenario.history);
    let fail = |trace: Trace, history: Vec<Row>, e: String| WorldRecord {
        setup: Err(e),
        requests: Vec::new(),
        history,
        history_file: None,
        dir_closed: Ok(()),
        trace,
    };
    let prepared = match prepare(scenario, &history, &opts) {
        Ok(p) => p,
        Err(e) => return fail(trace, history, format!("preparing the history failed: {e}")),
    };
    let tmp = match tempfile::Builder::new()
        .prefix("histsim-spool-")
        .tempdir_in(scratch_root())
    {
        Ok(t) => t,
        Err(e) => return fail(trace, history, format!("no temporary directory: {e}")),
    };
    let mut dir = match SpoolDir::open(tmp.path().join("request")) {
        Ok(d) => d,
        Err(e) => return fail(trace, history, format!("the request directory: {e}")),
    };
    trace.record(
        0,
        format_args!(
            "history rows={} source={:?} compress={:?}",
            prepared.len(),
            scenario.source,
            scenario.compress_keep
        ),
    );
    let history_file = config
        .keep_trace
        .then(|| prepared.file(trace.events()))
        .flatten();
    let head = head(scenario);
    let mut requests = Vec::with_capacity(scenario.requests.len());
    for (k, r) in scenario.requests.iter().enumerate() {
        let n = prefix(prepared.len(), r.rows_percent);
        let source = Traced {
            inner: prepared.source(n),
            trace: &mut trace,
            request: k,
            rows: 0,
        };
        let mut seen = request(scenario, config, source, &head, &mut dir, r.shape, n);
        record_request(&mut trace, k, &mut seen);
        requests.push(seen);
    }
    let dir_closed = dir.close().map_err(|e| e.to_string());
    WorldRecord {
        setup: Ok(()),
        requests,
        history,
        history_file,
        dir_closed,
        trace,
    }
}

/// Request `k`'s line in the trace; `seen` then knows where it stands there.
fn record_request(trace: &mut Trace, k: usize, seen: &mut RequestSeen) {
    trace.record(
        k as u64 + 1,
        format_args!(
            "request {k} {:?} rows={} built={} sealed={} cl={:?} received={:?} body={:016x}",
            seen.shape,
            seen.rows,
            seen.built.is_ok(),
            seen.spool.len(),
            seen.report.as_ref().map(|r| r.content_length).ok(),
            seen.received.as_ref().map(|x| x.body.len()),
            xxhash_rust::xxh3::xxh3_64(&seen.spool)
        ),
    );
    seen.traced_events = trace.events();
}

fn request(
    scenario: &SpoolScenario,
    config: &WorldConfig,
    mut source: Traced<'_>,
    head: &RequestHead,
    dir: &mut SpoolDir,
    shape_spec: ShapeSpec,
    n: usize,
) -> RequestSeen {
    let shape = shape(shape_spec);
    let build_opts = BuildOptions {
        write_buffer_bytes: scenario.write_buffer_bytes as usize,
        planted: config.planted,
    };
    let mut seen = RequestSeen {
        shape: shape_spec,
        rows: n,
        built: Ok(()),
        spool: Vec::new(),
        report: Err("not sent".into()),
        received: None,
        left: Vec::new(),
        spool_file: String::new(),
        traced_events: 0,
    };
    match build(shape, head, &mut source, dir, &build_opts, &NeverAbort) {
        Err(e) => seen.built = Err(e.to_string()),
        Ok(built) => {
            seen.spool = std::fs::read(built.spool.path()).unwrap_or_default();
            seen.spool_file = built
                .spool
                .path()
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let send = SendOptions {
                target: shape.default_target().to_string(),
                chunk_bytes: scenario.chunk_bytes as usize,
                ..SendOptions::default()
            };
            let mut peer = Loopback::new();
            seen.report = built
                .send_over(&mut peer, &send, &NeverAbort)
                .map(|(report, _)| report)
                .map_err(|e| e.to_string());
            seen.received = peer.received().cloned();
        }
    }
    seen.left = std::fs::read_dir(dir.path())
        .map(|entries| {
            let mut names: Vec<String> = entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        })
        .unwrap_or_default();
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, name: &str, arguments: &str) -> Row {
        Row {
            speaker: Speaker::Ai,
            origin: Origin::Main,
            blocks: vec![Block::ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: arguments.into(),
            }],
        }
    }

    #[test]
    fn a_rows_digest_tells_apart_what_its_fields_say_and_nothing_else() {
        let row = call("c1", "search", "{}");
        assert_eq!(row_digest(&row), row_digest(&row.clone()));
        let others = [
            call("c1s", "earch", "{}"),
            call("c1", "search", "{} "),
            Row {
                speaker: Speaker::Tool,
                ..row.clone()
            },
            Row {
                origin: Origin::Subagent(String::new()),
                ..row.clone()
            },
            Row {
                blocks: vec![Block::ToolResult {
                    call_id: "c1".into(),
                    name: "search".into(),
                    content: "{}".into(),
                }],
                ..row.clone()
            },
            Row::text(Speaker::Ai, Origin::Main, "c1search{}"),
        ];
        let mut digests: Vec<u64> = others.iter().map(row_digest).collect();
        digests.push(row_digest(&row));
        digests.sort_unstable();
        digests.dedup();
        assert_eq!(digests.len(), others.len() + 1);
    }
}
