//! `histsim serve display|runs`: histsim's own components behind the SUT protocol, the
//! reference adapters. This file holds what every served system shares (reading request lines,
//! answering them in order, `hello`) and the display system: its replicas share one store, as
//! the real service's replicas share one database; `node` names the replica whose persister or
//! request handler a request reaches. The runs store is in `serve_runs.rs`.

use super::protocol::{
    Admitted, Appended, ErrorBody, ErrorKind, Hello, OpenOptions, Request, RequestLine,
    PROTOCOL_VERSION,
};
use history::display::{
    project, Admission, DisplayEventStore, MemoryDisplayStore, ProjectorOptions, ReplicaNode,
    SqliteDisplayStore,
};
use history::{BugId, Planted};
use serde::Serialize;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::rc::Rc;

type SharedStore = Rc<dyn DisplayEventStore>;

/// The display system while open.
struct Open {
    store: SharedStore,
    options: ProjectorOptions,
    nodes: BTreeMap<u32, ReplicaNode<SharedStore>>,
}

/// The reference display system: closed until `open`.
#[derive(Default)]
pub struct DisplayServer {
    open: Option<Open>,
    /// `store` of the command line, when given: overrides `open`'s.
    store_override: Option<String>,
    /// Known differences it emulates and declares (`--emulate-differences`).
    emulated: model::display::Declared,
    switch: PlantedSwitch,
}

/// How a served system takes `open`'s planted bug: as histsim's switches (declared in `hello`),
/// or as another system would, to try histsim's handling of one without it at hand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlantedSwitch {
    /// `open`'s `planted` switches the bug on; `hello` declares `planted`.
    #[default]
    FromOpen,
    /// A system without histsim's switches (`--without-planted`): `open`'s `planted` is
    /// ignored and `hello` does not declare it.
    Ignored,
    /// A system that has this bug (`--planted ID`), whatever `open` asks: a user's broken
    /// system, fixed by serving without the flag. It has no switches to declare.
    Fixed(BugId),
}

impl PlantedSwitch {
    /// Whether `hello` declares `planted`.
    pub(crate) fn declared(self) -> bool {
        self == PlantedSwitch::FromOpen
    }

    /// The planted bug of an `open` with `options`.
    pub(crate) fn of(self, options: &OpenOptions) -> Result<Planted, ErrorBody> {
        match self {
            PlantedSwitch::FromOpen => planted_of(options),
            PlantedSwitch::Ignored => Ok(Planted::none()),
            PlantedSwitch::Fixed(id) => Ok(Planted::only(id)),
        }
    }
}

/// An answer's JSON text, serialized once: no `Value` tree is built and taken apart again on
/// the way out.
pub struct Json(Vec<u8>);

/// An answer: its JSON text, or the system's refusal.
pub(crate) type Answer = Result<Json, ErrorBody>;

thread_local! {
    /// The buffer of the last answer [`serve`] wrote, for the next one: a long answer grows one
    /// buffer once, where a new one each answer cost its growth, its copies and its free (each
    /// free of a large block also sweeps the allocator's free lists).
    static SPARE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// `value` as an answer.
pub(crate) fn ok<T: Serialize + ?Sized>(value: &T) -> Answer {
    let mut text = SPARE.with(|spare| std::mem::take(&mut *spare.borrow_mut()));
    text.clear();
    serde_json::to_writer(&mut text, value).expect("answers serialize");
    Ok(Json(text))
}

/// Keeps the buffer of an answer written for the next answer.
fn spare(answer: Answer) {
    if let Ok(Json(text)) = answer {
        SPARE.with(|spare| *spare.borrow_mut() = text);
    }
}

/// The answer `{}`.
pub(crate) fn done() -> Answer {
    ok(&serde_json::Map::new())
}

/// A system served over the protocol: answers one request at a time.
pub trait Served {
    fn answer(&mut self, request: Request) -> Answer;
}

pub(crate) fn refuse(kind: ErrorKind, message: impl Into<String>) -> ErrorBody {
    ErrorBody {
        kind,
        message: message.into(),
    }
}

impl DisplayServer {
    pub fn new(store_override: Option<String>, emulated: model::display::Declared) -> Self {
        DisplayServer {
            open: None,
            store_override,
            emulated,
            switch: PlantedSwitch::FromOpen,
        }
    }

    /// This server, taking `open`'s planted bug as `switch` says.
    pub fn with_planted(self, switch: PlantedSwitch) -> Self {
        DisplayServer { switch, ..self }
    }

    /// An answer of histsim's projection, less the warnings the emulated differences cover.
    fn shown(&self, projection: &history::display::Projection) -> Answer {
        if self.emulated.is_empty() {
            return ok(projection);
        }
        let mut shown = serde_json::to_value(projection).expect("a projection serializes");
        if let Some(warnings) = shown.get_mut("warnings").and_then(Value::as_array_mut) {
            warnings.retain(|w| !crate::display::view::covered_by(w, &self.emulated));
        }
        ok(&shown)
    }
}

/// Answers one request line: the id it names (0 when it names none) and the answer.
pub fn answer_line(system: &mut dyn Served, line: &[u8]) -> (u64, Answer) {
    let parsed: Result<RequestLine, _> = serde_json::from_slice(line);
    match parsed {
        Ok(r) => (r.id, system.answer(r.request)),
        Err(e) => {
            // Name the id when the line has one, so the client can tell what was refused.
            let id = serde_json::from_slice::<Value>(line)
                .ok()
                .and_then(|v| v.get("id").and_then(Value::as_u64))
                .unwrap_or(0);
            let kind = if e.to_string().contains("unknown variant") {
                ErrorKind::Unsupported
            } else {
                ErrorKind::Invalid
            };
            (id, Err(refuse(kind, e.to_string())))
        }
    }
}

/// A refusal's response line.
#[derive(Serialize)]
struct Refused<'a> {
    id: u64,
    err: &'a ErrorBody,
}

/// Appends the response line of `answer` to request `id`, newline included, to `out`: `ok`
/// holds the answer's text as it is.
pub fn write_response(out: &mut Vec<u8>, id: u64, answer: &Answer) {
    match answer {
        Ok(Json(text)) => {
            out.extend_from_slice(format!(r#"{{"id":{id},"ok":"#).as_bytes());
            out.extend_from_slice(text);
            out.push(b'}');
        }
        Err(err) => {
            serde_json::to_writer(&mut *out, &Refused { id, err }).expect("responses serialize")
        }
    }
    out.push(b'\n');
}

/// The display ops histsim's display system serves.
const DISPLAY_OPS: [&str; 6] = ["hello", "open", "close", "append", "reconstruct", "project"];

impl Served for DisplayServer {
    fn answer(&mut self, request: Request) -> Answer {
        match request {
            Request::Hello { protocol } => {
                let mut greeting = hello("histsim-display", &DISPLAY_OPS, protocol)?;
                greeting.differences = self.emulated.iter().map(|d| d.id().into()).collect();
                greeting.planted = self.switch.declared();
                greeting_answer(&greeting)
            }
            Request::Open { data_dir, options } => self.open(&data_dir, options),
            Request::Close {} => {
                self.open = None;
                done()
            }
            Request::Append { node, rows } => self.append(node, &rows),
            Request::Reconstruct {
                node,
                thread_id,
                primary,
            } => {
                let node = self.node(node)?;
                let projection = node
                    .reconstruct(&thread_id, primary.as_ref())
                    .map_err(|e| refuse(ErrorKind::Internal, e.to_string()))?;
                self.shown(&projection)
            }
            Request::Project { rows, primary } => {
                let options = self.open.as_ref().map(|o| o.options).unwrap_or_default();
                self.shown(&project(&rows, primary.as_ref(), &options))
            }
            other => Err(refuse(
                ErrorKind::Unsupported,
                format!("`{}` is not a display op", other.op()),
            )),
        }
    }
}

impl DisplayServer {
    fn open(&mut self, data_dir: &str, options: OpenOptions) -> Answer {
        let planted = self.switch.of(&options)?;
        let kind = self.store_override.clone().unwrap_or(options.store);
        let store: SharedStore = match kind.as_str() {
            "memory" => Rc::new(MemoryDisplayStore::new(planted)),
            "sqlite" => {
                let path = Path::new(data_dir).join("display.sqlite");
                Rc::new(
                    SqliteDisplayStore::open(&path, planted)
                        .map_err(|e| refuse(ErrorKind::Internal, e.to_string()))?,
                )
            }
            other => {
                return Err(refuse(
                    ErrorKind::Invalid,
                    format!("store `{other}`: expected memory or sqlite"),
                ))
            }
        };
        self.open = Some(Open {
            store,
            options: ProjectorOptions { planted },
            nodes: BTreeMap::new(),
        });
        done()
    }

    fn node(&mut self, node: u32) -> Result<&mut ReplicaNode<SharedStore>, ErrorBody> {
        let open = self
            .open
            .as_mut()
            .ok_or_else(|| refuse(ErrorKind::Conflict, "not open: send `open` first"))?;
        let store = open.store.clone();
        let options = open.options;
        Ok(open
            .nodes
            .entry(node)
            .or_insert_with(|| ReplicaNode::new(store, options)))
    }

    fn append(&mut self, node: u32, rows: &[String]) -> Answer {
        let node = self.node(node)?;
        let mut admitted = Vec::with_capacity(rows.len());
        for row in rows {
            admitted.push(match node.deliver(row.as_bytes()) {
                Ok(Admission::Stored) => Admitted::Stored,
                Ok(Admission::Quarantined { .. }) => Admitted::Quarantined,
                Err(e) => Admitted::Failed(e.to_string()),
            });
        }
        ok(&Appended { admitted })
    }
}

/// `open`'s planted bug.
pub(crate) fn planted_of(options: &OpenOptions) -> Result<Planted, ErrorBody> {
    Ok(match &options.planted {
        None => Planted::none(),
        Some(id) => Planted::from_option(Some(
            id.parse::<BugId>()
                .map_err(|e| refuse(ErrorKind::Invalid, format!("planted: {e}")))?,
        )),
    })
}

/// The answer to `hello`: `system` serves `ops`.
pub(crate) fn hello(system: &str, ops: &[&str], protocol: u32) -> Result<Hello, ErrorBody> {
    if protocol != PROTOCOL_VERSION {
        return Err(refuse(
            ErrorKind::Invalid,
            format!("protocol {protocol}: this system speaks {PROTOCOL_VERSION}"),
        ));
    }
    Ok(Hello {
        system: system.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        protocol: PROTOCOL_VERSION,
        ops: ops.iter().map(|o| o.to_string()).collect(),
        differences: Vec::new(),
        planted: false,
    })
}

/// The answer to `hello`, its keys sorted as in every earlier version (through a `Value`): a
/// wrapper that edits the greeting's text (e.g. cuts `"differences":[...],` out of it) keeps
/// working. Once a process, so the detour costs nothing.
pub(crate) fn greeting_answer(greeting: &Hello) -> Answer {
    ok(&serde_json::to_value(greeting).expect("a greeting serializes"))
}

/// Serves requests from `input` to `output` until `input` ends.
///
/// Each response is written whole, in one write: written piecemeal into a line-buffered
/// stdout, a long answer went out in kilobyte writes, each waking the reader.
pub fn serve(
    server: &mut dyn Served,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut response = Vec::new();
    for line in input.split(b'\n') {
        let line = line?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let (id, answer) = answer_line(server, &line);
        response.clear();
        write_response(&mut response, id, &answer);
        spare(answer);
        output.write_all(&response)?;
        output.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sut::protocol::ResponseLine;

    /// The response line `server` writes to `line`, read back as the client reads it.
    fn exchange(server: &mut DisplayServer, line: &str) -> ResponseLine {
        let (id, answer) = answer_line(server, line.as_bytes());
        let mut out = Vec::new();
        write_response(&mut out, id, &answer);
        assert_eq!(out.pop(), Some(b'\n'));
        serde_json::from_slice(&out).expect("a response line")
    }

    #[test]
    fn a_session_greets_opens_appends_and_reconstructs() {
        let mut s = DisplayServer::new(None, Default::default());
        let hello = exchange(&mut s, r#"{"id":1,"op":"hello","protocol":1}"#);
        assert_eq!(hello.id, 1);
        assert_eq!(hello.ok.expect("ok")["system"], "histsim-display");
        let refused = exchange(&mut s, r#"{"id":2,"op":"append","node":0,"rows":[]}"#);
        assert_eq!(refused.err.expect("not open").kind, ErrorKind::Conflict);
        let opened = exchange(
            &mut s,
            r#"{"id":3,"op":"open","data_dir":"/nonexistent","options":{"store":"memory","planted":null}}"#,
        );
        assert!(opened.ok.is_some(), "{opened:?}");
        let appended = exchange(
            &mut s,
            r#"{"id":4,"op":"append","node":0,"rows":["not json"]}"#,
        );
        assert_eq!(appended.ok.expect("ok")["admitted"][0], "quarantined");
        let read = exchange(
            &mut s,
            r#"{"id":5,"op":"reconstruct","node":1,"thread_id":"t","primary":null}"#,
        );
        let projection = read.ok.expect("ok");
        assert_eq!(projection["messages"], serde_json::json!([]));
    }

    #[test]
    fn hello_declares_planted_only_where_open_switches_it() {
        let greeting = |switch| {
            let mut s = DisplayServer::new(None, Default::default()).with_planted(switch);
            exchange(&mut s, r#"{"id":1,"op":"hello","protocol":1}"#)
                .ok
                .expect("greets")
        };
        assert_eq!(greeting(PlantedSwitch::FromOpen)["planted"], true);
        for other in [PlantedSwitch::Ignored, PlantedSwitch::Fixed(BugId::P4)] {
            assert!(greeting(other).get("planted").is_none(), "{other:?}");
        }
        let open = OpenOptions {
            store: "memory".into(),
            planted: Some("P4".into()),
            crashes: false,
        };
        assert_eq!(PlantedSwitch::Ignored.of(&open), Ok(Planted::none()));
        let fixed = PlantedSwitch::Fixed(BugId::P2).of(&open);
        assert_eq!(fixed, Ok(Planted::only(BugId::P2)));
    }

    #[test]
    fn bad_lines_are_refused_by_kind_with_their_id() {
        let mut s = DisplayServer::new(None, Default::default());
        let unknown = exchange(&mut s, r#"{"id":9,"op":"drop_all"}"#);
        assert_eq!(unknown.id, 9);
        assert_eq!(unknown.err.expect("refused").kind, ErrorKind::Unsupported);
        let garbage = exchange(&mut s, "{{{");
        assert_eq!(
            (garbage.id, garbage.err.expect("refused").kind),
            (0, ErrorKind::Invalid)
        );
        let version = exchange(&mut s, r#"{"id":1,"op":"hello","protocol":99}"#);
        assert_eq!(version.err.expect("refused").kind, ErrorKind::Invalid);
    }
}
