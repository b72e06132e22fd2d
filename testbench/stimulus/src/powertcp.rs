//! PowerTCP's senders (Addanki et al., NSDI 2022): [`PowerTcp`] on the switch's INT stamps
//! (Alg. 1) and [`ThetaPowerTcp`] on RTTs alone (Alg. 2), as ns3-datacenter runs them
//! (`UpdateRatePower`, `simulator/ns-3.39/src/point-to-point/model/rdma-hw.cc` lines
//! 980-1093; docs/int.md). The paper is not among the seed papers: the equations are the
//! simulator's.
//!
//! Both compute a normalised power `Gamma = lambda * (q + B T) / (B^2 T)` (power = current
//! x voltage, section 3), average it over `T` as HPCC averages `U`, and move the rate
//! toward `R_c / Gamma`:
//!
//! ```text
//! PowerTCP:        lambda = max(mu + dq/dt, B / 2)      (the arrival rate; line 1021)
//!                  Gamma' = lambda * (q * 8 + B T) / (B * B T)
//! theta-PowerTCP:  Gamma' = max(d(RTT)/dt + 1, 1/2) * RTT / (1.05 T)   (lines 1031-1035)
//! Gamma = (Gamma * (T - min(dt, T)) + Gamma' * min(dt, T)) / T
//! R = gamma * (R_c / (Gamma / e) + beta) + (1 - gamma) * R_c
//! ```
//!
//! with `e` = `u_target` for PowerTCP and 1 for theta-PowerTCP (lines 1064, 1069), `dt` the
//! time between the two records (PowerTCP) or the two ACKs (theta). ns3-datacenter's switch
//! stamps PowerTCP's hop with the queue's *received* bytes (`switch-node.cc` line 272) and
//! takes their rate as `lambda`; this model stamps the transmitted bytes (as for HPCC) and
//! forms the arrival rate as the paper's Alg. 1 does, `mu + dq/dt`. Every ACK sets the rate;
//! an ACK past the last update's `snd_nxt` commits `R_c`, as HPCC's. theta-PowerTCP's `T`
//! falls to the least RTT it measures (line 992).

use crate::int_cc::{busiest, Ack, IntHops};
use scenario::params::IntCcParams;

/// The state both variants share: the average, the committed rate and the RTT gate.
#[derive(Debug, Clone)]
struct Power {
    p: IntCcParams,
    /// `Gamma`, 1 at the start (`hp.u`, `rdma-queue-pair.cc` line 50).
    gamma_avg: f64,
    committed: f64,
    last_update: u32,
}

impl Power {
    fn new(p: IntCcParams) -> Self {
        Self {
            p,
            gamma_avg: 1.0,
            committed: p.line_bps as f64,
            last_update: 0,
        }
    }

    /// Average `sample` over `dt` ns against `t` ns; the new rate for target `e`, committed
    /// if `ack` is past the last update.
    fn update(&mut self, ack: &Ack, snd_nxt: u32, sample: f64, dt: f64, t: f64, e: f64) -> f64 {
        let dt = dt.min(t);
        self.gamma_avg = (self.gamma_avg * (t - dt) + sample * dt) / t;
        let c = self.gamma_avg / e;
        let g = self.p.gamma;
        let rate =
            g * (self.committed / c + self.p.rate_ai_bps as f64) + (1.0 - g) * self.committed;
        let rate = rate.clamp(self.p.min_rate_bps as f64, self.p.line_bps as f64);
        // Sequence numbers wrap (`snd_nxt` counts with `wrapping_add`).
        if ack.seq.wrapping_sub(self.last_update) as i32 >= 0 {
            self.committed = rate;
            self.last_update = snd_nxt.max(self.last_update);
        }
        rate
    }
}

/// PowerTCP on INT (Alg. 1).
#[derive(Debug, Clone)]
pub struct PowerTcp {
    s: Power,
    /// The records of the last ACK with records, one per hop.
    prev: IntHops,
}

impl PowerTcp {
    pub fn new(p: IntCcParams) -> Self {
        Self {
            s: Power::new(p),
            prev: IntHops::default(),
        }
    }

    /// `Gamma`, the normalised power average.
    pub fn power(&self) -> f64 {
        self.s.gamma_avg
    }

    /// An ACK with its hop records; the new rate, if it moves (the most loaded hop's
    /// power: `rdma-hw.cc` lines 1007-1045). The first records are stored.
    pub fn on_ack(&mut self, ack: &Ack, snd_nxt: u32) -> Option<f64> {
        if ack.hops.as_slice().is_empty() {
            return None;
        }
        let prev = std::mem::replace(&mut self.prev, ack.hops);
        let t = self.s.p.base_rtt_ns as f64;
        let (sample, tau) = busiest(&ack.hops, &prev, |hop, prev, tau| {
            let secs = tau as f64 * 1e-9;
            let b = hop.line_rate_bps() as f64;
            let mu = hop.bytes_since(prev) as f64 * 8.0 / secs;
            let dq = (hop.qlen_bytes() as f64 - prev.qlen_bytes() as f64) * 8.0 / secs;
            let lambda = (mu + dq).max(b / 2.0);
            let bdp = b * t * 1e-9;
            lambda * (hop.qlen_bytes() as f64 * 8.0 + bdp) / (b * bdp)
        })?;
        let e = self.s.p.u_target;
        Some(self.s.update(ack, snd_nxt, sample, tau as f64, t, e))
    }
}

/// theta-PowerTCP on RTTs (Alg. 2): needs no INT.
#[derive(Debug, Clone)]
pub struct ThetaPowerTcp {
    s: Power,
    /// `T`, the least RTT seen (from `base_rtt_us`), ns.
    base_rtt: f64,
    /// The previous ACK's RTT and arrival, ns.
    prev: Option<(f64, f64)>,
}

impl ThetaPowerTcp {
    pub fn new(p: IntCcParams) -> Self {
        Self {
            s: Power::new(p),
            base_rtt: p.base_rtt_ns as f64,
            prev: None,
        }
    }

    pub fn power(&self) -> f64 {
        self.s.gamma_avg
    }

    /// An ACK; the new rate, if it moves. The first ACK is stored.
    pub fn on_ack(&mut self, ack: &Ack, snd_nxt: u32) -> Option<f64> {
        let rtt = ack.rtt_ns as f64;
        self.base_rtt = self.base_rtt.min(rtt);
        let (prev_rtt, prev_at) = self.prev.replace((rtt, ack.now_ns))?;
        let dt = ack.now_ns - prev_at;
        if dt <= 0.0 {
            return None;
        }
        let t = self.base_rtt;
        let sample = ((rtt - prev_rtt) / dt + 1.0).max(0.5) * rtt / (1.05 * t);
        Some(self.s.update(ack, snd_nxt, sample, dt, t, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw_model::int_stamp::IntHop;
    use scenario::params::CcLaw;

    fn params(law: CcLaw, gamma: f64) -> IntCcParams {
        IntCcParams {
            law,
            base_rtt_ns: 10_000,
            rate_ai_bps: 150_000_000,
            min_rate_bps: 100_000_000,
            u_target: 0.95,
            mi_thresh: 5,
            gamma,
            line_bps: 100_000_000_000,
        }
    }

    fn ack(seq: u32, hop: Option<IntHop>, rtt_ns: u64, now_ns: f64) -> Ack {
        Ack {
            seq,
            hops: IntHops::one(hop),
            rtt_ns,
            now_ns,
        }
    }

    fn hop(ns: u32, bytes: u64, qlen: u64) -> Option<IntHop> {
        Some(IntHop {
            time: ns,
            bytes: (bytes / 128) as u32,
            qlen: (qlen / 80) as u32,
            rate: 2,
        })
    }

    /// At line rate with a steady queue of one BDP the power is 2 (current B, voltage
    /// 2 B T); a growing queue adds its slope to the current.
    #[test]
    fn power_is_current_times_voltage() {
        let mut p = PowerTcp::new(params(CcLaw::PowerTcp, 0.9));
        let bdp = 125_040; // a multiple of 80 (q) near 100 Gb/s x 10 us
        assert_eq!(p.on_ack(&ack(0, hop(0, 0, bdp), 0, 0.0), 1), None);
        p.on_ack(&ack(1, hop(10_000, 125_056, bdp), 0, 0.0), 2);
        let mu = 125_056.0 * 8.0 / 10e-6 / 100e9;
        let volt = (bdp as f64 * 8.0 + 1e6) / 1e6;
        assert!((p.power() - mu * volt).abs() < 1e-9, "{}", p.power());
        // The queue grows by 12 480 B in 1 us at line rate: lambda = 1.1 B (roughly).
        let mut q = PowerTcp::new(params(CcLaw::PowerTcp, 0.9));
        q.on_ack(&ack(0, hop(0, 0, 0), 0, 0.0), 1);
        q.on_ack(&ack(1, hop(1_000, 12_544, 12_480), 0, 0.0), 2);
        let lambda = (12_544.0 + 12_480.0) * 8.0 / 1e-6 / 100e9;
        let sample = lambda * (12_480.0 * 8.0 + 1e6) / 1e6;
        let want = 0.9 + 0.1 * sample;
        assert!((q.power() - want).abs() < 1e-9, "{} vs {want}", q.power());
    }

    /// Below the target the rate rises toward `R_c / Gamma`, above it falls, and the
    /// update is `gamma`-weighted.
    #[test]
    fn the_rate_moves_by_gamma_toward_rc_over_gamma() {
        let mut p = PowerTcp::new(params(CcLaw::PowerTcp, 0.9));
        p.s.committed = 50e9;
        p.on_ack(&ack(0, hop(0, 0, 0), 0, 0.0), 1);
        // Half the line, no queue: lambda = max(mu, B/2) = B/2, Gamma' = 0.5.
        let r = p
            .on_ack(&ack(1, hop(10_000, 62_464, 0), 0, 0.0), 2)
            .unwrap();
        let c = 0.5 / 0.95;
        let want = 0.9 * (50e9 / c + 150e6) + 0.1 * 50e9;
        assert!((r - want).abs() < 1.0, "{r} vs {want}");
    }

    /// theta: a constant RTT of `1.05 T` is power 1 (no change but `beta`); a rising RTT
    /// raises the power; `T` falls to the least RTT.
    #[test]
    fn theta_reads_the_rtt_and_its_gradient() {
        let mut p = ThetaPowerTcp::new(params(CcLaw::ThetaPowerTcp, 0.7));
        p.on_ack(&ack(0, None, 10_500, 0.0), 1);
        let r = p.on_ack(&ack(1, None, 10_500, 1_000.0), 2).unwrap();
        assert!((p.power() - 1.0).abs() < 1e-12);
        assert!((r - 100e9).abs() < 1.0, "capped at the line: {r}");
        p.on_ack(&ack(2, None, 12_500, 2_000.0), 3);
        assert!(p.power() > 1.0, "{}", p.power());
        p.on_ack(&ack(3, None, 9_000, 3_000.0), 4);
        assert_eq!(p.base_rtt, 9_000.0);
    }
}
