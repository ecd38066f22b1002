//! The client's live subscription as its turns see it: the steps received so far, and a wait for
//! one of them that wakes when a frame arrives.
//!
//! The wait replaced a loop that looked every simulated millisecond for up to half a second: a
//! run whose stop is dropped made 500 timer wake-ups, and the loop was 7 % of the display
//! workload's time. The wait ends at the same simulated instant the loop did, so every trace is
//! unchanged (see [`LiveSteps::wait_for`]).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::{sleep_until, timeout_at, Instant};

/// What the client's subscription has delivered, shared by the task reading it and the turns.
#[derive(Default)]
pub struct LiveSteps {
    seen: RefCell<BTreeSet<u32>>,
    arrived: Notify,
}

impl LiveSteps {
    /// The reader received a delivery of `step`.
    pub fn saw(&self, step: u32) {
        self.seen.borrow_mut().insert(step);
        // A permit is kept when nobody waits; a waiter woken early looks again and waits on.
        self.arrived.notify_one();
    }

    fn has(&self, step: u32) -> bool {
        self.seen.borrow().contains(&step)
    }

    /// Waits until `step` has been received or `wait_ms_max` simulated milliseconds have passed.
    ///
    /// It returns when the loop it replaced did. That loop looked, slept 1 ms, and gave up after
    /// `wait_ms_max` sleeps. A delivery is read at the start of a turmoil step, after the timer of
    /// the look due at that instant has fired, so the loop saw it 1 ms later, or at the deadline if
    /// that came first: this wait sleeps the same millisecond after a delivery of `step`.
    pub async fn wait_for(&self, step: u32, wait_ms_max: u64) {
        let deadline = Instant::now() + Duration::from_millis(wait_ms_max);
        while !self.has(step) {
            if timeout_at(deadline, self.arrived.notified()).await.is_err() {
                return;
            }
            if self.has(step) {
                let seen_by_loop = Instant::now() + Duration::from_millis(1);
                sleep_until(seen_by_loop.min(deadline)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    fn paused_runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap()
    }

    /// Runs `deliveries` (step, at ms) on a reader task and waits for `step`; the simulated ms
    /// the wait took.
    fn waited_ms(deliveries: &[(u32, u64)], step: u32, wait_ms_max: u64) -> u64 {
        let rt = paused_runtime();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            let live = Rc::new(LiveSteps::default());
            let reader = live.clone();
            let deliveries = deliveries.to_vec();
            tokio::task::spawn_local(async move {
                let start = Instant::now();
                for (s, at_ms) in deliveries {
                    sleep_until(start + Duration::from_millis(at_ms)).await;
                    reader.saw(s);
                }
            });
            let start = Instant::now();
            live.wait_for(step, wait_ms_max).await;
            (Instant::now() - start).as_millis() as u64
        })
    }

    #[test]
    fn a_step_already_received_needs_no_wait() {
        let rt = paused_runtime();
        rt.block_on(async {
            let live = LiveSteps::default();
            live.saw(3);
            let start = Instant::now();
            live.wait_for(3, 500).await;
            assert_eq!(Instant::now(), start);
        });
    }

    #[test]
    fn the_wait_ends_a_millisecond_after_the_step_arrives() {
        assert_eq!(waited_ms(&[(1, 5), (2, 40)], 2, 500), 41);
    }

    #[test]
    fn other_steps_do_not_end_the_wait() {
        assert_eq!(waited_ms(&[(1, 5), (4, 9), (7, 60)], 7, 500), 61);
    }

    #[test]
    fn a_step_that_never_comes_ends_the_wait_at_the_bound() {
        assert_eq!(waited_ms(&[(1, 5)], 9, 500), 500);
    }

    #[test]
    fn a_step_at_the_bound_ends_the_wait_at_the_bound() {
        assert_eq!(waited_ms(&[(2, 500)], 2, 500), 500);
    }
}
