//! Traffic sources: each flow's arrival process, driven by an event queue.
//!
//! A source does no work on cycles where it has nothing to send: [`Sources`] keeps one
//! pending wake-up time per flow in a binary heap, so the per-cycle cost is one heap peek
//! however many flows the scenario has. Packets go to the link partner of the flow's source
//! port, which queues them per priority and puts them on the wire at line rate.
//!
//! Offered rates count wire bits (`Derived::wire_bits`, i.e. with preamble and gap), so a
//! constant flow at the port's line rate exactly saturates the link. Packet `n` of a rate
//! flow is handed over at `start + ceil(bits of packets 0..n * clock / rate)`: exact rational
//! timing with no accumulated rounding.

use crate::scenario::{Flow, Pattern, SizeDist};
use hw_model::{Departure, Derived, FiveTuple, PacketHdr};
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A uniform draw in `[0, 1)` with 53 bits of precision.
pub fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Draw from a step CDF: the first size whose cumulative probability exceeds `u`.
fn draw_steps(cdf: &[(u32, f64)], u: f64) -> u32 {
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

/// One flow's generator state.
#[derive(Debug, Clone)]
pub struct Source {
    flow: Flow,
    rng: ChaCha8Rng,
    seq: u32,
    /// Wire bits handed over so far (rate patterns): fixes the next packet's time exactly.
    bits: u128,
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
    pub fn new(flow: Flow, seed: u64, d: &Derived) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(flow.id as u64);
        let mean_gap = match &flow.pattern {
            Pattern::Poisson {
                rate_bps,
                message_cdf,
            } => linear_cdf_mean(message_cdf) * 8.0 * d.clock_hz as f64 / *rate_bps as f64,
            _ => 0.0,
        };
        Self {
            next_msg: flow.start_cycle as f64,
            flow,
            rng,
            seq: 0,
            bits: 0,
            mean_gap,
            fired_message: None,
        }
    }

    fn packet_len(&mut self) -> u32 {
        match &self.flow.size {
            SizeDist::Fixed(b) => *b,
            SizeDist::Steps(cdf) => {
                let u = unit(&mut self.rng);
                draw_steps(cdf, u)
            }
        }
    }

    fn emit(&mut self, len: u32, out: &mut impl FnMut(PacketHdr)) {
        out(PacketHdr {
            flow: self.flow.id,
            seq: self.seq,
            src: self.flow.src,
            dst: self.flow.dst,
            prio: self.flow.prio,
            len: len as u16,
            tuple: self.flow.five_tuple(FiveTuple::UDP),
            cm_tag: None,
        });
        self.seq = self.seq.wrapping_add(1);
    }

    /// Time of the next packet of a rate pattern: active time `bits * clock / rate` after
    /// the start, mapped onto the on-periods for on/off.
    fn rate_time(&self, rate_bps: u64, on_off: Option<(u64, u64)>, clock_hz: u64) -> u64 {
        let active = (self.bits * clock_hz as u128).div_ceil(rate_bps as u128) as u64;
        let offset = match on_off {
            None => active,
            Some((on, off)) => (active / on) * (on + off) + active % on,
        };
        self.flow.start_cycle.saturating_add(offset)
    }

    fn message_bytes(&mut self) -> u64 {
        let u = unit(&mut self.rng);
        match &self.flow.pattern {
            Pattern::Poisson { message_cdf, .. } => draw_linear(message_cdf, u),
            _ => 0,
        }
    }

    fn exp_gap(&mut self) -> f64 {
        -(1.0 - unit(&mut self.rng)).ln() * self.mean_gap
    }

    /// First wake-up time, or `None` if the flow never sends within `u64` cycles.
    pub fn first_time(&mut self) -> Option<u64> {
        let t = match self.flow.pattern {
            Pattern::Poisson { .. } => {
                self.next_msg += self.exp_gap();
                self.next_msg.ceil() as u64
            }
            _ => self.flow.start_cycle,
        };
        (t < self.flow.stop_cycle).then_some(t)
    }

    /// Hand over everything due at `now` (this is the wake-up time) and return the next
    /// wake-up time, or `None` when the flow is finished.
    pub fn fire(&mut self, now: u64, d: &Derived, out: &mut impl FnMut(PacketHdr)) -> Option<u64> {
        let next = match self.flow.pattern {
            Pattern::Constant { rate_bps } => {
                let len = self.packet_len();
                self.emit(len, out);
                self.bits += d.wire_bits(len) as u128;
                self.rate_time(rate_bps, None, d.clock_hz)
            }
            Pattern::OnOff {
                rate_bps,
                on_cycles,
                off_cycles,
            } => {
                let len = self.packet_len();
                self.emit(len, out);
                self.bits += d.wire_bits(len) as u128;
                self.rate_time(rate_bps, Some((on_cycles, off_cycles)), d.clock_hz)
            }
            Pattern::Burst { bytes } => {
                let mut sent = 0u64;
                while sent < bytes {
                    let len = self.packet_len();
                    self.emit(len, out);
                    sent += len as u64;
                }
                return None;
            }
            Pattern::Poisson { .. } => {
                let mut left = self.message_bytes();
                self.fired_message = Some(left);
                let SizeDist::Fixed(mtu) = self.flow.size else {
                    unreachable!("validation gives Poisson flows a fixed packet size")
                };
                while left > 0 {
                    let len = left.min(mtu as u64) as u32;
                    self.emit(len.max(crate::scenario::MIN_PACKET_BYTES), out);
                    left -= len as u64;
                }
                self.next_msg = self.next_msg.max(now as f64) + self.exp_gap();
                self.next_msg.ceil() as u64
            }
            Pattern::Tcp(_) => unreachable!("Sources::new leaves TCP flows to tcp::TcpFlows"),
        };
        (next < self.flow.stop_cycle).then_some(next.max(now + 1))
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
}

impl MessageStats {
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

/// Completion tracking of the messages of `poisson` flows: every message in arrival order,
/// and per flow the messages not yet finished (a flow's packets leave in order, so only
/// the oldest open message of a flow can see a departure).
#[derive(Debug, Clone, Default)]
struct Messages {
    all: Vec<MessageStats>,
    /// Per scenario flow id: indices into `all` of its open messages, oldest first.
    open: Vec<VecDeque<usize>>,
}

impl Messages {
    /// A departure of packet `seq` of `flow` at `now`.
    fn departed(&mut self, flow: u32, seq: u32, now: u64) {
        let Some(open) = self.open.get_mut(flow as usize) else {
            return;
        };
        while let Some(&i) = open.front() {
            let m = &mut self.all[i];
            let offset = seq.wrapping_sub(m.first_seq);
            if offset >= m.packets {
                // A later message's packet: this one's last packet was dropped.
                open.pop_front();
                continue;
            }
            m.delivered_packets += 1;
            if offset + 1 == m.packets {
                m.last_departure_cycle = Some(now);
                open.pop_front();
            }
            return;
        }
    }
}

/// All sources and their wake-up times.
#[derive(Debug, Clone)]
pub struct Sources {
    sources: Vec<Source>,
    /// `(wake-up cycle, flow index)`: ties resolve by flow index, so runs are deterministic.
    events: BinaryHeap<Reverse<(u64, u32)>>,
    messages: Messages,
}

impl Sources {
    /// Sources of the open-loop flows; TCP flows are closed-loop and run in
    /// [`crate::tcp::TcpFlows`].
    pub fn new(flows: &[Flow], seed: u64, d: &Derived) -> Self {
        let mut sources: Vec<Source> = flows
            .iter()
            .filter(|f| !matches!(f.pattern, Pattern::Tcp(_)))
            .map(|f| Source::new(f.clone(), seed, d))
            .collect();
        let mut events = BinaryHeap::with_capacity(sources.len());
        for (i, s) in sources.iter_mut().enumerate() {
            if let Some(t) = s.first_time() {
                events.push(Reverse((t, i as u32)));
            }
        }
        let poisson = flows
            .iter()
            .any(|f| matches!(f.pattern, Pattern::Poisson { .. }));
        let messages = Messages {
            all: Vec::new(),
            open: if poisson {
                vec![VecDeque::new(); flows.len()]
            } else {
                Vec::new()
            },
        };
        Self {
            sources,
            events,
            messages,
        }
    }

    /// Fire every source due at `now`, handing packets to `out`.
    pub fn fire_due(&mut self, now: u64, d: &Derived, mut out: impl FnMut(PacketHdr)) {
        while let Some(&Reverse((t, i))) = self.events.peek() {
            if t > now {
                break;
            }
            self.events.pop();
            let src = &mut self.sources[i as usize];
            let first_seq = src.seq;
            let next = src.fire(now, d, &mut out);
            if let Some(bytes) = src.fired_message.take() {
                let flow = src.flow.id;
                self.messages.open[flow as usize].push_back(self.messages.all.len());
                self.messages.all.push(MessageStats {
                    flow,
                    bytes,
                    packets: src.seq.wrapping_sub(first_seq),
                    first_seq,
                    arrival_cycle: now,
                    last_departure_cycle: None,
                    delivered_packets: 0,
                });
            }
            if let Some(next) = next {
                self.events.push(Reverse((next, i)));
            }
        }
    }

    /// Record the packets of `poisson` messages whose last cell departed at `now`.
    pub fn departed(&mut self, now: u64, departures: &[Departure]) {
        if self.messages.open.is_empty() {
            return;
        }
        for dep in departures.iter().filter(|d| d.beat.eop()) {
            self.messages
                .departed(dep.beat.hdr.flow, dep.beat.hdr.seq, now);
        }
    }

    /// Every message of the `poisson` flows so far, in arrival order.
    pub fn messages(&self) -> &[MessageStats] {
        &self.messages.all
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
        let msg = |flow, first_seq, packets| MessageStats {
            flow,
            bytes: packets as u64 * 1000,
            packets,
            first_seq,
            arrival_cycle: 10,
            last_departure_cycle: None,
            delivered_packets: 0,
        };
        let mut m = Messages {
            all: vec![msg(1, u32::MAX - 1, 3), msg(1, 1, 2), msg(1, 3, 1)],
            open: vec![VecDeque::new(), VecDeque::from([0, 1, 2])],
        };
        // Message 0 wraps the sequence: u32::MAX - 1, u32::MAX, 0.
        for (seq, now) in [(u32::MAX - 1, 20), (u32::MAX, 21), (0, 22)] {
            m.departed(1, seq, now);
        }
        assert_eq!(m.all[0].fct_cycles(), Some(12));
        // Message 1 loses its last packet (seq 2); seq 3 belongs to message 2.
        m.departed(1, 1, 30);
        m.departed(1, 3, 31);
        assert!(!m.all[1].complete());
        assert_eq!(
            (m.all[1].delivered_packets, m.all[1].fct_cycles()),
            (1, None)
        );
        assert_eq!(m.all[2].fct_cycles(), Some(21));
        assert!(m.open[1].is_empty());
        m.departed(0, 0, 40);
        m.departed(7, 0, 40);
    }

    #[test]
    fn step_cdf_picks_first_exceeding_point() {
        let cdf = [(64u32, 0.25), (1500, 1.0)];
        assert_eq!(draw_steps(&cdf, 0.2), 64);
        assert_eq!(draw_steps(&cdf, 0.25), 1500);
    }
}
