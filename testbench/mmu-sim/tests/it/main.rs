//! Integration tests of the `mmu-sim` command line, and the tests that drive both the
//! binary and the libraries, in one binary: one link instead of one per file.

mod common;

mod cli;
mod cosim;
mod dcqcn;
mod doc_refs;
mod ecm;
mod ecn;
mod fabric;
mod fabric_headroom;
mod fabric_outputs;
mod hcf;
mod help_blocks;
mod int_cc;
mod int_keys;
mod l2bm;
mod memory;
mod outputs;
mod probe_readback;
mod regression;
mod reproduce;
mod sweep;
mod vcd_readback;
