//! The process's signal handling, installed only by a front end that asks
//! for it (the CLI): SIGINT, SIGTERM and SIGHUP remove temporary outputs;
//! SIGBUS from a cut memory-mapped input stops the run with a word.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::signal_safe;
use crate::temps::remove_temps;

/// Whether the process asked for the handlers ([`install_signal_handlers`]).
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// For a front end that owns its process (the CLI), never for a library
/// inside another program's (the wheel): from now on SIGINT, SIGTERM and
/// SIGHUP remove the temporary outputs and end the process with 128 + the
/// signal's number, and inputs may be memory-mapped (URL list windows, a
/// bundle under a read lease), since SIGBUS and the lease's SIGIO then
/// stop the process with a word. Without it nothing is mapped: URL lists
/// and members are read, and a file changed underneath is an error.
pub fn install_signal_handlers() {
    INSTALLED.store(true, Ordering::SeqCst);
    cleanup_on_signals();
}

/// Whether [`install_signal_handlers`] was called.
pub(crate) fn installed() -> bool {
    INSTALLED.load(Ordering::SeqCst)
}

/// From the first call on, SIGINT, SIGTERM and SIGHUP remove the
/// registered temporary files and end the run with status 128 + the
/// signal's number (130, 143, 129), as a shell reports a death by signal.
pub(crate) fn cleanup_on_signals() {
    #[cfg(unix)]
    if installed() {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let signals =
                signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]);
            let mut signals = match signals {
                Ok(s) => s,
                Err(e) => {
                    diag!(
                        "robofilter: warning: cannot catch signals ({e}): \
                         an interrupted run may leave a temporary file"
                    );
                    return;
                }
            };
            std::thread::spawn(move || {
                if let Some(signo) = signals.forever().next() {
                    let temps = remove_temps();
                    let name = match signo {
                        SIGINT => "SIGINT",
                        SIGTERM => "SIGTERM",
                        _ => "SIGHUP",
                    };
                    let removed = match temps.len() {
                        0 => String::new(),
                        _ => ", its unfinished output removed".to_string(),
                    };
                    diag!(
                        "robofilter: stopped by {name}{removed}; earlier \
                         outputs are as they were"
                    );
                    std::process::exit(128 + signo);
                }
            });
        });
    }
}

/// Whether SIGBUS is caught: from the first call on (with the handlers
/// installed), SIGBUS (a memory-mapped URL list cut
/// underneath the run, see [`crate::map_window`], or a read error on a page of a
/// mapped input) removes the temporary output files, says why on stderr
/// and ends the run with status 135 (128 + SIGBUS), all inside the
/// handler: the faulting read cannot go on, and the handler Rust's
/// runtime installs would end the run with no word.
#[allow(unsafe_code)]
pub(crate) fn stop_on_sigbus() -> bool {
    use signal_hook::consts::SIGBUS;
    if !installed() {
        return false;
    }
    static CAUGHT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CAUGHT.get_or_init(|| {
        const WHY: &[u8] = b"robofilter: a memory-mapped input was cut \
            (a URL list rewritten in place?) or could not be read (a disk \
            error?) while it was read (SIGBUS): stopped; an output file \
            (-o) is left as it was. Run again once the list is complete.\n";
        let stop = || signal_safe::stop(WHY, 128 + SIGBUS);
        // SAFETY: `stop` only makes async-signal-safe system calls
        // (write, unlink, _exit) on memory that is never freed, and
        // neither allocates nor takes a lock.
        match unsafe { signal_hook::low_level::register(SIGBUS, stop) } {
            Ok(_) => true,
            Err(e) => {
                diag!(
                    "robofilter: warning: cannot catch SIGBUS ({e}): inputs \
                     are read instead of mapped"
                );
                false
            }
        }
    })
}
