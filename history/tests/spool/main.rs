//! Integration tests of the request spool (J14): spool bytes equal the in-memory oracle for
//! generated histories on both shapes; sends over a real HTTP connection to a local hyper server
//! carry Content-Length == sealed size == bytes received; no spool survives success, abort or
//! failure; a continuation is a second spool; the planted J14 route breaks the buffer bound.

mod bytes;
#[cfg(feature = "planted")]
mod planted;
mod send;
mod server;
mod strategies;
