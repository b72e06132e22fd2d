//! The NIC and receiver of the `hpcc`, `powertcp` and `theta_powertcp` flows: long-lived
//! senders limited by a window and paced at a rate, both set by their law
//! ([`crate::hpcc::Hpcc`], [`crate::powertcp::PowerTcp`],
//! [`crate::powertcp::ThetaPowerTcp`]), as ns3-datacenter's RDMA NIC runs them
//! (`rdma-hw.cc`, `rdma-queue-pair.cc`; docs/int.md):
//!
//! - **Window and rate.** A flow may have `W = R T / 8` bytes in flight (`VAR_WIN 1`:
//!   `RdmaQueuePair::GetWin`, `rdma-queue-pair.cc` lines 126-147, the window follows the
//!   rate), and after a packet it may send again one wire time at its rate later
//!   (`UpdateNextAvail`, `rdma-hw.cc` lines 627-634; fractions of a cycle carry over). It
//!   starts at line rate with `W` = one bandwidth-delay product (`rdma-hw.cc` line 258).
//! - **The receiver** ACKs every packet (`L2_ACK_INTERVAL 1`) when its last cell leaves
//!   the switch; the ACK carries the INT hop record the switch stamped on the packet
//!   (`hw_model::int_stamp`, taken from [`IntCcFlows::stamped`]) and reaches the sender
//!   `T` later (no reverse path, as `crate::tcp`'s ACKs). The sender also knows the RTT
//!   from the packet's send cycle (theta-PowerTCP's input).
//! - Without INT (`[switch] int = false`) the ACKs carry no record: HPCC and PowerTCP then
//!   never move from line rate (ns-3's `nhop = 0`), theta-PowerTCP still runs.
//!
//! Not modelled: loss recovery (ns-3's go-back-N; run these flows on a lossless class or
//! with room in the buffer: a lost packet's ACK never comes and its window share stays
//! taken), messages (each flow is one long-lived QP), ns-3's NIC round robin among QPs.

use crate::hpcc::Hpcc;
use crate::powertcp::{PowerTcp, ThetaPowerTcp};
use crate::timeline::{FlowIndex, Timeline};
use hw_model::int_stamp::{IntHop, IntStamp};
use hw_model::{Departure, Derived, Ecn, FiveTuple, PacketHdr};
use scenario::params::{CcLaw, IntCcParams};
use scenario::{Flow, Pattern, SizeDist};
use std::collections::VecDeque;

/// What an ACK brings the sender: the packet it acknowledges, the hop records that packet
/// carried, its RTT and the time it arrives.
#[derive(Debug, Clone, Copy)]
pub struct Ack {
    pub seq: u32,
    pub hops: IntHops,
    pub rtt_ns: u64,
    pub now_ns: f64,
}

/// The hop records a packet carries, one per switch on its path in path order, at most
/// [`IntHops::MAX`] (ns-3's `IntHeader::maxHop = 5`: `src/network/utils/int-header.h` line
/// 84 in inet-tub/ns3-datacenter at 6ddb4a4). A longer path overflows the stack, and a
/// sender reads no record from it, as ns-3's `UpdateRateHp` and `UpdateRatePower` skip a
/// header with `nhop > maxHop` (`rdma-hw.cc` lines 820 and 999).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntHops {
    hops: [IntHop; IntHops::MAX],
    /// Records pushed; above `MAX`: overflowed.
    n: u8,
}

impl IntHops {
    pub const MAX: usize = 5;

    /// The stack of one record, or an empty one.
    pub fn one(hop: Option<IntHop>) -> Self {
        let mut h = Self::default();
        if let Some(hop) = hop {
            h.push(hop);
        }
        h
    }

    /// The next switch's record.
    pub fn push(&mut self, hop: IntHop) {
        if let Some(slot) = self.hops.get_mut(self.n as usize) {
            *slot = hop;
        }
        self.n = self.n.saturating_add(1);
    }

    /// The records, in path order; none if the stack overflowed.
    pub fn as_slice(&self) -> &[IntHop] {
        self.hops.get(..self.n as usize).unwrap_or(&[])
    }
}

/// The most loaded hop, as the loops of `UpdateRateHp` (one rate for the path,
/// `rdma-hw.cc` lines 832-860) and `UpdateRatePower` (lines 1007-1045) pick it: per hop
/// with a previous record and time between the two, `sample(hop, prev, tau_ns)`; the
/// largest sample (the first of equals) and its `tau`.
pub(crate) fn busiest(
    hops: &IntHops,
    prev: &IntHops,
    sample: impl Fn(&IntHop, &IntHop, u64) -> f64,
) -> Option<(f64, u64)> {
    let mut best: Option<(f64, u64)> = None;
    for (hop, prev) in hops.as_slice().iter().zip(prev.as_slice()) {
        let tau = hop.ns_since(prev);
        if tau == 0 {
            continue;
        }
        let s = sample(hop, prev, tau);
        if best.is_none_or(|(b, _)| s > b) {
            best = Some((s, tau));
        }
    }
    best
}

/// The law of a flow.
#[derive(Debug, Clone)]
pub enum Law {
    Hpcc(Hpcc),
    PowerTcp(PowerTcp),
    Theta(ThetaPowerTcp),
}

impl Law {
    pub fn new(p: IntCcParams) -> Self {
        match p.law {
            CcLaw::Hpcc => Law::Hpcc(Hpcc::new(p)),
            CcLaw::PowerTcp => Law::PowerTcp(PowerTcp::new(p)),
            CcLaw::ThetaPowerTcp => Law::Theta(ThetaPowerTcp::new(p)),
        }
    }

    /// An ACK, `snd_nxt` the next packet the sender will send: the new rate, if it moves.
    pub fn on_ack(&mut self, ack: &Ack, snd_nxt: u32) -> Option<f64> {
        match self {
            Self::Hpcc(h) => h.on_ack(ack, snd_nxt),
            Self::PowerTcp(p) => p.on_ack(ack, snd_nxt),
            Self::Theta(p) => p.on_ack(ack, snd_nxt),
        }
    }

    /// HPCC's `U` or PowerTCP's `Gamma`.
    pub fn signal(&self) -> f64 {
        match self {
            Self::Hpcc(h) => h.u,
            Self::PowerTcp(p) => p.power(),
            Self::Theta(p) => p.power(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The flow may send (stale unless it is the flow's `send_at`).
    Send,
    /// The ACK of packet `seq`, sent at cycle `sent`, with its hop record.
    Ack {
        seq: u32,
        sent: u64,
        hop: Option<IntHop>,
    },
}

#[derive(Debug, Clone)]
struct Sender {
    id: u32,
    src: u8,
    dst: u8,
    prio: u8,
    tuple: FiveTuple,
    len: u32,
    stop_cycle: u64,
    p: IntCcParams,
    law: Law,
    /// The sending rate, b/s.
    rate: f64,
    snd_nxt: u32,
    in_flight: u32,
    /// When the rate limiter allows the next packet, fractional cycles.
    next_avail: f64,
    /// The pending `Send`'s cycle, if any.
    send_at: Option<u64>,
    /// Packets sent and not yet received: `(seq, send cycle)`, in order.
    sent: VecDeque<(u32, u64)>,
    /// Hop records of packets stamped and not yet received, in order.
    stamps: VecDeque<(u32, IntHop)>,
    stats: IntCcStats,
}

impl Sender {
    /// `W`: the rate times `T`, bytes.
    fn window(&self) -> f64 {
        self.rate * self.p.base_rtt_ns as f64 * 1e-9 / 8.0
    }

    /// Cycles one packet takes on the wire at `rate` b/s.
    fn gap(&self, rate: f64, wire_bytes: u32, clock_hz: u64) -> f64 {
        wire_bytes as f64 * 8.0 * clock_hz as f64 / rate
    }
}

/// Results of one flow.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct IntCcStats {
    pub flow: u32,
    /// `hpcc`, `powertcp` or `theta_powertcp`.
    pub law: &'static str,
    pub packets_sent: u64,
    /// Bytes whose packets left the switch toward the receiver.
    pub bytes_delivered: u64,
    pub acks: u64,
    /// ACKs that carried an INT hop record.
    pub acks_with_int: u64,
    /// The sending rate (Gb/s) and `U` or `Gamma` at the end.
    pub rate_gbps: f64,
    pub signal: f64,
}

/// The `hpcc`, `powertcp` and `theta_powertcp` flows of a run.
#[derive(Debug, Clone)]
pub struct IntCcFlows {
    flows: Vec<Sender>,
    index: FlowIndex,
    events: Timeline<Event>,
    clock_hz: u64,
    wire_overhead_bytes: u32,
}

impl IntCcFlows {
    pub fn new(flows: &[Flow], d: &Derived) -> Self {
        let mut t = Self {
            flows: Vec::new(),
            index: FlowIndex::new(flows.len()),
            events: Timeline::new(),
            clock_hz: d.clock_hz,
            wire_overhead_bytes: d.cfg.wire_overhead_bytes,
        };
        for f in flows {
            let (Pattern::IntCc(p), SizeDist::Fixed(len)) = (&f.pattern, &f.size) else {
                continue;
            };
            let i = t.flows.len() as u32;
            t.index.set(f.id, i);
            t.events.push(f.start_cycle, i, Event::Send);
            let law = Law::new(*p);
            t.flows.push(Sender {
                id: f.id,
                src: f.src,
                dst: f.dst,
                prio: f.prio,
                tuple: f.five_tuple(FiveTuple::UDP),
                len: *len,
                stop_cycle: f.stop_cycle,
                p: *p,
                law,
                rate: p.line_bps as f64,
                snd_nxt: 0,
                in_flight: 0,
                next_avail: f.start_cycle as f64,
                send_at: Some(f.start_cycle),
                sent: VecDeque::new(),
                stamps: VecDeque::new(),
                stats: IntCcStats {
                    flow: f.id,
                    law: p.law.name(),
                    packets_sent: 0,
                    bytes_delivered: 0,
                    acks: 0,
                    acks_with_int: 0,
                    rate_gbps: p.line_bps as f64 / 1e9,
                    signal: 1.0,
                },
            });
        }
        t
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// The cycle of the next event, `u64::MAX` if none is pending.
    pub fn next_time(&self) -> u64 {
        self.events.next_time()
    }

    /// Process the events due at `now`, handing packets to `out`.
    pub fn fire_due(&mut self, now: u64, mut out: impl FnMut(PacketHdr)) {
        while let Some((_, i, ev)) = self.events.pop_due(now) {
            match ev {
                Event::Send if self.flows[i as usize].send_at == Some(now) => {
                    self.flows[i as usize].send_at = None;
                    self.send(now, i, &mut out);
                }
                Event::Send => {}
                Event::Ack { seq, sent, hop } => self.ack(now, i, seq, sent, hop),
            }
        }
    }

    /// Flow `i` may send at `now`: a packet if its window allows, then the next `Send`.
    fn send(&mut self, now: u64, i: u32, out: &mut impl FnMut(PacketHdr)) {
        let wire = self.flows[i as usize].len + self.wire_overhead_bytes;
        let clock_hz = self.clock_hz;
        let f = &mut self.flows[i as usize];
        if now >= f.stop_cycle || f.in_flight as f64 * f.len as f64 >= f.window() {
            // Stopped, or window-limited: an ACK wakes it.
            return;
        }
        out(PacketHdr {
            flow: f.id,
            seq: f.snd_nxt,
            src: f.src,
            dst: f.dst,
            prio: f.prio,
            len: f.len as u16,
            tuple: f.tuple,
            cm_tag: None,
            ecn: Ecn::NotEct,
        });
        f.sent.push_back((f.snd_nxt, now));
        f.snd_nxt = f.snd_nxt.wrapping_add(1);
        f.in_flight += 1;
        f.stats.packets_sent += 1;
        f.next_avail = f.next_avail.max(now as f64) + f.gap(f.rate, wire, clock_hz);
        self.schedule(i, now);
    }

    /// Queue flow `i`'s next `Send` at its rate limiter's time, unless one is pending.
    fn schedule(&mut self, i: u32, now: u64) {
        let f = &mut self.flows[i as usize];
        if f.send_at.is_none() {
            let at = (f.next_avail.ceil() as u64).max(now);
            f.send_at = Some(at);
            self.events.push(at, i, Event::Send);
        }
    }

    /// The ACK of flow `i`'s packet `seq` arrives.
    fn ack(&mut self, now: u64, i: u32, seq: u32, sent: u64, hop: Option<IntHop>) {
        let ns = |c: u64| c as f64 * 1e9 / self.clock_hz as f64;
        let ack = Ack {
            seq,
            hops: IntHops::one(hop),
            rtt_ns: ns(now - sent) as u64,
            now_ns: ns(now),
        };
        let wire = self.flows[i as usize].len + self.wire_overhead_bytes;
        let clock_hz = self.clock_hz;
        let f = &mut self.flows[i as usize];
        f.in_flight -= 1;
        f.stats.acks += 1;
        f.stats.acks_with_int += hop.is_some() as u64;
        if let Some(rate) = f.law.on_ack(&ack, f.snd_nxt) {
            // The last packet's gap at the new rate replaces its gap at the old
            // (`ChangeRate`, `rdma-hw.cc` lines 636-640).
            f.next_avail += f.gap(rate, wire, clock_hz) - f.gap(f.rate, wire, clock_hz);
            f.rate = rate;
        }
        f.stats.rate_gbps = f.rate / 1e9;
        f.stats.signal = f.law.signal();
        // The window may have opened, or the limiter moved: re-time the pending `Send`
        // (the one queued before goes stale).
        f.send_at = None;
        self.schedule(i, now);
    }

    /// The switch stamped these packets (in dequeue order): each flow keeps its own.
    pub fn stamped(&mut self, stamps: impl Iterator<Item = IntStamp>) {
        if self.flows.is_empty() {
            return;
        }
        for s in stamps {
            if let Some(i) = self.index.of(s.flow) {
                self.flows[i as usize].stamps.push_back((s.seq, s.hop));
            }
        }
    }

    /// The receivers take the packets whose last cell departed at `now`: each is ACKed,
    /// with its hop record, `T` later.
    pub fn departed(&mut self, now: u64, departures: &[Departure]) {
        if self.flows.is_empty() {
            return;
        }
        for dep in departures {
            let Some(i) = self.index.completed(dep) else {
                continue;
            };
            let f = &mut self.flows[i as usize];
            let seq = dep.beat.hdr.seq;
            f.stats.bytes_delivered += dep.beat.hdr.len as u64;
            let sent = take(&mut f.sent, seq).unwrap_or(now);
            let hop = take(&mut f.stamps, seq);
            let delay = scenario::ns_to_cycles(f.p.base_rtt_ns, self.clock_hz);
            self.events
                .push(now + delay, i, Event::Ack { seq, sent, hop });
        }
    }

    /// Per flow results so far, in flow order.
    pub fn stats(&self) -> Vec<IntCcStats> {
        self.flows.iter().map(|f| f.stats.clone()).collect()
    }
}

/// The value queued for packet `seq` in `q` (whose packets leave in order: the earlier
/// ones, lost, are dropped from the front).
fn take<T: Copy>(q: &mut VecDeque<(u32, T)>, seq: u32) -> Option<T> {
    while let Some(&(s, v)) = q.front() {
        if s == seq {
            q.pop_front();
            return Some(v);
        }
        if s.wrapping_sub(seq) as i32 > 0 {
            return None;
        }
        q.pop_front();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records keep their order; a sixth overflows the stack and none is read, as ns-3
    /// reads no header with `nhop > maxHop`.
    #[test]
    fn a_sixth_hop_overflows_the_stack() {
        let hop = |time| IntHop {
            time,
            ..IntHop::default()
        };
        let mut h = IntHops::default();
        for t in 0..5 {
            h.push(hop(t));
        }
        let times: Vec<u32> = h.as_slice().iter().map(|r| r.time).collect();
        assert_eq!(times, [0, 1, 2, 3, 4]);
        h.push(hop(5));
        assert!(h.as_slice().is_empty());
        assert_eq!(IntHops::one(None).as_slice(), &[]);
    }
}
