//! ECN marker: RED-curve marking at the egress queues of the enabled priorities (RFC 3168
//! section 5; the curve of Floyd & Jacobson 1993 on the *instantaneous* queue, as DCQCN
//! (Zhu et al. 2015, section 3, Fig. 5) and DCTCP (Alizadeh et al. 2010, section 3.1) use
//! it).
//!
//! The marking probability at queue length `q` is
//!
//! ```text
//! p(q) = 0                                     q <= Kmin
//! p(q) = Pmax * (q - Kmin) / (Kmax - Kmin)     Kmin < q <= Kmax
//! p(q) = 1                                     q > Kmax
//! ```
//!
//! and `Kmin = Kmax = K` is DCTCP's step: mark iff `q > K`. Only ECN-capable packets
//! (`PacketHdr::ecn` ECT or CE) are looked at; a marked packet leaves with CE. A packet
//! that is not ECN-capable is neither marked nor dropped here (a WRED chip would drop it;
//! the buffer policy decides drops in this model).
//!
//! Hardware, per marking queue (all probed): `qlen`, the queue length in bytes or cells
//! (`switch.ecn.unit`), a register counted from a packet's admission to its dequeue (like
//! the egress counters), updated at the clock edge with the cycle's arrivals and
//! departures; `lfsr`, an `rtl::Lfsr32` (`x^32 + x^22 + x^2 + x + 1`), the random source;
//! `marked`, the packets marked. Shared by the marking queues of a curve, configuration
//! registers: `Kmin`, `Kmax` and `span = ceil((Kmax - Kmin) * 2^16 / Pmax)`, which the
//! control plane computes when it writes the curve, so the datapath has no divider. The
//! curve is `[switch.ecn]`'s, or, for the priorities of a `[[switch.ecn.curves]]` entry,
//! that entry's (a per-class ECN profile: a queue selects its curve by its priority).
//!
//! The draw: 16 fresh LFSR bits `r` (one clock of a 16-way unrolled register), and a mark
//! iff `floor(r * span / 2^16) < q - Kmin`. So the random threshold is uniform over
//! `0..span` and `P(mark) = ceil((q - Kmin) * 2^16 / span) / 2^16`: the RED line,
//! quantised to `2^-16` (at most `2^-16` above it, [`mark_probability`]). The datapath is
//! two comparators (`q > Kmin`, `q > Kmax`), one subtractor, one comparator of the draw
//! and one 16 x 44-bit product of the LFSR bits with the `span` register (the same small
//! multiplier as `Lfsr32::draw` in the ECM congestion point). The LFSR advances only on a
//! draw, that is for an ECN-capable packet with `Kmin < q <= Kmax`.
//!
//! When (`switch.ecn.mark_on`): `enqueue` decides at the packet's admission on the
//! registered `qlen` (the queue before the cycle's arrivals), and its mark goes to the
//! write stage (phase 5), which sets CE in the packet's descriptor before storing it;
//! `dequeue` decides when the scheduler dequeues the packet, on the registered `qlen` less
//! the packet itself and the cycle's earlier dequeues from the queue (the queue it leaves
//! behind), and its mark goes with the packet to the wire (the transmitter's `DataTx::ce`).
//! The transmitter looks from the registers ([`EcnMarker::look_at`]); the look (`seen`,
//! the draw, the mark) lands in them at the edge with the dequeue
//! ([`EcnMarker::departures`]). Either way the marker writes no other block's state
//! in the cycle. Arrivals are evaluated in the egress phase, after the ECM congestion
//! points (phase 3) have copied the admitted header into their samples. Several arrivals at one queue in a cycle draw
//! from its LFSR in ingress port order (a chain inside the block).

use crate::config::{Derived, EcnCurve, EcnParams, EcnUnit, MarkOn, ECN_P_FRAC, QUEUES};
use crate::ingress::Ingress;
use crate::ports::{each_port, Dequeue, EcnLook};
use crate::queue_len::LenDelta;
use crate::wires::PacketHdr;
use rtl::{Block, BlockError, Clocked, Lfsr32, Visit};

/// Width of `qlen`: a queue of up to `2^32 - 1` bytes.
pub const QLEN_BITS: u32 = 32;
/// Width of the `marked` counter.
pub const MARKED_BITS: u32 = 48;

/// The registers of one marking queue.
#[derive(Debug, Clone)]
pub struct EcnQueue {
    pub port: u8,
    pub queue: u8,
    /// Queue length in the marker's unit, as of the last edge.
    pub qlen: u32,
    /// Arrivals and departures of this cycle, applied to `qlen` at the edge.
    delta: LenDelta,
    pub lfsr: Lfsr32,
    /// Index of the queue's curve in `EcnParams::curves`.
    curve: u8,
    /// Packets marked CE.
    pub marked: u64,
    /// ECN-capable packets looked at.
    pub seen: u64,
}

/// What a packet of `len` bytes and `ncells` cells counts in the marker's unit.
#[inline]
pub fn units(unit: EcnUnit, len: u16, ncells: u16) -> u32 {
    match unit {
        EcnUnit::Bytes => len as u32,
        EcnUnit::Cells => ncells as u32,
    }
}

/// Whether the RED decision at queue length `q` draws from the LFSR: `Kmin < q <= Kmax`.
fn draws(e: &EcnCurve, q: u32) -> bool {
    e.kmin < q && q <= e.kmax
}

/// The RED decision at queue length `q`: draws from `lfsr` only where `draws` says it does.
pub fn decide(e: &EcnCurve, q: u32, lfsr: &mut Lfsr32) -> bool {
    if !draws(e, q) {
        return q > e.kmax;
    }
    let r = (lfsr.advance(ECN_P_FRAC) & ((1 << ECN_P_FRAC) - 1)) as u64;
    (r * e.span) >> ECN_P_FRAC < (q - e.kmin) as u64
}

/// The exact probability [`decide`] marks with at queue length `q`.
pub fn mark_probability(e: &EcnCurve, q: u32) -> f64 {
    if q <= e.kmin {
        return 0.0;
    }
    if q > e.kmax {
        return 1.0;
    }
    let one = 1u64 << ECN_P_FRAC;
    let x = (q - e.kmin) as u64;
    (x * one).div_ceil(e.span).min(one) as f64 / one as f64
}

impl EcnQueue {
    fn new(e: &EcnParams, port: u8, queue: u8) -> Self {
        Self {
            port,
            queue,
            qlen: 0,
            delta: LenDelta::default(),
            lfsr: Lfsr32::new(e.lfsr_seed ^ ((port as u32) << 3 | queue as u32)),
            curve: e.curve_of[queue as usize],
            marked: 0,
            seen: 0,
        }
    }

    /// Look at a packet with header `hdr` against queue length `q` (an arrival under
    /// `mark_on = "enqueue"`): whether it is marked CE.
    fn look(&mut self, e: &EcnParams, q: u32, hdr: &PacketHdr) -> bool {
        if !hdr.ecn.capable() {
            return false;
        }
        self.seen += 1;
        let mark = decide(&e.curves[self.curve as usize], q, &mut self.lfsr);
        self.marked += mark as u64;
        mark
    }

    /// Probed registers.
    pub fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("qlen", QLEN_BITS, self.qlen as u64);
        v.wire("lfsr", 32, self.lfsr.value() as u64);
        v.wire("marked", MARKED_BITS, self.marked);
    }
}

/// The marking queues of the switch.
#[derive(Debug, Clone)]
pub struct EcnMarker {
    pub params: EcnParams,
    /// Sorted by (port, queue).
    pub queues: Vec<EcnQueue>,
    /// Per egress queue `port * 8 + q`, the index of its marker (`u16::MAX`: none).
    slot: Vec<u16>,
    /// The markers with arrivals or departures in this cycle: the edge updates only these
    /// (every packet has at least one unit, so a touched queue has a non-zero delta).
    touched: Vec<u16>,
}

/// What the marker reads at arrivals: the ports that admitted a packet in this cycle, and
/// their ingress stage, whose newest pending descriptor is that packet. Its output is the
/// set of those ports whose packet it marks CE: the write stage sets CE in the descriptor
/// before it stores it (phase 5), so the marker writes nothing of the ingress stage.
pub struct EcnIn<'a> {
    pub admitted: u64,
    pub ingress: &'a Ingress,
}

impl EcnMarker {
    pub fn new(d: &Derived) -> Self {
        let mut queues = Vec::new();
        let mut slot = vec![u16::MAX; d.ports * QUEUES];
        for p in 0..d.ports {
            for q in 0..QUEUES {
                if d.ecn.mask & (1 << q) != 0 {
                    slot[p * QUEUES + q] = queues.len() as u16;
                    queues.push(EcnQueue::new(&d.ecn, p as u8, q as u8));
                }
            }
        }
        Self {
            params: d.ecn.clone(),
            touched: Vec::with_capacity(queues.len()),
            queues,
            slot,
        }
    }

    /// The marker of egress queue `q` of `port`, if it has one.
    #[inline]
    pub fn queue(&self, port: usize, q: usize) -> Option<usize> {
        let s = self.slot[port * QUEUES + q];
        (s != u16::MAX).then_some(s as usize)
    }

    /// Packet `dq` (header `hdr`) is dequeued from a queue after the cycle's dequeues
    /// `earlier` (at least those of its port, whose one visit a cycle holds every dequeue
    /// of the queue; the transmitter passes no more): under `mark_on = "dequeue"` it is looked at now against the registered
    /// length less the units dequeued from its queue in this cycle, itself included, with
    /// the LFSR advanced by the earlier draws of the queue (the chain, carried in the
    /// values, the registers read only). The look goes out in `dq` to [`Self::departures`];
    /// the transmitter carries its mark (`DataTx::ce`), the descriptor RAM is not written.
    #[inline(always)]
    pub fn look_at(&self, dq: &Dequeue, hdr: &PacketHdr, earlier: &[Dequeue]) -> EcnLook {
        let e = &self.params;
        if e.mark_on != MarkOn::Dequeue || !hdr.ecn.capable() {
            return EcnLook::default();
        }
        match self.queue(dq.port as usize, dq.queue as usize) {
            Some(i) => self.look_from(i, dq, earlier),
            None => EcnLook::default(),
        }
    }

    /// [`Self::look_at`] of marking queue `i`.
    fn look_from(&self, i: usize, dq: &Dequeue, earlier: &[Dequeue]) -> EcnLook {
        let e = &self.params;
        let m = &self.queues[i];
        let mut departed = units(e.unit, dq.len, dq.ncells);
        let mut lfsr = m.lfsr;
        for x in earlier
            .iter()
            .filter(|x| (x.port, x.queue) == (dq.port, dq.queue))
        {
            departed += units(e.unit, x.len, x.ncells);
            if x.ecn.drew() {
                lfsr.advance(ECN_P_FRAC);
            }
        }
        let curve = &e.curves[m.curve as usize];
        let behind = m.qlen.saturating_sub(departed);
        EcnLook::looked(draws(curve, behind), decide(curve, behind, &mut lfsr))
    }

    /// The edge of the cycle's dequeues, in their order: each leaves its marking queue's
    /// count, and its look (if any) lands in `seen`, the LFSR and `marked`.
    pub fn departures(&mut self, dequeues: &[Dequeue]) {
        let unit = self.params.unit;
        for dq in dequeues {
            let Some(i) = self.queue(dq.port as usize, dq.queue as usize) else {
                continue;
            };
            let m = &mut self.queues[i];
            if m.delta.depart(units(unit, dq.len, dq.ncells)) {
                self.touched.push(i as u16);
            }
            m.seen += dq.ecn.seen() as u64;
            if dq.ecn.drew() {
                m.lfsr.advance(ECN_P_FRAC);
            }
            m.marked += dq.ecn.ce() as u64;
        }
    }

    /// `egress.pNN.qQ.ecn.*` of a marking queue.
    #[inline]
    pub fn probe_queue<V: Visit>(&self, port: usize, q: usize, v: &mut V) {
        if let Some(i) = self.queue(port, q) {
            v.scope("ecn", |v| self.queues[i].probe(v));
        }
    }

    /// [`crate::Fault::EcnNoPmax`]: every curve's `span` register written as if `Pmax`
    /// were 1.
    pub(crate) fn drop_pmax(&mut self) {
        for c in &mut self.params.curves {
            c.span = (c.kmax - c.kmin) as u64;
        }
    }
}

impl<'a> Block<EcnIn<'a>, &'a mut u64> for EcnMarker {
    /// The cycle's admitted packets join their queue's count, in ingress port order; under
    /// `mark_on = "enqueue"` each ECN-capable one is looked at, and the ports of those it
    /// marks go out in `ce`. With ECN off it is one test in the phase (`ce` stays empty).
    #[inline(always)]
    fn eval(&mut self, _: u64, input: EcnIn<'a>, ce: &'a mut u64) -> Result<(), BlockError> {
        if self.queues.is_empty() {
            return Ok(());
        }
        self.arrivals(input, ce)
    }
}

impl EcnMarker {
    /// The arrivals of the cycle's admitted packets at the marking queues.
    fn arrivals(&mut self, input: EcnIn<'_>, ce: &mut u64) -> Result<(), BlockError> {
        let e = &self.params;
        *ce = 0;
        for p in each_port(input.admitted) {
            let Some(d) = input.ingress.ports[p].pending.back() else {
                return Err(BlockError(format!(
                    "ingress p{p}: a packet admitted in this cycle is not pending"
                )));
            };
            let Some(i) = self.queue(d.hdr.dst as usize, d.hdr.prio as usize) else {
                continue;
            };
            let m = &mut self.queues[i];
            if m.delta.arrive(units(e.unit, d.hdr.len, d.ncells)) {
                self.touched.push(i as u16);
            }
            if e.mark_on == MarkOn::Enqueue && m.look(e, m.qlen, &d.hdr) {
                *ce |= 1 << p;
            }
        }
        Ok(())
    }
}

impl Clocked for EcnMarker {
    /// `qlen += arrivals - departures`; a result below zero or above the register is a
    /// model bug. One test when no queue moved.
    #[inline(always)]
    fn commit(&mut self, _: u64) -> Result<(), BlockError> {
        if self.touched.is_empty() {
            return Ok(());
        }
        self.latch_touched()
    }
}

impl EcnMarker {
    /// The edge of the touched queues.
    #[inline(never)]
    fn latch_touched(&mut self) -> Result<(), BlockError> {
        for &i in &self.touched {
            let m = &mut self.queues[i as usize];
            m.delta
                .latch(&mut m.qlen, QLEN_BITS)
                .map_err(|e| BlockError(format!("egress p{} q{}: ECN {e}", m.port, m.queue)))?;
        }
        self.touched.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EcnConfig;

    fn params(f: impl FnOnce(&mut EcnConfig)) -> EcnCurve {
        let mut c = crate::config::SwitchConfig::small();
        c.ecn.priorities = vec![1];
        f(&mut c.ecn);
        c.build().unwrap().ecn.curve(1).clone()
    }

    #[test]
    fn step_threshold_marks_above_k_without_drawing() {
        let e = params(|c| {
            c.kmin = 100;
            c.kmax = 100;
        });
        let mut l = Lfsr32::new(1);
        assert!(!decide(&e, 100, &mut l), "q = K is not above K");
        assert!(decide(&e, 101, &mut l));
        assert_eq!(l.value(), 1, "a step threshold never draws");
        assert_eq!(mark_probability(&e, 101), 1.0);
    }

    #[test]
    fn exact_probability_follows_the_red_line() {
        let e = params(|c| {
            c.kmin = 1000;
            c.kmax = 5000;
            c.pmax = 0.25;
        });
        assert_eq!(e.span, 16_000);
        assert_eq!(mark_probability(&e, 1000), 0.0);
        assert_eq!(mark_probability(&e, 3000), 0.125);
        assert_eq!(mark_probability(&e, 5000), 0.25);
        assert_eq!(mark_probability(&e, 5001), 1.0);
    }

    /// Two ECN-capable packets dequeued from one marking queue in one cycle (port 2,
    /// queue 1, 1000 bytes each, `qlen` 5000 on a RED curve of 1000..9000): the second is
    /// looked at against the queue less both and with the LFSR advanced by the first's
    /// draw, and the edge leaves the registers where the two looks in a row leave them.
    /// Fails if the look ignores the cycle's earlier dequeues (the second would repeat the
    /// first's decision) or the edge loses a draw.
    #[test]
    fn a_second_dequeue_in_the_cycle_draws_after_the_first() {
        let mut c = crate::config::SwitchConfig::small();
        c.ecn.priorities = vec![1];
        c.ecn.mark_on = MarkOn::Dequeue;
        (c.ecn.kmin, c.ecn.kmax, c.ecn.pmax) = (1000, 9000, 1.0);
        // A seed whose first look marks and whose second does not.
        c.ecn.lfsr_seed = 3;
        let mut ecn = EcnMarker::new(&c.build().unwrap());
        let i = ecn.queue(2, 1).unwrap();
        ecn.queues[i].qlen = 5000;
        let hdr = PacketHdr {
            len: 1000,
            ecn: crate::wires::Ecn::Ect0,
            ..PacketHdr::default()
        };
        let dq = Dequeue {
            port: 2,
            queue: 1,
            list: 0,
            ncells: 1,
            len: 1000,
            ecn: EcnLook::default(),
        };
        let (curve, mut lfsr) = (ecn.params.curves[0].clone(), ecn.queues[i].lfsr);
        let want = [
            decide(&curve, 4000, &mut lfsr),
            decide(&curve, 3000, &mut lfsr),
        ];
        assert_ne!(
            want[0], want[1],
            "a look that ignores the first would be caught"
        );
        let first = Dequeue {
            ecn: ecn.look_at(&dq, &hdr, &[]),
            ..dq
        };
        let second = Dequeue {
            ecn: ecn.look_at(&dq, &hdr, &[first]),
            ..dq
        };
        assert_eq!([first.ecn.ce(), second.ecn.ce()], want);
        assert!(first.ecn.drew() && second.ecn.drew());
        ecn.departures(&[first, second]);
        ecn.commit(1).unwrap();
        let m = &ecn.queues[i];
        assert_eq!((m.qlen, m.seen, m.lfsr), (3000, 2, lfsr));
        assert_eq!(m.marked, want.iter().filter(|&&w| w).count() as u64);
    }
}
