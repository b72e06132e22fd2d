//! Integration tests of `switch-run` (a `Sim` driven through its library API), in one
//! binary: one link instead of one per file.

mod common;

mod end_to_end;
mod gtkw_views;
mod lossless;
mod properties;
mod scoreboard;
mod tcp;
mod tours;
