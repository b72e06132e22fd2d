//! `mmu-sim run` of a network scenario, one with a `[fabric]` table (docs/fabric.md): the
//! topology (an ns-3 file or `[fabric.leaf_spine]`) and the ns-3 flow file, both relative to
//! the scenario file, run as a `fabric::Network` with every switch on `[switch]` for
//! `run.cycles`. Bad input exits 2 naming the file, line and field.

use crate::{Failure, RunArgs};
use fabric::deadlock::DeadlockOptions;
use fabric::flows::FlowFile;
use fabric::generate::{LeafSpine, LinkSpec};
use fabric::input::InputError;
use fabric::routing::Ecmp;
use fabric::topology::Topology;
use fabric::units::{BitRate, Picos};
use fabric::{Network, RunOptions};
use hw_model::Policy;
use scenario::{FabricSpec, LeafSpineSpec, Scenario, MAX_CYCLES};
use std::fs;
use std::path::Path;

/// The single switch's options a network run does not have yet: each refused with exit 2.
fn unsupported(a: &RunArgs) -> Option<&'static str> {
    [
        ("--vcd", a.vcd.is_some()),
        ("--wave", a.wave.is_some()),
        ("--wave-signals", a.wave_signals.is_some()),
        ("--wave-window", a.wave_window.is_some()),
        ("--trace-cells", a.trace_cells.is_some()),
        ("--trace-events", a.trace_events.is_some()),
        ("--trace-ecm", a.trace_ecm.is_some()),
        ("--trace-rp", a.trace_rp.is_some()),
        ("--fifo", a.fifo),
        ("--seed", a.seed.is_some()),
    ]
    .into_iter()
    .find(|f| f.1)
    .map(|f| f.0)
}

/// A bad topology or flow file: the key, the file and the error (a read error names the
/// file already; a field error its line and field).
fn in_file(key: &str, path: &Path, e: InputError) -> Failure {
    match e {
        InputError::Read(r) => Failure::Input(format!("{key}: {r}")),
        InputError::Field(f) => Failure::Input(format!("{key}: {}: {f}", path.display())),
    }
}

fn leaf_spine(k: &LeafSpineSpec) -> Result<Topology, Failure> {
    let link = |gbps: u64, ns: u64| LinkSpec {
        rate: BitRate(gbps.saturating_mul(1_000_000_000)),
        delay: Picos(ns.saturating_mul(1000)),
    };
    LeafSpine {
        leaves: k.leaves,
        spines: k.spines,
        hosts_per_leaf: k.hosts_per_leaf,
        host_link: link(k.host_link_gbps, k.host_link_delay_ns),
        fabric_link: link(k.fabric_link_gbps, k.fabric_link_delay_ns),
    }
    .build()
    .map_err(|e| Failure::Input(format!("fabric.leaf_spine: {e}")))
}

/// Run the network of `spec` (of `scenario`, named on the command line as `a.scenario`).
pub fn run(
    scenario: &Scenario,
    spec: &FabricSpec,
    policy: Option<Policy>,
    a: &RunArgs,
) -> Result<(), Failure> {
    if let Some(flag) = unsupported(a) {
        return Err(Failure::Input(format!(
            "{flag}: not available for a network scenario ([fabric]); allowed: --policy, --cycles, --summary-json, --ns3-out"
        )));
    }
    let base = Path::new(&a.scenario).parent().unwrap_or(Path::new(""));
    let mut topo = match (&spec.topology, &spec.leaf_spine) {
        (Some(file), _) => {
            let path = base.join(file);
            Topology::read(&path).map_err(|e| in_file("fabric.topology", &path, e))?
        }
        (None, Some(k)) => leaf_spine(k)?,
        (None, None) => unreachable!("the scenario checks that one is given"),
    };
    let failed: Vec<_> = spec.failed_links.iter().map(|l| (l[0], l[1])).collect();
    topo.fail_links(&failed)
        .map_err(|e| Failure::Input(format!("fabric.failed_links: {e}")))?;
    let path = base.join(&spec.flow_file);
    let flows = FlowFile::read(&path, &topo).map_err(|e| in_file("fabric.flow_file", &path, e))?;
    let end_cycle = a.cycles.unwrap_or(scenario.run.cycles);
    if !(1..=MAX_CYCLES).contains(&end_cycle) {
        return Err(Failure::Input(format!(
            "run.cycles: {end_cycle} is out of range; allowed: 1..={MAX_CYCLES}"
        )));
    }
    let mut cfg = scenario.switch.clone();
    if let Some(p) = policy {
        cfg.policy = p;
    }
    let ecmp = Ecmp {
        fabric_seed: spec.ecmp_seed,
    };
    let mut net = Network::new(topo, &flows.flows, ecmp, |_| cfg.clone())
        .map_err(|e| Failure::Input(e.to_string()))?;
    let deadlock = DeadlockOptions {
        hold_cycles: spec
            .deadlock_hold_cycles
            .unwrap_or(DeadlockOptions::default().hold_cycles),
        ..DeadlockOptions::default()
    };
    let opts = RunOptions {
        end_cycle,
        deadlock,
        stop_at_deadlock: spec.stop_at_deadlock,
    };
    let summary = net.run(&opts).map_err(|e| {
        Failure::Violation(format!(
            "model invariant broken at switch {}: {}",
            e.switch, e.error.what
        ))
    })?;
    crate::to_stdout(format_args!("{summary}\n"))?;
    if let Some(p) = &a.summary_json {
        fs::write(p, summary.to_json())
            .map_err(|e| Failure::Input(format!("--summary-json {}: {e}", p.display())))?;
    }
    if let Some(dir) = &a.ns3_out {
        fs::create_dir_all(dir)
            .and_then(|()| fs::write(dir.join("fct.txt"), summary.fct_txt()))
            .map_err(|e| Failure::Input(format!("--ns3-out {}: {e}", dir.display())))?;
    }
    crate::verdict(&summary.violations)
}
