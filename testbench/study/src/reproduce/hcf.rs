//! What the HCF reproductions share: a one-bottleneck switch (the dumbbell of HCF section
//! V), the egress discipline under test (drop-tail FIFO or HCF), a cycle loop that watches
//! the bottleneck queue, and the parameters their sweep measures share (the discipline as
//! `policy`, `bins`, `c0`; the experiment as one `setup` table).
//!
//! The switch. The paper simulates "a congested link" that is "an output of an
//! output-queued switch" (ns-2). Here the last port is that output; every other port is an
//! ingress link whose partner holds the senders' packets. All traffic of the experiment
//! goes to one lossy egress queue of the bottleneck port, so the lossy pool holds exactly
//! that queue, and the queue's buffer is the pool:
//!
//! - **FIFO (drop-tail of `B` packets).** One packet is one cell (`cell_bytes` = the packet
//!   size), there are no lossy private buffers, and the lossy DT uses the largest alpha
//!   (2^3). A packet is admitted iff `total + 1 <= P` (the pool) and its ingress queue holds
//!   fewer than `8 (P - total)` cells. With a single ingress port the ingress queue *is*
//!   the egress queue, so the rule is `9 x < 8 P`; [`pool_cells_for_single_port`] picks
//!   `P = floor(9 B / 8)`, the pool whose DT admits exactly while `x < B`: a tail drop at
//!   `B` packets. With one port per sender (incast) the rule is `total < P` unless one
//!   sender holds more than `8 (P - total)` of the queue, so `P = B` tail-drops at `B`
//!   except when very few senders share the queue (measured and reported per run as the
//!   largest queue and the smallest queue at which a packet was dropped).
//! - **HCF** on the same pool, `[[switch.hcf]]` with `buffer = B` (HP and LP `B / 2` each),
//!   so HCF's sub-queue limits decide; a packet that finds both sub-queues full also finds
//!   the pool full, and is counted as `lossy_threshold` rather than `hcf_full` (the pool is
//!   checked first; either way it is HCF's "both queues full" drop).

use super::{flow_toml, ReproError};
use crate::sweep::Values;
use hw_model::{CellFate, DropReason};
use scenario::{Overrides, Scenario, ScenarioError};
use std::fmt::Write;
use switch_run::Sim;

/// The lossy priority (= egress queue) every flow of the HCF experiments uses.
pub const QUEUE: u8 = 1;
/// Preamble, SFD and inter-frame gap per packet on every link, bytes.
pub const WIRE_OVERHEAD_BYTES: u32 = 20;

/// HCF's knobs (section IV): `K`, `c0`, and the priority period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HcfKnobs {
    pub bins: u32,
    pub c0: u32,
    /// `None`: dynamic period (III-B); `Some(t)`: fixed period of `t` cycles (IV-C).
    pub period_cycles: Option<u64>,
    /// `false`: the conference version, without footnote 1's zeroing (`switch.hcf`'s
    /// `zero_on_lp_join`; policy `hcf-conference` in a sweep).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub zero_on_lp_join: bool,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl HcfKnobs {
    /// `K` bins, `c0` credits, dynamic period.
    pub const fn dynamic(bins: u32, c0: u32) -> Self {
        Self {
            bins,
            c0,
            period_cycles: None,
            zero_on_lp_join: true,
        }
    }
}

/// The egress discipline of the bottleneck queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Discipline {
    /// Drop-tail FIFO of `B` packets.
    Fifo,
    Hcf(HcfKnobs),
}

impl Discipline {
    /// `fifo` or `hcf` (the CSVs' `policy` column).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Fifo => "fifo",
            Self::Hcf(k) if k.zero_on_lp_join => "hcf",
            Self::Hcf(_) => "hcf-conference",
        }
    }

    /// A run's `policy`, `bins` and `c0` ([`DISCIPLINE_PARAMS`]): `fifo` with 0 and 0, or
    /// `hcf` with `K` bins and `c0` credits, dynamic period.
    pub fn from_values(v: &Values) -> Result<Self, ScenarioError> {
        let int = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_u64())
                .and_then(|x| u32::try_from(x).ok())
                .ok_or_else(|| ScenarioError::new(k, "expected an integer; allowed: 0..=2^32-1"))
        };
        let (bins, c0) = (int("bins")?, int("c0")?);
        match v.get("policy").and_then(|p| p.as_str()) {
            Some("fifo") if bins == 0 && c0 == 0 => Ok(Self::Fifo),
            Some("fifo") => Err(ScenarioError::new(
                "bins",
                "fifo has no bins or credits; allowed: bins = 0, c0 = 0",
            )),
            Some(p @ ("hcf" | "hcf-conference")) if bins >= 1 && c0 >= 1 => {
                Ok(Self::Hcf(HcfKnobs {
                    zero_on_lp_join: p == "hcf",
                    ..HcfKnobs::dynamic(bins, c0)
                }))
            }
            Some("hcf" | "hcf-conference") => Err(ScenarioError::new(
                "bins",
                "hcf takes K bins and c0 credits; allowed: bins >= 1, c0 >= 1",
            )),
            _ => Err(ScenarioError::new(
                "policy",
                "expected a string; allowed: fifo, hcf, hcf-conference",
            )),
        }
    }

    /// The values [`from_values`](Self::from_values) reads: `(policy, bins, c0)`.
    fn values(&self) -> (&'static str, u32, u32) {
        match self {
            Self::Fifo => ("fifo", 0, 0),
            Self::Hcf(k) => (self.name(), k.bins, k.c0),
        }
    }

    /// `FIFO` or `HCF K=.., c0=..` for reports and legends.
    pub fn label(&self) -> String {
        match self {
            Self::Fifo => "FIFO".into(),
            Self::Hcf(k) => {
                let period = k
                    .period_cycles
                    .map_or("dynamic".into(), |t| format!("{t} cycles"));
                let version = if k.zero_on_lp_join { "" } else { " conference" };
                format!("HCF{version} K={} c0={} period {period}", k.bins, k.c0)
            }
        }
    }
}

/// The senders' TCP in an HCF experiment (the setup's `tcp` key).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tcp {
    /// The testbench's Reno-like sender (`stimulus::tcp`) with the setup's `min_rto_us`,
    /// `init_cwnd` and `karn`: the reproductions' TCP before the ns-2 option.
    #[default]
    Model,
    /// ns-2.35's `TcpAgent` defaults (`flavor = "ns2"`, docs/config.md): a SYN and a window
    /// of 1 at start, then `windowInit_` 2, `window_` 20, RTO 3 s before the first RTT
    /// sample, `minrto_` 200 ms, back-off up to `maxrto_` 60 s; the setup's `min_rto_us`,
    /// `init_cwnd` and `karn` are not used.
    Ns2,
}

impl Tcp {
    /// `serde(skip_serializing_if)`: a setup with the model's TCP serializes as before the
    /// key existed, so its sweep runs keep their ids.
    pub fn is_model(&self) -> bool {
        *self == Self::Model
    }

    /// `model` or `ns2`: the key's value.
    pub fn name(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Ns2 => "ns2",
        }
    }

    /// The TCP for a report's header.
    pub fn describe(self, min_rto_us: u64, init_cwnd: u32, karn: bool) -> String {
        match self {
            Self::Model => format!(
                "model TCP: min RTO {} ms, initial window {init_cwnd}, Karn's rule {}",
                min_rto_us / 1000,
                if karn { "on" } else { "off" }
            ),
            Self::Ns2 => "ns-2.35 TCP: SYN, windowInit_ 2, window_ 20, RTO 3 s before a sample, minrto_ 200 ms, maxrto_ 60 s".into(),
        }
    }

    /// The inside of a flow's `tcp = { .. }` table: the ACK delay and this TCP's keys
    /// (`min_rto_us`, `init_cwnd`, `karn` only for the model's).
    pub fn keys(self, base_rtt_us: u64, min_rto_us: u64, init_cwnd: u32, karn: bool) -> String {
        match self {
            Self::Model => format!(
                "base_rtt_us = {base_rtt_us}, min_rto_us = {min_rto_us}, init_cwnd = {init_cwnd}, karn = {karn}"
            ),
            Self::Ns2 => format!("base_rtt_us = {base_rtt_us}, flavor = \"ns2\""),
        }
    }
}

/// A start offset of flow `i` drawn uniformly from `[0, span)` cycles by `key` (a seed or a
/// trial): SplitMix64 of `key << 32 | i`, so it is fixed by `(key, i)` alone.
pub fn start_jitter(key: u64, i: usize, span: u64) -> u64 {
    let mut z = (key << 32 | i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) % span.max(1)
}

/// The parameters of a discipline in an HCF sweep measure.
pub const DISCIPLINE_PARAMS: [&str; 3] = ["policy", "bins", "c0"];

/// The spec text of an HCF sweep `name` over `measure` (collecting `fields`): the
/// experiment `setups` in order as the values of the parameter `setup`, the integer `axes`
/// (`key = [..]`), and the disciplines `discs` in order as a `[[zip]]` group of
/// [`DISCIPLINE_PARAMS`].
pub fn spec_text(
    name: &str,
    measure: &str,
    fields: &[&str],
    setups: &[impl serde::Serialize],
    axes: &[(&str, Vec<u64>)],
    discs: &[Discipline],
) -> String {
    let list = |xs: Vec<String>| xs.join(", ");
    let setups = setups
        .iter()
        .map(|s| {
            toml::Value::try_from(s)
                .expect("a setup is a TOML table")
                .to_string()
        })
        .collect();
    let mut s = format!(
        "name = \"{name}\"\nmeasure = \"{measure}\"\ncollect = [{}]\n[parameters]\nsetup = [{}]\n",
        list(fields.iter().map(|f| format!("{f:?}")).collect()),
        list(setups)
    );
    for (key, values) in axes {
        let _ = writeln!(
            s,
            "{key} = [{}]",
            list(values.iter().map(u64::to_string).collect())
        );
    }
    let v: Vec<_> = discs.iter().map(Discipline::values).collect();
    let _ = write!(
        s,
        "[[zip]]\npolicy = [{}]\nbins = [{}]\nc0 = [{}]\n",
        list(v.iter().map(|d| format!("{:?}", d.0)).collect()),
        list(v.iter().map(|d| d.1.to_string()).collect()),
        list(v.iter().map(|d| d.2.to_string()).collect())
    );
    s
}

/// A run's `setup` value (see [`spec_text`]).
pub fn setup_of<T: serde::de::DeserializeOwned>(v: &Values) -> Result<T, ScenarioError> {
    let setup = v
        .get("setup")
        .ok_or_else(|| ScenarioError::new("setup", "missing; allowed: the experiment's table"))?;
    serde_json::from_value(setup.clone()).map_err(|e| ScenarioError::new("setup", e.to_string()))
}

/// Smallest lossy pool, in one-packet cells, whose DT (alpha = 8, no private buffer) lets a
/// single ingress queue grow to exactly `b` packets: admitted iff `9 x < 8 P`, so the queue
/// stops at `b` iff `9 (b - 1) < 8 P <= 9 b`.
pub fn pool_cells_for_single_port(b: u32) -> u32 {
    let p = 9 * b / 8;
    debug_assert!(9 * (b - 1) < 8 * p && 8 * p <= 9 * b);
    p
}

/// The switch of one experiment: ingress ports `0..ingress_gbps.len()`, then the
/// bottleneck port. Every packet is one cell of `packet_bytes`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bottleneck {
    pub clock_mhz: u32,
    /// Packet size = cell size = MTU, bytes.
    pub packet_bytes: u32,
    pub ingress_gbps: Vec<f64>,
    pub bottleneck_gbps: f64,
    /// `B`: the queue's buffer in packets (HCF's `buffer`).
    pub buffer_packets: u32,
    /// Lossy pool, cells (= packets).
    pub pool_cells: u32,
    /// One-way delay of the ingress links, ns.
    pub link_delay_ns: u32,
}

impl Bottleneck {
    /// The bottleneck (egress) port.
    pub fn port(&self) -> usize {
        self.ingress_gbps.len()
    }

    /// The scenario header (`name`, `[switch]`, `[run]`) with the bottleneck queue run by
    /// `disc`; flows follow from [`flow_toml`].
    pub fn header(&self, name: &str, disc: Discipline, cycles: u64, seed: u64) -> String {
        let ports = self.ingress_gbps.len() + 1;
        let speeds: Vec<String> = self
            .ingress_gbps
            .iter()
            .chain(std::iter::once(&self.bottleneck_gbps))
            .map(|g| format!("{g}"))
            .collect();
        let pool = self.pool_cells as u64 * self.packet_bytes as u64;
        let mut s = format!(
            "name = \"{name}\"\n[switch]\nports = {ports}\nport_speeds_gbps = [{}]\n\
             core_clock_mhz = {}\ncell_bytes = {pb}\nmtu_bytes = {pb}\nbuffer_bytes = {pool}\n\
             wire_overhead_bytes = {WIRE_OVERHEAD_BYTES}\npacket_overhead_bytes = 0\n\
             lossy_pool_bytes = {pool}\nlossy_alpha_log2 = 3\nlossy_private_bytes = 0\n\
             lossless_priorities = []\nsram_write_cells_per_cycle = {ports}\n\
             sram_read_cells_per_cycle = {ports}\nlink_delay_ns = {}\n",
            speeds.join(", "),
            self.clock_mhz,
            self.link_delay_ns,
            pb = self.packet_bytes,
        );
        if let Discipline::Hcf(k) = disc {
            let _ = write!(
                s,
                "[[switch.hcf]]\nports = [{}]\nqueue = {QUEUE}\nbins = {}\nc0 = {}\nbuffer = {}\nunit = \"packet\"\n",
                self.port(),
                k.bins,
                k.c0,
                self.buffer_packets
            );
            if let Some(t) = k.period_cycles {
                let _ = writeln!(s, "period_cycles = {t}");
            }
            if !k.zero_on_lp_join {
                let _ = writeln!(s, "zero_on_lp_join = false");
            }
        }
        let _ = write!(
            s,
            "[run]\ncycles = {cycles}\nseed = {}\n",
            scenario::int_keys::seed::toml_value(seed)
        );
        s
    }

    /// A TCP flow from ingress `src` to the bottleneck; `tcp` is the inside of the
    /// `tcp = { ... }` table.
    pub fn tcp_flow(&self, src: usize, tcp: &str, start_cycle: u64) -> String {
        flow_toml(
            src,
            self.port(),
            QUEUE as usize,
            self.packet_bytes,
            &format!("pattern = {{ tcp = {{ {tcp} }} }}\nstart_cycle = {start_cycle}"),
        )
    }

    /// A Poisson stream of single-packet UDP messages at `gbps` from ingress `src`.
    pub fn udp_flow(&self, src: usize, gbps: f64) -> String {
        flow_toml(
            src,
            self.port(),
            QUEUE as usize,
            self.packet_bytes,
            &format!(
                "pattern = \"poisson\"\nrate_gbps = {gbps}\nmessage_cdf = [[{}, 1.0]]",
                self.packet_bytes
            ),
        )
    }

    /// Wire bits of one packet.
    pub fn wire_bits(&self) -> u64 {
        (self.packet_bytes + WIRE_OVERHEAD_BYTES) as u64 * 8
    }

    /// The TCP flows' `base_rtt_us` for a round trip of `rtt_us`: the model's receiver
    /// takes a one-cell packet when its cell is read, at the *start* of its transmission
    /// on the bottleneck, so the packet's time on the bottleneck wire (rounded up to a
    /// microsecond) is added: the ACK leaves once the whole packet has arrived, as in the
    /// paper's ns-2.
    pub fn ack_delay_us(&self, rtt_us: u64) -> u64 {
        let wire_ns = self.wire_bits() as f64 / self.bottleneck_gbps;
        rtt_us + (wire_ns / 1000.0).ceil() as u64
    }
}

/// Parse and build a scenario (no overrides).
pub fn build(text: &str, name: &str) -> Result<Sim, ReproError> {
    Ok(Sim::new(
        &Scenario::parse(text, name)?,
        Overrides::default(),
    )?)
}

/// What the cycle loop saw at the bottleneck queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueWatch {
    /// Packets in the queue (admitted, not yet started on the wire).
    pub occupancy: u32,
    /// Largest occupancy seen.
    pub max_occupancy: u32,
    /// Smallest occupancy at which a packet was dropped; `u32::MAX` if none was.
    pub min_occupancy_at_drop: u32,
    /// Drops by the occupancy they met: `drop_hist[q]` packets were dropped at `q`.
    pub drop_hist: Vec<u64>,
    /// Packets dropped, by reason (`DropReason::ALL` order).
    pub drops: [u64; DropReason::ALL.len()],
}

impl QueueWatch {
    pub fn new() -> Self {
        Self {
            min_occupancy_at_drop: u32::MAX,
            ..Self::default()
        }
    }

    /// Account the last cycle's events of the bottleneck `port` (call after each step).
    /// Every packet is one cell, so a cell event is a packet. A drop meets the occupancy
    /// at the start of the cycle plus the packets admitted before it in the same cycle
    /// (lower ports first): what the pool's occupancy check sees.
    pub fn observe(&mut self, sim: &Sim, port: usize) {
        let out = sim.outputs();
        for ev in &out.cell_events {
            if ev.beat.hdr.dst as usize != port || !ev.beat.sop() {
                continue;
            }
            match ev.fate {
                CellFate::Admitted(_) => self.occupancy += 1,
                CellFate::Dropped(r) => {
                    let i = DropReason::ALL.iter().position(|&x| x == r).unwrap_or(0);
                    self.drops[i] += 1;
                    let q = self.occupancy;
                    self.min_occupancy_at_drop = self.min_occupancy_at_drop.min(q);
                    if self.drop_hist.len() <= q as usize {
                        self.drop_hist.resize(q as usize + 1, 0);
                    }
                    self.drop_hist[q as usize] += 1;
                }
            }
        }
        self.max_occupancy = self.max_occupancy.max(self.occupancy);
        for dep in &out.departures {
            if dep.port as usize == port && dep.beat.eop() {
                self.occupancy = self.occupancy.saturating_sub(1);
            }
        }
    }

    pub fn dropped(&self) -> u64 {
        self.drops.iter().sum()
    }

    pub fn dropped_for(&self, r: DropReason) -> u64 {
        DropReason::ALL
            .iter()
            .position(|&x| x == r)
            .map_or(0, |i| self.drops[i])
    }

    /// Share of the drops that met a queue of at least `b` packets, percent (100 with no
    /// drop).
    pub fn pct_dropped_at_or_above(&self, b: u32) -> f64 {
        let all: u64 = self.drop_hist.iter().sum();
        if all == 0 {
            return 100.0;
        }
        let hi: u64 = self.drop_hist.iter().skip(b as usize).sum();
        100.0 * hi as f64 / all as f64
    }
}

/// After a run: the scoreboard's checks (order within a flow, conservation, model
/// invariants) must hold, or the numbers are void.
pub fn check(sim: &Sim, what: &str) -> Result<(), ReproError> {
    checked(sim, what, false)
}

/// [`check`] for a run under `disc`: HCF's conference version (`zero_on_lp_join = false`)
/// breaks Theorem 1, so its reordered cells are measured (the summary's), not refused;
/// everything else is checked.
pub fn check_discipline(sim: &Sim, what: &str, disc: &Discipline) -> Result<(), ReproError> {
    checked(
        sim,
        what,
        matches!(disc, Discipline::Hcf(k) if !k.zero_on_lp_join),
    )
}

fn checked(sim: &Sim, what: &str, may_reorder: bool) -> Result<(), ReproError> {
    let s = sim.summary(0.0);
    // The scoreboard's order entry (`Sim::summary`), found by what it says: reordering
    // alone, nothing misrouted.
    let order = format!("{} reordered and 0 misrouted cells", s.reordered_cells);
    let rest: Vec<&str> = s
        .violations
        .iter()
        .map(String::as_str)
        .filter(|v| !(may_reorder && v.starts_with(&order)))
        .collect();
    if rest.is_empty() {
        Ok(())
    } else {
        Err(ReproError::Invariant(format!(
            "{what}: {}",
            rest.join("; ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_port_pool_stops_at_b() {
        for b in 2..200 {
            let p = pool_cells_for_single_port(b);
            // Admitted iff 9 x < 8 p: the largest admitted x is b - 1.
            let last = (0..p).filter(|&x| 9 * x < 8 * p).max().unwrap();
            assert_eq!(last, b - 1, "B = {b}, P = {p}");
        }
        assert_eq!(pool_cells_for_single_port(20), 22);
    }
}
