//! The NIC and receiver of the `hpcc`, `powertcp` and `theta_powertcp` flows: long-lived
//! senders limited by a window and paced at a rate, both set by their law
//! ([`crate::hpcc::Hpcc`], [`crate::powertcp::PowerTcp`],
//! [`crate::powertcp::ThetaPowerTcp`]), as ns3-datacenter's RDMA NIC runs them
//! (`rdma-hw.cc`, `rdma-queue-pair.cc`; docs/int.md):
//!
//! - **Window and rate**: [`IntSender`], the queue pair's sending side, which the fabric's
//!   hosts run too. It starts at line rate with `W` = one bandwidth-delay product.
//! - **The receiver** ACKs every packet (`L2_ACK_INTERVAL 1`) when its last cell leaves
//!   the switch; the ACK carries the INT hop record the switch stamped on the packet
//!   (`hw_model::int_stamp`, taken from [`IntCcFlows::stamped`]) and reaches the sender
//!   `T` later (no reverse path, as `crate::tcp`'s ACKs). The sender also knows the RTT
//!   from the packet's send cycle (theta-PowerTCP's input).
//! - Without INT (`[switch] int = false`) the ACKs carry no record: HPCC and PowerTCP then
//!   never move from line rate (ns-3's `nhop = 0`), theta-PowerTCP still runs.
//!
//! Not modelled: loss recovery (ns-3's go-back-N; run these flows on a lossless class or
//! with room in the buffer: a lost packet is not sent again, the next packet's ACK frees
//! its window share), messages (each flow is one long-lived QP), ns-3's NIC round robin
//! among QPs.

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

/// The sending side of one ns3-datacenter RDMA queue pair under an INT law: the window and
/// the rate limiter, the law, and the packets in flight. The single switch's
/// [`IntCcFlows`] and the fabric's hosts drive it; they own the events (a `Send` at the
/// cycle this returns, stale unless [`IntSender::due`]) and the packets.
///
/// - **Window.** `W = R T / 8` bytes (`VAR_WIN 1`: `RdmaQueuePair::GetWin`,
///   `rdma-queue-pair.cc` lines 126-147); the QP is window-bound while its bytes on the fly,
///   `snd_nxt - snd_una` in payload bytes, reach `W` (`IsWinBound`, `GetOnTheFly`, lines
///   117-124). An ACK acknowledges every byte up to its packet's end (`Acknowledge`, lines
///   111-115: `snd_una` only grows), so a packet lost before it frees its share too.
/// - **Rate limiter.** After a packet the QP may send again one wire time at `R` later
///   (`UpdateNextAvail`, `rdma-hw.cc` lines 627-634; counted from the later of the
///   previous time and now, fractions of a cycle carry over). A new rate replaces the last
///   packet's wire time at the old rate with its time at the new (`ChangeRate`, lines
///   636-640: `lastPktSize`, the last packet sent, set in `PktSent` line 618).
#[derive(Debug, Clone)]
pub struct IntSender {
    law: Law,
    p: IntCcParams,
    clock_hz: u64,
    /// The sending rate, b/s.
    rate: f64,
    /// When the rate limiter allows the next packet, fractional cycles.
    next_avail: f64,
    /// The pending `Send`'s cycle, if any (one queued before is stale).
    send_at: Option<u64>,
    /// Packets sent: the next one's sequence number (wrapping) is this, as `u32`.
    packets_sent: u64,
    /// ns-3's `snd_nxt` and `snd_una`, payload bytes.
    snd_nxt: u64,
    snd_una: u64,
    /// The last packet's wire bytes (ns-3's `lastPktSize`).
    last_wire: u32,
    /// Packets sent and not yet acknowledged: `(seq, send cycle, snd_nxt after it)`, in
    /// send order.
    in_flight: VecDeque<(u32, (u64, u64))>,
    acks: u64,
    acks_with_int: u64,
}

impl IntSender {
    /// The law's base RTT `T`, ns: the window's delay and the single switch's ACK delay.
    pub fn base_rtt_ns(&self) -> u64 {
        self.p.base_rtt_ns
    }

    /// A QP of law `p` at line rate, `W` one bandwidth-delay product (`rdma-hw.cc` line
    /// 258); it sends nothing before [`start`](Self::start).
    pub fn new(p: IntCcParams, clock_hz: u64) -> Self {
        Self {
            law: Law::new(p),
            p,
            clock_hz,
            rate: p.line_bps as f64,
            next_avail: 0.0,
            send_at: None,
            packets_sent: 0,
            snd_nxt: 0,
            snd_una: 0,
            last_wire: 0,
            in_flight: VecDeque::new(),
            acks: 0,
            acks_with_int: 0,
        }
    }

    /// The QP starts at `now`: the cycle of its first `Send`.
    pub fn start(&mut self, now: u64) -> u64 {
        self.next_avail = now as f64;
        self.send_at = Some(now);
        now
    }

    /// A `Send` event at `now`: whether it is the pending one (the others are stale).
    pub fn due(&self, now: u64) -> bool {
        self.send_at == Some(now)
    }

    /// `W`: the rate times `T`, bytes.
    fn window(&self) -> f64 {
        self.rate * self.p.base_rtt_ns as f64 * 1e-9 / 8.0
    }

    /// The window leaves room for a packet (an ACK wakes a QP it holds).
    pub fn window_open(&self) -> bool {
        ((self.snd_nxt - self.snd_una) as f64) < self.window()
    }

    /// Packets sent; the next one's sequence number is this, wrapped to `u32`.
    pub fn packets_sent(&self) -> u64 {
        self.packets_sent
    }

    /// Cycles `wire_bytes` take on the wire at `rate` b/s.
    fn gap(&self, rate: f64, wire_bytes: u32) -> f64 {
        wire_bytes as f64 * 8.0 * self.clock_hz as f64 / rate
    }

    /// The next packet, `len` payload and `wire` wire bytes, left at `now`: the cycle of the
    /// next `Send`, if one is to be queued.
    pub fn sent(&mut self, now: u64, len: u32, wire: u32) -> Option<u64> {
        self.snd_nxt += len as u64;
        self.in_flight
            .push_back((self.packets_sent as u32, (now, self.snd_nxt)));
        self.packets_sent += 1;
        self.last_wire = wire;
        self.next_avail = self.next_avail.max(now as f64) + self.gap(self.rate, wire);
        self.send_at = None;
        self.schedule(now)
    }

    /// The ACK of packet `seq` with the hop records it echoes arrives at `now`: the law may
    /// move the rate, the window may open. The cycle of the next `Send`, not before
    /// `earliest`, if one is to be queued (the one pending before goes stale).
    pub fn ack(&mut self, now: u64, seq: u32, hops: IntHops, earliest: u64) -> Option<u64> {
        let (sent, end) = take(&mut self.in_flight, seq).unwrap_or((now, self.snd_una));
        let ns = |c: u64| c as f64 * 1e9 / self.clock_hz as f64;
        let ack = Ack {
            seq,
            hops,
            rtt_ns: ns(now - sent) as u64,
            now_ns: ns(now),
        };
        self.snd_una = self.snd_una.max(end);
        self.acks += 1;
        self.acks_with_int += !hops.as_slice().is_empty() as u64;
        if let Some(rate) = self.law.on_ack(&ack, self.packets_sent as u32) {
            self.next_avail += self.gap(rate, self.last_wire) - self.gap(self.rate, self.last_wire);
            self.rate = rate;
        }
        self.send_at = None;
        self.schedule(earliest)
    }

    /// Queue the next `Send` at the rate limiter's time, not before `earliest`, unless one
    /// is pending.
    fn schedule(&mut self, earliest: u64) -> Option<u64> {
        if self.send_at.is_some() {
            return None;
        }
        let at = (self.next_avail.ceil() as u64).max(earliest);
        self.send_at = Some(at);
        Some(at)
    }

    /// The law's name (`hpcc`, `powertcp`, `theta_powertcp`).
    pub fn law_name(&self) -> &'static str {
        self.p.law.name()
    }

    /// The sending rate, Gb/s.
    pub fn rate_gbps(&self) -> f64 {
        self.rate / 1e9
    }

    /// HPCC's `U` or PowerTCP's `Gamma`.
    pub fn signal(&self) -> f64 {
        self.law.signal()
    }

    /// ACKs received, and those that carried a hop record.
    pub fn acks(&self) -> (u64, u64) {
        (self.acks, self.acks_with_int)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The flow may send (stale unless the QP's pending `Send`).
    Send,
    /// The ACK of packet `seq` with its hop record.
    Ack { seq: u32, hop: Option<IntHop> },
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
    qp: IntSender,
    /// Hop records of packets stamped and not yet received, in order.
    stamps: VecDeque<(u32, IntHop)>,
    bytes_delivered: u64,
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
            let mut qp = IntSender::new(*p, d.clock_hz);
            t.events.push(qp.start(f.start_cycle), i, Event::Send);
            t.flows.push(Sender {
                id: f.id,
                src: f.src,
                dst: f.dst,
                prio: f.prio,
                tuple: f.five_tuple(FiveTuple::UDP),
                len: *len,
                stop_cycle: f.stop_cycle,
                qp,
                stamps: VecDeque::new(),
                bytes_delivered: 0,
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
            let f = &mut self.flows[i as usize];
            let next = match ev {
                Event::Send if f.qp.due(now) => self.send(now, i, &mut out),
                Event::Send => None,
                Event::Ack { seq, hop } => f.qp.ack(now, seq, IntHops::one(hop), now),
            };
            if let Some(at) = next {
                self.events.push(at, i, Event::Send);
            }
        }
    }

    /// Flow `i` may send at `now`: a packet if its window allows; the next `Send`'s cycle.
    fn send(&mut self, now: u64, i: u32, out: &mut impl FnMut(PacketHdr)) -> Option<u64> {
        let wire = self.flows[i as usize].len + self.wire_overhead_bytes;
        let f = &mut self.flows[i as usize];
        if now >= f.stop_cycle || !f.qp.window_open() {
            // Stopped, or window-limited: an ACK wakes it.
            return None;
        }
        out(PacketHdr {
            flow: f.id,
            seq: f.qp.packets_sent() as u32,
            src: f.src,
            dst: f.dst,
            prio: f.prio,
            len: f.len as u16,
            tuple: f.tuple,
            cm_tag: None,
            ecn: Ecn::NotEct,
        });
        f.qp.sent(now, f.len, wire)
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
            f.bytes_delivered += dep.beat.hdr.len as u64;
            let hop = take(&mut f.stamps, seq);
            let delay = scenario::ns_to_cycles(f.qp.base_rtt_ns(), self.clock_hz);
            self.events.push(now + delay, i, Event::Ack { seq, hop });
        }
    }

    /// Per flow results so far, in flow order.
    pub fn stats(&self) -> Vec<IntCcStats> {
        let stats = |f: &Sender| {
            let (acks, acks_with_int) = f.qp.acks();
            IntCcStats {
                flow: f.id,
                law: f.qp.law_name(),
                packets_sent: f.qp.packets_sent(),
                bytes_delivered: f.bytes_delivered,
                acks,
                acks_with_int,
                rate_gbps: f.qp.rate_gbps(),
                signal: f.qp.signal(),
            }
        };
        self.flows.iter().map(stats).collect()
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

    /// ns-3's window: bytes on the fly `snd_nxt - snd_una` against `W = R T / 8` (100 Gb/s
    /// x 1 us = 12 500 B: 13 packets of 1000 B). The ACK of packet 1 acknowledges packet 0
    /// too (lost, never ACKed): two packets' room, where a count of ACKs would free one.
    #[test]
    fn an_ack_frees_the_window_up_to_its_packet() {
        let p = IntCcParams {
            law: CcLaw::Hpcc,
            base_rtt_ns: 1_000,
            rate_ai_bps: 50_000_000,
            min_rate_bps: 100_000_000,
            u_target: 0.95,
            mi_thresh: 5,
            gamma: 0.9,
            line_bps: 100_000_000_000,
        };
        let mut qp = IntSender::new(p, 1_000_000_000);
        let mut now = qp.start(0);
        let mut sent = 0;
        while qp.window_open() {
            assert!(qp.due(now));
            now = qp.sent(now, 1000, 1020).unwrap();
            sent += 1;
        }
        assert_eq!(sent, 13);
        qp.ack(now, 1, IntHops::default(), now);
        let mut room = 0;
        while qp.window_open() {
            qp.sent(now, 1000, 1020);
            room += 1;
        }
        assert_eq!(room, 2, "packets 0 and 1 acknowledged");
        assert_eq!(qp.acks(), (1, 0));
    }

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
