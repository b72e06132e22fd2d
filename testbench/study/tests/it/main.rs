//! Integration tests of the `study` crate, in one binary.

// `switch-run`'s test helpers, shared by path (this crate uses a part of them).
#[path = "../../../run/tests/it/common/mod.rs"]
mod common;

mod dsh_fct;
mod dsh_theorem;
mod fabric_net;
mod l2bm_mu;
