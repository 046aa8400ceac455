//! The registered temporary files' names where a signal handler may read
//! them: in fixed slots, as C strings that are never freed (a name is
//! leaked when its file is committed or dropped: a few dozen octets per
//! temporary file), so that [`crate::signals`]' SIGBUS handler needs neither a lock nor
//! an allocation.

use std::ffi::{CStr, CString, c_char};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

/// More temporary files at once than this are not removed on SIGBUS
/// (which only `filter`, with one output, can meet).
const SLOTS: usize = 8;

static NAMES: [AtomicPtr<c_char>; SLOTS] =
    [const { AtomicPtr::new(ptr::null_mut()) }; SLOTS];

/// Registers the temporary file `path`.
pub fn add(path: &Path) {
    let Ok(name) = CString::new(path.as_os_str().as_bytes()) else {
        return;
    };
    let name = name.into_raw();
    for slot in &NAMES {
        let free = ptr::null_mut();
        if slot
            .compare_exchange(free, name, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
    // No slot: not removed on SIGBUS. Freed, since no slot holds it.
    drop(unsafe_from_raw(name));
}

/// Forgets the temporary file `path` (its name is leaked).
pub fn remove(path: &Path) {
    let path = path.as_os_str().as_bytes();
    for slot in &NAMES {
        let name = slot.load(Ordering::Acquire);
        if !name.is_null() && name_of(name).to_bytes() == path {
            let _ = slot.compare_exchange(
                name,
                ptr::null_mut(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
    }
}

/// Writes `why` to stderr, removes every registered file and ends
/// the process with `status`: async-signal-safe (what the SIGBUS and
/// SIGIO handlers do).
#[allow(unsafe_code)]
pub fn stop(why: &[u8], status: i32) -> ! {
    // SAFETY: fd 2 is only written to; a closed one fails the write,
    // which is then skipped.
    let stderr = unsafe { std::os::fd::BorrowedFd::borrow_raw(2) };
    let _ = rustix::io::write(stderr, why);
    remove_all();
    signal_hook::low_level::exit(status);
}

/// Removes every registered file: async-signal-safe.
fn remove_all() {
    for slot in &NAMES {
        let name = slot.load(Ordering::Acquire);
        if !name.is_null() {
            let _ = rustix::fs::unlink(name_of(name));
        }
    }
}

/// The name a slot held.
#[allow(unsafe_code)]
fn name_of<'a>(name: *mut c_char) -> &'a CStr {
    // SAFETY: slots hold only `CString::into_raw` pointers, never
    // freed once stored.
    unsafe { CStr::from_ptr(name) }
}

/// Takes back a name no slot took.
#[allow(unsafe_code)]
fn unsafe_from_raw(name: *mut c_char) -> CString {
    // SAFETY: `name` comes from `CString::into_raw` and was stored
    // nowhere.
    unsafe { CString::from_raw(name) }
}
