//! Benchmarks of the model live in `benches/`; this crate exists so that `make test`
//! (`cargo test --workspace --exclude mmu-bench`) never compiles criterion.
