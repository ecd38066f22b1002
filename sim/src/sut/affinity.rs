//! One CPU for a campaign thread and the systems under test it starts.
//!
//! A seed driven through the SUT protocol is hundreds of round trips in a row, each one a
//! request written to a child and an answer read back, and the thread waits for every answer.
//! When the child runs on another CPU, each direction is a cross-CPU wake-up. On the 2-core
//! virtual machines histsim's CI runs on, a pipe round trip costs about 50 µs across CPUs and
//! about 7 µs on one (measured with a two-process ping-pong; docs/sut-protocol.md, section
//! "Speed"), so a seed spent more time waking processes than running them. A campaign thread
//! therefore binds itself to one CPU before it starts a child; the child inherits the binding.
//! Thread `k` takes the `k`-th allowed CPU (wrapping), so `--jobs` threads spread over the
//! CPUs the process may use. `--sut-any-cpu` turns this off, for a system that runs threads of
//! its own in parallel.
//!
//! Nothing here touches what a seed does: the binding changes where processes run, never the
//! order of requests and answers, so traces are the same with and without it.

use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};

/// Binds the calling thread to the `worker`-th CPU it may run on (counting from 0, wrapping);
/// the processes it starts afterwards inherit the binding. Returns that CPU, or `None` when
/// the thread's CPUs cannot be read or set (the thread then runs where the scheduler puts it).
pub fn share_one_cpu(worker: usize) -> Option<usize> {
    let allowed = sched_getaffinity(None).ok()?;
    let cpus: Vec<usize> = (0..CpuSet::MAX_CPU)
        .filter(|&c| allowed.is_set(c))
        .collect();
    let cpu = *cpus.get(worker % cpus.len().max(1))?;
    let mut one = CpuSet::new();
    one.set(cpu);
    sched_setaffinity(None, &one).ok()?;
    Some(cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_bound_to_one_of_its_allowed_cpus_and_its_children_inherit_it() {
        std::thread::spawn(|| {
            let before = sched_getaffinity(None).expect("the thread's CPUs");
            let cpu = share_one_cpu(1).expect("a CPU");
            assert!(before.is_set(cpu), "cpu {cpu} was not allowed");
            let now = sched_getaffinity(None).expect("the thread's CPUs");
            assert_eq!(now.count(), 1);
            assert!(now.is_set(cpu));
            // A child started now runs on that CPU alone.
            let out = std::process::Command::new("sh")
                .args(["-c", "grep Cpus_allowed_list /proc/self/status"])
                .output()
                .expect("sh runs");
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.trim().ends_with(&format!("\t{cpu}")), "{text}");
        })
        .join()
        .expect("the thread ends");
    }
}
