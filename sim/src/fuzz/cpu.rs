//! The CPU time a fuzzing run used, beside its wall clock: a campaign that shares the machine
//! (or is paused) runs fewer wall-clock executions a second than it does a CPU second, and the
//! issue's figures are "on one core".
//!
//! Read from `/proc/self/stat`: the CPU time of this process's waited-for children (its fields
//! `cutime` and `cstime`), taken before and after the target runs. A libFuzzer `-fork` worker
//! is a child of the target, waited for by it, so its time is counted too. Elsewhere than Linux
//! there is no figure.

/// Clock ticks a second of `/proc`'s times: the kernel's `USER_HZ`, 100 on every architecture
/// this runs on (the value the kernel exports to user space, whatever its own tick rate).
const USER_HZ: f64 = 100.0;

/// CPU seconds (user + system) of the waited-for children of this process so far, if known.
pub fn children_cpu_s() -> Option<f64> {
    children_cpu_s_in(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// `cutime + cstime` of a `/proc/PID/stat` line, in seconds. The process name (field 2) is in
/// parentheses and may hold spaces and parentheses, so the fields are counted after its last
/// `)`: there the state is field 3, `cutime` field 16 and `cstime` field 17.
fn children_cpu_s_in(stat: &str) -> Option<f64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |field: usize| fields.get(field - 3)?.parse::<u64>().ok();
    Some((ticks(16)? + ticks(17)?) as f64 / USER_HZ)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_times_are_read_after_the_process_name() {
        // A name with a space and a parenthesis, as `comm` may have.
        let line = "4242 (sim disp) lay) S 1 4242 4242 0 -1 4194560 900 0 0 0 \
                    1200 300 4567 89 20 0 1 0 100 1000000 2000 18446744073709551615";
        assert_eq!(children_cpu_s_in(line), Some(46.56));
    }

    #[test]
    fn a_short_or_garbled_line_has_no_figure() {
        assert_eq!(children_cpu_s_in("4242 (sim) S 1 2 3"), None);
        assert_eq!(children_cpu_s_in("no parenthesis here"), None);
        assert_eq!(
            children_cpu_s_in("1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 1 x 1"),
            None
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_busy_child_adds_its_cpu_time() {
        let before = children_cpu_s().expect("/proc/self/stat reads on Linux");
        // About a tenth of a second of shell arithmetic, well above the 10 ms tick.
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
            .status()
            .expect("sh runs");
        assert!(status.success());
        let after = children_cpu_s().expect("/proc/self/stat reads on Linux");
        assert!(after > before, "{before} s then {after} s");
    }
}
