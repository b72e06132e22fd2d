//! The upstream device of one ingress port: per-priority queues, a line-rate transmitter
//! that cuts packets into cell beats, the link's propagation delay, and its PFC reaction.
//!
//! Timing, all in core cycles:
//! - The transmitter is a [`PhaseAccumulator`] at the port's line rate. A packet occupies
//!   `Derived::wire_bits(len)` bits: its `len` bytes first, then the preamble and
//!   inter-frame gap (the overhead is counted after the data so a beat is due as soon as
//!   its bytes are). Back-to-back packets keep the fractional remainder; an idle line
//!   clears it, so the long-run rate is exact and an idle line banks no credit.
//! - Beat `k < ncells - 1` is due once `min((k + 1) * cell_bytes - packet_overhead, len)`
//!   bytes are on the wire, the last beat once all `len` are. At most one beat leaves per
//!   cycle; a second one due in the same cycle waits a cycle.
//! - A beat reaches the MMU `prop_cycles` after it leaves ("in flight" meanwhile).
//! - A PFC frame the MMU sends at cycle `c` acts at `c + prop_cycles + proc_cycles`: from
//!   then on no new packet of a paused class starts (the packet on the wire finishes).
//!   Pause time is `quanta * 512` bit times at the port's rate, refreshed by every frame;
//!   quanta 0 resumes at once. The partner never drops.
//! - The sending NIC holds an ECM reaction point ([`ReactionPoint`]): the filters sit between
//!   the class queues and the transmitter, and a frame the switch's congestion points send
//!   toward this partner at cycle `c` reaches it at `c + prop_cycles` (no processing delay).
//!   ECM frames are modelled out of band: they do not occupy the switch's egress wire toward
//!   the partner.
//!
//! Stepping: [`LinkPartner::next_event`] is the next cycle in which [`LinkPartner::step`] has
//! work (a beat due on the wire or at the MMU, a packet's last bit, a PFC frame acting, a
//! pause expiring with a packet waiting, a reaction-point timer, a limiter's credit); the
//! simulator steps a partner only then, and a partner paused with nothing else to do sleeps
//! until its pause expires or a frame resumes it. Stepping in any other cycle changes
//! nothing, so a caller may also step every cycle. The line is clocked in bulk over the
//! cycles in between.

use crate::packet_run::{PacketRun, RunQueue};
use crate::reaction_point::ReactionPoint;
use hw_model::config::PFC_QUANTUM_BITS;
use hw_model::{Beat, Derived, EcmFrame, PacketHdr, PfcFrame};
use rtl::PhaseAccumulator;
use scenario::params::EcmRpParams;
use scenario::{Arbitration, Link};
use std::collections::VecDeque;

/// Initial capacity of each class queue, packet runs: the backlog only grows past it (by
/// doubling, so rarely) when a class is paused for long or offered above line rate by
/// several flows (a flow's own consecutive packets share one run).
const QUEUE_CAPACITY: usize = 64;

/// The packet on the wire.
#[derive(Debug, Clone, Copy)]
struct OnWire {
    /// The next beat to leave (`beat.idx`; `ncells` once every beat left): each beat is
    /// sent from here, advanced in place, not built anew.
    beat: Beat,
    wire_bits: u64,
    /// Bits on the wire that complete the next beat (all `wire_bits` once every beat left).
    due_bits: u64,
}

/// A packet length and what it costs: cells, wire bits, the bits its first beat is due at
/// and the cycles from its first clock on an idle line to that beat (the last length seen
/// is kept, as flows send runs of one length).
#[derive(Debug, Clone, Copy, Default)]
struct LenCost {
    len: u16,
    ncells: u16,
    wire_bits: u64,
    first_due: u64,
    first_ticks: u64,
}

/// Counters of one partner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartnerStats {
    pub packets_sent: u64,
    pub pfc_frames_rx: u64,
    /// Class transitions from running to paused.
    pub pause_events: u64,
    /// DSH port-level transitions from running to paused.
    pub port_pause_events: u64,
    /// PAUSE frames (class or port level, at least one non-zero timer) the switch sent
    /// toward this partner, counted when sent: the paper's "number of PAUSE frames".
    pub pause_frames_sent: u64,
}

/// The device upstream of one ingress port.
#[derive(Debug, Clone)]
pub struct LinkPartner {
    link: Link,
    rate_bps: u64,
    clock_hz: u64,
    cell_bytes: u32,
    packet_overhead: u32,
    queues: [RunQueue; 8],
    /// Bit `c`: class `c` has a packet queued.
    nonempty: u8,
    /// Per class, first cycle the class may start a packet again.
    pause_until: [u64; 8],
    /// First cycle after a DSH port-level pause.
    port_pause_until: u64,
    /// First cycle without any pause (the latest of the above).
    pauses_end: u64,
    /// Per class, cycles paused (own pause or port-level pause) before `paused_accounted_to`;
    /// settled at every PFC frame so that a pause cut short by a RESUME counts only its
    /// actual length.
    paused_cycles: [u64; 8],
    paused_accounted_to: u64,
    /// Round-robin pointer: the class searched first.
    rr_next: u8,
    line: PhaseAccumulator,
    /// The last cycle the line was clocked with a packet on the wire.
    line_at: u64,
    on_wire: Option<OnWire>,
    /// `on_wire` is a single packet [`offer`](Self::offer) put there in the hand-over
    /// phase of a cycle, for [`start_handed`](Self::start_handed) to start or take back
    /// (`false` outside that phase).
    handed: bool,
    last_len: LenCost,
    tx: Tx,
    /// PFC frames on their way here: `(cycle they act, frame)`.
    pfc_in: VecDeque<(u64, PfcFrame)>,
    rp: ReactionPoint,
    stats: PartnerStats,
}

impl LinkPartner {
    /// A partner whose reaction point has the default parameters (seed 1).
    pub fn new(port: u8, link: Link, d: &Derived) -> Self {
        Self::with_rp(port, link, d, &EcmRpParams::default(), 1)
    }

    /// A partner whose reaction point has parameters `rp` and random stream `(seed, port)`.
    pub fn with_rp(port: u8, link: Link, d: &Derived, rp: &EcmRpParams, seed: u64) -> Self {
        let rate_bps = d.rate_bps[port as usize];
        Self {
            link,
            rate_bps,
            clock_hz: d.clock_hz,
            cell_bytes: d.cfg.cell_bytes,
            packet_overhead: d.cfg.packet_overhead_bytes,
            queues: std::array::from_fn(|_| RunQueue::with_capacity(QUEUE_CAPACITY)),
            nonempty: 0,
            pause_until: [0; 8],
            port_pause_until: 0,
            pauses_end: 0,
            paused_cycles: [0; 8],
            paused_accounted_to: 0,
            rr_next: 0,
            line: PhaseAccumulator::new(rate_bps, d.clock_hz),
            line_at: 0,
            on_wire: None,
            handed: false,
            last_len: LenCost::default(),
            tx: Tx {
                prop_cycles: link.prop_cycles,
                sent_at: u64::MAX,
                held: VecDeque::with_capacity(4),
                in_flight: VecDeque::with_capacity(link.prop_cycles as usize + 2),
                arrives: u64::MAX,
            },
            pfc_in: VecDeque::with_capacity(8),
            rp: ReactionPoint::new(port, rp, d, seed),
            stats: PartnerStats::default(),
        }
    }

    pub fn stats(&self) -> &PartnerStats {
        &self.stats
    }

    /// Queue a packet, or a run of packets, from a source.
    pub fn enqueue(&mut self, run: impl Into<PacketRun>) {
        let run = run.into();
        let prio = run.head().prio;
        self.queues[prio as usize].push(run);
        self.nonempty |= 1 << prio;
    }

    /// Hand over a packet, or a run, in the hand-over phase of a cycle: after the
    /// partner's last step, before this cycle's. [`start_handed`](Self::start_handed) ends
    /// the phase. A single packet reaching an idle line with nothing queued is put on the
    /// line for it, so that a partner given one packet in a cycle starts it without the
    /// class queue's round trip; anything more goes to the class queues in hand-over
    /// order, as [`enqueue`](Self::enqueue) would have put it (the packet put on the line
    /// first).
    #[inline(always)]
    pub fn offer(&mut self, run: PacketRun, d: &Derived) {
        if self.handed {
            self.take_back();
        } else if self.nonempty == 0 && self.on_wire.is_none() {
            if let Some(&h) = run.single() {
                debug_assert!(
                    {
                        let mut idle = self.line;
                        idle.clear();
                        idle == self.line
                    },
                    "a line without a packet keeps no remainder"
                );
                self.put_on_wire(h, d);
                self.handed = true;
                return;
            }
        }
        self.enqueue(run);
    }

    /// The packet [`offer`](Self::offer) put on the line, not started, into its class
    /// queue instead.
    fn take_back(&mut self) {
        self.handed = false;
        let w = self.on_wire.take().expect("offer put a packet on the line");
        self.enqueue(w.beat.hdr);
    }

    /// End of the hand-over phase of cycle `now`, in which this partner was handed
    /// something: start the packet [`offer`](Self::offer)
    /// put on the line, as [`step`](Self::step) would start it in this cycle (the only
    /// packet queued, on an idle line): unless a PFC frame acts in this cycle, the reaction
    /// point is in use or the packet's class is paused, which are the step's to decide (the
    /// packet is queued for it). Returns the cycle the partner must be stepped in for the
    /// packet: `now` if the step has work in this cycle, else the cycle its first beat is
    /// due. Its other events are those of [`next_event`](Self::next_event) at its last
    /// step (an idle line adds none, and an idle reaction point none), so the caller keeps
    /// the earlier of the two.
    #[inline]
    pub fn start_handed(&mut self, now: u64) -> u64 {
        if !self.handed {
            return now;
        }
        let Some(w) = &self.on_wire else {
            unreachable!("offer put a packet on the line")
        };
        let c = w.beat.hdr.prio as usize;
        if self.rp.busy()
            || self.paused_mask(now) & (1 << c) != 0
            || self.pfc_in.front().is_some_and(|&(at, _)| at <= now)
        {
            self.take_back();
            return now;
        }
        self.handed = false;
        // `arbitrate` with this class alone ready, then the step's first clock of the line
        // (an idle line's accumulator is clear, so the first beat is the length's
        // `first_ticks` away, without a division).
        self.rr_next = ((c + 1) % 8) as u8;
        self.line.advance(1);
        self.line_at = now;
        now + self.last_len.first_ticks
    }

    /// A PFC frame the MMU sent toward this partner at `cycle` (after this partner's step
    /// of that cycle); returns the cycle in which the partner must be stepped to act on it.
    pub fn pfc_sent(&mut self, cycle: u64, frame: PfcFrame) -> u64 {
        if frame.paused() != 0 {
            self.stats.pause_frames_sent += 1;
        }
        let at = cycle + self.link.prop_cycles + self.link.proc_cycles;
        self.pfc_in.push_back((at, frame));
        at.max(cycle + 1)
    }

    /// An ECM frame a congestion point sent toward this partner at `cycle` (after this
    /// partner's step of that cycle); returns the cycle in which the partner must be
    /// stepped to act on it.
    pub fn ecm_sent(&mut self, cycle: u64, frame: EcmFrame) -> u64 {
        let at = cycle + self.link.prop_cycles;
        self.rp.ecm_arrives(at, frame);
        at.max(cycle + 1)
    }

    /// The NIC's ECM reaction point.
    pub fn rp(&self) -> &ReactionPoint {
        &self.rp
    }
    /// For the simulator (events) and companion tests.
    pub fn rp_mut(&mut self) -> &mut ReactionPoint {
        &mut self.rp
    }

    /// Whether anything can still happen here without new input: otherwise the simulator
    /// skips this partner until a source or the MMU gives it work.
    pub fn busy(&self) -> bool {
        self.nonempty != 0
            || self.on_wire.is_some()
            || !self.tx.held.is_empty()
            || !self.tx.in_flight.is_empty()
            || !self.pfc_in.is_empty()
            || self.rp.busy()
    }

    /// Packet runs waiting in the class queues: a burst or a message is one however large
    /// it is, and a flow's consecutive packets share one.
    pub fn queued_runs(&self) -> usize {
        self.queues.iter().map(RunQueue::runs).sum()
    }

    /// Beats on the link, not yet seen by the MMU.
    pub fn in_flight(&self) -> usize {
        self.tx.in_flight.len()
    }

    /// Classes paused at `now`, as a bit mask: a class's own pause OR the port-level
    /// pause of DSH (Fig. 9).
    pub fn paused_mask(&self, now: u64) -> u8 {
        if now >= self.pauses_end {
            return 0;
        }
        if now < self.port_pause_until {
            return 0xFF;
        }
        (0..8)
            .filter(|&c| now < self.pause_until[c])
            .fold(0, |m, c| m | (1 << c))
    }

    /// Per class, cycles before `now` in which the class was paused, by its own PFC pause
    /// or by a DSH port-level pause (a class paused both ways counts once). Pause time
    /// runs from the cycle a frame acts here, whether or not the class had anything to send.
    pub fn paused_cycles(&self, now: u64) -> [u64; 8] {
        let mut total = self.paused_cycles;
        let since = self.paused_accounted_to;
        for (c, t) in total.iter_mut().enumerate() {
            // Both pauses hold while `now < until`, so their union holds until the later one.
            let until = self.pause_until[c].max(self.port_pause_until).min(now);
            *t += until.saturating_sub(since);
        }
        total
    }

    /// Whether a packet is being transmitted.
    pub fn transmitting(&self) -> bool {
        self.on_wire.is_some()
    }

    /// Cycles of a pause of `quanta` 512-bit quanta at this link's rate.
    fn pause_cycles(&self, quanta: u16) -> u64 {
        let bits = quanta as u128 * PFC_QUANTUM_BITS as u128;
        (bits * self.clock_hz as u128).div_ceil(self.rate_bps as u128) as u64
    }

    fn apply_pfc(&mut self, now: u64, frame: PfcFrame) {
        self.stats.pfc_frames_rx += 1;
        self.paused_cycles = self.paused_cycles(now);
        self.paused_accounted_to = now;
        self.set_pauses(now, frame);
        let classes = self.pause_until.iter().copied().max().unwrap_or(0);
        self.pauses_end = classes.max(self.port_pause_until);
    }

    fn set_pauses(&mut self, now: u64, frame: PfcFrame) {
        if frame.port_level {
            // Kept apart from the class pauses: a port-level RESUME leaves them in force.
            let q = frame.quanta.iter().copied().max().unwrap_or(0);
            if q == 0 {
                self.port_pause_until = 0;
            } else {
                if now >= self.port_pause_until {
                    self.stats.port_pause_events += 1;
                }
                self.port_pause_until = now + self.pause_cycles(q);
            }
            return;
        }
        for c in 0..8 {
            if frame.class_enable & (1 << c) == 0 {
                continue;
            }
            if frame.quanta[c] == 0 {
                self.pause_until[c] = 0;
                continue;
            }
            if now >= self.pause_until[c] {
                self.stats.pause_events += 1;
            }
            self.pause_until[c] = now + self.pause_cycles(frame.quanta[c]);
        }
    }

    /// Pick the next class to send, honouring pauses.
    fn arbitrate(&mut self, now: u64) -> Option<usize> {
        let ready = self.nonempty & !self.paused_mask(now);
        if ready == 0 {
            return None;
        }
        let c = match self.link.arbitration {
            Arbitration::Strict => 7 - ready.leading_zeros() as usize,
            Arbitration::RoundRobin => {
                let rot = ready.rotate_right(self.rr_next as u32);
                (rot.trailing_zeros() as usize + self.rr_next as usize) % 8
            }
        };
        self.rr_next = ((c + 1) % 8) as u8;
        Some(c)
    }

    /// Start the next packet if one is eligible; an idle line forgets its remainder.
    /// Nothing queued and an idle reaction point (no limiter in use, so none holds a
    /// frame) is the common case between packets, decided here without the search.
    #[inline]
    fn start_next(&mut self, now: u64, d: &Derived) {
        if self.nonempty == 0 && !self.rp.busy() {
            self.line.clear();
            return;
        }
        self.start_queued(now, d);
    }

    /// [`start_next`](Self::start_next) with a packet queued or a reaction point in use.
    ///
    /// Heads of the class queues pass the reaction point's filters: a matched frame moves
    /// to its limiter's FIFO and the search goes on, the first unmatched frame is sent.
    /// Only when no class offers one may a rate limiter send (absolute priority of the
    /// unmatched path, ECM Fig. 7). The filters match by flow, so a matched head moves
    /// with the rest of its run.
    fn start_queued(&mut self, now: u64, d: &Derived) {
        let next = loop {
            let Some(c) = self.arbitrate(now) else {
                // An idle reaction point has no limiter in use, so nothing to send.
                break if self.rp.busy() {
                    self.rp.next_limited(now, self.paused_mask(now))
                } else {
                    None
                };
            };
            let queue = &mut self.queues[c];
            let Some(head) = queue.head() else {
                unreachable!("the nonempty mask tracks the queues")
            };
            let sent = match self.rp.classify(head) {
                None => queue.take(),
                Some(i) => {
                    self.rp.divert_from(now, i, queue);
                    None
                }
            };
            if queue.is_empty() {
                self.nonempty &= !(1 << c);
            }
            if sent.is_some() {
                break sent;
            }
        };
        let Some(hdr) = next else {
            self.line.clear();
            return;
        };
        self.put_on_wire(hdr, d);
    }

    /// Put packet `hdr` on the line.
    #[inline]
    fn put_on_wire(&mut self, hdr: PacketHdr, d: &Derived) {
        if hdr.len != self.last_len.len || self.last_len.ncells == 0 {
            self.last_len = self.len_cost(hdr.len, d);
        }
        let c = self.last_len;
        self.on_wire = Some(OnWire {
            beat: Beat {
                hdr,
                idx: 0,
                ncells: c.ncells,
            },
            wire_bits: c.wire_bits,
            due_bits: c.first_due,
        });
    }

    /// What a packet of `len` bytes costs on this line.
    fn len_cost(&self, len: u16, d: &Derived) -> LenCost {
        let w = OnWire {
            beat: Beat {
                hdr: PacketHdr {
                    len,
                    ..PacketHdr::default()
                },
                idx: 0,
                ncells: d.cells_for(len as u32) as u16,
            },
            wire_bits: d.wire_bits(len as u32),
            due_bits: 0,
        };
        let first_due = w.next_due(self.cell_bytes, self.packet_overhead);
        LenCost {
            len,
            ncells: w.beat.ncells,
            wire_bits: w.wire_bits,
            first_due,
            // `ticks_until` after one clock of a clear accumulator.
            first_ticks: self.line.cycles_for(first_due).saturating_sub(1),
        }
    }

    /// The first cycle after `now` in which a class that holds a packet, or the priority of
    /// a limiter that holds one, is not paused (a class is paused by its own pause or by
    /// the port-level one, whichever ends later); `u64::MAX` if none holds a packet.
    fn unpaused_after(&self, now: u64, waiting: u8) -> u64 {
        let mut t = u64::MAX;
        let mut m = waiting;
        while m != 0 {
            let c = m.trailing_zeros() as usize;
            m &= m - 1;
            t = t.min(self.pause_until[c].max(self.port_pause_until));
        }
        t.max(now + 1)
    }

    /// The first cycle after `now`, the cycle of the last [`step`](Self::step), in which
    /// `step` has work without new input; `u64::MAX` if none. New input (a packet queued, a
    /// PFC or ECM frame sent toward this partner) may bring it forward.
    ///
    /// Inlined into the simulator's loop: a line that is busy or idle with nothing queued
    /// and an idle reaction point (every partner of a loaded switch, nearly always) costs no
    /// call; pauses and limiters are `waiting_event`'s.
    #[inline(always)]
    pub fn next_event(&self, now: u64) -> u64 {
        if !self.tx.held.is_empty() {
            return now + 1;
        }
        let mut t = self.tx.arrives;
        if let Some(&(at, _)) = self.pfc_in.front() {
            t = t.min(at);
        }
        if let Some(w) = &self.on_wire {
            t = t.min(now + self.line.ticks_until(w.due_bits));
        }
        if self.rp.busy() || (self.on_wire.is_none() && self.nonempty != 0) {
            t = t.min(self.waiting_event(now));
        }
        t.max(now + 1)
    }

    /// [`next_event`](Self::next_event)'s part for a busy reaction point (its timers and
    /// frames) and, with no packet on the wire, for packets held by pauses or limiters.
    fn waiting_event(&self, now: u64) -> u64 {
        let mut t = if self.rp.busy() {
            self.rp.next_event()
        } else {
            u64::MAX
        };
        if self.on_wire.is_none() {
            // Every class with a packet is paused (or `step` would have started one).
            if self.nonempty != 0 {
                t = t.min(self.unpaused_after(now, self.nonempty));
            }
            if self.rp.queued_frames() {
                t = t.min(
                    self.rp
                        .next_send(now, |prio| self.unpaused_after(now, 1 << prio)),
                );
            }
        }
        t
    }

    /// Clock cycle `now`. `inject` sees each beat as it leaves onto the link; the beat that
    /// reaches the MMU this cycle, if any, is returned. The cycles since the last step must
    /// hold no event ([`next_event`](Self::next_event)).
    pub fn step(&mut self, now: u64, d: &Derived, inject: impl FnMut(&Beat)) -> Option<Beat> {
        let mut arrived = None;
        self.step_into(now, d, inject, &mut arrived);
        arrived
    }

    /// [`step`](Self::step) with the beat that reaches the MMU copied from the link
    /// straight into `arrived` (the simulator's ingress slot of this port); returns whether
    /// one did (`arrived` is left as it was otherwise).
    #[inline(always)]
    pub fn step_into(
        &mut self,
        now: u64,
        d: &Derived,
        mut inject: impl FnMut(&Beat),
        arrived: &mut Option<Beat>,
    ) -> bool {
        debug_assert!(!self.handed, "a step inside the hand-over phase");
        while let Some(&(at, frame)) = self.pfc_in.front() {
            if at > now {
                break;
            }
            self.pfc_in.pop_front();
            self.apply_pfc(now, frame);
        }
        if self.rp.busy() {
            self.rp.tick(now);
        }
        // The line is clocked in every cycle with a packet on the wire, the packet's first
        // cycle included.
        let ticks = if self.on_wire.is_some() {
            now - self.line_at
        } else {
            self.start_next(now, d);
            1
        };
        if self.on_wire.is_some() {
            self.line.advance(ticks);
            self.line_at = now;
        }
        // The packet is read and advanced where it is (the transmit side is a field apart).
        while let Some(w) = &mut self.on_wire {
            // `due_bits` is the packet's wire bits once every beat left: not reached, nothing
            // leaves and the packet is not done (the common case).
            if !self.line.reached(w.due_bits) {
                break;
            }
            while w.beat.idx < w.beat.ncells && self.line.reached(w.due_bits) {
                self.tx.emit(now, &w.beat, &mut inject);
                w.beat.idx += 1;
                w.due_bits = w.next_due(self.cell_bytes, self.packet_overhead);
            }
            if w.beat.idx < w.beat.ncells || !self.line.reached(w.wire_bits) {
                break;
            }
            // Packet done: keep the remainder for a back-to-back packet.
            self.line.consume(w.wire_bits);
            self.on_wire = None;
            self.stats.packets_sent += 1;
            self.start_next(now, d);
        }
        if self.tx.sent_at != now {
            if let Some(b) = self.tx.held.pop_front() {
                self.tx.send(now, &b, &mut inject);
            }
        }
        self.tx.arrival(now, arrived)
    }
}

impl OnWire {
    /// Bits of the packet that must be on the wire before beat `beat.idx` is complete, or
    /// the packet's wire bits once every beat left; cells of `cell_bytes`, of which the
    /// first `packet_overhead` bytes are not the packet's.
    fn next_due(&self, cell_bytes: u32, packet_overhead: u32) -> u64 {
        let (b, len) = (&self.beat, self.beat.hdr.len as u64);
        if b.idx >= b.ncells {
            self.wire_bits
        } else if b.idx + 1 == b.ncells {
            len * 8
        } else {
            let end = (b.idx as u64 + 1) * cell_bytes as u64;
            end.saturating_sub(packet_overhead as u64).min(len) * 8
        }
    }
}

/// The transmit side of the link: beats leave onto it one per cycle and reach the MMU
/// `prop_cycles` later.
#[derive(Debug, Clone)]
struct Tx {
    prop_cycles: u64,
    /// The last cycle a beat left onto the link (`u64::MAX` before the first: no cycle).
    sent_at: u64,
    /// Beats due on the wire but not yet sent (one leaves per cycle).
    held: VecDeque<Beat>,
    /// Beats on the link: `(cycle the MMU sees it, beat)`.
    in_flight: VecDeque<(u64, Beat)>,
    /// The cycle the MMU sees the first beat of `in_flight` (`u64::MAX`: none), kept as
    /// beats are sent and arrive: the partner's step and its next event test it.
    arrives: u64,
}

impl Tx {
    /// Beat `beat` is due on the link in cycle `now`: it leaves at once unless a beat
    /// already left in this cycle or waits before it.
    #[inline]
    fn emit(&mut self, now: u64, beat: &Beat, inject: &mut impl FnMut(&Beat)) {
        if self.sent_at == now || !self.held.is_empty() {
            self.held.push_back(*beat);
        } else {
            self.send(now, beat, inject);
        }
    }

    #[inline]
    fn send(&mut self, now: u64, beat: &Beat, inject: &mut impl FnMut(&Beat)) {
        inject(beat);
        self.sent_at = now;
        let at = now + self.prop_cycles;
        self.in_flight.push_back((at, *beat));
        // Beats reach the MMU in the order they left: only a first one moves `arrives`.
        self.arrives = self.arrives.min(at);
    }

    /// The beat on the link that reaches the MMU at `now`, copied into `arrived`; returns
    /// whether one did.
    #[inline]
    fn arrival(&mut self, now: u64, arrived: &mut Option<Beat>) -> bool {
        if self.arrives > now {
            return false;
        }
        let Some(&(_, b)) = self.in_flight.front() else {
            unreachable!("a finite arrival time has a beat on the link")
        };
        *arrived = Some(b);
        self.in_flight.pop_front();
        self.arrives = self.in_flight.front().map_or(u64::MAX, |&(at, _)| at);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw_model::SwitchConfig;

    /// A zero-delay round-robin link.
    fn instant_link() -> Link {
        Link {
            prop_cycles: 0,
            proc_cycles: 0,
            arbitration: Arbitration::RoundRobin,
        }
    }

    #[test]
    fn round_robin_rotates_over_ready_classes() {
        let d = SwitchConfig::small().build().unwrap();
        let mut p = LinkPartner::new(0, instant_link(), &d);
        p.nonempty = 0b1001_0010;
        let picks: Vec<_> = (0..4).map(|_| p.arbitrate(0).unwrap()).collect();
        assert_eq!(picks, [1, 4, 7, 1]);
        p.link.arbitration = Arbitration::Strict;
        assert_eq!(p.arbitrate(0), Some(7));
    }

    /// A partner handed packets through `offer` and `start_handed` and stepped only in the
    /// cycles it asks for sends the same beats in the same cycles as one given them by
    /// `enqueue` and stepped every cycle: a single packet on an idle line, two classes in one
    /// cycle (the arbiter's pick, not the first handed), a packet behind one on the wire, a
    /// class paused by a frame acting in the cycle of the hand-over, a 1500 B packet.
    #[test]
    fn a_handed_packet_starts_as_the_step_would_start_it() {
        let d = SwitchConfig::small().build().unwrap();
        // (cycle, prio, len): hand-overs.
        let plan = [
            (0, 1, 64),
            (40, 1, 64),
            (40, 5, 200),
            (41, 2, 64),
            (90, 3, 1500),
            (91, 4, 64),
            (400, 0, 64),
        ];
        let pause_3 = {
            let mut f = PfcFrame {
                class_enable: 1 << 3,
                ..PfcFrame::default()
            };
            f.quanta[3] = 20;
            f
        };
        for arbitration in [Arbitration::Strict, Arbitration::RoundRobin] {
            let link = Link {
                prop_cycles: 3,
                proc_cycles: 0,
                arbitration,
            };
            let mut every = LinkPartner::new(0, link, &d);
            let mut handed = LinkPartner::new(0, link, &d);
            let (mut seen_every, mut seen_handed) = (Vec::new(), Vec::new());
            let (mut wake, mut steps) = (u64::MAX, 0);
            for now in 0..1000u64 {
                for (i, &(_, prio, len)) in plan.iter().enumerate().filter(|p| p.1 .0 == now) {
                    let hdr = PacketHdr {
                        flow: i as u32,
                        seq: 0,
                        src: 0,
                        dst: 1,
                        prio,
                        len,
                        tuple: hw_model::FiveTuple::for_flow(i as u32, 0, 1, 0),
                        cm_tag: None,
                        ecn: hw_model::Ecn::NotEct,
                    };
                    every.enqueue(hdr);
                    handed.offer(hdr.into(), &d);
                }
                if plan.iter().any(|p| p.0 == now) {
                    wake = wake.min(handed.start_handed(now));
                }
                let log = |seen: &mut Vec<_>, p: &mut LinkPartner| {
                    let out = p.step(now, &d, |b| seen.push((now, "inject", b.hdr.flow, b.idx)));
                    if let Some(b) = out {
                        seen.push((now, "deliver", b.hdr.flow, b.idx));
                    }
                };
                log(&mut seen_every, &mut every);
                if wake <= now {
                    log(&mut seen_handed, &mut handed);
                    wake = handed.next_event(now);
                    steps += 1;
                }
                if now == 87 {
                    every.pfc_sent(now, pause_3);
                    wake = wake.min(handed.pfc_sent(now, pause_3));
                }
            }
            assert_eq!(seen_handed, seen_every, "{arbitration:?}");
            assert_eq!(handed.stats(), every.stats());
            assert_eq!(every.stats().packets_sent, plan.len() as u64);
            assert!(
                steps < 200,
                "{steps} steps: the handed packets started without one"
            );
            if arbitration == Arbitration::Strict {
                let first_after_40 = seen_every.iter().find(|s| s.0 >= 40).unwrap();
                assert_eq!(first_after_40.2, 2, "class 5 first, though handed second");
            }
        }
    }

    /// A handed packet's first beat is timed from a clear accumulator (`first_ticks`): a
    /// line left with a remainder while no packet is on it is caught when one is put on it.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a line without a packet keeps no remainder")]
    fn an_idle_line_with_a_remainder_is_caught() {
        let d = SwitchConfig::small().build().unwrap();
        let mut p = LinkPartner::new(0, instant_link(), &d);
        p.line.advance(1);
        let hdr = PacketHdr {
            len: 64,
            ..PacketHdr::default()
        };
        p.offer(hdr.into(), &d);
    }

    #[test]
    fn paused_cycles_count_resumes_and_port_pauses_once() {
        let d = SwitchConfig::small().build().unwrap();
        let mut p = LinkPartner::new(0, instant_link(), &d);
        let class = |quanta: u16, port_level: bool| {
            let mut f = PfcFrame {
                class_enable: 1 << 3,
                port_level,
                ..PfcFrame::default()
            };
            f.quanta[3] = quanta;
            f
        };
        p.apply_pfc(10, class(0xFFFF, false));
        p.apply_pfc(50, class(0, false));
        assert_eq!(p.paused_cycles(100)[3], 40, "cut short by the RESUME");
        // 10 quanta at 100G = 51.2 ns = 52 cycles at 1 GHz, over every class.
        p.apply_pfc(60, class(0xFFFF, false));
        p.apply_pfc(70, class(10, true));
        let t = p.paused_cycles(1000);
        assert_eq!(t[0], 52);
        assert_eq!(
            t[3],
            40 + 1000 - 60,
            "class pause still running, port pause inside it"
        );
    }
}
