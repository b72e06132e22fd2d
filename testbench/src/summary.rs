//! The result of a run: counts, checks and speed, as JSON (`--summary-json`) and as the
//! human table `mmu-sim run` prints.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

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

/// Everything a run reports. Maps are `BTreeMap`s so the JSON key order is fixed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub scenario: String,
    pub policy: String,
    pub seed: u64,
    pub cycles: u64,
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
    pub max_shared_occupancy_cells: u32,
    pub max_total_occupancy_cells: u32,
    pub conservation: String,
    pub conservation_ok: bool,
    pub egress: Vec<EgressSummary>,
    /// One entry per HCF queue (empty when every queue is FIFO).
    pub hcf: Vec<HcfSummary>,
    /// ECM frames the congestion points sent, by kind (empty when ECM is off).
    pub ecm_frames: BTreeMap<String, u64>,
    /// ECM reaction points that received frames (empty when ECM is off).
    pub ecm_rp: Vec<EcmRpSummary>,
    /// One entry per TCP flow (empty when the scenario has none).
    pub tcp: Vec<crate::tcp::TcpStats>,
    /// Headroom warnings and the causes of lossless drops.
    pub lossless: LosslessSummary,
    /// Broken invariants; empty on a clean run.
    pub violations: Vec<String>,
    pub wall_seconds: f64,
    pub cycles_per_second: f64,
}

impl Summary {
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
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
        row(f, "cells dropped (lossless)", &self.cells_dropped_lossless)?;
        row(f, "cells dropped (lossy)", &self.cells_dropped_lossy)?;
        for (reason, n) in &self.drops_by_reason {
            row(f, &format!("  {reason}"), n)?;
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
        row(
            f,
            "max shared occupancy",
            &format!("{} cells", self.max_shared_occupancy_cells),
        )?;
        row(
            f,
            "max total occupancy",
            &format!("{} cells", self.max_total_occupancy_cells),
        )?;
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
            row(
                f,
                &format!("tcp flow {}", t.flow),
                &format!(
                    "{} B delivered, {} retransmits ({} fast), {} timeouts, {fct}",
                    t.bytes_delivered, t.retransmits, t.fast_retransmits, t.timeouts
                ),
            )?;
        }
        row(
            f,
            "speed",
            &format!(
                "{:.0} cycles/s ({:.2} s wall)",
                self.cycles_per_second, self.wall_seconds
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
