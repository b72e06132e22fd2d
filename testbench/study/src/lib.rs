//! Studies on the testbench: sweeps of many runs ([`sweep`]) and the paper reproductions
//! built on them ([`reproduce`]), with their statistics and plots. Every run is a
//! `switch_run::Sim`; a new reproduction or a new measure goes here.
//!
//! The sweep engine knows no reproduction: a spec names a measure from the list it is
//! given, and `reproduce` hands it theirs (the `Spec::load`, `read` and `parse` there), so
//! the imports run from `reproduce` to `sweep` only.

pub mod reproduce;
pub mod sweep;
