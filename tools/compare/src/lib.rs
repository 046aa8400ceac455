//! What the comparison tools share (their binaries are in `src/bin/`):
//! the peer libraries behind one set of adapters, per-thread CPU time, and
//! the real corpus unpacked on disk.
//!
//! - `peer-compare`: robofilter against other Rust robots.txt libraries
//!   (`tools/bench/peers`).
//! - `engine-compare`: robofilter's compiled automata against a
//!   regex-automata dense DFA (`tools/bench/engines`).
//! - `corpus-compile`: every file of the real corpus compiled, engines,
//!   sizes and times (`tools/bench/corpus`).

pub mod corpus;
pub mod cpu;
pub mod peers;
