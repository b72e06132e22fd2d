//! The validated parameters each traffic engine of `stimulus` takes, as a scenario's plan
//! makes them: the scenario checks the ranges, the engine trusts them. They live here, not
//! beside their engines, so that scenarios depend on no engine (a new engine's parameters
//! go here too).

// DCQCN (`stimulus::dcqcn`).

/// Validated DCQCN parameters of a flow, named as in the paper; times in ns, rates in b/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DcqcnParams {
    /// `g`, the gain of the `alpha` average (Eq. 2, 3).
    pub g: f64,
    /// `K`, the alpha timer.
    pub k_ns: u64,
    /// `T`, the rate-increase timer.
    pub t_ns: u64,
    /// `B`, the byte counter, bytes.
    pub b_bytes: u64,
    /// `F`, fast-recovery steps.
    pub f: u32,
    /// `R_AI`, `R_HAI`.
    pub r_ai_bps: u64,
    pub r_hai_bps: u64,
    /// `N`, the NP's least interval between CNPs of a flow.
    pub n_ns: u64,
    /// Floor of `R_C`.
    pub min_rate_bps: u64,
    /// From a marked packet's departure to its CNP reaching the RP.
    pub cnp_delay_ns: u64,
    /// The sender port's line rate: the start rate and the cap of `R_T`, `R_C`.
    pub line_bps: u64,
    /// `qp = "message"` only: the RP's rate-decrease interval and the receiver's NACK
    /// interval (ns-3's `RateDecreaseInterval`, `NACKGenerationInterval`).
    pub decrease_ns: u64,
    pub nack_ns: u64,
}

impl DcqcnParams {
    /// The paper's defaults (section 5, Fig. 14 and the text around it): `g = 1/256`,
    /// `K = 55 us`, `T = 55 us`, `B = 10 MB`, `F = 5`, `R_AI = 40 Mb/s`, `R_HAI = 100 Mb/s`
    /// (docs/ecn.md for what the paper leaves open), `N = 50 us`; `min_rate` 100 Mb/s and
    /// a CNP delay of 10 us are the testbench's.
    pub const G: f64 = 1.0 / 256.0;
    pub const K_US: u64 = 55;
    pub const T_US: u64 = 55;
    pub const B_BYTES: u64 = 10_000_000;
    pub const F: u32 = 5;
    pub const R_AI_MBPS: u64 = 40;
    pub const R_HAI_MBPS: u64 = 100;
    pub const N_US: u64 = 50;
    pub const MIN_RATE_MBPS: u64 = 100;
    pub const CNP_DELAY_US: u64 = 10;
}

// HPCC, PowerTCP and theta-PowerTCP (`stimulus::int_cc`).

/// Which law an INT-era sender runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcLaw {
    /// HPCC (Li et al., SIGCOMM 2019, Alg. 1), `stimulus::hpcc`.
    Hpcc,
    /// PowerTCP on INT (Addanki et al., NSDI 2022, Alg. 1), `stimulus::powertcp`.
    PowerTcp,
    /// theta-PowerTCP on RTTs (same paper, Alg. 2), `stimulus::powertcp`.
    ThetaPowerTcp,
}

impl CcLaw {
    /// The pattern's key.
    pub fn name(self) -> &'static str {
        match self {
            Self::Hpcc => "hpcc",
            Self::PowerTcp => "powertcp",
            Self::ThetaPowerTcp => "theta_powertcp",
        }
    }
}

/// Validated parameters of an `hpcc`, `powertcp` or `theta_powertcp` flow; times in ns,
/// rates in b/s. The defaults are inet-tub/ns3-datacenter's (docs/int.md cites file and
/// line of each).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntCcParams {
    pub law: CcLaw,
    /// `T`: the ACK delay, the window's time and the averages' time scale.
    pub base_rtt_ns: u64,
    /// `W_AI` (HPCC) or `beta` (PowerTCP) as a rate.
    pub rate_ai_bps: u64,
    pub min_rate_bps: u64,
    /// `eta` (HPCC), the target of the normalised power (PowerTCP).
    pub u_target: f64,
    /// `maxStage` (HPCC).
    pub mi_thresh: u32,
    /// `gamma` (PowerTCP, theta-PowerTCP).
    pub gamma: f64,
    /// The sender's line rate: the start rate and the cap.
    pub line_bps: u64,
}

impl IntCcParams {
    /// `T` = 10 us: the testbench's (ns-3 computes it from its topology), as a `tcp`
    /// flow's `base_rtt_us`.
    pub const BASE_RTT_US: u64 = 10;
    /// HPCC's `RATE_AI 50Mb/s`; PowerTCP's `DataRate("150Mbps")` in its update.
    pub const HPCC_RATE_AI_MBPS: u64 = 50;
    pub const POWERTCP_BETA_MBPS: u64 = 150;
    /// `MIN_RATE 100Mb/s`.
    pub const MIN_RATE_MBPS: u64 = 100;
    /// `U_TARGET 0.95`.
    pub const U_TARGET: f64 = 0.95;
    /// `MI_THRESH 5`.
    pub const MI_THRESH: u32 = 5;
    /// The weights of the new rate: 0.9 (PowerTCP), 0.7 (theta-PowerTCP).
    pub const POWERTCP_GAMMA: f64 = 0.9;
    pub const THETA_GAMMA: f64 = 0.7;
}

/// The defaults of a `dcqcn` flow with `qp = "message"`: the DCQCN of ns-3's RDMA NIC
/// (`RdmaHw`, Mellanox's version, `stimulus::rdma_nic`) as the ns-3 simulators of HPCC
/// (alibaba-edu/High-Precision-Congestion-Control, `simulation/mix/config.txt`) and of
/// PowerTCP (inet-tub/ns3-datacenter, `simulator/ns-3.39/examples/PowerTCP/config-*.txt`)
/// configure it; docs/ecn.md cites file and line of each.
pub struct Ns3Dcqcn;

impl Ns3Dcqcn {
    /// `EWMA_GAIN 0.00390625`.
    pub const G: f64 = 1.0 / 256.0;
    /// `ALPHA_RESUME_INTERVAL 1`, `RATE_DECREASE_INTERVAL 4`, `RP_TIMER 900`, µs.
    pub const K_US: u64 = 1;
    pub const DECREASE_US: u64 = 4;
    pub const T_US: u64 = 900;
    /// `FAST_RECOVERY_TIMES 1`.
    pub const F: u32 = 1;
    /// `RATE_AI 50Mb/s`, `RATE_HAI 100Mb/s`, `MIN_RATE 100Mb/s`.
    pub const R_AI_MBPS: u64 = 50;
    pub const R_HAI_MBPS: u64 = 100;
    pub const MIN_RATE_MBPS: u64 = 100;
    /// The receiver marks the ACK of every CE packet as a CNP (`L2_ACK_INTERVAL 1`): no
    /// interval at the NP.
    pub const N_US: u64 = 0;
    /// `NACKGenerationInterval` (`RdmaHw`'s default, no configuration sets it), µs.
    pub const NACK_US: u64 = 500;
}

// TCP under ns-2's timer (`stimulus::tcp`).

/// ns-2.35's one-way TCP sender timer and start-up (`flavor = "ns2"`); the names are
/// ns-2's (`tcl/lib/ns-default.tcl`, `tcp/tcp.cc`). Times are in ns in a scenario's plan
/// and in core cycles in a sender ([`Ns2Params::in_cycles`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ns2Params {
    /// `window_`: the receiver's window, a cap on `cwnd`, packets.
    pub window: u32,
    /// `windowInit_`: `cwnd` once the SYN is acknowledged (or from the start without SYN).
    pub window_init: u32,
    /// `syn_` (with `delay_growth_`): packet 0 is a SYN, sent with `cwnd = 1`.
    pub syn: bool,
    /// `tcpTick_`, `rtxcur_init_`, `minrto_`, `maxrto_`, cycles.
    pub tick: u64,
    pub rtxcur_init: u64,
    pub minrto: u64,
    pub maxrto: u64,
}

impl Ns2Params {
    /// ns-2.35's defaults (`ns-default.tcl`: `window_ 20`, `windowInit_ 2`, `syn_ true`,
    /// `tcpTick_ 0.01`, `rtxcur_init_ 3.0`, `minrto_ 0.2`, `maxrto_ 60`), times in ns.
    pub const DEFAULT: Self = Self {
        window: 20,
        window_init: 2,
        syn: true,
        tick: 10_000_000,
        rtxcur_init: 3_000_000_000,
        minrto: 200_000_000,
        maxrto: 60_000_000_000,
    };

    /// The same with its times (ns) in cycles of `clock_hz`, rounded up.
    pub fn in_cycles(self, clock_hz: u64) -> Self {
        let c = |ns: u64| crate::ns_to_cycles(ns, clock_hz);
        Self {
            tick: c(self.tick).max(1),
            rtxcur_init: c(self.rtxcur_init),
            minrto: c(self.minrto),
            maxrto: c(self.maxrto),
            ..self
        }
    }
}

// The ECM reaction point (`stimulus::reaction_point`): its register formats and parameters.

/// Most fine limiters per NIC.
pub const MAX_FINE: usize = 64;
/// Fraction bits of `w`.
pub const W_FRAC: u32 = 3;
/// Fraction bits of `Gi`.
pub const GI_FRAC: u32 = 16;
/// Fraction bits of `Gd`.
pub const GD_FRAC: u32 = 24;
/// Fraction bits of `alpha`, `beta` and `Ri / C`.
pub const AB_FRAC: u32 = 16;

/// With the Q bit set, which sign decides between increase and decrease.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QbitDirection {
    /// The sign of `Qdelta` (text, 3.3.2): `Qdelta < 0` increases, `Qdelta > 0` decreases.
    #[default]
    Qdelta,
    /// The sign of `Fb` (pseudo-code 3.3.3).
    Fb,
}

/// Validated reaction-point parameters, in the register formats of `stimulus::reaction_point`. The
/// scenario's `[ecm_rp]` table (`scenario::EcmRpSpec`) converts to this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EcmRpParams {
    /// `n`, fine limiters per NIC (1..=64).
    pub fine_limiters: u8,
    /// Width of FlowID (1..=32).
    pub flowid_bits: u8,
    /// `w` in 1/8 (1..=64).
    pub w_q3: u32,
    /// `Gi` in 2^-16.
    pub gi_q16: u32,
    /// `Gd` in 2^-24.
    pub gd_q24: u32,
    /// `alpha` in 2^-16.
    pub alpha_q16: u32,
    /// `beta` in 2^-16.
    pub beta_q16: u32,
    /// `Ri / C` in 2^-16 (1..=65536).
    pub ri_q16: u32,
    pub ru_bps: u64,
    pub rd_bps: u64,
    pub td_us: u32,
    pub rmin_bps: u64,
    pub tmax_us: u32,
    /// RTT EWMA weight `2^-wrtt`.
    pub wrtt: u8,
    /// CM-Tag timer unit: `2^unit` us.
    pub unit: u8,
    pub qbit_direction: QbitDirection,
}

impl Default for EcmRpParams {
    /// Paper values where it gives them (Tmax 10 us, Rmin 100 Mb/s, Td 1 ms, Rd 1 Mb/s,
    /// Ri = C/2); the gains are this testbench's choice (docs/ecm.md).
    fn default() -> Self {
        Self {
            fine_limiters: 16,
            flowid_bits: 12,
            w_q3: 2 << W_FRAC,
            gi_q16: 4 << GI_FRAC,
            gd_q24: 1 << (GD_FRAC - 10),
            alpha_q16: 1 << (AB_FRAC - 1),
            beta_q16: (1 << AB_FRAC) / 20,
            ri_q16: 1 << (AB_FRAC - 1),
            ru_bps: 1_000_000,
            rd_bps: 1_000_000,
            td_us: 1000,
            rmin_bps: 100_000_000,
            tmax_us: 10,
            wrtt: 3,
            unit: 0,
            qbit_direction: QbitDirection::Qdelta,
        }
    }
}
