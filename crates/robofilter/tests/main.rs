//! The engine's integration test binary (see STYLE: `autotests = false`).
//!
//! Modules that need the compiler are gated on the `compile` feature; the
//! rest (golden files) also run with `--no-default-features`, which is how
//! a crawler worker uses the crate.

mod util;

// The fuzz targets' checks and references (fuzz/fuzz_targets/), which
// `fuzz_replay` runs on data/fuzz/ and generated inputs and `url_line`
// takes its definition from. Without the compiler only that definition
// is used.
#[cfg_attr(not(feature = "compile"), allow(dead_code))]
#[path = "../../../fuzz/fuzz_targets/lines_checks.rs"]
mod lines_checks;
#[cfg_attr(not(feature = "compile"), allow(dead_code))]
#[path = "../../../fuzz/fuzz_targets/path_checks.rs"]
mod path_checks;

#[cfg(feature = "compile")]
mod agents;
#[cfg(feature = "compile")]
mod batch;
#[cfg(feature = "compile")]
mod budget;
#[cfg(feature = "compile")]
mod bundle;
#[cfg(feature = "compile")]
mod bundle_index;
#[cfg(feature = "compile")]
mod conformance;
mod cycles;
#[cfg(feature = "compile")]
mod differential;
#[cfg(feature = "compile")]
mod fuzz_replay;
mod golden;
#[cfg(feature = "compile")]
mod lint;
mod module_graph;
#[cfg(feature = "compile")]
mod oracle;
#[cfg(feature = "compile")]
mod pathological;
#[cfg(feature = "compile")]
mod random;
#[cfg(feature = "compile")]
mod rfc9309;
#[cfg(feature = "compile")]
mod sweep;
#[cfg(feature = "compile")]
mod url_forms;
mod url_line;
#[cfg(feature = "compile")]
mod usage;
