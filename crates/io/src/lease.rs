//! Read leases on bundle files (Linux `F_SETLEASE`).

/// Read leases on bundles (`fcntl(F_SETLEASE, F_RDLCK)`, Linux). While
/// this process holds one, no other process can open the file for
/// writing or truncate it: the kernel holds such an opener back (for up
/// to `/proc/sys/fs/lease-break-time`, 45 s by default) and sends this
/// process SIGIO, on which the run stops at once (status 2, temporary
/// outputs removed, the file named), so that the opener goes on only
/// after it. A map of a leased bundle therefore shows the octets
/// validated for as long as the run lasts, as a copy would, without the
/// copy.
///
/// The system refuses a lease on a file open for writing anywhere, on a
/// file another user owns (without `CAP_LEASE`) and on file systems
/// without leases (NFS, FUSE); the caller then reads the members instead.
/// A run stopped (SIGSTOP) for longer than the lease-break time lets the
/// opener through: it stops at once when it resumes.
#[cfg(target_os = "linux")]
mod imp {
    use std::ffi::{CString, c_char};
    use std::fs::File;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::ptr;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

    /// More leased files at once than this (shards) are read instead.
    const SLOTS: usize = 64;

    /// Per slot: a leased descriptor (`FREE`, or `CLAIMED` while a lease
    /// is being taken), and the message naming its file (a C string,
    /// never freed: a reused slot leaks the old one, a few hundred octets
    /// per leased file).
    static FDS: [AtomicI32; SLOTS] = [const { AtomicI32::new(FREE) }; SLOTS];
    static WHY: [AtomicPtr<c_char>; SLOTS] =
        [const { AtomicPtr::new(ptr::null_mut()) }; SLOTS];
    const FREE: i32 = -1;
    const CLAIMED: i32 = -2;

    /// A read lease, given back when dropped.
    pub struct Lease {
        slot: usize,
        /// A duplicate of the file's descriptor (the lease belongs to the
        /// open file, which both share), so that the slot never names a
        /// closed descriptor.
        fd: OwnedFd,
    }

    impl Lease {
        /// Takes a read lease on `file` (named `name` in messages), or
        /// `None` if the system refuses it.
        pub fn take(file: &File, name: &str) -> Option<Lease> {
            if !watch() {
                return None;
            }
            let fd = OwnedFd::from(file.try_clone().ok()?);
            let why = CString::new(message(name)).ok()?;
            let slot = FDS.iter().position(|s| {
                s.compare_exchange(
                    FREE,
                    CLAIMED,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
            })?;
            // Not armed yet: the handler reads only armed slots' messages.
            WHY[slot].store(why.into_raw(), Ordering::Release);
            if fcntl(fd.as_raw_fd(), libc::F_SETLEASE, libc::F_RDLCK) != 0 {
                FDS[slot].store(FREE, Ordering::Release);
                return None;
            }
            FDS[slot].store(fd.as_raw_fd(), Ordering::Release);
            // A break that began before the slot was armed found no slot
            // to stop for: it shows here.
            if fcntl(fd.as_raw_fd(), libc::F_GETLEASE, 0) != libc::F_RDLCK {
                stop(slot);
            }
            Some(Lease { slot, fd })
        }
    }

    impl Drop for Lease {
        fn drop(&mut self) {
            FDS[self.slot].store(FREE, Ordering::Release);
            // Given back explicitly: the file's own descriptor keeps the
            // open file, and with it the lease, alive.
            fcntl(self.fd.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK);
        }
    }

    fn message(name: &str) -> String {
        format!(
            "robofilter: bundle '{name}' was opened for writing by another \
             process during the run (to be changed in place): stopped \
             before any verdict could come from a changed file, and the \
             other process goes on once this one has ended; an output file \
             (-o) is left as it was. Run again, and replace a bundle in use \
             by writing a new file and renaming it over the old one (as \
             `robofilter compile -o` does).\n"
        )
    }

    #[allow(unsafe_code)]
    fn fcntl(fd: i32, cmd: i32, arg: i32) -> i32 {
        // SAFETY: F_SETLEASE and F_GETLEASE take an int and touch no
        // memory of this process; a bad descriptor fails with EBADF.
        unsafe { libc::fcntl(fd, cmd, arg) }
    }

    /// Catches SIGIO (once); whether it is caught.
    #[allow(unsafe_code)]
    fn watch() -> bool {
        static CAUGHT: OnceLock<bool> = OnceLock::new();
        *CAUGHT.get_or_init(|| {
            // SAFETY: `on_sigio` only makes async-signal-safe system calls
            // (fcntl, write, unlink, _exit) on memory that is never freed,
            // and neither allocates nor takes a lock.
            unsafe { signal_hook::low_level::register(libc::SIGIO, on_sigio) }
                .is_ok()
        })
    }

    /// SIGIO: stops the run if a leased file's lease is being broken (its
    /// lease then reads as `F_UNLCK`); any other SIGIO is ignored.
    fn on_sigio() {
        for (slot, fd) in FDS.iter().enumerate() {
            let fd = fd.load(Ordering::Acquire);
            if fd >= 0 && fcntl(fd, libc::F_GETLEASE, 0) == libc::F_UNLCK {
                stop(slot);
            }
        }
    }

    /// Stops the run with status 2, naming slot `slot`'s file:
    /// async-signal-safe.
    #[allow(unsafe_code)]
    fn stop(slot: usize) -> ! {
        let why = WHY[slot].load(Ordering::Acquire);
        // SAFETY: messages are `CString::into_raw` pointers, never freed.
        let why = if why.is_null() {
            &[][..]
        } else {
            unsafe { std::ffi::CStr::from_ptr(why) }.to_bytes()
        };
        crate::signal_safe::stop(why, 2)
    }
}

/// Leases exist on Linux only: elsewhere bundles are read, not mapped.
#[cfg(not(target_os = "linux"))]
mod imp {
    pub enum Lease {}

    impl Lease {
        pub fn take(_: &std::fs::File, _: &str) -> Option<Lease> {
            None
        }
    }
}

pub(crate) use imp::*;
