//! `histsim serve`: histsim's own components behind the SUT protocol, the reference adapters.
//! This file holds what every served system shares (reading request lines, answering them in
//! order, `hello`, the planted switch); each workload with a process boundary serves its own
//! system through [`Served`] (the display system in `display/served.rs`, the runs store in
//! `serve_runs.rs`), named by its `Workload::SERVE`.

use super::protocol::{
    ErrorBody, ErrorKind, Hello, OpenOptions, Request, RequestLine, PROTOCOL_VERSION,
};
use history::{BugId, Planted};
use serde::Serialize;
use serde_json::Value;
use std::cell::RefCell;
use std::io::{BufRead, Write};

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
pub struct Json(pub(crate) Vec<u8>);

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

/// What a served display system answers, generated from the display system's operation table
/// ([`super::display_ops::display_ops!`]).
macro_rules! serve_display {
    ({} $($(#[$doc:meta])* fn $name:ident $variant:ident {
        $($field:ident: $fty:ty),* };)*) => {
        /// A display system served over the protocol: one method a display op, its arguments
        /// the request's fields.
        pub(crate) trait ServeDisplay {
            $($(#[$doc])* fn $name(&mut self, $($field: $fty),*) -> Answer;)*
        }

        /// `request` answered by `system` when it asks a display op; by `other` otherwise.
        pub(crate) fn dispatch_display(
            system: &mut impl ServeDisplay,
            request: Request,
            other: impl FnOnce(Request) -> Answer,
        ) -> Answer {
            match request {
                $(Request::$variant { $($field),* } => system.$name($($field),*),)*
                request => other(request),
            }
        }
    };
}

super::display_ops::display_ops!(serve_display {});

/// A system served over the protocol: answers one request at a time.
pub trait Served {
    fn answer(&mut self, request: Request) -> Answer;
}

/// What `histsim serve` passes a workload's [`Served`] system when it starts one.
pub struct ServeOptions {
    /// `--store`, when given: overrides `open`'s.
    pub store_override: Option<String>,
    /// How `open`'s planted bug is taken.
    pub switch: PlantedSwitch,
    /// Known differences to emulate and declare (display's `--emulate-differences`).
    pub emulated: model::display::Declared,
}

/// Starts a workload's served system; `Err` says why these options do not fit it.
pub type StartServed = fn(ServeOptions) -> Result<Box<dyn Served>, String>;

pub(crate) fn refuse(kind: ErrorKind, message: impl Into<String>) -> ErrorBody {
    ErrorBody {
        kind,
        message: message.into(),
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
