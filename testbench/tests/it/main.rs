//! Every integration test of the testbench, in one binary: one link instead of fourteen,
//! which is most of a cold `make test`. Each module is one former test file.

mod common;

mod cli;
mod cosim;
mod dcqcn;
mod dsh_theorem;
mod ecm;
mod ecn;
mod end_to_end;
mod gtkw_views;
mod hcf;
mod int_keys;
mod l2bm;
mod link_partner;
mod lossless;
mod memory;
mod outputs;
mod probe_readback;
mod properties;
mod regression;
mod reproduce;
mod scenario;
mod scoreboard;
mod sweep;
mod tcp;
mod tours;
mod vcd_readback;
