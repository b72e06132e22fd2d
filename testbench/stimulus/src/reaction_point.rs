//! ECM reaction point (RP): the rate limiters in the sending NIC of a link partner (ECM
//! section 3.3, Fig. 7, and pseudo-code 3.3.3). The congestion point is in the model
//! (`hw_model::ecm_cp`); this is the other end of the loop, in the testbench.
//!
//! # Data path (Fig. 7)
//! The partner's per-class queues are the host's transmit queues. When the partner's
//! transmitter looks for its next frame it takes the head of a class queue (its usual
//! arbitration) and passes it through the filters: a frame whose `{FlowID, priority}`
//! matches an instantiated fine limiter, or whose priority has a coarse limiter, moves to
//! that limiter's FIFO and the search goes on; the first frame that matches nothing goes on
//! the wire at once. So the "No Match" path never waits in an RP queue and has absolute
//! priority: a limiter sends only when no class queue that is not paused holds an
//! unmatched frame. Limiter FIFOs are served round robin among those whose credit allows
//! (below), whose priority is not PFC-paused and which are not in an ECM(0,0) timeout.
//! Every frame a limiter sends carries a CM-Tag with the limiter's CPID and the NIC's
//! free-running timer.
//!
//! Frames are filtered when they leave the host queue, not when the source hands them
//! over, so a flow's frames still waiting in the host queue when its limiter is
//! instantiated go through the limiter too, behind nothing of their own flow: frames of a
//! flow that passed the filter earlier are already on the wire. A limiter is reclaimed
//! only with an empty FIFO, so the flow's next frame (unmatched again, or caught by the
//! coarse limiter of its priority) cannot overtake one of its own. No reordering either way.
//!
//! Rate: each limiter has a credit in bit-cycles (bits times `clock_hz`), refilled at `R`
//! per cycle; a frame may start when the credit is at least 0 and then costs its wire bits
//! (`Derived::wire_bits`, with preamble and gap, as the sources count rates). The credit is
//! capped at 0 while the FIFO is empty (an idle limiter banks nothing) and at one MTU frame
//! while it holds frames, so the long-run rate is exactly `R` and a burst is at most one
//! frame above it.
//!
//! # Control (pseudo-code 3.3.3)
//! `FlowID` = the top `flowid_bits` bits of a 64-bit FNV-1a hash of the sampled header's
//! 5-tuple and priority (13 + 1 bytes), finished by the murmur3 mixer. A fine limiter's
//! filter is `{FlowID, priority}`; flows whose FlowIDs collide share a limiter (3.3).
//!
//! On an ECM frame (`Qoff`, `Qdelta` as the frame carries them, pages times `Qscale`):
//! - `Qoff = Qdelta = 0` is ECM(0,0): the limiter (instantiated if needed) goes to TIMEOUT,
//!   `R = 0`, `CPID` = the frame's, timer uniform in `[0, Tmax)`. At expiry `R = Rmin`,
//!   then `Rmin /= 2` (not below 1 Mb/s) and `Tmax *= 2` (not above 1 s).
//! - Otherwise `Fb = -(Qoff + w Qdelta)`. Negative feedback instantiates a limiter for an
//!   unlimited flow at `Ri`; for a limited one `R *= 1 - min(Gd |Fb|, alpha)`, or with the
//!   Q bit `R *= 1 - min(2 alpha, 1)`, and the CPID moves to the sender. Positive feedback
//!   acts only on an ACTIVE limiter whose CPID is the sender's: `R += min(Gi Fb Ru, beta C)`,
//!   or with the Q bit `R += 2 beta C`; it restores `Rmin` and `Tmax`.
//! - With the Q bit, the direction is the sign of `Qdelta` (text 3.3.2) by default, or the
//!   sign of `Fb` (pseudo-code) with `qbit_direction = "fb"`. `Fb = 0` without the Q bit
//!   changes nothing.
//! - `R` saturates to `[Rmin, C]` (`Rmin` the limiter's register) after every change; it
//!   is 0 only in TIMEOUT. Every message is ignored while the limiter is in TIMEOUT.
//! - Every `Td` (a free-running timer from cycle 0) each ACTIVE limiter gains `Rd`, up to `C`.
//! - A limiter is reclaimed once its FIFO is empty and `R = C`: checked after a frame
//!   leaves it (the pseudo-code's only place), after every rate change, and at every `Td`
//!   (also for a limiter already at `C`, e.g. instantiated at `Ri = C`).
//! - No free fine limiter for a new flow: the coarse limiter of the flow's priority is
//!   instantiated instead, and every fine limiter of that priority is set to `C` (and out
//!   of TIMEOUT) to drain. While a coarse limiter is in use it takes every ECM frame for
//!   its priority, no fine limiter of that priority is instantiated, and the draining ones
//!   are reclaimed as their FIFOs empty.
//! - RTT: `now - Timestamp` in timer units, averaged `RTTavg += (RTT - RTTavg) 2^-Wrtt`;
//!   reset to 0 at instantiation and when the CPID changes. Taken only from ECM frames
//!   whose sampled frame carried a CM-Tag in this NIC's unit (an untagged frame echoes
//!   timestamp 0, which is no measurement).
//!
//! # Fixed point (register widths)
//! | quantity | format | range |
//! | --- | --- | --- |
//! | `Qoff`, `Qdelta` (from the frame) | signed integer, 27 bits | `+-2^26` (`2 Qeq Qscale <= 2^26`) |
//! | `w` | unsigned, 3 fraction bits (u4.3) | 1/8..=8 in steps of 1/8 |
//! | `Fb` | signed, 3 fraction bits (s31.3, 35 bits) | `|Fb| < 2^33` |
//! | `Gi` | unsigned, 16 fraction bits (u8.16) | `2^-16..=256 - 2^-16` |
//! | `Gd` | unsigned, 24 fraction bits (u0.24) | `2^-24..=1 - 2^-24` |
//! | `alpha`, `beta` | unsigned, 16 fraction bits (u0.16) | `2^-16..=1 - 2^-16` |
//! | `Ri / C` | unsigned, 16 fraction bits (u1.16) | `2^-16..=1` |
//! | `R`, `C`, `Rmin`, `Ru`, `Rd` | unsigned integer, b/s, 41 bits | up to 1600 Gb/s |
//! | `Tmax` | unsigned integer, us, 20 bits | 1..=10^6 |
//! | `RTTavg` | unsigned, 8 fraction bits (u16.8), timer units | |
//! | CM-Tag timestamp | unsigned integer, 16 bits, units of `2^unit` us | wraps |
//!
//! Products are formed at full width and truncated once (toward zero):
//! - increase `dR = min(floor(Gi Fb Ru / 2^19), floor(beta C / 2^16))`; with Q,
//!   `dR = floor(2 beta C / 2^16)`;
//! - decrease `m = min(Gd |Fb|, alpha 2^11)` in 27 fraction bits,
//!   `R = floor(R (2^27 - m) / 2^27)`; with Q, `m = min(2 alpha, 2^16)` in 16 fraction bits,
//!   `R = floor(R (2^16 - m) / 2^16)`;
//! - `Ri = floor(C ri / 2^16)`, `beta C` and `2 beta C` likewise.
//!
//! The random timer of ECM(0,0) is `floor(Tmax_cycles * r / 2^16)` with `r` the low 16 bits
//! of the NIC's `rtl::Lfsr32` after 16 shifts (seeded from the run's seed and the port), so
//! a run is deterministic per seed.

use crate::packet_run::{PacketRun, RunQueue};
use hw_model::{CmTag, Derived, EcmFrame, PacketHdr};
use rtl::Lfsr32;
use scenario::params::{EcmRpParams, QbitDirection, AB_FRAC, GD_FRAC, GI_FRAC, W_FRAC};
use std::collections::VecDeque;

/// Fraction bits of `RTTavg`.
pub const RTT_FRAC: u32 = 8;
/// `Rmin` halves down to this (the bottom of its configurable range), b/s.
pub const RMIN_FLOOR_BPS: u64 = 1_000_000;
/// `Tmax` doubles up to this (the top of its configurable range), us.
pub const TMAX_CAP_US: u32 = 1_000_000;

/// State of a rate limiter (pseudo-code 3.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimiterState {
    Inactive,
    Active,
    /// After ECM(0,0): rate 0 until the random timer expires.
    Timeout,
}

impl LimiterState {
    pub fn name(self) -> &'static str {
        match self {
            Self::Inactive => "inactive",
            Self::Active => "active",
            Self::Timeout => "timeout",
        }
    }
}

/// One rate limiter and its queue.
#[derive(Debug, Clone)]
pub struct Limiter {
    pub state: LimiterState,
    /// FlowID register (fine limiters; a coarse limiter matches its whole priority).
    pub flowid: u32,
    pub prio: u8,
    pub cpid: u16,
    pub rate_bps: u64,
    pub rmin_bps: u64,
    pub tmax_us: u32,
    /// `RTTavg` in timer units, 8 fraction bits.
    pub rtt_avg_q8: u32,
    /// Cycle the ECM(0,0) timer expires (state `Timeout`).
    pub timer_until: u64,
    /// A fine limiter held at `C` while the coarse limiter of its priority takes over.
    pub draining: bool,
    /// Testbench flow id of the sampled frame of the last ECM frame that acted here
    /// (for the traces only; not a register of the RP).
    pub last_flow: u32,
    queue: RunQueue,
    /// Frames in `queue`.
    packets: u64,
    /// Bit-cycles: bits times `clock_hz`.
    credit: i128,
    credit_at: u64,
}

impl Limiter {
    fn new(c_bps: u64, p: &EcmRpParams) -> Self {
        Self {
            state: LimiterState::Inactive,
            flowid: 0,
            prio: 0,
            cpid: 0,
            rate_bps: c_bps,
            rmin_bps: p.rmin_bps.min(c_bps),
            tmax_us: p.tmax_us,
            rtt_avg_q8: 0,
            timer_until: 0,
            draining: false,
            last_flow: 0,
            queue: RunQueue::default(),
            packets: 0,
            credit: 0,
            credit_at: 0,
        }
    }

    /// Frames waiting in the limiter's FIFO.
    pub fn queued(&self) -> u64 {
        self.packets
    }

    fn refill(&mut self, now: u64, cap: i128) {
        let dt = now.saturating_sub(self.credit_at) as i128;
        self.credit = (self.credit + self.rate_bps as i128 * dt).min(cap);
        self.credit_at = now;
    }
}

/// A register of a rate limiter as the waveform shows it
/// (`top.nic.pNN.rp.<limiter>.<name>`, docs/signals.md). The widths are the formats of
/// docs/ecm.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimiterReg {
    /// 0 inactive, 1 active, 2 timeout.
    State,
    /// Held at `C` while the coarse limiter of its priority takes over.
    Draining,
    FlowId,
    Prio,
    Cpid,
    Rate,
    Rmin,
    Tmax,
    RttAvg,
    /// Frames in the limiter's FIFO (saturates at `0xFFFF`).
    Fifo,
}

impl LimiterReg {
    pub const ALL: [Self; 10] = [
        Self::State,
        Self::Draining,
        Self::FlowId,
        Self::Prio,
        Self::Cpid,
        Self::Rate,
        Self::Rmin,
        Self::Tmax,
        Self::RttAvg,
        Self::Fifo,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::State => "state",
            Self::Draining => "draining",
            Self::FlowId => "flowid",
            Self::Prio => "prio",
            Self::Cpid => "cpid",
            Self::Rate => "rate_bps",
            Self::Rmin => "rmin_bps",
            Self::Tmax => "tmax_us",
            Self::RttAvg => "rtt_avg_q8",
            Self::Fifo => "fifo_len",
        }
    }

    pub fn width(self, p: &EcmRpParams) -> u32 {
        match self {
            Self::State => 2,
            Self::Draining => 1,
            Self::FlowId => p.flowid_bits as u32,
            Self::Prio => 3,
            Self::Cpid | Self::Fifo => 16,
            Self::Rate | Self::Rmin => 41,
            Self::Tmax => 20,
            Self::RttAvg => 24,
        }
    }
}

/// What a limiter did (the `--trace-rp` events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RpEventKind {
    Instantiate,
    Decrease,
    Increase,
    SelfIncrease,
    Timeout,
    Restart,
    Reclaim,
    Coarse,
}

impl RpEventKind {
    pub const ALL: [RpEventKind; 8] = [
        Self::Instantiate,
        Self::Decrease,
        Self::Increase,
        Self::SelfIncrease,
        Self::Timeout,
        Self::Restart,
        Self::Reclaim,
        Self::Coarse,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Self::Instantiate => "instantiate",
            Self::Decrease => "decrease",
            Self::Increase => "increase",
            Self::SelfIncrease => "self_increase",
            Self::Timeout => "timeout",
            Self::Restart => "restart",
            Self::Reclaim => "reclaim",
            Self::Coarse => "coarse",
        }
    }
}

/// One limiter event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RpEvent {
    pub cycle: u64,
    pub nic: u8,
    /// Fine limiters `0..n`, the coarse limiter of priority `p` is `n + p`.
    pub limiter: u8,
    /// Testbench flow id of the sampled frame (timer events: of the last ECM frame that
    /// acted on the limiter).
    pub flow: u32,
    pub kind: RpEventKind,
    /// `Fb` in 1/8 pages, for events caused by an ECM frame.
    pub fb_q3: Option<i64>,
    pub rate_before_bps: u64,
    pub rate_after_bps: u64,
}

/// Counters of one reaction point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RpStats {
    pub ecm_rx: u64,
    /// ECM frames that reached a limiter in TIMEOUT.
    pub ignored_in_timeout: u64,
    /// Positive feedback for a flow without a limiter or from a CP other than the
    /// limiter's, and `Fb = 0` frames.
    pub ignored_positive: u64,
    /// Frames sent by limiters (CM-tagged).
    pub frames_limited: u64,
    /// By event kind, in `RpEventKind::ALL` order.
    pub events: [u64; 8],
}

/// Deliberate corruptions for companion tests that show the checks catch real bugs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpFault {
    /// Every second frame a filter matches bypasses its limiter and goes on the wire (a
    /// leaky filter): the flow's frames overtake the ones waiting in the limiter's FIFO.
    LeakyFilter,
}

/// Direction of a feedback message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    Zero,
    Negative,
    Positive,
    Neutral,
}

/// `Fb = -(Qoff + w Qdelta)` with 3 fraction bits.
#[inline]
pub fn fb_q3(qoff: i32, qdelta: i32, w_q3: u32) -> i64 {
    -((qoff as i64) << W_FRAC) - w_q3 as i64 * qdelta as i64
}

/// The FlowID of a header: the top `bits` bits of a hash of its 5-tuple and priority.
pub fn flow_id(hdr: &PacketHdr, bits: u8) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in hdr.tuple.bytes().into_iter().chain([hdr.prio]) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    (h >> (64 - bits as u32)) as u32
}

/// The reaction point of one NIC.
#[derive(Debug, Clone)]
pub struct ReactionPoint {
    nic: u8,
    p: EcmRpParams,
    c_bps: u64,
    clock_hz: u64,
    /// Credit cap of a backlogged limiter: one MTU frame, bit-cycles.
    burst: i128,
    wire_overhead: u32,
    /// `n` fine limiters, then one coarse limiter per priority.
    lim: Vec<Limiter>,
    /// Limiters not inactive.
    in_use: u32,
    /// Limiters in TIMEOUT.
    in_timeout: u32,
    lfsr: Lfsr32,
    next_td: u64,
    /// ECM frames on their way here: `(arrival cycle, frame)`.
    ecm_in: VecDeque<(u64, EcmFrame)>,
    /// Round-robin pointer over the limiter FIFOs.
    rr: usize,
    events: Vec<RpEvent>,
    stats: RpStats,
    fault: Option<RpFault>,
    leak: bool,
}

impl ReactionPoint {
    /// The RP of the NIC behind `port`; its random stream depends on `seed` and `port`.
    pub fn new(port: u8, p: &EcmRpParams, d: &Derived, seed: u64) -> Self {
        let c_bps = d.rate_bps[port as usize];
        let n = p.fine_limiters as usize;
        let folded = (seed ^ seed >> 32) as u32;
        Self {
            nic: port,
            p: *p,
            c_bps,
            clock_hz: d.clock_hz,
            burst: d.wire_bits(d.cfg.mtu_bytes) as i128 * d.clock_hz as i128,
            wire_overhead: d.cfg.wire_overhead_bytes,
            lim: (0..n + 8).map(|_| Limiter::new(c_bps, p)).collect(),
            in_use: 0,
            in_timeout: 0,
            lfsr: Lfsr32::new(folded ^ 0x9E37_79B9u32.wrapping_mul(port as u32 + 1)),
            next_td: us_to_cycles(p.td_us as u64, d.clock_hz),
            ecm_in: VecDeque::new(),
            rr: 0,
            events: Vec::new(),
            stats: RpStats::default(),
            fault: None,
            leak: false,
        }
    }

    /// Corrupt this RP on purpose (companion tests).
    pub fn inject_fault(&mut self, f: RpFault) {
        self.fault = Some(f);
    }

    pub fn params(&self) -> &EcmRpParams {
        &self.p
    }
    /// `C`, the NIC's line rate, b/s.
    pub fn line_rate_bps(&self) -> u64 {
        self.c_bps
    }
    pub fn nic(&self) -> u8 {
        self.nic
    }
    /// Fine limiters `0..n`, then the coarse limiters of priorities 0..=7.
    pub fn limiters(&self) -> &[Limiter] {
        &self.lim
    }
    pub fn stats(&self) -> &RpStats {
        &self.stats
    }
    /// The LFSR of the ECM(0,0) timers.
    pub fn lfsr(&self) -> &Lfsr32 {
        &self.lfsr
    }

    fn n(&self) -> usize {
        self.p.fine_limiters as usize
    }

    /// Whether the RP has work without new input: ECM frames on the way, or a limiter in
    /// use (its timers run).
    pub fn busy(&self) -> bool {
        self.in_use > 0 || !self.ecm_in.is_empty()
    }

    /// When busy, the first cycle from which [`tick`](Self::tick) may act: an ECM frame's
    /// arrival, an ECM(0,0) timer's expiry, or with a limiter in use the next `Td`.
    /// `u64::MAX` if none; the caller clamps it to after the current cycle.
    pub fn next_event(&self) -> u64 {
        let mut t = self.ecm_in.front().map_or(u64::MAX, |&(at, _)| at);
        if self.in_use > 0 {
            t = t.min(self.next_td);
        }
        if self.in_timeout > 0 {
            for l in &self.lim {
                if l.state == LimiterState::Timeout {
                    t = t.min(l.timer_until);
                }
            }
        }
        t
    }

    /// Whether a limiter holds a frame.
    pub fn queued_frames(&self) -> bool {
        self.in_use > 0 && self.lim.iter().any(|l| l.packets > 0)
    }

    /// The first cycle after `now` in which [`next_limited`](Self::next_limited) could send:
    /// an ACTIVE limiter holds a frame, its credit has refilled to 0, and its priority is
    /// not paused (`ready_at(prio)`: the first cycle after `now` without a pause on it).
    /// `u64::MAX` if no limiter can send without a timer or a rate change first.
    pub fn next_send(&self, now: u64, ready_at: impl Fn(u8) -> u64) -> u64 {
        let mut t = u64::MAX;
        for l in &self.lim {
            if l.state != LimiterState::Active || l.packets == 0 || l.rate_bps == 0 {
                continue;
            }
            let credit_at = if l.credit >= 0 {
                now + 1
            } else {
                let wait = (-l.credit as u128).div_ceil(l.rate_bps as u128);
                (l.credit_at as u128 + wait).min(u64::MAX as u128) as u64
            };
            t = t.min(credit_at.max(ready_at(l.prio)));
        }
        t
    }

    /// An ECM frame that reaches this NIC at cycle `at`.
    pub fn ecm_arrives(&mut self, at: u64, f: EcmFrame) {
        self.ecm_in.push_back((at, f));
    }

    /// Hand the events recorded since the last call to `f`.
    pub fn drain_events(&mut self, mut f: impl FnMut(&RpEvent)) {
        for e in &self.events {
            f(e);
        }
        self.events.clear();
    }

    /// The CM-Tag timer at `now`: microseconds in units of `2^unit`, 16 bits.
    pub fn timestamp(&self, now: u64) -> u16 {
        let us = now as u128 * 1_000_000 / self.clock_hz as u128;
        (us >> self.p.unit) as u16
    }

    /// Clock the control side at `now`: expired ECM(0,0) timers, the `Td` self-increase,
    /// then the ECM frames due (so a frame arriving as its limiter's timer expires is
    /// honoured).
    pub fn tick(&mut self, now: u64) {
        if self.in_timeout > 0 {
            for i in 0..self.lim.len() {
                if self.lim[i].state == LimiterState::Timeout && self.lim[i].timer_until <= now {
                    self.restart(now, i);
                }
            }
        }
        if now >= self.next_td {
            let td = us_to_cycles(self.p.td_us as u64, self.clock_hz);
            self.next_td = (now / td + 1) * td;
            if self.in_use > 0 {
                self.self_increase(now);
            }
        }
        while let Some(&(at, f)) = self.ecm_in.front() {
            if at > now {
                break;
            }
            self.ecm_in.pop_front();
            self.on_ecm(now, &f);
        }
    }

    /// `Td` expired: every ACTIVE limiter gains `Rd`, up to `C` (pseudo-code 3.3.3,
    /// `Td_timeout()`: `RL[*].rate += Rd`, saturated at `C`, for every ACTIVE RL, also one
    /// already at `C`), then the reclaim check. So a limiter at `C` with an empty FIFO is
    /// reclaimed by the next `Td` however it got there, also when instantiated at
    /// `Ri = C`: the self-increase "will cause its decommissioning" (3.3.1, item 2).
    pub fn self_increase(&mut self, now: u64) {
        for i in 0..self.lim.len() {
            let l = &self.lim[i];
            if l.state != LimiterState::Active {
                continue;
            }
            if l.rate_bps < self.c_bps {
                let after = (l.rate_bps + self.p.rd_bps).min(self.c_bps);
                let before = self.set_rate(now, i, after);
                self.event(now, i, RpEventKind::SelfIncrease, None, before);
            }
            self.try_reclaim(now, i);
        }
    }

    /// The ECM(0,0) timer of limiter `i` expired: restart at `Rmin`, back off.
    fn restart(&mut self, now: u64, i: usize) {
        self.in_timeout -= 1;
        let rmin = self.lim[i].rmin_bps;
        self.lim[i].state = LimiterState::Active;
        let before = self.set_rate(now, i, rmin);
        let l = &mut self.lim[i];
        l.rmin_bps = (l.rmin_bps / 2).max(RMIN_FLOOR_BPS.min(l.rmin_bps));
        l.tmax_us = l.tmax_us.saturating_mul(2).min(TMAX_CAP_US.max(l.tmax_us));
        self.event(now, i, RpEventKind::Restart, None, before);
        self.try_reclaim(now, i);
    }

    /// Process one ECM frame (pseudo-code `processECMFrame`).
    pub fn on_ecm(&mut self, now: u64, f: &EcmFrame) {
        self.stats.ecm_rx += 1;
        let prio = f.sampled.prio & 7;
        let fid = flow_id(&f.sampled, self.p.flowid_bits);
        let fb = fb_q3(f.qoff, f.qdelta, self.p.w_q3);
        let dir = if f.qoff == 0 && f.qdelta == 0 {
            Dir::Zero
        } else {
            let s = if f.q && self.p.qbit_direction == QbitDirection::Qdelta {
                -(f.qdelta.signum() as i64)
            } else {
                fb.signum()
            };
            match s {
                1 => Dir::Positive,
                -1 => Dir::Negative,
                _ => Dir::Neutral,
            }
        };
        let n = self.n();
        let coarse = n + prio as usize;
        let found = if self.lim[coarse].state != LimiterState::Inactive {
            Some(coarse)
        } else {
            self.find_fine(fid, prio)
        };
        let (i, new) = match found {
            Some(i) => (i, false),
            None if matches!(dir, Dir::Zero | Dir::Negative) => {
                let i = match (0..n).find(|&i| self.lim[i].state == LimiterState::Inactive) {
                    Some(i) => i,
                    None => {
                        self.drain_fine(now, prio);
                        coarse
                    }
                };
                self.instantiate(now, i, fid, prio, f, dir, fb);
                (i, true)
            }
            None => {
                self.stats.ignored_positive += 1;
                return;
            }
        };
        if !new && self.lim[i].state == LimiterState::Timeout {
            self.stats.ignored_in_timeout += 1;
            return;
        }
        let c = self.c_bps;
        match dir {
            Dir::Zero => {
                self.lim[i].last_flow = f.sampled.flow;
                self.lim[i].cpid = f.cpid;
                self.lim[i].state = LimiterState::Timeout;
                self.in_timeout += 1;
                let before = self.set_rate(now, i, 0);
                let tmax = us_to_cycles(self.lim[i].tmax_us as u64, self.clock_hz);
                let r = (self.lfsr.advance(16) & 0xFFFF) as u128;
                self.lim[i].timer_until = now + ((tmax as u128 * r) >> 16) as u64;
                self.event(now, i, RpEventKind::Timeout, Some(fb), before);
            }
            Dir::Negative if new => {}
            Dir::Negative => {
                self.lim[i].last_flow = f.sampled.flow;
                let r = self.lim[i].rate_bps as u128;
                let after = if f.q {
                    let m = (2 * self.p.alpha_q16 as u128).min(1 << AB_FRAC);
                    (r * ((1 << AB_FRAC) - m)) >> AB_FRAC
                } else {
                    let m = (self.p.gd_q24 as u128 * fb.unsigned_abs() as u128)
                        .min((self.p.alpha_q16 as u128) << (GD_FRAC + W_FRAC - AB_FRAC));
                    (r * ((1 << (GD_FRAC + W_FRAC)) - m)) >> (GD_FRAC + W_FRAC)
                } as u64;
                let after = after.clamp(self.lim[i].rmin_bps, c);
                let before = self.set_rate(now, i, after);
                if self.lim[i].cpid == f.cpid {
                    self.rtt_sample(now, i, f);
                } else {
                    self.lim[i].cpid = f.cpid;
                    self.lim[i].rtt_avg_q8 = 0;
                }
                self.event(now, i, RpEventKind::Decrease, Some(fb), before);
                self.try_reclaim(now, i);
            }
            Dir::Positive
                if self.lim[i].cpid == f.cpid && self.lim[i].state == LimiterState::Active =>
            {
                self.lim[i].last_flow = f.sampled.flow;
                let beta_c = self.p.beta_q16 as u128 * c as u128;
                let inc = if f.q {
                    (2 * beta_c) >> AB_FRAC
                } else {
                    let gi = self.p.gi_q16 as u128 * fb as u128 * self.p.ru_bps as u128;
                    (gi >> (GI_FRAC + W_FRAC)).min(beta_c >> AB_FRAC)
                };
                let l = &mut self.lim[i];
                l.rmin_bps = self.p.rmin_bps.min(c);
                l.tmax_us = self.p.tmax_us;
                let after = (l.rate_bps as u128 + inc).min(c as u128) as u64;
                let after = after.max(l.rmin_bps);
                let before = self.set_rate(now, i, after);
                self.rtt_sample(now, i, f);
                self.event(now, i, RpEventKind::Increase, Some(fb), before);
                self.try_reclaim(now, i);
            }
            _ => self.stats.ignored_positive += 1,
        }
    }

    /// A fine limiter whose filter is `{fid, prio}`.
    fn find_fine(&self, fid: u32, prio: u8) -> Option<usize> {
        (0..self.n()).find(|&i| {
            let l = &self.lim[i];
            l.state != LimiterState::Inactive && l.flowid == fid && l.prio == prio
        })
    }

    /// Instantiate limiter `i` for `{fid, prio}` from frame `f`: at `Ri` for negative
    /// feedback (the caller then puts it in TIMEOUT for ECM(0,0)).
    #[allow(clippy::too_many_arguments)]
    fn instantiate(
        &mut self,
        now: u64,
        i: usize,
        fid: u32,
        prio: u8,
        f: &EcmFrame,
        dir: Dir,
        fb: i64,
    ) {
        let c = self.c_bps;
        let rmin = self.p.rmin_bps.min(c);
        let ri = ((c as u128 * self.p.ri_q16 as u128) >> AB_FRAC) as u64;
        let l = &mut self.lim[i];
        l.state = LimiterState::Active;
        l.flowid = if i < self.p.fine_limiters as usize {
            fid
        } else {
            0
        };
        l.prio = prio;
        l.cpid = f.cpid;
        l.rmin_bps = rmin;
        l.tmax_us = self.p.tmax_us;
        l.rtt_avg_q8 = 0;
        l.draining = false;
        l.last_flow = f.sampled.flow;
        l.credit = 0;
        l.credit_at = now;
        self.in_use += 1;
        let after = if dir == Dir::Zero {
            c
        } else {
            ri.clamp(rmin, c)
        };
        let before = self.set_rate(now, i, after);
        let kind = if i < self.n() {
            RpEventKind::Instantiate
        } else {
            RpEventKind::Coarse
        };
        self.event(now, i, kind, Some(fb), before);
    }

    /// No fine limiter left: every fine limiter of `prio` goes to `C` to drain.
    fn drain_fine(&mut self, now: u64, prio: u8) {
        for i in 0..self.n() {
            if self.lim[i].state == LimiterState::Inactive || self.lim[i].prio != prio {
                continue;
            }
            if self.lim[i].state == LimiterState::Timeout {
                self.in_timeout -= 1;
            }
            self.lim[i].state = LimiterState::Active;
            self.lim[i].draining = true;
            let before = self.set_rate(now, i, self.c_bps);
            self.event(now, i, RpEventKind::Coarse, None, before);
            self.try_reclaim(now, i);
        }
    }

    /// Set limiter `i`'s rate, settling its credit at the old rate first; returns the old rate.
    fn set_rate(&mut self, now: u64, i: usize, rate: u64) -> u64 {
        let cap = if self.lim[i].queue.is_empty() {
            0
        } else {
            self.burst
        };
        let l = &mut self.lim[i];
        l.refill(now, cap);
        std::mem::replace(&mut l.rate_bps, rate)
    }

    fn event(&mut self, now: u64, i: usize, kind: RpEventKind, fb: Option<i64>, before: u64) {
        self.stats.events[kind as usize] += 1;
        self.events.push(RpEvent {
            cycle: now,
            nic: self.nic,
            limiter: i as u8,
            flow: self.lim[i].last_flow,
            kind,
            fb_q3: fb,
            rate_before_bps: before,
            rate_after_bps: self.lim[i].rate_bps,
        });
    }

    /// Reclaim limiter `i` if its FIFO is empty and its rate is at `C`.
    fn try_reclaim(&mut self, now: u64, i: usize) {
        let l = &self.lim[i];
        if l.state == LimiterState::Active && l.queue.is_empty() && l.rate_bps == self.c_bps {
            self.lim[i].state = LimiterState::Inactive;
            self.lim[i].draining = false;
            self.in_use -= 1;
            let c = self.c_bps;
            self.event(now, i, RpEventKind::Reclaim, None, c);
        }
    }

    /// Average in the RTT of `f` if its sampled frame carried a CM-Tag in this NIC's unit.
    fn rtt_sample(&mut self, now: u64, i: usize, f: &EcmFrame) {
        let Some(tag) = f.sampled.cm_tag else { return };
        if tag.unit != self.p.unit || f.unit != self.p.unit {
            return;
        }
        let rtt = self.timestamp(now).wrapping_sub(f.timestamp) as i64;
        let l = &mut self.lim[i];
        let avg = l.rtt_avg_q8 as i64;
        l.rtt_avg_q8 = (avg + (((rtt << RTT_FRAC) - avg) >> self.p.wrtt)) as u32;
    }

    // -------------------------------------------------------------------------------
    // Data path.
    // -------------------------------------------------------------------------------

    /// The limiter whose filter matches `hdr`, if any: a fine `{FlowID, priority}` filter
    /// first, then the coarse limiter of the priority.
    #[inline]
    pub fn classify(&mut self, hdr: &PacketHdr) -> Option<usize> {
        if self.in_use == 0 {
            return None;
        }
        if self.fault == Some(RpFault::LeakyFilter) {
            self.leak = !self.leak;
            if self.leak {
                return None;
            }
        }
        let prio = hdr.prio & 7;
        let n = self.n();
        if (0..n).any(|i| self.lim[i].state != LimiterState::Inactive) {
            let fid = flow_id(hdr, self.p.flowid_bits);
            if let Some(i) = self.find_fine(fid, prio) {
                return Some(i);
            }
        }
        let c = n + prio as usize;
        (self.lim[c].state != LimiterState::Inactive).then_some(c)
    }

    /// Move the head of `queue`, which the filter matched to limiter `i`, into the
    /// limiter's FIFO with the rest of its run (the filters match by flow); under the
    /// leaky-filter fault, which misses frame by frame, the head frame alone.
    pub fn divert_from(&mut self, now: u64, i: usize, queue: &mut RunQueue) {
        let run = if self.fault == Some(RpFault::LeakyFilter) {
            queue.take().map(PacketRun::from)
        } else {
            queue.take_run()
        };
        let Some(run) = run else { return };
        let l = &mut self.lim[i];
        if l.queue.is_empty() {
            l.refill(now, 0);
        }
        l.packets += run.packets();
        l.queue.push(run);
    }

    /// The next frame a limiter may send at `now` (priorities in `paused` may not), with
    /// its CM-Tag: round robin over the limiters whose credit allows.
    pub fn next_limited(&mut self, now: u64, paused: u8) -> Option<PacketHdr> {
        if self.in_use == 0 {
            return None;
        }
        let len = self.lim.len();
        let ts = self.timestamp(now);
        for k in 0..len {
            let i = (self.rr + k) % len;
            let burst = self.burst;
            let l = &mut self.lim[i];
            if l.state != LimiterState::Active || l.queue.is_empty() || paused & (1 << l.prio) != 0
            {
                continue;
            }
            l.refill(now, burst);
            if l.credit < 0 {
                continue;
            }
            let mut hdr = l.queue.take().expect("checked non-empty");
            l.packets -= 1;
            l.credit -=
                ((hdr.len as u64 + self.wire_overhead as u64) * 8) as i128 * self.clock_hz as i128;
            hdr.cm_tag = Some(CmTag {
                cpid: l.cpid,
                timestamp: ts,
                unit: self.p.unit,
            });
            self.rr = (i + 1) % len;
            self.stats.frames_limited += 1;
            self.try_reclaim(now, i);
            return Some(hdr);
        }
        None
    }

    /// Frames in all limiter FIFOs.
    pub fn queued(&self) -> u64 {
        self.lim.iter().map(Limiter::queued).sum()
    }

    /// The RP's invariants: `0 <= R <= C`, `R = 0` exactly in TIMEOUT, `Rmin <= R` when
    /// ACTIVE, an inactive limiter holds no frame and sits at `C`, and the use counts
    /// match the states.
    pub fn check(&self) -> Result<(), String> {
        let c = self.c_bps;
        let mut in_use = 0;
        let mut in_timeout = 0;
        for (i, l) in self.lim.iter().enumerate() {
            let bad = |m: String| Err(format!("nic {} limiter {i}: {m}", self.nic));
            if l.rate_bps > c {
                return bad(format!("rate {} b/s above C = {c}", l.rate_bps));
            }
            match l.state {
                LimiterState::Inactive => {
                    if !l.queue.is_empty() || l.rate_bps != c {
                        return bad(format!(
                            "inactive with {} frames queued at {} b/s",
                            l.packets, l.rate_bps
                        ));
                    }
                }
                LimiterState::Active => {
                    in_use += 1;
                    if l.rate_bps == 0 || l.rate_bps < l.rmin_bps {
                        return bad(format!(
                            "active at {} b/s, below Rmin = {} (or 0 outside a timeout)",
                            l.rate_bps, l.rmin_bps
                        ));
                    }
                }
                LimiterState::Timeout => {
                    in_use += 1;
                    in_timeout += 1;
                    if l.rate_bps != 0 {
                        return bad(format!("in timeout at {} b/s", l.rate_bps));
                    }
                }
            }
        }
        if (in_use, in_timeout) != (self.in_use, self.in_timeout) {
            return Err(format!(
                "nic {}: use counts {}/{} but {in_use} limiters in use, {in_timeout} in timeout",
                self.nic, self.in_use, self.in_timeout
            ));
        }
        Ok(())
    }

    /// Limiters not inactive (7 bits in the waveform).
    pub fn in_use(&self) -> u32 {
        self.in_use
    }

    /// Limiter `i`'s name in signal paths: `fNN` for fine limiter NN, `cP` for the coarse
    /// limiter of priority P.
    pub fn limiter_name(&self, i: usize) -> String {
        match i.checked_sub(self.n()) {
            None => format!("f{i:02}"),
            Some(p) => format!("c{p}"),
        }
    }

    /// Register `r` of limiter `i`, as the waveform shows it.
    pub fn limiter_reg(&self, i: usize, r: LimiterReg) -> u64 {
        let l = &self.lim[i];
        match r {
            LimiterReg::State => match l.state {
                LimiterState::Inactive => 0,
                LimiterState::Active => 1,
                LimiterState::Timeout => 2,
            },
            LimiterReg::Draining => l.draining as u64,
            LimiterReg::FlowId => l.flowid as u64,
            LimiterReg::Prio => l.prio as u64,
            LimiterReg::Cpid => l.cpid as u64,
            LimiterReg::Rate => l.rate_bps,
            LimiterReg::Rmin => l.rmin_bps,
            LimiterReg::Tmax => l.tmax_us as u64,
            LimiterReg::RttAvg => l.rtt_avg_q8 as u64,
            LimiterReg::Fifo => l.packets.min(0xFFFF),
        }
    }

    /// For companion tests: set limiter `i`'s rate register directly.
    pub fn force_rate(&mut self, i: usize, rate_bps: u64) {
        self.lim[i].rate_bps = rate_bps;
    }
}

/// Microseconds to cycles (at least 1).
pub fn us_to_cycles(us: u64, clock_hz: u64) -> u64 {
    (us as u128 * clock_hz as u128 / 1_000_000).max(1) as u64
}
