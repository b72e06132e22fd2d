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
//! the packet itself (the queue it leaves behind), and its mark goes with the packet to
//! the wire (the transmitter's `DataTx::ce`). Either way the marker writes no other
//! block's state. Arrivals are evaluated in the egress phase, after the ECM congestion
//! points (phase 3) have copied the admitted header into their samples. Several arrivals at one queue in a cycle draw
//! from its LFSR in ingress port order (a chain inside the block).

use crate::config::{Derived, EcnCurve, EcnParams, EcnUnit, MarkOn, ECN_P_FRAC, QUEUES};
use crate::ingress::Ingress;
use crate::packet_queue::Desc;
use crate::ports::each_port;
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

/// What a packet counts in the marker's unit.
#[inline]
pub fn units(unit: EcnUnit, d: &Desc) -> u32 {
    match unit {
        EcnUnit::Bytes => d.hdr.len as u32,
        EcnUnit::Cells => d.ncells as u32,
    }
}

/// The RED decision at queue length `q`: draws from `lfsr` only for `Kmin < q <= Kmax`.
pub fn decide(e: &EcnCurve, q: u32, lfsr: &mut Lfsr32) -> bool {
    if q <= e.kmin {
        return false;
    }
    if q > e.kmax {
        return true;
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

    /// Look at a packet with header `hdr` against queue length `q`: whether it is marked CE.
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

    /// Packet `d` is dequeued from egress queue `q` of `port`: it leaves the count, and is
    /// looked at now under `mark_on = "dequeue"` against the registered length less the
    /// packets dequeued from it in this cycle, itself included (a chain in the block).
    /// Returns whether it leaves marked CE: the transmitter carries the mark
    /// (`DataTx::ce`), the descriptor RAM is not written.
    #[inline(always)]
    pub fn depart(&mut self, port: usize, q: usize, d: &Desc) -> bool {
        match self.queue(port, q) {
            Some(i) => self.depart_from(i, d),
            None => false,
        }
    }

    /// [`Self::depart`] from marking queue `i`.
    fn depart_from(&mut self, i: usize, d: &Desc) -> bool {
        let e = &self.params;
        let m = &mut self.queues[i];
        if m.delta.depart(units(e.unit, d)) {
            self.touched.push(i as u16);
        }
        if e.mark_on != MarkOn::Dequeue {
            return false;
        }
        let behind = m.qlen.saturating_sub(m.delta.departed());
        m.look(e, behind, &d.hdr)
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
            if m.delta.arrive(units(e.unit, d)) {
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
}
