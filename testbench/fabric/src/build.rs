//! A network scenario (one with a `[fabric]` table, docs/fabric.md) turned into the
//! network it describes and the options of its run: the one place that reads `[fabric]`,
//! for `mmu-sim run`, the sweep engine and the reproductions alike.
//!
//! - the topology: an ns-3 file relative to the scenario's directory, `[fabric.links]`
//!   (the file's content inline), or a generator (`[fabric.leaf_spine]`, `[fabric.clos]`,
//!   `[fabric.fat_tree]`), with `failed_links` taken down;
//! - the flows: an ns-3 flow file, or the generators of `[[fabric.workload]]`;
//! - each switch's configuration: `[switch]`, or the last `[[fabric.switch]]` naming the
//!   switch (`nodes`) or its layer, with `--policy` over every switch;
//! - the transports of `[[fabric.transport]]`, refused when they read INT records no
//!   switch stamps;
//! - the run's length and the deadlock detector's hold time;
//! - with `run.expect_lossless`, the headroom of every lossless ingress queue (`crate::headroom`).
//!
//! Every bad value is a [`ScenarioError`] naming its key (and a file's line and field).

use crate::cdf::Builtin;
use crate::deadlock::DeadlockOptions;
use crate::flows::{Flow, FlowFile};
use crate::generate::{Clos, LeafSpine, LinkSpec};
use crate::headroom;
use crate::input::{FieldError, InputError};
use crate::routing::Ecmp;
use crate::topology::{Header, Link, NodeId, Topology};
use crate::transport::Transports;
use crate::units::{BitRate, Picos};
use crate::workload::{self, FanIn, FanInBursts, FlowTemplate, LoadBase, Poisson, Senders};
use crate::{Network, RunOptions};
use hw_model::{Policy, SwitchConfig};
use scenario::params::{CcLaw, EcmRpParams};
use scenario::{
    FabricSpec, FabricTransport, LinksSpec, Scenario, ScenarioError, SwitchOverride, WorkloadKind,
    WorkloadSpec, MAX_CYCLES,
};
use std::path::Path;

/// The most occupancy intervals a switch reports.
const MAX_INTERVALS: u64 = 1_000_000;

/// What a network scenario resolves to.
pub struct Built {
    pub net: Network,
    /// The flows, by start time (a flow's index is its id in the summary's `fct`).
    pub flows: Vec<Flow>,
    /// `run.cycles` (or the override), the deadlock detector, one thread.
    pub options: RunOptions,
}

/// What a run may set over the scenario (`mmu-sim run --policy`, `--cycles`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides {
    /// Every switch's buffer policy.
    pub policy: Option<Policy>,
    pub cycles: Option<u64>,
}

fn bad(field: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError::new(field, message)
}

/// The network of `scenario`, whose files (`fabric.topology`, `fabric.flow_file`) are
/// relative to `dir`.
pub fn build(scenario: &Scenario, dir: &Path, ov: Overrides) -> Result<Built, ScenarioError> {
    plan(scenario, dir, ov)?.build()
}

/// A network scenario read and checked, before its network is built: what a caller
/// needs to weigh the run first (`mmu-sim run`'s memory estimate).
pub struct Plan<'a> {
    spec: &'a FabricSpec,
    pub topo: Topology,
    /// The flows, by start time.
    pub flows: Vec<Flow>,
    pub transports: Transports,
    pub configs: SwitchConfigs<'a>,
    /// `[ecm_rp]` for every host NIC's reaction point, with `run.seed`.
    ecm_rp: (EcmRpParams, u64),
    end_cycle: u64,
    /// `fabric.occupancy_interval_us` in cycles, checked.
    occupancy_cycles: Option<u64>,
    /// The lossless queues whose packets can overflow their headroom (`overflows`).
    pub headroom_warnings: Vec<String>,
    /// The ECM flows the network will hold, for the memory estimate (`overflows`).
    pub ecm_flows: usize,
}

/// [`build`]'s first half: every input read and checked, nothing built.
pub fn plan<'a>(
    scenario: &'a Scenario,
    dir: &Path,
    ov: Overrides,
) -> Result<Plan<'a>, ScenarioError> {
    let spec = scenario
        .fabric
        .as_ref()
        .ok_or_else(|| bad("fabric", "missing; a network scenario has a [fabric] table"))?;
    let topo = topology(spec, dir)?;
    let flows = flows(spec, &topo, dir)?;
    let transports = Transports {
        by_pg: spec.transports()?,
        feedback_pg: spec.feedback_pg,
        ecm_pg: spec.ecm_pg.unwrap_or(0),
    };
    let end_cycle = ov.cycles.unwrap_or(scenario.run.cycles);
    if !(1..=MAX_CYCLES).contains(&end_cycle) {
        return Err(bad(
            "run.cycles",
            format!("{end_cycle} is out of range; allowed: 1..={MAX_CYCLES}"),
        ));
    }
    let configs = SwitchConfigs::new(&scenario.switch, &spec.switch, &topo, ov.policy)?;
    let (headroom, ecm_flows) = overflows(spec, &topo, &flows, &transports, &configs, end_cycle)?;
    if let Some(mut e) = headroom
        .first()
        .cloned()
        .filter(|_| scenario.run.expect_lossless)
    {
        e.message.push_str(" (run.expect_lossless = true)");
        return Err(e);
    }
    let headroom_warnings = headroom.into_iter().map(|e| e.message).collect();
    // HPCC or PowerTCP with no switch stamping would run at line rate, silently
    // (theta-PowerTCP reads only RTTs).
    let int_law = transports.by_pg.iter().find_map(|t| match t {
        FabricTransport::IntCc(p) if p.law != CcLaw::ThetaPowerTcp => Some(p.law.name()),
        _ => None,
    });
    if let Some(law) = int_law {
        if !topo.switches().iter().any(|&n| configs.of(n).int) {
            return Err(bad(
                "switch.int",
                format!(
                    "false on every switch, and {law} reads the switches' INT records; \
                     allowed: int = true in [switch] or in a [[fabric.switch]]"
                ),
            ));
        }
    }
    // The hosts' ECM reaction points take `[ecm_rp]`, as the single switch's NICs do.
    let ecm_rp = (scenario.ecm_rp.params()?, scenario.run.seed);
    // The network's clock is its switches' (`Network::new` takes the first one's).
    let mhz = topo
        .switches()
        .first()
        .map_or(1, |&n| u64::from(configs.of(n).core_clock_mhz));
    let occupancy_cycles = spec
        .occupancy_interval_us
        .map(|us| occupancy_interval(us, end_cycle, mhz))
        .transpose()?;
    Ok(Plan {
        spec,
        topo,
        flows,
        transports,
        configs,
        ecm_rp,
        end_cycle,
        occupancy_cycles,
        headroom_warnings,
        ecm_flows,
    })
}

/// Every lossless ingress queue whose routed packets can overflow its headroom
/// (`crate::headroom`), before anything is built: `run.expect_lossless` refuses the first,
/// and otherwise they are the summary's `headroom_warnings`; and the ECM flows.
fn overflows(
    spec: &FabricSpec,
    topo: &Topology,
    flows: &[Flow],
    transports: &Transports,
    configs: &SwitchConfigs,
    end_cycle: u64,
) -> Result<(Vec<ScenarioError>, usize), ScenarioError> {
    let ecmp = Ecmp {
        fabric_seed: spec.ecmp_seed,
    };
    headroom::overflows(topo, flows, transports, |n| configs.of(n), &ecmp, end_cycle)
}

/// `fabric.occupancy_interval_us` = `us` in cycles of `mhz`: at most [`MAX_INTERVALS`]
/// per switch in the run's `end_cycle` cycles, none longer than the run.
fn occupancy_interval(us: u64, end_cycle: u64, mhz: u64) -> Result<u64, ScenarioError> {
    let lo = end_cycle.div_ceil(MAX_INTERVALS * mhz).max(1);
    let hi = (end_cycle / mhz).max(lo);
    if !(lo..=hi).contains(&us) {
        return Err(bad(
            "fabric.occupancy_interval_us",
            format!("{us}; allowed: {lo}..={hi} (at most {MAX_INTERVALS} intervals in run.cycles, none longer than the run)"),
        ));
    }
    Ok(us * mhz)
}

impl Plan<'_> {
    /// The occupancy series' intervals per switch (`[fabric] occupancy_interval_us`; 0:
    /// none), for the memory estimate: at most `MAX_INTERVALS`.
    pub fn occupancy_intervals(&self) -> u64 {
        self.occupancy_cycles
            .map_or(0, |c| self.end_cycle.div_ceil(c).min(MAX_INTERVALS))
    }

    /// The network and its run options.
    pub fn build(self) -> Result<Built, ScenarioError> {
        self.build_part(None)
    }

    /// [`build`](Self::build), of the part MPI rank `rank` of `ranks` runs
    /// (`Network::of_rank`: its partition's switches and hosts), or with `None` the whole
    /// network.
    pub fn build_part(self, rank: Option<(usize, usize)>) -> Result<Built, ScenarioError> {
        let Plan {
            spec,
            topo,
            flows,
            transports,
            configs,
            ecm_rp,
            end_cycle,
            occupancy_cycles,
            headroom_warnings,
            ecm_flows: _,
        } = self;
        let ecmp = Ecmp {
            fabric_seed: spec.ecmp_seed,
        };
        let config = |n| configs.of(n);
        let net = match rank {
            Some(r) => Network::of_rank(topo, &flows, ecmp, &transports, config, r),
            None => Network::new(topo, &flows, ecmp, &transports, config),
        };
        let mut net = net.map_err(|e| bad("fabric", e.to_string()))?;
        net.set_ecm_rp(&ecm_rp.0, ecm_rp.1);
        net.headroom_warnings = headroom_warnings;
        if let Some(interval) = occupancy_cycles {
            net.sample_occupancy(interval);
        }
        let options = RunOptions {
            end_cycle,
            deadlock: DeadlockOptions {
                hold_cycles: spec
                    .deadlock_hold_cycles
                    .unwrap_or(DeadlockOptions::default().hold_cycles),
                ..DeadlockOptions::default()
            },
            stop_at_deadlock: spec.stop_at_deadlock,
            threads: 1,
            horizon_error: 0,
        };
        Ok(Built {
            net,
            flows,
            options,
        })
    }
}

/// Each switch's configuration: `[switch]`, or the last `[[fabric.switch]]` naming the
/// switch or its layer; `policy` over every switch.
pub struct SwitchConfigs<'a> {
    base: &'a SwitchConfig,
    overrides: &'a [SwitchOverride],
    layers: Vec<u32>,
    policy: Option<Policy>,
}

impl<'a> SwitchConfigs<'a> {
    /// The configurations over `topo`; an override naming a node that is not a switch is
    /// refused.
    pub fn new(
        base: &'a SwitchConfig,
        overrides: &'a [SwitchOverride],
        topo: &Topology,
        policy: Option<Policy>,
    ) -> Result<Self, ScenarioError> {
        for (i, o) in overrides.iter().enumerate() {
            if let Some(&n) = o.nodes.iter().find(|n| !topo.switches().contains(n)) {
                return Err(bad(
                    format!("fabric.switch[{i}].nodes"),
                    format!("{n} is not a switch; allowed: {:?}", topo.switches()),
                ));
            }
        }
        Ok(Self {
            base,
            overrides,
            layers: layers(topo),
            policy,
        })
    }

    /// The configuration of switch `node`.
    pub fn of(&self, node: NodeId) -> SwitchConfig {
        let layer = self.layers[node as usize];
        let over = self
            .overrides
            .iter()
            .rev()
            .find(|o| o.nodes.contains(&node) || o.layer == Some(layer));
        let mut cfg = over.map_or(self.base, |o| &o.config).clone();
        if let Some(p) = self.policy {
            cfg.policy = p;
        }
        cfg
    }
}

/// A bad topology or flow file: the key, the file and the error (a read error names the
/// file already; a field error its line and field).
fn in_file(key: &str, path: &Path, e: InputError) -> ScenarioError {
    match e {
        InputError::Read(r) => bad(key, r.to_string()),
        InputError::Field(f) => bad(key, format!("{}: {f}", path.display())),
    }
}

/// The topology of `spec`, its failed links down.
fn topology(spec: &FabricSpec, dir: &Path) -> Result<Topology, ScenarioError> {
    let mut topo = match &spec.topology {
        Some(file) => {
            let path = dir.join(file);
            Topology::read(&path).map_err(|e| in_file("fabric.topology", &path, e))?
        }
        None => generated(spec)?,
    };
    let failed: Vec<_> = spec.failed_links.iter().map(|l| (l[0], l[1])).collect();
    topo.fail_links(&failed)
        .map_err(|e| bad("fabric.failed_links", e.to_string()))?;
    Ok(topo)
}

fn link(gbps: u64, ns: u64) -> LinkSpec {
    LinkSpec {
        rate: BitRate(gbps.saturating_mul(1_000_000_000)),
        delay: Picos(ns.saturating_mul(1000)),
    }
}

/// The topology of `[fabric.links]`, `[fabric.leaf_spine]`, `[fabric.clos]` or
/// `[fabric.fat_tree]`.
fn generated(spec: &FabricSpec) -> Result<Topology, ScenarioError> {
    if let Some(l) = &spec.links {
        return inline(l);
    }
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
        let leaf_spine = LeafSpine {
            leaves: k.leaves,
            spines: k.spines,
            hosts_per_leaf: k.hosts_per_leaf,
            host_link: link(k.host_link_gbps, k.host_link_delay_ns),
            fabric_link: link(k.fabric_link_gbps, k.fabric_link_delay_ns),
        };
        ("fabric.leaf_spine", leaf_spine.build())
    } else {
        unreachable!("the scenario checks that one is given")
    };
    built.map_err(|e| bad(table, e.to_string()))
}

/// `[fabric.links]`, checked as a topology file is: an error on the file's line 1 is the
/// key `nodes`, on line 2 `switches`, on a link's line `list[i]` and its field.
fn inline(l: &LinksSpec) -> Result<Topology, ScenarioError> {
    let key = |e: &FieldError| match e.line {
        1 if e.field == "links" => "fabric.links.list".to_string(),
        1 => format!("fabric.links.{}", e.field),
        2 => "fabric.links.switches".to_string(),
        n => format!("fabric.links.list[{}]: {}", n - 3, e.field),
    };
    let field = |i: usize, k: &str| format!("fabric.links.list[{i}]: {k}");
    let to_id = |i: usize, k: &str, v: u64| {
        NodeId::try_from(v).map_err(|_| {
            let allowed = l.nodes.saturating_sub(1);
            bad(
                field(i, k),
                format!("unknown node {v}; allowed: 0..={allowed}"),
            )
        })
    };
    // What a rate or delay of the file allows: above 0 bit/s, each in 64 bits of bit/s
    // and ps.
    let (max_gbps, max_ns) = (u64::MAX / 1_000_000_000, u64::MAX / 1000);
    let links = l
        .list
        .iter()
        .enumerate()
        .map(|(i, &[src, dst, gbps, ns])| {
            if !(1..=max_gbps).contains(&gbps) {
                return Err(bad(
                    field(i, "gbps"),
                    format!("{gbps}; allowed: 1..={max_gbps}"),
                ));
            }
            if ns > max_ns {
                return Err(bad(
                    field(i, "delay_ns"),
                    format!("{ns}; allowed: 0..={max_ns}"),
                ));
            }
            let spec = link(gbps, ns);
            Ok(Link {
                src: to_id(i, "src", src)?,
                dst: to_id(i, "dst", dst)?,
                rate: spec.rate,
                delay: spec.delay,
                error_rate: 0.0,
                up: true,
            })
        })
        .collect::<Result<Vec<_>, ScenarioError>>()?;
    let header = Header {
        nodes: l.nodes,
        switches: l.switches.clone(),
        tors: None,
    };
    Topology::new(header, links).map_err(|e| bad(key(&e), e.problem))
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

/// The flows of the flow file, or of every `[[fabric.workload]]` by start time.
fn flows(spec: &FabricSpec, topo: &Topology, dir: &Path) -> Result<Vec<Flow>, ScenarioError> {
    if let Some(file) = &spec.flow_file {
        let path = dir.join(file);
        let read = FlowFile::read(&path, topo);
        return Ok(read
            .map_err(|e| in_file("fabric.flow_file", &path, e))?
            .flows);
    }
    let mut flows = Vec::new();
    for (i, w) in spec.workload.iter().enumerate() {
        flows.extend(workload_flows(topo, i, w)?);
    }
    // A flow file's order: by start time (stable, so each generator's order stays).
    flows.sort_by_key(|f| f.start);
    Ok(flows)
}

/// The keys each generator takes besides `kind`, `pg`, `dport`, `seed` and `start_us`.
fn workload_keys(kind: WorkloadKind) -> &'static [&'static str] {
    match kind {
        WorkloadKind::Poisson => &["cdf", "load", "base", "duration_us", "from", "to", "pgs"],
        WorkloadKind::FanIn => &["receiver", "senders", "from", "jitter_ns", "size_bytes"],
        WorkloadKind::FanInBursts => &["senders", "size_bytes", "load", "base", "duration_us"],
        WorkloadKind::Permutation | WorkloadKind::AllToAll => &["size_bytes"],
    }
}

/// The flows of `fabric.workload[i]`.
fn workload_flows(topo: &Topology, i: usize, w: &WorkloadSpec) -> Result<Vec<Flow>, ScenarioError> {
    let key = |k: &str| format!("fabric.workload[{i}].{k}");
    let given = [
        ("cdf", w.cdf.is_some()),
        ("load", w.load.is_some()),
        ("base", w.base.is_some()),
        ("duration_us", w.duration_us.is_some()),
        ("from", w.from.is_some()),
        ("to", w.to.is_some()),
        ("pgs", w.pgs.is_some()),
        ("receiver", w.receiver.is_some()),
        ("senders", w.senders.is_some()),
        ("jitter_ns", w.jitter_ns.is_some()),
        ("size_bytes", w.size_bytes.is_some()),
    ];
    let takes = workload_keys(w.kind);
    if let Some((k, _)) = given.iter().find(|(k, g)| *g && !takes.contains(k)) {
        return Err(bad(
            key(k),
            format!("not a key of this kind; allowed: {}", takes.join(", ")),
        ));
    }
    let need =
        |k: &str, v: Option<u64>| v.ok_or_else(|| bad(key(k), "missing; required by this kind"));
    let pg = w.pg.unwrap_or(3);
    if pg > 7 {
        return Err(bad(
            key("pg"),
            format!("{pg} is out of range; allowed: 0..=7"),
        ));
    }
    let template = FlowTemplate {
        pg,
        dport: w.dport.unwrap_or(100),
    };
    let seed = w.seed.unwrap_or(1);
    let start = Picos::micros(w.start_us.unwrap_or(0));
    if w.pg.is_some() && w.pgs.is_some() {
        return Err(bad(
            key("pgs"),
            "given with pg; allowed: one of pg (one class) and pgs (classes drawn)",
        ));
    }
    let base = match w.base.as_deref() {
        None | Some("tor-uplinks") => LoadBase::TorUplinks,
        Some("host-link") => LoadBase::HostLink,
        Some(b) => {
            return Err(bad(
                key("base"),
                format!("`{b}`; allowed: tor-uplinks, host-link"),
            ))
        }
    };
    let load = w.load.unwrap_or(0.5);
    let flows = match w.kind {
        WorkloadKind::Poisson => {
            let name = w.cdf.as_deref().unwrap_or("websearch");
            let cdf = Builtin::by_name(name)
                .map_err(|e| bad(key("cdf"), e))?
                .cdf();
            Poisson {
                cdf,
                load,
                base,
                start,
                duration: Picos::micros(need("duration_us", w.duration_us)?),
                seed,
                template,
                from: w.from.clone().unwrap_or_default(),
                to: w.to.clone().unwrap_or_default(),
                pgs: w.pgs.clone().unwrap_or_default(),
            }
            .generate(topo)
        }
        WorkloadKind::FanInBursts => FanInBursts {
            senders: need("senders", w.senders.map(u64::from))? as usize,
            size: need("size_bytes", w.size_bytes)?,
            load,
            base,
            start,
            duration: Picos::micros(need("duration_us", w.duration_us)?),
            seed,
            template,
        }
        .generate(topo),
        WorkloadKind::FanIn => {
            let senders = match (w.senders, &w.from) {
                (Some(n), None) => Senders::Drawn(n as usize),
                (None, Some(hosts)) => Senders::Given(hosts.clone()),
                (given, _) => {
                    let what = match given {
                        Some(_) => "given with from",
                        None => "missing",
                    };
                    return Err(bad(
                        key("senders"),
                        format!("{what}; allowed: one of senders (a count) and from (the hosts)"),
                    ));
                }
            };
            FanIn {
                receiver: need("receiver", w.receiver.map(u64::from))? as u32,
                senders,
                size: need("size_bytes", w.size_bytes)?,
                start,
                jitter: Picos(w.jitter_ns.unwrap_or(0).saturating_mul(1000)),
                seed,
                template,
            }
            .generate(topo)
        }
        WorkloadKind::Permutation => {
            let size = need("size_bytes", w.size_bytes)?;
            workload::permutation(topo, size, start, seed, template)
        }
        WorkloadKind::AllToAll => {
            workload::all_to_all(topo, need("size_bytes", w.size_bytes)?, start, template)
        }
    };
    flows.map_err(|e| bad(key(e.key), format!("{}; allowed: {}", e.value, e.allowed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2-leaf, 2-spine leaf-spine (hosts 0-3, leaves 4, 5, spines 6, 7) with `extra`.
    fn scenario(extra: &str) -> Scenario {
        let text = format!(
            "name = \"t\"\n[switch]\nprofile = \"small\"\nbuffer_bytes = 1048576\n[run]\ncycles = 1000\n\
             [fabric.leaf_spine]\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\nhost_link_gbps = 25\n\
             host_link_delay_ns = 1000\nfabric_link_gbps = 25\nfabric_link_delay_ns = 1000\n\
             [[fabric.workload]]\nkind = \"permutation\"\nsize_bytes = 1000\n{extra}"
        );
        Scenario::parse(&text, "t").unwrap()
    }

    /// Each switch's buffer in the built network, by switch id.
    fn buffers(extra: &str) -> Vec<(NodeId, u64)> {
        let built = build(&scenario(extra), Path::new("."), Overrides::default()).unwrap();
        let topo = built.net.topology();
        topo.switches()
            .iter()
            .map(|&n| (n, built.net.mmu(n).unwrap().config().cfg.buffer_bytes))
            .collect()
    }

    const MB: u64 = 1 << 20;

    /// The switch step skips NICs by their due cycles; a due cycle later than the NIC's
    /// work (here: every NIC of the first switch forgotten) is caught at the next step in
    /// a debug build, as the tests are.
    #[test]
    #[should_panic(expected = "due cycle is later than its work")]
    fn a_due_cycle_later_than_its_work_is_caught() {
        let ov = Overrides {
            policy: None,
            cycles: Some(5_000),
        };
        let mut built = build(&scenario(""), Path::new("."), ov).unwrap();
        let nics = built.net.switches[0].nics.len();
        built.net.switches[0].nic_due = crate::due::DueCycles::idle(nics);
        let _ = built.net.run(&built.options);
    }

    /// A switch steps its MMU only in the cycles with an input or an MMU event due (not
    /// for a DCQCN timer or a cell reaching a host alone); an event-stream recorder keeps
    /// every one of the switch's cycles, and the run is the same either way.
    #[test]
    fn the_mmu_steps_a_switch_skips_change_nothing() {
        let dcqcn = "[[fabric.transport]]\npg = 3\ndcqcn = { g = 0.00390625, k_us = 1, \
                     t_us = 55, f = 5, r_ai_mbps = 50, r_hai_mbps = 100, min_rate_mbps = 100, \
                     n_us = 4 }\n[[fabric.workload]]\nkind = \"all_to_all\"\nsize_bytes = 200000\n";
        let run = |events: Option<&Path>| {
            let ov = Overrides {
                policy: None,
                cycles: Some(150_000),
            };
            let mut built = build(&scenario(dcqcn), Path::new("."), ov).unwrap();
            if let Some(dir) = events {
                built.net.attach_events(dir, 150_000, 1).unwrap();
            }
            let s = built.net.run(&built.options).unwrap();
            built.net.finish_outputs().unwrap();
            let mut v = serde_json::to_value(&s).unwrap();
            v.as_object_mut().unwrap().remove("run");
            v
        };
        let dir = std::env::temp_dir().join(format!("fabric-mmu-skip-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (skipping, recorded) = (run(None), run(Some(&dir)));
        std::fs::remove_dir_all(&dir).unwrap();
        let delivered = skipping["cells_delivered"].as_u64().unwrap();
        assert!(
            delivered > 5_000,
            "a weak test: {delivered} cells delivered"
        );
        assert_eq!(skipping, recorded);
    }

    /// `fabric.ecm_pg` puts the switches' ECM frames on its class: with 5, some ingress
    /// priority group 5 holds cells (only ECM frames travel there); without the key,
    /// none does (they go on 0).
    #[test]
    fn ecm_frames_travel_on_ecm_pg() {
        let ecm = "[switch.ecm]\npriorities = [3]\nqeq_bytes = 1024\nqmc_bytes = 2048\n\
                   qsc_bytes = 4096\nsf_bytes = 2000\nsr_bytes = 1000\n\
                   [[fabric.workload]]\nkind = \"all_to_all\"\nsize_bytes = 100000\n";
        let pg5_cells = |extra: &str| {
            let ov = Overrides {
                policy: None,
                cycles: Some(100_000),
            };
            let mut built = build(&scenario(&format!("{ecm}{extra}")), Path::new("."), ov).unwrap();
            let s = built.net.run(&built.options).unwrap();
            assert!(s.ok(), "{s}");
            assert!(s.ecm.as_ref().unwrap().frames_received > 0, "{s}");
            let pgs = s.switches.iter().flat_map(|w| &w.ingress_priority_groups);
            pgs.filter(|g| g.pg == 5)
                .map(|g| g.watermark_cells)
                .sum::<u32>()
        };
        assert!(pg5_cells("[fabric]\necm_pg = 5\n") > 0);
        assert_eq!(pg5_cells(""), 0);
    }

    /// The plan counts the ECM flows the network then holds (the memory estimate's), for
    /// closed and open-loop flows, and none without congestion points.
    #[test]
    fn the_plan_counts_the_networks_ecm_flows() {
        use crate::transport::Sender;
        let cp = "[switch.ecm]\npriorities = [3]\n[[fabric.transport]]\npg = 3\ntcp = {}\n\
                  [[fabric.workload]]\nkind = \"all_to_all\"\nsize_bytes = 1000\npg = 3\n";
        for (extra, some) in [(cp, true), ("", false)] {
            let s = scenario(extra);
            let counted = plan(&s, Path::new("."), Overrides::default())
                .unwrap()
                .ecm_flows;
            let built = build(&s, Path::new("."), Overrides::default()).unwrap();
            let held = built.net.flows.iter();
            let held = held.filter(|f| matches!(f.sender, Sender::Ecm)).count();
            assert_eq!(counted, held, "{extra}");
            assert_eq!(held > 0, some, "{held} ECM flows");
        }
    }

    #[test]
    fn an_override_by_nodes_applies_to_exactly_those_switches() {
        let b = buffers("[[fabric.switch]]\nnodes = [5, 6]\nbuffer_bytes = 2097152\n");
        assert_eq!(b, [(4, MB), (5, 2 * MB), (6, 2 * MB), (7, MB)]);
        // The companion: without the entry every switch has [switch]'s buffer, so the
        // assertion above sees the override.
        assert_eq!(buffers(""), [(4, MB), (5, MB), (6, MB), (7, MB)]);
    }

    #[test]
    fn of_two_entries_matching_one_switch_the_later_wins() {
        let by_layer = "[[fabric.switch]]\nlayer = 1\nbuffer_bytes = 2097152\n";
        let by_node = "[[fabric.switch]]\nnodes = [5]\nbuffer_bytes = 3145728\n";
        let b = buffers(&format!("{by_layer}{by_node}"));
        assert_eq!(b, [(4, 2 * MB), (5, 3 * MB), (6, MB), (7, MB)]);
        // The companion: the same entries the other way round give switch 5 the layer's,
        // so the order, not the kind of match, decides.
        let b = buffers(&format!("{by_node}{by_layer}"));
        assert_eq!(b, [(4, 2 * MB), (5, 2 * MB), (6, MB), (7, MB)]);
    }

    #[test]
    fn an_override_naming_a_host_is_refused() {
        let s = scenario("[[fabric.switch]]\nnodes = [1]\nbuffer_bytes = 2097152\n");
        let e = build(&s, Path::new("."), Overrides::default())
            .err()
            .unwrap();
        assert_eq!(e.field, "fabric.switch[0].nodes");
        assert!(e.message.starts_with("1 is not a switch"), "{e}");
    }

    #[test]
    fn occupancy_is_sampled_per_interval_and_its_key_checked() {
        let ov = Overrides {
            policy: None,
            cycles: Some(20_000),
        };
        let mut built = build(
            &scenario("[fabric]\noccupancy_interval_us = 1\n"),
            Path::new("."),
            ov,
        )
        .unwrap();
        let s = built.net.run(&built.options).unwrap();
        let mhz = s.clock_hz / 1_000_000;
        let bins = s.cycles.div_ceil(mhz) as usize;
        let mut moved = false;
        for w in &s.switches {
            let o = w.occupancy.as_ref().unwrap();
            assert_eq!((o.interval_cycles, o.peak_cells.len()), (mhz, bins));
            // The series ends where the buffer ends, and never below it.
            assert!(u64::from(*o.peak_cells.last().unwrap()) >= w.cells_buffered_at_end);
            moved |= o.peak_cells.iter().any(|&c| c > 0);
        }
        assert!(moved, "the permutation's cells pass through the buffers");
        // The companion: without the key, no series.
        let mut built = build(&scenario(""), Path::new("."), ov).unwrap();
        let s = built.net.run(&built.options).unwrap();
        assert!(s.switches.iter().all(|w| w.occupancy.is_none()));
        // Checked with the other inputs, before anything is built.
        let e = plan(
            &scenario("[fabric]\noccupancy_interval_us = 0\n"),
            Path::new("."),
            ov,
        )
        .err()
        .unwrap();
        assert_eq!(e.field, "fabric.occupancy_interval_us");
        assert!(e.message.starts_with("0; allowed: 1..="), "{e}");
    }

    #[test]
    fn policy_override_applies_to_every_switch_over_the_entries() {
        let s = scenario("[[fabric.switch]]\nnodes = [5]\npolicy = \"sih\"\n");
        let ov = Overrides {
            policy: Some(Policy::Dsh),
            cycles: None,
        };
        let built = build(&s, Path::new("."), ov).unwrap();
        for &n in built.net.topology().switches() {
            assert_eq!(built.net.mmu(n).unwrap().config().cfg.policy, Policy::Dsh);
        }
    }

    /// `[fabric.links]` with `list`.
    fn inline_error(nodes: u32, switches: &str, list: &str) -> ScenarioError {
        let text = format!(
            "name = \"t\"\n[switch]\nprofile = \"small\"\n[run]\ncycles = 1000\n\
             [fabric.links]\nnodes = {nodes}\nswitches = {switches}\nlist = {list}\n\
             [[fabric.workload]]\nkind = \"permutation\"\nsize_bytes = 1000\n"
        );
        let s = Scenario::parse(&text, "t").unwrap();
        build(&s, Path::new("."), Overrides::default())
            .err()
            .unwrap()
    }

    #[test]
    fn inline_links_are_checked_as_a_topology_file_naming_the_key() {
        let ok = "[[0, 2, 100, 1000], [1, 2, 100, 1000]]";
        let text = format!(
            "name = \"t\"\n[switch]\nprofile = \"small\"\n[run]\ncycles = 1000\n\
             [fabric.links]\nnodes = 3\nswitches = [2]\nlist = {ok}\n\
             [[fabric.workload]]\nkind = \"permutation\"\nsize_bytes = 1000\n"
        );
        let built = build(
            &Scenario::parse(&text, "t").unwrap(),
            Path::new("."),
            Overrides::default(),
        )
        .unwrap();
        let topo = built.net.topology();
        assert_eq!(topo.switches(), [2]);
        assert_eq!(topo.links()[1].rate, BitRate(100_000_000_000));
        assert_eq!(topo.links()[1].delay, Picos(1_000_000));
        let e = inline_error(3, "[2]", "[[0, 2, 100, 1000], [1, 5, 100, 1000]]");
        assert_eq!(e.field, "fabric.links.list[1]: dst");
        assert!(
            e.message.starts_with("unknown node 5; allowed: 0..=2"),
            "{e}"
        );
        let e = inline_error(3, "[7]", ok);
        assert_eq!(e.field, "fabric.links.switches");
        let e = inline_error(3, "[2]", "[[0, 2, 100, 1000], [1, 2, 0, 1000]]");
        assert_eq!(
            e.to_string(),
            "fabric.links.list[1]: gbps: 0; allowed: 1..=18446744073"
        );
        let e = inline_error(3, "[2]", "[[0, 2, 100, 1000], [1, 8589934592, 1, 1]]");
        assert_eq!(e.field, "fabric.links.list[1]: dst");
        let e = inline_error(4, "[2]", ok);
        assert_eq!(e.field, "fabric.links.switches");
        assert!(e.message.contains("node 3"), "a host without a link: {e}");
    }
}
