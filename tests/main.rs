//! The single integration test binary (see STYLE: `autotests = false`).

mod util;

#[cfg(feature = "compile")]
mod conformance;
#[cfg(feature = "compile")]
mod oracle;
