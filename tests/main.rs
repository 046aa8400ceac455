//! The command-line tool's integration test binary: each module runs the
//! `robofilter` binary that cargo built for this run (`util::Dir`) on
//! inputs it writes, and checks its output, files and exit status.

mod util;

// The engine's random robots.txt files and URLs.
#[path = "../crates/robofilter/tests/random.rs"]
mod random;

// The import-cycle finder the engine's module-graph test uses.
#[path = "../crates/robofilter/tests/cycles.rs"]
mod cycles;

mod audit;
mod cli;
mod edges_input;
mod edges_output;
mod edges_sources;
mod fetch;
mod formats;
mod frontier;
mod inspect_json;
mod lint;
mod shards;
mod usage;
mod workspace;
