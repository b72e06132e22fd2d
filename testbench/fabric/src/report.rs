//! What a network run reports: [`FabricSummary`], printed and as JSON, and the flows'
//! completion times in ns-3's `fct.txt` format.
//!
//! The checks over the fabric, every run (each a line of `violations` when broken):
//! - conservation: every cell a NIC put on its link (or a switch into its buffer: its ECM
//!   frames) was delivered to a host, dropped at a named switch with its reason, or is in
//!   a switch's buffer or on a link at the end;
//! - no lossless cell dropped anywhere;
//! - no flow reordered end to end (nor any cell received by a host it was not for), and
//!   at each switch the single switch's order and routing checks (its scoreboard);
//! - no cell lost inside a switch's input (a flow arriving where its route does not go, a
//!   second cell on a port in one cycle), and each MMU's own structural invariants;
//! - no message handed to a switch after it ran the cycle the message acts in (a parallel
//!   run's window past its horizon).
//!
//! A deadlock is a result, not a violation.

use crate::deadlock::Deadlock;
use crate::routing::ipv4_of;
use crate::switch::{FlowState, PortEnd, Switch};
use crate::topology::{LinkId, NodeId, Topology};
use crate::transport::{EcmDelays, Sender, SenderStats};
use hw_model::DropReason;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;
use switch_run::summary::{PfcSummary, PgSummary, PoolSummary, QueueSummary, SaiCounters};

/// The run's cost (machine-dependent, kept apart from the results).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Speed {
    pub wall_seconds: f64,
    pub cpu_seconds: f64,
    pub cycles_per_cpu_second: f64,
    /// Simulated microseconds per CPU second.
    pub simulated_us_per_cpu_second: f64,
    /// Per partition (`--threads`), the share of the wall time its thread spent stepping
    /// its switches: how even the partition is.
    pub partition_busy_share: Vec<f64>,
}

impl Speed {
    pub fn new(cycles: u64, clock_hz: u64, wall: f64, cpu: f64, busy: Vec<f64>) -> Self {
        let per_cpu = |x: f64| if cpu > 0.0 { x / cpu } else { 0.0 };
        Self {
            wall_seconds: wall,
            cpu_seconds: cpu,
            cycles_per_cpu_second: per_cpu(cycles as f64),
            simulated_us_per_cpu_second: per_cpu(cycles as f64 * 1e6 / clock_hz as f64),
            partition_busy_share: busy,
        }
    }
}

/// One switch: the single switch's counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchSummary {
    pub switch: NodeId,
    pub cells_in: u64,
    pub cells_out: u64,
    pub cells_dropped_lossless: u64,
    pub cells_dropped_lossy: u64,
    pub drops_by_reason: BTreeMap<String, u64>,
    pub cells_buffered_at_end: u64,
    pub pfc_pause_frames: u64,
    pub pfc_resume_frames: u64,
    /// ECM frames its congestion points sent (packets to the sampled flows' sources).
    #[serde(default, skip_serializing_if = "crate::transport::is_zero")]
    pub ecm_frames: u64,
    /// ECM frames not sent: about a flow with no ECM flow from this switch (an ECM
    /// frame's own, when the ECM class is a congestion point's).
    #[serde(default, skip_serializing_if = "crate::transport::is_zero")]
    pub ecm_frames_unsent: u64,
    pub reordered_cells: u64,
    pub misrouted_cells: u64,
    pub ingress_priority_groups: Vec<PgSummary>,
    pub egress_queues: Vec<QueueSummary>,
    pub pools: Vec<PoolSummary>,
    pub pfc: Vec<PfcSummary>,
    /// Buffer occupancy over time, if asked for (`[fabric] occupancy_interval_us`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<OccupancySummary>,
}

/// Per interval of `interval_cycles` from cycle 0, the most cells the switch's buffer held
/// at the end of a cycle in it (the last interval may be cut by the run's end).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OccupancySummary {
    pub interval_cycles: u64,
    pub peak_cells: Vec<u32>,
}

/// One direction of a link: the cells `from` sent to `to`, and the PFC frames `to` sent
/// back (those that reached a switch; all a ToR sent to a host), which paused `from` for
/// `pause_cycles` (summed over the classes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkSummary {
    pub link: LinkId,
    pub from: NodeId,
    pub to: NodeId,
    pub cells: u64,
    pub pfc_pause_frames: u64,
    pub pfc_resume_frames: u64,
    pub pause_cycles: u64,
}

/// One flow's completion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowFct {
    pub flow: usize,
    pub src: NodeId,
    pub dst: NodeId,
    pub sip: u32,
    pub dip: u32,
    pub sport: u16,
    pub dport: u16,
    pub size: u64,
    pub start_ns: u64,
    /// `None`: not complete at the end (still on its way, or a packet dropped).
    pub fct_ns: Option<u64>,
    pub standalone_ns: u64,
    pub slowdown: Option<f64>,
    /// Its sender's transport and counters at the end.
    pub sender: SenderStats,
}

/// A network run's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FabricSummary {
    pub cycles: u64,
    pub clock_hz: u64,
    pub flows: usize,
    pub flows_completed: usize,
    pub cells_injected: u64,
    pub cells_delivered: u64,
    pub cells_dropped_lossless: u64,
    pub cells_dropped_lossy: u64,
    pub cells_buffered_at_end: u64,
    pub cells_on_links_at_end: u64,
    pub reordered_cells: u64,
    pub conservation: String,
    pub conservation_ok: bool,
    pub deadlock: Option<Deadlock>,
    pub violations: Vec<String>,
    /// The lossless ingress queues whose packets can overflow their headroom
    /// (`crate::headroom`; `run.expect_lossless` refuses them before the run).
    pub headroom_warnings: Vec<String>,
    /// The ECM frames, when some switch has congestion points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecm: Option<EcmSummary>,
    pub switches: Vec<SwitchSummary>,
    pub links: Vec<LinkSummary>,
    pub fct: Vec<FlowFct>,
    pub run: Speed,
}

/// The switches' ECM frames: sent by their congestion points, received by the sampled
/// flows' sources, and the delays of those received, from the congestion point's cycle
/// to the source host's (queues, pauses and links on the way).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EcmSummary {
    pub frames_sent: u64,
    pub frames_received: u64,
    pub delay_min_ns: u64,
    pub delay_mean_ns: u64,
    pub delay_max_ns: u64,
}

impl FabricSummary {
    /// Every check held.
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the summary serializes")
    }

    /// HPCC's `fct.txt` (`third.cc` line 169): one line per completed flow, `sip dip sport
    /// dport size start_ns fct_ns standalone_fct_ns`, in flow order.
    pub fn fct_txt(&self) -> String {
        let mut s = String::new();
        for f in &self.fct {
            if let Some(fct) = f.fct_ns {
                let _ = writeln!(
                    s,
                    "{:08x} {:08x} {} {} {} {} {} {}",
                    f.sip, f.dip, f.sport, f.dport, f.size, f.start_ns, fct, f.standalone_ns
                );
            }
        }
        s
    }
}

impl FabricSummary {
    /// Per closed-loop transport in use: its flows, rate or window cuts, the congestion
    /// feedback (CNPs, ECE ACKs) their senders received, and (HPCC, PowerTCP) their ACKs
    /// with and without INT records.
    fn transports(&self) -> BTreeMap<&'static str, [u64; 5]> {
        let mut t: BTreeMap<&'static str, [u64; 5]> = BTreeMap::new();
        for s in self.fct.iter().map(|f| &f.sender) {
            if s.transport != "open_loop" {
                let e = t.entry(s.transport).or_default();
                let add = [1, s.cuts, s.cnps + s.ece_acks, s.acks_with_int, s.acks];
                e.iter_mut().zip(add).for_each(|(e, a)| *e += a);
            }
        }
        t
    }
}

impl fmt::Display for FabricSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = |f: &mut fmt::Formatter<'_>, k: &str, v: &dyn fmt::Display| {
            writeln!(f, "  {k:<28} {v}")
        };
        writeln!(
            f,
            "fabric | {} switches | {} flows | {} cycles",
            self.switches.len(),
            self.flows,
            self.cycles
        )?;
        row(f, "flows completed", &self.flows_completed)?;
        for (name, [n, cuts, feedback, with_int, acks]) in self.transports() {
            let what = match acks {
                0 => format!("{n} flows, {feedback} CNPs or ECE ACKs received, {cuts} cuts"),
                _ => format!("{n} flows, {with_int} of {acks} ACKs with INT records"),
            };
            row(f, &format!("transport {name}"), &what)?;
        }
        row(f, "cells injected", &self.cells_injected)?;
        row(f, "cells delivered", &self.cells_delivered)?;
        row(f, "cells dropped (lossless)", &self.cells_dropped_lossless)?;
        row(f, "cells dropped (lossy)", &self.cells_dropped_lossy)?;
        row(f, "cells buffered at end", &self.cells_buffered_at_end)?;
        row(f, "cells on links at end", &self.cells_on_links_at_end)?;
        row(f, "reordered cells", &self.reordered_cells)?;
        row(f, "conservation", &self.conservation)?;
        match &self.deadlock {
            Some(d) => row(f, "deadlock", d)?,
            None => row(f, "deadlock", &"none")?,
        }
        if let Some(first) = self.headroom_warnings.first() {
            let n = self.headroom_warnings.len();
            row(
                f,
                "headroom warnings",
                &format!("{n} lossless queues (in --summary-json); the first: {first}"),
            )?;
        }
        for s in &self.switches {
            writeln!(
                f,
                "  switch {:<5} in {} out {} dropped {}+{} PFC {}/{}",
                s.switch,
                s.cells_in,
                s.cells_out,
                s.cells_dropped_lossless,
                s.cells_dropped_lossy,
                s.pfc_pause_frames,
                s.pfc_resume_frames
            )?;
        }
        for v in &self.violations {
            writeln!(f, "  VIOLATION: {v}")?;
        }
        write!(
            f,
            "  speed: {:.0} cycles/CPU s, {:.1} simulated us/CPU s",
            self.run.cycles_per_cpu_second, self.run.simulated_us_per_cpu_second
        )
    }
}

/// What the summary needs of one switch at the end of a run, taken where the switch ran
/// (an MPI rank sends its switches' reports to rank 0: `crate::ranks`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SwitchReport {
    /// Cells its NICs put on their links, and its ECM frames' cells.
    injected: u64,
    on_links: u64,
    /// Its own lines of the violations (scoreboard, late messages, model invariants).
    violations: Vec<String>,
    summary: SwitchSummary,
    /// The directions of its ports' links, keyed by (link, sending node).
    links: Vec<((LinkId, NodeId), LinkSummary)>,
}

impl SwitchReport {
    /// The report of switch `s` at `end`; its occupancy series moves into the report (one
    /// copy of a series that may be a million intervals long).
    pub(crate) fn of(s: &mut Switch, topo: &Topology, end: u64) -> Self {
        let sb = &s.scoreboard;
        let mut violations = Vec::new();
        if sb.reordered + sb.misrouted + s.misrouted_in + s.overrun > 0 {
            violations.push(format!(
                "switch {}: {} reordered and {} misrouted departures, {} cells of flows not routed here, {} cells on a busy port; first: {}",
                s.node,
                sb.reordered,
                sb.misrouted,
                s.misrouted_in,
                s.overrun,
                sb.first_error().unwrap_or("-")
            ));
        }
        if s.late_in > 0 {
            violations.push(format!(
                "switch {}: {} messages arrived after it had run their cycle (a parallel window past its horizon)",
                s.node, s.late_in
            ));
        }
        if let Err(e) = s.mmu.check_invariants() {
            violations.push(format!("switch {}: model invariant: {e}", s.node));
        }
        Self {
            injected: s.nics.iter().map(|n| n.cells_sent).sum::<u64>() + s.ecm_injected,
            on_links: s.cells_on_links(),
            violations,
            links: links_of(topo, s, end),
            summary: switch_summary(s),
        }
    }
}

/// What the summary needs of one flow at the end: its receiver's counts and its sender's
/// stats (an MPI rank's view of them, merged on rank 0 as `crate::parallel::merge_flows`
/// merges the threads').
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FlowReport {
    pub received: u64,
    pub reordered: u64,
    pub done_at: Option<u64>,
    pub sender: SenderStats,
    /// An ECM flow's frames received and their delays.
    #[serde(default)]
    pub ecm_delay: EcmDelays,
}

impl FlowReport {
    pub(crate) fn of(f: &FlowState) -> Self {
        Self {
            received: f.recv.received,
            reordered: f.recv.reordered,
            done_at: f.recv.done_at,
            sender: f.sender.stats(),
            ecm_delay: f.recv.ecm_delay,
        }
    }
}

/// The summary of a run that ended at `end`: every switch's report (by switch index) and
/// every flow's (by flow index, beside its state in `flows`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn summarize(
    topo: &Topology,
    switches: Vec<SwitchReport>,
    flows: &[FlowState],
    reports: &[FlowReport],
    deadlock: Option<Deadlock>,
    end: u64,
    clock_hz: u64,
    run: Speed,
) -> FabricSummary {
    let mut violations = Vec::new();
    let injected: u64 = switches.iter().map(|s| s.injected).sum();
    let delivered: u64 = reports.iter().map(|f| f.received).sum();
    let dropped_lossless: u64 = switches
        .iter()
        .map(|s| s.summary.cells_dropped_lossless)
        .sum();
    let dropped_lossy: u64 = switches.iter().map(|s| s.summary.cells_dropped_lossy).sum();
    let buffered: u64 = switches
        .iter()
        .map(|s| s.summary.cells_buffered_at_end)
        .sum();
    let on_links: u64 = switches.iter().map(|s| s.on_links).sum();
    let accounted = delivered + dropped_lossless + dropped_lossy + buffered + on_links;
    let conservation_ok = injected == accounted;
    let conservation = format!(
        "injected {injected} = delivered {delivered} + dropped {} + buffered {buffered} + on links {on_links} {}",
        dropped_lossless + dropped_lossy,
        if conservation_ok {
            "OK".to_string()
        } else {
            format!("FAILED ({accounted} accounted for)")
        }
    );
    if !conservation_ok {
        violations.push(format!("conservation: {conservation}"));
    }
    if dropped_lossless > 0 {
        let at: Vec<String> = switches
            .iter()
            .map(|s| &s.summary)
            .filter(|s| s.cells_dropped_lossless > 0)
            .map(|s| format!("{} at switch {}", s.cells_dropped_lossless, s.switch))
            .collect();
        violations.push(format!("lossless cells dropped: {}", at.join(", ")));
    }
    let reordered: u64 = reports.iter().map(|f| f.reordered).sum();
    if reordered > 0 {
        let first = reports.iter().position(|f| f.reordered > 0).unwrap_or(0);
        violations.push(format!(
            "{reordered} cells received out of order or at the wrong host; first in flow {first}"
        ));
    }
    for s in &switches {
        violations.extend(s.violations.iter().cloned());
    }
    let ns = |cycles: u64| (cycles as u128 * 1_000_000_000 / clock_hz as u128) as u64;
    // The data flows; their feedback flows (ACKs, CNPs) and the ECM flows follow them.
    let data = flows
        .iter()
        .zip(reports)
        .take_while(|(f, _)| !matches!(f.sender, Sender::Feedback { .. } | Sender::Ecm));
    let fct: Vec<FlowFct> = data
        .enumerate()
        .map(|(i, (f, r))| {
            let fct_ns = r.done_at.map(|d| ns(d - f.start_cycle));
            FlowFct {
                flow: i,
                src: f.flow.src,
                dst: f.flow.dst,
                sip: ipv4_of(f.tuple.src),
                dip: ipv4_of(f.tuple.dst),
                sport: f.tuple.sport,
                dport: f.tuple.dport,
                size: f.flow.size,
                start_ns: ns(f.start_cycle),
                fct_ns,
                standalone_ns: f.standalone_ns,
                slowdown: fct_ns.map(|x| x as f64 / f.standalone_ns.max(1) as f64),
                sender: r.sender.clone(),
            }
        })
        .collect();
    let ecm = flows
        .iter()
        .any(|f| matches!(f.sender, Sender::Ecm))
        .then(|| {
            let mut d = EcmDelays::default();
            for r in reports {
                d.merge(&r.ecm_delay);
            }
            EcmSummary {
                frames_sent: switches.iter().map(|s| s.summary.ecm_frames).sum(),
                frames_received: d.frames,
                delay_min_ns: ns(d.min),
                delay_mean_ns: ns(d.sum.checked_div(d.frames).unwrap_or(0)),
                delay_max_ns: ns(d.max),
            }
        });
    FabricSummary {
        cycles: end,
        clock_hz,
        flows: fct.len(),
        flows_completed: fct.iter().filter(|f| f.fct_ns.is_some()).count(),
        cells_injected: injected,
        cells_delivered: delivered,
        cells_dropped_lossless: dropped_lossless,
        cells_dropped_lossy: dropped_lossy,
        cells_buffered_at_end: buffered,
        cells_on_links_at_end: on_links,
        reordered_cells: reordered,
        conservation,
        conservation_ok,
        deadlock,
        violations,
        headroom_warnings: Vec::new(),
        ecm,
        links: links(topo, &switches),
        switches: switches.into_iter().map(|s| s.summary).collect(),
        fct,
        run,
    }
}

fn switch_summary(s: &mut Switch) -> SwitchSummary {
    let sb = &s.scoreboard;
    let sai = SaiCounters::of(&s.mmu);
    SwitchSummary {
        switch: s.node,
        cells_in: sb.injected,
        cells_out: sb.departed,
        cells_dropped_lossless: sb.dropped_lossless(),
        cells_dropped_lossy: sb.dropped_lossy(),
        drops_by_reason: DropReason::ALL
            .iter()
            .map(|&r| (r.name().to_string(), sb.dropped_for(r)))
            .collect(),
        cells_buffered_at_end: s.cells_buffered(),
        pfc_pause_frames: s.pfc_pause_tx,
        pfc_resume_frames: s.pfc_resume_tx,
        ecm_frames: s.ecm_tx,
        ecm_frames_unsent: s.ecm_unsent,
        reordered_cells: sb.reordered,
        misrouted_cells: sb.misrouted,
        ingress_priority_groups: sai.pgs,
        egress_queues: sai.queues,
        pools: sai.pools,
        pfc: sai.pfc,
        occupancy: s.occupancy.as_mut().map(|o| OccupancySummary {
            interval_cycles: o.interval,
            peak_cells: std::mem::take(&mut o.peak_cells),
        }),
    }
}

/// The directions of the links of `s`'s ports: the cells it sent on each, and on a host's
/// link the cells the host sent; keyed by (link, sending node).
fn links_of(topo: &Topology, s: &Switch, end: u64) -> Vec<((LinkId, NodeId), LinkSummary)> {
    let mut out = Vec::new();
    for port in &s.ports {
        let peer = topo.links()[port.link].peer(s.node);
        let st = &port.stats;
        out.push((
            (port.link, s.node),
            LinkSummary {
                link: port.link,
                from: s.node,
                to: peer,
                cells: st.cells_tx,
                pfc_pause_frames: st.pause_rx,
                pfc_resume_frames: st.resume_rx,
                pause_cycles: st.pause.paused_cycles(end).iter().sum(),
            },
        ));
        if let PortEnd::Host(n) = port.end {
            let nic = &s.nics[n];
            out.push((
                (port.link, nic.host),
                LinkSummary {
                    link: port.link,
                    from: nic.host,
                    to: s.node,
                    cells: nic.cells_sent,
                    pfc_pause_frames: st.pause_tx,
                    pfc_resume_frames: st.resume_tx,
                    pause_cycles: nic.partner.paused_cycles(end).iter().sum(),
                },
            ));
        }
    }
    out
}

/// Both directions of every link, in link order, the direction from the link's `src`
/// first; a link that is down is left out.
fn links(topo: &Topology, switches: &[SwitchReport]) -> Vec<LinkSummary> {
    let out: BTreeMap<(LinkId, NodeId), LinkSummary> = switches
        .iter()
        .flat_map(|s| s.links.iter().cloned())
        .collect();
    let mut v: Vec<LinkSummary> = out
        .into_values()
        .filter(|l| topo.links()[l.link].up)
        .collect();
    v.sort_by_key(|l| (l.link, l.from != topo.links()[l.link].src));
    v
}
