//! Integration tests of the request spool (J14): sends over a real HTTP connection to a local
//! hyper server carry Content-Length == sealed size == bytes received; no spool survives success,
//! abort or failure; a continuation is a second spool; the planted J14 route breaks the buffer
//! bound. (Spool bytes against the independent oracle: `sim/tests/sim/spool/`.)

#[cfg(feature = "planted")]
mod planted;
mod send;
mod server;
