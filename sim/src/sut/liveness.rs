//! Whether a system under test whose answer is late is slow or hung, from what the operating
//! system says of it (Linux's `/proc`), read only when a wait runs long.
//!
//! A timeout is wall time, and wall time on a loaded machine is not the child's. Measured on
//! the project's 2-core machine with two CPU-bound processes beside `adapters/aihub/campaign.sh`
//! (docs/sut-protocol.md, "Transport"): the aihub adapter's `reconstruct` of a long thread got
//! 8 % of a CPU (400 ms of CPU in 5 s) and needed more than 20 s of wall time, computing all
//! along. A hung child is different: it sleeps on something that never comes (no CPU, nothing
//! runnable) or spins (CPU, forever). So a wait that runs long is judged by what the child
//! does: asleep, it is hung at the timeout; while it computes (or waits for a CPU or the disk)
//! it is waited for until it has used the timeout in CPU time, a budget the load does not
//! change, within a wall-time cap. These waits decide only when a seed is called broken, never
//! what it shows.

use std::time::{Duration, Instant};

/// What the process tree of a child was doing at one moment.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sample {
    /// User + system CPU time of the child and its descendants, in clock ticks.
    cpu_ticks: u64,
    /// Whether a thread of the tree is running, runnable (waiting for a CPU) or in an
    /// uninterruptible wait (the disk): waiting on the machine, not on histsim.
    busy: bool,
    at: Instant,
}

/// `/proc`'s clock ticks a second: Linux reports CPU times in USER_HZ, fixed at 100 by its ABI
/// whatever the kernel's own tick rate.
const TICKS_PER_SECOND: u64 = 100;

/// Below this share of the observed wall time spent on a CPU, a child is not computing: a
/// process blocked on a read uses none; the floor leaves room for a runtime's housekeeping
/// thread (a garbage collector, a timer) that wakes now and then in an idle process.
const COMPUTING_SHARE_PERCENT: u64 = 1;

/// The child `pid` and its descendants now (`None` where `/proc` cannot tell: no longer wait is given
/// on evidence that is not there).
pub(super) fn sample(pid: u32) -> Option<Sample> {
    let at = Instant::now();
    let processes = processes()?;
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(processes.iter().filter(|p| p.ppid == parent).map(|p| p.pid));
        i += 1;
    }
    let in_tree: Vec<&Proc> = processes.iter().filter(|p| tree.contains(&p.pid)).collect();
    if in_tree.is_empty() {
        return None;
    }
    let cpu_ticks = in_tree.iter().map(|p| p.cpu_ticks).sum();
    let busy = in_tree.iter().any(|p| any_thread_busy(p.pid));
    Some(Sample {
        cpu_ticks,
        busy,
        at,
    })
}

/// The CPU time the tree used from `before` to `after`.
pub(super) fn cpu_between(before: Sample, after: Sample) -> Duration {
    let ticks = after.cpu_ticks.saturating_sub(before.cpu_ticks);
    Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND)
}

/// Whether a child that gave no answer from `before` to `after` made progress: `Ok(why)` it is
/// alive (it computed, or waits for a CPU or the disk), `Err(why)` it is not (asleep, waiting
/// for something that will not come), or `/proc` could not tell.
pub(super) fn progress(before: Option<Sample>, after: Option<Sample>) -> Result<String, String> {
    let (Some(b), Some(a)) = (before, after) else {
        return Err("its CPU time could not be read".into());
    };
    let window = a.at.saturating_duration_since(b.at);
    let used = cpu_between(b, a);
    let floor = (window / 100 * COMPUTING_SHARE_PERCENT as u32)
        .max(Duration::from_millis(1000 / TICKS_PER_SECOND));
    let seen = format!(
        "{} ms of CPU in {} ms",
        used.as_millis(),
        window.as_millis()
    );
    if used >= floor {
        Ok(format!("it was computing ({seen})"))
    } else if a.busy {
        Ok(format!("it was waiting for a CPU or the disk ({seen})"))
    } else {
        Err(format!("it was asleep ({seen}, nothing of it runnable)"))
    }
}

/// One process of `/proc`: its id, its parent's and its CPU time.
struct Proc {
    pid: u32,
    ppid: u32,
    cpu_ticks: u64,
}

/// Every process `/proc` shows (read only when a wait has run long: a few hundred small files).
fn processes() -> Option<Vec<Proc>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // A process may end between the listing and the read: it is simply not there.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some((_, ppid, cpu_ticks)) = stat_fields(&stat) {
            out.push(Proc {
                pid,
                ppid,
                cpu_ticks,
            });
        }
    }
    Some(out)
}

/// Whether a thread of `pid` is running or runnable (`R`) or in an uninterruptible wait (`D`).
fn any_thread_busy(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("stat"))
            .ok()
            .and_then(|stat| stat_fields(&stat))
            .is_some_and(|(state, _, _)| state == 'R' || state == 'D')
    })
}

/// A `/proc/PID/stat` line's state, parent and user + system CPU ticks. The command name (in
/// parentheses) may hold spaces and parentheses itself, so the fields are counted from its last
/// `)`: state is field 3, the parent 4, utime 14 and stime 15.
fn stat_fields(stat: &str) -> Option<(char, u32, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((state, ppid, utime + stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64, cpu_ticks: u64, busy: bool, start: Instant) -> Sample {
        Sample {
            cpu_ticks,
            busy,
            at: start + Duration::from_millis(ms),
        }
    }

    #[test]
    fn a_stat_line_is_read_past_a_command_name_with_spaces_and_parentheses() {
        let line =
            "4242 (my (odd) name) S 17 4242 4242 0 -1 4194304 100 0 0 0 250 31 0 0 20 0 1 0 5 0 0";
        assert_eq!(stat_fields(line), Some(('S', 17, 281)));
        assert_eq!(stat_fields("garbage"), None);
    }

    #[test]
    fn a_computing_or_waiting_child_makes_progress_an_asleep_one_does_not() {
        let t = Instant::now();
        let idle = (Some(at(0, 10, false, t)), Some(at(5_000, 10, false, t)));
        let computing = (Some(at(0, 10, false, t)), Some(at(5_000, 60, false, t)));
        let runnable = (Some(at(0, 10, false, t)), Some(at(5_000, 10, true, t)));
        assert!(progress(idle.0, idle.1).is_err_and(|why| why.contains("asleep")));
        assert!(progress(computing.0, computing.1).is_ok_and(|why| why.contains("500 ms of CPU")));
        assert!(progress(runnable.0, runnable.1).is_ok());
        assert!(progress(None, None).is_err());
        let (a, b) = (
            computing.0.expect("a sample"),
            computing.1.expect("a sample"),
        );
        assert_eq!(cpu_between(a, b), Duration::from_millis(500));
    }

    #[test]
    fn this_process_is_seen_with_its_cpu_time() {
        let me = std::process::id();
        let mut spent = 0u64;
        for i in 0..2_000_000u64 {
            spent = spent.wrapping_add(i * i);
        }
        let s = sample(me).expect("/proc shows this process");
        assert!(s.busy, "this thread is running");
        assert!(spent > 0);
    }
}
