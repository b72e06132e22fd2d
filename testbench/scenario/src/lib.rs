//! Scenario files: the TOML schema (documented in `docs/config.md`), profiles and validation.
//!
//! A scenario is read in two steps. [`Scenario::parse`] checks the *shape* of the file (known
//! keys, value types) section by section, so that every error names the offending key as a
//! dotted path (`flows[3].dst`), which a whole-document serde error cannot do. [`Scenario::plan`]
//! then checks the *values* against the switch they run on (ports exist, rates fit the line)
//! and resolves defaults into a [`Plan`] the simulator can run without further checks.
//!
//! The bottom floor of the testbench: it knows the model's configuration (`hw-model`) and
//! nothing of the engines that play a scenario (`stimulus`), the run (`switch-run`) or the
//! studies (`study`). What every engine takes is in [`params`]; a name or a file on a command
//! line becomes a scenario's text through [`resolve_scenario`].

mod assign;
pub mod builtin;
mod headroom;
pub mod int_keys;
pub mod params;
mod plan;
pub mod resolve;
pub mod scenario_file;
pub mod suggest;

pub use assign::{parse_table, set_key};
pub use headroom::{
    default_proc_cycles, eta_from_min_packet, eta_report, headroom_findings, link_eq1_bytes,
    HeadroomWarning,
};
pub use resolve::{resolve_scenario, ResolveError, ScenarioSource};

use assign::defined_twice;
use hw_model::config::{EcmConfig, EcnConfig, EcnCurveConfig, HcfConfig};
use hw_model::{ConfigError, Derived, Ecn, FiveTuple, PacketCost, PfcFrame, Policy, SwitchConfig};
use params::{CcLaw, DcqcnParams, EcmRpParams, IntCcParams, Ns2Params, QbitDirection};
use plan::{connection_tuple, plan_flow, plan_links, plan_pfc};
use scenario_file::{check_flow_count, Layout};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::ops::RangeInclusive;
use thiserror::Error;

/// Largest run length accepted, cycles: keeps `cycle * ticks` of the VCD time in 64 bits.
pub const MAX_CYCLES: u64 = 1 << 40;
/// Longest link propagation and processing delay, ns.
pub const MAX_LINK_NS: u64 = 1_000_000;
/// Most flows in a scenario (`crate::scenario_file` measures what they cost).
pub const MAX_FLOWS: usize = 1 << 17;
/// Smallest Ethernet frame the sources emit, bytes.
pub const MIN_PACKET_BYTES: u32 = 64;

/// Invalid input: names the field (dotted path into the scenario) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{field}: {message}")]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

impl ScenarioError {
    /// A message that names an unknown word and lists the allowed ones (serde's or a
    /// profile's or policy's) gets the closest allowed name ([`suggest`]); serde's type
    /// error on an integer key (`expected usize`) gets the key's range.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        let field = field.into();
        let mut message = suggest::suggest_in(&message.into());
        if message.starts_with("invalid type: ") && !message.contains("; allowed: ") {
            if let Some(range) = int_keys::allowed(&field) {
                message += &format!("; allowed: an integer, {range}");
            }
        }
        Self { field, message }
    }
}

impl From<ConfigError> for ScenarioError {
    fn from(e: ConfigError) -> Self {
        Self::new(e.field, e.message)
    }
}

/// `[run]`: how long and with which seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Core clock cycles to simulate, `1..=2^40`.
    pub cycles: u64,
    /// Seed of every random draw (sizes, Poisson arrivals): any u64, from 2^63 on written
    /// as a string (`int_keys::seed`).
    #[serde(default = "default_seed", with = "crate::int_keys::seed")]
    pub seed: u64,
    /// A lossless drop is a failed run (exit code 1).
    #[serde(default)]
    pub expect_lossless: bool,
}

fn default_seed() -> u64 {
    1
}

/// How a link partner picks the next class to transmit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Arbitration {
    /// Round robin over the unpaused non-empty classes, one packet each.
    #[default]
    RoundRobin,
    /// Highest priority number first.
    Strict,
}

/// `[[links]]`: overrides for the link into one ingress port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub port: usize,
    /// One-way propagation delay, ns; default `switch.link_delay_ns`.
    pub propagation_ns: Option<u32>,
    /// Time the partner takes to act on a received PFC frame, ns; default: the part of
    /// Eq. 1's 3840 B left after the PFC frame and two wire overheads, at line rate.
    pub processing_ns: Option<u32>,
    #[serde(default)]
    pub arbitration: Arbitration,
}

/// Arrival process of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatternKind {
    /// Packets at `rate_gbps` from `start_cycle` to `stop_cycle`.
    Constant,
    /// `rate_gbps` for `on_cycles`, silent for `off_cycles`, repeated.
    OnOff,
    /// `burst_bytes` handed to the partner at once at `start_cycle`.
    Burst,
    /// Messages with sizes from `message_cdf`, Poisson arrivals at mean load `rate_gbps`.
    Poisson,
    /// A closed-loop TCP-Reno-like sender (`stimulus::tcp`), written
    /// `pattern = { tcp = { ... } }`: its parameters sit in the pattern's own table, so
    /// that `FlowSpec` keeps its fields.
    Tcp(TcpSpec),
    /// A DCQCN RoCEv2 sender and receiver (`stimulus::dcqcn`), written
    /// `pattern = { dcqcn = { ... } }` with the paper's parameters in its table.
    Dcqcn(DcqcnSpec),
    /// An HPCC sender (`stimulus::hpcc`), written `pattern = { hpcc = { ... } }`: rate and
    /// window from the switch's INT stamps (`[switch] int = true`).
    Hpcc(IntCcSpec),
    /// A PowerTCP sender (`stimulus::powertcp`) on the INT stamps.
    #[serde(rename = "powertcp")]
    PowerTcp(IntCcSpec),
    /// A theta-PowerTCP sender (`stimulus::powertcp::ThetaPowerTcp`) on RTTs alone.
    #[serde(rename = "theta_powertcp")]
    ThetaPowerTcp(IntCcSpec),
}

impl PatternKind {
    /// The pattern's name in error messages.
    fn label(&self) -> &'static str {
        match self {
            Self::Constant => "Constant",
            Self::OnOff => "OnOff",
            Self::Burst => "Burst",
            Self::Poisson => "Poisson",
            Self::Tcp(_) => "Tcp",
            Self::Dcqcn(_) => "Dcqcn",
            Self::Hpcc(_) => "Hpcc",
            Self::PowerTcp(_) => "PowerTcp",
            Self::ThetaPowerTcp(_) => "ThetaPowerTcp",
        }
    }
}

/// Parameters of a `tcp` flow as written (times in µs; the ns-2 keys in seconds, as ns-2
/// writes them); defaults in [`TcpParams`] and [`Ns2Params::DEFAULT`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// Delay from a packet's last cell leaving the switch to its ACK reaching the sender.
    pub base_rtt_us: Option<u64>,
    /// Retransmission timeout before back-off.
    pub min_rto_us: Option<u64>,
    /// Cap of the exponential back-off.
    pub max_rto_us: Option<u64>,
    /// Initial congestion window, packets.
    pub init_cwnd: Option<u32>,
    /// Bytes to deliver (a finite flow, with a completion time); default: long-lived.
    pub flow_bytes: Option<u64>,
    /// Karn's rule (RFC 6298 section 3 and the note after (5.7)): keep the backed-off RTO
    /// until a packet sent once, first after the last timeout, is acknowledged; default off.
    pub karn: Option<bool>,
    /// Congestion control: `reno` (default) or `dctcp` (`stimulus::tcp::Dctcp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<Cc>,
    /// DCTCP's gain `g = 2^-dctcp_shift_g` (0..=16; default 4, g = 1/16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dctcp_shift_g: Option<u32>,
    /// `model` (default) or `ns2`: ns-2.35's timer, window cap and start-up, with the
    /// keys of [`Ns2Keys`] (`stimulus::tcp::Ns2Timer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flavor: Option<Flavor>,
    /// ns-2's keys, in the same table (an unknown key is still refused, named).
    #[serde(flatten)]
    pub ns2: Ns2Keys,
}

/// ns-2.35's keys of a `tcp` flow with `flavor = "ns2"` as written, seconds for times
/// (defaults in [`Ns2Params::DEFAULT`], ranges in `plan_ns2`); also the `ns2` overrides of
/// the HCF setups (`study::reproduce::hcf_starvation::Setup`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ns2Keys {
    /// `window_`, packets.
    #[serde(default, rename = "window_", skip_serializing_if = "Option::is_none")]
    pub window: Option<u32>,
    /// `windowInit_`, packets.
    #[serde(
        default,
        rename = "windowInit_",
        skip_serializing_if = "Option::is_none"
    )]
    pub window_init: Option<u32>,
    /// `syn_`: packet 0 is a SYN sent with a window of 1 (with `delay_growth_`).
    #[serde(default, rename = "syn_", skip_serializing_if = "Option::is_none")]
    pub syn: Option<bool>,
    /// `tcpTick_`, the timer's granularity.
    #[serde(default, rename = "tcpTick_", skip_serializing_if = "Option::is_none")]
    pub tcp_tick_s: Option<f64>,
    /// `rtxcur_init_`: the RTO before the first RTT sample.
    #[serde(
        default,
        rename = "rtxcur_init_",
        skip_serializing_if = "Option::is_none"
    )]
    pub rtxcur_init_s: Option<f64>,
    /// `minrto_` and `maxrto_`: the bounds of the (backed-off) RTO.
    #[serde(default, rename = "minrto_", skip_serializing_if = "Option::is_none")]
    pub minrto_s: Option<f64>,
    #[serde(default, rename = "maxrto_", skip_serializing_if = "Option::is_none")]
    pub maxrto_s: Option<f64>,
}

impl Ns2Keys {
    /// None given (`serde(skip_serializing_if)`).
    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }

    /// The given keys as `, key = value` for a flow's `tcp` table, in the order above.
    pub fn toml(&self) -> String {
        let lines = toml::to_string(self).expect("ns-2 keys are a flat table");
        lines.lines().map(|l| format!(", {l}")).collect()
    }
}

/// Parameters of a `dcqcn` flow as written, named as in the DCQCN paper (section 3 and 5);
/// defaults in [`DcqcnParams`], ranges in `plan_dcqcn`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnSpec {
    /// `g`, the gain of `alpha`.
    pub g: Option<f64>,
    /// `K`, the alpha timer, µs.
    pub k_us: Option<u64>,
    /// `T`, the rate-increase timer, µs.
    pub t_us: Option<u64>,
    /// `B`, the byte counter, bytes.
    pub b_bytes: Option<u64>,
    /// `F`, fast-recovery steps.
    pub f: Option<u32>,
    /// `R_AI`, additive increase, Mb/s.
    pub r_ai_mbps: Option<u64>,
    /// `R_HAI`, hyper increase, Mb/s.
    pub r_hai_mbps: Option<u64>,
    /// `N`, the least interval between CNPs of a flow, µs.
    pub n_us: Option<u64>,
    /// Floor of the rate, Mb/s.
    pub min_rate_mbps: Option<u64>,
    /// From a marked packet leaving the switch to its CNP reaching the sender, µs.
    pub cnp_delay_us: Option<u64>,
    /// With `message_cdf`: a queue pair per message (`message`, the ns-3 simulators' NIC,
    /// `stimulus::rdma_nic`) or one per flow (`pair`, `stimulus::dcqcn`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qp: Option<QpMode>,
    /// `qp = "message"`: the RP's rate-decrease interval, µs (ns-3's
    /// `RATE_DECREASE_INTERVAL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decrease_us: Option<u64>,
    /// `qp = "message"`: the receiver's least interval between NACKs for one expected
    /// packet, µs (ns-3's `NACKGenerationInterval`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nack_us: Option<u64>,
}

/// Parameters of an `hpcc`, `powertcp` or `theta_powertcp` flow as written; defaults in
/// [`params::IntCcParams`] (ns3-datacenter's, cited in docs/int.md), ranges in
/// `plan_int_cc`. Each law refuses the keys it does not read.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntCcSpec {
    /// The base RTT `T`, µs: the ACK's delay after the packet's last cell leaves the
    /// switch, the window `line rate x T` and the laws' time scale.
    pub base_rtt_us: Option<u64>,
    /// Additive increase, Mb/s: HPCC's `W_AI` as a rate (`RATE_AI`), PowerTCP's `beta`.
    pub rate_ai_mbps: Option<u64>,
    /// Floor of the rate, Mb/s (`MIN_RATE`).
    pub min_rate_mbps: Option<u64>,
    /// HPCC's `eta` and PowerTCP's target of its normalised power (`U_TARGET`).
    pub u_target: Option<f64>,
    /// HPCC's `maxStage` (`MI_THRESH`).
    pub mi_thresh: Option<u32>,
    /// PowerTCP's `gamma`: the weight of the new rate in its average.
    pub gamma: Option<f64>,
}

/// How a `dcqcn` flow with messages maps its messages to queue pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QpMode {
    /// A queue pair per message, served round robin by the source's NIC, each with its own
    /// rate limiter and DCQCN state, as ns-3's RDMA NIC (`RdmaHw`, `QbbNetDevice`).
    #[default]
    Message,
    /// One queue pair per flow: its messages wait in order behind each other.
    Pair,
}

impl QpMode {
    /// The key's value.
    pub fn name(self) -> &'static str {
        match self {
            Self::Message => "message",
            Self::Pair => "pair",
        }
    }
}

/// Which TCP a `tcp` flow runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// The model's (`stimulus::tcp` module doc).
    #[default]
    Model,
    /// ns-2.35's one-way TCP defaults (`stimulus::tcp::Ns2Timer`).
    Ns2,
}

/// The congestion control of a `tcp` flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cc {
    /// Reno with NewReno's partial ACKs (`stimulus::tcp::Reno`); ECN echoes are ignored.
    #[default]
    Reno,
    /// DCTCP (Alizadeh et al. 2010): ECT(0) packets, the receiver echoes CE, the sender
    /// cuts `cwnd` by `alpha / 2` once per window.
    Dctcp,
}

/// Validated parameters of a `tcp` flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpParams {
    pub base_rtt_us: u64,
    pub min_rto_us: u64,
    pub max_rto_us: u64,
    pub init_cwnd: u32,
    pub flow_bytes: Option<u64>,
    /// Only the ACK of a packet sent once, first after the last timeout, ends the RTO
    /// back-off (`stimulus::tcp` module doc).
    pub karn: bool,
    /// DCTCP's `log2(1 / g)`; `None`: Reno.
    pub dctcp_shift_g: Option<u32>,
    /// `flavor = "ns2"`: its parameters, times in ns; `None`: the model's TCP.
    pub ns2: Option<Ns2Params>,
}

impl TcpParams {
    /// Default base RTT, µs: a data-centre round trip.
    pub const BASE_RTT_US: u64 = 10;
    /// Default minimum RTO, µs: the 1 ms data-centre setting (Linux uses 200 ms).
    pub const MIN_RTO_US: u64 = 1000;
    /// Default cap of the back-off, as a multiple of `min_rto_us`.
    pub const MAX_RTO_FACTOR: u64 = 64;
    /// Default initial window, packets (RFC 6928).
    pub const INIT_CWND: u32 = 10;
    /// Default DCTCP gain, `g = 1/16` (DCTCP section 3.1 and 3.4).
    pub const DCTCP_SHIFT_G: u32 = 4;
}

/// `[[flows]]`: one stream of packets from an ingress to an egress port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub src: usize,
    pub dst: usize,
    pub prio: u8,
    /// Fixed packet size (for `poisson`: the largest packet a message is cut into).
    pub size_bytes: Option<u32>,
    /// Packet sizes as a step CDF: `[[bytes, P(size <= bytes)], ...]`.
    pub size_cdf: Option<Vec<(u32, f64)>>,
    pub pattern: PatternKind,
    /// Offered rate, Gb/s; default: the source port's line rate.
    pub rate_gbps: Option<f64>,
    pub on_cycles: Option<u64>,
    pub off_cycles: Option<u64>,
    pub burst_bytes: Option<u64>,
    /// Message sizes as a piecewise-linear CDF: `[[bytes, P(size <= bytes)], ...]`.
    pub message_cdf: Option<Vec<(u64, f64)>>,
    #[serde(default)]
    pub start_cycle: u64,
    /// First cycle with no new packet; default: never stop.
    pub stop_cycle: Option<u64>,
    /// This flow is flow N's connection on another path (e.g. re-routed to another egress
    /// port): its packets carry flow N's 5-tuple, so an ECM reaction point gives both one
    /// FlowID. Default: the flow's own 5-tuple.
    pub connection_of: Option<usize>,
    /// The flow's packets are ECN-capable (ECT(0), RFC 3168), so a marking queue
    /// (`[switch.ecn]`) may set CE. Default off (left out of the scenario hash while off).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,
}

/// `[[pfc_script]]`: a PFC frame the downstream device of `port` sends into the switch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcScriptSpec {
    pub cycle: u64,
    pub port: usize,
    /// Classes the frame carries (leave out for a port-level frame, which carries all).
    #[serde(default)]
    pub classes: Vec<u8>,
    /// Pause time of every listed class in 512-bit quanta; 0 = RESUME.
    pub quanta: u16,
    /// A DSH port-level frame (pauses or resumes every class of the port, Fig. 9).
    #[serde(default)]
    pub port_level: bool,
}

/// `[ecm_rp]`: the ECM reaction point of every NIC (`stimulus::reaction_point`,
/// docs/ecm.md). Every key is optional; ranges are checked by [`EcmRpSpec::params`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcmRpSpec {
    /// `n`, fine rate limiters per NIC (1..=64, default 16).
    pub fine_limiters: Option<u32>,
    /// Width of the compressed FlowID (1..=32, default 12).
    pub flowid_bits: Option<u32>,
    /// `w`, weight of `Qdelta` in `Fb` (0.125..=8 in steps of 0.125, default 2).
    pub w: Option<f64>,
    /// `Gi`, increase gain (2^-16..=255.99998, default 4).
    pub gi: Option<f64>,
    /// `Gd`, decrease gain (2^-24..=1 - 2^-24, default 1/1024).
    pub gd: Option<f64>,
    /// `alpha`, largest decrease (2^-16..=1 - 2^-16, default 0.5).
    pub alpha: Option<f64>,
    /// `beta`, largest increase as a fraction of `C` (2^-16..=1 - 2^-16, default 0.05).
    pub beta: Option<f64>,
    /// `Ri / C`, the initial rate of a new limiter (2^-16..=1, default 0.5).
    pub ri_fraction: Option<f64>,
    /// `Ru`, rate unit, Mb/s (1..=100, default 1).
    pub ru_mbps: Option<u64>,
    /// `Rd`, self-increase step, Mb/s (1..=100, default 1).
    pub rd_mbps: Option<u64>,
    /// `Td`, self-increase period, us (1..=10000, default 1000).
    pub td_us: Option<u64>,
    /// `Rmin`, restart rate after an ECM(0,0) timeout, Mb/s (1..=1000, default 100).
    pub rmin_mbps: Option<u64>,
    /// `Tmax`, range of the ECM(0,0) random timer, us (1..=1000000, default 10).
    pub tmax_us: Option<u64>,
    /// `Wrtt`: the RTT average weighs a new sample `2^-wrtt` (0..=15, default 3).
    pub wrtt: Option<u32>,
    /// CM-Tag timer unit `2^unit` us (0..=15, default 0).
    pub unit: Option<u32>,
    /// With the Q bit, the sign that picks increase or decrease: `qdelta` (text, default)
    /// or `fb` (pseudo-code).
    pub qbit_direction: Option<QbitDirection>,
}

impl EcmRpSpec {
    /// Check every value and convert to the register formats; errors name `ecm_rp.KEY`.
    pub fn params(&self) -> Result<EcmRpParams, ScenarioError> {
        let def = EcmRpParams::default();
        let field = |k: &str| format!("ecm_rp.{k}");
        let int = |k: &str, v: Option<u64>, lo: u64, hi: u64, d: u64| match v {
            None => Ok(d),
            Some(v) if (lo..=hi).contains(&v) => Ok(v),
            Some(v) => Err(ScenarioError::new(
                field(k),
                format!("{v} is out of range; allowed: {lo}..={hi}"),
            )),
        };
        // A fraction rounded to `frac` bits; the stored value must be in lo..=hi steps.
        let fixed = |k: &str, v: Option<f64>, frac: u32, lo: u64, hi: u64, range: &str, d: u32| {
            let Some(x) = v else { return Ok(d) };
            let q = (x * (1u64 << frac) as f64).round();
            if x.is_finite() && q >= lo as f64 && q <= hi as f64 {
                Ok(q as u32)
            } else {
                Err(ScenarioError::new(
                    field(k),
                    format!(
                        "{x} is out of range; allowed: {range} (stored with {frac} fraction bits)"
                    ),
                ))
            }
        };
        let w_q3 = match self.w {
            None => def.w_q3,
            Some(x) => {
                let q = x * 8.0;
                if !(x.is_finite() && q.fract() == 0.0 && (1.0..=64.0).contains(&q)) {
                    return Err(ScenarioError::new(
                        field("w"),
                        format!("{x} is out of range; allowed: 0.125..=8 in steps of 0.125"),
                    ));
                }
                q as u32
            }
        };
        let mbps = 1_000_000;
        Ok(EcmRpParams {
            fine_limiters: int(
                "fine_limiters",
                self.fine_limiters.map(u64::from),
                1,
                params::MAX_FINE as u64,
                def.fine_limiters as u64,
            )? as u8,
            flowid_bits: int(
                "flowid_bits",
                self.flowid_bits.map(u64::from),
                1,
                32,
                def.flowid_bits as u64,
            )? as u8,
            w_q3,
            gi_q16: fixed(
                "gi",
                self.gi,
                params::GI_FRAC,
                1,
                (1 << 24) - 1,
                "2^-16..=255.99998",
                def.gi_q16,
            )?,
            gd_q24: fixed(
                "gd",
                self.gd,
                params::GD_FRAC,
                1,
                (1 << 24) - 1,
                "2^-24..=1 - 2^-24",
                def.gd_q24,
            )?,
            alpha_q16: fixed(
                "alpha",
                self.alpha,
                params::AB_FRAC,
                1,
                (1 << 16) - 1,
                "2^-16..=1 - 2^-16",
                def.alpha_q16,
            )?,
            beta_q16: fixed(
                "beta",
                self.beta,
                params::AB_FRAC,
                1,
                (1 << 16) - 1,
                "2^-16..=1 - 2^-16",
                def.beta_q16,
            )?,
            ri_q16: fixed(
                "ri_fraction",
                self.ri_fraction,
                params::AB_FRAC,
                1,
                1 << 16,
                "2^-16..=1",
                def.ri_q16,
            )?,
            ru_bps: int("ru_mbps", self.ru_mbps, 1, 100, def.ru_bps / mbps)? * mbps,
            rd_bps: int("rd_mbps", self.rd_mbps, 1, 100, def.rd_bps / mbps)? * mbps,
            td_us: int("td_us", self.td_us, 1, 10_000, def.td_us as u64)? as u32,
            rmin_bps: int("rmin_mbps", self.rmin_mbps, 1, 1000, def.rmin_bps / mbps)? * mbps,
            tmax_us: int("tmax_us", self.tmax_us, 1, 1_000_000, def.tmax_us as u64)? as u32,
            wrtt: int("wrtt", self.wrtt.map(u64::from), 0, 15, def.wrtt as u64)? as u8,
            unit: int("unit", self.unit.map(u64::from), 0, 15, def.unit as u64)? as u8,
            qbit_direction: self.qbit_direction.unwrap_or(def.qbit_direction),
        })
    }
}

/// `[fabric]`: a network of switches instead of one (docs/fabric.md, run by the `fabric`
/// crate). Every switch takes `[switch]`, its ports and speeds from its links.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricSpec {
    /// An ns-3 topology file, relative to the scenario file; or `links` (the file's
    /// content inline), `leaf_spine`, `clos` or `fat_tree`.
    pub topology: Option<String>,
    pub links: Option<LinksSpec>,
    pub leaf_spine: Option<LeafSpineSpec>,
    pub clos: Option<ClosSpec>,
    pub fat_tree: Option<FatTreeSpec>,
    /// An ns-3 flow file, relative to the scenario file; or `[[fabric.workload]]`.
    pub flow_file: Option<String>,
    #[serde(default)]
    pub workload: Vec<WorkloadSpec>,
    /// `[[fabric.transport]]`: what each priority group's flows run (default open loop).
    #[serde(default)]
    pub transport: Vec<TransportSpec>,
    /// The priority group of ACKs and CNPs (0..=7; default: the data's own).
    pub feedback_pg: Option<u8>,
    /// The priority group of the switches' ECM frames (0..=7; default 0). Left out of the
    /// serialized scenario when unset, so the hash of a scenario without it is the one it
    /// had before the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecm_pg: Option<u8>,
    /// `[[fabric.switch]]`: configurations of some switches other than `[switch]`'s,
    /// parsed with `[switch]` (so not by serde, but serialized into the scenario's hash).
    #[serde(skip_deserializing)]
    pub switch: Vec<SwitchOverride>,
    /// Links failed, each by its two end nodes.
    #[serde(default)]
    pub failed_links: Vec<[u32; 2]>,
    /// ECMP's fabric seed.
    #[serde(default = "default_ecmp_seed")]
    pub ecmp_seed: u32,
    /// Cycles a cycle of paused queues must stand still to be a deadlock (default 20000).
    pub deadlock_hold_cycles: Option<u64>,
    /// End the run when a deadlock is found.
    #[serde(default)]
    pub stop_at_deadlock: bool,
    /// Each switch's buffer occupancy over time, one peak per this many µs, in the summary.
    pub occupancy_interval_us: Option<u64>,
}

fn default_ecmp_seed() -> u32 {
    1
}

/// `[[fabric.switch]]`: the switches `nodes` (node ids) or those of `layer` (1: the
/// switches with hosts, 2: those one hop above, ...) take `config`: `[switch]` with this
/// entry's other keys in place of its own. A later entry wins.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SwitchOverride {
    pub nodes: Vec<u32>,
    pub layer: Option<u32>,
    pub config: SwitchConfig,
}

/// `[[fabric.switch]]` entries (`value`, if given) over the `[switch]` table `base`.
fn switch_overrides(
    value: Option<toml::Value>,
    base: &toml::Table,
) -> Result<Vec<SwitchOverride>, ScenarioError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let toml::Value::Array(entries) = value else {
        return Err(ScenarioError::new(
            "fabric.switch",
            "not an array of tables; allowed: [[fabric.switch]] entries",
        ));
    };
    let mut out = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let at = |k: &str| format!("fabric.switch[{i}].{k}");
        let toml::Value::Table(mut t) = entry else {
            return Err(ScenarioError::new(
                at("").trim_end_matches('.'),
                "not a table",
            ));
        };
        let nodes: Vec<u32> = match t.remove("nodes") {
            None => Vec::new(),
            Some(v) => v.try_into().map_err(|_| {
                ScenarioError::new(at("nodes"), "not a list of node ids; allowed: [0, 1, ...]")
            })?,
        };
        let layer = match t.remove("layer") {
            None => None,
            Some(toml::Value::Integer(l)) if (1..=16).contains(&l) => Some(l as u32),
            Some(v) => {
                return Err(ScenarioError::new(
                    at("layer"),
                    format!("{v}; allowed: 1..=16"),
                ))
            }
        };
        if nodes.is_empty() == layer.is_none() {
            return Err(ScenarioError::new(
                at("nodes"),
                "give exactly one of nodes (a list of switch ids) and layer",
            ));
        }
        let mut merged = base.clone();
        merged.extend(t);
        let config = parse_switch(merged).map_err(|e| {
            let key = e
                .field
                .strip_prefix("switch.")
                .unwrap_or(&e.field)
                .to_string();
            ScenarioError::new(at(&key), e.message)
        })?;
        out.push(SwitchOverride {
            nodes,
            layer,
            config,
        });
    }
    Ok(out)
}

/// `[fabric.links]`: a topology written in the scenario, as a topology file has it: `nodes`
/// (hosts and switches, ids `0..nodes`), the `switches`' ids, and `list`, one
/// `[src, dst, gbps, delay_ns]` per link (ports in list order, as the file's lines).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinksSpec {
    pub nodes: u32,
    pub switches: Vec<u32>,
    pub list: Vec<[u64; 4]>,
}

/// `[fabric.clos]`: a three-layer Clos (`fabric::generate::Clos`), rates in Gb/s, delays
/// in ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosSpec {
    pub pods: u32,
    pub tors_per_pod: u32,
    pub aggs_per_pod: u32,
    pub cores: u32,
    pub servers_per_tor: u32,
    pub host_link_gbps: u64,
    pub host_link_delay_ns: u64,
    pub tor_agg_link_gbps: u64,
    pub tor_agg_link_delay_ns: u64,
    pub agg_core_link_gbps: u64,
    pub agg_core_link_delay_ns: u64,
}

/// `[fabric.fat_tree]`: a k-ary fat-tree (`fabric::generate::Clos::fat_tree`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeSpec {
    pub k: u32,
    pub host_link_gbps: u64,
    pub fabric_link_gbps: u64,
    pub link_delay_ns: u64,
}

/// The workload generators of `[[fabric.workload]]` (`fabric::workload`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    Poisson,
    FanIn,
    FanInBursts,
    Permutation,
    AllToAll,
}

/// `[[fabric.workload]]`: flows from a generator; which keys apply depends on `kind`
/// (docs/fabric.md), the others are refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub kind: WorkloadKind,
    /// Priority group and destination port of the flows (default 3 and 100).
    pub pg: Option<u8>,
    pub dport: Option<u16>,
    pub seed: Option<u64>,
    pub start_us: Option<u64>,
    /// Poisson: a built-in size CDF (`websearch`, `hadoop`, ...), the load (0 < load <= 1)
    /// on `base` (`tor-uplinks`, default, or `host-link`), for `duration_us`, from the
    /// hosts `from` to the hosts `to` (default all).
    pub cdf: Option<String>,
    pub load: Option<f64>,
    pub base: Option<String>,
    pub duration_us: Option<u64>,
    pub from: Option<Vec<u32>>,
    pub to: Option<Vec<u32>>,
    /// Poisson: the classes each flow's is drawn from, uniformly (in place of `pg`). Left
    /// out of the scenario hash when not given, which stays as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgs: Option<Vec<u8>>,
    /// fan_in: `senders` hosts outside `receiver`'s rack, or the hosts `from`, each
    /// starting within `jitter_ns` after `start_us`; fan_in_bursts: bursts of `senders`
    /// hosts outside a drawn receiver's rack at `load` on `base` for `duration_us`;
    /// fan_in, fan_in_bursts, permutation, all_to_all: `size_bytes` per flow.
    pub receiver: Option<u32>,
    pub senders: Option<u32>,
    pub jitter_ns: Option<u64>,
    pub size_bytes: Option<u64>,
}

/// `[[fabric.transport]]`: the transport of priority group `pg`: `tcp = { ... }` (the
/// keys of a flow's `tcp` pattern), `dcqcn = { ... }` (those of `dcqcn`), or neither
/// (open loop).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportSpec {
    pub pg: u8,
    pub tcp: Option<TcpSpec>,
    pub dcqcn: Option<DcqcnSpec>,
    pub hpcc: Option<IntCcSpec>,
    pub powertcp: Option<IntCcSpec>,
    pub theta_powertcp: Option<IntCcSpec>,
}

/// What the flows of a priority group run in a network, validated
/// (`[[fabric.transport]]`, docs/fabric.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FabricTransport {
    /// The whole message handed to the NIC at the flow's start.
    OpenLoop,
    /// TCP (Reno or DCTCP); `base_rtt_us` and `flow_bytes` are not used.
    Tcp(TcpParams),
    /// DCQCN; `line_bps` is the sending host's link rate, set by the network.
    Dcqcn(DcqcnParams),
    /// HPCC, PowerTCP or theta-PowerTCP (`IntCcParams::law`); `line_bps` as DCQCN's.
    IntCc(IntCcParams),
}

/// `[fabric.leaf_spine]`: every leaf joined to every spine, hosts under the leaves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineSpec {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    pub host_link_gbps: u64,
    pub host_link_delay_ns: u64,
    pub fabric_link_gbps: u64,
    pub fabric_link_delay_ns: u64,
}

impl FabricSpec {
    /// One topology source, one flow source, and no `[[flows]]`.
    fn check(&self, flows: &[FlowSpec]) -> Result<(), ScenarioError> {
        let sources = [
            self.topology.is_some(),
            self.links.is_some(),
            self.leaf_spine.is_some(),
            self.clos.is_some(),
            self.fat_tree.is_some(),
        ];
        if sources.iter().filter(|&&s| s).count() != 1 {
            return Err(ScenarioError::new(
                "fabric.topology",
                "give exactly one of topology (a file), [fabric.links], [fabric.leaf_spine], [fabric.clos] and [fabric.fat_tree]",
            ));
        }
        if self.flow_file.is_some() != self.workload.is_empty() {
            return Err(ScenarioError::new(
                "fabric.flow_file",
                "give exactly one of flow_file and [[fabric.workload]]",
            ));
        }
        for (key, pg) in [("feedback_pg", self.feedback_pg), ("ecm_pg", self.ecm_pg)] {
            if let Some(pg) = pg.filter(|&pg| pg > 7) {
                return Err(ScenarioError::new(
                    format!("fabric.{key}"),
                    format!("{pg} is out of range; allowed: 0..=7"),
                ));
            }
        }
        self.transports()?;
        if !flows.is_empty() {
            return Err(ScenarioError::new(
                "flows",
                "not allowed with [fabric]; allowed: the flows of fabric.flow_file",
            ));
        }
        Ok(())
    }

    /// The transport of each priority group, validated: `fabric.transport[i].KEY` names
    /// a bad key. DCQCN's, HPCC's and PowerTCP's rates are checked against 400 Gb/s, the fastest host link the
    /// profiles have; the network sets each sender's line rate from its link.
    pub fn transports(&self) -> Result<[FabricTransport; 8], ScenarioError> {
        let mut by_pg = [FabricTransport::OpenLoop; 8];
        let mut seen = [false; 8];
        for (i, t) in self.transport.iter().enumerate() {
            let key = |k: &str| format!("fabric.transport[{i}].{k}");
            if t.pg > 7 || seen[t.pg as usize] {
                return Err(ScenarioError::new(
                    key("pg"),
                    format!("{}; allowed: 0..=7, each priority group once", t.pg),
                ));
            }
            seen[t.pg as usize] = true;
            let k = |s: &str| key(s.strip_prefix("pattern.").unwrap_or(s));
            let int_cc = [
                (CcLaw::Hpcc, &t.hpcc),
                (CcLaw::PowerTcp, &t.powertcp),
                (CcLaw::ThetaPowerTcp, &t.theta_powertcp),
            ];
            let given = [t.tcp.is_some(), t.dcqcn.is_some()]
                .into_iter()
                .chain(int_cc.iter().map(|(_, c)| c.is_some()));
            if given.filter(|&g| g).count() > 1 {
                return Err(ScenarioError::new(
                    key("pg"),
                    "more than one transport; allowed: one of tcp, dcqcn, hpcc, powertcp and theta_powertcp",
                ));
            }
            let line = 400_000_000_000;
            let int_cc = int_cc
                .iter()
                .find_map(|&(law, c)| c.as_ref().map(|c| (law, c)));
            by_pg[t.pg as usize] = match (&t.tcp, &t.dcqcn, int_cc) {
                (Some(tcp), _, _) => {
                    let p = plan::plan_tcp(&k, tcp)?;
                    // The network cuts a flow's packets from its message alone: a SYN
                    // before them is not one of them.
                    if p.ns2.is_some_and(|n| n.syn) {
                        return Err(ScenarioError::new(
                            key("tcp.syn_"),
                            "true (ns-2's default) is not available in a network; allowed: false",
                        ));
                    }
                    FabricTransport::Tcp(p)
                }
                (_, Some(d), _) if d.qp.is_some() => {
                    return Err(ScenarioError::new(
                        key("dcqcn.qp"),
                        "not used in a network (each flow is its own queue pair, with the paper's DCQCN); remove the key",
                    ))
                }
                (_, Some(d), _) => FabricTransport::Dcqcn(plan::plan_dcqcn(
                    &k,
                    d,
                    line,
                    QpMode::Pair,
                )?),
                (_, _, Some((law, c))) => FabricTransport::IntCc(plan::plan_int_cc(&k, c, line, law)?),
                (None, None, None) => FabricTransport::OpenLoop,
            };
        }
        Ok(by_pg)
    }
}

/// A scenario as written: switch config, run, links, flows, scripted PFC and the NICs'
/// ECM reaction points; or a network (`fabric`).
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub switch: SwitchConfig,
    pub run: RunSpec,
    pub links: Vec<LinkSpec>,
    pub flows: Vec<FlowSpec>,
    pub pfc_script: Vec<PfcScriptSpec>,
    /// `[ecm_rp]`: checked by [`Scenario::plan`].
    pub ecm_rp: EcmRpSpec,
    /// `[fabric]`: a network scenario, which [`Scenario::plan`] refuses.
    pub fabric: Option<FabricSpec>,
}

/// Command-line overrides applied before validation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    pub policy: Option<Policy>,
    pub cycles: Option<u64>,
    pub seed: Option<u64>,
    /// Run every egress queue as FIFO: drop the scenario's `[[switch.hcf]]` entries.
    pub fifo: bool,
}

/// Packet size distribution of a flow.
#[derive(Debug, Clone, PartialEq)]
pub enum SizeDist {
    Fixed(u32),
    /// Step CDF, cumulative probabilities strictly increasing to 1.
    Steps(Vec<(u32, f64)>),
}

/// Validated arrival process, rates in bits per second.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    Constant {
        rate_bps: u64,
    },
    OnOff {
        rate_bps: u64,
        on_cycles: u64,
        off_cycles: u64,
    },
    Burst {
        bytes: u64,
    },
    Poisson {
        rate_bps: u64,
        message_cdf: Vec<(u64, f64)>,
    },
    /// Closed loop: window-limited, sent at the partner's line rate.
    Tcp(TcpParams),
    /// Closed loop: paced at the DCQCN reaction point's rate.
    Dcqcn(DcqcnPlan),
    /// Closed loop: HPCC, PowerTCP or theta-PowerTCP (`IntCcParams::law`), window- and
    /// rate-limited.
    IntCc(IntCcParams),
}

/// A validated `dcqcn` flow: its reaction point, and, with `message_cdf`, the Poisson
/// messages it sends (else it is long-lived).
#[derive(Debug, Clone, PartialEq)]
pub struct DcqcnPlan {
    pub rp: DcqcnParams,
    pub messages: Option<MessageLoad>,
    /// [`QpMode::Pair`] for a long-lived flow.
    pub qp: QpMode,
}

/// Poisson message arrivals at a mean load of `rate_bps` message bits per second, sizes
/// from the piecewise-linear `message_cdf` (as `Pattern::Poisson`).
#[derive(Debug, Clone, PartialEq)]
pub struct MessageLoad {
    pub rate_bps: u64,
    pub message_cdf: Vec<(u64, f64)>,
}

/// A validated flow; `id` is its index in the scenario and its `PacketHdr.flow`.
#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    pub id: u32,
    pub src: u8,
    pub dst: u8,
    pub prio: u8,
    pub size: SizeDist,
    pub pattern: Pattern,
    pub start_cycle: u64,
    pub stop_cycle: u64,
    /// The IP 5-tuple every packet carries; `None`: the flow's own,
    /// `FiveTuple::for_flow(id, src, dst, proto)`. `connection_of = N` sets it to flow N's.
    pub tuple: Option<FiveTuple>,
    /// Packets leave ECN-capable (`FlowSpec::ecn`).
    pub ecn: bool,
}

impl Flow {
    /// The ECN field of the flow's packets as they leave the source.
    pub fn ecn_field(&self) -> Ecn {
        if self.ecn {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }

    /// The 5-tuple of the flow's packets: [`Flow::tuple`] or its own for protocol `proto`.
    pub fn five_tuple(&self, proto: u8) -> FiveTuple {
        self.tuple
            .unwrap_or_else(|| FiveTuple::for_flow(self.id, self.src, self.dst, proto))
    }

    /// Every packet size the flow can send (a size listed may never be drawn): the fixed
    /// size or the CDF's sizes; for `poisson` and a finite `tcp` flow also the shorter last
    /// packet of a message or flow, at least [`MIN_PACKET_BYTES`] (as `stimulus::source` and
    /// `stimulus::tcp` cut them).
    pub fn packet_sizes(&self) -> Vec<RangeInclusive<u32>> {
        let len = match &self.size {
            SizeDist::Steps(cdf) => return cdf.iter().map(|&(b, _)| b..=b).collect(),
            SizeDist::Fixed(len) => *len,
        };
        let last = |bytes: u64| ((bytes - 1) % len as u64 + 1).max(MIN_PACKET_BYTES as u64) as u32;
        match &self.pattern {
            Pattern::Poisson { message_cdf, .. } => {
                // Message sizes are whole bytes between the CDF's first and last points.
                let (lo, hi) = (message_cdf[0].0, message_cdf[message_cdf.len() - 1].0);
                let mut sizes = Vec::new();
                if hi >= len as u64 {
                    sizes.push(len..=len);
                }
                if hi - lo + 1 >= len as u64 {
                    sizes.push(MIN_PACKET_BYTES..=len);
                } else {
                    sizes.extend((lo..=hi).map(|m| last(m)..=last(m)));
                }
                sizes
            }
            Pattern::Tcp(TcpParams {
                flow_bytes: Some(b),
                ..
            }) => {
                let mut sizes = vec![last(*b)..=last(*b)];
                if *b > len as u64 {
                    sizes.push(len..=len);
                }
                sizes
            }
            _ => vec![len..=len],
        }
    }

    /// The packet of [`Flow::packet_sizes`] with the most cells per wire byte.
    pub fn densest_packet(&self, d: &Derived) -> Option<PacketCost> {
        self.packet_sizes()
            .into_iter()
            .filter_map(|r| d.densest_packet(r))
            .reduce(|a, b| if b.denser_than(&a) { b } else { a })
    }

    /// The key that sets a packet of `len` bytes of this flow: a short last packet comes
    /// from the message or flow size.
    fn size_field(&self, len: u32) -> &'static str {
        match (&self.size, &self.pattern) {
            (SizeDist::Steps(_), _) => "size_cdf",
            (SizeDist::Fixed(l), Pattern::Poisson { .. }) if len < *l => "message_cdf",
            (SizeDist::Fixed(l), Pattern::Tcp(_)) if len < *l => "pattern.tcp.flow_bytes",
            (SizeDist::Fixed(_), _) => "size_bytes",
        }
    }
}

/// A validated link into an ingress port, delays in core cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub prop_cycles: u64,
    pub proc_cycles: u64,
    pub arbitration: Arbitration,
}

/// Everything the simulator needs, validated and resolved.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub derived: Derived,
    pub cycles: u64,
    pub seed: u64,
    pub expect_lossless: bool,
    /// One per port.
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
    /// The reaction points of every NIC (`[ecm_rp]`).
    pub ecm_rp: EcmRpParams,
    /// Sorted by cycle (stable: file order within a cycle).
    pub pfc_script: Vec<(u64, u8, PfcFrame)>,
    /// [`Scenario::hash`] of the scenario and overrides this plan was made from.
    pub scenario_hash: String,
    /// Lossless traffic that the headroom was not sized for ([`headroom_findings`]); always
    /// empty with `expect_lossless` (the first finding is then the plan's error).
    pub headroom_warnings: Vec<HeadroomWarning>,
}

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "switch",
    "run",
    "links",
    "flows",
    "pfc_script",
    "ecm_rp",
    "fabric",
];

impl Scenario {
    /// Parse a scenario from TOML text. `default_name` names it when the file has no `name`.
    pub fn parse(text: &str, default_name: &str) -> Result<Self, ScenarioError> {
        let layout = Layout::scan(text)?;
        Self::from_parts(layout.top()?, Some(&layout), default_name)
    }

    /// [`Scenario::parse`] of a scenario already read as a TOML table (e.g. after
    /// [`set_key`]).
    pub fn from_table(top: toml::Table, default_name: &str) -> Result<Self, ScenarioError> {
        Self::from_parts(top, None, default_name)
    }

    /// `top`, and the tables of the arrays that `layout` found, parsed one at a time.
    fn from_parts(
        mut top: toml::Table,
        layout: Option<&Layout>,
        default_name: &str,
    ) -> Result<Self, ScenarioError> {
        if let Some(k) = top.keys().find(|k| !TOP_KEYS.contains(&k.as_str())) {
            return Err(ScenarioError::new(
                k.as_str(),
                format!(
                    "unknown key{}; allowed: {}",
                    suggest::did_you_mean(k, TOP_KEYS.iter().copied()),
                    TOP_KEYS.join(", ")
                ),
            ));
        }
        let name = take_string(&mut top, "name")?.unwrap_or_else(|| default_name.to_string());
        let description = take_string(&mut top, "description")?.unwrap_or_default();
        let switch_table = take_table(&mut top, "switch")?.unwrap_or_default();
        let switch = parse_switch(switch_table.clone())?;
        let run = section(
            take_table(&mut top, "run")?
                .ok_or_else(|| ScenarioError::new("run", "missing section [run]"))?,
            "run",
        )?;
        let links = split_array(layout, &mut top, "links")?;
        if let Some(toml::Value::Array(inline)) = top.get("flows") {
            check_flow_count(inline.len())?;
        }
        let flows = split_array(layout, &mut top, "flows")?;
        let pfc_script = split_array(layout, &mut top, "pfc_script")?;
        let ecm_rp = match take_table(&mut top, "ecm_rp")? {
            Some(t) => section(t, "ecm_rp")?,
            None => EcmRpSpec::default(),
        };
        let fabric: Option<FabricSpec> = match take_table(&mut top, "fabric")? {
            Some(mut t) => {
                let overrides = t.remove("switch");
                let mut f: FabricSpec = section(t, "fabric")?;
                f.switch = switch_overrides(overrides, &switch_table)?;
                Some(f)
            }
            None => None,
        };
        if let Some(f) = &fabric {
            f.check(&flows)?;
        }
        Ok(Self {
            name,
            description,
            switch,
            run,
            links,
            flows,
            pfc_script,
            ecm_rp,
            fabric,
        })
    }

    /// Check every value against the switch and resolve defaults.
    pub fn plan(&self, ov: &Overrides) -> Result<Plan, ScenarioError> {
        if self.fabric.is_some() {
            return Err(ScenarioError::new(
                "fabric",
                "a network scenario has no single-switch plan; run it with `mmu-sim run`",
            ));
        }
        check_flow_count(self.flows.len())?;
        let d = self.switch_with(ov).build()?;
        let cycles = ov.cycles.unwrap_or(self.run.cycles);
        let cycles_field = if ov.cycles.is_some() {
            "--cycles"
        } else {
            "run.cycles"
        };
        if !(1..=MAX_CYCLES).contains(&cycles) {
            return Err(ScenarioError::new(
                cycles_field,
                format!("{cycles} is out of range; allowed: 1..={MAX_CYCLES}"),
            ));
        }
        let links = plan_links(&self.links, &d)?;
        let mut flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| plan_flow(i, f, &d))
            .collect::<Result<Vec<_>, _>>()?;
        for (i, f) in self.flows.iter().enumerate() {
            if let Some(n) = f.connection_of {
                flows[i].tuple = Some(connection_tuple(i, n, &self.flows, &flows)?);
            }
        }
        let mut pfc_script = self
            .pfc_script
            .iter()
            .enumerate()
            .map(|(i, s)| plan_pfc(i, s, &d))
            .collect::<Result<Vec<_>, _>>()?;
        pfc_script.sort_by_key(|&(c, _, _)| c);
        let ecm_rp = self.ecm_rp.params()?;
        let headroom_warnings = headroom_findings(&self.links, &links, &flows, &d);
        if let (true, Some(w)) = (self.run.expect_lossless, headroom_warnings.first()) {
            return Err(ScenarioError::new(
                w.problem.field.clone(),
                format!("{} (run.expect_lossless = true)", w.problem.message),
            ));
        }
        Ok(Plan {
            name: self.name.clone(),
            derived: d,
            cycles,
            seed: ov.seed.unwrap_or(self.run.seed),
            expect_lossless: self.run.expect_lossless,
            links,
            flows,
            pfc_script,
            ecm_rp,
            headroom_warnings,
            scenario_hash: self.hash(ov),
        })
    }
}

/// The tables of the array `key`, one at a time where the scan found them.
fn split_array<T: DeserializeOwned>(
    layout: Option<&Layout>,
    top: &mut toml::Table,
    key: &'static str,
) -> Result<Vec<T>, ScenarioError> {
    let Some(tables) = layout.and_then(|l| l.tables(key)) else {
        return array_of_tables(top, key);
    };
    if top.contains_key(key) {
        return Err(defined_twice(key));
    }
    tables
        .enumerate()
        .map(|(i, t)| section(t?, &format!("{key}[{i}]")))
        .collect()
}

/// The parts of a scenario that decide a run's results, as [`Scenario::hash`] reads them.
#[derive(Serialize)]
struct Resolved<'a> {
    switch: &'a SwitchConfig,
    run: &'a RunSpec,
    links: &'a [LinkSpec],
    flows: &'a [FlowSpec],
    pfc_script: &'a [PfcScriptSpec],
    ecm_rp: &'a EcmRpSpec,
    /// Left out of a single switch's hash, which stays as it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    fabric: Option<&'a FabricSpec>,
}

impl Scenario {
    /// `[switch]` with the `--policy` and `--fifo` overrides applied.
    fn switch_with(&self, ov: &Overrides) -> SwitchConfig {
        let mut switch = self.switch.clone();
        if let Some(p) = ov.policy {
            switch.policy = p;
        }
        if ov.fifo {
            switch.hcf.clear();
        }
        switch
    }

    /// SHA-256, in hex, of the scenario with `ov` applied: `[switch]` with its profile
    /// expanded into every key, `[run]`, `[[links]]`, `[[flows]]`, `[[pfc_script]]` and
    /// `[ecm_rp]` as compact JSON in schema order. `name` and `description` are left out:
    /// two files that differ only there run the same. The same on every machine and run.
    pub fn hash(&self, ov: &Overrides) -> String {
        use sha2::{Digest, Sha256};
        let switch = self.switch_with(ov);
        let mut run = self.run.clone();
        run.cycles = ov.cycles.unwrap_or(run.cycles);
        run.seed = ov.seed.unwrap_or(run.seed);
        let resolved = Resolved {
            switch: &switch,
            run: &run,
            links: &self.links,
            flows: &self.flows,
            pfc_script: &self.pfc_script,
            ecm_rp: &self.ecm_rp,
            fabric: self.fabric.as_ref(),
        };
        // Streamed into the hash: the JSON of 10^5 flows would be tens of megabytes.
        let mut sha = Sha256::new();
        serde_json::to_writer(&mut sha, &resolved).expect("a scenario serializes to JSON");
        sha.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

fn take_string(t: &mut toml::Table, key: &str) -> Result<Option<String>, ScenarioError> {
    match t.remove(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(ScenarioError::new(
            key,
            format!("expected a string, found {}", v.type_str()),
        )),
    }
}

fn take_table(t: &mut toml::Table, key: &str) -> Result<Option<toml::Table>, ScenarioError> {
    match t.remove(key) {
        None => Ok(None),
        Some(toml::Value::Table(s)) => Ok(Some(s)),
        Some(v) => Err(ScenarioError::new(
            key,
            format!("expected a table, found {}", v.type_str()),
        )),
    }
}

fn array_of_tables<T: DeserializeOwned>(
    t: &mut toml::Table,
    key: &str,
) -> Result<Vec<T>, ScenarioError> {
    let items = match t.remove(key) {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(a)) => a,
        Some(v) => {
            return Err(ScenarioError::new(
                key,
                format!(
                    "expected an array of tables ([[{key}]]), found {}",
                    v.type_str()
                ),
            ))
        }
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let path = format!("{key}[{i}]");
            match v {
                toml::Value::Table(tab) => section(tab, &path),
                other => Err(ScenarioError::new(
                    path,
                    format!("expected a table, found {}", other.type_str()),
                )),
            }
        })
        .collect()
}

/// Deserialize one table, naming the offending key on error.
///
/// Serde errors from a `toml::Value` carry no location, so when the whole table fails the
/// culprit is found by removing one key at a time: the key whose removal clears the error
/// (or turns it into "missing field" for that key) is the one with the bad value.
fn section<T: DeserializeOwned>(table: toml::Table, path: &str) -> Result<T, ScenarioError> {
    int_keys::check(&table, path)?;
    let err = match table.clone().try_into::<T>() {
        Ok(v) => return Ok(v),
        Err(e) => e.message().to_string(),
    };
    let field = |k: &str| format!("{path}.{k}");
    for marker in ["unknown field `", "missing field `"] {
        if let Some(rest) = err.split_once(marker).map(|(_, r)| r) {
            let key = rest.split('`').next().unwrap_or_default();
            // An unknown key of a nested table (a `tcp` pattern's) is not one of this
            // table's: the search below names the key holding it.
            if marker == "missing field `" || table.contains_key(key) {
                return Err(ScenarioError::new(field(key), err.clone()));
            }
        }
    }
    for key in table.keys() {
        let mut without = table.clone();
        without.remove(key);
        let cleared = match without.try_into::<T>() {
            Ok(_) => true,
            Err(e) => e.message().contains(&format!("missing field `{key}`")),
        };
        if cleared {
            let err = enum_names(table.get(key), |s| {
                let mut probe = table.clone();
                probe.insert(key.clone(), s);
                probe.try_into::<T>().err()
            })
            .unwrap_or(err);
            return Err(ScenarioError::new(field(key), err));
        }
    }
    Err(ScenarioError::new(path, err))
}

/// toml answers a number or a boolean where a name of an enum belongs (`pattern = 5`) with
/// "invalid type: unit variant, expected string only", which names neither the value nor
/// the names; the error a string there gets (from `with_string`) lists them.
fn enum_names(
    value: Option<&toml::Value>,
    with_string: impl FnOnce(toml::Value) -> Option<toml::de::Error>,
) -> Option<String> {
    let value = value.filter(|v| !v.is_str() && !v.is_table())?;
    let e = with_string(toml::Value::String(String::new()))?;
    let expected = e.message().split_once("unknown variant ``, ")?.1;
    Some(format!("{value} is not a name; {expected}"))
}

/// `[switch]`: start from `profile` (default `tomahawk`) and apply the other keys on top.
fn parse_switch(mut table: toml::Table) -> Result<SwitchConfig, ScenarioError> {
    int_keys::check(&table, "switch")?;
    let profile = take_string(&mut table, "profile")
        .map_err(|e| ScenarioError::new("switch.profile", e.message))?;
    let base = SwitchConfig::profile(profile.as_deref().unwrap_or("tomahawk"))
        .map_err(|e| ScenarioError::new("switch.profile", e.message))?;
    let mut merged = toml::Table::try_from(&base).map_err(|e| {
        ScenarioError::new(
            "switch.profile",
            format!("cannot serialize the profile: {e}"),
        )
    })?;
    merged.extend(table.clone());
    match merged.clone().try_into::<SwitchConfig>() {
        Ok(c) => Ok(c),
        Err(e) => {
            let msg = e.message().to_string();
            if let Some(key) = msg
                .split_once("unknown field `")
                .and_then(|(_, r)| r.split('`').next())
            {
                let at = unknown_key_path(&table, key);
                return Err(ScenarioError::new(format!("switch.{at}"), msg));
            }
            // A bad value: the first override that fails on the bare profile is the culprit,
            // named down to the nested key or entry that fails (`switch.ecm.priorities`).
            let mut base_table = toml::Table::try_from(&base).unwrap_or_default();
            for (k, v) in table {
                let before = base_table.clone();
                base_table.insert(k.clone(), v.clone());
                if base_table.clone().try_into::<SwitchConfig>().is_err() {
                    let fails = |c: &toml::Value| {
                        let mut t = before.clone();
                        t.insert(k.clone(), c.clone());
                        t.try_into::<SwitchConfig>().is_err()
                    };
                    let at = format!("switch.{k}{}", culprit(&v, &fails));
                    let msg = enum_names(Some(&v), |s| {
                        let mut probe = before.clone();
                        probe.insert(k.clone(), s);
                        probe.try_into::<SwitchConfig>().err()
                    })
                    .unwrap_or(msg);
                    return Err(ScenarioError::new(at, msg));
                }
            }
            Err(ScenarioError::new("switch", msg))
        }
    }
}

/// The path below the failing value `v` to the innermost key or entry that makes it
/// fail (`.priorities`, `[0].ports`; empty if `v` itself), `fails` telling whether `v`
/// replaced by another value still fails: in a table, the key whose removal clears the
/// error; in an array, the first entry that fails on top of those before it. Serde's
/// errors from a `toml::Value` name neither.
fn culprit(v: &toml::Value, fails: &dyn Fn(&toml::Value) -> bool) -> String {
    match v {
        toml::Value::Table(t) => t.keys().find_map(|key| {
            let mut without = t.clone();
            without.remove(key);
            if fails(&toml::Value::Table(without)) {
                return None;
            }
            let inner = |c: &toml::Value| {
                let mut with = t.clone();
                with.insert(key.clone(), c.clone());
                fails(&toml::Value::Table(with))
            };
            Some(format!(".{key}{}", culprit(&t[key], &inner)))
        }),
        toml::Value::Array(a) => (0..a.len()).find_map(|i| {
            let upto = |c: &toml::Value| {
                let mut head = a[..i].to_vec();
                head.push(c.clone());
                fails(&toml::Value::Array(head))
            };
            upto(&a[i]).then(|| format!("[{i}]{}", culprit(&a[i], &upto)))
        }),
        _ => None,
    }
    .unwrap_or_default()
}

/// The path of the unknown field `key` that serde reported for `[switch]`: in the first
/// nested table that does not accept it (`ecm.KEY`, `ecn.KEY`, `ecn.curves[0].KEY`,
/// `hcf[1].KEY`), else in `[switch]` itself. Serde names an unknown field without the table
/// it is in.
fn unknown_key_path(table: &toml::Table, key: &str) -> String {
    let rejects = |v: &toml::Value, check: fn(toml::Value) -> Result<(), toml::de::Error>| {
        v.as_table().is_some_and(|t| t.contains_key(key))
            && check(v.clone())
                .is_err_and(|e| e.message().contains(&format!("unknown field `{key}`")))
    };
    type Check = fn(toml::Value) -> Result<(), toml::de::Error>;
    let tables: [(&str, Check); 2] = [
        ("ecm", |v| v.try_into::<EcmConfig>().map(|_| ())),
        ("ecn", |v| v.try_into::<EcnConfig>().map(|_| ())),
    ];
    for (name, check) in tables {
        if table.get(name).is_some_and(|v| rejects(v, check)) {
            return format!("{name}.{key}");
        }
    }
    // The first entry of an array of tables that rejects the key.
    let entry = |array: Option<&toml::Value>, at: &str, check: Check| {
        let i = array?.as_array()?.iter().position(|v| rejects(v, check))?;
        Some(format!("{at}[{i}].{key}"))
    };
    let curves = table.get("ecn").and_then(|e| e.get("curves"));
    entry(curves, "ecn.curves", |v| {
        v.try_into::<EcnCurveConfig>().map(|_| ())
    })
    .or_else(|| {
        entry(table.get("hcf"), "hcf", |v| {
            v.try_into::<HcfConfig>().map(|_| ())
        })
    })
    .unwrap_or_else(|| key.to_string())
}

/// Nanoseconds to core cycles, rounded up (a delay is never shortened).
pub fn ns_to_cycles(ns: u64, clock_hz: u64) -> u64 {
    (ns as u128 * clock_hz as u128).div_ceil(1_000_000_000) as u64
}
