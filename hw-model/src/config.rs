//! Switch configuration: what a chip is built with, checked against the register widths.
//!
//! Every field is in the units a datasheet uses (bytes, Gb/s, ns, MHz); [`SwitchConfig::build`]
//! turns them into the cell counts and cycle counts the hardware registers hold, and refuses
//! anything that does not fit, naming the field and the allowed range.

use rtl::Shifter;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Width of a cell pointer: the largest buffer is `2^PTR_BITS` cells.
pub const PTR_BITS: u32 = 20;
/// Width of every cell counter and threshold: holds `0..=2^PTR_BITS` cells.
pub const CNT_BITS: u32 = 21;
/// Largest number of cells the pointer width can address.
pub const MAX_CELLS: u32 = 1 << PTR_BITS;
/// PFC defines eight traffic classes; the model has eight queues per port.
pub const QUEUES: usize = 8;
/// Largest port count: port bitmaps are one 64-bit word.
pub const MAX_PORTS: usize = 64;
/// Wire bytes of a PFC frame: 64 B frame + 8 B preamble + 12 B inter-frame gap.
pub const PFC_FRAME_WIRE_BYTES: u32 = 84;
/// Budget of DSH Eq. 1 for the PFC frame and the upstream's reaction, bytes.
pub const EQ1_PFC_BYTES: u64 = 3840;
/// Bit time quantum of a PFC pause timer (IEEE 802.1Qbb): 512 bit times.
pub const PFC_QUANTUM_BITS: u64 = 512;

/// Buffer management policy for the lossless pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Static and independent headroom: `eta` reserved per ingress queue (DSH Eq. 3).
    #[default]
    Sih,
    /// Dynamic and shared headroom: insurance `N_p * eta` (Eq. 4), headroom shared with
    /// footroom in one DT segment, queue-level (Eq. 5) and port-level (Eq. 6) flow control.
    Dsh,
    /// L2BM: SIH's headroom and PFC, with a threshold per ingress queue weighted by the
    /// inverse of its packets' average sojourn time (L2BM Eq. 3), for lossless and lossy
    /// queues alike; lossy packets must also pass an egress DT (dual admission, Fig. 5).
    L2bm,
}

impl Policy {
    pub const NAMES: &'static [&'static str] = &["sih", "dsh", "l2bm"];

    pub fn parse(s: &str) -> Result<Self, ConfigError> {
        match s {
            "sih" => Ok(Self::Sih),
            "dsh" => Ok(Self::Dsh),
            "l2bm" => Ok(Self::L2bm),
            other => Err(ConfigError::new(
                "policy",
                format!(
                    "unknown policy {other:?}; allowed: {}",
                    Self::NAMES.join(", ")
                ),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Sih => "sih",
            Self::Dsh => "dsh",
            Self::L2bm => "l2bm",
        }
    }
}

/// How a received PFC frame pauses an egress queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PfcRxMode {
    /// IEEE 802.1Qbb: a pause timer of `quanta * 512` bit times, refreshed by each frame.
    #[default]
    Timer,
    /// The DSH paper's reading (its footnote 2): paused until an explicit RESUME.
    OnOff,
}

/// How `eta` (Eq. 1, in wire bytes) becomes the cells the headroom reserves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum HeadroomMode {
    /// Sized for the worst packet-to-cell rounding of the lossless packet range
    /// `headroom_min_packet_bytes..=mtu_bytes` ([`eta_cells_for`]): no lossless drop for any
    /// mixture of packets in the range.
    #[default]
    #[serde(rename = "cells")]
    Cells,
    /// The paper's: Eq. 1's bytes rounded up to whole cells. Enough only for packets that take
    /// no more buffer than wire bytes (whole-cell packets); a 1500 B packet takes 8 cells of
    /// 208 B = 1664 B for 1520 B on the wire, and the headroom falls short.
    #[serde(rename = "paper-bytes")]
    PaperBytes,
}

/// Where L2BM's drain rate `mu` (Table I: per egress port and priority) comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum L2bmMu {
    /// The egress port's line rate, a constant per port.
    #[default]
    #[serde(rename = "line-rate")]
    LineRate,
    /// Measured per egress queue by the drain meter: an EWMA of the cycles per cell between
    /// the starts of the queue's back-to-back packets (`docs/l2bm.md`).
    #[serde(rename = "measured")]
    Measured,
}

impl L2bmMu {
    /// The default is left out of the resolved scenario (its hash stays that of a file
    /// written before the key existed).
    pub fn is_line_rate(&self) -> bool {
        *self == Self::LineRate
    }
}

/// A configuration value out of range: names the field and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The switch as a user writes it (scenario file `[switch]` table). All fields optional in
/// the file; missing ones come from the profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Number of ports (1..=64).
    pub ports: usize,
    /// Line rate of every port, Gb/s, unless `port_speeds_gbps` says otherwise.
    pub port_speed_gbps: f64,
    /// Per-port line rates in Gb/s (length = `ports`); empty = all `port_speed_gbps`.
    pub port_speeds_gbps: Vec<f64>,
    /// Core clock, MHz.
    pub core_clock_mhz: u32,
    /// Bytes per buffer cell (Tomahawk: 208).
    pub cell_bytes: u32,
    /// Metadata bytes stored with each packet in the buffer (counts toward its cells).
    pub packet_overhead_bytes: u32,
    /// Bytes on the wire per packet beyond its length: preamble + SFD + inter-frame gap.
    pub wire_overhead_bytes: u32,
    /// Total buffer, bytes.
    pub buffer_bytes: u64,
    /// Cells the shared SRAM can write per cycle (all ingress ports together).
    pub sram_write_cells_per_cycle: u32,
    /// Cells the shared SRAM can read per cycle (all egress ports together).
    pub sram_read_cells_per_cycle: u32,
    /// Read latency of the link, descriptor and free-list RAMs, cycles.
    pub sram_read_latency: u32,
    /// Priorities (0..=7) that are lossless (PFC-protected); the rest are lossy.
    pub lossless_priorities: Vec<u8>,
    /// The strict-priority control queue (0..=7); the other queues share DWRR.
    pub control_queue: u8,
    /// Lossless pool admission policy.
    pub policy: Policy,
    /// DT alpha as a power of two, `alpha = 2^alpha_log2` (-7..=3).
    pub alpha_log2: i32,
    /// Private buffer `phi` per lossless ingress queue, bytes (rounded up to cells).
    pub private_bytes: u32,
    /// MTU used by Eq. 1, bytes.
    pub mtu_bytes: u32,
    /// Upstream link propagation delay `D_prop` used by Eq. 1, ns.
    pub link_delay_ns: u32,
    /// The wire bytes the headroom `eta` of a lossless ingress queue absorbs; unset = Eq. 1
    /// per port. Converted to cells as `headroom` says.
    pub eta_bytes: Option<u32>,
    /// How `eta` becomes cells: `cells` (default) or the paper's `paper-bytes`.
    pub headroom: HeadroomMode,
    /// Smallest lossless packet, bytes, that `headroom = "cells"` sizes `eta` for
    /// (64..=`mtu_bytes`); unset = `mtu_bytes`.
    pub headroom_min_packet_bytes: Option<u32>,
    /// PFC hysteresis `delta` (DSH: `delta_q`): `X_on = X_off - delta`, bytes.
    pub delta_bytes: u32,
    /// DSH port-level hysteresis `delta_p`: `X_pon = X_poff - delta_p`, bytes.
    pub delta_port_bytes: u32,
    /// Lossy pool size, bytes (carved out of the buffer before the lossless partition).
    pub lossy_pool_bytes: u64,
    /// DT alpha of the lossy pool, `2^lossy_alpha_log2` (-7..=3).
    pub lossy_alpha_log2: i32,
    /// Private buffer per lossy ingress queue, bytes.
    pub lossy_private_bytes: u32,
    /// The free space `B - Q` that the ingress thresholds see (DT Eq. 2, L2BM Eq. 3) is the
    /// combined free space of the lossless and the lossy shared segments, as in an ingress
    /// pool shared by both kinds of traffic (L2BM II-A). Every policy; the segments keep
    /// their own sizes. Off: each pool's thresholds see only its own segment.
    pub hybrid_ingress_pool: bool,
    /// L2BM: DT alpha of the lossy egress pool, `2^egress_alpha_log2` (-7..=3). A lossy
    /// packet is admitted only if its egress queue is below `alpha_e * (lossy pool -
    /// lossy cells)` (dual admission, L2BM Fig. 5).
    pub egress_alpha_log2: i32,
    /// L2BM: the drain rate `mu` of Algorithm 1's estimate `Q_out / mu`: `line-rate`
    /// (default) or `measured` per egress queue.
    #[serde(skip_serializing_if = "L2bmMu::is_line_rate")]
    pub l2bm_mu: L2bmMu,
    /// DWRR quantum per queue per round, bytes.
    pub dwrr_quantum_bytes: u32,
    /// How received PFC frames pause egress queues.
    pub pfc_rx_mode: PfcRxMode,
    /// Pause time carried by the PAUSE frames this switch sends, in 512-bit quanta.
    pub pfc_pause_quanta: u16,
    /// Egress queues run as HCF (`[[switch.hcf]]`); every other queue is FIFO.
    pub hcf: Vec<HcfConfig>,
    /// ECM congestion points at the egress queues (`[switch.ecm]`).
    pub ecm: EcmConfig,
    /// ECN marking at the egress queues (`[switch.ecn]`). Left out of the serialized
    /// configuration (and so of the scenario hash) while off.
    #[serde(skip_serializing_if = "EcnConfig::is_off")]
    pub ecn: EcnConfig,
    /// In-band network telemetry: every egress port stamps a hop record on each packet it
    /// dequeues (`crate::int_stamp`). Left out of the serialized configuration (and so
    /// of the scenario hash) while off.
    #[serde(skip_serializing_if = "is_false")]
    pub int: bool,
}

/// What the ECN marker's queue length counts (`switch.ecn.unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum EcnUnit {
    /// Packet bytes (`PacketHdr::len`).
    #[default]
    Bytes,
    /// Buffer cells (`Beat::ncells`).
    Cells,
}

/// When the ECN marker looks at a packet (`switch.ecn.mark_on`): chips differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MarkOn {
    /// At admission, against the queue the packet joins (the queue length before it).
    #[default]
    Enqueue,
    /// At dequeue, against the queue the packet leaves behind.
    Dequeue,
}

/// `[switch.ecn]`: RED-curve ECN marking (Floyd & Jacobson 1993, on the instantaneous
/// queue as DCQCN section 3 and DCTCP section 3.1 use it) at every egress queue of the
/// enabled priorities. `kmin == kmax` is DCTCP's step threshold `K`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EcnConfig {
    /// Priorities (0..=7) whose egress queues mark; empty = ECN off.
    pub priorities: Vec<u8>,
    /// What `kmin` and `kmax` count: `bytes` (default) or `cells`.
    pub unit: EcnUnit,
    /// `Kmin`: no mark at or below it (0..=2^27 - 1, in `unit`).
    pub kmin: u32,
    /// `Kmax`: above it every ECN-capable packet is marked (kmin..=2^27 - 1).
    pub kmax: u32,
    /// `Pmax`: the marking probability at `Kmax` (2^-16..=1, stored in 16 fraction bits).
    pub pmax: f64,
    /// Where the decision is taken: `enqueue` (default) or `dequeue`.
    pub mark_on: MarkOn,
    /// Seed of the marking LFSRs (each queue XORs `port << 3 | queue` in).
    pub lfsr_seed: u32,
    /// `[[switch.ecn.curves]]`: priorities with a curve of their own (the keys above give
    /// the curve of `priorities`). Left out of the serialized configuration while empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub curves: Vec<EcnCurveConfig>,
}

/// `[[switch.ecn.curves]]`: a RED curve of its own for the egress queues of `priorities`,
/// in `[switch.ecn]`'s `unit` and `mark_on`: a chip with per-class ECN profiles, such as
/// DCTCP's step threshold on a lossy class beside DCQCN's RED curve on a lossless one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnCurveConfig {
    /// Priorities (0..=7) that mark on this curve: none of `[switch.ecn] priorities` nor
    /// of another curve.
    pub priorities: Vec<u8>,
    pub kmin: u32,
    pub kmax: u32,
    /// `Pmax`; 1 when left out (a step threshold `kmin = kmax` does not use it).
    #[serde(default = "one")]
    pub pmax: f64,
}

fn one() -> f64 {
    1.0
}

impl Default for EcnConfig {
    /// DCQCN's recommended curve (Zhu et al. 2015, section 5): Kmin = 5 KB, Kmax = 200 KB,
    /// Pmax = 1 %.
    fn default() -> Self {
        Self {
            priorities: Vec::new(),
            unit: EcnUnit::Bytes,
            kmin: 5 * 1024,
            kmax: 200 * 1024,
            pmax: 0.01,
            mark_on: MarkOn::Enqueue,
            lfsr_seed: 0xEC41,
            curves: Vec::new(),
        }
    }
}

impl EcnConfig {
    /// No queue marks.
    pub fn is_off(&self) -> bool {
        self.priorities.is_empty() && self.curves.is_empty()
    }
}

/// Largest `Kmin` / `Kmax`, in the marker's unit: the queue-length register is 27 bits.
pub const ECN_K_MAX: u32 = (1 << 27) - 1;
/// Fraction bits of `Pmax` and of the random draw the marker compares with.
pub const ECN_P_FRAC: u32 = 16;

/// The registers of one validated RED curve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EcnCurve {
    pub kmin: u32,
    pub kmax: u32,
    /// `Pmax` in UQ0.16 (`1..=65536`).
    pub pmax_q16: u32,
    /// `ceil((Kmax - Kmin) * 2^16 / Pmax_q16)`: the queue length above `Kmin` at which the
    /// RED line would reach probability 1 (0: step threshold). Written by the control plane,
    /// so the marker needs no divider (`crate::ecn_marker`).
    pub span: u64,
}

/// Validated ECN parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EcnParams {
    /// Bit `p`: the egress queues of priority `p` mark.
    pub mask: u8,
    pub unit: EcnUnit,
    /// The curves: `[switch.ecn]`'s first, then `[[switch.ecn.curves]]` in order.
    pub curves: Vec<EcnCurve>,
    /// Per priority, its index in `curves`.
    pub curve_of: [u8; QUEUES],
    pub mark_on: MarkOn,
    pub lfsr_seed: u32,
}

impl EcnParams {
    /// The curve the queues of priority `prio` mark on.
    pub fn curve(&self, prio: usize) -> &EcnCurve {
        &self.curves[self.curve_of[prio] as usize]
    }
}

/// `[switch.ecm]`: the congestion point of ECM section 3.2 at every egress queue of the
/// enabled priorities. Byte values are converted to the paper's 64-byte pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EcmConfig {
    /// Priorities (0..=7) whose egress queues are congestion points; empty = ECM off.
    pub priorities: Vec<u8>,
    /// `Qeq`, the equilibrium queue length, bytes (64..=16 MiB).
    pub qeq_bytes: u32,
    /// `Qmc`, mild congestion: above it a sample gives ECM-Max and sampling speeds up.
    pub qmc_bytes: u32,
    /// `Qsc`, severe congestion: above it a sample gives ECM(0,0).
    pub qsc_bytes: u32,
    /// `Sf`, fixed sampling interval, bytes (0..=262144).
    pub sf_bytes: u32,
    /// `Sr` range: the random interval is drawn in `0..=sr_bytes` (0..=65536).
    pub sr_bytes: u32,
    /// Draw the random interval as the pseudo-code does, `Sf + sr_bytes * (2u - 1)`
    /// (centred on `Sf`), instead of the text's `Sf + [0, sr_bytes]`.
    pub sr_centered: bool,
    /// `Sscale = 2^sscale_log2`: over-sampling divides `S` by it (0..=7).
    pub sscale_log2: u32,
    /// `Qscale = 2^qscale_log2` multiplies `Qoff` and `Qdelta` in the frame (0..=7).
    pub qscale_log2: u32,
    /// Set the Q bit when `Qdelta` saturates (the pseudo-code's `ECM_qsat_enable`).
    pub qsat_enable: bool,
    /// High bits of every CPID of this switch (CPID = switch_id << 9 | port << 3 | queue).
    pub switch_id: u16,
    /// Seed of the sampling LFSRs (each CP XORs its CPID in).
    pub lfsr_seed: u32,
}

impl Default for EcmConfig {
    fn default() -> Self {
        Self {
            priorities: Vec::new(),
            qeq_bytes: 16 * 1024,
            qmc_bytes: 32 * 1024,
            qsc_bytes: 96 * 1024,
            sf_bytes: 75_000,
            sr_bytes: 50_000,
            sr_centered: false,
            sscale_log2: 1,
            qscale_log2: 0,
            qsat_enable: true,
            switch_id: 1,
            lfsr_seed: 0xACE1,
        }
    }
}

/// ECM's unit of queue length: 64-byte pages.
pub const ECM_PAGE_BYTES: u32 = 64;

/// Validated ECM parameters (pages, bytes, shifts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EcmParams {
    /// Bit `p`: priority `p` has congestion points.
    pub mask: u8,
    pub qeq: u32,
    pub qmc: u32,
    pub qsc: u32,
    pub sf: u32,
    pub sr: u32,
    pub sr_centered: bool,
    pub sscale_log2: u32,
    pub qscale_log2: u32,
    pub qsat_enable: bool,
    pub switch_id: u16,
    pub lfsr_seed: u32,
}

/// Validate one RED curve whose keys are `{field}.kmin` etc.; precompute its span.
fn ecn_curve(field: &str, kmin: u32, kmax: u32, pmax: f64) -> Result<EcnCurve, ConfigError> {
    check_range(&format!("{field}.kmin"), kmin, 0, ECN_K_MAX)?;
    check_range(&format!("{field}.kmax"), kmax, kmin, ECN_K_MAX)?;
    let one = 1u32 << ECN_P_FRAC;
    let q = (pmax * one as f64).round();
    if !(pmax.is_finite() && (1.0..=one as f64).contains(&q)) {
        return Err(range_err(
            &format!("{field}.pmax"),
            pmax,
            "2^-16..=1 (stored with 16 fraction bits)",
        ));
    }
    let pmax_q16 = q as u32;
    let span = ((kmax - kmin) as u64) << ECN_P_FRAC;
    Ok(EcnCurve {
        kmin,
        kmax,
        pmax_q16,
        span: span.div_ceil(pmax_q16 as u64),
    })
}

/// The line rates of INT's 3-bit code (`crate::int_stamp`; ns3-datacenter's
/// `int-header.cc` line 5); codes 5 and 6 are unused. Here, not in `int_stamp`, because
/// validation reads it and the stamper reads the configuration.
pub const INT_LINE_RATES_BPS: [u64; 8] = [
    25_000_000_000,
    50_000_000_000,
    100_000_000_000,
    200_000_000_000,
    400_000_000_000,
    0,
    0,
    40_000_000_000,
];

/// The 3-bit INT code of line rate `bps`, if INT can carry it.
pub fn int_rate_code(bps: u64) -> Option<u8> {
    (bps != 0)
        .then(|| INT_LINE_RATES_BPS.iter().position(|&r| r == bps))
        .flatten()
        .map(|c| c as u8)
}

/// `switch.int`: every port's rate must have a code in INT's 3-bit line-rate field.
fn int_rates(rate_bps: &[u64]) -> Result<(), ConfigError> {
    match rate_bps.iter().position(|&r| int_rate_code(r).is_none()) {
        None => Ok(()),
        Some(p) => {
            let mut rates: Vec<u64> = INT_LINE_RATES_BPS.into_iter().filter(|&r| r != 0).collect();
            rates.sort_unstable();
            let allowed: Vec<String> = rates
                .iter()
                .map(|r| (r / 1_000_000_000).to_string())
                .collect();
            Err(ConfigError::new(
                "switch.int",
                format!(
                    "port {p} runs at {} Gb/s, which INT's 3-bit line-rate field cannot carry; allowed: ports at {} Gb/s",
                    rate_bps[p] as f64 / 1e9,
                    allowed.join(", ")
                ),
            ))
        }
    }
}

/// Validate `[switch.ecn]` and its `[[switch.ecn.curves]]`: each priority on one curve.
fn ecn_params(e: &EcnConfig) -> Result<EcnParams, ConfigError> {
    let top = (
        "switch.ecn".to_string(),
        &e.priorities,
        e.kmin,
        e.kmax,
        e.pmax,
    );
    let all = std::iter::once(top).chain(e.curves.iter().enumerate().map(|(i, c)| {
        let field = format!("switch.ecn.curves[{i}]");
        (field, &c.priorities, c.kmin, c.kmax, c.pmax)
    }));
    let (mut mask, mut curve_of, mut curves) = (0u8, [0u8; QUEUES], Vec::new());
    for (field, prios, kmin, kmax, pmax) in all {
        if !curves.is_empty() && prios.is_empty() {
            return Err(ConfigError::new(
                format!("{field}.priorities"),
                "empty; allowed: one or more of 0..=7",
            ));
        }
        for &p in prios {
            check_range(&format!("{field}.priorities"), p, 0, 7)?;
            if mask & (1 << p) != 0 {
                return Err(ConfigError::new(
                    format!("{field}.priorities"),
                    format!("priority {p} marks on another curve already; allowed: one curve per priority"),
                ));
            }
            mask |= 1 << p;
            curve_of[p as usize] = curves.len() as u8;
        }
        curves.push(ecn_curve(&field, kmin, kmax, pmax)?);
    }
    Ok(EcnParams {
        mask,
        unit: e.unit,
        curves,
        curve_of,
        mark_on: e.mark_on,
        lfsr_seed: e.lfsr_seed,
    })
}

/// What HCF counts in credits and sub-queue limits (HCF III-B step 3: per packet, or by
/// length for variable-size packets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HcfUnit {
    Packet,
    Cell,
}

/// One `[[switch.hcf]]` entry: egress queue `queue` of `ports` runs HCF (HCF section III,
/// options of section IV).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HcfConfig {
    /// Egress ports whose queue `queue` is HCF; empty = every port.
    pub ports: Vec<usize>,
    /// The egress queue (0..=7); its priority must be lossy (HCF drops when full).
    pub queue: u8,
    /// `K`, credit bins (1..=64).
    pub bins: u32,
    /// `c0`, credits each bin gets at a period start (1..=255).
    pub c0: u32,
    /// `B`, the queue's buffer in `unit`s, split between HP and LP.
    pub buffer: u32,
    /// HP sub-queue limit in `unit`s; unset = `buffer / 2`. LP gets `buffer - hp_limit`.
    pub hp_limit: Option<u32>,
    /// Unit of credits and limits.
    pub unit: HcfUnit,
    /// Unset: dynamic priority period (III-B). Set: fixed period of this many cycles (IV-C).
    pub period_cycles: Option<u64>,
    /// `s`, hash functions per packet: 1 = HCF, 2..=4 = the Bloom-counter variant (IV-A).
    pub hashes: u32,
    /// Algorithm 1's "if p joins LP, c(k) <- 0" (footnote 1). `false` is the conference
    /// version, which lacks the rule: a later packet of a flow can then overtake an
    /// earlier one through HP, so Theorem 1 (no reordering) no longer holds. Left out of
    /// the configuration's hash while `true`.
    #[serde(skip_serializing_if = "is_true")]
    pub zero_on_lp_join: bool,
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Default for HcfConfig {
    /// The paper's long-flow baseline (V-B): K = 20, c0 = 1, B = 20 packets split 10/10.
    fn default() -> Self {
        Self {
            ports: Vec::new(),
            queue: 0,
            bins: 20,
            c0: 1,
            buffer: 20,
            hp_limit: None,
            unit: HcfUnit::Packet,
            period_cycles: None,
            hashes: 1,
            zero_on_lp_join: true,
        }
    }
}

/// Most hash functions of the Bloom-counter variant.
pub const HCF_MAX_HASHES: usize = 4;

/// A validated HCF queue, one per (port, queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HcfParams {
    pub port: u8,
    pub queue: u8,
    pub bins: u32,
    pub c0: u32,
    /// Bits per credit register: `ceil(log2(c0 + 1))` (HCF III-C).
    pub credit_bits: u32,
    pub hp_limit: u32,
    pub lp_limit: u32,
    pub unit: HcfUnit,
    pub period_cycles: Option<u64>,
    pub hashes: u32,
    pub zero_on_lp_join: bool,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        Self::tomahawk()
    }
}

/// Built-in switch profiles.
pub const PROFILES: &[&str] = &["tomahawk", "small"];

impl SwitchConfig {
    /// The DSH microbenchmark switch (section V-A): 32 x 100G, 16 MiB in 208 B cells,
    /// 8 queues of which 7 lossless DWRR + 1 control, link delay 2 us (Eq. 1: eta = 56840 B
    /// with MTU 1500), alpha = 1/16, 3 KB private per queue, DWRR quantum 1600 B. The
    /// headroom is sized in cells for MTU packets only (307 cells): SIH reserves 32 x 7 eta,
    /// and smaller packets would leave no shared buffer.
    pub fn tomahawk() -> Self {
        Self {
            ports: 32,
            port_speed_gbps: 100.0,
            port_speeds_gbps: Vec::new(),
            core_clock_mhz: 1000,
            cell_bytes: 208,
            packet_overhead_bytes: 0,
            wire_overhead_bytes: 20,
            buffer_bytes: 16 * 1024 * 1024,
            sram_write_cells_per_cycle: 32,
            sram_read_cells_per_cycle: 32,
            sram_read_latency: 1,
            lossless_priorities: (0..7).collect(),
            control_queue: 7,
            policy: Policy::Sih,
            alpha_log2: -4,
            private_bytes: 3072,
            mtu_bytes: 1500,
            link_delay_ns: 2000,
            eta_bytes: None,
            headroom: HeadroomMode::Cells,
            headroom_min_packet_bytes: None,
            delta_bytes: 3000,
            delta_port_bytes: 3000,
            lossy_pool_bytes: 1024 * 1024,
            lossy_alpha_log2: -1,
            lossy_private_bytes: 0,
            hybrid_ingress_pool: false,
            egress_alpha_log2: 0,
            l2bm_mu: L2bmMu::LineRate,
            dwrr_quantum_bytes: 1600,
            pfc_rx_mode: PfcRxMode::Timer,
            pfc_pause_quanta: 0xFFFF,
            hcf: Vec::new(),
            ecm: EcmConfig::default(),
            ecn: EcnConfig::default(),
            int: false,
        }
    }

    /// A small switch for fast tests: 8 x 100G, 2 MiB, short links (Eq. 1: eta = 11840 B),
    /// headroom sized in cells for lossless packets of 128 B up to the MTU (111 cells).
    pub fn small() -> Self {
        Self {
            ports: 8,
            headroom_min_packet_bytes: Some(128),
            buffer_bytes: 2 * 1024 * 1024,
            sram_write_cells_per_cycle: 8,
            sram_read_cells_per_cycle: 8,
            link_delay_ns: 200,
            lossy_pool_bytes: 128 * 1024,
            alpha_log2: -1,
            ..Self::tomahawk()
        }
    }

    pub fn profile(name: &str) -> Result<Self, ConfigError> {
        match name {
            "tomahawk" => Ok(Self::tomahawk()),
            "small" => Ok(Self::small()),
            other => Err(ConfigError::new(
                "profile",
                format!(
                    "unknown profile {other:?}; allowed: {}",
                    PROFILES.join(", ")
                ),
            )),
        }
    }

    /// Line rate of `port`, Gb/s.
    pub fn speed_gbps(&self, port: usize) -> f64 {
        self.port_speeds_gbps
            .get(port)
            .copied()
            .unwrap_or(self.port_speed_gbps)
    }

    /// DSH Eq. 1: `eta = 2 (C * D_prop + L_MTU) + 3840 B` for the upstream link of `port`.
    pub fn eta_eq1_bytes(&self, port: usize) -> u64 {
        self.eq1_bytes(port, self.link_delay_ns as u64, EQ1_PFC_BYTES)
    }

    /// Eq. 1 for a link into `port` of `prop_ns` one-way delay whose PFC frame and
    /// reaction take `pfc_bytes` of wire time (3840 B in the paper): `2 (C * D_prop +
    /// L_MTU) + pfc_bytes`, `C * D_prop` rounded up to whole bytes.
    pub fn eq1_bytes(&self, port: usize, prop_ns: u64, pfc_bytes: u64) -> u64 {
        let c_bytes_per_ns = self.speed_gbps(port) / 8.0;
        let in_flight = (c_bytes_per_ns * prop_ns as f64).ceil() as u64;
        2 * (in_flight + self.mtu_bytes as u64) + pfc_bytes
    }

    /// Validate and derive the hardware parameters.
    pub fn build(&self) -> Result<Derived, ConfigError> {
        Derived::new(self)
    }
}

/// What a packet of `len` bytes costs: `cells` of buffer (with `packet_overhead_bytes`) and
/// `wire` bytes of link time (with `wire_overhead_bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketCost {
    pub len: u32,
    pub cells: u32,
    pub wire: u32,
}

/// `8 cells per 1520 wire bytes`.
impl std::fmt::Display for PacketCost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = if self.cells == 1 { "" } else { "s" };
        write!(f, "{} cell{s} per {} wire bytes", self.cells, self.wire)
    }
}

impl PacketCost {
    /// `self` fills more cells per wire byte than `other` (exact: cross-multiplied).
    pub fn denser_than(&self, other: &Self) -> bool {
        self.cells as u64 * other.wire as u64 > other.cells as u64 * self.wire as u64
    }
}

/// How the headroom `eta` of one port was derived (`mmu-sim validate` prints it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EtaSizing {
    /// `W`: the wire bytes the headroom absorbs, Eq. 1 for the port's link or `eta_bytes`.
    pub wire_bytes: u64,
    /// Cells mode: the packet of the range with the most cells per wire byte. Paper-bytes
    /// mode: a packet of one cell per `cell_bytes` of wire (`len` = `cell_bytes`), the density
    /// the paper's rounding assumes.
    pub densest: PacketCost,
    /// The largest packet of the range (`mtu_bytes`).
    pub largest: PacketCost,
    /// `eta`, cells.
    pub cells: u32,
}

/// `eta` in cells for `W` = `wire_bytes` of in-flight traffic whose packets are at most
/// `densest.cells / densest.wire` cells per wire byte and at most `largest_cells` cells
/// each: `floor(W * densest.cells / densest.wire) + largest_cells`.
///
/// **Claim.** Take packets with sizes in a range, sent in any order and mixture, back to
/// back or with gaps. The packets whose first byte reaches the port within a span of `W`
/// wire bytes occupy at most this many cells.
///
/// **Proof.** Let `p_1 .. p_n` be those packets in arrival order. The first bytes of `p_1`
/// and `p_n` are at most `W` apart and `p_1 .. p_(n-1)` lie whole between them, so
/// `sum_(i<n) wire(p_i) <= W`. Each of them has `cells(p_i) <= rho * wire(p_i)` with
/// `rho = densest.cells / densest.wire`, so `sum_(i<n) cells(p_i) <= rho * W`, and the sum
/// is an integer, so at most `floor(rho * W)`. `p_n` adds at most `largest_cells`. The bound
/// is within `densest.cells` of the worst case: `floor(W / densest.wire)` densest packets
/// back to back and a largest one after them start within `W` and occupy
/// `floor(W / densest.wire) * densest.cells + largest_cells > rho * W - densest.cells +
/// largest_cells` cells.
///
/// **Why this span is Eq. 1.** The switch charges a packet's cells at its first cell, and a
/// queue turns QOFF when a packet goes to headroom: that packet `p_1` (partly arrived when
/// admitted) is the first in headroom. From its first cell, Eq. 1 counts `C * D_prop` until
/// the PAUSE reaches the upstream, 3840 B for the frame and the upstream's reaction, one MTU
/// for the frame waiting behind an egress packet, and `C * D_prop` for the bytes still on
/// the link; the last packet `p_n` the upstream starts before it stops is the partial packet
/// at the far end, and its first byte arrives within that span. The first cell of `p_1`
/// comes at most one MTU after its first byte (`min(len, cell_bytes - packet_overhead_bytes)`
/// bytes), which the second MTU of Eq. 1 covers (the paper spends it on the upstream
/// finishing `p_n`, which starts within the span and needs no room in it). So the first
/// bytes of all packets charged to headroom lie within `W` = Eq. 1 bytes. With an explicit
/// `eta_bytes`, `W` is that value, and the links must fit it (the testbench checks them).
pub fn eta_cells_for(wire_bytes: u64, densest: PacketCost, largest_cells: u32) -> u64 {
    (wire_bytes as u128 * densest.cells as u128 / densest.wire as u128) as u64
        + largest_cells as u64
}

/// Hardware parameters derived from a validated [`SwitchConfig`]: everything in cells and
/// cycles, every value checked against its register width.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub cfg: SwitchConfig,
    pub ports: usize,
    pub clock_hz: u64,
    /// Line rate per port, bits per second.
    pub rate_bps: Vec<u64>,
    pub total_cells: u32,
    /// Bit `p` set: priority `p` is lossless.
    pub lossless_mask: u8,
    pub lossless_queues_per_port: u32,
    /// `phi`, cells.
    pub private_cells: u32,
    /// `eta` per ingress port, cells (all lossless queues of a port share the value).
    pub eta_cells: Vec<u32>,
    /// How each port's `eta_cells` was derived.
    pub eta_sizing: Vec<EtaSizing>,
    /// `delta` (`delta_q`), cells.
    pub delta_cells: u32,
    /// `delta_p`, cells.
    pub delta_port_cells: u32,
    /// `B_s`: lossless shared segment, cells.
    pub shared_cells: u32,
    /// Total headroom, cells: SIH `N_p * N_q * eta` (Eq. 3), DSH insurance `N_p * eta`
    /// (Eq. 4), with `eta` per port.
    pub headroom_cells: u32,
    pub lossy_pool_cells: u32,
    pub lossy_private_cells: u32,
    /// Lossy shared segment, cells.
    pub lossy_shared_cells: u32,
    /// L2BM, per port: the core cycles one cell takes at the port's line rate,
    /// `cell_bits * f_clk / rate`, in UQ16.16 (rounded to nearest): the `1 / mu` of
    /// Algorithm 1's `Q_out / mu`.
    pub cycles_per_cell_q16: Vec<u32>,
    /// HCF queues, sorted by (port, queue).
    pub hcf: Vec<HcfParams>,
    /// ECM congestion points (`mask == 0`: none).
    pub ecm: EcmParams,
    /// ECN markers (`mask == 0`: none).
    pub ecn: EcnParams,
}

fn range_err<T: std::fmt::Display>(field: &str, v: T, range: &str) -> ConfigError {
    ConfigError::new(field, format!("{v} is out of range; allowed: {range}"))
}

/// `Ok` when `lo <= v <= hi`, else the error naming `field` and the range `lo..=hi`.
fn check_range<T: PartialOrd + Copy + std::fmt::Display>(
    field: &str,
    v: T,
    lo: T,
    hi: T,
) -> Result<(), ConfigError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(range_err(field, v, &format!("{lo}..={hi}")))
    }
}

/// Validate `[switch.ecm]` and convert its thresholds to 64-byte pages.
fn ecm_params(e: &EcmConfig) -> Result<EcmParams, ConfigError> {
    let mut mask = 0u8;
    for &p in &e.priorities {
        check_range("switch.ecm.priorities", p, 0, 7)?;
        mask |= 1 << p;
    }
    let max_q = 16 * 1024 * 1024;
    check_range("switch.ecm.qeq_bytes", e.qeq_bytes, ECM_PAGE_BYTES, max_q)?;
    if !(e.qeq_bytes..=max_q).contains(&e.qmc_bytes) {
        return Err(range_err(
            "switch.ecm.qmc_bytes",
            e.qmc_bytes,
            &format!("{}..=16777216 (at least qeq_bytes)", e.qeq_bytes),
        ));
    }
    if !(e.qmc_bytes..=max_q).contains(&e.qsc_bytes) {
        return Err(range_err(
            "switch.ecm.qsc_bytes",
            e.qsc_bytes,
            &format!("{}..=16777216 (at least qmc_bytes)", e.qmc_bytes),
        ));
    }
    check_range("switch.ecm.sf_bytes", e.sf_bytes, 0, 262_144)?;
    check_range("switch.ecm.sr_bytes", e.sr_bytes, 0, 65_536)?;
    if e.sr_centered && e.sr_bytes > e.sf_bytes {
        return Err(range_err(
            "switch.ecm.sr_bytes",
            e.sr_bytes,
            &format!(
                "0..={} (sf_bytes: a centred interval must stay >= 0)",
                e.sf_bytes
            ),
        ));
    }
    for (field, v) in [
        ("switch.ecm.sscale_log2", e.sscale_log2),
        ("switch.ecm.qscale_log2", e.qscale_log2),
    ] {
        check_range(field, v, 0, 7)?;
    }
    if e.switch_id >= 1 << 7 {
        return Err(range_err("switch.ecm.switch_id", e.switch_id, "0..=127"));
    }
    let pages = |b: u32| b / ECM_PAGE_BYTES;
    Ok(EcmParams {
        mask,
        qeq: pages(e.qeq_bytes),
        qmc: pages(e.qmc_bytes),
        qsc: pages(e.qsc_bytes),
        sf: e.sf_bytes,
        sr: e.sr_bytes,
        sr_centered: e.sr_centered,
        sscale_log2: e.sscale_log2,
        qscale_log2: e.qscale_log2,
        qsat_enable: e.qsat_enable,
        switch_id: e.switch_id,
        lfsr_seed: e.lfsr_seed,
    })
}

/// Validate the `[[switch.hcf]]` entries and expand them to one per (port, queue).
fn hcf_params(
    c: &SwitchConfig,
    lossless_mask: u8,
    mtu_cells: u32,
) -> Result<Vec<HcfParams>, ConfigError> {
    let mut out: Vec<HcfParams> = Vec::new();
    for (i, h) in c.hcf.iter().enumerate() {
        let f = |name: &str| format!("switch.hcf[{i}].{name}");
        check_range(&f("queue"), h.queue, 0, 7)?;
        if lossless_mask & (1 << h.queue) != 0 {
            return Err(ConfigError::new(
                f("queue"),
                format!(
                    "priority {} is lossless; HCF drops when both sub-queues are full, which a lossless class must never do; allowed: a priority not in switch.lossless_priorities",
                    h.queue
                ),
            ));
        }
        check_range(&f("bins"), h.bins, 1, 64)?;
        check_range(&f("c0"), h.c0, 1, 255)?;
        check_range(&f("hashes"), h.hashes, 1, HCF_MAX_HASHES as u32)?;
        if h.hashes > h.bins {
            return Err(range_err(
                &f("hashes"),
                h.hashes,
                &format!("1..={} (bins)", h.bins),
            ));
        }
        // Each sub-queue must hold the largest packet, or HP (or LP) could never accept it.
        let least = match h.unit {
            HcfUnit::Packet => 1,
            HcfUnit::Cell => mtu_cells,
        };
        let max = MAX_CELLS;
        if !(2 * least..=max).contains(&h.buffer) {
            return Err(range_err(
                &f("buffer"),
                h.buffer,
                &format!("{}..={max}", 2 * least),
            ));
        }
        let hp = h.hp_limit.unwrap_or(h.buffer / 2);
        if !(least..=h.buffer - least).contains(&hp) {
            return Err(range_err(
                &f("hp_limit"),
                hp,
                &format!(
                    "{least}..={} (both sub-queues must hold one MTU packet)",
                    h.buffer - least
                ),
            ));
        }
        if let Some(t) = h.period_cycles {
            if !(1..=u32::MAX as u64).contains(&t) {
                return Err(range_err(&f("period_cycles"), t, "1..=4294967295"));
            }
        }
        let ports: Vec<usize> = if h.ports.is_empty() {
            (0..c.ports).collect()
        } else {
            h.ports.clone()
        };
        for p in ports {
            if p >= c.ports {
                return Err(range_err(&f("ports"), p, &format!("0..{}", c.ports)));
            }
            if out
                .iter()
                .any(|o| o.port as usize == p && o.queue == h.queue)
            {
                return Err(ConfigError::new(
                    f("ports"),
                    format!(
                        "port {p} queue {} is already HCF in an earlier entry",
                        h.queue
                    ),
                ));
            }
            out.push(HcfParams {
                port: p as u8,
                queue: h.queue,
                bins: h.bins,
                c0: h.c0,
                credit_bits: 32 - h.c0.leading_zeros(),
                hp_limit: hp,
                lp_limit: h.buffer - hp,
                unit: h.unit,
                period_cycles: h.period_cycles,
                hashes: h.hashes,
                zero_on_lp_join: h.zero_on_lp_join,
            });
        }
    }
    out.sort_by_key(|h| (h.port, h.queue));
    Ok(out)
}

/// What a packet of `len` bytes costs on a switch configured as `c`.
fn packet_cost(c: &SwitchConfig, len: u32) -> PacketCost {
    PacketCost {
        len,
        cells: (len + c.packet_overhead_bytes).div_ceil(c.cell_bytes),
        wire: len + c.wire_overhead_bytes,
    }
}

/// The packet of `sizes` with the most cells per wire byte (the smallest such size on a
/// tie); `None` for an empty range.
fn densest_packet(c: &SwitchConfig, sizes: std::ops::RangeInclusive<u32>) -> Option<PacketCost> {
    sizes
        .map(|l| packet_cost(c, l))
        .reduce(|best, p| if p.denser_than(&best) { p } else { best })
}

/// `eta` of every port, cells, and how it was derived (`headroom`, `eta_bytes` or Eq. 1,
/// [`eta_cells_for`]). The packet range is checked only when some priority is lossless.
fn eta_per_port(
    c: &SwitchConfig,
    lossless: bool,
) -> Result<(Vec<EtaSizing>, Vec<u32>), ConfigError> {
    let min_len = c.headroom_min_packet_bytes.unwrap_or(c.mtu_bytes);
    if lossless {
        check_range("switch.headroom_min_packet_bytes", min_len, 64, c.mtu_bytes)
            .map_err(|e| ConfigError::new(e.field, format!("{} (mtu_bytes)", e.message)))?;
    }
    let largest = packet_cost(c, c.mtu_bytes);
    let densest = match c.headroom {
        HeadroomMode::Cells => {
            densest_packet(c, min_len.clamp(64, c.mtu_bytes)..=c.mtu_bytes).unwrap_or(largest)
        }
        HeadroomMode::PaperBytes => PacketCost {
            len: c.cell_bytes,
            cells: 1,
            wire: c.cell_bytes,
        },
    };
    let sizing: Vec<EtaSizing> = (0..c.ports)
        .map(|p| {
            let wire_bytes = c.eta_bytes.map_or_else(|| c.eta_eq1_bytes(p), u64::from);
            let cells = match c.headroom {
                HeadroomMode::Cells => eta_cells_for(wire_bytes, densest, largest.cells),
                HeadroomMode::PaperBytes => wire_bytes.div_ceil(c.cell_bytes as u64),
            };
            EtaSizing {
                wire_bytes,
                densest,
                largest,
                cells: cells.min(u32::MAX as u64) as u32,
            }
        })
        .collect();
    let cells = sizing.iter().map(|s| s.cells).collect();
    Ok((sizing, cells))
}

impl Derived {
    fn new(c: &SwitchConfig) -> Result<Self, ConfigError> {
        check_range("switch.ports", c.ports, 1, MAX_PORTS)?;
        check_range("switch.core_clock_mhz", c.core_clock_mhz, 1, 10_000)?;
        check_range("switch.cell_bytes", c.cell_bytes, 32, 4096)?;
        check_range(
            "switch.packet_overhead_bytes",
            c.packet_overhead_bytes,
            0,
            256,
        )?;
        check_range("switch.wire_overhead_bytes", c.wire_overhead_bytes, 0, 64)?;
        check_range("switch.mtu_bytes", c.mtu_bytes, 64, 9216)?;
        if !c.port_speeds_gbps.is_empty() && c.port_speeds_gbps.len() != c.ports {
            return Err(ConfigError::new(
                "switch.port_speeds_gbps",
                format!(
                    "has {} entries; it must be empty or list one speed per port ({})",
                    c.port_speeds_gbps.len(),
                    c.ports
                ),
            ));
        }
        let clock_hz = c.core_clock_mhz as u64 * 1_000_000;
        // The most cells a line can deliver per byte on the wire, over every packet size
        // it may carry (64 B to the MTU): small packets and packets one byte past a cell
        // boundary fill cells that their bit rate alone would not. The SRAM ports and the
        // one-cell-per-cycle port limit are sized for this worst case.
        let worst_cells_per_wire_byte = (64..=c.mtu_bytes)
            .map(|l| {
                (l + c.packet_overhead_bytes).div_ceil(c.cell_bytes) as f64
                    / (l + c.wire_overhead_bytes) as f64
            })
            .fold(0.0, f64::max);
        let cells_per_cycle =
            |bps: u64| bps as f64 / 8.0 * worst_cells_per_wire_byte / clock_hz as f64;
        let mut rate_bps = Vec::with_capacity(c.ports);
        for p in 0..c.ports {
            let g = c.speed_gbps(p);
            let field = if c.port_speeds_gbps.is_empty() {
                "switch.port_speed_gbps".to_string()
            } else {
                format!("switch.port_speeds_gbps[{p}]")
            };
            if !(g.is_finite() && (0.001..=1600.0).contains(&g)) {
                return Err(range_err(&field, g, "0.001..=1600 Gb/s"));
            }
            let bps = (g * 1e9).round() as u64;
            // One cell per cycle per port at most: the link partner delivers one beat per
            // cycle, the egress link walk reads one next pointer per cell and the RAMs have
            // one access per port per cycle.
            if cells_per_cycle(bps) > 1.0 {
                return Err(ConfigError::new(
                    field,
                    format!(
                        "{g} Gb/s can deliver {:.4} cells of {} B per {} MHz cycle (worst packet size between 64 B and mtu_bytes); allowed: at most 1; raise switch.core_clock_mhz or switch.cell_bytes",
                        cells_per_cycle(bps), c.cell_bytes, c.core_clock_mhz
                    ),
                ));
            }
            rate_bps.push(bps);
        }
        let total_cells_u64 = c.buffer_bytes / c.cell_bytes as u64;
        if total_cells_u64 == 0 || total_cells_u64 > MAX_CELLS as u64 {
            return Err(ConfigError::new(
                "switch.buffer_bytes",
                format!(
                    "{} bytes is {} cells of {} B; allowed: 1..={} cells ({}-bit cell pointers)",
                    c.buffer_bytes, total_cells_u64, c.cell_bytes, MAX_CELLS, PTR_BITS
                ),
            ));
        }
        let total_cells = total_cells_u64 as u32;
        let ports_u32 = c.ports as u32;
        for (field, v) in [
            (
                "switch.sram_write_cells_per_cycle",
                c.sram_write_cells_per_cycle,
            ),
            (
                "switch.sram_read_cells_per_cycle",
                c.sram_read_cells_per_cycle,
            ),
        ] {
            if !(1..=ports_u32).contains(&v) {
                return Err(range_err(field, v, &format!("1..={} (ports)", c.ports)));
            }
        }
        // The write and read stages must keep up with every port at line rate, else cells
        // would pile up without bound in front of the SRAM.
        let agg_cells_per_cycle: f64 = rate_bps.iter().map(|&r| cells_per_cycle(r)).sum();
        for (field, v) in [
            (
                "switch.sram_write_cells_per_cycle",
                c.sram_write_cells_per_cycle,
            ),
            (
                "switch.sram_read_cells_per_cycle",
                c.sram_read_cells_per_cycle,
            ),
        ] {
            if (v as f64) < agg_cells_per_cycle {
                return Err(ConfigError::new(
                    field,
                    format!(
                        "{v} cells/cycle is below the aggregate line rate of {agg_cells_per_cycle:.3} cells/cycle (worst packet size between 64 B and mtu_bytes); allowed: {}..={}",
                        agg_cells_per_cycle.ceil(),
                        c.ports
                    ),
                ));
            }
        }
        check_range("switch.sram_read_latency", c.sram_read_latency, 1, 8)?;
        let mut lossless_mask = 0u8;
        for &p in &c.lossless_priorities {
            if p > 7 {
                return Err(range_err(
                    "switch.lossless_priorities",
                    p,
                    "priorities 0..=7",
                ));
            }
            lossless_mask |= 1 << p;
        }
        check_range("switch.control_queue", c.control_queue, 0, 7)?;
        for (field, k) in [
            ("switch.alpha_log2", c.alpha_log2),
            ("switch.lossy_alpha_log2", c.lossy_alpha_log2),
            ("switch.egress_alpha_log2", c.egress_alpha_log2),
        ] {
            if let Err(e) = Shifter::new(CNT_BITS, k) {
                return Err(ConfigError::new(field, e.to_string()));
            }
        }
        check_range("switch.dwrr_quantum_bytes", c.dwrr_quantum_bytes, 64, 65535)?;
        check_range("switch.link_delay_ns", c.link_delay_ns, 0, 1_000_000)?;
        let cells = |b: u64| b.div_ceil(c.cell_bytes as u64);
        let lossless_queues_per_port = lossless_mask.count_ones();
        let private_cells = cells(c.private_bytes as u64) as u32;
        let delta_cells = cells(c.delta_bytes as u64) as u32;
        let delta_port_cells = cells(c.delta_port_bytes as u64) as u32;
        let (eta_sizing, eta_cells) = eta_per_port(c, lossless_mask != 0)?;
        // eta must hold at least one packet: a queue pauses when a packet goes to headroom,
        // so a headroom smaller than a packet would drop without ever pausing.
        let mtu_cells = (c.mtu_bytes + c.packet_overhead_bytes).div_ceil(c.cell_bytes);
        if lossless_mask != 0 {
            if let Some(p) = (0..c.ports).find(|&p| eta_cells[p] < mtu_cells) {
                return Err(ConfigError::new(
                    if c.eta_bytes.is_some() { "switch.eta_bytes" } else { "switch.link_delay_ns" },
                    format!(
                        "eta of port {p} is {} cells, less than one MTU packet ({mtu_cells} cells); allowed: at least {} bytes",
                        eta_cells[p],
                        mtu_cells * c.cell_bytes
                    ),
                ));
            }
        }
        // A paused upstream is re-paused every half pause time (pfc_fsm.rs): the half
        // must outlast the wait for the packet on the wire (one MTU) plus the PFC frame,
        // with the same again as margin, or the upstream resumes between refreshes.
        let min_quanta =
            (4 * (c.mtu_bytes + c.wire_overhead_bytes + PFC_FRAME_WIRE_BYTES) as u64 * 8)
                .div_ceil(PFC_QUANTUM_BITS);
        if (c.pfc_pause_quanta as u64) < min_quanta {
            return Err(range_err(
                "switch.pfc_pause_quanta",
                c.pfc_pause_quanta,
                &format!("{min_quanta}..=65535 (the refresh at half the pause time must outlast an MTU packet and the frame)"),
            ));
        }
        let lossy_pool_cells = cells(c.lossy_pool_bytes);
        let lossy_queues_per_port = 8 - lossless_queues_per_port;
        let lossy_private_cells = cells(c.lossy_private_bytes as u64) as u32;
        // SIH reserves eta per lossless ingress queue (Eq. 3); DSH reserves it once per
        // port as insurance (Eq. 4).
        let eta_per_port = match c.policy {
            Policy::Sih | Policy::L2bm => lossless_queues_per_port as u64,
            Policy::Dsh => (lossless_queues_per_port > 0) as u64,
        };
        let headroom_cells: u64 = eta_cells.iter().map(|&e| e as u64 * eta_per_port).sum();
        let private_total = private_cells as u64 * lossless_queues_per_port as u64 * c.ports as u64;
        let lossy_private_total =
            lossy_private_cells as u64 * lossy_queues_per_port as u64 * c.ports as u64;
        if lossy_pool_cells > total_cells as u64 {
            return Err(ConfigError::new(
                "switch.lossy_pool_bytes",
                // Both sides in cells: the pool rounds up, the buffer down, so equal byte
                // counts that are not whole cells do not fit.
                format!(
                    "{} bytes is {lossy_pool_cells} cells of {} bytes, more than the buffer's {total_cells} cells (switch.buffer_bytes = {}); allowed: at most {} bytes",
                    c.lossy_pool_bytes,
                    c.cell_bytes,
                    c.buffer_bytes,
                    total_cells as u64 * c.cell_bytes as u64
                ),
            ));
        }
        if lossy_queues_per_port > 0 && lossy_private_total >= lossy_pool_cells {
            return Err(ConfigError::new(
                "switch.lossy_pool_bytes",
                format!(
                    "the lossy pool ({lossy_pool_cells} cells) must be larger than its private buffers ({lossy_private_total} cells)"
                ),
            ));
        }
        let lossless_total = total_cells as u64 - lossy_pool_cells;
        let reserved = private_total + headroom_cells;
        if lossless_queues_per_port > 0 && reserved >= lossless_total {
            return Err(ConfigError::new(
                "switch.buffer_bytes",
                format!(
                    "the lossless pool ({lossless_total} cells) must be larger than private ({private_total}) + headroom ({headroom_cells}) cells; shrink eta_bytes, link_delay_ns, private_bytes, lossy_pool_bytes or the lossless priorities, or raise headroom_min_packet_bytes"
                ),
            ));
        }
        let shared_cells = (lossless_total - reserved) as u32;
        // X_on = T - delta must be reachable: with delta >= the largest T (empty buffer),
        // X_on is 0 for ever and a queue that goes OFF never turns ON again.
        let t_max = if c.alpha_log2 >= 0 {
            (shared_cells as u64) << c.alpha_log2
        } else {
            (shared_cells as u64) >> -c.alpha_log2
        };
        // DSH pauses a queue at T - eta (Eq. 5), so its resume point is T - eta - delta_q.
        let eta_max = eta_cells.iter().copied().max().unwrap_or(0) as u64;
        // L2BM's per-queue threshold is at least T (its weight is clamped at 1 or more).
        let (off_margin, what) = match c.policy {
            Policy::Sih | Policy::L2bm => (0, "alpha * B_s"),
            Policy::Dsh => (eta_max, "alpha * B_s - eta"),
        };
        if lossless_queues_per_port > 0 && delta_cells as u64 + off_margin >= t_max {
            return Err(ConfigError::new(
                "switch.delta_bytes",
                format!(
                    "{} bytes ({delta_cells} cells) must be below the largest X_off = {what} = {} cells, or an OFF queue could never resume",
                    c.delta_bytes,
                    t_max.saturating_sub(off_margin)
                ),
            ));
        }
        let xpoff_max = t_max * lossless_queues_per_port as u64;
        if c.policy == Policy::Dsh
            && lossless_queues_per_port > 0
            && delta_port_cells as u64 >= xpoff_max
        {
            return Err(ConfigError::new(
                "switch.delta_port_bytes",
                format!(
                    "{} bytes ({delta_port_cells} cells) must be below the largest X_poff = N_q * alpha * B_s = {xpoff_max} cells, or an OFF port could never resume",
                    c.delta_port_bytes
                ),
            ));
        }
        // 1 / mu of L2BM Algorithm 1 per port, UQ16.16 cycles per cell.
        let mut cycles_per_cell_q16 = Vec::with_capacity(c.ports);
        for (p, &bps) in rate_bps.iter().enumerate() {
            let num = (c.cell_bytes as u128 * 8 * clock_hz as u128) << 16;
            let k = (num + bps as u128 / 2) / bps as u128;
            if c.policy == Policy::L2bm && k > u32::MAX as u128 {
                return Err(ConfigError::new(
                    if c.port_speeds_gbps.is_empty() {
                        "switch.port_speed_gbps".to_string()
                    } else {
                        format!("switch.port_speeds_gbps[{p}]")
                    },
                    format!(
                        "a {} B cell takes {:.1} cycles at {} Gb/s; L2BM's rate register holds less than 65536 cycles per cell; allowed: at least {:.4} Gb/s",
                        c.cell_bytes,
                        k as f64 / 65536.0,
                        bps as f64 / 1e9,
                        (c.cell_bytes as f64 * 8.0 * clock_hz as f64 / 65535.0) / 1e9
                    ),
                ));
            }
            cycles_per_cell_q16.push(k.min(u32::MAX as u128) as u32);
        }
        let hcf = hcf_params(c, lossless_mask, mtu_cells)?;
        let ecm = ecm_params(&c.ecm)?;
        let ecn = ecn_params(&c.ecn)?;
        if c.int {
            int_rates(&rate_bps)?;
        }
        Ok(Self {
            cfg: c.clone(),
            ports: c.ports,
            clock_hz,
            rate_bps,
            total_cells,
            lossless_mask,
            lossless_queues_per_port,
            private_cells,
            eta_cells,
            eta_sizing,
            delta_cells,
            delta_port_cells,
            shared_cells,
            headroom_cells: headroom_cells as u32,
            lossy_pool_cells: lossy_pool_cells as u32,
            lossy_private_cells,
            lossy_shared_cells: (lossy_pool_cells - lossy_private_total) as u32,
            cycles_per_cell_q16,
            hcf,
            ecm,
            ecn,
        })
    }

    /// What a packet of `len` bytes costs in cells and wire bytes.
    pub fn packet_cost(&self, len: u32) -> PacketCost {
        packet_cost(&self.cfg, len)
    }

    /// The packet size of `sizes` with the most cells per wire byte; `None` if empty.
    pub fn densest_packet(&self, sizes: std::ops::RangeInclusive<u32>) -> Option<PacketCost> {
        densest_packet(&self.cfg, sizes)
    }

    /// Cells a packet of `len` bytes occupies: `ceil((len + overhead) / cell)`.
    #[inline]
    pub fn cells_for(&self, len: u32) -> u32 {
        (len + self.cfg.packet_overhead_bytes).div_ceil(self.cfg.cell_bytes)
    }

    /// Whether a packet of `len` bytes occupies exactly `n >= 1` cells, i.e. `n ==
    /// cells_for(len) > 0`, by two multiplications instead of a division:
    /// `(n - 1) * cell < len + overhead <= n * cell`.
    #[inline]
    pub fn takes_cells(&self, len: u32, n: u32) -> bool {
        let bytes = (len + self.cfg.packet_overhead_bytes) as u64;
        let cell = self.cfg.cell_bytes as u64;
        n > 0 && (n as u64 - 1) * cell < bytes && bytes <= n as u64 * cell
    }

    #[inline]
    pub fn is_lossless(&self, prio: u8) -> bool {
        self.lossless_mask & (1 << prio) != 0
    }

    /// Bits a packet of `len` bytes occupies on the wire.
    #[inline]
    pub fn wire_bits(&self, len: u32) -> u64 {
        (len + self.cfg.wire_overhead_bytes) as u64 * 8
    }

    /// Core cycles of a pause of `quanta` 512-bit quanta on `port`, rounded up once (not
    /// per quantum: at 100 Gb/s and 1 GHz a quantum is 5.12 cycles).
    pub fn pause_cycles(&self, port: usize, quanta: u16) -> u64 {
        (quanta as u64 * PFC_QUANTUM_BITS * self.clock_hz).div_ceil(self.rate_bps[port])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tomahawk_eta_is_the_papers_56840_bytes_sized_in_cells() {
        let mut c = SwitchConfig::tomahawk();
        assert_eq!(c.eta_eq1_bytes(0), 56_840);
        let d = c.build().unwrap();
        // MTU packets only: 8 cells per 1520 wire bytes, floor(56840 * 8 / 1520) + 8.
        assert_eq!(d.eta_cells[0], 299 + 8);
        assert_eq!(d.eta_sizing[0].densest.len, 1500);
        assert_eq!(d.total_cells, 16 * 1024 * 1024 / 208);
        c.headroom = HeadroomMode::PaperBytes;
        assert_eq!(c.build().unwrap().eta_cells[0], 56_840u32.div_ceil(208));
    }

    #[test]
    fn small_eta_is_sized_for_209_byte_packets() {
        let d = SwitchConfig::small().build().unwrap();
        let s = d.eta_sizing[0];
        assert_eq!(s.wire_bytes, 11_840);
        // 209 B = two 208 B cells for 229 wire bytes is the densest size in 128..=1500.
        assert_eq!(
            (s.densest.len, s.densest.cells, s.densest.wire),
            (209, 2, 229)
        );
        assert_eq!(d.eta_cells[0], 11_840 * 2 / 229 + 8);
    }

    #[test]
    fn explicit_eta_bytes_is_converted_like_eq1() {
        let mut c = SwitchConfig::small();
        c.eta_bytes = Some(c.eta_eq1_bytes(0) as u32);
        let explicit = c.build().unwrap();
        c.eta_bytes = None;
        assert_eq!(explicit.eta_cells, c.build().unwrap().eta_cells);
        c.eta_bytes = Some(20_000);
        c.headroom = HeadroomMode::PaperBytes;
        assert_eq!(c.build().unwrap().eta_cells[0], 20_000u32.div_ceil(208));
    }

    #[test]
    fn headroom_packet_range_is_checked_against_the_mtu() {
        let mut c = SwitchConfig::small();
        c.headroom_min_packet_bytes = Some(1501);
        let e = c.build().unwrap_err();
        assert_eq!(e.field, "switch.headroom_min_packet_bytes");
        assert!(e.message.contains("64..=1500 (mtu_bytes)"), "{e}");
        c.headroom_min_packet_bytes = Some(63);
        assert!(c.build().is_err());
        // Without lossless priorities there is no headroom to size.
        c.lossless_priorities.clear();
        c.build().unwrap();
    }

    /// The largest number of cells the packets whose first bytes lie within `w` wire
    /// bytes can occupy, by exhaustive search over every sequence of sizes in `sizes`:
    /// `worst[x]` is the most cells of the packets starting at `x` or later before `w`,
    /// memoized on `x` (order does not matter beyond where the next packet starts).
    fn worst_cells_by_search(
        c: &SwitchConfig,
        sizes: std::ops::RangeInclusive<u32>,
        w: u64,
    ) -> u64 {
        let costs: Vec<PacketCost> = sizes.map(|l| packet_cost(c, l)).collect();
        let mut worst = vec![0u64; w as usize + 2];
        for x in (0..=w as usize).rev() {
            worst[x] = costs
                .iter()
                .map(|p| {
                    let next = (x + p.wire as usize).min(w as usize + 1);
                    p.cells as u64 + worst[next]
                })
                .max()
                .unwrap_or(0);
        }
        worst[0]
    }

    #[test]
    fn eta_bound_holds_and_is_tight_against_exhaustive_search() {
        let mut checked = 0;
        for cell in [32u32, 48, 64, 100] {
            for ovh in [0u32, 7, 16] {
                for wo in [0u32, 20] {
                    for (lo, hi) in [(64u32, 64u32), (64, 140), (90, 200), (100, 101), (64, 300)] {
                        let c = SwitchConfig {
                            cell_bytes: cell,
                            packet_overhead_bytes: ovh,
                            wire_overhead_bytes: wo,
                            mtu_bytes: hi,
                            ..SwitchConfig::small()
                        };
                        let densest = densest_packet(&c, lo..=hi).unwrap();
                        let largest = packet_cost(&c, hi).cells;
                        for w in [0u64, 1, 63, 100, 257, 500, 1000, 1499, 2048] {
                            let bound = eta_cells_for(w, densest, largest);
                            let exact = worst_cells_by_search(&c, lo..=hi, w);
                            assert!(
                                bound >= exact,
                                "cell {cell} ovh {ovh} wo {wo} sizes {lo}..={hi} W {w}: bound {bound} < worst {exact}"
                            );
                            assert!(
                                bound < exact + densest.cells as u64,
                                "cell {cell} ovh {ovh} wo {wo} sizes {lo}..={hi} W {w}: bound {bound} not within a densest packet of {exact}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 4 * 3 * 2 * 5 * 9);
    }

    #[test]
    fn derived_eta_covers_the_worst_mixture_of_the_range() {
        // A small MTU keeps the search short; Eq. 1 of a 100 ns link and an explicit W.
        for (cell, ovh, lo, eta_bytes) in [
            (64, 0, 64, None),
            (48, 10, 65, None),
            (32, 0, 100, Some(3000)),
        ] {
            let c = SwitchConfig {
                cell_bytes: cell,
                packet_overhead_bytes: ovh,
                mtu_bytes: 256,
                link_delay_ns: 100,
                headroom_min_packet_bytes: Some(lo),
                eta_bytes,
                buffer_bytes: 1 << 20,
                ..SwitchConfig::small()
            };
            let d = c.build().unwrap();
            let w = d.eta_sizing[0].wire_bytes;
            let exact = worst_cells_by_search(&c, lo..=256, w);
            assert!(
                d.eta_cells[0] as u64 >= exact,
                "{cell} {ovh} {lo}: {} < {exact}",
                d.eta_cells[0]
            );
            let paper = SwitchConfig {
                headroom: HeadroomMode::PaperBytes,
                ..c.clone()
            };
            assert!(
                (paper.build().unwrap().eta_cells[0] as u64) < exact,
                "paper-bytes must fall short of the worst mixture: {cell} {ovh} {lo}"
            );
        }
    }

    #[test]
    fn out_of_range_fields_are_named() {
        let mut c = SwitchConfig::small();
        c.alpha_log2 = 5;
        let e = c.build().unwrap_err();
        assert_eq!(e.field, "switch.alpha_log2");
        let mut c = SwitchConfig::small();
        c.buffer_bytes = 1 << 40;
        let e = c.build().unwrap_err();
        assert_eq!(e.field, "switch.buffer_bytes");
        assert!(e.message.contains("20-bit"), "{e}");
        let mut c = SwitchConfig::small();
        c.port_speeds_gbps = vec![100.0; 3];
        assert_eq!(c.build().unwrap_err().field, "switch.port_speeds_gbps");
    }

    #[test]
    fn headroom_that_does_not_fit_is_refused() {
        let mut c = SwitchConfig::small();
        c.link_delay_ns = 100_000;
        let e = c.build().unwrap_err();
        assert_eq!(e.field, "switch.buffer_bytes");
    }

    #[test]
    fn dsh_reserves_insurance_per_port_not_per_queue() {
        let mut c = SwitchConfig::tomahawk();
        let sih = c.build().unwrap();
        c.policy = Policy::Dsh;
        let dsh = c.build().unwrap();
        let eta = sih.eta_cells[0];
        assert_eq!(sih.headroom_cells, 32 * 7 * eta, "Eq. 3");
        assert_eq!(dsh.headroom_cells, 32 * eta, "Eq. 4");
        assert_eq!(dsh.shared_cells - sih.shared_cells, 32 * 6 * eta);
    }

    #[test]
    fn l2bm_reserves_headroom_like_sih_and_knows_each_ports_cell_time() {
        let mut c = SwitchConfig::tomahawk();
        let sih = c.build().unwrap();
        c.policy = Policy::L2bm;
        let l2bm = c.build().unwrap();
        assert_eq!(l2bm.headroom_cells, sih.headroom_cells, "Eq. 3 per queue");
        assert_eq!(l2bm.shared_cells, sih.shared_cells);
        // 208 B = 1664 bits at 100 Gb/s and 1 GHz: 16.64 cycles per cell.
        assert_eq!(
            l2bm.cycles_per_cell_q16[0],
            (16.64f64 * 65536.0).round() as u32
        );
        assert_eq!(Policy::parse("l2bm"), Ok(Policy::L2bm));
        assert!(Policy::parse("x").unwrap_err().message.contains("l2bm"));
        // 1 Mb/s: 1.664 million cycles per cell, beyond the 16-bit integer part.
        c.port_speed_gbps = 0.001;
        c.sram_read_cells_per_cycle = 1;
        c.sram_write_cells_per_cycle = 1;
        let e = c.build().unwrap_err();
        assert_eq!(e.field, "switch.port_speed_gbps", "{e}");
        c = SwitchConfig::tomahawk();
        c.policy = Policy::L2bm;
        c.egress_alpha_log2 = 4;
        assert_eq!(c.build().unwrap_err().field, "switch.egress_alpha_log2");
    }

    #[test]
    fn cells_for_rounds_up_with_overhead() {
        let mut c = SwitchConfig::small();
        c.packet_overhead_bytes = 16;
        let d = c.build().unwrap();
        assert_eq!(d.cells_for(192), 1);
        assert_eq!(d.cells_for(193), 2);
        assert_eq!(d.cells_for(1500), 8);
    }

    /// `takes_cells` agrees with `cells_for` for every length and every cell count up to
    /// one past it (so a wrong bound on either side fails).
    #[test]
    fn takes_cells_is_cells_for_without_a_division() {
        for overhead in [0, 16] {
            let mut c = SwitchConfig::small();
            c.packet_overhead_bytes = overhead;
            let d = c.build().unwrap();
            for len in 0..2000 {
                let cells = d.cells_for(len);
                for n in 0..=cells + 1 {
                    assert_eq!(d.takes_cells(len, n), n == cells && n > 0, "{len} B, {n}");
                }
            }
        }
    }
}
