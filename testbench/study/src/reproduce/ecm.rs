//! What the ECM reproductions share (`ecm-fig1`, `ecm-severe`, `ecm-two-cps`): a switch of
//! 10 Gb/s ports, the ECM priority, and probes of the congestion points' queues and of the
//! reaction points' rate limiters.
//!
//! The switch is the `small` profile with every port at 10 Gb/s, the line rate of the end
//! nodes of the draft's Figure 1 (section 2). The core clock is 100 MHz (one cycle is
//! 10 ns; a 1500 B frame takes 121.6 cycles at 10 Gb/s), a tenth of the profile's, so
//! that a run of 100 ms is 10^7 cycles. Links have a one-way delay of 5 us, so the loop's
//! round trip is 10 us plus queueing: "a few tens of microseconds" (section 1). The ECM
//! priority is 3, lossless (PFC) in the profile; a lossless drop fails the run.
//!
//! Rates are the ones that limit a flow at its NIC: the rate register of the fine limiter
//! whose filter matches the flow's FlowID and priority, else the coarse limiter of the
//! priority, else the line rate `C` (no limiter: the NIC sends at line rate). In TIMEOUT
//! that register is 0 (section 3.3.2). Queues are the CP's `qlen` register (64-byte pages,
//! section 3.2) times 64.

use super::ReproError;
use hw_model::{FiveTuple, PacketHdr};
use scenario::{Overrides, Plan, Scenario};
use std::fmt::Write;
use std::path::Path;
use stimulus::reaction_point::{flow_id, Limiter, LimiterState, ReactionPoint};
use switch_run::Sim;

/// The ECM priority of every reproduction (a lossless class of the `small` profile).
pub const PRIO: u8 = 3;
/// Frame size of every flow, bytes.
pub const PACKET_BYTES: u32 = 1500;
/// Line rate of every port, Gb/s (section 2: "line rate (10 Gbps)").
pub const PORT_GBPS: f64 = 10.0;
/// Core clock, MHz.
pub const CLOCK_MHZ: u32 = 100;
/// One-way link delay, ns.
pub const LINK_DELAY_NS: u32 = 5000;

/// `[switch.ecm]` lines of every reproduction beyond the defaults (docs/ecm.md): the
/// sampling interval `Sf + [0, Sr]` averages 25 000 B, a frame in 25 of 1000 B frames,
/// within the draft's ranges ([0, 256] KB and [0, 64] KB, section 3.2) but four times its
/// example rate (P = 0.01). `Qeq`, `Qmc`, `Qsc` keep their defaults (16, 32, 96 KiB).
pub const CP_LINES: &str = "sf_bytes = 20000\nsr_bytes = 10000";
/// `[ecm_rp]` lines beyond the defaults (docs/ecm.md): `Gi` and `Gd` an eighth of the
/// defaults. The spread of the rates between samples grows with `Gi Ru` and their
/// convergence to the fair share speeds up with `Gi Ru / S`; with `S` a quarter of the
/// draft's example, this keeps the convergence time and halves the spread.
pub const RP_LINES: &str = "gi = 0.5\ngd = 0.0001220703125";

/// The scenario header (`name`, `[switch]` with `[switch.ecm]`, `[ecm_rp]`, `[run]`) of a
/// switch with `ports` ports, with [`CP_LINES`] and [`RP_LINES`]. Every lossless packet is
/// [`PACKET_BYTES`] long, and the headroom is sized in cells for that size.
pub fn header(name: &str, ports: usize, cycles: u64) -> String {
    format!(
        "name = \"{name}\"\n[switch]\nprofile = \"small\"\nports = {ports}\n\
         port_speed_gbps = {PORT_GBPS}\ncore_clock_mhz = {CLOCK_MHZ}\n\
         link_delay_ns = {LINK_DELAY_NS}\nheadroom_min_packet_bytes = {PACKET_BYTES}\n\
         sram_write_cells_per_cycle = {ports}\n\
         sram_read_cells_per_cycle = {ports}\n[switch.ecm]\npriorities = [{PRIO}]\n{CP_LINES}\n\
         [ecm_rp]\n{RP_LINES}\n[run]\ncycles = {cycles}\nseed = 1\nexpect_lossless = true\n"
    )
}

/// One `[[flows]]` table of 1500 B frames at `gbps` from `src` to `dst` on priority
/// `prio`; `pattern` are the pattern's TOML lines (e.g. `pattern = "constant"`, plus
/// `start_cycle = ...` and the like).
pub fn flow(src: usize, dst: usize, prio: u8, gbps: f64, pattern: &str) -> String {
    format!(
        "\n[[flows]]\nsrc = {src}\ndst = {dst}\nprio = {prio}\nsize_bytes = {PACKET_BYTES}\n\
         rate_gbps = {gbps}\n{pattern}\n"
    )
}

/// The pattern lines of a constant-rate flow.
pub const CONSTANT: &str = "pattern = \"constant\"";

/// Parse and validate a scenario text into a plan (no overrides).
pub fn plan(text: &str, name: &str) -> Result<Plan, ReproError> {
    Ok(Scenario::parse(text, name)?.plan(&Overrides::default())?)
}

/// Microseconds to core cycles of `sim`.
pub fn us_to_cycles(sim: &Sim, us: f64) -> u64 {
    (us * sim.plan().derived.clock_hz as f64 / 1e6).round() as u64
}

/// Core cycles of `sim` to microseconds.
pub fn cycles_to_us(sim: &Sim, cycles: u64) -> f64 {
    cycles as f64 * 1e6 / sim.plan().derived.clock_hz as f64
}

/// The FlowID the reaction points give flow `i` of the plan (its 5-tuple and priority).
pub fn flowid_of(sim: &Sim, i: usize) -> u32 {
    let f = &sim.plan().flows[i];
    let hdr = PacketHdr {
        tuple: f.five_tuple(FiveTuple::UDP),
        prio: f.prio,
        ..PacketHdr::default()
    };
    flow_id(&hdr, sim.plan().ecm_rp.flowid_bits)
}

/// The limiter that holds back frames of FlowID `flowid` and priority `prio` at `rp`: the
/// fine limiter whose filter matches, else the coarse limiter of the priority (the RP's
/// filter order, section 3.3 / Fig. 7); `None` when the NIC sends them at line rate.
pub fn limiter_of(rp: &ReactionPoint, flowid: u32, prio: u8) -> Option<&Limiter> {
    let n = rp.params().fine_limiters as usize;
    let lim = rp.limiters();
    lim[..n]
        .iter()
        .find(|l| l.state != LimiterState::Inactive && l.flowid == flowid && l.prio == prio)
        .or_else(|| {
            lim.get(n + prio as usize)
                .filter(|l| l.state != LimiterState::Inactive)
        })
}

/// The rate that limits FlowID `flowid` of priority `prio` at `rp`, b/s (`C` without a
/// limiter, 0 in TIMEOUT).
pub fn flow_rate(rp: &ReactionPoint, flowid: u32, prio: u8) -> u64 {
    limiter_of(rp, flowid, prio).map_or(rp.line_rate_bps(), |l| l.rate_bps)
}

/// Index in `Mmu::ecm_cps` of the CP of egress queue (`port`, [`PRIO`]).
pub fn cp_index(sim: &Sim, port: usize) -> Result<usize, ReproError> {
    sim.mmu()
        .ecm_cps()
        .iter()
        .position(|c| c.port as usize == port && c.queue == PRIO)
        .ok_or_else(|| ReproError::Invariant(format!("no ECM congestion point at port {port}")))
}

/// Queue length of CP `cp` in bytes (`qlen` pages times 64).
pub fn cp_queue_bytes(sim: &Sim, cp: usize) -> u64 {
    sim.mmu().ecm_cps()[cp].qlen as u64 * 64
}

/// Cells of priority [`PRIO`] the MMU dropped in the last cycle.
pub fn prio_drops(sim: &Sim) -> u64 {
    sim.outputs()
        .cell_events
        .iter()
        .filter(|ev| ev.beat.hdr.prio == PRIO && matches!(ev.fate, hw_model::CellFate::Dropped(_)))
        .count() as u64
}

/// Wire bytes (frame plus preamble and gap) of the packets that finished leaving `port`
/// in the last cycle.
pub fn egress_wire_bytes(sim: &Sim, port: usize) -> u64 {
    let overhead = sim.plan().derived.cfg.wire_overhead_bytes as u64;
    sim.outputs()
        .departures
        .iter()
        .filter(|d| d.port as usize == port && d.beat.eop())
        .map(|d| d.beat.hdr.len as u64 + overhead)
        .sum()
}

/// After a run: the scoreboard's checks (order within a flow, conservation, model
/// invariants, lossless drops, the RP checks) must hold, or the numbers are void.
pub fn check(s: switch_run::Summary, what: &str) -> Result<switch_run::Summary, ReproError> {
    if s.ok() {
        Ok(s)
    } else {
        Err(ReproError::Invariant(format!(
            "{what}: {}",
            s.violations.join("; ")
        )))
    }
}

/// Write the run's limiter events into `path` in the `--trace-rp` format (docs/ecm.md).
pub fn attach_rp_trace(sim: &mut Sim, path: &Path) -> Result<(), ReproError> {
    let file = std::fs::File::create(path).map_err(|e| ReproError::io(path, e))?;
    sim.attach_rp_trace(file)
        .map_err(|e| ReproError::io(path, e))
}

/// One line of an RP trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpLine {
    pub cycle: u64,
    pub nic: u8,
    pub limiter: u8,
    pub event: String,
    pub rate_before_bps: u64,
    pub rate_after_bps: u64,
}

/// Read back an RP trace written by [`attach_rp_trace`] (after the run closed it).
pub fn read_rp_trace(path: &Path) -> Result<Vec<RpLine>, ReproError> {
    let text = std::fs::read_to_string(path).map_err(|e| ReproError::io(path, e))?;
    let bad =
        |n: usize| ReproError::Invariant(format!("{}: line {n} is malformed", path.display()));
    text.lines()
        .enumerate()
        .skip(1)
        .map(|(n, line)| {
            let f: Vec<&str> = line.split(',').collect();
            if f.len() != 8 {
                return Err(bad(n + 1));
            }
            let num = |i: usize| f[i].parse::<u64>().map_err(|_| bad(n + 1));
            Ok(RpLine {
                cycle: num(0)?,
                nic: num(1)? as u8,
                limiter: num(2)? as u8,
                event: f[4].to_string(),
                rate_before_bps: num(6)?,
                rate_after_bps: num(7)?,
            })
        })
        .collect()
}

/// Limiter events of all NICs by kind, in the summary's order.
pub fn event_totals(s: &switch_run::Summary) -> Vec<(String, u64)> {
    let mut t: Vec<(String, u64)> = Vec::new();
    for r in &s.ecm_rp {
        for (k, v) in &r.events {
            match t.iter_mut().find(|(n, _)| n == k) {
                Some(e) => e.1 += v,
                None => t.push((k.clone(), *v)),
            }
        }
    }
    t
}

/// The ECM and RP parameters of a plan as report lines, with the draft's examples marked.
pub fn parameters(sim: &Sim) -> String {
    let e = &sim.plan().derived.ecm;
    let p = &sim.plan().ecm_rp;
    let cfg = &sim.plan().derived.cfg.ecm;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "CP (3.2): Qeq {} B, Qmc {} B, Qsc {} B, Sf {} B + Sr [0, {}] B (mean {} B), Sscale 2^{}, w {}",
        e.qeq * 64,
        e.qmc * 64,
        e.qsc * 64,
        cfg.sf_bytes,
        cfg.sr_bytes,
        cfg.sf_bytes + cfg.sr_bytes / 2,
        cfg.sscale_log2,
        p.w_q3 as f64 / 8.0
    );
    let _ = writeln!(
        s,
        "RP (3.3): n {} fine limiters, Gi {}, Gd {}, alpha {:.3}, beta {:.3}, Ru {} Mb/s, Ri {:.2} C, Rd {} Mb/s every Td {} us, Rmin {} Mb/s, Tmax {} us",
        p.fine_limiters,
        p.gi_q16 as f64 / 65536.0,
        p.gd_q24 as f64 / 16_777_216.0,
        p.alpha_q16 as f64 / 65536.0,
        p.beta_q16 as f64 / 65536.0,
        p.ru_bps / 1_000_000,
        p.ri_q16 as f64 / 65536.0,
        p.rd_bps / 1_000_000,
        p.td_us,
        p.rmin_bps / 1_000_000,
        p.tmax_us
    );
    s
}
