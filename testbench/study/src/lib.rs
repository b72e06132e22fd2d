//! Studies on the testbench: sweeps of many runs ([`sweep`]) and the paper reproductions
//! built on them ([`reproduce`]), with their statistics and plots. Every run is a
//! `switch_run::Sim`; a new reproduction or a new measure goes here.

pub mod reproduce;
pub mod sweep;
