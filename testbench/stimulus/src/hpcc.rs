//! HPCC's sender (Li et al., SIGCOMM 2019, Alg. 1), as ns3-datacenter runs it with one rate
//! for the path (`MULTI_RATE 0`, `UpdateRateHp` in
//! `simulator/ns-3.39/src/point-to-point/model/rdma-hw.cc` lines 796-968; docs/int.md). The
//! paper is not among the seed papers: the equations are the simulator's, which are the
//! paper's Alg. 1 with the window as a rate.
//!
//! Per ACK, with the hop records the packet carried (`crate::int_cc` brings them) and the
//! previous ones, per hop (the path's `u'` is its most utilised hop's, `MULTI_RATE 0`):
//!
//! ```text
//! tau = ts - ts'                       txRate = (txBytes - txBytes') * 8 / tau
//! u'  = txRate / B + min(qlen, qlen') * 8 / (B * T)                      (Alg. 1 line 3)
//! U   = (U * (T - min(tau, T)) + u' * min(tau, T)) / T                   (line 5, EWMA)
//! U / eta >= 1 or incStage >= maxStage:  R = R_c / (U / eta) + W_AI,  incStage = 0
//! otherwise:                             R = R_c + W_AI,              incStage + 1
//! ```
//!
//! `R` is bounded by `min_rate` and the line. Every ACK sets the sending rate (HPCC's fast
//! reaction, `FAST_REACT 1`); only an ACK past the last update's `snd_nxt` commits `R_c` and
//! `incStage` (once per RTT, Alg. 1 lines 14-16). The first ACK only stores its record.

use crate::int_cc::{busiest, Ack, IntHops};
use scenario::params::IntCcParams;

/// One flow's HPCC state; rates in b/s.
#[derive(Debug, Clone)]
pub struct Hpcc {
    p: IntCcParams,
    /// `U`, the utilisation average (`hp.u`, 1 at the start: `rdma-queue-pair.cc` line 50).
    pub u: f64,
    /// `R_c`, the rate of the last committed update, and `incStage`.
    pub committed: f64,
    inc_stage: u32,
    /// `snd_nxt` at the last committed update (`m_lastUpdateSeq`).
    last_update: Option<u32>,
    /// The records of the last ACK, one per hop.
    prev: IntHops,
}

impl Hpcc {
    pub fn new(p: IntCcParams) -> Self {
        Self {
            p,
            u: 1.0,
            committed: p.line_bps as f64,
            inc_stage: 0,
            last_update: None,
            prev: IntHops::default(),
        }
    }

    /// An ACK; `snd_nxt` is the next packet the sender will send. The new sending rate, if
    /// the ACK carried a hop record that moves it.
    pub fn on_ack(&mut self, ack: &Ack, snd_nxt: u32) -> Option<f64> {
        if ack.hops.as_slice().is_empty() {
            return None;
        }
        let Some(last) = self.last_update else {
            self.last_update = Some(snd_nxt);
            self.prev = ack.hops;
            return None;
        };
        let prev = std::mem::replace(&mut self.prev, ack.hops);
        let t = self.p.base_rtt_ns as f64;
        let (u, tau) = busiest(&ack.hops, &prev, |hop, prev, tau| {
            let b = hop.line_rate_bps() as f64;
            let tx_rate = hop.bytes_since(prev) as f64 * 8.0 / (tau as f64 * 1e-9);
            let queue = hop.qlen_bytes().min(prev.qlen_bytes()) as f64 * 8.0;
            tx_rate / b + queue / (b * t * 1e-9)
        })?;
        let dt = (tau as f64).min(t);
        self.u = (self.u * (t - dt) + u * dt) / t;
        let c = self.u / self.p.u_target;
        let ai = self.p.rate_ai_bps as f64;
        let (rate, stage) = if c >= 1.0 || self.inc_stage >= self.p.mi_thresh {
            (self.committed / c + ai, 0)
        } else {
            (self.committed + ai, self.inc_stage + 1)
        };
        let rate = rate.clamp(self.p.min_rate_bps as f64, self.p.line_bps as f64);
        // Sequence numbers wrap (`snd_nxt` counts with `wrapping_add`).
        if ack.seq.wrapping_sub(last) as i32 >= 0 {
            self.committed = rate;
            self.inc_stage = stage;
            self.last_update = Some(snd_nxt.max(last));
        }
        Some(rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw_model::int_stamp::IntHop;
    use scenario::params::CcLaw;

    fn params() -> IntCcParams {
        IntCcParams {
            law: CcLaw::Hpcc,
            base_rtt_ns: 10_000,
            rate_ai_bps: 50_000_000,
            min_rate_bps: 100_000_000,
            u_target: 0.95,
            mi_thresh: 5,
            gamma: 0.9,
            line_bps: 100_000_000_000,
        }
    }

    /// A record at `ns` with `bytes` sent (multiples of 128) and `qlen` bytes queued
    /// (multiples of 80) at 100 Gb/s.
    fn hop(ns: u32, bytes: u64, qlen: u64) -> Option<IntHop> {
        Some(IntHop {
            time: ns,
            bytes: (bytes / 128) as u32,
            qlen: (qlen / 80) as u32,
            rate: 2,
        })
    }

    fn ack(seq: u32, hop: Option<IntHop>) -> Ack {
        Ack {
            seq,
            hops: IntHops::one(hop),
            rtt_ns: 10_000,
            now_ns: 0.0,
        }
    }

    /// The link at line rate with a queue of about one BDP: `u'` about `1 + 1 = 2`; after a
    /// whole `T` of such records `U = u'`, and the committed rate becomes
    /// `R_c / (U / eta) + W_AI`.
    #[test]
    fn a_full_link_with_a_bdp_of_queue_halves_the_rate_by_eta() {
        let mut h = Hpcc::new(params());
        let bdp = 124_960; // near 100 Gb/s x 10 us / 8, a multiple of 80
        assert_eq!(h.on_ack(&ack(0, hop(0, 0, bdp)), 10), None, "first record");
        // 10 us later the port sent 125 000 B: txRate = 100 Gb/s.
        let r = h.on_ack(&ack(10, hop(10_000, 125_056, bdp)), 20).unwrap();
        let tx = 125_056.0 * 8.0 / 10e-6 / 100e9;
        let queue = bdp as f64 * 8.0 / 1e6;
        assert!((h.u - (tx + queue)).abs() < 1e-12, "{}", h.u);
        let want = 100e9 / (h.u / 0.95) + 50e6;
        assert!((r - want).abs() < 1.0, "{r} vs {want}");
        assert_eq!(
            h.committed, r,
            "an ACK past snd_nxt of the last update commits"
        );
        // Fast reaction: an ACK before snd_nxt (20) sets the rate but does not commit.
        let r2 = h.on_ack(&ack(15, hop(11_000, 137_600, bdp)), 30).unwrap();
        assert_ne!(r2, r);
        assert_eq!(h.committed, r);
    }

    /// Three hops, the busy one in the middle: the rate is the one its record alone gives
    /// (the path's `u'` is its most utilised hop's), whatever the idle hops around it say.
    #[test]
    fn the_most_utilised_hop_sets_the_rate() {
        let bdp = 124_960;
        let stack = |hops: &[Option<IntHop>]| {
            let mut s = IntHops::default();
            hops.iter().flatten().for_each(|&h| s.push(h));
            s
        };
        let idle = |ns: u32| hop(ns, 0, 0);
        let busy = |ns: u32, bytes: u64| hop(ns, bytes, bdp);
        let mut one = Hpcc::new(params());
        one.on_ack(&ack(0, busy(0, 0)), 10);
        let alone = one.on_ack(&ack(10, busy(10_000, 125_056)), 20).unwrap();
        let mut three = Hpcc::new(params());
        let first = stack(&[idle(0), busy(0, 0), idle(0)]);
        let ack3 = |seq, hops| Ack {
            seq,
            hops,
            rtt_ns: 10_000,
            now_ns: 0.0,
        };
        three.on_ack(&ack3(0, first), 10);
        let then = stack(&[idle(10_000), busy(10_000, 125_056), idle(10_000)]);
        assert_eq!(three.on_ack(&ack3(10, then), 20), Some(alone));
        assert_eq!(three.u, one.u);
    }

    /// An idle path: `U` decays below `eta` and the rate grows by `W_AI` per update, then
    /// multiplicatively after `maxStage` of them.
    #[test]
    fn an_idle_path_raises_the_rate_additively_then_multiplicatively() {
        let mut h = Hpcc::new(params());
        h.committed = 10e9;
        h.on_ack(&ack(0, hop(0, 0, 0)), 1);
        // 10 % utilisation, no queue, one record per T.
        let mut rates = Vec::new();
        for i in 1..=8u32 {
            let r = h.on_ack(&ack(i, hop(i * 10_000, i as u64 * 12_544, 0)), i + 1);
            rates.push(r.unwrap());
        }
        assert!((rates[0] - 10.05e9).abs() < 1.0, "{}", rates[0]);
        for w in rates[..5].windows(2) {
            assert!((w[1] - w[0] - 50e6).abs() < 1.0, "{rates:?}");
        }
        assert!(rates[5] > 2.0 * rates[4], "maxStage = 5: MI, {rates:?}");
    }
}
