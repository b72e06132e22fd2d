//! The RDMA NIC of the ns-3 data-centre simulators (HPCC's `simulation/` and
//! inet-tub/ns3-datacenter, `src/point-to-point/model/rdma-hw.cc` and `qbb-net-device.cc`;
//! docs/ecn.md cites file and line): the engine of the `dcqcn` flows with `message_cdf` and
//! `qp = "message"`.
//!
//! - **A queue pair per message.** Every message of a flow line (its Poisson arrivals, as
//!   `crate::dcqcn::MessageGen` draws them) opens a queue pair (QP) on the NIC of the flow's
//!   source port, at line rate with a fresh reaction point, as ns-3's `RdmaClient` opens one
//!   per line of the flow file. A QP leaves the NIC when its receiver has every packet.
//! - **The NIC's round robin.** When the NIC's transmitter is free it serves the first QP,
//!   after the one it served last (in opening order), that has a packet to send and whose
//!   rate limiter allows it (`RdmaEgressQueue::GetNextQindex`); the packet then holds the
//!   transmitter for its wire time at line rate. If no QP may send, the NIC wakes when the
//!   first limiter allows one.
//! - **A rate limiter per QP.** After a packet a QP may send again one wire time at its
//!   rate `R_C` later (`UpdateNextAvail`). The times are kept in fractional cycles: a QP (or
//!   the transmitter) served in the cycle its time rounds up to counts from its fractional
//!   time, so the long-run rate is exact; one served later counts from the cycle it was
//!   served in, as ns-3 counts from `Now()`.
//! - **DCQCN per QP**, ns-3's "Mellanox version" ([`Mlx`]): the RP acts on CNPs at a
//!   rate-decrease interval, updates `alpha` at its own interval, and raises the rate on a
//!   timer only (no byte counter).
//! - **The receiver per QP.** A packet is received when its last cell leaves the switch.
//!   One that arrived with CE sends a CNP for its QP (ns-3 sets the CNP flag on the ACK of
//!   every CE packet: `N` = 0 by default; `n_us` spaces them per QP). One beyond the
//!   expected packet sends a NACK for the expected one, at most one per `nack_us` for the
//!   same expected packet (`ReceiverCheckSeq`); the sender goes back to it (go-back-N,
//!   `RecoverQueue`). CNPs and NACKs reach the sender `cnp_delay_us` later (no reverse
//!   path, as `crate::tcp`'s ACKs). Like ns-3's `RdmaHw`, the sender has no retransmission
//!   timer: a lost last packet is not recovered, and its message stays open.
//!
//! What the model leaves out: the NIC hands each packet to the link partner of its port
//! when its transmitter starts it, and does not see the partner's PFC pause: under a pause
//! the packets wait in the partner's class queue (ns-3's NIC stops serving the paused
//! class's QPs and keeps them in the QPs). The packets of a flow line carry one sequence
//! number space in sending order (the scoreboard's order check holds per flow line); the
//! NIC maps them back to their QP and packet number.

use crate::dcqcn::{cut, DcqcnStats, MessageGen};
use crate::source::{MessageCounts, MessageStats};
use crate::timeline::{FlowIndex, Timeline};
use hw_model::{Departure, Derived, Ecn, FiveTuple, PacketHdr};
use scenario::params::DcqcnParams;
use scenario::{Flow, Pattern, QpMode, SizeDist, MIN_PACKET_BYTES};
use std::collections::{BTreeMap, VecDeque};

/// ns-3's DCQCN reaction point ("Mellanox version", `rdma-hw.cc`, `*Mlx`): rates in b/s.
#[derive(Debug, Clone)]
pub struct Mlx {
    p: DcqcnParams,
    /// `R_C`, `R_T`.
    pub rc: f64,
    pub rt: f64,
    pub alpha: f64,
    /// Rate-increase events since the last cut (`m_rpTimeStage`).
    stage: u32,
    /// A CNP arrived since the last `alpha` update, since the last decrease check.
    alpha_cnp: bool,
    decrease_cnp: bool,
    /// The first CNP arrived (the `alpha` and decrease timers run from it).
    started: bool,
    pub cnps: u64,
    /// Decreases that lowered `R_C`.
    pub cuts: u64,
}

impl Mlx {
    /// A new QP: line rate, no timer (`alpha` is set by the first CNP).
    pub fn new(p: DcqcnParams) -> Self {
        Self {
            p,
            rc: p.line_bps as f64,
            rt: p.line_bps as f64,
            alpha: 1.0,
            stage: 0,
            alpha_cnp: false,
            decrease_cnp: false,
            started: false,
            cnps: 0,
            cuts: 0,
        }
    }

    /// A CNP (`cnp_received_mlx`); whether it is the first, which starts the `alpha` and
    /// decrease timers. The first sets `alpha = 1` and `R_T = R_C` (`RateOnFirstCnp` = 1)
    /// and does not count for the first `alpha` update.
    pub fn on_cnp(&mut self) -> bool {
        self.cnps += 1;
        self.alpha_cnp = true;
        self.decrease_cnp = true;
        let first = !self.started;
        if first {
            self.started = true;
            self.alpha = 1.0;
            self.alpha_cnp = false;
            self.rt = self.rc;
        }
        first
    }

    /// The `alpha` timer (`UpdateAlphaMlx`): up by `g` if a CNP arrived in the interval,
    /// else down.
    pub fn on_alpha_timer(&mut self) {
        let g = self.p.g;
        self.alpha = (1.0 - g) * self.alpha + if self.alpha_cnp { g } else { 0.0 };
        self.alpha_cnp = false;
    }

    /// The decrease check (`CheckRateDecreaseMlx`): with a CNP since the last one,
    /// `R_T = R_C` (unless no increase came since the last cut: `CLAMP_TARGET_RATE 0`),
    /// `R_C = max(min_rate, R_C (1 - alpha/2))`. Whether it decreased (the rate timer
    /// restarts).
    pub fn on_decrease_check(&mut self) -> bool {
        if !self.decrease_cnp {
            return false;
        }
        if self.stage != 0 {
            self.rt = self.rc;
        }
        cut(&mut self.rc, &mut self.cuts, self.alpha, &self.p);
        self.stage = 0;
        self.decrease_cnp = false;
        true
    }

    /// The rate timer `T` (`RateIncEventMlx`): stage `< F` fast recovery, `= F` additive
    /// increase by `R_AI`, `> F` hyper increase by `R_HAI`; then `R_C = (R_T + R_C) / 2`.
    pub fn on_rate_timer(&mut self) {
        let step = match self.stage.cmp(&self.p.f) {
            std::cmp::Ordering::Less => 0,
            std::cmp::Ordering::Equal => self.p.r_ai_bps,
            std::cmp::Ordering::Greater => self.p.r_hai_bps,
        };
        self.rt = (self.rt + step as f64).min(self.p.line_bps as f64);
        self.rc = (self.rt + self.rc) / 2.0;
        self.stage += 1;
    }
}

/// An event of a NIC (`Wake`) or of a QP (by its id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A message of the flow line arrives.
    Message,
    /// The NIC's transmitter may serve a QP (stale unless the NIC's `wake`).
    Wake,
    Cnp(u64),
    /// Go back to packet `psn`.
    Nack(u64, u32),
    AlphaTimer(u64),
    DecreaseCheck(u64),
    /// The rate timer's deadline as it stood when queued (stale if it restarted since).
    RateTimer(u64, u64),
}

/// A line's times in cycles: the `alpha` timer `K`, the rate timer `T`, the decrease
/// interval, the NP's CNP interval `N`, the CNP (and NACK) delay and the NACK interval.
#[derive(Debug, Clone, Copy)]
struct Cycles {
    k: u64,
    t: u64,
    decrease: u64,
    n: u64,
    delay: u64,
    nack: u64,
}

impl Cycles {
    fn new(p: &DcqcnParams, clock_hz: u64) -> Self {
        let c = |ns: u64| scenario::ns_to_cycles(ns, clock_hz);
        Self {
            k: c(p.k_ns).max(1),
            t: c(p.t_ns).max(1),
            decrease: c(p.decrease_ns).max(1),
            n: c(p.n_ns),
            delay: c(p.cnp_delay_ns),
            nack: c(p.nack_ns),
        }
    }
}

/// One queue pair: a message, the sender's state and the receiver's.
#[derive(Debug, Clone)]
struct Qp {
    /// Its flow line and NIC.
    line: u32,
    nic: u32,
    c: Cycles,
    rp: Mlx,
    /// Packets of the message, the next one to send (`snd_nxt`) and the next one the
    /// receiver expects.
    packets: u32,
    snd_nxt: u32,
    expected: u32,
    /// When the rate limiter allows the next packet, fractional cycles.
    next_avail: f64,
    rate_deadline: Option<u64>,
    /// Receiver: the last CNP; the last NACK and its expected packet.
    last_cnp: Option<u64>,
    last_nack: Option<(u64, u32)>,
    stats: MessageStats,
}

impl Qp {
    /// The length of packet `psn` (`mtu` at most, the last one at least 64 B).
    fn len(&self, psn: u32, mtu: u32) -> u32 {
        let left = self.stats.bytes - psn as u64 * mtu as u64;
        (left.min(mtu as u64) as u32).max(MIN_PACKET_BYTES)
    }

    fn has_packet(&self) -> bool {
        self.snd_nxt < self.packets
    }
}

/// The NIC of one source port: its open QPs in opening order.
#[derive(Debug, Clone, Default)]
struct Nic {
    qps: Vec<u64>,
    /// The QP served last (the round robin goes on after it).
    last: Option<u64>,
    /// When the transmitter is free, fractional cycles.
    tx_free: f64,
    /// The cycle of the pending `Wake`, if any.
    wake: Option<u64>,
}

/// A `dcqcn` flow with a QP per message.
#[derive(Debug, Clone)]
struct Line {
    id: u32,
    src: u8,
    dst: u8,
    prio: u8,
    tuple: FiveTuple,
    mtu: u32,
    stop_cycle: u64,
    p: DcqcnParams,
    c: Cycles,
    nic: u32,
    gen: MessageGen,
    next_seq: u32,
    /// Packets sent and not yet departed or known lost: `(seq, QP, psn)`, in sending order.
    in_flight: VecDeque<(u32, u64, u32)>,
    /// The newest QP and its reaction point as it closed (the summary's rates), and the
    /// line's counters.
    newest_qp: Option<u64>,
    newest: Mlx,
    packets_sent: u64,
    bytes_delivered: u64,
    cnps_sent: u64,
    cnps_received: u64,
    cuts: u64,
}

/// The NICs and the QP-per-message flow lines of a run.
#[derive(Debug, Clone)]
pub struct RdmaNics {
    lines: Vec<Line>,
    /// Per scenario flow id, its line.
    index: FlowIndex,
    /// Per source port, its NIC's index in `nics`.
    nic_of: BTreeMap<u8, u32>,
    nics: Vec<Nic>,
    qps: BTreeMap<u64, Qp>,
    next_qp: u64,
    /// Events of the lines (`Message`) and the NICs and QPs (the rest): `flow` is the line
    /// for `Message`, the NIC for `Wake`, unused for the QP events.
    events: Timeline<Event>,
    clock_hz: u64,
    wire_overhead_bytes: u32,
    kept: Option<Vec<MessageStats>>,
    counts: MessageCounts,
}

impl RdmaNics {
    /// The `dcqcn` flows with `qp = "message"` among `flows`; `seed` is the run's.
    pub fn new(flows: &[Flow], seed: u64, d: &Derived) -> Self {
        let mut t = Self {
            lines: Vec::new(),
            index: FlowIndex::new(flows.len()),
            nic_of: BTreeMap::new(),
            nics: Vec::new(),
            qps: BTreeMap::new(),
            next_qp: 0,
            events: Timeline::new(),
            clock_hz: d.clock_hz,
            wire_overhead_bytes: d.cfg.wire_overhead_bytes,
            kept: None,
            counts: MessageCounts::default(),
        };
        for f in flows {
            let (Pattern::Dcqcn(plan), SizeDist::Fixed(mtu)) = (&f.pattern, &f.size) else {
                continue;
            };
            let (Some(load), QpMode::Message) = (&plan.messages, plan.qp) else {
                continue;
            };
            let next = t.nics.len() as u32;
            let nic = *t.nic_of.entry(f.src).or_insert(next);
            if nic == next {
                t.nics.push(Nic::default());
            }
            let i = t.lines.len() as u32;
            t.index.set(f.id, i);
            let gen = MessageGen::new(load, f.id, f.start_cycle, seed, d.clock_hz);
            t.push_arrival(gen.next_arrival(), f.stop_cycle, i);
            t.lines.push(Line {
                id: f.id,
                src: f.src,
                dst: f.dst,
                prio: f.prio,
                tuple: f.five_tuple(FiveTuple::UDP),
                mtu: *mtu,
                stop_cycle: f.stop_cycle,
                p: plan.rp,
                c: Cycles::new(&plan.rp, d.clock_hz),
                nic,
                gen,
                next_seq: 0,
                in_flight: VecDeque::new(),
                newest_qp: None,
                newest: Mlx::new(plan.rp),
                packets_sent: 0,
                bytes_delivered: 0,
                cnps_sent: 0,
                cnps_received: 0,
                cuts: 0,
            });
        }
        t
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The cycle of the next event, `u64::MAX` if none is pending.
    pub fn next_time(&self) -> u64 {
        self.events.next_time()
    }

    /// The next message arrival of line `i`, at fractional cycle `at`, unless at or after
    /// `stop`.
    fn push_arrival(&mut self, at: f64, stop: u64, i: u32) {
        let at = at.ceil() as u64;
        if at < stop {
            self.events.push(at, i, Event::Message);
        }
    }

    /// Wake NIC `n` at `at` unless it wakes at or before then already.
    fn wake(&mut self, n: u32, at: u64) {
        let nic = &mut self.nics[n as usize];
        if nic.wake.is_none_or(|w| at < w) {
            nic.wake = Some(at);
            self.events.push(at, n, Event::Wake);
        }
    }

    /// Process the events due at `now`, handing packets to `out`.
    pub fn fire_due(&mut self, now: u64, mut out: impl FnMut(PacketHdr)) {
        while let Some((_, i, ev)) = self.events.pop_due(now) {
            match ev {
                Event::Message => self.message(now, i),
                Event::Wake if self.nics[i as usize].wake == Some(now) => {
                    self.nics[i as usize].wake = None;
                    self.serve(now, i, &mut out);
                }
                Event::Wake => {}
                Event::Cnp(q) => self.cnp(now, q),
                Event::Nack(q, psn) => {
                    if let Some(qp) = self.qps.get_mut(&q) {
                        qp.snd_nxt = psn;
                        let nic = qp.nic;
                        self.wake(nic, now);
                    }
                }
                Event::AlphaTimer(q) => {
                    if let Some(qp) = self.qps.get_mut(&q) {
                        qp.rp.on_alpha_timer();
                        let at = now + qp.c.k;
                        self.events.push(at, 0, Event::AlphaTimer(q));
                    }
                }
                Event::DecreaseCheck(q) => self.decrease_check(now, q),
                Event::RateTimer(q, d) => {
                    let qp = self.qps.get_mut(&q);
                    if let Some(qp) = qp.filter(|qp| qp.rate_deadline == Some(d)) {
                        qp.rp.on_rate_timer();
                        let at = d + qp.c.t;
                        qp.rate_deadline = Some(at);
                        self.events.push(at, 0, Event::RateTimer(q, at));
                    }
                }
            }
        }
    }

    /// A message arrives on line `i`: a new QP.
    fn message(&mut self, now: u64, i: u32) {
        let line = &mut self.lines[i as usize];
        let bytes = line.gen.draw(now);
        let packets = bytes.div_ceil(line.mtu as u64) as u32;
        let (at, stop, nic) = (line.gen.next_arrival(), line.stop_cycle, line.nic);
        let id = self.next_qp;
        self.next_qp += 1;
        self.counts.arrived += 1;
        self.qps.insert(
            id,
            Qp {
                line: i,
                nic,
                c: line.c,
                rp: Mlx::new(line.p),
                packets,
                snd_nxt: 0,
                expected: 0,
                next_avail: now as f64,
                rate_deadline: None,
                last_cnp: None,
                last_nack: None,
                stats: MessageStats::arrived(line.id, bytes, packets, line.next_seq, now),
            },
        );
        line.newest_qp = Some(id);
        self.nics[nic as usize].qps.push(id);
        self.push_arrival(at, stop, i);
        self.wake(nic, now);
    }

    /// NIC `n`'s transmitter: serve the next QP of the round robin that may send, or sleep
    /// until one may.
    fn serve(&mut self, now: u64, n: u32, out: &mut impl FnMut(PacketHdr)) {
        let nic = &self.nics[n as usize];
        let free = nic.tx_free.ceil() as u64;
        if free > now {
            self.wake(n, free);
            return;
        }
        let start = nic.qps.partition_point(|&q| Some(q) <= nic.last);
        let mut order = nic.qps[start..].iter().chain(&nic.qps[..start]);
        let ready = order.find(|&q| {
            let qp = &self.qps[q];
            qp.has_packet() && qp.next_avail.ceil() as u64 <= now
        });
        let Some(&q) = ready else {
            let next = nic
                .qps
                .iter()
                .map(|q| &self.qps[q])
                .filter(|qp| qp.has_packet())
                .map(|qp| qp.next_avail.ceil() as u64)
                .min();
            if let Some(at) = next {
                self.wake(n, at);
            }
            return;
        };
        let clock = self.clock_hz as f64;
        let qp = self.qps.get_mut(&q).expect("the NIC's QPs are open");
        let line = &mut self.lines[qp.line as usize];
        let psn = qp.snd_nxt;
        let len = qp.len(psn, line.mtu);
        out(PacketHdr {
            flow: line.id,
            seq: line.next_seq,
            src: line.src,
            dst: line.dst,
            prio: line.prio,
            len: len as u16,
            tuple: line.tuple,
            cm_tag: None,
            ecn: Ecn::Ect0,
        });
        line.in_flight.push_back((line.next_seq, q, psn));
        line.next_seq = line.next_seq.wrapping_add(1);
        line.packets_sent += 1;
        // Ready since its rate limiter's time: the rest was the other QPs' turn.
        qp.stats.nic_wait_cycles += now - qp.next_avail.ceil() as u64;
        qp.snd_nxt += 1;
        if !qp.has_packet() {
            qp.stats.last_sent_cycle = Some(now);
        }
        let bits = (len + self.wire_overhead_bytes) as f64 * 8.0;
        qp.next_avail = from(qp.next_avail, now) + bits * clock / qp.rp.rc;
        let nic = &mut self.nics[n as usize];
        nic.last = Some(q);
        nic.tx_free = from(nic.tx_free, now) + bits * clock / line.p.line_bps as f64;
        let at = (nic.tx_free.ceil() as u64).max(now + 1);
        self.wake(n, at);
    }

    /// A CNP reaches QP `q`; the first starts its `alpha` and decrease timers (the first
    /// decrease check a cycle after a multiple of `K` could fall, as ns-3 adds 1 ns).
    fn cnp(&mut self, now: u64, q: u64) {
        let Some(qp) = self.qps.get_mut(&q) else {
            return;
        };
        self.lines[qp.line as usize].cnps_received += 1;
        if qp.rp.on_cnp() {
            self.events.push(now + qp.c.k, 0, Event::AlphaTimer(q));
            let first = now + qp.c.decrease + 1;
            self.events.push(first, 0, Event::DecreaseCheck(q));
        }
    }

    /// QP `q`'s periodic decrease check; a decrease restarts the rate timer.
    fn decrease_check(&mut self, now: u64, q: u64) {
        let Some(qp) = self.qps.get_mut(&q) else {
            return;
        };
        let cuts = qp.rp.cuts;
        if qp.rp.on_decrease_check() {
            let at = now + qp.c.t;
            qp.rate_deadline = Some(at);
            self.events.push(at, 0, Event::RateTimer(q, at));
        }
        self.lines[qp.line as usize].cuts += qp.rp.cuts - cuts;
        let next = now + qp.c.decrease;
        self.events.push(next, 0, Event::DecreaseCheck(q));
    }

    /// The receivers take the packets whose last cell departed at `now` (module doc).
    pub fn departed(&mut self, now: u64, departures: &[Departure]) {
        for dep in departures {
            let Some(i) = self.index.completed(dep) else {
                continue;
            };
            let hdr = &dep.beat.hdr;
            let line = &mut self.lines[i as usize];
            // Packets sent before this one and not departed were dropped.
            let Some(pos) = line.in_flight.iter().position(|e| e.0 == hdr.seq) else {
                continue;
            };
            line.in_flight.drain(..pos);
            let (_, q, psn) = line.in_flight.pop_front().expect("pos is in range");
            line.bytes_delivered += hdr.len as u64;
            let Some(qp) = self.qps.get_mut(&q) else {
                continue;
            };
            let c = qp.c;
            if hdr.ecn == Ecn::Ce && qp.last_cnp.is_none_or(|l| now >= l + c.n) {
                qp.last_cnp = Some(now);
                line.cnps_sent += 1;
                self.events.push(now + c.delay, 0, Event::Cnp(q));
            }
            if psn > qp.expected {
                let e = qp.expected;
                let due = qp
                    .last_nack
                    .is_none_or(|(at, le)| le != e || now >= at + c.nack);
                if due {
                    qp.last_nack = Some((now, e));
                    self.events.push(now + c.delay, 0, Event::Nack(q, e));
                }
                continue;
            }
            if psn < qp.expected {
                continue;
            }
            qp.expected += 1;
            qp.stats.delivered_packets += 1;
            if qp.expected == qp.packets {
                qp.stats.last_departure_cycle = Some(now);
                self.close(q);
            }
        }
    }

    /// QP `q`'s message is complete: the QP leaves its NIC.
    fn close(&mut self, q: u64) {
        let qp = self.qps.remove(&q).expect("an open QP");
        self.nics[qp.nic as usize].qps.retain(|&x| x != q);
        let line = &mut self.lines[qp.line as usize];
        if line.newest_qp == Some(q) {
            line.newest = qp.rp;
        }
        self.counts.complete += 1;
        if let Some(kept) = &mut self.kept {
            kept.push(qp.stats);
        }
    }

    /// Keep every message that completes from now on.
    pub fn keep_messages(&mut self) {
        self.kept.get_or_insert_with(Vec::new);
    }

    /// The kept and the open messages.
    pub fn messages(&self) -> impl Iterator<Item = MessageStats> + '_ {
        let kept = self.kept.iter().flatten().cloned();
        kept.chain(self.qps.values().map(|qp| qp.stats.clone()))
    }

    pub fn message_counts(&self) -> MessageCounts {
        self.counts
    }

    /// Per line results so far: the counters of all its QPs, the rates of its newest.
    pub fn stats(&self) -> impl Iterator<Item = DcqcnStats> + '_ {
        self.lines.iter().map(|l| {
            let rp = l
                .newest_qp
                .and_then(|q| self.qps.get(&q))
                .map_or(&l.newest, |qp| &qp.rp);
            DcqcnStats {
                flow: l.id,
                packets_sent: l.packets_sent,
                bytes_delivered: l.bytes_delivered,
                cnps_sent: l.cnps_sent,
                cnps_received: l.cnps_received,
                rate_cuts: l.cuts,
                rate_gbps: rp.rc / 1e9,
                target_gbps: rp.rt / 1e9,
                alpha: rp.alpha,
            }
        })
    }
}

/// The time a limiter or transmitter served at `now` counts its next one from: its own
/// fractional time if `now` is the cycle that time rounds up to (the fraction carries
/// over), else `now` (it waited for the transmitter or for work).
fn from(t: f64, now: u64) -> f64 {
    if t.ceil() as u64 == now {
        t
    } else {
        now as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ns-3's defaults at 100 Gb/s (`scenario::params::Ns3Dcqcn`).
    fn params() -> DcqcnParams {
        DcqcnParams {
            g: 1.0 / 256.0,
            k_ns: 1_000,
            t_ns: 900_000,
            b_bytes: 10_000_000,
            f: 1,
            r_ai_bps: 50_000_000,
            r_hai_bps: 100_000_000,
            n_ns: 0,
            min_rate_bps: 100_000_000,
            cnp_delay_ns: 10_000,
            line_bps: 100_000_000_000,
            decrease_ns: 4_000,
            nack_ns: 500_000,
        }
    }

    #[test]
    fn mlx_cuts_at_the_decrease_check_and_recovers_by_stage() {
        let mut rp = Mlx::new(params());
        assert!(rp.on_cnp(), "the first CNP starts the timers");
        assert_eq!((rp.alpha, rp.rt, rp.rc), (1.0, 100e9, 100e9));
        rp.on_alpha_timer();
        assert_eq!(
            rp.alpha,
            255.0 / 256.0,
            "the first CNP does not raise alpha"
        );
        assert!(rp.on_decrease_check());
        assert_eq!(rp.rc, 100e9 * (1.0 - 255.0 / 512.0));
        assert_eq!(
            rp.rt, 100e9,
            "stage 0: no clamp of R_T (CLAMP_TARGET_RATE 0)"
        );
        assert!(!rp.on_decrease_check(), "no CNP since: no cut");
        let rc = rp.rc;
        rp.on_rate_timer();
        assert_eq!((rp.rt, rp.rc), (100e9, (100e9 + rc) / 2.0), "fast recovery");
        let rc = rp.rc;
        rp.on_rate_timer();
        assert_eq!(rp.rt, 100e9, "additive increase, capped at the line");
        assert_eq!(rp.rc, (100e9 + rc) / 2.0);
        assert!(!rp.on_cnp());
        rp.on_alpha_timer();
        assert_eq!(rp.alpha, (255.0 / 256.0) * (255.0 / 256.0) + 1.0 / 256.0);
        let rc = rp.rc;
        assert!(rp.on_decrease_check());
        assert_eq!(rp.rt, rc, "after an increase the cut clamps R_T to R_C");
        rp.on_rate_timer();
        rp.on_rate_timer();
        let rt = rp.rt;
        rp.on_rate_timer();
        assert_eq!(rp.rt, rt + 100e6, "stage > F: hyper increase by R_HAI");
        assert_eq!(rp.cuts, 2);
    }

    /// The NIC of a small switch (100 Gb/s, 1 GHz) with one line, port 1 to 0, 1000 B
    /// packets, messages of 9 or 10 packets, `dcqcn` keys added, and no Poisson arrival
    /// (the tests open QPs with [`RdmaNics::message`]).
    fn nic(dcqcn: &str) -> RdmaNics {
        let text = format!(
            "[switch]\nprofile = \"small\"\n[run]\ncycles = 1\n[[flows]]\nsrc = 1\ndst = 0\nprio = 1\n\
             size_bytes = 1000\npattern = {{ dcqcn = {{ {dcqcn} }} }}\nrate_gbps = 1\n\
             message_cdf = [[9001, 0.0], [10000, 1.0]]\nstop_cycle = 1\n"
        );
        let plan = scenario::Scenario::parse(&text, "rdma-nic")
            .unwrap()
            .plan(&scenario::Overrides::default())
            .unwrap();
        RdmaNics::new(&plan.flows, 1, &plan.derived)
    }

    /// Run `t` to `until`; the cycle and header of each packet sent.
    fn run(t: &mut RdmaNics, until: u64) -> Vec<(u64, PacketHdr)> {
        let mut got = Vec::new();
        while t.next_time() <= until {
            let now = t.next_time();
            t.fire_due(now, |h| got.push((now, h)));
        }
        got
    }

    /// The departures of `sent` (all but those `drop` refuses) at their send cycles plus
    /// `delay`, in order.
    fn deliver(
        t: &mut RdmaNics,
        sent: &[(u64, PacketHdr)],
        delay: u64,
        drop: impl Fn(u32) -> bool,
    ) {
        for (at, hdr) in sent.iter().filter(|(_, h)| !drop(h.seq)) {
            let beat = hw_model::Beat {
                hdr: *hdr,
                idx: 0,
                ncells: 1,
            };
            t.departed(at + delay, &[Departure { port: 0, beat }]);
        }
    }

    /// The QP of packet `seq`, by which message its first packet was.
    fn qp_of(t: &RdmaNics, seq: u32) -> u64 {
        t.lines[0].in_flight.iter().find(|e| e.0 == seq).unwrap().1
    }

    #[test]
    fn the_nic_serves_its_qps_round_robin_at_line_rate() {
        let mut t = nic("");
        t.message(100, 0);
        t.message(100, 0);
        let sent = run(&mut t, 10_000);
        let qps: Vec<u64> = sent.iter().map(|(_, h)| qp_of(&t, h.seq)).collect();
        let packets = (t.qps[&0].packets + t.qps[&1].packets) as usize;
        assert_eq!(sent.len(), packets);
        let both = 2 * t.qps[&0].packets.min(t.qps[&1].packets) as usize;
        assert!(
            qps[..both].chunks(2).all(|c| c == [0, 1]),
            "one packet of each in turn: {qps:?}"
        );
        // Back to back at the NIC's line rate: 1020 B on the wire at 100 Gb/s take 81.6
        // cycles (the last packet of each message is shorter).
        let span = (sent[sent.len() - 1].0 - sent[0].0) as f64;
        let wire: f64 = sent[..packets - 1]
            .iter()
            .map(|(_, h)| (h.len + 20) as f64 * 8.0 / 100.0)
            .sum();
        assert!((span - wire).abs() <= 1.0, "{span} cycles, want {wire}");
        // Each message records its last send, and its packets' waits for the other QP's:
        // while both have packets, every packet but the first waits one wire time.
        let mut waits = 0;
        for q in [0, 1] {
            let last = sent.iter().rev().find(|(_, h)| qp_of(&t, h.seq) == q);
            let stats = &t.qps[&q].stats;
            assert_eq!(stats.last_sent_cycle, last.map(|l| l.0));
            waits += stats.nic_wait_cycles;
        }
        let turns: f64 = sent[..both - 1]
            .iter()
            .map(|(_, h)| (h.len + 20) as f64 * 0.08)
            .sum();
        assert!(
            (waits as f64 - turns).abs() <= both as f64,
            "{waits} cycles waited, want {turns}"
        );
        deliver(&mut t, &sent, 500, |_| false);
        assert_eq!(t.message_counts().complete, 2);
        assert!(t.qps.is_empty() && t.nics[0].qps.is_empty());
    }

    #[test]
    fn a_cnp_slows_only_its_own_qp() {
        let mut t = nic("");
        t.message(100, 0);
        t.message(100, 0);
        let mut sent = run(&mut t, 300);
        let mut marked = sent[0].1;
        marked.ecn = Ecn::Ce;
        deliver(&mut t, &[(sent[0].0, marked)], 100, |_| false);
        sent.extend(run(&mut t, 20_000));
        assert_eq!(t.lines[0].cuts, 1, "one decrease, 4 us after the CNP");
        // alpha = 1 at the CNP, then four alpha updates without a CNP before the decrease.
        let alpha = (255.0f64 / 256.0).powi(4);
        let rates: Vec<f64> = [0, 1].iter().map(|q| t.qps[q].rp.rc).collect();
        assert_eq!(
            rates,
            [100e9 * (1.0 - alpha / 2.0), 100e9],
            "only QP 0 is cut"
        );
        // After the cut QP 0 sends at most one packet per 160.7 cycles.
        let cut_at = sent[0].0 + 100 + 10_000 + 4_000 + 1;
        let of0: Vec<u64> = sent
            .iter()
            .filter(|(at, h)| *at > cut_at && qp_of(&t, h.seq) == 0)
            .map(|(at, _)| *at)
            .collect();
        assert!(of0.windows(2).all(|w| w[1] - w[0] >= 160), "{of0:?}");
    }

    #[test]
    fn a_lost_packet_is_sent_again_from_the_nack_go_back_n() {
        let mut t = nic("");
        t.keep_messages();
        t.message(100, 0);
        let sent = run(&mut t, 5_000);
        let packets = t.qps[&0].packets as usize;
        assert_eq!(sent.len(), packets);
        // Packet 3 is lost: the receiver NACKs for it at packet 4; the later ones are
        // out of order too, but one NACK per expected packet per 500 us.
        deliver(&mut t, &sent, 300, |seq| seq == 3);
        assert_eq!(t.qps[&0].expected, 3);
        let again = run(&mut t, 30_000);
        let psns: Vec<u32> = again.iter().map(|(_, h)| h.seq).collect();
        assert_eq!(again.len(), packets - 3, "packets 3.. again: {psns:?}");
        assert_eq!(t.lines[0].in_flight.len(), packets - 3);
        deliver(&mut t, &again, 300, |_| false);
        assert_eq!(t.message_counts().complete, 1);
        let m = t.messages().next().unwrap();
        assert!(m.complete(), "{m:?}");
    }
}
