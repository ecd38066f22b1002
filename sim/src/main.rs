//! `histsim`: run campaigns, replay seeds, hunt planted bugs, replay scenario files. The command
//! line lives in [`sim::cli`] so its parsing and verdicts are tested with the library.

/// mimalloc instead of the system allocator: a seed of the runs workload makes about 170,000
/// allocations, and glibc's malloc and free were a third of its instructions (docs/performance.md).
/// Where memory sits never reaches a trace, so the choice of allocator changes no seed.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    sim::refuse_transparent_huge_pages();
    sim::cli::main()
}
