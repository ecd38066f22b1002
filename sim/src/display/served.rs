//! The display system served over the protocol (`histsim serve display`): its replicas share
//! one store, as the real service's replicas share one database; `node` names the replica whose
//! persister or request handler a request reaches.

use crate::sut::protocol::{
    Admitted, Appended, Durability, ErrorBody, ErrorKind, OpenOptions, Opened, Request, StoredRows,
    DISPLAY_PROTOCOL_OPS, SESSION_OPS,
};
use crate::sut::serve::{
    dispatch_display, done, greeting_answer, hello, ok, refuse, Answer, PlantedSwitch,
    ServeDisplay, ServeOptions, Served,
};
use history::display::{
    project, Admission, AgentIdentity, DisplayEventStore, MemoryDisplayStore, ProjectorOptions,
    ReplicaNode, SqliteDisplayStore, StoreOptions,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

type SharedStore = Rc<dyn DisplayEventStore>;

/// How long a writer waits for another process's transaction on the SQLite file.
const SHARED_BUSY_TIMEOUT_MS: u64 = 10_000;

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

/// The display workload's `Workload::SERVE`.
pub(crate) fn start(options: ServeOptions) -> Result<Box<dyn Served>, String> {
    let server = DisplayServer::new(options.store_override, options.emulated);
    Ok(Box::new(server.with_planted(options.switch)))
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

    /// An answer of histsim's projection of `rows`, less the warnings the emulated differences
    /// cover. D3 covers only a stop whose row has no `output_messages` at all: the emulated
    /// projector still warns about an answer of the wrong shape.
    fn shown(&self, projection: &history::display::Projection, rows: &[Vec<u8>]) -> Answer {
        if self.emulated.is_empty() {
            return ok(projection);
        }
        let mut shown = serde_json::to_value(projection).expect("a projection serializes");
        if let Some(warnings) = shown.get_mut("warnings").and_then(Value::as_array_mut) {
            warnings.retain(|w| {
                let covered = super::view::covered_by(w, &self.emulated);
                let about_media = w["code"] == model::display::code::BAD_MEDIA;
                !(covered && (about_media || answer_absent(rows, &w["event_id"])))
            });
        }
        ok(&shown)
    }

    /// The rows of `thread_id` the open store holds (none when it cannot say).
    fn thread_rows(&self, thread_id: &str) -> Vec<Vec<u8>> {
        let Some(open) = self.open.as_ref().filter(|_| !self.emulated.is_empty()) else {
            return Vec::new();
        };
        let displays = open.store.thread_displays(thread_id).unwrap_or_default();
        (open.store.rows_on_displays(thread_id, &displays))
            .unwrap_or_default()
            .iter()
            .map(|row| row.as_ref().to_vec())
            .collect()
    }
}

/// Whether the row of `event_id` among `rows` has a payload without `output_messages`.
fn answer_absent(rows: &[Vec<u8>], event_id: &Value) -> bool {
    rows.iter()
        .filter_map(|row| serde_json::from_slice::<Value>(row).ok())
        .find(|row| &row["event_id"] == event_id)
        .is_some_and(|row| row["event_data"].get("output_messages").is_none())
}

/// The ops histsim's display system serves: the session's and every display op.
fn served_ops() -> Vec<&'static str> {
    SESSION_OPS
        .into_iter()
        .chain(DISPLAY_PROTOCOL_OPS.iter().copied())
        .collect()
}

impl Served for DisplayServer {
    fn answer(&mut self, request: Request) -> Answer {
        match request {
            Request::Hello { protocol } => {
                let mut greeting = hello("histsim-display", &served_ops(), protocol)?;
                greeting.differences = self.emulated.iter().map(|d| d.id().into()).collect();
                greeting.planted = self.switch.declared();
                greeting_answer(&greeting)
            }
            Request::Open { data_dir, options } => self.open(&data_dir, options),
            Request::Close {} => {
                self.open = None;
                done()
            }
            display => dispatch_display(self, display, |other| {
                Err(refuse(
                    ErrorKind::Unsupported,
                    format!("`{}` is not a display op", other.op()),
                ))
            }),
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
                // Several processes may serve one data directory at once (`histsim live --sut`):
                // write-ahead logging and a busy timeout let their writers take turns.
                let path = Path::new(data_dir).join("display.sqlite");
                let options = StoreOptions::planted(planted);
                Rc::new(
                    SqliteDisplayStore::open_shared(&path, options, SHARED_BUSY_TIMEOUT_MS)
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
        // The SQLite store commits every row to its file before it answers.
        match kind.as_str() {
            "sqlite" => ok(&Opened {
                durability: Durability::Restart,
            }),
            _ => done(),
        }
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
}

impl ServeDisplay for DisplayServer {
    fn append(&mut self, node: u32, rows: Vec<String>) -> Answer {
        let node = self.node(node)?;
        let mut admitted = Vec::with_capacity(rows.len());
        for row in &rows {
            admitted.push(match node.deliver(row.as_bytes()) {
                Ok(Admission::Stored) => Admitted::Stored,
                Ok(Admission::Quarantined { .. }) => Admitted::Quarantined,
                Err(e) => Admitted::Failed(e.to_string()),
            });
        }
        ok(&Appended { admitted })
    }

    fn reconstruct(
        &mut self,
        node: u32,
        thread_id: String,
        primary: Option<AgentIdentity>,
    ) -> Answer {
        let node = self.node(node)?;
        let projection = node
            .reconstruct(&thread_id, primary.as_ref())
            .map_err(|e| refuse(ErrorKind::Internal, e.to_string()))?;
        let rows = self.thread_rows(&thread_id);
        self.shown(&projection, &rows)
    }

    fn project(&mut self, rows: Vec<String>, primary: Option<AgentIdentity>) -> Answer {
        let options = self.open.as_ref().map(|o| o.options).unwrap_or_default();
        let projection = project(&rows, primary.as_ref(), &options);
        let rows: Vec<Vec<u8>> = rows.into_iter().map(String::into_bytes).collect();
        self.shown(&projection, &rows)
    }

    /// Every row the open store holds, and every row it quarantined, in commit order.
    fn stored_rows(&mut self) -> Answer {
        let open = (self.open.as_ref())
            .ok_or_else(|| refuse(ErrorKind::Conflict, "not open: send `open` first"))?;
        let internal = |e: history::display::StoreError| refuse(ErrorKind::Internal, e.to_string());
        let texts = |rows: Vec<history::display::StoredRow>| -> Vec<String> {
            (rows.iter())
                .map(|r| String::from_utf8_lossy(&r.bytes).into_owned())
                .collect()
        };
        ok(&StoredRows {
            rows: texts(open.store.rows().map_err(internal)?),
            quarantined: texts(open.store.quarantined().map_err(internal)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sut::protocol::ResponseLine;
    use crate::sut::serve::{answer_line, write_response};
    use history::{BugId, Planted};

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
        let stored = exchange(&mut s, r#"{"id":6,"op":"stored_rows"}"#);
        let stored: StoredRows = serde_json::from_value(stored.ok.expect("ok")).expect("rows");
        assert_eq!(stored.rows, Vec::<String>::new());
        assert_eq!(stored.quarantined, ["not json"]);
    }

    #[test]
    fn stored_rows_lists_every_row_in_commit_order_across_processes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let open = format!(
            r#"{{"id":2,"op":"open","data_dir":{},"options":{{"store":"sqlite","planted":null}}}}"#,
            serde_json::to_string(&dir.path().display().to_string()).expect("a path")
        );
        let mut servers = [DisplayServer::default(), DisplayServer::default()];
        for s in &mut servers {
            let opened = exchange(s, &open).ok.expect("opens");
            assert_eq!(opened["durability"], "restart");
        }
        for (n, k) in [(1, 0), (2, 1), (3, 0)] {
            let s = &mut servers[k];
            let row = serde_json::json!({"agent_class": "A", "agent_id": "a", "thread_id": "t",
                "display_id": "d", "run_id": "r", "event_type": "display_event", "event_name": "E",
                "event_id": format!("e{n}"), "event_parents": ["BaseEvent"], "event_data": {}});
            let line =
                serde_json::json!({"id": 3, "op": "append", "node": 0, "rows": [row.to_string()]});
            let appended = exchange(s, &line.to_string()).ok.expect("ok");
            assert_eq!(appended["admitted"][0], "stored", "{row}");
        }
        let stored = exchange(&mut servers[1], r#"{"id":4,"op":"stored_rows"}"#);
        let stored: StoredRows = serde_json::from_value(stored.ok.expect("ok")).expect("rows");
        let ids: Vec<String> = (stored.rows.iter())
            .map(|r| serde_json::from_str::<Value>(r).expect("json")["event_id"].to_string())
            .collect();
        assert_eq!(ids, [r#""e1""#, r#""e2""#, r#""e3""#]);
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
