//! Traffic sources: each flow's arrival process, driven by an event queue.
//!
//! A source does no work on cycles where it has nothing to send: [`Sources`] keeps one
//! pending wake-up time per flow in a calendar (a timing wheel of one-cycle slots for the
//! next [`SLOTS`] cycles, a heap for later ones), so the per-cycle cost is one bit test
//! however many flows the scenario has, and a wake-up within the wheel costs a push. Packets go to the link partner of the flow's source
//! port, which queues them per priority and puts them on the wire at line rate. A burst or
//! a message is handed over as one [`PacketRun`], whose packets are made as the partner
//! takes them, so memory does not grow with its size.
//!
//! Offered rates count wire bits (`Derived::wire_bits`, i.e. with preamble and gap), so a
//! constant flow at the port's line rate exactly saturates the link. Packet `n` of a rate
//! flow is handed over at `start + ceil(bits of packets 0..n * clock / rate)`: exact rational
//! timing with no accumulated rounding.

use crate::packet_run::{PacketRun, StepSizes};
use hw_model::{Departure, Derived, FiveTuple, PacketHdr};
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use scenario::{Flow, Pattern, SizeDist};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A uniform draw in `[0, 1)` with 53 bits of precision.
pub fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Draw from a step CDF: the first size whose cumulative probability exceeds `u`.
pub fn draw_steps(cdf: &[(u32, f64)], u: f64) -> u32 {
    cdf.iter()
        .find(|&&(_, p)| u < p)
        .unwrap_or(&cdf[cdf.len() - 1])
        .0
}

/// Draw from a piecewise-linear CDF (the usual data-center workload files): below the first
/// point's probability the first size, else linear interpolation between points.
pub fn draw_linear(cdf: &[(u64, f64)], u: f64) -> u64 {
    if u < cdf[0].1 {
        return cdf[0].0;
    }
    for w in cdf.windows(2) {
        let ((s0, p0), (s1, p1)) = (w[0], w[1]);
        if u < p1 {
            let x = s0 as f64 + (u - p0) / (p1 - p0) * (s1 - s0) as f64;
            return (x.ceil() as u64).clamp(s0, s1);
        }
    }
    cdf[cdf.len() - 1].0
}

/// Mean of a piecewise-linear CDF, bytes.
pub fn linear_cdf_mean(cdf: &[(u64, f64)]) -> f64 {
    let head = cdf[0].0 as f64 * cdf[0].1;
    head + cdf
        .windows(2)
        .map(|w| (w[1].1 - w[0].1) * (w[0].0 + w[1].0) as f64 / 2.0)
        .sum::<f64>()
}

/// One flow's generator state. The flow itself stays in the plan: [`Sources`] passes it in.
#[derive(Debug, Clone)]
pub struct Source {
    /// The header of the flow's packets but their `seq` and `len`, made once: its `flow`
    /// is the scenario flow id, the flow's index in the plan.
    hdr: PacketHdr,
    /// The flow's random stream `(seed, flow id)`, held only by flows that draw (a size
    /// CDF, Poisson arrivals); a burst hands it to its packet run.
    rng: Option<Box<ChaCha8Rng>>,
    seq: u32,
    /// Rate patterns: the wire bits handed over so far times the clock, as
    /// `active * rate + active_rem` (`active_rem < rate`): fixes the next packet's time
    /// exactly, without a wide division per packet.
    active: u64,
    active_rem: u64,
    /// The last packet length and its wire bits times the clock divided by the rate, as
    /// `(len, quotient, remainder)` (a flow sends runs of one length).
    len_step: (u32, u64, u64),
    /// Next Poisson message arrival, fractional cycles.
    next_msg: f64,
    /// Mean Poisson inter-arrival, cycles.
    mean_gap: f64,
    /// Bytes of the message the last `fire` handed over (Poisson), for [`Messages`].
    fired_message: Option<u64>,
}

impl Source {
    /// A source for `flow`; its random stream is `(seed, flow id)`, so adding a flow does
    /// not change the draws of the others.
    pub fn new(flow: &Flow, seed: u64, d: &Derived) -> Self {
        let poisson = matches!(flow.pattern, Pattern::Poisson { .. });
        let rng = (poisson || matches!(flow.size, SizeDist::Steps(_))).then(|| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(flow.id as u64);
            Box::new(rng)
        });
        let mean_gap = match &flow.pattern {
            Pattern::Poisson {
                rate_bps,
                message_cdf,
            } => linear_cdf_mean(message_cdf) * 8.0 * d.clock_hz as f64 / *rate_bps as f64,
            _ => 0.0,
        };
        Self {
            hdr: PacketHdr {
                flow: flow.id,
                seq: 0,
                src: flow.src,
                dst: flow.dst,
                prio: flow.prio,
                len: 0,
                tuple: flow.five_tuple(FiveTuple::UDP),
                cm_tag: None,
                ecn: flow.ecn_field(),
            },
            rng,
            seq: 0,
            active: 0,
            active_rem: 0,
            len_step: (0, 0, 0),
            next_msg: flow.start_cycle as f64,
            mean_gap,
            fired_message: None,
        }
    }

    fn rng(&mut self) -> &mut ChaCha8Rng {
        self.rng
            .as_mut()
            .expect("Source::new gives drawing flows a random stream")
    }

    fn packet_len(&mut self, flow: &Flow) -> u32 {
        match &flow.size {
            SizeDist::Fixed(b) => *b,
            SizeDist::Steps(cdf) => {
                let u = unit(self.rng());
                draw_steps(cdf, u)
            }
        }
    }

    /// The header of the flow's next packet, `len` bytes long.
    fn header(&self, len: u32) -> PacketHdr {
        PacketHdr {
            seq: self.seq,
            len: len as u16,
            ..self.hdr
        }
    }

    fn emit_one(&mut self, len: u32, out: &mut impl FnMut(PacketRun)) {
        out(self.header(len).into());
        self.seq = self.seq.wrapping_add(1);
    }

    /// A packet of `len` bytes was handed over at `rate_bps`: add its wire bits to the
    /// active time.
    fn add_bits(&mut self, d: &Derived, len: u32, rate_bps: u64) {
        if self.len_step.0 != len || len == 0 {
            let bits_clock = d.wire_bits(len) as u128 * d.clock_hz as u128;
            let rate = rate_bps as u128;
            self.len_step = (len, (bits_clock / rate) as u64, (bits_clock % rate) as u64);
        }
        let (_, q, r) = self.len_step;
        self.active += q;
        self.active_rem += r;
        if self.active_rem >= rate_bps {
            self.active += 1;
            self.active_rem -= rate_bps;
        }
    }

    /// Time of the next packet of a rate pattern: active time `bits * clock / rate` (rounded
    /// up) after the start, mapped onto the on-periods for on/off.
    fn rate_time(&self, flow: &Flow, on_off: Option<(u64, u64)>) -> u64 {
        let active = self.active + (self.active_rem > 0) as u64;
        let offset = match on_off {
            None => active,
            Some((on, off)) => (active / on) * (on + off) + active % on,
        };
        flow.start_cycle.saturating_add(offset)
    }

    fn message_bytes(&mut self, flow: &Flow) -> u64 {
        let u = unit(self.rng());
        match &flow.pattern {
            Pattern::Poisson { message_cdf, .. } => draw_linear(message_cdf, u),
            _ => 0,
        }
    }

    fn exp_gap(&mut self) -> f64 {
        -(1.0 - unit(self.rng())).ln() * self.mean_gap
    }

    /// First wake-up time of `flow` (this source's), or `None` if it never sends within
    /// `u64` cycles.
    pub fn first_time(&mut self, flow: &Flow) -> Option<u64> {
        let t = match flow.pattern {
            Pattern::Poisson { .. } => {
                self.next_msg += self.exp_gap();
                self.next_msg.ceil() as u64
            }
            _ => flow.start_cycle,
        };
        (t < flow.stop_cycle).then_some(t)
    }

    /// Hand over everything of `flow` (this source's) due at `now` (this is the wake-up
    /// time) and return the next wake-up time, or `None` when the flow is finished. A
    /// burst or a message is one [`PacketRun`].
    pub fn fire(
        &mut self,
        flow: &Flow,
        now: u64,
        d: &Derived,
        out: &mut impl FnMut(PacketRun),
    ) -> Option<u64> {
        let next = match flow.pattern {
            Pattern::Constant { rate_bps } => {
                let len = self.packet_len(flow);
                self.emit_one(len, out);
                self.add_bits(d, len, rate_bps);
                self.rate_time(flow, None)
            }
            Pattern::OnOff {
                rate_bps,
                on_cycles,
                off_cycles,
            } => {
                let len = self.packet_len(flow);
                self.emit_one(len, out);
                self.add_bits(d, len, rate_bps);
                self.rate_time(flow, Some((on_cycles, off_cycles)))
            }
            Pattern::Burst { bytes } => {
                // The flow's last hand-over: the run takes its random stream along.
                let run = match &flow.size {
                    SizeDist::Fixed(len) => {
                        PacketRun::repeat(self.header(*len), bytes.div_ceil(*len as u64))
                    }
                    SizeDist::Steps(cdf) => {
                        let rng = *self.rng.take().expect("a size CDF draws");
                        let sizes = StepSizes {
                            rng,
                            cdf: cdf.clone(),
                        };
                        PacketRun::drawn(self.header(0), bytes, sizes)
                    }
                };
                out(run);
                return None;
            }
            Pattern::Poisson { .. } => {
                let bytes = self.message_bytes(flow);
                self.fired_message = Some(bytes);
                let SizeDist::Fixed(mtu) = flow.size else {
                    unreachable!("validation gives Poisson flows a fixed packet size")
                };
                if bytes > 0 {
                    out(PacketRun::message(self.header(0), bytes, mtu));
                }
                let packets = PacketRun::message_packets(bytes, mtu);
                self.seq = self.seq.wrapping_add(packets as u32);
                self.next_msg = self.next_msg.max(now as f64) + self.exp_gap();
                self.next_msg.ceil() as u64
            }
            Pattern::Tcp(_) | Pattern::Dcqcn(_) | Pattern::IntCc(_) => {
                unreachable!("Sources::new leaves the closed-loop flows to their own modules")
            }
        };
        (next < flow.stop_cycle).then_some(next.max(now + 1))
    }
}

/// One message of a `poisson` flow and its completion.
///
/// Its packets carry `PacketHdr.seq` `first_seq..first_seq + packets` (wrapping). A packet
/// is delivered when its last cell departs the switch (as for TCP receivers); the message
/// is done when its last packet is delivered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MessageStats {
    /// Scenario flow id.
    pub flow: u32,
    /// Message bytes as drawn from `message_cdf` (without wire overhead).
    pub bytes: u64,
    pub packets: u32,
    pub first_seq: u32,
    /// Cycle the message arrived: its packets were handed to the link partner.
    pub arrival_cycle: u64,
    /// Cycle the last cell of its last packet departed the switch; `None` while it has
    /// not, and for ever if that packet was dropped.
    pub last_departure_cycle: Option<u64>,
    /// Packets whose last cell departed the switch.
    pub delivered_packets: u32,
    /// A queue pair's message (`stimulus::rdma_nic`): the cycle its NIC sent its last
    /// packet (the latest time, after a go-back), and the cycles its packets waited, their
    /// rate limiter passed, for the NIC's transmitter to serve other QPs (round robin). The
    /// FCT splits at the first into the NIC's part and the part after it: the link
    /// partner's queue (paused), the wire and the switch. `None` and 0 for other messages.
    pub last_sent_cycle: Option<u64>,
    pub nic_wait_cycles: u64,
}

impl MessageStats {
    /// A message that arrived at `arrival_cycle`, nothing of it delivered yet.
    pub fn arrived(
        flow: u32,
        bytes: u64,
        packets: u32,
        first_seq: u32,
        arrival_cycle: u64,
    ) -> Self {
        Self {
            flow,
            bytes,
            packets,
            first_seq,
            arrival_cycle,
            last_departure_cycle: None,
            delivered_packets: 0,
            last_sent_cycle: None,
            nic_wait_cycles: 0,
        }
    }

    /// Every packet was delivered.
    pub fn complete(&self) -> bool {
        self.delivered_packets == self.packets && self.last_departure_cycle.is_some()
    }

    /// Flow completion time, cycles: arrival to the departure of the last cell of the last
    /// packet; `None` unless [`complete`](Self::complete).
    pub fn fct_cycles(&self) -> Option<u64> {
        self.last_departure_cycle
            .filter(|_| self.complete())
            .map(|t| t - self.arrival_cycle)
    }
}

/// Message counts of the `poisson` flows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MessageCounts {
    pub arrived: u64,
    /// Closed with every packet delivered ([`MessageStats::complete`]).
    pub complete: u64,
    /// Closed with a packet lost: the last packet departed after an earlier one was
    /// dropped, or a later message's packet departed before the last one (it was dropped).
    pub incomplete: u64,
}

impl std::ops::Add for MessageCounts {
    type Output = Self;

    /// The counts of two sets of flows together.
    fn add(self, b: Self) -> Self {
        Self {
            arrived: self.arrived + b.arrived,
            complete: self.complete + b.complete,
            incomplete: self.incomplete + b.incomplete,
        }
    }
}

impl MessageCounts {
    /// Messages not closed yet.
    pub fn open(&self) -> u64 {
        self.arrived - self.complete - self.incomplete
    }
}

/// Completion tracking of the messages of `poisson` flows (and of `dcqcn` flows with
/// messages, `crate::dcqcn`). Only the open messages are
/// held, per flow (a flow's packets leave in order, so only the oldest open message of a
/// flow can see a departure); a closed one is counted, and kept only when
/// [`Sources::keep_messages`] asked for it. So memory follows the messages in the network,
/// not the run length.
#[derive(Debug, Clone, Default)]
pub(crate) struct Messages {
    /// Per scenario flow id, its open messages, oldest first.
    open: Vec<VecDeque<MessageStats>>,
    kept: Option<Vec<MessageStats>>,
    pub(crate) counts: MessageCounts,
}

impl Messages {
    /// Tracking for `flows` scenario flows, or none (`track = false`: no message flow).
    pub(crate) fn new(flows: usize, track: bool) -> Self {
        Self {
            open: if track {
                vec![VecDeque::new(); flows]
            } else {
                Vec::new()
            },
            ..Self::default()
        }
    }

    pub(crate) fn arrived(&mut self, m: MessageStats) {
        self.counts.arrived += 1;
        self.open[m.flow as usize].push_back(m);
    }

    /// The packets of the messages whose last cell departed at `now`; nothing to do (an
    /// inlined test) without message flows.
    #[inline]
    pub(crate) fn departed_all(&mut self, now: u64, departures: &[Departure]) {
        if !self.open.is_empty() {
            self.departed_each(now, departures);
        }
    }

    fn departed_each(&mut self, now: u64, departures: &[Departure]) {
        for dep in departures.iter().filter(|d| d.beat.eop()) {
            self.departed(dep.beat.hdr.flow, dep.beat.hdr.seq, now);
        }
    }

    /// Keep every message that closes from now on.
    pub(crate) fn keep(&mut self) {
        self.kept.get_or_insert_with(Vec::new);
    }

    /// The kept and the open messages, in arrival order.
    pub(crate) fn all(&self) -> Vec<MessageStats> {
        let kept = self.kept.iter().flatten();
        let mut all: Vec<_> = kept.chain(self.open.iter().flatten()).cloned().collect();
        all.sort_by_key(|m| (m.arrival_cycle, m.flow));
        all
    }

    /// A departure of packet `seq` of `flow` at `now`.
    fn departed(&mut self, flow: u32, seq: u32, now: u64) {
        let Some(open) = self.open.get_mut(flow as usize) else {
            return;
        };
        while let Some(m) = open.front_mut() {
            let offset = seq.wrapping_sub(m.first_seq);
            let own = offset < m.packets;
            if own {
                m.delivered_packets += 1;
                if offset + 1 < m.packets {
                    return;
                }
                m.last_departure_cycle = Some(now);
            }
            // Its last packet departed, or a later message's did: then that one was dropped.
            let m = open.pop_front().expect("the front exists");
            if m.complete() {
                self.counts.complete += 1;
            } else {
                self.counts.incomplete += 1;
            }
            if let Some(kept) = &mut self.kept {
                kept.push(m);
            }
            if own {
                return;
            }
        }
    }
}

/// A wake-up of source `i` at cycle `t` as one integer, `t` above `i`: ordering the keys
/// orders by time, then by index, with one wide comparison instead of a tuple's two.
fn wake_key(t: u64, i: u32) -> u128 {
    (t as u128) << 32 | i as u128
}

/// Slots of the sources' calendar wheel, one cycle each: a power of two (a time's slot is a
/// mask) and at most 64 (their occupancy is one `u64`). A constant flow of minimum frames
/// at a port's line rate wakes every few cycles, well inside it.
pub const SLOTS: u64 = 64;

/// Wake-up times of the sources, by cycle: a timing wheel for the next [`SLOTS`] cycles and
/// a heap for the rest. Sources due in the same cycle are handed out by index, the order
/// of the `(time, index)` heap this replaces, so runs are the same.
#[derive(Debug, Clone)]
struct Calendar {
    /// No wake-up is earlier: slot `t % SLOTS` holds the sources due at `t` for
    /// `now <= t < now + SLOTS`.
    now: u64,
    slots: [Vec<u32>; SLOTS as usize],
    /// Bit `s`: slot `s` holds a wake-up.
    occupied: u64,
    /// Bit `s`: slot `s` holds its sources out of index order (a source pushed behind a
    /// higher index), noted as they are pushed; its list is sorted when taken.
    unsorted: u64,
    /// The earliest wake-up (`u64::MAX`: none), kept up to date as wake-ups are scheduled
    /// and taken, for the test the simulator makes every cycle.
    next: u64,
    /// Wake-ups at `now + SLOTS` or later as [`wake_key`]s, earliest first.
    later: BinaryHeap<Reverse<u128>>,
}

impl Calendar {
    fn new() -> Self {
        Self {
            now: 0,
            slots: std::array::from_fn(|_| Vec::new()),
            occupied: 0,
            unsorted: 0,
            next: u64::MAX,
            later: BinaryHeap::new(),
        }
    }

    /// Source `i` wakes at `t` (not before the calendar's time).
    #[inline]
    fn schedule(&mut self, t: u64, i: u32) {
        debug_assert!(t >= self.now, "a wake-up in the past");
        self.next = self.next.min(t);
        if t - self.now < SLOTS {
            self.push(t, i);
        } else {
            self.later.push(Reverse(wake_key(t, i)));
        }
    }

    /// Source `i` into the slot of time `t`, within the wheel.
    #[inline]
    fn push(&mut self, t: u64, i: u32) {
        let s = (t % SLOTS) as usize;
        let slot = &mut self.slots[s];
        if slot.last().is_some_and(|&l| l > i) {
            self.unsorted |= 1 << s;
        }
        slot.push(i);
        self.occupied |= 1 << s;
    }

    /// The earliest wake-up, `u64::MAX` if none.
    #[inline]
    fn next_time(&self) -> u64 {
        self.next
    }

    /// [`next_time`](Self::next_time) found anew: the nearest occupied slot from the
    /// calendar's time (every wake-up in the heap is later).
    fn earliest(&self) -> u64 {
        if self.occupied != 0 {
            let ahead = self.occupied.rotate_right((self.now % SLOTS) as u32);
            return self.now + ahead.trailing_zeros() as u64;
        }
        self.later
            .peek()
            .map_or(u64::MAX, |Reverse(k)| (k >> 32) as u64)
    }

    /// Move the calendar's time to `t` (no wake-up is earlier) and the heap's wake-ups
    /// now within the wheel into their slots.
    fn advance(&mut self, t: u64) {
        self.now = t;
        while let Some(&Reverse(k)) = self.later.peek() {
            let at = (k >> 32) as u64;
            if at - t >= SLOTS {
                break;
            }
            self.later.pop();
            self.push(at, k as u32);
        }
    }

    /// The sources due at the earliest wake-up if it is not after `now`, by index, with
    /// the calendar moved to that time; the caller hands the list back with
    /// [`done`](Self::done) (rescheduling never lands in its slot: a wake-up is in the
    /// future, and the slot's next time is a whole wheel ahead, in the heap).
    #[inline]
    fn take_due(&mut self, now: u64) -> Option<(u64, Vec<u32>)> {
        let t = self.next;
        if t > now {
            return None;
        }
        if t != self.now || self.occupied == 0 {
            self.advance(t);
        }
        let s = (t % SLOTS) as usize;
        self.occupied &= !(1 << s);
        let mut due = std::mem::take(&mut self.slots[s]);
        // Sources due together are rescheduled in index order, so mostly already sorted.
        if self.unsorted & (1 << s) != 0 {
            self.unsorted &= !(1 << s);
            due.sort_unstable();
        }
        self.next = self.earliest();
        Some((t, due))
    }

    /// The list [`take_due`](Self::take_due) handed out, back into its slot (empty, with
    /// its capacity).
    #[inline]
    fn done(&mut self, t: u64, mut due: Vec<u32>) {
        let s = (t % SLOTS) as usize;
        debug_assert!(
            self.slots[s].is_empty(),
            "a wake-up landed in the slot taken"
        );
        due.clear();
        self.slots[s] = due;
    }
}

/// All sources and their wake-up times.
#[derive(Debug, Clone)]
pub struct Sources {
    sources: Vec<Source>,
    /// Wake-ups; ties resolve by source index, so runs are deterministic.
    calendar: Calendar,
    messages: Messages,
}

impl Sources {
    /// Sources of the open-loop flows; TCP flows are closed-loop and run in
    /// [`crate::tcp::TcpFlows`].
    pub fn new(flows: &[Flow], seed: u64, d: &Derived) -> Self {
        let mut sources = Vec::new();
        let mut calendar = Calendar::new();
        for f in flows.iter().filter(|f| {
            !matches!(
                f.pattern,
                Pattern::Tcp(_) | Pattern::Dcqcn(_) | Pattern::IntCc(_)
            )
        }) {
            let mut s = Source::new(f, seed, d);
            if let Some(t) = s.first_time(f) {
                calendar.schedule(t, sources.len() as u32);
            }
            sources.push(s);
        }
        let poisson = flows
            .iter()
            .any(|f| matches!(f.pattern, Pattern::Poisson { .. }));
        let messages = Messages::new(flows.len(), poisson);
        Self {
            sources,
            calendar,
            messages,
        }
    }

    /// Fire every source due at `now` (or before: the simulator steps every cycle with a
    /// wake-up, so none is), handing packet runs to `out`; `flows` are the plan's.
    pub fn fire_due(
        &mut self,
        now: u64,
        d: &Derived,
        flows: &[Flow],
        mut out: impl FnMut(PacketRun),
    ) {
        while let Some((t, due)) = self.calendar.take_due(now) {
            for &i in &due {
                let src = &mut self.sources[i as usize];
                let flow = &flows[src.hdr.flow as usize];
                let first_seq = src.seq;
                let next = src.fire(flow, now, d, &mut out);
                // Read, and cleared only when set (Poisson flows): no write for the rest.
                if let Some(bytes) = src.fired_message {
                    src.fired_message = None;
                    self.messages.arrived(MessageStats::arrived(
                        flow.id,
                        bytes,
                        src.seq.wrapping_sub(first_seq),
                        first_seq,
                        now,
                    ));
                }
                if let Some(next) = next {
                    self.calendar.schedule(next, i);
                }
            }
            self.calendar.done(t, due);
        }
    }

    /// The next cycle a source fires in, `u64::MAX` when all are finished.
    #[inline]
    pub fn next_time(&self) -> u64 {
        self.calendar.next_time()
    }

    /// Record the packets of `poisson` messages whose last cell departed at `now`.
    #[inline]
    pub fn departed(&mut self, now: u64, departures: &[Departure]) {
        self.messages.departed_all(now, departures);
    }

    /// Keep every message that closes from now on, for [`messages`](Self::messages).
    pub fn keep_messages(&mut self) {
        self.messages.keep();
    }

    /// The kept messages of the `poisson` flows and the open ones, in arrival order (a
    /// flow has at most one message per cycle). Every message only if
    /// [`keep_messages`](Self::keep_messages) was called before the first cycle.
    pub fn messages(&self) -> Vec<MessageStats> {
        self.messages.all()
    }

    /// Counts of the messages of the `poisson` flows so far.
    pub fn message_counts(&self) -> MessageCounts {
        self.messages.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_cdf_draws_stay_within_points() {
        let cdf = [(100u64, 0.5), (1000, 1.0)];
        assert_eq!(draw_linear(&cdf, 0.1), 100);
        assert_eq!(draw_linear(&cdf, 0.75), 550);
        assert!((linear_cdf_mean(&cdf) - (50.0 + 275.0)).abs() < 1e-9);
    }

    #[test]
    fn messages_complete_on_their_last_packet_and_not_after_a_lost_one() {
        let msg = |flow, first_seq, packets| {
            MessageStats::arrived(flow, packets as u64 * 1000, packets, first_seq, 10)
        };
        let mut m = Messages {
            open: vec![VecDeque::new(), VecDeque::new()],
            kept: Some(Vec::new()),
            ..Messages::default()
        };
        for msg in [msg(1, u32::MAX - 1, 3), msg(1, 1, 2), msg(1, 3, 1)] {
            m.arrived(msg);
        }
        // Message 0 wraps the sequence: u32::MAX - 1, u32::MAX, 0.
        for (seq, now) in [(u32::MAX - 1, 20), (u32::MAX, 21), (0, 22)] {
            m.departed(1, seq, now);
        }
        let kept = |m: &Messages, i: usize| m.kept.as_ref().unwrap()[i].clone();
        assert_eq!(kept(&m, 0).fct_cycles(), Some(12));
        assert_eq!(m.open[1].len(), 2, "closed messages leave the open list");
        // Message 1 loses its last packet (seq 2); seq 3 belongs to message 2.
        m.departed(1, 1, 30);
        m.departed(1, 3, 31);
        assert!(!kept(&m, 1).complete());
        assert_eq!(
            (kept(&m, 1).delivered_packets, kept(&m, 1).fct_cycles()),
            (1, None)
        );
        assert_eq!(kept(&m, 2).fct_cycles(), Some(21));
        assert!(m.open[1].is_empty());
        m.departed(0, 0, 40);
        m.departed(7, 0, 40);
        let counts = MessageCounts {
            arrived: 3,
            complete: 2,
            incomplete: 1,
        };
        assert_eq!((m.counts, m.counts.open()), (counts, 0));
    }

    #[test]
    fn closed_messages_are_counted_but_not_held_unless_kept() {
        let mut m = Messages {
            open: vec![VecDeque::new()],
            ..Messages::default()
        };
        for i in 0..1000 {
            m.arrived(MessageStats::arrived(0, 100, 1, i, i as u64));
            m.departed(0, i, i as u64 + 5);
        }
        assert!(m.open[0].is_empty() && m.kept.is_none());
        assert_eq!(m.counts.complete, 1000);
    }

    /// The calendar hands out the wake-ups in the order of the `(time, index)` heap it
    /// replaced, across the wheel's wrap and the heap of later ones, and with cycles
    /// skipped between calls.
    #[test]
    fn calendar_wakes_in_time_then_index_order() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut cal = Calendar::new();
        let mut heap = BinaryHeap::new();
        for i in 0..40u32 {
            let t = rng.next_u64() % 300;
            cal.schedule(t, i);
            heap.push(Reverse(wake_key(t, i)));
        }
        let mut now = 0;
        while let Some(&Reverse(k)) = heap.peek() {
            assert_eq!(cal.next_time(), (k >> 32) as u64);
            now += 1 + rng.next_u64() % 5;
            let mut expect = Vec::new();
            while let Some(&Reverse(k)) = heap.peek() {
                if (k >> 32) as u64 > now {
                    break;
                }
                heap.pop();
                expect.push(k as u32);
            }
            let mut got = Vec::new();
            while let Some((t, due)) = cal.take_due(now) {
                got.extend(&due);
                cal.done(t, due);
            }
            assert_eq!(got, expect, "at cycle {now}");
            for &i in &got {
                if now < 2000 {
                    let t = now + 1 + rng.next_u64() % 150;
                    cal.schedule(t, i);
                    heap.push(Reverse(wake_key(t, i)));
                }
            }
        }
        assert_eq!(cal.next_time(), u64::MAX);
    }

    #[test]
    fn step_cdf_picks_first_exceeding_point() {
        let cdf = [(64u32, 0.25), (1500, 1.0)];
        assert_eq!(draw_steps(&cdf, 0.2), 64);
        assert_eq!(draw_steps(&cdf, 0.25), 1500);
    }
}
