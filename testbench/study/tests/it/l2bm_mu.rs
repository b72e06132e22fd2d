//! L2BM's drain rate `mu` (Table I: per egress port and priority): the measured meter
//! against the queue's real drain rate, its broken twin caught, the weight it gives a
//! queue that drains below line rate, and the scenario key.

use crate::common::{self, flow_spec};
use hw_model::l2bm::{weight_of, W_ONE};
use hw_model::{Fault, L2bmMu, Policy, SwitchConfig};
use scenario::Overrides;
use scenario::{FlowSpec, PatternKind, Scenario};
use study::reproduce::l2bm_hybrid::Setup;
use study::sweep::Spec;
use switch_run::Sim;

/// The stated error of the measured `1 / mu` against the queue's real cycles per cell
/// over the run (docs/l2bm.md, "Drain rate"): 10 %.
const MU_ERROR: f64 = 0.10;

/// Egress port 2 (100 Gb/s) shared by two lossy queues fed at line rate (ports 0 and 1,
/// priorities 1 and 2; DWRR with equal quanta): each drains at half the port. A third
/// lossy queue (port 3 to port 1, priority 1) drains at the line rate of its 50 Gb/s port,
/// where the line-rate reading is right: the other term of `C`.
fn shared_port(mu: L2bmMu) -> Scenario {
    let sw = SwitchConfig {
        ports: 4,
        port_speeds_gbps: vec![100.0, 50.0, 100.0, 100.0],
        sram_read_cells_per_cycle: 4,
        sram_write_cells_per_cycle: 4,
        lossless_priorities: vec![3],
        policy: Policy::L2bm,
        l2bm_mu: mu,
        ..SwitchConfig::small()
    };
    let flows = [(0, 2, 1), (1, 2, 2), (3, 1, 1)]
        .into_iter()
        .map(|(src, dst, prio)| FlowSpec {
            size_bytes: Some(1500),
            ..flow_spec(src, dst, prio, PatternKind::Constant)
        })
        .collect();
    common::scenario(sw, 20_000, flows)
}

/// What a run of [`shared_port`] shows of egress queue (2, 1) and ingress queue (0, 1).
#[derive(Debug)]
struct Reading {
    /// Its real cycles per cell, cycles 5000..20000 over the cells that departed.
    real_k: f64,
    /// The largest relative distance of the meter's `k` from `real_k`, sampled every
    /// 100 cycles from 5000 on (measured only).
    worst: f64,
    /// The mean weight `C / tau` of ingress queue (0, 1), UQ10.12, over the same samples.
    mean_w: f64,
}

fn read(mu: L2bmMu, fault: Option<Fault>) -> Reading {
    let mut sim = Sim::new(&shared_port(mu), Overrides::default()).unwrap();
    if let Some(f) = fault {
        sim.mmu_mut().inject_fault(f);
    }
    let (eq, from) = (2 * 8 + 1, 5_000);
    let (mut cells, mut worst, mut w, mut samples) = (0u64, 0f64, 0f64, 0u32);
    let mut ks = Vec::new();
    for c in 0..20_000u64 {
        sim.step().unwrap();
        if c < from {
            continue;
        }
        cells += sim
            .outputs()
            .departures
            .iter()
            .filter(|d| d.port == 2 && d.beat.hdr.prio == 1)
            .count() as u64;
        if c % 100 == 0 {
            let l = sim.mmu().l2bm().unwrap();
            if !l.meter.is_empty() {
                ks.push(l.k[eq] as f64 / 65536.0);
            }
            w += weight_of(l.c, l.rec[1].tau) as f64;
            samples += 1;
        }
    }
    sim.mmu().check_invariants().unwrap();
    let real_k = (20_000 - from) as f64 / cells as f64;
    for k in ks {
        worst = worst.max((k - real_k).abs() / real_k);
    }
    Reading {
        real_k,
        worst,
        mean_w: w / samples as f64,
    }
}

/// The measured `1 / mu` of a queue that gets half its port follows the real drain rate
/// within [`MU_ERROR`] at every sample, where the line rate is off by half.
#[test]
fn measured_mu_follows_the_real_drain_rate() {
    let r = read(L2bmMu::Measured, None);
    // Half of 100 Gb/s for 1500 B packets of 8 cells, 1520 B on the wire: 30.4 cycles
    // per cell (the line-rate register says 16.64, a 208 B cell's wire time).
    let half = 2.0 * 1520.0 * 8.0 / 100.0 / 8.0;
    assert!((r.real_k / half - 1.0).abs() < 0.03, "half the port: {r:?}");
    assert!(r.worst <= MU_ERROR, "{r:?}");
}

/// Companion: a meter that takes no sample (`Fault::L2bmMeterStuck`) stays at line rate
/// and the same check catches it.
#[test]
fn a_stuck_meter_is_caught() {
    let r = read(L2bmMu::Measured, Some(Fault::L2bmMeterStuck));
    assert!(r.worst > MU_ERROR, "not caught: {r:?}");
}

/// A queue draining at half the line rate: under the line-rate reading its packets go
/// overdue, `tau` falls to 0 and its weight saturates; measured, its estimates are the
/// real sojourns and its weight is lower.
#[test]
fn slow_queue_gets_a_lower_weight_when_measured() {
    let line = read(L2bmMu::LineRate, None);
    let measured = read(L2bmMu::Measured, None);
    assert!(
        measured.mean_w < line.mean_w / 2.0 && measured.mean_w >= W_ONE as f64,
        "line rate {line:?}, measured {measured:?}"
    );
}

/// The scenario key: both values parse, anything else is refused naming the allowed ones.
#[test]
fn l2bm_mu_key_is_checked() {
    let text = |v: &str| {
        format!("[switch]\nprofile = \"small\"\npolicy = \"l2bm\"\nl2bm_mu = \"{v}\"\n[run]\ncycles = 10\n")
    };
    for (v, want) in [
        ("line-rate", L2bmMu::LineRate),
        ("measured", L2bmMu::Measured),
    ] {
        assert_eq!(Scenario::parse(&text(v), "t").unwrap().switch.l2bm_mu, want);
    }
    let e = Scenario::parse(&text("fast"), "t").unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("l2bm_mu") && msg.contains("line-rate") && msg.contains("measured"),
        "{msg}"
    );
}

/// `sweeps/l2bm-mu.toml` (the runs of docs/results.md): its first setup is
/// `Setup::scaled()` as the built-in `l2bm-hybrid` runs it, the second the same with the
/// measured `mu`; both resolve.
#[test]
fn l2bm_mu_sweep_is_the_scaled_setup_twice() {
    let spec = sweep_file("l2bm-mu.toml");
    assert_eq!(spec.len(), 16);
    let scaled = scaled_table();
    assert_eq!(setup_of(&spec, 0), scaled);
    assert_eq!(
        setup_of(&spec, 15),
        Setup {
            l2bm_mu: L2bmMu::Measured,
            ..scaled
        }
    );
}

/// `sweeps/l2bm-hybrid-dcqcn.toml`, the runs behind docs/results.md's split of the lossless
/// tail, is the built-in `l2bm-hybrid`'s DCQCN half: the scaled setup in each of its 72 runs.
#[test]
fn l2bm_hybrid_dcqcn_sweep_is_the_scaled_setup() {
    let spec = sweep_file("l2bm-hybrid-dcqcn.toml");
    assert_eq!(spec.len(), 72);
    for i in [0, 71] {
        assert_eq!(setup_of(&spec, i), scaled_table(), "run {i}");
    }
}

/// The sweep file `name` of the repository's `sweeps/`.
fn sweep_file(name: &str) -> Spec {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sweeps");
    Spec::read(&std::path::Path::new(dir).join(name)).unwrap()
}

/// Run `i`'s `setup` table.
fn setup_of(spec: &Spec, i: usize) -> Setup {
    let (_, v) = spec
        .run(i)
        .unwrap()
        .params
        .into_iter()
        .find(|(k, _)| k == "setup")
        .unwrap();
    serde_json::from_value(v).unwrap()
}

/// `Setup::scaled()` as a sweep's table gives it: the axes and the run's seed and transport
/// are parameters, not part of the table.
fn scaled_table() -> Setup {
    Setup {
        tcp_loads: Vec::new(),
        seed: 0,
        seeds: Vec::new(),
        transports: Vec::new(),
        ..Setup::scaled()
    }
}
