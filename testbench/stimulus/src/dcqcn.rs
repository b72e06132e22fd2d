//! DCQCN senders and receivers (Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015, section 3): a rate-based RoCEv2 flow,
//! `pattern = { dcqcn = { ... } }`, whose NICs run the paper's notification point (NP) and
//! reaction point (RP); the switch's congestion point is the ECN marker
//! (`hw_model::ecn_marker`, docs/ecn.md).
//!
//! - **NP** (receiver NIC, behind the flow's egress port): a packet is received when its last
//!   cell departs the switch. On a CE-marked arrival the NP sends a CNP to the sender unless it
//!   sent one for the flow in the last `N` (section 3.2: "at most one CNP every N
//!   microseconds" per flow). The CNP reaches the RP `cnp_delay_us` later, the same
//!   no-reverse-path model as `crate::tcp`'s ACKs.
//! - **RP** (sender NIC, [`Rp`]): the packets leave ECT(0), paced at the current rate `R_C`
//!   in wire bits (preamble and gap included, as `crate::source` counts rates). The send
//!   times are kept in fractional cycles, each one the previous one plus the wire time at
//!   `R_C`, and a packet leaves in the first whole cycle at or after its time: the gaps are
//!   whole cycles, but their fractions carry over, so the long-run rate is `R_C` (1000 B at
//!   100 Gb/s and 1 GHz: gaps of 81 and 82 cycles, 81.6 on average). Section 3.1's
//!   Algorithm, per flow:
//!   - on a CNP: `R_T = R_C`, `R_C = R_C (1 - alpha/2)` (Eq. 1, not below `min_rate`),
//!     `alpha = (1 - g) alpha + g` (Eq. 2), and the alpha timer, rate timer, byte counter and
//!     both stage counters restart;
//!   - every `K` without a CNP: `alpha = (1 - g) alpha` (Eq. 3);
//!   - a rate-increase event each time the timer `T` expires (stage count `T_c`) and each
//!     time `B` bytes have been sent (`BC`). With `F` the fast-recovery steps: if
//!     `max(T_c, BC) <= F`, fast recovery (`R_C = (R_T + R_C) / 2`, Eq. 4); else if
//!     `min(T_c, BC) > F`, hyper increase (`R_T += i R_HAI` with `i = min(T_c, BC) - F`,
//!     then Eq. 4); else additive increase (`R_T += R_AI`, then Eq. 4). `R_T` and `R_C` are
//!     capped at the line rate.
//!
//!   A flow starts at line rate (the paper has no slow start) with `alpha = 1`; the timers
//!   and the byte counter run from its first CNP (before it the rate cannot rise).
//!
//! A flow is long-lived (it sends from `start_cycle` to `stop_cycle`), or, with
//! `message_cdf`, a source of Poisson messages ([`MessageGen`]): messages arrive as those of
//! a `poisson` flow (the same arrival process and size draw, `crate::source`) until
//! `stop_cycle`, wait in the NIC in arrival order, and the RP paces their packets (each
//! message cut into `size_bytes` packets, the last one shorter, at least 64 B). A message
//! that finds the flow idle (nothing queued) starts a fresh RP, at line rate with
//! `alpha = 1` and no timer, as a new queue pair does in an RDMA NIC (ns-3's RDMA NIC
//! gives each message its own queue pair); a message that arrives while others wait joins
//! them at the current rate. The NP's CNP interval `N` is per flow. Their completion is
//! tracked as a `poisson` flow's (`Sim::messages`).
//!
//! The state is kept in `f64` (bits per second): this is the testbench's NIC, not the
//! switch's hardware; the waveform shows it integer-scaled ([`DcqcnReg`]). Event-driven
//! like `crate::tcp`: sends, CNP arrivals and the two timers wait in one binary heap; a
//! timer restarted by a CNP leaves a stale event that is skipped.

use crate::rdma_nic::RdmaNics;
use crate::source::{draw_linear, linear_cdf_mean, unit, MessageCounts, MessageStats, Messages};
use crate::timeline::{FlowIndex, Timeline};
use hw_model::{Departure, Derived, Ecn, FiveTuple, PacketHdr};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use scenario::params::DcqcnParams;
use scenario::{Flow, MessageLoad, Pattern, QpMode, SizeDist, MIN_PACKET_BYTES};
use std::collections::VecDeque;

/// The reaction point of one flow (module doc): rates in b/s, times in cycles.
#[derive(Debug, Clone)]
pub struct Rp {
    p: DcqcnParams,
    /// `R_C`, `R_T`.
    pub rc: f64,
    pub rt: f64,
    pub alpha: f64,
    /// Rate-increase events of the timer and of the byte counter since the last CNP.
    t_count: u32,
    bc_count: u32,
    /// Bytes sent since the byte counter last fired or the last CNP.
    bytes: u64,
    pub cnps: u64,
    /// CNPs that lowered `R_C` (one at `min_rate` does not).
    pub cuts: u64,
}

impl Rp {
    pub fn new(p: DcqcnParams) -> Self {
        Self {
            p,
            rc: p.line_bps as f64,
            rt: p.line_bps as f64,
            alpha: 1.0,
            t_count: 0,
            bc_count: 0,
            bytes: 0,
            cnps: 0,
            cuts: 0,
        }
    }

    /// A new queue pair: line rate, `alpha = 1`, no increase state; the counters stay.
    pub fn restart(&mut self) {
        *self = Self {
            cnps: self.cnps,
            cuts: self.cuts,
            ..Self::new(self.p)
        };
    }

    /// A CNP arrives: Eq. 1 and 2, and the increase state restarts.
    pub fn on_cnp(&mut self) {
        self.cnps += 1;
        self.rt = self.rc;
        cut(&mut self.rc, &mut self.cuts, self.alpha, &self.p);
        self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
        self.t_count = 0;
        self.bc_count = 0;
        self.bytes = 0;
    }

    /// `K` passed without a CNP: Eq. 3.
    pub fn on_alpha_timer(&mut self) {
        self.alpha *= 1.0 - self.p.g;
    }

    /// The rate timer `T` expired.
    pub fn on_rate_timer(&mut self) {
        self.t_count += 1;
        self.increase();
    }

    /// `len` bytes went out: the byte counter `B`. Whether it fired (a rate-increase
    /// event: the registers of [`DcqcnReg`] may have changed).
    pub fn on_sent(&mut self, len: u64) -> bool {
        self.bytes += len;
        let fired = self.bytes >= self.p.b_bytes;
        if fired {
            self.bytes -= self.p.b_bytes;
            self.bc_count += 1;
            self.increase();
        }
        fired
    }

    /// One rate-increase event: fast recovery, additive or hyper increase, then Eq. 4.
    fn increase(&mut self) {
        let (hi, lo) = (
            self.t_count.max(self.bc_count),
            self.t_count.min(self.bc_count),
        );
        let f = self.p.f;
        if lo > f {
            self.rt += (lo - f) as f64 * self.p.r_hai_bps as f64;
        } else if hi > f {
            self.rt += self.p.r_ai_bps as f64;
        }
        let line = self.p.line_bps as f64;
        self.rt = self.rt.min(line);
        self.rc = ((self.rt + self.rc) / 2.0).min(line);
    }
}

/// Eq. 1: `R_C = R_C (1 - alpha/2)`, not below `min_rate`; `cuts` counts the decreases that
/// lowered it (one at `min_rate` does not).
pub(crate) fn cut(rc: &mut f64, cuts: &mut u64, alpha: f64, p: &DcqcnParams) {
    let new = (*rc * (1.0 - alpha / 2.0)).max(p.min_rate_bps as f64);
    if new < *rc {
        *cuts += 1;
    }
    *rc = new;
}

/// A reaction-point register of a DCQCN flow in the waveform,
/// `top.nic.pNN.dcqcn.fFFF.<name>` (NIC of the flow's source port, flow id), as integers:
/// the NIC's state is `f64` (module doc), so the rates are rounded to Mb/s and `alpha` to
/// UQ0.16 (`alpha * 2^16`, 65536 = 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DcqcnReg {
    /// `R_C`, Mb/s.
    Rc,
    /// `R_T`, Mb/s.
    Rt,
    /// `alpha * 2^16`.
    Alpha,
    /// Rate-increase events of the timer `T` since the last CNP (`T_c`).
    TCount,
    /// Rate-increase events of the byte counter `B` since the last CNP (`BC`).
    BcCount,
    /// CNPs the RP received.
    Cnps,
}

impl DcqcnReg {
    pub const ALL: [DcqcnReg; 6] = [
        Self::Rc,
        Self::Rt,
        Self::Alpha,
        Self::TCount,
        Self::BcCount,
        Self::Cnps,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Rc => "rc_mbps",
            Self::Rt => "rt_mbps",
            Self::Alpha => "alpha_q16",
            Self::TCount => "t_count",
            Self::BcCount => "bc_count",
            Self::Cnps => "cnps",
        }
    }

    /// Bits in the waveform.
    pub fn width(self) -> u32 {
        match self {
            Self::Alpha => 17,
            Self::Cnps => 48,
            Self::Rc | Self::Rt | Self::TCount | Self::BcCount => 32,
        }
    }

    /// The register of `rp`, integer-scaled.
    fn value(self, rp: &Rp) -> u64 {
        match self {
            Self::Rc => (rp.rc / 1e6).round() as u64,
            Self::Rt => (rp.rt / 1e6).round() as u64,
            Self::Alpha => (rp.alpha * 65536.0).round() as u64,
            Self::TCount => rp.t_count as u64,
            Self::BcCount => rp.bc_count as u64,
            Self::Cnps => rp.cnps,
        }
    }
}

/// Results of one DCQCN flow.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DcqcnStats {
    pub flow: u32,
    pub packets_sent: u64,
    /// Bytes whose packets left the switch toward the receiver.
    pub bytes_delivered: u64,
    /// CNPs the NP sent and the RP received (those still on their way are the difference).
    pub cnps_sent: u64,
    pub cnps_received: u64,
    /// CNPs that lowered the rate.
    pub rate_cuts: u64,
    /// `R_C`, `R_T` (Gb/s) and `alpha` at the end.
    pub rate_gbps: f64,
    pub target_gbps: f64,
    pub alpha: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Send,
    /// A message of a message flow arrives at the NIC.
    Message,
    Cnp,
    /// A timer's deadline as it stood when queued (stale if the timer restarted since).
    AlphaTimer(u64),
    RateTimer(u64),
}

/// The Poisson messages of a flow with `message_cdf` (module doc).
#[derive(Debug, Clone)]
pub struct MessageGen {
    /// The flow's random stream `(seed, flow id)`, as a `poisson` flow's.
    rng: ChaCha8Rng,
    cdf: Vec<(u64, f64)>,
    /// Mean inter-arrival, cycles, and the next arrival in fractional cycles.
    mean_gap: f64,
    next_arrival: f64,
    /// Bytes still to send of the queued messages, oldest first.
    queued: VecDeque<u64>,
    /// `seq` of the first packet of the next message to arrive.
    next_first_seq: u32,
}

impl MessageGen {
    pub(crate) fn new(load: &MessageLoad, id: u32, start: u64, seed: u64, clock_hz: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(id as u64);
        let mean_gap =
            linear_cdf_mean(&load.message_cdf) * 8.0 * clock_hz as f64 / load.rate_bps as f64;
        let mut g = Self {
            rng,
            cdf: load.message_cdf.clone(),
            mean_gap,
            next_arrival: start as f64,
            queued: VecDeque::new(),
            next_first_seq: 0,
        };
        g.next_arrival += g.gap();
        g
    }

    /// An exponential inter-arrival gap, cycles.
    fn gap(&mut self) -> f64 {
        -(1.0 - unit(&mut self.rng)).ln() * self.mean_gap
    }

    /// The next arrival, fractional cycles.
    pub(crate) fn next_arrival(&self) -> f64 {
        self.next_arrival
    }

    /// The message arriving at `now`: its size, bytes; the next arrival is drawn.
    pub(crate) fn draw(&mut self, now: u64) -> u64 {
        let bytes = draw_linear(&self.cdf, unit(&mut self.rng));
        self.next_arrival = self.next_arrival.max(now as f64) + self.gap();
        bytes
    }

    /// The length of the next packet (`mtu` at most, the message's last one at least 64 B),
    /// taken from the oldest queued message; `None` when nothing is queued.
    fn take_packet(&mut self, mtu: u32) -> Option<u32> {
        let left = self.queued.front_mut()?;
        let len = (*left).min(mtu as u64);
        *left -= len;
        if *left == 0 {
            self.queued.pop_front();
        }
        Some((len as u32).max(MIN_PACKET_BYTES))
    }
}

#[derive(Debug, Clone)]
struct DcqcnFlow {
    id: u32,
    src: u8,
    dst: u8,
    prio: u8,
    tuple: FiveTuple,
    len: u32,
    stop_cycle: u64,
    rp: Rp,
    /// `Some` for a flow of messages.
    messages: Option<MessageGen>,
    /// A `Send` event is pending (a message flow with nothing queued has none).
    sending: bool,
    /// Next send time in fractional cycles (the packet leaves in the cycle it rounds up to).
    next_send: f64,
    next_seq: u32,
    /// Deadlines of the running alpha and rate timers (`None` before the first CNP).
    alpha_deadline: Option<u64>,
    rate_deadline: Option<u64>,
    k: u64,
    t: u64,
    n: u64,
    cnp_delay: u64,
    /// NP: when it last sent a CNP.
    last_cnp: Option<u64>,
    packets_sent: u64,
    bytes_delivered: u64,
    cnps_sent: u64,
}

/// All DCQCN flows of a run and their pending events.
#[derive(Debug, Clone)]
pub struct DcqcnFlows {
    flows: Vec<DcqcnFlow>,
    /// Per scenario flow id, its index in `flows` (DCQCN flows only).
    index: FlowIndex,
    /// `(cycle, insertion order, flow index, event)`, as in `crate::tcp`.
    events: Timeline<Event>,
    clock_hz: u64,
    /// `Derived::wire_bits` adds this to a packet's length.
    wire_overhead_bytes: u32,
    /// Completion of the message flows' messages.
    done: Messages,
    /// Bit `i`: an event of cycle `touched_at` changed (or may have changed) a register of
    /// flow `i`'s reaction point ([`touched`](Self::touched)).
    touched: Vec<u64>,
    touched_at: u64,
    /// The flows with a queue pair per message.
    nics: RdmaNics,
}

impl DcqcnFlows {
    /// The DCQCN flows among `flows` (the others are left to their own generators); `seed`
    /// is the run's, for the message arrivals.
    pub fn new(flows: &[Flow], seed: u64, d: &Derived) -> Self {
        let cyc = |ns: u64| scenario::ns_to_cycles(ns, d.clock_hz);
        let mut t = Self {
            flows: Vec::new(),
            index: FlowIndex::new(flows.len()),
            events: Timeline::new(),
            clock_hz: d.clock_hz,
            wire_overhead_bytes: d.cfg.wire_overhead_bytes,
            done: Messages::new(
                flows.len(),
                flows
                    .iter()
                    .any(|f| matches!(&f.pattern, Pattern::Dcqcn(p) if p.messages.is_some() && p.qp == QpMode::Pair)),
            ),
            touched: Vec::new(),
            touched_at: u64::MAX,
            nics: RdmaNics::new(flows, seed, d),
        };
        for f in flows {
            let (Pattern::Dcqcn(plan), SizeDist::Fixed(len)) = (&f.pattern, &f.size) else {
                continue;
            };
            if plan.qp == QpMode::Message {
                continue;
            }
            let (p, i) = (plan.rp, t.flows.len() as u32);
            t.index.set(f.id, i);
            let messages = plan
                .messages
                .as_ref()
                .map(|m| MessageGen::new(m, f.id, f.start_cycle, seed, d.clock_hz));
            match &messages {
                Some(m) => t.push_arrival(m.next_arrival, f.stop_cycle, i),
                None => t.push(f.start_cycle, i, Event::Send),
            }
            t.flows.push(DcqcnFlow {
                id: f.id,
                src: f.src,
                dst: f.dst,
                prio: f.prio,
                tuple: f.five_tuple(FiveTuple::UDP),
                len: *len,
                stop_cycle: f.stop_cycle,
                rp: Rp::new(p),
                sending: messages.is_none(),
                messages,
                next_send: f.start_cycle as f64,
                next_seq: 0,
                alpha_deadline: None,
                rate_deadline: None,
                k: cyc(p.k_ns).max(1),
                t: cyc(p.t_ns).max(1),
                n: cyc(p.n_ns),
                cnp_delay: cyc(p.cnp_delay_ns),
                last_cnp: None,
                packets_sent: 0,
                bytes_delivered: 0,
                cnps_sent: 0,
            });
        }
        t.touched = vec![0; t.flows.len().div_ceil(64)];
        t
    }

    fn push(&mut self, at: u64, i: u32, ev: Event) {
        self.events.push(at, i, ev);
    }

    /// The next message arrival of flow `i`, at fractional cycle `at`, unless it is at or
    /// after `stop`.
    fn push_arrival(&mut self, at: f64, stop: u64, i: u32) {
        let at = at.ceil() as u64;
        if at < stop {
            self.push(at, i, Event::Message);
        }
    }

    /// The cycle of the next send, CNP or timer, `u64::MAX` if none is pending.
    pub fn next_time(&self) -> u64 {
        self.events.next_time().min(self.nics.next_time())
    }

    /// Whether the plan has no DCQCN flow (nothing here ever has work).
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty() && self.nics.is_empty()
    }

    /// Process the sends, message arrivals, CNPs and timers due at `now`, handing packets
    /// to `out`.
    pub fn fire_due(&mut self, now: u64, mut out: impl FnMut(PacketHdr)) {
        self.nics.fire_due(now, &mut out);
        while let Some((_, i, ev)) = self.events.pop_due(now) {
            let clock = self.clock_hz as f64;
            let f = &mut self.flows[i as usize];
            let mut next = [None; 2];
            // Whether the event changed a register of the RP (`DcqcnReg`).
            let changed = match ev {
                Event::Send => {
                    let len = match &mut f.messages {
                        Some(m) => m.take_packet(f.len),
                        None => (now < f.stop_cycle).then_some(f.len),
                    };
                    let Some(len) = len else {
                        f.sending = false;
                        continue;
                    };
                    out(PacketHdr {
                        flow: f.id,
                        seq: f.next_seq,
                        src: f.src,
                        dst: f.dst,
                        prio: f.prio,
                        len: len as u16,
                        tuple: f.tuple,
                        cm_tag: None,
                        ecn: Ecn::Ect0,
                    });
                    f.next_seq = f.next_seq.wrapping_add(1);
                    f.packets_sent += 1;
                    let fired = f.rate_deadline.is_some() && f.rp.on_sent(len as u64);
                    let bits = (len + self.wire_overhead_bytes) as f64 * 8.0;
                    // From this packet's own time, not `now` (less than a cycle later): the
                    // fraction carries over. It lags `now` by a cycle or more only if the gaps
                    // are under a cycle (one send per cycle at most): a lag of one is kept.
                    f.next_send = f.next_send.max(now as f64 - 1.0) + bits * clock / f.rp.rc;
                    next[0] = Some(((f.next_send.ceil() as u64).max(now + 1), Event::Send));
                    fired
                }
                Event::Message => {
                    let m = f
                        .messages
                        .as_mut()
                        .expect("only message flows get arrivals");
                    let bytes = m.draw(now);
                    let packets = bytes.div_ceil(f.len as u64) as u32;
                    self.done.arrived(MessageStats::arrived(
                        f.id,
                        bytes,
                        packets,
                        m.next_first_seq,
                        now,
                    ));
                    m.next_first_seq = m.next_first_seq.wrapping_add(packets);
                    m.queued.push_back(bytes);
                    let (at, stop) = (m.next_arrival, f.stop_cycle);
                    let idle = !f.sending;
                    if idle {
                        // An idle flow: a new queue pair, a fresh RP (module doc).
                        f.sending = true;
                        f.rp.restart();
                        f.alpha_deadline = None;
                        f.rate_deadline = None;
                        f.next_send = now as f64;
                        next[0] = Some((now, Event::Send));
                    }
                    self.push_arrival(at, stop, i);
                    idle
                }
                Event::Cnp => {
                    f.rp.on_cnp();
                    let (a, r) = (now + f.k, now + f.t);
                    f.alpha_deadline = Some(a);
                    f.rate_deadline = Some(r);
                    next = [
                        Some((a, Event::AlphaTimer(a))),
                        Some((r, Event::RateTimer(r))),
                    ];
                    true
                }
                Event::AlphaTimer(d) if f.alpha_deadline == Some(d) => {
                    f.rp.on_alpha_timer();
                    f.alpha_deadline = Some(d + f.k);
                    next[0] = Some((d + f.k, Event::AlphaTimer(d + f.k)));
                    true
                }
                Event::RateTimer(d) if f.rate_deadline == Some(d) => {
                    f.rp.on_rate_timer();
                    f.rate_deadline = Some(d + f.t);
                    next[0] = Some((d + f.t, Event::RateTimer(d + f.t)));
                    true
                }
                Event::AlphaTimer(_) | Event::RateTimer(_) => false,
            };
            if changed {
                self.touch(now, i as usize);
            }
            for (at, ev) in next.into_iter().flatten() {
                self.push(at, i, ev);
            }
        }
    }

    /// Note that an event of cycle `now` changed a register of flow `i`'s RP.
    fn touch(&mut self, now: u64, i: usize) {
        if self.touched_at != now {
            self.touched_at = now;
            self.touched.fill(0);
        }
        self.touched[i / 64] |= 1 << (i % 64);
    }

    /// The flows (in flow order, the index of [`reg`](Self::reg)) whose RP registers the
    /// events of cycle `cycle` changed: the only registers that can differ from their values
    /// after the previous cycle, as they change only in [`fire_due`](Self::fire_due) (the
    /// waveform, sampled after every cycle the simulator clocks, compares only these).
    /// Empty unless `cycle` is the last cycle `fire_due` changed a register in.
    pub fn touched(&self, cycle: u64) -> impl Iterator<Item = usize> + '_ {
        let words = if cycle == self.touched_at {
            &self.touched[..]
        } else {
            &[]
        };
        words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    w * 64 + b
                })
            })
        })
    }

    /// The NPs take the packets whose last cell departed at `now`: a CE mark sends a CNP
    /// unless the flow had one in the last `N`.
    pub fn departed(&mut self, now: u64, departures: &[Departure]) {
        if !self.nics.is_empty() {
            self.nics.departed(now, departures);
        }
        if self.flows.is_empty() {
            return;
        }
        self.done.departed_all(now, departures);
        for dep in departures {
            let Some(i) = self.index.completed(dep) else {
                continue;
            };
            let f = &mut self.flows[i as usize];
            f.bytes_delivered += dep.beat.hdr.len as u64;
            if dep.beat.hdr.ecn != Ecn::Ce || f.last_cnp.is_some_and(|l| now < l + f.n) {
                continue;
            }
            f.last_cnp = Some(now);
            f.cnps_sent += 1;
            let at = now + f.cnp_delay;
            self.push(at, i, Event::Cnp);
        }
    }

    /// Keep every message of the message flows, for [`messages`](Self::messages).
    pub fn keep_messages(&mut self) {
        self.done.keep();
        self.nics.keep_messages();
    }

    /// The kept and the open messages of the message flows, in arrival order.
    pub fn messages(&self) -> Vec<MessageStats> {
        let mut all = self.done.all();
        if !self.nics.is_empty() {
            all.extend(self.nics.messages());
            all.sort_by_key(|m| (m.arrival_cycle, m.flow));
        }
        all
    }

    /// Counts of the messages of the message flows so far.
    pub fn message_counts(&self) -> MessageCounts {
        self.done.counts + self.nics.message_counts()
    }

    /// Source port and flow id of each DCQCN flow, in flow order (the index of
    /// [`reg`](Self::reg)).
    pub fn places(&self) -> impl Iterator<Item = (u8, u32)> + '_ {
        self.flows.iter().map(|f| (f.src, f.id))
    }

    /// Register `r` of the reaction point of DCQCN flow `i` (in flow order).
    pub fn reg(&self, i: usize, r: DcqcnReg) -> u64 {
        r.value(&self.flows[i].rp)
    }

    /// Per DCQCN flow results so far, in flow order.
    pub fn stats(&self) -> Vec<DcqcnStats> {
        let mut all: Vec<_> = self
            .flows
            .iter()
            .map(|f| DcqcnStats {
                flow: f.id,
                packets_sent: f.packets_sent,
                bytes_delivered: f.bytes_delivered,
                cnps_sent: f.cnps_sent,
                cnps_received: f.rp.cnps,
                rate_cuts: f.rp.cuts,
                rate_gbps: f.rp.rc / 1e9,
                target_gbps: f.rp.rt / 1e9,
                alpha: f.rp.alpha,
            })
            .chain(self.nics.stats())
            .collect();
        all.sort_by_key(|s| s.flow);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> DcqcnParams {
        DcqcnParams {
            g: 1.0 / 256.0,
            k_ns: 55_000,
            t_ns: 55_000,
            b_bytes: 10_000_000,
            f: 5,
            r_ai_bps: 40_000_000,
            r_hai_bps: 100_000_000,
            n_ns: 50_000,
            min_rate_bps: 100_000_000,
            cnp_delay_ns: 10_000,
            line_bps: 100_000_000_000,
            decrease_ns: 4_000,
            nack_ns: 500_000,
        }
    }

    #[test]
    fn a_cnp_cuts_by_half_alpha_and_raises_alpha() {
        let mut rp = Rp::new(params());
        rp.on_cnp();
        assert_eq!(rp.rt, 100e9);
        assert_eq!(rp.rc, 50e9, "alpha = 1: R_C halves (Eq. 1)");
        assert_eq!(rp.alpha, 1.0, "Eq. 2 keeps alpha = 1 at 1");
        rp.on_alpha_timer();
        assert_eq!(rp.alpha, 255.0 / 256.0, "Eq. 3");
        rp.on_cnp();
        assert_eq!(rp.rt, 50e9);
        assert_eq!(rp.rc, 50e9 * (1.0 - 255.0 / 512.0));
        assert_eq!(rp.cuts, 2);
    }

    #[test]
    fn fast_recovery_then_additive_then_hyper_increase() {
        let mut rp = Rp::new(params());
        rp.on_cnp();
        for _ in 0..5 {
            rp.on_rate_timer();
        }
        assert_eq!(rp.rt, 100e9, "F fast-recovery steps keep R_T");
        assert_eq!(
            rp.rc,
            100e9 - 50e9 / 32.0,
            "each halves the gap to R_T (Eq. 4)"
        );
        let rt = rp.rc;
        rp.on_cnp();
        assert_eq!((rp.rt, rp.rc), (rt, rt / 2.0));
        for _ in 0..6 {
            rp.on_rate_timer();
        }
        assert_eq!(rp.rt, rt + 40e6, "the 6th timer event is additive increase");
        rp.bc_count = 6;
        rp.increase();
        assert_eq!(rp.t_count.min(rp.bc_count), 6);
        assert_eq!(
            rp.rt,
            rt + 40e6 + 100e6,
            "both counters past F: hyper increase, i = 1"
        );
    }

    /// The `DcqcnFlows` of a small switch with `switch` keys added and flow 0 (port 1 to
    /// 0, 1000 B packets) with `dcqcn` keys in its pattern and `flow` keys, and the cycles
    /// one packet takes on the wire at `gbps`.
    fn one_flow(switch: &str, dcqcn: &str, flow: &str) -> (DcqcnFlows, impl Fn(f64) -> f64) {
        let text = format!(
            "[switch]\nprofile = \"small\"\n{switch}[run]\ncycles = 1\n[[flows]]\nsrc = 1\ndst = 0\n\
             prio = 1\nsize_bytes = 1000\npattern = {{ dcqcn = {{ {dcqcn} }} }}\n{flow}"
        );
        let plan = scenario::Scenario::parse(&text, "dcqcn-one-flow")
            .unwrap()
            .plan(&scenario::Overrides::default())
            .unwrap();
        let d = &plan.derived;
        let per_packet = d.wire_bits(1000) as f64 * d.clock_hz as f64;
        (DcqcnFlows::new(&plan.flows, 1, d), move |gbps: f64| {
            per_packet / (gbps * 1e9)
        })
    }

    /// Flow 0 of a small switch (100 Gb/s, 1 GHz): messages of about 1 MB at a mean load
    /// of 1 Gb/s in 1000 B packets ([`one_flow`]).
    fn message_flow() -> (DcqcnFlows, impl Fn(f64) -> f64) {
        one_flow(
            "",
            "qp = \"pair\"",
            "rate_gbps = 1\nmessage_cdf = [[999000, 0.0], [1000000, 1.0]]\n",
        )
    }

    /// Checks that the sends of `s` span `want` cycles per gap within the one cycle the
    /// rounding of the last one can add: the send times carry their fractions (module doc).
    fn mean_gap(s: &[(u64, u16)], want: f64) {
        let n = (s.len() - 1) as f64;
        let span = (s[s.len() - 1].0 - s[0].0) as f64;
        assert!(
            (span - want * n).abs() <= 1.0 + 1e-6,
            "{span} cycles, want {want} x {n}"
        );
    }

    /// Run `t` up to cycle `until`; the cycles and lengths of the packets it sent.
    fn sends(t: &mut DcqcnFlows, until: u64) -> Vec<(u64, u16)> {
        let mut got = Vec::new();
        while t.next_time() <= until {
            let now = t.next_time();
            t.fire_due(now, |h| got.push((now, h.len)));
        }
        got
    }

    #[test]
    fn message_flow_paces_at_rc_and_cuts_on_a_cnp() {
        let (mut t, cycles_at) = message_flow();
        let first = t.next_time();
        assert!(first > 0 && first < u64::MAX, "a message arrives");
        let at_line = sends(&mut t, first + 20_000);
        let m = &t.messages()[0];
        assert_eq!(m.arrival_cycle, first);
        assert_eq!(m.packets as u64, m.bytes.div_ceil(1000));
        assert_eq!(at_line[0].0, first, "the first packet leaves on arrival");
        // 100 Gb/s: a 1000 B packet (1020 B on the wire) every 81.6 cycles on average, in
        // gaps of 81 and 82 (module doc).
        mean_gap(&at_line, cycles_at(100.0));
        assert!(at_line
            .windows(2)
            .all(|w| [81, 82].contains(&(w[1].0 - w[0].0))));
        // A CNP: alpha = 1 halves R_C (Eq. 1); the gap doubles.
        let now = t.next_time();
        t.push(now, 0, Event::Cnp);
        let cut = sends(&mut t, now + 50_000);
        assert_eq!(t.stats()[0].rate_cuts, 1);
        assert_eq!(t.stats()[0].rate_gbps, 50.0);
        mean_gap(&cut[1..], cycles_at(50.0));
        // The message ends with its rest (at least 64 B); the next one, to an idle flow,
        // starts a fresh RP at line rate.
        let mut all: Vec<_> = at_line.iter().chain(&cut).copied().collect();
        while t.messages().len() < 2 {
            let now = t.next_time();
            t.fire_due(now, |h| all.push((now, h.len)));
        }
        let last = m.packets as usize - 1;
        let rest = (m.bytes - 1000 * last as u64).max(64) as u16;
        assert_eq!((all.len(), all[last].1), (last + 2, rest));
        assert!(all[..last].iter().all(|&(_, len)| len == 1000));
        let second = t.messages()[1].arrival_cycle;
        assert_eq!(
            all[last + 1].0,
            second,
            "the second message leaves on arrival"
        );
        all.extend(sends(&mut t, second + 1000));
        mean_gap(&all[last + 1..], cycles_at(100.0));
        assert_eq!(t.stats()[0].rate_cuts, 1, "the restart keeps the counters");
    }

    /// The long-run rate is `R_C`, at line rate and after a CNP: a long-lived flow at
    /// 25 Gb/s and 100 MHz (1000 B packets, 32.64 cycles each on the wire) for 10 ms, then
    /// at 12.5 Gb/s for 10 ms (the rate timer and the byte counter out of reach); the
    /// packets sent over the time they took are within 0.1 % of `R_C`. (Gaps rounded up to
    /// whole cycles give 33 and 66 cycles: 1.1 % slow.)
    #[test]
    fn long_run_rate_is_rc() {
        let (mut t, cycles_at) = one_flow(
            "port_speed_gbps = 25\ncore_clock_mhz = 100\n",
            "t_us = 1000000, b_bytes = 1000000000000",
            "stop_cycle = 10000000\n",
        );
        let gbps = |s: &[(u64, u16)]| {
            cycles_at(1.0) * (s.len() - 1) as f64 / (s[s.len() - 1].0 - s[0].0) as f64
        };
        let at_line = sends(&mut t, 1_000_000);
        assert!(at_line.len() > 30_000);
        assert!(
            (gbps(&at_line) / 25.0 - 1.0).abs() < 1e-3,
            "{}",
            gbps(&at_line)
        );
        let now = t.next_time();
        t.push(now, 0, Event::Cnp);
        let cut = sends(&mut t, now + 1_000_000);
        assert_eq!(t.stats()[0].rate_gbps, 12.5, "alpha = 1 halves R_C (Eq. 1)");
        // From the first gap at the new rate.
        assert!(
            (gbps(&cut[1..]) / 12.5 - 1.0).abs() < 1e-3,
            "{}",
            gbps(&cut[1..])
        );
    }

    #[test]
    fn rates_stay_between_min_rate_and_line_rate() {
        let mut rp = Rp::new(params());
        for _ in 0..100 {
            rp.on_cnp();
        }
        assert_eq!(rp.rc, 100e6);
        let cuts = rp.cuts;
        rp.on_cnp();
        assert_eq!(rp.cuts, cuts, "a CNP at min_rate is not a cut");
        for _ in 0..10_000 {
            rp.on_rate_timer();
        }
        assert_eq!((rp.rt, rp.rc), (100e9, 100e9));
    }
}
