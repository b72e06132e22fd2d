//! `mmu-sim run` of a network scenario, one with a `[fabric]` table (docs/fabric.md): the
//! topology (an ns-3 file relative to the scenario file, or `[fabric.leaf_spine]`,
//! `[fabric.clos]`, `[fabric.fat_tree]`) and the flows (an ns-3 flow file, or the
//! generators of `[[fabric.workload]]`), run as a `fabric::Network` with every switch on
//! `[switch]` and each priority group's transport (`[[fabric.transport]]`) for
//! `run.cycles`. Bad input exits 2 naming the file, line and field. Its outputs: the
//! summary, `--ns3-out`, each switch's event stream (`--trace-events DIR`) and one
//! waveform with a scope per switch (`--vcd`, `--wave`).

use crate::{Failure, RunArgs};
use fabric::cdf::Builtin;
use fabric::deadlock::DeadlockOptions;
use fabric::flows::{Flow, FlowFile};
use fabric::generate::{Clos, LeafSpine, LinkSpec};
use fabric::input::InputError;
use fabric::routing::Ecmp;
use fabric::topology::Topology;
use fabric::transport::Transports;
use fabric::units::{BitRate, Picos};
use fabric::workload::{self, FlowTemplate, LoadBase, Poisson};
use fabric::{Network, RunOptions};
use hw_model::Policy;
use scenario::params::CcLaw;
use scenario::{
    FabricSpec, FabricTransport, LeafSpineSpec, Scenario, WorkloadKind, WorkloadSpec, MAX_CYCLES,
};
use std::fs;
use std::path::Path;
use switch_run::waves::gtkw_path;

/// The single switch's options a network run does not have yet: each refused with exit 2.
fn unsupported(a: &RunArgs) -> Option<&'static str> {
    [
        ("--trace-cells", a.trace_cells.is_some()),
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

fn link(gbps: u64, ns: u64) -> LinkSpec {
    LinkSpec {
        rate: BitRate(gbps.saturating_mul(1_000_000_000)),
        delay: Picos(ns.saturating_mul(1000)),
    }
}

/// The topology of `[fabric.leaf_spine]`, `[fabric.clos]` or `[fabric.fat_tree]`.
fn generated(spec: &FabricSpec) -> Result<Topology, Failure> {
    let (table, built) = if let Some(k) = &spec.clos {
        let clos = Clos {
            pods: k.pods,
            tors_per_pod: k.tors_per_pod,
            aggs_per_pod: k.aggs_per_pod,
            cores: k.cores,
            servers_per_tor: k.servers_per_tor,
            host_link: link(k.host_link_gbps, k.host_link_delay_ns),
            tor_agg_link: link(k.tor_agg_link_gbps, k.tor_agg_link_delay_ns),
            agg_core_link: link(k.agg_core_link_gbps, k.agg_core_link_delay_ns),
        };
        ("fabric.clos", clos.build())
    } else if let Some(k) = &spec.fat_tree {
        let host = link(k.host_link_gbps, k.link_delay_ns);
        let fabric = link(k.fabric_link_gbps, k.link_delay_ns);
        let built = Clos::fat_tree(k.k, host, fabric).and_then(|c| c.build());
        ("fabric.fat_tree", built)
    } else if let Some(k) = &spec.leaf_spine {
        ("fabric.leaf_spine", leaf_spine(k).build())
    } else {
        unreachable!("the scenario checks that one is given")
    };
    built.map_err(|e| Failure::Input(format!("{table}: {e}")))
}

fn leaf_spine(k: &LeafSpineSpec) -> LeafSpine {
    LeafSpine {
        leaves: k.leaves,
        spines: k.spines,
        hosts_per_leaf: k.hosts_per_leaf,
        host_link: link(k.host_link_gbps, k.host_link_delay_ns),
        fabric_link: link(k.fabric_link_gbps, k.fabric_link_delay_ns),
    }
}

/// Per node, its switch layer: 1 for a switch with hosts, one more per hop above (0 for a
/// host, or a switch without a path to one).
fn layers(topo: &Topology) -> Vec<u32> {
    let mut layer = vec![0u32; topo.node_count()];
    let mut frontier: Vec<u32> = topo.hosts().collect();
    let mut depth = 0;
    while !frontier.is_empty() {
        depth += 1;
        let mut next = Vec::new();
        for &n in &frontier {
            for &l in topo.ports(n) {
                let peer = topo.links()[l].peer(n);
                if topo.is_switch(peer) && layer[peer as usize] == 0 {
                    layer[peer as usize] = depth;
                    next.push(peer);
                }
            }
        }
        frontier = next;
    }
    layer
}

/// The keys each generator takes besides `kind`, `pg`, `dport`, `seed` and `start_us`.
fn workload_keys(kind: WorkloadKind) -> &'static [&'static str] {
    match kind {
        WorkloadKind::Poisson => &["cdf", "load", "base", "duration_us", "from", "to"],
        WorkloadKind::FanIn => &["receiver", "senders", "size_bytes"],
        WorkloadKind::Permutation | WorkloadKind::AllToAll => &["size_bytes"],
    }
}

/// The flows of `fabric.workload[i]`.
fn workload_flows(topo: &Topology, i: usize, w: &WorkloadSpec) -> Result<Vec<Flow>, Failure> {
    let key = |k: &str| format!("fabric.workload[{i}].{k}");
    let given = [
        ("cdf", w.cdf.is_some()),
        ("load", w.load.is_some()),
        ("base", w.base.is_some()),
        ("duration_us", w.duration_us.is_some()),
        ("from", w.from.is_some()),
        ("to", w.to.is_some()),
        ("receiver", w.receiver.is_some()),
        ("senders", w.senders.is_some()),
        ("size_bytes", w.size_bytes.is_some()),
    ];
    let takes = workload_keys(w.kind);
    if let Some((k, _)) = given.iter().find(|(k, g)| *g && !takes.contains(k)) {
        return Err(Failure::Input(format!(
            "{}: not a key of this kind; allowed: {}",
            key(k),
            takes.join(", ")
        )));
    }
    let need = |k: &str, v: Option<u64>| {
        v.ok_or_else(|| Failure::Input(format!("{}: missing; required by this kind", key(k))))
    };
    let pg = w.pg.unwrap_or(3);
    if pg > 7 {
        return Err(Failure::Input(format!(
            "{}: {pg} is out of range; allowed: 0..=7",
            key("pg")
        )));
    }
    let template = FlowTemplate {
        pg,
        dport: w.dport.unwrap_or(100),
    };
    let seed = w.seed.unwrap_or(1);
    let start = Picos::micros(w.start_us.unwrap_or(0));
    let flows = match w.kind {
        WorkloadKind::Poisson => {
            let name = w.cdf.as_deref().unwrap_or("websearch");
            let cdf = Builtin::by_name(name)
                .map_err(|e| Failure::Input(format!("{}: {e}", key("cdf"))))?
                .cdf();
            let base = match w.base.as_deref() {
                None | Some("tor-uplinks") => LoadBase::TorUplinks,
                Some("host-link") => LoadBase::HostLink,
                Some(b) => {
                    return Err(Failure::Input(format!(
                        "{}: `{b}`; allowed: tor-uplinks, host-link",
                        key("base")
                    )))
                }
            };
            Poisson {
                cdf,
                load: w.load.unwrap_or(0.5),
                base,
                start,
                duration: Picos::micros(need("duration_us", w.duration_us)?),
                seed,
                template,
                from: w.from.clone().unwrap_or_default(),
                to: w.to.clone().unwrap_or_default(),
            }
            .generate(topo)
        }
        WorkloadKind::FanIn => workload::fan_in(
            topo,
            need("receiver", w.receiver.map(u64::from))? as u32,
            need("senders", w.senders.map(u64::from))? as usize,
            need("size_bytes", w.size_bytes)?,
            start,
            seed,
            template,
        ),
        WorkloadKind::Permutation => {
            let size = need("size_bytes", w.size_bytes)?;
            workload::permutation(topo, size, start, seed, template)
        }
        WorkloadKind::AllToAll => {
            workload::all_to_all(topo, need("size_bytes", w.size_bytes)?, start, template)
        }
    };
    flows.map_err(|e| Failure::Input(format!("fabric.workload[{i}].{e}")))
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
            "{flag}: not available for a network scenario ([fabric]); allowed: --policy, --cycles, --threads, --summary-json, --ns3-out, --trace-events, --vcd, --wave, --wave-signals, --wave-window"
        )));
    }
    let base = Path::new(&a.scenario).parent().unwrap_or(Path::new(""));
    let mut topo = match &spec.topology {
        Some(file) => {
            let path = base.join(file);
            Topology::read(&path).map_err(|e| in_file("fabric.topology", &path, e))?
        }
        None => generated(spec)?,
    };
    let failed: Vec<_> = spec.failed_links.iter().map(|l| (l[0], l[1])).collect();
    topo.fail_links(&failed)
        .map_err(|e| Failure::Input(format!("fabric.failed_links: {e}")))?;
    let flows = match &spec.flow_file {
        Some(file) => {
            let path = base.join(file);
            let read = FlowFile::read(&path, &topo);
            read.map_err(|e| in_file("fabric.flow_file", &path, e))?
                .flows
        }
        None => {
            let mut flows = Vec::new();
            for (i, w) in spec.workload.iter().enumerate() {
                flows.extend(workload_flows(&topo, i, w)?);
            }
            // A flow file's order: by start time (stable, so each generator's order stays).
            flows.sort_by_key(|f| f.start);
            flows
        }
    };
    let transports = Transports {
        by_pg: spec
            .transports()
            .map_err(|e| Failure::Input(e.to_string()))?,
        feedback_pg: spec.feedback_pg,
    };
    let end_cycle = a.cycles.unwrap_or(scenario.run.cycles);
    if !(1..=MAX_CYCLES).contains(&end_cycle) {
        return Err(Failure::Input(format!(
            "run.cycles: {end_cycle} is out of range; allowed: 1..={MAX_CYCLES}"
        )));
    }
    let layers = layers(&topo);
    for (i, o) in spec.switch.iter().enumerate() {
        if let Some(&n) = o.nodes.iter().find(|n| !topo.switches().contains(n)) {
            return Err(Failure::Input(format!(
                "fabric.switch[{i}].nodes: {n} is not a switch; allowed: {:?}",
                topo.switches()
            )));
        }
    }
    // `[switch]`, or the last `[[fabric.switch]]` naming the switch or its layer; `--policy`
    // applies to every switch.
    let config = |node: u32| {
        let over = spec
            .switch
            .iter()
            .rev()
            .find(|o| o.nodes.contains(&node) || o.layer == Some(layers[node as usize]));
        let mut cfg = over.map_or(&scenario.switch, |o| &o.config).clone();
        if let Some(p) = policy {
            cfg.policy = p;
        }
        cfg
    };
    // HPCC or PowerTCP with no switch stamping would run at line rate, silently
    // (theta-PowerTCP reads only RTTs).
    let int_law = transports.by_pg.iter().find_map(|t| match t {
        FabricTransport::IntCc(p) if p.law != CcLaw::ThetaPowerTcp => Some(p.law.name()),
        _ => None,
    });
    if let Some(law) = int_law {
        if !topo.switches().iter().any(|&n| config(n).int) {
            return Err(Failure::Input(format!(
                "switch.int: false on every switch, and {law} reads the switches' INT records; \
                 allowed: int = true in [switch] or in a [[fabric.switch]]"
            )));
        }
    }
    let ecmp = Ecmp {
        fabric_seed: spec.ecmp_seed,
    };
    let mut net = Network::new(topo, &flows, ecmp, &transports, config)
        .map_err(|e| Failure::Input(e.to_string()))?;
    let (filter, window, dump) = crate::wave_args(a)?;
    if dump.is_some() {
        filter
            .check_matches(&net.wave_signals())
            .map_err(|e| Failure::Input(format!("--wave-signals: {e}")))?;
        window
            .check_within(end_cycle)
            .map_err(|e| Failure::Input(format!("--wave-window: {e}")))?;
    }
    // Every input is checked above: a refused run leaves the files of an earlier one.
    if let Some(dir) = &a.trace_events {
        net.attach_events(dir, end_cycle, spec.ecmp_seed.into())
            .map_err(|e| {
                Failure::Input(format!(
                    "--trace-events {e}; allowed: a directory (created if missing)"
                ))
            })?;
    }
    if let Some((flag, path, format)) = dump {
        let gtkw = gtkw_path(path);
        let [file, _] = crate::open_outputs([
            (flag, Some(path.as_path())),
            ("GTKWave save file", Some(gtkw.as_path())),
        ])?;
        let file = file.expect("asked for");
        net.attach_waves(file, path, format, &filter, window, end_cycle)
            .map_err(|e| Failure::Input(format!("{flag} {}: {e}", path.display())))?;
    }
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
        threads: a.threads.map_or(1, usize::from),
        horizon_error: 0,
    };
    let summary = net.run(&opts).map_err(|e| {
        Failure::Violation(format!(
            "model invariant broken at switch {}: {}",
            e.switch, e.error.what
        ))
    })?;
    net.finish_outputs()
        .map_err(|e| Failure::Input(format!("outputs: {e}")))?;
    crate::to_stdout(format_args!("{summary}\n"))?;
    if let Some(p) = &a.summary_json {
        fs::write(p, summary.to_json())
            .map_err(|e| Failure::Input(format!("--summary-json {}: {e}", p.display())))?;
    }
    if let Some(dir) = &a.ns3_out {
        ns3_out(dir, &net, &summary.fct_txt())?;
    }
    crate::verdict(&summary.violations)
}

/// `--ns3-out DIR`: the flows' `fct.txt`, and the topology as it ran (generated or read,
/// failed links included) as ns3-datacenter's `topology.txt`, so a generated network can
/// be compared with an ns-3 file or run by ns-3 itself.
fn ns3_out(dir: &Path, net: &Network, fct: &str) -> Result<(), Failure> {
    fs::create_dir_all(dir)
        .and_then(|()| fs::write(dir.join("fct.txt"), fct))
        .and_then(|()| fs::write(dir.join("topology.txt"), net.topology().to_ns3()))
        .map_err(|e| Failure::Input(format!("--ns3-out {}: {e}", dir.display())))
}
