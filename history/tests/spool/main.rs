//! Integration tests of the request spool (J14): sends over a real HTTP connection to a local
//! hyper server carry Content-Length == sealed size == bytes received; no spool survives success,
//! abort or failure; a continuation is a second spool; the planted J14 route breaks the buffer
//! bound. (Spool bytes against the independent oracle: `sim/tests/sim/spool/`.)

#[cfg(feature = "planted")]
mod planted;
mod send;
mod server;

/// A request directory of its own, inside a temporary directory that goes with the returned
/// guard: what every send and build of these tests spools into.
fn request_dir() -> (tempfile::TempDir, history::spool::SpoolDir) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = history::spool::SpoolDir::open(tmp.path().join("request")).expect("open");
    (tmp, dir)
}
