//! Integration tests of `switch-run` (a `Sim` driven through its library API), in one
//! binary: one link instead of one per file.

mod common;

mod dcqcn;
mod ecn;
mod end_to_end;
mod gtkw_views;
mod l2bm;
mod lossless;
mod properties;
mod scoreboard;
mod tcp;
mod tours;
