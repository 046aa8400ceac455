//! Per-thread CPU time, and the median the tools report of it (the
//! machine is shared, so wall time says little).

/// CPU time of the calling thread, in ns.
pub fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec and the clock id is a
    // constant the kernel knows; clock_gettime writes only into `ts`.
    let rc =
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// The median of `v` (the upper middle one of an even count); sorts `v`.
/// Panics if `v` is empty.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
