//! The display system's protocol operations, each defined once: [`display_ops!`] holds the
//! table, and everything that lists them is generated from it by a callback macro: the
//! protocol's request variants, their `op` names and the list of them
//! ([`super::protocol::DISPLAY_PROTOCOL_OPS`]), and `histsim serve display`'s dispatch (the
//! [`super::serve::ServeDisplay`] trait a served display system implements, one method an op).
//!
//! A row of the table:
//!
//! ```text
//! /// What the operation does (the protocol variant's doc).
//! fn <name> <Variant> { <field>: <type>, ... };
//! ```
//!
//! The request's `op` is `<name>`, its other fields are the variant's, in this order (the
//! order the JSON line shows them, docs/sut-protocol.md); the served method takes them as its
//! arguments. Adding a display operation is one row here, its method in the served system
//! (`display/served.rs`), its line in docs/sut-protocol.md and its use in the workload.

/// The table of the display system's operations (see the module doc for a row's grammar).
/// `display_ops!(callback { extra tokens })` expands to `callback! { { extra tokens } rows }`.
macro_rules! display_ops {
    ($callback:ident { $($extra:tt)* }) => { $callback! { { $($extra)* }

        /// Display: replica `node`'s persister receives `rows` (one delivery batch, in order).
        fn append Append { node: u32, rows: Vec<String> };

        /// Display: replica `node` answers a follow-up request: the thread's history.
        fn reconstruct Reconstruct {
            node: u32,
            thread_id: String,
            primary: Option<history::display::AgentIdentity>
        };

        /// Display, a pure projector without a store: the history of exactly these rows.
        fn project Project {
            rows: Vec<String>,
            primary: Option<history::display::AgentIdentity>
        };

        /// Display, optional: every row the store holds, of every thread, in commit order. The
        /// answer is [`super::protocol::StoredRows`].
        fn stored_rows StoredRows {};
    } };
}
pub(crate) use display_ops;
