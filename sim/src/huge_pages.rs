//! Transparent huge pages off for the whole process, before it plays a seed.
//!
//! mimalloc maps its memory in large aligned regions, and on a kernel whose THP setting is
//! `madvise` or `always` a first touch of such a region can be served by a 2 MiB page that the
//! kernel zeroes whole (`clear_page_erms`). A seed frees most of what it allocated, mimalloc
//! returns it, and the next seed faults fresh huge pages in again: on this project's 2-core
//! machines `clear_page_erms` was 44 % of a runs campaign's samples and a third of the journal and
//! spool campaigns' time went to the kernel (docs/performance.md, "What the build does for
//! speed"). With 4 KiB pages only the pages touched are zeroed.
//!
//! The flag belongs to the process (`prctl(PR_SET_THP_DISABLE)`), is checked at each page fault,
//! and is inherited by the processes it starts (replays in fresh processes, `histsim serve`).
//! It changes where memory sits, never a trace.

/// Turns transparent huge pages off for this process and its children. A kernel without the
/// `prctl` (before Linux 3.15) or another system leaves the setting as it was: only speed depends
/// on it.
pub fn refuse_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        // The result is ignored on purpose: an error means the kernel cannot say no to huge
        // pages, and the simulation runs the same, only slower.
        let _ = rustix::thread::disable_transparent_huge_pages(true);
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn after_the_call_the_kernel_reports_huge_pages_off() {
        super::refuse_transparent_huge_pages();
        assert_eq!(
            rustix::thread::transparent_huge_pages_are_disabled().ok(),
            Some(true)
        );
    }
}
