//! The helpers of `switch-run`'s integration tests, and running the `mmu-sim` binary
//! (only this crate's tests can name it).
#![allow(dead_code)]

#[path = "../../../../run/tests/it/common/mod.rs"]
mod shared;
pub use shared::*;

/// Run `mmu-sim` with `args`.
pub fn mmu_sim(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mmu-sim"))
        .args(args)
        .output()
        .unwrap()
}
