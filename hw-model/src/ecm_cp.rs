//! ECM congestion point: the detection block of one egress queue (ECM section 3.2 and its
//! pseudo-code 3.2.1).
//!
//! Registers (all probed): `qlen`, the queue length in 64-byte pages (a packet counts
//! `ceil(len / 64)` pages from its admission to its dequeue), written at the edge with the
//! cycle's arrivals (this block's phase) and departures (the transmitters' dequeues, which
//! reach it as [`Dequeue`] values); `samp_byte_acc`, the bytes
//! arrived since the last sample; `interval`, the current sampling interval `S = Sf + Sr`;
//! `lfsr`, the random source of `Sr`; `qold`, the queue length at the last sample.
//!
//! Each admitted frame of an enabled priority adds its length to `samp_byte_acc`. The frame
//! that makes `samp_byte_acc >= S` is sampled (the text's `L >= S`; the pseudo-code writes
//! `>`); when the queue is empty or above `Qmc` the comparison uses `S >> sscale_log2`
//! (over-sampling). Sampling looks at the queue *before* the frame joins it: the pseudo-code's
//! `queue_len == 0` test could never hold if the arriving frame were already counted.
//!
//! On a sample: `qlen > Qsc` gives ECM(0,0); `qlen > Qmc` gives ECM-Max `(Qeq, 2 Qeq)`;
//! otherwise `Qoff = qlen - Qeq` saturated to `+-Qeq` and `Qdelta = qlen - qold` saturated to
//! `+-2 Qeq`, setting the Q bit when it is at either bound (the pseudo-code's test `qdelta > 1/2 Qeq`
//! contradicts the text's `+2 Qeq` and is read as the text). Both are scaled by
//! `Qscale = 2^qscale_log2` (a shift), ECM-Max's too: the text scales "the values copied into
//! an ECM frame". No frame when both are zero. When `Qoff <= 0` (the queue is not above
//! equilibrium) a frame goes out only if the sampled frame's CM-Tag carries this CP's CPID
//! (text; the pseudo-code tests `Qoff < 0`), so positive feedback reaches only the rate
//! limiters associated with this CP.
//!
//! ECM-Max goes out with `Q = 0`: 3.2 says it causes "the maximum rate decrement" (the
//! linear `alpha` cap), not the stronger Q-bit adjustment, although its `Qdelta = 2 Qeq` sits
//! on the bound that 3.1 uses to define Q. `Qoff` is clamped at `+Qeq` too (the pseudo-code
//! clamps only below; it matters only when `Qmc > 2 Qeq`). ECM(0,0) and ECM-Max skip the
//! CM-Tag filter: the pseudo-code's filter reads values those branches never set.
//!
//! The random interval is the text's `Sr` uniform in `[0, sr]` by default, or the
//! pseudo-code's `sr * (2u - 1)` around `Sf` with `sr_centered`; both are drawn from the
//! LFSR, never from a software generator.

use crate::config::{Derived, EcmParams, ECM_PAGE_BYTES, QUEUES};
use crate::ingress::Ingress;
use crate::ports::{each_port, Dequeue};
use crate::queue_len::LenDelta;
use crate::wires::{EcmFrame, EcmKind, PacketHdr};
use rtl::{Block, BlockError, Clocked, Lfsr32, Visit};

/// Width of `qlen` and `qold`: `2^20` cells of up to 4096 B in 64-byte pages.
pub const QLEN_BITS: u32 = 27;
/// Width of `samp_byte_acc` and `interval`: `Sf + Sr` plus one MTU stays below `2^19`.
pub const ACC_BITS: u32 = 19;

/// The registers of one congestion point.
#[derive(Debug, Clone)]
pub struct EcmCp {
    pub port: u8,
    pub queue: u8,
    /// `switch_id << 9 | port << 3 | queue`.
    pub cpid: u16,
    /// Queue length as of the last edge.
    pub qlen: u32,
    /// Arrivals and departures of this cycle, applied to `qlen` at the edge.
    delta: LenDelta,
    pub samp_byte_acc: u32,
    pub interval: u32,
    pub lfsr: Lfsr32,
    pub qold: u32,
    /// Frames sent, by kind (index: position in `EcmKind::ALL`).
    pub frames: [u64; 3],
}

/// Pages of a frame of `len` bytes.
#[inline]
pub fn pages(len: u16) -> u32 {
    (len as u32).div_ceil(ECM_PAGE_BYTES)
}

impl EcmCp {
    pub fn new(e: &EcmParams, port: u8, queue: u8) -> Self {
        let cpid = e.switch_id << 9 | (port as u16) << 3 | queue as u16;
        let mut cp = Self {
            port,
            queue,
            cpid,
            qlen: 0,
            delta: LenDelta::default(),
            samp_byte_acc: 0,
            interval: 0,
            lfsr: Lfsr32::new(e.lfsr_seed ^ cpid as u32),
            qold: 0,
            frames: [0; 3],
        };
        cp.interval = cp.next_interval(e);
        cp
    }

    fn next_interval(&mut self, e: &EcmParams) -> u32 {
        if e.sr_centered {
            e.sf - e.sr + self.lfsr.draw(2 * e.sr)
        } else {
            e.sf + self.lfsr.draw(e.sr)
        }
    }

    /// The queue length the next arrival of this cycle sees: the registered length and the
    /// arrivals before it (the chain of the block; departures come later in the cycle).
    #[inline]
    pub fn len_now(&self) -> u32 {
        self.qlen + self.delta.arrived()
    }

    /// An admitted frame arrives at the queue: sample it (maybe), then count it (at the
    /// edge). Returns whether the count is the register's first change of the cycle (as
    /// [`Self::depart`]), and the ECM frame to send, if any.
    pub fn arrive(&mut self, e: &EcmParams, hdr: &PacketHdr) -> (bool, Option<EcmFrame>) {
        let q = self.len_now();
        let first = self.delta.arrive(pages(hdr.len));
        (first, self.sample(e, q, hdr))
    }

    /// The sampling of an arrival that sees the queue at `q` (without it): its bytes join
    /// the accumulator, and a full interval gives feedback.
    fn sample(&mut self, e: &EcmParams, q: u32, hdr: &PacketHdr) -> Option<EcmFrame> {
        self.samp_byte_acc += hdr.len as u32;
        let oversample = q == 0 || q > e.qmc;
        let s = if oversample {
            self.interval >> e.sscale_log2
        } else {
            self.interval
        };
        if self.samp_byte_acc < s {
            return None;
        }
        self.samp_byte_acc = 0;
        self.interval = self.next_interval(e);
        let (kind, qoff, qdelta, sat) = feedback(e, q, self.qold);
        self.qold = q;
        if kind == EcmKind::Regular {
            let associated = hdr.cm_tag.is_some_and(|t| t.cpid == self.cpid);
            if (qoff == 0 && qdelta == 0) || (qoff <= 0 && !associated) {
                return None;
            }
        }
        self.frames[kind as usize] += 1;
        let tag = hdr.cm_tag.unwrap_or_default();
        Some(EcmFrame {
            port: hdr.src,
            cpid: self.cpid,
            kind,
            qoff: qoff << e.qscale_log2,
            qdelta: qdelta << e.qscale_log2,
            q: sat && e.qsat_enable,
            timestamp: tag.timestamp,
            unit: tag.unit,
            sampled: *hdr,
        })
    }

    /// A frame of `len` bytes leaves the queue (dequeue): it leaves `qlen` at the edge.
    /// Returns whether it is the register's first change of the cycle.
    #[inline]
    pub fn depart(&mut self, len: u16) -> bool {
        self.delta.depart(pages(len))
    }

    /// The edge: `qlen` takes the cycle's arrivals and departures.
    pub fn latch(&mut self) -> Result<(), String> {
        self.delta
            .latch(&mut self.qlen, QLEN_BITS)
            .map_err(|e| format!("egress p{} q{}: ECM {e}", self.port, self.queue))
    }

    /// Probed registers.
    pub fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("qlen", QLEN_BITS, self.qlen as u64);
        v.wire("samp_byte_acc", ACC_BITS, self.samp_byte_acc as u64);
        v.wire("interval", ACC_BITS, self.interval as u64);
        v.wire("lfsr", 32, self.lfsr.value() as u64);
        v.wire("qold", QLEN_BITS, self.qold as u64);
    }
}

/// The congestion points of the switch: one per egress queue of an enabled priority.
#[derive(Debug, Clone)]
pub struct Ecm {
    params: EcmParams,
    /// Sorted by (port, queue).
    pub cps: Vec<EcmCp>,
    /// Per egress queue `port * 8 + q`, the index of its CP (`u16::MAX`: none).
    slot: Vec<u16>,
    /// The CPs with arrivals or departures in this cycle: the edge latches only these.
    touched: Vec<u16>,
}

/// What the congestion points read in the flow-control phase: the ports that admitted a
/// packet in this cycle, whose newest pending packet it is.
pub struct EcmIn<'a> {
    pub admitted: u64,
    pub ingress: &'a Ingress,
}

impl Ecm {
    pub fn new(d: &Derived) -> Self {
        let mut cps = Vec::new();
        let mut slot = vec![u16::MAX; d.ports * QUEUES];
        for p in 0..d.ports {
            for q in 0..QUEUES {
                if d.ecm.mask & (1 << q) != 0 {
                    slot[p * QUEUES + q] = cps.len() as u16;
                    cps.push(EcmCp::new(&d.ecm, p as u8, q as u8));
                }
            }
        }
        Self {
            params: d.ecm.clone(),
            touched: Vec::with_capacity(cps.len()),
            cps,
            slot,
        }
    }

    /// The CP of egress queue `q` of `port`, if it has one.
    #[inline]
    pub fn cp(&self, port: usize, q: usize) -> Option<usize> {
        let s = self.slot[port * QUEUES + q];
        (s != u16::MAX).then_some(s as usize)
    }

    /// The cycle's dequeues (the transmitters' wire) leave their CPs' counts at the edge.
    #[inline]
    pub fn departures(&mut self, dequeues: &[Dequeue]) {
        for dq in dequeues {
            if let Some(cp) = self.cp(dq.port as usize, dq.queue as usize) {
                if self.cps[cp].depart(dq.len) {
                    self.touched.push(cp as u16);
                }
            }
        }
    }

    /// `egress.pNN.qQ.ecm.*` of a queue with a CP.
    #[inline]
    pub fn probe_queue<V: Visit>(&self, port: usize, q: usize, v: &mut V) {
        if let Some(cp) = self.cp(port, q) {
            v.scope("ecm", |v| self.cps[cp].probe(v));
        }
    }
}

impl<'a> Block<EcmIn<'a>, &'a mut Vec<EcmFrame>> for Ecm {
    /// The arrivals of the cycle's admitted packets, in ingress port order (the order of
    /// the CP registers' chain). With ECM off it is one test in the phase.
    #[inline(always)]
    fn eval(
        &mut self,
        _: u64,
        input: EcmIn<'a>,
        out: &'a mut Vec<EcmFrame>,
    ) -> Result<(), BlockError> {
        if !self.cps.is_empty() {
            self.arrivals(input, out);
        }
        Ok(())
    }
}

impl Ecm {
    /// The arrivals of the cycle's admitted packets at the congestion points.
    fn arrivals(&mut self, input: EcmIn<'_>, out: &mut Vec<EcmFrame>) {
        for p in each_port(input.admitted) {
            let hdr = &input.ingress.newest(p).hdr;
            if let Some(cp) = self.cp(hdr.dst as usize, hdr.prio as usize) {
                let (first, frame) = self.cps[cp].arrive(&self.params, hdr);
                if first {
                    self.touched.push(cp as u16);
                }
                out.extend(frame);
            }
        }
    }
}

impl Clocked for Ecm {
    /// Every touched CP's `qlen` takes its arrivals and departures (call after
    /// [`Ecm::departures`] has taken the cycle's dequeues). One test when none moved.
    #[inline(always)]
    fn commit(&mut self, _: u64) -> Result<(), BlockError> {
        if self.touched.is_empty() {
            return Ok(());
        }
        self.latch_touched()
    }
}

impl Ecm {
    /// The edge of the touched CPs.
    #[inline(never)]
    fn latch_touched(&mut self) -> Result<(), BlockError> {
        for &cp in &self.touched {
            self.cps[cp as usize].latch().map_err(BlockError)?;
        }
        self.touched.clear();
        Ok(())
    }
}

/// The feedback of a sample at queue length `q` (pages) after one at `qold`, before
/// scaling: `(kind, Qoff, Qdelta, Qdelta saturated)`.
pub fn feedback(e: &EcmParams, q: u32, qold: u32) -> (EcmKind, i32, i32, bool) {
    let qeq = e.qeq as i32;
    if q > e.qsc {
        return (EcmKind::Zero, 0, 0, false);
    }
    if q > e.qmc {
        return (EcmKind::Max, qeq, 2 * qeq, false);
    }
    let qoff = (q as i32 - qeq).clamp(-qeq, qeq);
    let qdelta = (q as i32 - qold as i32).clamp(-2 * qeq, 2 * qeq);
    // 3.1: the Q bit means "Qdelta is equal to -2 Qeq or 2 Qeq".
    (EcmKind::Regular, qoff, qdelta, qdelta.abs() == 2 * qeq)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EcmConfig;
    use crate::ports::EcnLook;
    use crate::wires::CmTag;

    fn params(f: impl FnOnce(&mut EcmConfig)) -> EcmParams {
        let mut c = crate::config::SwitchConfig::small();
        c.ecm.priorities = vec![1];
        f(&mut c.ecm);
        c.build().unwrap().ecm
    }

    fn hdr(len: u16, tag: Option<u16>) -> PacketHdr {
        PacketHdr {
            src: 2,
            dst: 5,
            prio: 1,
            len,
            cm_tag: tag.map(|cpid| CmTag {
                cpid,
                timestamp: 7,
                unit: 1,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn feedback_saturates_and_picks_the_message() {
        let e = params(|_| {});
        let (qeq, qmc, qsc) = (e.qeq, e.qmc, e.qsc);
        assert_eq!(feedback(&e, qsc + 1, 0).0, EcmKind::Zero);
        let max = feedback(&e, qmc + 1, 0);
        assert_eq!(max, (EcmKind::Max, qeq as i32, 2 * qeq as i32, false));
        assert_eq!(
            feedback(&e, 0, 0),
            (EcmKind::Regular, -(qeq as i32), 0, false)
        );
        let jump = feedback(&e, qmc, 0);
        assert_eq!(jump.2, 2 * qeq as i32, "Qdelta saturates at 2 Qeq");
        assert!(jump.3);
        assert_eq!(
            feedback(&e, qmc, qmc).1,
            qeq as i32,
            "Qoff saturates at Qeq"
        );
    }

    #[test]
    fn samples_every_interval_and_oversamples_an_empty_queue() {
        let e = params(|c| {
            c.sf_bytes = 10_000;
            c.sr_bytes = 0;
            c.sscale_log2 = 1;
        });
        let mut cp = EcmCp::new(&e, 5, 1);
        assert_eq!(cp.interval, 10_000);
        // The queue is empty before the first frame: S / 2 = 5000 B, so the 4th 1500 B frame.
        let mut sampled_at = None;
        for i in 0..4 {
            if cp.arrive(&e, &hdr(1500, None)).1.is_some() || cp.samp_byte_acc == 0 {
                sampled_at.get_or_insert(i);
            }
        }
        assert_eq!(
            sampled_at, None,
            "queue no longer empty after the first frame"
        );
        assert_eq!(cp.samp_byte_acc, 6000);
        for _ in 0..3 {
            cp.arrive(&e, &hdr(1500, None));
        }
        assert_eq!(cp.samp_byte_acc, 0, "10500 >= 10000: sampled");
        assert_eq!(cp.qold, 6 * pages(1500));
    }

    #[test]
    fn below_equilibrium_only_the_associated_cp_speaks() {
        let e = params(|c| {
            c.sf_bytes = 0;
            c.sr_bytes = 0;
        });
        let mut cp = EcmCp::new(&e, 5, 1);
        cp.arrive(&e, &hdr(1500, None));
        assert!(
            cp.arrive(&e, &hdr(1500, None)).1.is_none(),
            "no tag: filtered"
        );
        assert!(cp.arrive(&e, &hdr(1500, Some(cp.cpid ^ 1))).1.is_none());
        let f = cp.arrive(&e, &hdr(1500, Some(cp.cpid))).1.unwrap();
        assert_eq!(
            (f.kind, f.port, f.timestamp, f.unit),
            (EcmKind::Regular, 2, 7, 1)
        );
        assert!(f.qoff < 0);
    }

    #[test]
    fn qscale_shifts_the_frame_values() {
        let e = params(|c| {
            c.sf_bytes = 0;
            c.sr_bytes = 0;
            c.qscale_log2 = 2;
            c.qmc_bytes = c.qsc_bytes;
        });
        let mut cp = EcmCp::new(&e, 5, 1);
        cp.qlen = e.qeq + 10;
        cp.qold = e.qeq + 10;
        let f = cp.arrive(&e, &hdr(64, None)).1.unwrap();
        assert_eq!((f.qoff, f.qdelta), (40, 0));
    }

    /// `qlen` moves at the edge: arrivals count for the later arrivals of the cycle
    /// (`len_now`), departures only at the edge.
    #[test]
    fn qlen_takes_the_cycle_at_the_edge() {
        let mut c = crate::config::SwitchConfig::small();
        c.ecm.priorities = vec![1];
        let d = c.build().unwrap();
        let mut ecm = Ecm::new(&d);
        let i = ecm.cp(5, 1).unwrap();
        let e = ecm.params.clone();
        ecm.touched.push(i as u16);
        ecm.cps[i].arrive(&e, &hdr(1500, None));
        ecm.cps[i].arrive(&e, &hdr(1500, None));
        assert_eq!(
            (ecm.cps[i].qlen, ecm.cps[i].len_now()),
            (0, 2 * pages(1500))
        );
        ecm.commit(1).unwrap();
        let dq = Dequeue {
            port: 5,
            queue: 1,
            list: 0,
            ncells: 1,
            len: 1500,
            ecn: EcnLook::default(),
        };
        ecm.departures(&[dq]);
        assert_eq!(ecm.cps[i].qlen, 2 * pages(1500), "until the edge");
        ecm.commit(2).unwrap();
        assert_eq!(ecm.cps[i].qlen, pages(1500));
    }

    /// Companion: more pages leaving than the queue holds is caught at the edge.
    #[test]
    fn a_departure_below_zero_is_caught_at_the_edge() {
        let mut c = crate::config::SwitchConfig::small();
        c.ecm.priorities = vec![1];
        let mut ecm = Ecm::new(&c.build().unwrap());
        let dq = Dequeue {
            port: 5,
            queue: 1,
            list: 0,
            ncells: 1,
            len: 64,
            ecn: EcnLook::default(),
        };
        ecm.departures(&[dq]);
        let e = ecm.commit(3).unwrap_err().0;
        assert_eq!(
            e,
            "egress p5 q1: ECM qlen 0 + 0 - 1 leaves the 27-bit register"
        );
    }

    #[test]
    fn centred_interval_stays_around_sf() {
        let e = params(|c| {
            c.sf_bytes = 50_000;
            c.sr_bytes = 20_000;
            c.sr_centered = true;
        });
        let mut cp = EcmCp::new(&e, 0, 1);
        let draws: Vec<u32> = (0..2000).map(|_| cp.next_interval(&e)).collect();
        assert!(draws.iter().all(|&s| (30_000..=70_000).contains(&s)));
        assert!(draws.iter().any(|&s| s < 40_000) && draws.iter().any(|&s| s > 60_000));
    }
}
