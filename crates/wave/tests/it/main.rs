//! Every integration test of the waveform crate, in one binary (one link per crate).

mod common;

mod fst;
mod gtkw;
mod lint_bites;
mod writer;
