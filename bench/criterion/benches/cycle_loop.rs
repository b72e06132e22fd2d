//! Cycle-loop throughput on the `tomahawk` profile at high load ([`mmu_bench::Load`]).
//!
//! Run: `cargo bench -p mmu-bench-criterion --bench cycle_loop` (`make bench` runs it after the
//! table of `src/bin/bench.rs`).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use hw_model::{Mmu, SwitchConfig};
use mmu_bench::{run, Load, CYCLES};

fn cycle_loop(c: &mut Criterion) {
    let mut g = c.benchmark_group("tomahawk_high_load");
    g.throughput(Throughput::Elements(CYCLES));
    g.sample_size(10);
    let derived = SwitchConfig::tomahawk()
        .build()
        .expect("tomahawk profile is valid");
    g.bench_function("100k_cycles", |b| {
        b.iter_batched(
            || {
                let mut mmu = Mmu::new(derived.clone());
                let mut load = Load::new(&mmu);
                // Warm up into steady state: queues built, pauses active.
                run(&mut mmu, &mut load);
                (mmu, load)
            },
            |(mut mmu, mut load)| run(&mut mmu, &mut load),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, cycle_loop);
criterion_main!(benches);
