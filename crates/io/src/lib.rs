//! robofilter's files, for every front end (the CLI, the wheel, a Rust
//! crawler): what the engine leaves to its caller.
//!
//! - [`with_checker`]: a compiled argument (a rules file, a bundle, or a
//!   shard directory) opened into a [`robofilter::UrlChecker`], with the
//!   policy of how it is read: a bundle's members under a read lease and
//!   mapped, or read when first needed and checked against the file's
//!   identity, so that a file changed underneath never gives a verdict
//!   other than the one it gave when it was opened.
//! - [`Input`]: URL lists, plain, gzip or zstd (decompression lives here
//!   only), refused when they are compiled files; [`Members`]: gzip
//!   members decoded from any member's start, for decoding a
//!   multi-member file on several threads.
//! - [`AtomicFile`] and [`Output`]: outputs written under a temporary
//!   name and renamed into place, never over one of the run's inputs.
//! - [`ShardIndex`]: the one reader and writer of a shard directory's
//!   `index.json`.
//!
//! Signal handling is process-wide, so it is installed only by a front end
//! that owns the process ([`install_signal_handlers`], the CLI): without
//! it, nothing is memory-mapped that a signal would have to guard.

/// `eprintln!` that never panics: a warning that cannot be written
/// (`2>/dev/full`, a closed pipe) is dropped.
macro_rules! diag {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

// The modules, bottom-up: `path`, `owned`, `limits`, `signal_safe` (names
// and bytes); `temps`, `signals`, `lease`; `decompress`, `read`;
// `bundle_file`, `compiled`; `input`, `output`; `shard_dir`; `checker`
// (a checker for any compiled argument). The workspace test checks that
// no two import each other.
mod bundle_file;
mod checker;
mod compiled;
mod decompress;
mod gzip;
mod input;
mod lease;
mod limits;
mod output;
mod owned;
mod path;
mod read;
mod shard_dir;
mod signal_safe;
mod signals;
mod temps;

pub use crate::bundle_file::{
    Arena, BundleIndex, MemberFile, with_bundle_checker,
};
pub use crate::checker::{Open, with_checker};
pub use crate::compiled::{
    Compiled, check_agent, check_agents, check_dialect, compile, load_bundle,
    load_rules, rules_or_robots,
};
pub use crate::decompress::{Peeked, decoder, decompress_bytes, peek};
pub use crate::gzip::{
    Decoded, MemberError, Members, may_start_member, next_member_start,
};
pub use crate::input::{Feed, Input, check_streams_once};
pub use crate::limits::{GOOGLE_READ_CAP, Limits};
pub use crate::output::{
    AtomicFile, DIRECT_WRITE_LEN, Output, TEMP_SUFFIX, check_output_not_input,
    check_stdout_not_input, temp_prefix,
};
pub use crate::owned::{Aligned, Bytes};
pub use crate::path::{display, is_stdin, open, os_bytes, shrank};
pub use crate::read::{
    Whole, Window, map_window, read_bounded, read_compiled, read_owned,
};
pub use crate::shard_dir::{
    AtomicDir, INDEX_NAME, MAX_SHARDS, OpenShards, ShardFile, ShardIndex,
    files_of, fingerprint, open_shards, shard_name,
};
pub use crate::signals::install_signal_handlers;
pub use crate::temps::{commit_temp, forget_temp, registered_temp};

#[cfg(test)]
mod tests;
