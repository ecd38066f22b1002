//! A future that yields once: the await point between the legacy journal's "read max seq" and
//! "write" (planted R5), without depending on any async runtime.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Pending on the first poll (after asking to be woken again), ready on the second.
#[derive(Debug, Default)]
pub struct YieldNow {
    yielded: bool,
}

impl YieldNow {
    pub fn new() -> YieldNow {
        YieldNow { yielded: false }
    }
}

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Runs a future that waits on nothing outside itself (at most a [`YieldNow`]) to its end by
/// polling it again: a journal call outside any async runtime.
pub fn poll_to_end<F: Future>(f: F) -> F::Output {
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let mut f = std::pin::pin!(f);
    for _ in 0..1000 {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
    panic!("a future that waits on nothing outside itself did not finish in 1000 polls");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Waker;

    #[test]
    fn pending_once_then_ready() {
        let mut cx = Context::from_waker(Waker::noop());
        let mut f = std::pin::pin!(YieldNow::new());
        assert_eq!(f.as_mut().poll(&mut cx), Poll::Pending);
        assert_eq!(f.as_mut().poll(&mut cx), Poll::Ready(()));
    }
}
