//! Planted J14 (the whole body built in memory): the bytes and sizes still agree, so only the
//! builder's buffer figure gives it away, and it does for any history larger than a few rows.

use history::spool::{
    build, BuildOptions, NeverAbort, RequestHead, SendOptions, Shape, SyntheticOptions,
    SyntheticRows,
};
use history::{BugId, Planted};

use crate::server::{Behaviour, TestServer};

#[test]
fn planted_j14_breaks_the_buffered_bytes_bound_and_the_fix_does_not() {
    let server = TestServer::start(Behaviour::Check);
    let (_tmp, mut dir) = crate::request_dir();
    for shape in Shape::ALL {
        for planted in [Planted::none(), Planted::only(BugId::J14)] {
            let mut rows = SyntheticRows::new(SyntheticOptions {
                content_bytes_target: 1 << 20,
                tool_heavy: true,
                seed: 5,
                ..SyntheticOptions::default()
            });
            let opts = BuildOptions {
                planted,
                ..BuildOptions::default()
            };
            let built = build(
                shape,
                &RequestHead::default(),
                &mut rows,
                &mut dir,
                &opts,
                &NeverAbort,
            )
            .expect("build");
            let send = SendOptions {
                target: shape.default_target().into(),
                io_timeout_ms: Some(60_000),
                ..SendOptions::default()
            };
            let report = built.send(server.addr, &send, &NeverAbort).expect("send");
            let got = server.next_request();
            assert_eq!(got.body.len() as u64, report.sealed_bytes);
            assert_eq!(report.content_length, report.sealed_bytes);
            assert_eq!(report.sent_bytes, report.sealed_bytes);
            if planted.is(BugId::J14) {
                assert!(
                    report.peak_buffered_bytes > report.buffered_bound_bytes,
                    "{report:?}"
                );
                // The whole history and the whole body: over twice the body size.
                assert!(report.peak_buffered_bytes > 2 * (1 << 20));
            } else {
                assert!(
                    report.peak_buffered_bytes <= report.buffered_bound_bytes,
                    "{report:?}"
                );
                // The bound is a small fraction of the body, so it means something.
                assert!(
                    report.buffered_bound_bytes < report.sealed_bytes / 8,
                    "{report:?}"
                );
            }
        }
    }
}
