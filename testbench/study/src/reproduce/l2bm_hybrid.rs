//! L2BM section IV-A (Fig. 7, Table II): isolation of lossless and lossy traffic in one
//! shared-memory switch. Lossless flows with web-search sizes at a fixed load of 0.4 share
//! the switch with lossy TCP flows whose load sweeps 0.1 to 0.8, under the hybrid DT with
//! `alpha = 1/8` (the paper's "DT"), with `alpha = 1/2` ("DT2") and under L2BM (Eq. 2-3,
//! Algorithm 1). Per policy and TCP load: PFC PAUSE frames (Table II, Fig. 7(d)), the 99th
//! percentile of the buffer occupancy (Fig. 7(c)) and the 99th-percentile FCT slowdown of
//! the lossless and the lossy flows (Fig. 7(a), 7(b)).
//!
//! What one switch stands for (see docs/results.md for the scaling and the comparison):
//!
//! - **Hosts.** Ports `0..ports/2` are the RDMA servers of one ToR (IV-A: "16 servers ...
//!   generate RDMA traffic"), ports `ports/2..ports` the TCP servers. Each server sends to
//!   every other port with equal probability ("data is randomly sent to all other
//!   servers"), so each port is also a receiver.
//! - **Lossless flows** are `poisson` flows on lossless priority [`LOSSLESS_PRIO`], one per
//!   (source, destination) pair at `load * line rate / (ports - 1)`: their superposition per
//!   server is a Poisson process of messages with a uniformly drawn destination. A message
//!   is handed to the server's NIC (the link partner) at once and sent at line rate; its
//!   FCT is from its arrival to the departure of its last cell from the switch
//!   ([`stimulus::source::MessageStats`]). There is no DCQCN: PFC is the lossless class's only
//!   rate control.
//! - **Lossy flows** are finite `tcp` flows (Reno-like, `stimulus::tcp`; the paper's DCTCP has
//!   no ECN counterpart here) on lossy priority [`LOSSY_PRIO`], started as a Poisson process
//!   per TCP server with web-search sizes and a uniformly drawn destination. Their FCT is
//!   from the start to the ACK of the last byte ([`stimulus::tcp::TcpStats::fct_cycles`]).
//! - **FCT slowdown** = FCT / ideal FCT, the ideal being the same flow alone in the network
//!   (IV: "the actual FCT divided by the ideal FCT with no other traffic"): the base latency
//!   of one packet through the idle switch (measured per run, [`base_latency_cycles`]) plus
//!   the flow's wire time at the line rate, plus the ACK delay for TCP. Slow start is not
//!   part of the ideal. Under the open loop a lossless message also waits, in the ideal,
//!   for the same server's earlier messages: its NIC sends a class in FIFO order (the link
//!   partner), so a small message queued behind a large one of its own server is not
//!   counted as slowed down by the network. Under DCQCN each message is a queue pair of its
//!   own, interleaved by the NIC (`stimulus::rdma_nic`), and its ideal is the message alone.
//! - **Policies** ([`Policy`]): all three run with `hybrid_ingress_pool = true`, so the
//!   ingress thresholds of both classes see one ingress pool (II-A; III-A, Fig. 5), the
//!   paper's hybrid switch. DT uses the same `alpha` for the lossless and the lossy class;
//!   L2BM uses `alpha = 1/8` (III-C: "in most real switches alpha is usually set to
//!   0.125") as the base of Eq. 3, and its lossy egress DT with `alpha_e = 1`.

use super::plot::{xy_chart, Series};
use super::{from_fields, to_fields, to_json, Progress, ReproError};
use crate::sweep::stats::percentile;
use crate::sweep::{Measure, Spec, Values};
use hw_model::L2bmMu;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use scenario::MIN_PACKET_BYTES;
use scenario::{Overrides, Scenario};
use std::fmt::Write;
use std::path::Path;
use stimulus::source::{draw_linear, linear_cdf_mean, unit};
use switch_run::csv_file::{Fixed, Plain};
use switch_run::Sim;

/// Header of `l2bm.csv`.
pub const CSV_HEADER: &str = "transport,policy,tcp_load,seeds,\
    pause_frames_mean,pause_frames_min,pause_frames_max,\
    p99_occupancy_bytes_mean,p99_occupancy_bytes_min,p99_occupancy_bytes_max,\
    p99_fct_slowdown_lossless_mean,p99_fct_slowdown_lossless_min,p99_fct_slowdown_lossless_max,\
    p99_fct_slowdown_lossy_mean,p99_fct_slowdown_lossy_min,p99_fct_slowdown_lossy_max";

/// Lossless (RDMA) priority: ingress priority group and egress queue.
pub const LOSSLESS_PRIO: u8 = 3;
/// Lossy (TCP) priority.
pub const LOSSY_PRIO: u8 = 1;

/// The web-search flow-size distribution (DCTCP, SIGCOMM 2010) as the piecewise-linear CDF
/// the ns-3 data-centre simulators ship (`WebSearch_distribution.txt`): `(bytes, P(size <=
/// bytes))`. The L2BM paper names the workload (IV, "Workload") but prints no table; its
/// first point `(0, 0)` is `(1, 0)` here (`message_cdf` sizes start at 1). Mean 1.71 MB
/// (`source::linear_cdf_mean`).
pub const WEB_SEARCH_CDF: [(u64, f64); 12] = [
    (1, 0.0),
    (10_000, 0.15),
    (20_000, 0.2),
    (30_000, 0.3),
    (50_000, 0.4),
    (80_000, 0.53),
    (200_000, 0.6),
    (1_000_000, 0.7),
    (2_000_000, 0.8),
    (5_000_000, 0.9),
    (10_000_000, 0.97),
    (30_000_000, 1.0),
];

/// Table II of the paper (ns-3): PFC PAUSE frames at TCP loads 0.4 to 0.8, for DT
/// (`alpha = 1/8`), DT2 (`alpha = 1/2`) and L2BM. ABM is not modelled.
pub const PAPER_TABLE_II: [(f64, [u64; 3]); 5] = [
    (0.4, [1548, 0, 6]),
    (0.5, [2597, 8, 0]),
    (0.6, [7316, 312, 5]),
    (0.7, [9083, 450, 4]),
    (0.8, [10775, 418, 49]),
];

/// The buffer policies compared in IV-A (in a sweep's `policy` parameter by
/// [`name`](Policy::name)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Policy {
    /// Hybrid DT with `alpha = 1/8` (the paper's "DT", Microsoft's RoCEv2 setting).
    #[serde(rename = "dt_alpha_1_8")]
    DtEighth,
    /// Hybrid DT with `alpha = 1/2` (the paper's "DT2").
    #[serde(rename = "dt_alpha_1_2")]
    DtHalf,
    /// L2BM (Eq. 3) on `alpha = 1/8`.
    #[serde(rename = "l2bm")]
    L2bm,
}

impl Policy {
    pub const ALL: [Policy; 3] = [Policy::DtEighth, Policy::DtHalf, Policy::L2bm];

    /// The CSV's `policy` column.
    pub fn name(self) -> &'static str {
        match self {
            Self::DtEighth => "dt_alpha_1_8",
            Self::DtHalf => "dt_alpha_1_2",
            Self::L2bm => "l2bm",
        }
    }

    /// Legend and report label.
    pub fn label(self) -> &'static str {
        match self {
            Self::DtEighth => "DT alpha 1/8",
            Self::DtHalf => "DT alpha 1/2",
            Self::L2bm => "L2BM",
        }
    }

    /// The model's policy and the DT `alpha_log2` of both classes.
    fn model(self) -> (hw_model::Policy, i32) {
        match self {
            Self::DtEighth => (hw_model::Policy::Sih, -3),
            Self::DtHalf => (hw_model::Policy::Sih, -1),
            Self::L2bm => (hw_model::Policy::L2bm, -3),
        }
    }

    /// `[switch]` keys of the policy, one `KEY = VALUE` a line.
    pub fn switch_keys(self) -> String {
        let (policy, alpha_log2) = self.model();
        format!(
            "policy = \"{}\"\nalpha_log2 = {alpha_log2}\nlossy_alpha_log2 = {alpha_log2}\negress_alpha_log2 = 0\nhybrid_ingress_pool = true\n",
            policy.name()
        )
    }
}

/// The transports of the two classes (in a sweep's `transport` parameter by
/// [`name`](Transport::name)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Transport {
    /// Open-loop lossless messages (PFC their only rate control) and Reno-like TCP, no ECN.
    #[default]
    #[serde(rename = "open-loop-reno")]
    OpenLoopReno,
    /// The paper's (IV-A): DCQCN on the lossless messages (RED marking at their egress
    /// queues, DCQCN's curve) and DCTCP on the lossy flows (a step threshold `K`).
    #[serde(rename = "dcqcn-dctcp")]
    DcqcnDctcp,
}

impl Transport {
    pub const ALL: [Transport; 2] = [Transport::OpenLoopReno, Transport::DcqcnDctcp];

    /// The CSV's `transport` column.
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenLoopReno => "open-loop-reno",
            Self::DcqcnDctcp => "dcqcn-dctcp",
        }
    }
}

/// DCTCP's `K` in packets at 10 Gb/s (Alizadeh et al. 2010, section 4: 65 packets of
/// 1500 B), scaled with the line rate by [`Setup::dctcp_k_bytes`].
pub const DCTCP_K_PACKETS_10G: f64 = 65.0;

/// The size and timing of the experiment. In a run's `setup` parameter ([`MEASURE`])
/// without `tcp_loads`, which is the sweep's axis `tcp_load`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Setup {
    /// Switch ports (even): the first half are lossless servers, the second half TCP.
    pub ports: usize,
    pub port_gbps: f64,
    pub clock_mhz: u32,
    pub buffer_bytes: u64,
    /// The lossy shared segment (`lossy_pool_bytes`); the rest of the ingress pool is the
    /// lossless one, and with the hybrid pool both classes' thresholds see both.
    pub lossy_pool_bytes: u64,
    pub link_delay_ns: u32,
    /// Packet size (MTU) of every flow, bytes.
    pub packet_bytes: u32,
    /// Flow sizes are [`WEB_SEARCH_CDF`] divided by this (at least 1 byte).
    pub size_divisor: u64,
    /// Load of each lossless server's link, counting wire bytes of full packets.
    pub lossless_load: f64,
    /// TCP loads of the sweep, same unit.
    #[serde(skip)]
    pub tcp_loads: Vec<f64>,
    /// Flows arrive during the first `arrivals_ms`; buffer occupancy is sampled then.
    pub arrivals_ms: f64,
    /// The run stops when every flow has completed, or this long after the arrivals.
    pub max_drain_ms: f64,
    /// Buffer occupancy sampling period, ns.
    pub sample_ns: u64,
    /// `base_rtt_us` of the TCP flows: a packet's last cell leaving the switch to its ACK
    /// reaching the sender.
    pub tcp_ack_delay_us: u64,
    pub tcp_min_rto_us: u64,
    /// The run's seed (the sweep's `seed` parameter; its axis is `seeds`).
    #[serde(skip)]
    pub seed: u64,
    /// Seeds of the sweep (the spec's `seeds`).
    #[serde(skip)]
    pub seeds: Vec<u64>,
    /// The run's transports (the sweep's `transport` parameter; its axis is `transports`).
    #[serde(skip)]
    pub transport: Transport,
    #[serde(skip)]
    pub transports: Vec<Transport>,
    /// L2BM's drain rate `mu` (`l2bm_mu` of `[switch]`); left out of the table at its
    /// default, the line rate.
    #[serde(default, skip_serializing_if = "L2bmMu::is_line_rate")]
    pub l2bm_mu: L2bmMu,
}

impl Setup {
    /// The scaled setup of `mmu-sim reproduce l2bm-hybrid` (docs/results.md): one ToR of
    /// 16 x 25G servers (8 lossless, 8 TCP) with the paper's 4 MB buffer, 1 us links,
    /// web-search sizes divided by 10, 60 ms of arrivals.
    pub fn scaled() -> Self {
        Self {
            ports: 16,
            port_gbps: 25.0,
            clock_mhz: 100,
            buffer_bytes: 4 << 20,
            lossy_pool_bytes: 1 << 20,
            link_delay_ns: 1000,
            packet_bytes: 1000,
            size_divisor: 10,
            lossless_load: 0.4,
            tcp_loads: vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
            arrivals_ms: 60.0,
            max_drain_ms: 40.0,
            sample_ns: 1000,
            tcp_ack_delay_us: 4,
            tcp_min_rto_us: 1000,
            seed: 1,
            seeds: vec![1, 2, 3],
            transport: Transport::OpenLoopReno,
            transports: Transport::ALL.to_vec(),
            l2bm_mu: L2bmMu::LineRate,
        }
    }

    /// DCTCP's step threshold `K` of the lossy queues under [`Transport::DcqcnDctcp`],
    /// bytes: [`DCTCP_K_PACKETS_10G`] packets of 1500 B (78 us at 10 Gb/s), scaled
    /// with the line rate, as DCTCP's `K > C x RTT / 7` scales (section 3.4): the same
    /// queueing delay, 78 us, at `port_gbps`.
    pub fn dctcp_k_bytes(&self) -> u32 {
        (DCTCP_K_PACKETS_10G * 1500.0 * self.port_gbps / 10.0).round() as u32
    }

    /// The `[switch.ecn]` of the transport: DCQCN's RED curve (the `[switch.ecn]`
    /// defaults: `Kmin` 5 KB, `Kmax` 200 KB, `Pmax` 1 %, DCQCN section 5) on the lossless
    /// queues, DCTCP's step at [`dctcp_k_bytes`](Self::dctcp_k_bytes) on the lossy ones;
    /// none for the open loop.
    fn ecn_keys(&self) -> String {
        match self.transport {
            Transport::OpenLoopReno => String::new(),
            Transport::DcqcnDctcp => format!(
                "[switch.ecn]\npriorities = [{LOSSLESS_PRIO}]\n[[switch.ecn.curves]]\npriorities = [{LOSSY_PRIO}]\nkmin = {k}\nkmax = {k}\n",
                k = self.dctcp_k_bytes()
            ),
        }
    }

    fn cycles(&self, ms: f64) -> u64 {
        (ms * 1e3 * self.clock_mhz as f64).round() as u64
    }

    /// The flow-size CDF in use.
    pub fn size_cdf(&self) -> Vec<(u64, f64)> {
        WEB_SEARCH_CDF
            .iter()
            .map(|&(b, p)| ((b / self.size_divisor).max(1), p))
            .collect()
    }

    /// Check the setup before running it.
    fn validate(&self) -> Result<(), ReproError> {
        let bad = |m: String| Err(ReproError::Invariant(format!("l2bm-hybrid setup: {m}")));
        if self.ports < 4 || !self.ports.is_multiple_of(2) {
            return bad(format!("ports = {}: need an even number >= 4", self.ports));
        }
        if self.size_divisor == 0 {
            return bad("size_divisor must be at least 1".into());
        }
        let cdf = self.size_cdf();
        if cdf.windows(2).any(|w| w[0].0 >= w[1].0) {
            return bad(format!(
                "size_divisor {} merges points of the web-search CDF",
                self.size_divisor
            ));
        }
        for &l in self.tcp_loads.iter().chain([&self.lossless_load]) {
            if !(l > 0.0 && l <= 1.0) {
                return bad(format!("load {l} is outside (0, 1]"));
            }
        }
        if !(self.arrivals_ms > 0.0 && self.max_drain_ms >= 0.0 && self.sample_ns > 0) {
            return bad("arrivals_ms, sample_ns must be positive".into());
        }
        Ok(())
    }

    /// The `name`, `[switch]` and `[run]` part of a scenario under `policy`, run for
    /// `cycles`. The lossless messages end in packets as short as 64 B, and the headroom is
    /// sized in cells for them.
    fn header(&self, policy: Policy, cycles: u64) -> String {
        let p = self.ports;
        format!(
            "name = \"l2bm-hybrid\"\n[switch]\nprofile = \"small\"\nports = {p}\nport_speed_gbps = {}\n\
             core_clock_mhz = {}\nbuffer_bytes = {}\nlossy_pool_bytes = {}\n\
             sram_write_cells_per_cycle = {p}\nsram_read_cells_per_cycle = {p}\n\
             lossless_priorities = [{LOSSLESS_PRIO}]\nlink_delay_ns = {}\nheadroom_min_packet_bytes = {MIN_PACKET_BYTES}\n{}{}{}\
             [run]\ncycles = {cycles}\nseed = {}\nexpect_lossless = true\n",
            self.port_gbps,
            self.clock_mhz,
            self.buffer_bytes,
            self.lossy_pool_bytes,
            self.link_delay_ns,
            policy.switch_keys(),
            match self.l2bm_mu {
                L2bmMu::LineRate => "",
                L2bmMu::Measured => "l2bm_mu = \"measured\"\n",
            },
            self.ecn_keys(),
            scenario::int_keys::seed::toml_value(self.seed),
        )
    }

    /// The scenario of one run: lossless `poisson` flows, then the TCP flows of `tcp_load`.
    /// Returns the text and the number of TCP flows.
    pub fn scenario(&self, policy: Policy, tcp_load: f64) -> (String, usize) {
        let end = self.cycles(self.arrivals_ms);
        let mut s = self.header(policy, end + self.cycles(self.max_drain_ms));
        let cdf = self.size_cdf();
        let cdf_toml = cdf
            .iter()
            .map(|(b, p)| format!("[{b}, {p}]"))
            .collect::<Vec<_>>()
            .join(", ");
        let half = self.ports / 2;
        let pkt = self.packet_bytes as f64;
        // `poisson` rates count message bytes; the load counts wire bytes (20 B per packet).
        let per_pair =
            self.lossless_load * self.port_gbps * pkt / (pkt + 20.0) / (self.ports - 1) as f64;
        // DCQCN's CNP takes the TCP ACK's delay: the same reverse path.
        let (lossless, cc) = match self.transport {
            Transport::OpenLoopReno => ("\"poisson\"".to_string(), ""),
            Transport::DcqcnDctcp => (
                format!(
                    "{{ dcqcn = {{ cnp_delay_us = {} }} }}",
                    self.tcp_ack_delay_us
                ),
                ", cc = \"dctcp\"",
            ),
        };
        for src in 0..half {
            for dst in (0..self.ports).filter(|&d| d != src) {
                let _ = write!(
                    s,
                    "\n[[flows]]\nsrc = {src}\ndst = {dst}\nprio = {LOSSLESS_PRIO}\nsize_bytes = {}\n\
                     pattern = {lossless}\nrate_gbps = {per_pair}\nmessage_cdf = [{cdf_toml}]\nstop_cycle = {end}\n",
                    self.packet_bytes
                );
            }
        }
        let mean_gap =
            linear_cdf_mean(&cdf) * 8.0 * (pkt + 20.0) / pkt * self.clock_mhz as f64 * 1e6
                / (tcp_load * self.port_gbps * 1e9);
        let mut flows = 0;
        for src in half..self.ports {
            let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
            rng.set_stream(src as u64);
            let mut t = 0.0;
            loop {
                t += -(1.0 - unit(&mut rng)).ln() * mean_gap;
                let start = t.ceil() as u64;
                if start >= end {
                    break;
                }
                let mut dst = (unit(&mut rng) * (self.ports - 1) as f64) as usize;
                if dst >= src {
                    dst += 1;
                }
                let bytes = draw_linear(&cdf, unit(&mut rng));
                let _ = write!(
                    s,
                    "\n[[flows]]\nsrc = {src}\ndst = {dst}\nprio = {LOSSY_PRIO}\nsize_bytes = {}\nstart_cycle = {start}\n\
                     pattern = {{ tcp = {{ base_rtt_us = {}, min_rto_us = {}, flow_bytes = {bytes}{cc} }} }}\n",
                    self.packet_bytes, self.tcp_ack_delay_us, self.tcp_min_rto_us
                );
                flows += 1;
            }
        }
        (s, flows)
    }
}

/// One run's results.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Run {
    pub transport: Transport,
    pub policy: Policy,
    pub tcp_load: f64,
    pub seed: u64,
    /// PAUSE frames the switch sent over the whole run (Table II).
    pub pause_frames: u64,
    /// 99th percentile of the buffer occupancy during the arrivals, bytes.
    pub p99_occupancy_bytes: u64,
    pub p99_slowdown_lossless: f64,
    pub p99_slowdown_lossy: f64,
    pub median_slowdown_lossless: f64,
    pub median_slowdown_lossy: f64,
    /// Lossless messages, and those not complete at the end.
    pub lossless_flows: usize,
    pub lossless_unfinished: usize,
    /// TCP flows, and those not complete at the end.
    pub tcp_flows: usize,
    pub tcp_unfinished: usize,
    pub tcp_timeouts: u64,
    /// Lossy cells dropped.
    pub lossy_drops: u64,
    /// Cycles simulated.
    pub cycles: u64,
    /// CE marks on the lossless and on the lossy egress queues, and the CNPs the DCQCN
    /// receivers sent (0 for the open loop).
    pub marks_lossless: u64,
    pub marks_lossy: u64,
    pub cnps: u64,
    /// The lossless tail's FCT split: of the summed FCT of the messages at or above the p99
    /// slowdown, the shares spent waiting for the NIC's round robin, held by the rate
    /// limiter, and after the NIC beyond the ideal (paused, queued at the switch); the
    /// ideal is the rest. 0 for the open loop (its NIC keeps no record).
    pub tail_nic_wait_share: f64,
    pub tail_nic_limiter_share: f64,
    pub tail_switch_share: f64,
}

/// Wire time of a flow of `bytes` in packets of `setup.packet_bytes` (the last one shorter,
/// at least 64 B) at the line rate, cycles.
fn wire_cycles(setup: &Setup, sim: &Sim, bytes: u64) -> f64 {
    let d = &sim.plan().derived;
    let pkt = setup.packet_bytes as u64;
    let full = bytes / pkt;
    let rest = bytes % pkt;
    let mut bits = full * d.wire_bits(setup.packet_bytes);
    if rest > 0 {
        bits += d.wire_bits((rest as u32).max(scenario::MIN_PACKET_BYTES));
    }
    bits as f64 * d.clock_hz as f64 / d.rate_bps[0] as f64
}

/// Wire time of the last packet of a flow of `bytes`, cycles.
fn last_packet_cycles(setup: &Setup, sim: &Sim, bytes: u64) -> f64 {
    let pkt = setup.packet_bytes as u64;
    let last = match bytes % pkt {
        0 => pkt,
        rest => rest,
    };
    wire_cycles(setup, sim, last)
}

/// The idle switch's base latency under `policy`: one lossless packet of
/// `setup.packet_bytes` from port 0 to port 1, handed to the NIC at cycle 0, until its last
/// cell departs, minus its wire time; cycles.
pub fn base_latency_cycles(setup: &Setup, policy: Policy) -> Result<f64, ReproError> {
    let mut s = setup.header(policy, 1_000_000);
    s += &super::flow_toml(
        0,
        1,
        LOSSLESS_PRIO as usize,
        setup.packet_bytes,
        "pattern = \"burst\"\nburst_bytes = 1",
    );
    let mut sim = Sim::new(&Scenario::parse(&s, "l2bm-hybrid")?, Overrides::default())?;
    while sim.now() < 1_000_000 {
        sim.step()?;
        if sim.outputs().departures.iter().any(|d| d.beat.eop()) {
            let done = (sim.now() - 1) as f64;
            return Ok(done - wire_cycles(setup, &sim, setup.packet_bytes as u64));
        }
    }
    Err(ReproError::Invariant(
        "l2bm-hybrid: the calibration packet never left the idle switch".into(),
    ))
}

/// The fields [`MEASURE`] yields: those of [`Run`] but its parameters.
const FIELDS: &[&str] = &[
    "pause_frames",
    "p99_occupancy_bytes",
    "p99_slowdown_lossless",
    "p99_slowdown_lossy",
    "median_slowdown_lossless",
    "median_slowdown_lossy",
    "lossless_flows",
    "lossless_unfinished",
    "tcp_flows",
    "tcp_unfinished",
    "tcp_timeouts",
    "lossy_drops",
    "cycles",
    "marks_lossless",
    "marks_lossy",
    "cnps",
    "tail_nic_wait_share",
    "tail_nic_limiter_share",
    "tail_switch_share",
];

/// One run as a sweep measure: parameters `setup` (a [`Setup`] table), `policy` (a
/// [`Policy::name`]), `tcp_load`, `transport` (a [`Transport::name`]) and `seed` (the
/// spec's `seeds`).
pub const MEASURE: Measure = Measure {
    name: "l2bm-hybrid",
    params: &["setup", "policy", "tcp_load", "transport", "seed"],
    fields: FIELDS,
    check: |v| params(v).map(|_| ()),
    run: |v| {
        let (setup, policy, load) = params(v).map_err(|e| e.to_string())?;
        to_fields(
            &measure(&setup, policy, load).map_err(|e| e.to_string())?,
            FIELDS,
        )
    },
};

/// The run's setup (its `transport` and `seed` set), policy and TCP load.
fn params(v: &Values) -> Result<(Setup, Policy, f64), scenario::ScenarioError> {
    let bad = |k: &str, m: String| scenario::ScenarioError::new(k, m);
    let mut setup: Setup = super::hcf::setup_of(v)?;
    let names = || Policy::ALL.map(Policy::name).join(", ");
    let policy = v
        .get("policy")
        .and_then(|p| serde_json::from_value(p.clone()).ok())
        .ok_or_else(|| bad("policy", format!("allowed: {}", names())))?;
    let load = v
        .get("tcp_load")
        .and_then(|l| l.as_f64())
        .filter(|l| *l > 0.0 && *l <= 1.0)
        .ok_or_else(|| bad("tcp_load", "expected a number; allowed: (0, 1]".into()))?;
    setup.transport = v
        .get("transport")
        .and_then(|t| serde_json::from_value(t.clone()).ok())
        .ok_or_else(|| {
            let names = Transport::ALL.map(Transport::name).join(", ");
            bad("transport", format!("allowed: {names}"))
        })?;
    setup.seed = v
        .get("seed")
        .and_then(|s| s.as_u64())
        .ok_or_else(|| bad("seed", "expected an integer; allowed: 0..=2^63-1".into()))?;
    setup.validate().map_err(|e| bad("setup", e.to_string()))?;
    Ok((setup, policy, load))
}

/// The built-in sweep spec `l2bm-hybrid` of `setup`: every transport, policy and TCP load,
/// each over the seeds.
pub fn spec_text(setup: &Setup) -> String {
    let list = |xs: Vec<String>| xs.join(", ");
    format!(
        "name = \"l2bm-hybrid\"\nmeasure = \"l2bm-hybrid\"\nseeds = [{}]\ncollect = [{}]\n[parameters]\nsetup = [{}]\npolicy = [{}]\ntcp_load = [{}]\ntransport = [{}]\n",
        list(setup.seeds.iter().map(u64::to_string).collect()),
        list(FIELDS.iter().map(|f| format!("{f:?}")).collect()),
        toml::Value::try_from(setup).expect("a setup is a TOML table"),
        list(Policy::ALL.iter().map(|p| format!("{:?}", p.name())).collect()),
        list(setup.tcp_loads.iter().map(|l| format!("{l:?}")).collect()),
        list(setup.transports.iter().map(|t| format!("{:?}", t.name())).collect()),
    )
}

/// Run `policy` at `tcp_load`.
pub fn measure(setup: &Setup, policy: Policy, tcp_load: f64) -> Result<Run, ReproError> {
    setup.validate()?;
    let base = base_latency_cycles(setup, policy)?;
    let (text, tcp_flows) = setup.scenario(policy, tcp_load);
    let mut sim = Sim::new(
        &Scenario::parse(&text, "l2bm-hybrid")?,
        Overrides::default(),
    )?;
    sim.keep_messages();
    let end = setup.cycles(setup.arrivals_ms);
    let cap = end + setup.cycles(setup.max_drain_ms);
    let d = sim.plan().derived.clone();
    let sample = (setup.sample_ns * d.clock_hz)
        .div_ceil(1_000_000_000)
        .max(1);
    let check_every = setup.cycles(0.1).max(1);
    let mut occupancy = Vec::with_capacity((end / sample) as usize + 1);
    while sim.now() < cap {
        let now = sim.now();
        if now < end && now.is_multiple_of(sample) {
            occupancy.push(sim.mmu().buffered_cells() as f64 * d.cfg.cell_bytes as f64);
        }
        sim.step()?;
        if now >= end
            && now.is_multiple_of(check_every)
            && sim.message_counts().complete == sim.message_counts().arrived
            && sim.tcp_stats().iter().all(|t| t.fct_cycles.is_some())
        {
            break;
        }
    }
    let what = format!("l2bm-hybrid {} tcp load {tcp_load}", policy.name());
    super::hcf::check(&sim, &what)?;
    // The switch stores a packet before it forwards it, so the last cell of a flow departs
    // the wire time of the flow's last packet after the switch's fixed latency: `base`
    // holds a full packet's, which is replaced by the flow's last packet's.
    let tail = |bytes: u64| {
        base - wire_cycles(setup, &sim, setup.packet_bytes as u64)
            + last_packet_cycles(setup, &sim, bytes)
    };
    // Ideal lossless FCT: the server's NIC alone at line rate; no other server, no pause.
    // The open loop's messages leave one after the other (one FIFO per class), so a
    // message's ideal start waits for the ideal end of the same server's earlier messages;
    // DCQCN's queue pairs interleave (`stimulus::rdma_nic`), so its ideal is the message
    // alone, as the paper defines it.
    let fifo = setup.transport == Transport::OpenLoopReno;
    let mut nic_free = vec![0.0f64; setup.ports];
    let messages = sim.messages();
    let mut lossless = Vec::with_capacity(messages.len());
    let mut parts = Vec::with_capacity(messages.len());
    for m in &messages {
        let src = sim.plan().flows[m.flow as usize].src as usize;
        let arrival = m.arrival_cycle as f64;
        let start = if fifo {
            nic_free[src].max(arrival)
        } else {
            arrival
        };
        nic_free[src] = start + wire_cycles(setup, &sim, m.bytes);
        if let Some(f) = m.fct_cycles() {
            let ideal = nic_free[src] - arrival + tail(m.bytes);
            lossless.push(f as f64 / ideal);
            let nic_ideal =
                wire_cycles(setup, &sim, m.bytes) - last_packet_cycles(setup, &sim, m.bytes);
            parts.push(FctParts::of(m, f as f64, ideal, nic_ideal));
        }
    }
    let tail_split = FctParts::tail(&lossless, &parts);
    let ack = scenario::ns_to_cycles(setup.tcp_ack_delay_us * 1000, d.clock_hz) as f64;
    let stats = sim.tcp_stats();
    let flow_bytes: Vec<u64> = sim
        .plan()
        .flows
        .iter()
        .filter_map(|f| match f.pattern {
            scenario::Pattern::Tcp(p) => p.flow_bytes,
            _ => None,
        })
        .collect();
    let mut lossy: Vec<f64> = stats
        .iter()
        .zip(&flow_bytes)
        .filter_map(|(t, &b)| {
            t.fct_cycles
                .map(|f| f as f64 / (wire_cycles(setup, &sim, b) + tail(b) + ack))
        })
        .collect();
    let summary = sim.summary(0.0);
    let marks = |prio: u8| -> u64 {
        let queues = sim.mmu().ecn_queues().iter();
        queues.filter(|q| q.queue == prio).map(|q| q.marked).sum()
    };
    let lossless_flows = messages.len();
    Ok(Run {
        transport: setup.transport,
        policy,
        tcp_load,
        seed: setup.seed,
        marks_lossless: marks(LOSSLESS_PRIO),
        marks_lossy: marks(LOSSY_PRIO),
        cnps: sim.dcqcn_stats().iter().map(|c| c.cnps_sent).sum(),
        pause_frames: summary.pfc_pause_frames,
        p99_occupancy_bytes: percentile(&mut occupancy, 0.99) as u64,
        p99_slowdown_lossless: percentile(&mut lossless, 0.99),
        p99_slowdown_lossy: percentile(&mut lossy, 0.99),
        median_slowdown_lossless: percentile(&mut lossless, 0.5),
        median_slowdown_lossy: percentile(&mut lossy, 0.5),
        lossless_unfinished: lossless_flows - lossless.len(),
        lossless_flows,
        tcp_unfinished: tcp_flows - lossy.len(),
        tcp_flows,
        tcp_timeouts: stats.iter().map(|t| t.timeouts).sum(),
        lossy_drops: summary.cells_dropped_lossy,
        cycles: sim.now(),
        tail_nic_wait_share: tail_split.nic_wait,
        tail_nic_limiter_share: tail_split.nic_limiter,
        tail_switch_share: tail_split.switch,
    })
}

/// A lossless message's FCT in parts, cycles: the ideal (the message alone), and beyond it
/// the NIC's round robin (its packets ready, the transmitter serving other QPs), the rest
/// of the time until its last packet left the NIC (the rate limiter below line rate), and
/// the time after that (the link partner's queue while paused, the switch's queues). From
/// the NIC's record ([`stimulus::source::MessageStats::last_sent_cycle`]); a message
/// without one (the open loop) has every part 0.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct FctParts {
    fct: f64,
    nic_wait: f64,
    nic_limiter: f64,
    switch: f64,
}

impl FctParts {
    /// `m`, of FCT `fct` against `ideal`, whose last packet alone would leave its NIC
    /// `nic_ideal` after its arrival.
    fn of(m: &stimulus::source::MessageStats, fct: f64, ideal: f64, nic_ideal: f64) -> Self {
        let Some(sent) = m.last_sent_cycle else {
            return Self::default();
        };
        let nic = (sent - m.arrival_cycle) as f64;
        let nic_wait = m.nic_wait_cycles as f64;
        Self {
            fct,
            nic_wait,
            nic_limiter: nic - nic_wait - nic_ideal,
            switch: fct - nic - (ideal - nic_ideal),
        }
    }

    /// The messages at or above the 99th percentile of `slowdowns` (in the order of
    /// `parts`): each part's share of their FCTs together.
    fn tail(slowdowns: &[f64], parts: &[FctParts]) -> Self {
        let p99 = percentile(&mut slowdowns.to_vec(), 0.99);
        let tail = slowdowns.iter().zip(parts).filter(|(s, _)| **s >= p99);
        let sum = tail.fold(Self::default(), |a, (_, p)| Self {
            fct: a.fct + p.fct,
            nic_wait: a.nic_wait + p.nic_wait,
            nic_limiter: a.nic_limiter + p.nic_limiter,
            switch: a.switch + p.switch,
        });
        let share = |x: f64| if sum.fct > 0.0 { x / sum.fct } else { 0.0 };
        Self {
            fct: sum.fct,
            nic_wait: share(sum.nic_wait),
            nic_limiter: share(sum.nic_limiter),
            switch: share(sum.switch),
        }
    }
}

/// Mean, least and largest of one panel's value over the seeds of a point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    fn of(xs: impl Iterator<Item = f64> + Clone) -> Self {
        Self {
            mean: crate::sweep::stats::mean(xs.clone()),
            min: xs.clone().fold(f64::INFINITY, f64::min),
            max: xs.fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// One point (transport, policy, TCP load) over its seeds: each panel's [`Spread`].
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub transport: Transport,
    pub policy: Policy,
    pub tcp_load: f64,
    pub seeds: usize,
    pub pause_frames: Spread,
    pub p99_occupancy_bytes: Spread,
    pub p99_slowdown_lossless: Spread,
    pub p99_slowdown_lossy: Spread,
}

/// The panels: name in the CSV and plots, title, axis, value.
type Panel = (&'static str, &'static str, &'static str, fn(&Run) -> f64);
const PANELS: [Panel; 4] = [
    (
        "pause_frames",
        "PFC PAUSE frames (Table II)",
        "PAUSE frames",
        |r| r.pause_frames as f64,
    ),
    (
        "p99_occupancy_bytes",
        "99th-percentile buffer occupancy (Fig. 7(c))",
        "bytes",
        |r| r.p99_occupancy_bytes as f64,
    ),
    (
        "p99_fct_slowdown_lossless",
        "99th-percentile FCT slowdown, lossless flows (Fig. 7(a))",
        "FCT / ideal FCT",
        |r| r.p99_slowdown_lossless,
    ),
    (
        "p99_fct_slowdown_lossy",
        "99th-percentile FCT slowdown, lossy TCP flows (Fig. 7(b))",
        "FCT / ideal FCT",
        |r| r.p99_slowdown_lossy,
    ),
];

/// The runs grouped by point, in the order of `runs` (sorted: transport, policy, load).
pub fn points(runs: &[Run]) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    for group in runs
        .chunk_by(|a, b| (a.transport, a.policy, a.tcp_load) == (b.transport, b.policy, b.tcp_load))
    {
        let spread = |i: usize| Spread::of(group.iter().map(PANELS[i].3));
        out.push(Point {
            transport: group[0].transport,
            policy: group[0].policy,
            tcp_load: group[0].tcp_load,
            seeds: group.len(),
            pause_frames: spread(0),
            p99_occupancy_bytes: spread(1),
            p99_slowdown_lossless: spread(2),
            p99_slowdown_lossy: spread(3),
        });
    }
    out
}

/// One line of `l2bm.csv` ([`CSV_HEADER`]): a point's mean and min-max over its seeds.
#[derive(Debug, Default, serde::Serialize)]
pub struct CsvRow {
    pub transport: &'static str,
    pub policy: &'static str,
    pub tcp_load: Plain,
    pub seeds: usize,
    pub pause_frames_mean: Fixed<1>,
    pub pause_frames_min: u64,
    pub pause_frames_max: u64,
    pub p99_occupancy_bytes_mean: Fixed<0>,
    pub p99_occupancy_bytes_min: u64,
    pub p99_occupancy_bytes_max: u64,
    pub p99_fct_slowdown_lossless_mean: Fixed<3>,
    pub p99_fct_slowdown_lossless_min: Fixed<3>,
    pub p99_fct_slowdown_lossless_max: Fixed<3>,
    pub p99_fct_slowdown_lossy_mean: Fixed<3>,
    pub p99_fct_slowdown_lossy_min: Fixed<3>,
    pub p99_fct_slowdown_lossy_max: Fixed<3>,
}

/// The `l2bm.csv` row of a point.
pub fn csv_row(p: &Point) -> CsvRow {
    let (f, o, ll, ly) = (
        p.pause_frames,
        p.p99_occupancy_bytes,
        p.p99_slowdown_lossless,
        p.p99_slowdown_lossy,
    );
    CsvRow {
        transport: p.transport.name(),
        policy: p.policy.name(),
        tcp_load: Plain(p.tcp_load),
        seeds: p.seeds,
        pause_frames_mean: Fixed(f.mean),
        pause_frames_min: f.min as u64,
        pause_frames_max: f.max as u64,
        p99_occupancy_bytes_mean: Fixed(o.mean),
        p99_occupancy_bytes_min: o.min as u64,
        p99_occupancy_bytes_max: o.max as u64,
        p99_fct_slowdown_lossless_mean: Fixed(ll.mean),
        p99_fct_slowdown_lossless_min: Fixed(ll.min),
        p99_fct_slowdown_lossless_max: Fixed(ll.max),
        p99_fct_slowdown_lossy_mean: Fixed(ly.mean),
        p99_fct_slowdown_lossy_min: Fixed(ly.min),
        p99_fct_slowdown_lossy_max: Fixed(ly.max),
    }
}

/// Every transport, policy and TCP load of `setup` over its seeds (runs in `out/sweep/`):
/// writes `l2bm.csv` (mean and min-max per point) and the plots into `out`, returns the
/// runs sorted by transport, policy, load and seed.
pub fn sweep(
    out: &Path,
    setup: &Setup,
    progress: &mut dyn Progress,
) -> Result<Vec<Run>, ReproError> {
    setup.validate()?;
    let spec = Spec::parse(&spec_text(setup), "l2bm-hybrid", Path::new("."))?;
    let rows = super::sweep_rows(&spec, &out.join("sweep"), progress)?;
    let mut runs = rows
        .iter()
        .map(|r| {
            let (setup, policy, load) = params(&r.params)?;
            from_fields(
                &r.fields,
                [
                    ("transport", to_json(&setup.transport)?),
                    ("policy", to_json(&policy)?),
                    ("tcp_load", load.into()),
                    ("seed", setup.seed.into()),
                ],
            )
        })
        .collect::<Result<Vec<Run>, ReproError>>()?;
    let pos = |r: &Run| {
        (
            Transport::ALL.iter().position(|&t| t == r.transport),
            Policy::ALL.iter().position(|&p| p == r.policy),
        )
    };
    runs.sort_by(|a, b| {
        pos(a)
            .cmp(&pos(b))
            .then(a.tcp_load.total_cmp(&b.tcp_load))
            .then(a.seed.cmp(&b.seed))
    });
    let points = points(&runs);
    super::write_csv(&out.join("l2bm.csv"), points.iter().map(csv_row))?;
    plots(out, &points)?;
    Ok(runs)
}

/// The four panels of Fig. 7 as PNGs, the mean over the seeds per transport and policy:
/// `l2bm.png` (PAUSE frames, Fig. 7(d) / Table II), `l2bm_occupancy.png`,
/// `l2bm_fct_lossless.png`, `l2bm_fct_lossy.png`.
fn plots(out: &Path, points: &[Point]) -> Result<(), ReproError> {
    let files = [
        "l2bm.png",
        "l2bm_occupancy.png",
        "l2bm_fct_lossless.png",
        "l2bm_fct_lossy.png",
    ];
    let means: [fn(&Point) -> f64; 4] = [
        |p| p.pause_frames.mean,
        |p| p.p99_occupancy_bytes.mean,
        |p| p.p99_slowdown_lossless.mean,
        |p| p.p99_slowdown_lossy.mean,
    ];
    for ((file, (_, title, y, _)), value) in files.iter().zip(PANELS).zip(means) {
        let mut series = Vec::new();
        for t in Transport::ALL {
            for p in Policy::ALL {
                let pts: Vec<(f64, f64)> = points
                    .iter()
                    .filter(|q| q.transport == t && q.policy == p)
                    .map(|q| (q.tcp_load, value(q)))
                    .collect();
                if !pts.is_empty() {
                    series.push(Series {
                        name: format!("{} ({})", p.label(), t.name()),
                        points: pts,
                        line: true,
                    });
                }
            }
        }
        xy_chart(
            &out.join(file),
            &format!("L2BM IV-A: {title}, mean over seeds"),
            "TCP load",
            y,
            &series,
        )?;
    }
    Ok(())
}

/// `mean [min-max]` of a spread, with `d` decimals.
fn show(s: Spread, d: usize) -> String {
    format!("{:.d$} [{:.d$}-{:.d$}]", s.mean, s.min, s.max)
}

/// The text report of a sweep.
pub fn report(setup: &Setup, runs: &[Run], out: &Path) -> String {
    let mut rep = format!(
        "L2BM IV-A / Table II: {} x {} Gb/s ports ({} lossless servers at load {}, {} TCP servers), buffer {} B (lossy segment {} B),\n\
         web-search sizes / {}, {} B packets, {} ms of arrivals, hybrid ingress pool; seeds {:?};\n\
         dcqcn-dctcp: DCQCN's RED curve on the lossless queues, DCTCP K = {} B on the lossy ones\n\
         mean [min-max] over the seeds\n\n",
        setup.ports,
        setup.port_gbps,
        setup.ports / 2,
        setup.lossless_load,
        setup.ports / 2,
        setup.buffer_bytes,
        setup.lossy_pool_bytes,
        setup.size_divisor,
        setup.packet_bytes,
        setup.arrivals_ms,
        setup.seeds,
        setup.dctcp_k_bytes(),
    );
    let _ = writeln!(
        rep,
        "{:<14} {:<13} {:>5} {:>22} {:>30} {:>26} {:>26}",
        "transport",
        "policy",
        "load",
        "pauses",
        "p99 occupancy B",
        "p99 slowdown LL",
        "p99 slowdown TCP"
    );
    for p in points(runs) {
        let _ = writeln!(
            rep,
            "{:<14} {:<13} {:>5} {:>22} {:>30} {:>26} {:>26}",
            p.transport.name(),
            p.policy.name(),
            p.tcp_load,
            show(p.pause_frames, 1),
            show(p.p99_occupancy_bytes, 0),
            show(p.p99_slowdown_lossless, 2),
            show(p.p99_slowdown_lossy, 2),
        );
    }
    let _ = writeln!(
        rep,
        "\nlossless p99 tail, share of its FCT (mean over seeds): transport policy load | NIC round robin | NIC rate limiter | after the NIC | ideal"
    );
    let runs_with_nic = runs.iter().filter(|r| r.transport == Transport::DcqcnDctcp);
    for group in runs_with_nic
        .collect::<Vec<_>>()
        .chunk_by(|a, b| (a.policy, a.tcp_load) == (b.policy, b.tcp_load))
    {
        let mean = |f: fn(&Run) -> f64| crate::sweep::stats::mean(group.iter().map(|r| f(r)));
        let (w, l, s) = (
            mean(|r| r.tail_nic_wait_share),
            mean(|r| r.tail_nic_limiter_share),
            mean(|r| r.tail_switch_share),
        );
        let _ = writeln!(
            rep,
            "{} {} {} | {w:.3} | {l:.3} | {s:.3} | {:.3}",
            group[0].transport.name(),
            group[0].policy.name(),
            group[0].tcp_load,
            1.0 - w - l - s
        );
    }
    let _ = writeln!(
        rep,
        "\nper run: transport policy load seed | unfinished LL TCP | RTOs | lossy drops | CE marks LL lossy | CNPs"
    );
    for r in runs {
        let _ = writeln!(
            rep,
            "{} {} {} {} | {} {} | {} | {} | {} {} | {}",
            r.transport.name(),
            r.policy.name(),
            r.tcp_load,
            r.seed,
            r.lossless_unfinished,
            r.tcp_unfinished,
            r.tcp_timeouts,
            r.lossy_drops,
            r.marks_lossless,
            r.marks_lossy,
            r.cnps
        );
    }
    let _ = writeln!(
        rep,
        "\npaper Table II (ns-3, PAUSE frames): load  DT(1/8)  DT2(1/2)  L2BM"
    );
    for (load, [dt, dt2, l2bm]) in PAPER_TABLE_II {
        let _ = writeln!(rep, "{load:>41} {dt:>8} {dt2:>9} {l2bm:>5}");
    }
    let _ = writeln!(
        rep,
        "wrote {} and l2bm.png, l2bm_occupancy.png, l2bm_fct_lossless.png, l2bm_fct_lossy.png",
        out.join("l2bm.csv").display()
    );
    rep
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let setup = Setup::scaled();
    let runs = sweep(out, &setup, progress)?;
    Ok(report(&setup, &runs, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stimulus::source::MessageStats;

    fn message(arrival: u64, last_sent: Option<u64>, nic_wait: u64) -> MessageStats {
        MessageStats {
            flow: 0,
            bytes: 10_000,
            packets: 10,
            first_seq: 0,
            arrival_cycle: arrival,
            last_departure_cycle: None,
            delivered_packets: 10,
            last_sent_cycle: last_sent,
            nic_wait_cycles: nic_wait,
        }
    }

    /// The parts add up to the FCT above the ideal's switch part: the NIC's wait and
    /// limiter beyond its ideal, and the rest after the NIC; a lone message at line rate
    /// has no NIC part, and a message without the NIC's record (open loop) none at all.
    #[test]
    fn a_messages_fct_splits_into_nic_and_switch_parts() {
        // Arrived at 100, last packet sent at 180 (ideal 50 after arrival, 20 of waiting
        // for other QPs), FCT 400 against an ideal of 120.
        let p = FctParts::of(&message(100, Some(180), 20), 400.0, 120.0, 50.0);
        assert_eq!((p.nic_wait, p.nic_limiter, p.switch), (20.0, 10.0, 250.0));
        assert_eq!(p.nic_wait + p.nic_limiter + p.switch, p.fct - 120.0);
        let alone = FctParts::of(&message(100, Some(150), 0), 300.0, 120.0, 50.0);
        assert_eq!((alone.nic_wait, alone.nic_limiter), (0.0, 0.0));
        let open = FctParts::of(&message(100, None, 0), 300.0, 120.0, 50.0);
        assert_eq!(open, FctParts::default());
    }

    /// The tail's shares are of the FCTs of the messages at or above the 99th percentile
    /// slowdown, together; the others do not count.
    #[test]
    fn the_tail_shares_are_of_the_slowest_messages() {
        let slow = FctParts {
            fct: 100.0,
            nic_wait: 10.0,
            nic_limiter: 0.0,
            switch: 80.0,
        };
        let fast = FctParts {
            fct: 10.0,
            nic_wait: 10.0,
            ..FctParts::default()
        };
        // Of 100 slowdowns the 99th percentile is the 99th smallest: the two slow ones.
        let mut slowdowns = vec![1.0; 98];
        slowdowns.extend([50.0, 50.0]);
        let mut parts = vec![fast; 98];
        parts.extend([slow, slow]);
        let t = FctParts::tail(&slowdowns, &parts);
        assert_eq!((t.fct, t.nic_wait, t.switch), (200.0, 0.1, 0.8));
    }
}
