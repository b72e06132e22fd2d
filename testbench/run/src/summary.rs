//! The result of a run: counts, checks and speed, as JSON (`--summary-json`) and as the
//! human table `mmu-sim run` prints.
//!
//! The buffer counters (per ingress priority group, egress queue, pool and PFC priority)
//! are named after the SAI statistics they correspond to; docs/signals.md maps each key to
//! its SAI attribute. Everything except [`Summary::run`] is deterministic: the same
//! scenario and seed give byte-identical JSON without it.

use hw_model::accounting::Accounting;
use hw_model::config::QUEUES;
use hw_model::stats::{reason_index, DropCounts, PfcCounts};
use hw_model::{DropReason, Mmu};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Version of the `--summary-json` layout. Bumped when a key is removed, renamed or changes
/// meaning; keys may be added without a bump.
pub const SCHEMA_VERSION: u32 = 1;

/// Occupancy in cells and in bytes. SAI counts buffer bytes; the buffer here is allocated in
/// whole cells, so bytes are always `cells * cell_bytes`.
fn bytes(cells: u32, cell_bytes: u32) -> u64 {
    cells as u64 * cell_bytes as u64
}

/// The cells of `d` by reason, for the reasons charged at egress (or at ingress).
fn drop_map(d: &DropCounts, at_egress: bool) -> BTreeMap<String, u64> {
    DropReason::ALL
        .iter()
        .filter(|r| r.at_egress() == at_egress)
        .map(|&r| (r.name().to_string(), d.cells[reason_index(r)]))
        .collect()
}

/// One ingress priority group that saw traffic (a cell admitted or dropped). SAI:
/// `SAI_INGRESS_PRIORITY_GROUP_STAT_*` (`saibuffer.h`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PgSummary {
    pub port: u8,
    pub pg: u8,
    pub lossless: bool,
    /// Private + shared + headroom cells at the end, and the highest sum at an edge.
    pub curr_occupancy_cells: u32,
    pub curr_occupancy_bytes: u64,
    pub watermark_cells: u32,
    pub watermark_bytes: u64,
    /// The shared segment (lossy group: the lossy shared segment).
    pub shared_curr_occupancy_cells: u32,
    pub shared_curr_occupancy_bytes: u64,
    pub shared_watermark_cells: u32,
    pub shared_watermark_bytes: u64,
    /// Headroom (eta; under DSH the port's insurance charged to this group).
    pub xoff_room_curr_occupancy_cells: u32,
    pub xoff_room_curr_occupancy_bytes: u64,
    pub xoff_room_watermark_cells: u32,
    pub xoff_room_watermark_bytes: u64,
    /// Packets refused at ingress admission, and their cells by reason.
    pub dropped_packets: u64,
    pub dropped_cells: BTreeMap<String, u64>,
}

/// One egress queue that saw traffic. SAI: `SAI_QUEUE_STAT_*` (`saiqueue.h`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueSummary {
    pub port: u8,
    pub queue: u8,
    pub curr_occupancy_cells: u32,
    pub curr_occupancy_bytes: u64,
    pub watermark_cells: u32,
    pub watermark_bytes: u64,
    /// Packets refused by the queue's own limit (HCF full, L2BM egress threshold), and
    /// their cells by reason.
    pub dropped_packets: u64,
    pub dropped_cells: BTreeMap<String, u64>,
}

/// A buffer pool. SAI: `SAI_BUFFER_POOL_STAT_*` (`saibuffer.h`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolSummary {
    /// `lossless` (its shared segment B_s, and its headroom as the XOFF room), `lossy` (its
    /// shared segment) or `buffer` (every cell of the SRAM).
    pub pool: String,
    pub curr_occupancy_cells: u32,
    pub curr_occupancy_bytes: u64,
    pub watermark_cells: u32,
    pub watermark_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xoff_room_curr_occupancy_cells: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xoff_room_curr_occupancy_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xoff_room_watermark_cells: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xoff_room_watermark_bytes: Option<u64>,
}

/// PFC frames of one port and priority (listed when any is non-zero). SAI:
/// `SAI_PORT_STAT_PFC_<priority>_TX_PKTS` / `_RX_PKTS` (`saiport.h`) count both kinds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PfcSummary {
    pub port: u8,
    pub priority: u8,
    /// Frames sent upstream carrying the priority (PAUSE + RESUME).
    pub tx_pkts: u64,
    /// Frames received from downstream (the scripted frames) carrying the priority.
    pub rx_pkts: u64,
    pub tx_pause: u64,
    pub tx_resume: u64,
    pub rx_pause: u64,
    pub rx_resume: u64,
}

/// Machine-dependent facts of a run: kept apart from the results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunMeta {
    pub wall_seconds: f64,
    /// Cycles per second of wall time.
    pub cycles_per_second: f64,
    /// CPU time of the thread that ran the cycles: the run's cost, whatever shared the core.
    pub cpu_seconds: f64,
    pub cycles_per_cpu_second: f64,
}

/// The buffer counters of `mmu` in SAI terms, entries without traffic left out.
pub struct SaiCounters {
    pub pgs: Vec<PgSummary>,
    pub queues: Vec<QueueSummary>,
    pub pools: Vec<PoolSummary>,
    pub pfc: Vec<PfcSummary>,
}

impl SaiCounters {
    pub fn of(mmu: &Mmu) -> Self {
        let d = mmu.config();
        let cb = d.cfg.cell_bytes;
        let a: &Accounting = mmu.accounting();
        let wm = &a.watermarks;
        let st = mmu.stats();
        let pgs = (0..a.ingress.len())
            .filter(|&i| wm.ingress[i][0] > 0 || st.pg_drops[i].packets > 0)
            .map(|i| {
                let g = a.ingress[i].map(|c| c.get());
                let w = wm.ingress[i];
                let total = g.iter().sum();
                PgSummary {
                    port: (i / QUEUES) as u8,
                    pg: (i % QUEUES) as u8,
                    lossless: d.is_lossless((i % QUEUES) as u8),
                    curr_occupancy_cells: total,
                    curr_occupancy_bytes: bytes(total, cb),
                    watermark_cells: w[0],
                    watermark_bytes: bytes(w[0], cb),
                    shared_curr_occupancy_cells: g[1],
                    shared_curr_occupancy_bytes: bytes(g[1], cb),
                    shared_watermark_cells: w[1],
                    shared_watermark_bytes: bytes(w[1], cb),
                    xoff_room_curr_occupancy_cells: g[2],
                    xoff_room_curr_occupancy_bytes: bytes(g[2], cb),
                    xoff_room_watermark_cells: w[2],
                    xoff_room_watermark_bytes: bytes(w[2], cb),
                    dropped_packets: st.pg_drops[i].packets,
                    dropped_cells: drop_map(&st.pg_drops[i], false),
                }
            })
            .collect();
        let queues = (0..a.egress.len())
            .filter(|&i| wm.egress[i] > 0 || st.queue_drops[i].packets > 0)
            .map(|i| {
                let c = a.egress[i].get();
                QueueSummary {
                    port: (i / QUEUES) as u8,
                    queue: (i % QUEUES) as u8,
                    curr_occupancy_cells: c,
                    curr_occupancy_bytes: bytes(c, cb),
                    watermark_cells: wm.egress[i],
                    watermark_bytes: bytes(wm.egress[i], cb),
                    dropped_packets: st.queue_drops[i].packets,
                    dropped_cells: drop_map(&st.queue_drops[i], true),
                }
            })
            .collect();
        let pool = |name: &str, now: u32, peak: u32, xoff: Option<(u32, u32)>| PoolSummary {
            pool: name.to_string(),
            curr_occupancy_cells: now,
            curr_occupancy_bytes: bytes(now, cb),
            watermark_cells: peak,
            watermark_bytes: bytes(peak, cb),
            xoff_room_curr_occupancy_cells: xoff.map(|x| x.0),
            xoff_room_curr_occupancy_bytes: xoff.map(|x| bytes(x.0, cb)),
            xoff_room_watermark_cells: xoff.map(|x| x.1),
            xoff_room_watermark_bytes: xoff.map(|x| bytes(x.1, cb)),
        };
        let pools = vec![
            pool(
                "lossless",
                a.shared_total.get(),
                wm.shared_total,
                Some((a.headroom_total.get(), wm.headroom_total)),
            ),
            pool(
                "lossy",
                a.lossy_shared_total.get(),
                wm.lossy_shared_total,
                None,
            ),
            pool("buffer", a.total.get(), wm.total, None),
        ];
        let mut pfc = Vec::new();
        for (p, (tx, rx)) in st.pfc_tx.iter().zip(&st.pfc_rx).enumerate() {
            for (prio, (t, r)) in tx.iter().zip(rx).enumerate() {
                if *t != PfcCounts::default() || *r != PfcCounts::default() {
                    pfc.push(PfcSummary {
                        port: p as u8,
                        priority: prio as u8,
                        tx_pkts: t.pause + t.resume,
                        rx_pkts: r.pause + r.resume,
                        tx_pause: t.pause,
                        tx_resume: t.resume,
                        rx_pause: r.pause,
                        rx_resume: r.resume,
                    });
                }
            }
        }
        Self {
            pgs,
            queues,
            pools,
            pfc,
        }
    }
}

/// Delivered traffic of one egress port.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EgressSummary {
    pub port: u8,
    pub cells: u64,
    pub packets: u64,
    /// Packet bytes delivered per second of simulated time, Gb/s.
    pub gbps: f64,
}

/// One HCF egress queue: its periods and where its packets went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HcfSummary {
    pub port: u8,
    pub queue: u8,
    /// Priority periods started, the one at reset included.
    pub periods: u32,
    pub packets_to_hp: u64,
    pub packets_to_lp: u64,
    /// Packets dropped because HP and LP were full (`hcf_full`).
    pub packets_dropped: u64,
}

/// One ECN marking egress queue (`[switch.ecn]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EcnSummary {
    pub port: u8,
    pub queue: u8,
    /// ECN-capable packets the marker looked at.
    pub ect_packets: u64,
    /// Packets it marked CE.
    pub marked: u64,
}

/// One rate limiter in use at the end of the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LimiterSummary {
    /// Fine limiters `0..n`; the coarse limiter of priority `p` is `n + p`.
    pub limiter: u8,
    pub coarse: bool,
    pub prio: u8,
    /// FlowID register (0 for a coarse limiter).
    pub flowid: u32,
    pub cpid: u16,
    /// `active` or `timeout`.
    pub state: String,
    pub rate_bps: u64,
    pub queued_packets: u64,
    /// `RTTavg`, microseconds.
    pub rtt_avg_us: f64,
}

/// The ECM reaction point of one NIC (only NICs that received ECM frames are listed).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EcmRpSummary {
    pub nic: u8,
    pub ecm_frames_rx: u64,
    /// Frames that reached a limiter in an ECM(0,0) timeout.
    pub ignored_in_timeout: u64,
    /// Positive (or zero) feedback for an unlimited flow or from a CP other than the
    /// limiter's.
    pub ignored_positive: u64,
    /// Frames sent by the rate limiters (with a CM-Tag).
    pub frames_limited: u64,
    /// Limiter events by kind (the `--trace-rp` events).
    pub events: BTreeMap<String, u64>,
    /// Limiters in use at the end, with their final rates.
    pub limiters: Vec<LimiterSummary>,
}

/// Why lossless cells could drop, or did: the headroom warnings of the plan and the first
/// lossless packet drops of the run, each with its cause.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LosslessSummary {
    /// Lossless traffic the headroom was not sized for (`Plan::headroom_warnings`).
    pub headroom_warnings: Vec<String>,
    /// Lossless packets dropped (every cell of a dropped packet is dropped).
    pub packets_dropped: u64,
    /// The first few of them, each with its cause.
    pub first_drops: Vec<String>,
}

impl LosslessSummary {
    fn fmt_rows(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.headroom_warnings.is_empty() {
            writeln!(
                f,
                "  {:<28} {} (on stderr and in --summary-json)",
                "headroom warnings",
                self.headroom_warnings.len()
            )?;
        }
        if self.packets_dropped > 0 {
            writeln!(
                f,
                "  {:<28} {}",
                "lossless packets dropped", self.packets_dropped
            )?;
        }
        for d in &self.first_drops {
            writeln!(f, "    {d}")?;
        }
        Ok(())
    }
}

/// Whether a drop reason (`DropReason::name`) is one of a lossless class: only the
/// headroom running out; the DT, HCF and L2BM egress limits drop lossy packets only.
fn is_lossless_drop(reason: &str) -> bool {
    reason == DropReason::HeadroomFull.name()
}

/// Everything a run reports. Maps are `BTreeMap`s so the JSON key order is fixed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The `mmu-sim` version that wrote it (`CARGO_PKG_VERSION`).
    pub tool_version: String,
    pub scenario: String,
    pub policy: String,
    pub seed: u64,
    pub cycles: u64,
    /// Core clock, Hz.
    pub clock_hz: u64,
    /// Bytes per buffer cell: every `..._bytes` counter is `..._cells * cell_bytes`.
    pub cell_bytes: u32,
    /// SHA-256 of the resolved scenario ([`scenario::Scenario::hash`]).
    pub scenario_hash: String,
    pub cells_injected: u64,
    pub cells_admitted: u64,
    pub cells_departed: u64,
    pub cells_dropped_lossless: u64,
    pub cells_dropped_lossy: u64,
    /// Cells in the buffer (the model's `buffered_cells()` less the owed cells).
    pub cells_buffered_at_end: u64,
    /// Cells charged to admitted packets whose remaining cells had not arrived.
    pub cells_owed_at_end: u64,
    pub cells_in_flight_at_end: u64,
    pub drops_by_reason: BTreeMap<String, u64>,
    pub admitted_by_segment: BTreeMap<String, u64>,
    pub reordered_cells: u64,
    pub misrouted_cells: u64,
    /// Frames the MMU sent that pause at least one class.
    pub pfc_pause_frames: u64,
    /// Frames the MMU sent that only resume classes.
    pub pfc_resume_frames: u64,
    /// Class pauses the link partners acted on.
    pub partner_pause_events: u64,
    /// DSH port-level frames among the PAUSE / RESUME frames above.
    pub pfc_port_pause_frames: u64,
    pub pfc_port_resume_frames: u64,
    /// DSH port-level pauses the upstream partners acted on.
    pub partner_port_pause_events: u64,
    pub pfc_frames_rx_scripted: u64,
    pub conservation: String,
    pub conservation_ok: bool,
    pub egress: Vec<EgressSummary>,
    /// One entry per HCF queue (empty when every queue is FIFO).
    pub hcf: Vec<HcfSummary>,
    /// ECM frames the congestion points sent, by kind (empty when ECM is off).
    pub ecm_frames: BTreeMap<String, u64>,
    /// ECM reaction points that received frames (empty when ECM is off).
    pub ecm_rp: Vec<EcmRpSummary>,
    /// One entry per ECN marking queue (left out when ECN is off; the table shows the
    /// queues that saw ECN-capable packets).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ecn: Vec<EcnSummary>,
    /// One entry per TCP flow (empty when the scenario has none).
    pub tcp: Vec<stimulus::tcp::TcpStats>,
    /// One entry per DCQCN flow (left out when the scenario has none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dcqcn: Vec<stimulus::dcqcn::DcqcnStats>,
    /// One entry per `hpcc`, `powertcp` or `theta_powertcp` flow (left out when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub int_cc: Vec<stimulus::int_cc::IntCcStats>,
    /// Ingress priority groups, egress queues, pools and PFC priorities ([`SaiCounters`]).
    pub ingress_priority_groups: Vec<PgSummary>,
    pub egress_queues: Vec<QueueSummary>,
    pub pools: Vec<PoolSummary>,
    pub pfc: Vec<PfcSummary>,
    /// Headroom warnings and the causes of lossless drops.
    pub lossless: LosslessSummary,
    /// Broken invariants; empty on a clean run.
    pub violations: Vec<String>,
    /// Wall time and speed: the only part that differs between two runs of one scenario.
    pub run: RunMeta,
}

impl Summary {
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }

    /// The SAI counters as compact rows: pools, then the groups, queues and PFC
    /// priorities that saw traffic, in cells as `now/watermark`.
    fn fmt_buffer_counters(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = |f: &mut fmt::Formatter<'_>, k: &str, v: &str| writeln!(f, "  {k:<28} {v}");
        row(
            f,
            "buffer counters",
            &format!("cells now/watermark (1 cell = {} B)", self.cell_bytes),
        )?;
        for p in &self.pools {
            let mut v = format!("{}/{}", p.curr_occupancy_cells, p.watermark_cells);
            if let (Some(n), Some(w)) = (
                p.xoff_room_curr_occupancy_cells,
                p.xoff_room_watermark_cells,
            ) {
                v += &format!(", xoff room {n}/{w}");
            }
            row(f, &format!("  pool {}", p.pool), &v)?;
        }
        let drops = |packets: u64, cells: &BTreeMap<String, u64>| {
            if packets == 0 {
                return String::new();
            }
            let why: Vec<String> = cells
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(r, n)| format!("{n} {r}"))
                .collect();
            format!("; {packets} packets dropped (cells: {})", why.join(", "))
        };
        for g in &self.ingress_priority_groups {
            row(
                f,
                &format!(
                    "  pg p{} pg{}{}",
                    g.port,
                    g.pg,
                    if g.lossless { "" } else { " lossy" }
                ),
                &format!(
                    "{}/{}, shared {}/{}, xoff room {}/{}{}",
                    g.curr_occupancy_cells,
                    g.watermark_cells,
                    g.shared_curr_occupancy_cells,
                    g.shared_watermark_cells,
                    g.xoff_room_curr_occupancy_cells,
                    g.xoff_room_watermark_cells,
                    drops(g.dropped_packets, &g.dropped_cells)
                ),
            )?;
        }
        for q in &self.egress_queues {
            row(
                f,
                &format!("  queue p{} q{}", q.port, q.queue),
                &format!(
                    "{}/{}{}",
                    q.curr_occupancy_cells,
                    q.watermark_cells,
                    drops(q.dropped_packets, &q.dropped_cells)
                ),
            )?;
        }
        for p in &self.pfc {
            row(
                f,
                &format!("  pfc p{} prio {}", p.port, p.priority),
                &format!(
                    "tx {} PAUSE {} RESUME, rx {} PAUSE {} RESUME",
                    p.tx_pause, p.tx_resume, p.rx_pause, p.rx_resume
                ),
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = |f: &mut fmt::Formatter<'_>, k: &str, v: &dyn fmt::Display| {
            writeln!(f, "  {k:<28} {v}")
        };
        writeln!(
            f,
            "scenario {} | policy {} | seed {} | {} cycles",
            self.scenario, self.policy, self.seed, self.cycles
        )?;
        row(f, "cells injected", &self.cells_injected)?;
        row(f, "cells admitted", &self.cells_admitted)?;
        for (seg, n) in &self.admitted_by_segment {
            row(f, &format!("  in {seg}"), n)?;
        }
        row(f, "cells departed", &self.cells_departed)?;
        for (class, cells, lossless) in [
            ("lossless", self.cells_dropped_lossless, true),
            ("lossy", self.cells_dropped_lossy, false),
        ] {
            row(f, &format!("cells dropped ({class})"), &cells)?;
            for (reason, n) in &self.drops_by_reason {
                if is_lossless_drop(reason) == lossless {
                    row(f, &format!("  {reason}"), n)?;
                }
            }
        }
        self.lossless.fmt_rows(f)?;
        row(f, "cells buffered at end", &self.cells_buffered_at_end)?;
        row(f, "cells in flight at end", &self.cells_in_flight_at_end)?;
        row(f, "cells owed at end", &self.cells_owed_at_end)?;
        row(f, "reordered cells", &self.reordered_cells)?;
        row(f, "misrouted cells", &self.misrouted_cells)?;
        row(f, "PFC pause frames sent", &self.pfc_pause_frames)?;
        row(f, "PFC resume frames sent", &self.pfc_resume_frames)?;
        row(f, "partner class pauses", &self.partner_pause_events)?;
        if self.policy == "dsh" {
            row(f, "  port-level PAUSE frames", &self.pfc_port_pause_frames)?;
            row(
                f,
                "  port-level RESUME frames",
                &self.pfc_port_resume_frames,
            )?;
            row(f, "partner port pauses", &self.partner_port_pause_events)?;
        }
        row(f, "scripted PFC frames in", &self.pfc_frames_rx_scripted)?;
        self.fmt_buffer_counters(f)?;
        for e in &self.egress {
            row(
                f,
                &format!("egress port {}", e.port),
                &format!(
                    "{:.2} Gb/s ({} packets, {} cells)",
                    e.gbps, e.packets, e.cells
                ),
            )?;
        }
        if !self.ecm_frames.is_empty() {
            let total: u64 = self.ecm_frames.values().sum();
            let kinds: Vec<String> = self
                .ecm_frames
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect();
            row(
                f,
                "ECM frames sent",
                &format!("{total} ({})", kinds.join(", ")),
            )?;
        }
        for m in self.ecn.iter().filter(|m| m.ect_packets > 0) {
            row(
                f,
                &format!("ecn port {} queue {}", m.port, m.queue),
                &format!(
                    "{} of {} ECN-capable packets marked CE",
                    m.marked, m.ect_packets
                ),
            )?;
        }
        for r in &self.ecm_rp {
            let ev = |k: &str| r.events.get(k).copied().unwrap_or(0);
            row(
                f,
                &format!("ecm rp nic {}", r.nic),
                &format!(
                    "{} ECM frames in ({} ignored in timeout, {} positive ignored), {} frames limited",
                    r.ecm_frames_rx, r.ignored_in_timeout, r.ignored_positive, r.frames_limited
                ),
            )?;
            row(
                f,
                "  limiter events",
                &format!(
                    "{} instantiated, {} coarse, {} reclaimed, {} decreases, {} increases, {} self-increases, {} timeouts, {} restarts",
                    ev("instantiate"),
                    ev("coarse"),
                    ev("reclaim"),
                    ev("decrease"),
                    ev("increase"),
                    ev("self_increase"),
                    ev("timeout"),
                    ev("restart")
                ),
            )?;
            for l in &r.limiters {
                let what = if l.coarse {
                    format!("coarse prio {}", l.prio)
                } else {
                    format!("flowid {:#x} prio {}", l.flowid, l.prio)
                };
                row(
                    f,
                    &format!("  limiter {}", l.limiter),
                    &format!(
                        "{what}, cpid {:#x}, {} at {:.3} Gb/s, {} queued, RTTavg {:.2} us",
                        l.cpid,
                        l.state,
                        l.rate_bps as f64 / 1e9,
                        l.queued_packets,
                        l.rtt_avg_us
                    ),
                )?;
            }
        }
        for h in &self.hcf {
            row(
                f,
                &format!("hcf port {} queue {}", h.port, h.queue),
                &format!(
                    "{} periods, {} packets to HP, {} to LP, {} dropped",
                    h.periods, h.packets_to_hp, h.packets_to_lp, h.packets_dropped
                ),
            )?;
        }
        for t in &self.tcp {
            let fct = t
                .fct_cycles
                .map_or("running".to_string(), |c| format!("FCT {c} cycles"));
            let dctcp = t.dctcp.as_ref().map_or(String::new(), |d| {
                format!(
                    ", dctcp alpha {:.4}, {} ECE acks, {} cuts",
                    d.alpha, d.ece_acks, d.cuts
                )
            });
            row(
                f,
                &format!("tcp flow {}", t.flow),
                &format!(
                    "{} B delivered, {} retransmits ({} fast), {} timeouts, {fct}{dctcp}",
                    t.bytes_delivered, t.retransmits, t.fast_retransmits, t.timeouts
                ),
            )?;
        }
        for c in &self.dcqcn {
            row(
                f,
                &format!("dcqcn flow {}", c.flow),
                &format!(
                    "{} B delivered, {} CNPs sent, {} received, {} rate cuts, rate {:.3} Gb/s (target {:.3}), alpha {:.4}",
                    c.bytes_delivered,
                    c.cnps_sent,
                    c.cnps_received,
                    c.rate_cuts,
                    c.rate_gbps,
                    c.target_gbps,
                    c.alpha
                ),
            )?;
        }
        for c in &self.int_cc {
            row(
                f,
                &format!("{} flow {}", c.law, c.flow),
                &format!(
                    "{} B delivered, {} ACKs ({} with INT), rate {:.3} Gb/s, {} {:.4}",
                    c.bytes_delivered,
                    c.acks,
                    c.acks_with_int,
                    c.rate_gbps,
                    if c.law == "hpcc" { "U" } else { "power" },
                    c.signal
                ),
            )?;
        }
        row(
            f,
            "speed",
            &format!(
                "{:.0} cycles/s ({:.2} s CPU, {:.2} s wall)",
                self.run.cycles_per_cpu_second, self.run.cpu_seconds, self.run.wall_seconds
            ),
        )?;
        writeln!(f, "conservation: {}", self.conservation)?;
        if self.violations.is_empty() {
            writeln!(f, "result: OK")
        } else {
            for v in &self.violations {
                writeln!(f, "VIOLATION: {v}")?;
            }
            writeln!(f, "result: FAILED ({} violations)", self.violations.len())
        }
    }
}
