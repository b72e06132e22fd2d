//! Closed-loop TCP sources: a window-based, Reno-like sender per flow whose ACK clock is the
//! switch's own egress.
//!
//! The receiver of a TCP flow sits behind the flow's egress port: a packet is received when
//! its last cell departs the switch (`Departure` with `beat.eop()`). The receiver answers
//! every packet with a cumulative ACK (the next in-order sequence it expects), which reaches
//! the sender `base_rtt` later. There is no reverse-path model: `base_rtt` stands for the
//! receiver's link and the whole way back, while the forward link, the partner's queue and
//! the switch's queueing are modelled cycle by cycle. A dropped packet never departs, so the
//! cumulative ACK stalls and the later packets produce duplicate ACKs.
//!
//! Sender ([`Reno`]): slow start and congestion avoidance on a fractional `cwnd` in packets;
//! fast retransmit on the third duplicate ACK (`ssthresh = max(cwnd / 2, 2)`,
//! `cwnd = ssthresh`), then fast recovery *without* window inflation: new data goes out only
//! as ACKs shrink the flight below `cwnd`, a partial ACK retransmits the next hole at once
//! (NewReno, RFC 6582, so several losses in one window do not all wait for a timeout), and
//! recovery ends when everything sent before the loss is acknowledged. A retransmission
//! timeout sets `cwnd = 1`, goes back to the first unacknowledged packet and doubles the
//! timer up to `max_rto`. The timer is `min_rto` (no RTT estimator): in a data centre
//! `srtt + 4 rttvar` is far below any realistic minimum RTO, which is what incast studies
//! vary. Fast retransmit and partial-ACK retransmissions do not back the timer off.
//!
//! Ending the back-off, two ways (the `tcp` pattern's `karn` key):
//!
//! - `karn = false` (the default): any new ACK (one that moves `snd_una`) resets the timer
//!   to `min_rto`, the ACK of a retransmitted packet included.
//! - `karn = true`: Karn's rule (Karn & Partridge 1987; RFC 6298 section 3 and the note
//!   after (5.7): the RTO collapses only "once a new RTT measurement is obtained (which
//!   can only happen when new data has been sent and acknowledged)"). A new ACK ends the
//!   back-off iff it newly acknowledges a packet that was transmitted exactly once, and
//!   first after the last timeout; otherwise the backed-off value stays, the restarted
//!   timer runs with it, and the next timeout doubles it again. As implemented:
//!   `karn_from` is set to `high` at each timeout (the go-back-N resends only packets below
//!   it, so everything from it on is first sent after the timeout), and a fast retransmit
//!   or partial-ACK retransmission of packet `p` raises it to `p + 1`. Those retransmit
//!   `snd_una`, the lowest unacknowledged packet, so every packet retransmitted since the
//!   timeout is below `karn_from` and every packet the ACK newly covers below `karn_from`
//!   is one sent before the timeout, resent by the go-back-N, or the one just
//!   retransmitted. The back-off ends iff `ack > karn_from`: the ACK covers packet
//!   `karn_from`, sent once after the timeout. Without an RTT estimator that first valid
//!   sample sets the timer back to `min_rto`. ns-2's TCP (the HCF paper's simulator) is
//!   slightly stricter: it times one packet at a time (the first one sent after a timeout
//!   or a fast retransmit) and only that packet's ACK ends its back-off.
//!
//! DCTCP (`cc = "dctcp"`, [`Dctcp`]; Alizadeh et al., SIGCOMM 2010, section 3.1): the
//! packets leave ECT(0); the receiver sets ECE on the ACK of a packet that arrived with CE
//! (every packet is ACKed at once here, so the per-packet echo is exact and DCTCP's
//! delayed-ACK state machine is not needed); the sender keeps `alpha`, the running
//! estimate of the fraction of marked packets, updated once per window of data as
//! `alpha = (1 - g) alpha + g F` (Eq. 1, `F` the fraction of this window's ACKs with ECE,
//! `g = 2^-dctcp_shift_g`), and on an ECE, at most once per window and not during loss
//! recovery, cuts `cwnd = cwnd (1 - alpha / 2)` (Eq. 2; `ssthresh` follows, at least 2 as
//! in Linux's `dctcp_ssthresh`). The window is the data outstanding when it started: it
//! ends when the cumulative ACK passes `high` as it stood then (Linux's `next_seq`).
//! `alpha` starts at 1, Linux's default (`dctcp_alpha_on_init`); the paper does not say.
//! Losses and timeouts are handled as Reno does.
//!
//! ns-2 (`flavor = "ns2"`, [`Ns2Timer`], docs/config.md): ns-2.35's retransmission timer
//! (`rtxcur_init_` before the first sample, tick-counted samples, `minrto_`, `t_backoff_`
//! up to `maxrto_`), its `window_` cap and its start-up (a SYN with `cwnd = 1`, then
//! `windowInit_`), with the defaults of its `ns-default.tcl`.
//!
//! Sequence numbers: `PacketHdr.seq` counts *transmissions* of the flow, so a retransmission
//! gets a new, larger `seq` and the scoreboard's per-flow order check stays as strict for TCP
//! flows as for the others (a packet overtaking an earlier one through the switch is still
//! caught). The TCP sequence lives here, in a FIFO of `(transmission, TCP sequence)` per
//! flow: the switch keeps a flow's packets in order, so when transmission `k` arrives every
//! older entry was dropped and is discarded.
//!
//! Event-driven: ACK arrivals, flow starts and RTO deadlines wait in one binary heap, so a
//! cycle costs one heap peek plus the departures it has, however many flows there are.

use crate::timeline::{FlowIndex, Timeline};
use hw_model::{Departure, Ecn, FiveTuple, PacketHdr};
use scenario::params::Ns2Params;
use scenario::{Flow, Pattern, SizeDist};
use std::collections::{BTreeSet, VecDeque};

/// The Reno-like congestion control of one sender, in packets.
#[derive(Debug, Clone)]
pub struct Reno {
    /// Congestion window, packets.
    pub cwnd: f64,
    pub ssthresh: f64,
    /// First packet not yet acknowledged.
    snd_una: u64,
    /// Next packet to send from the window (moves back to `snd_una` on a timeout).
    snd_nxt: u64,
    /// One past the highest packet ever sent: anything below it is a retransmission.
    high: u64,
    /// Packets in the flow (`u64::MAX`: long-lived).
    total: u64,
    dupacks: u32,
    in_recovery: bool,
    /// `high` when the last loss was detected: fast retransmit waits until the ACKs pass
    /// it, so one window's losses cause one window cut.
    recover: u64,
    /// Current retransmission timeout, cycles.
    rto: u64,
    min_rto: u64,
    max_rto: u64,
    /// Karn's rule: only a new ACK above `karn_from` ends the back-off (module doc).
    karn: bool,
    /// The lowest packet that was sent once, first after the last timeout, and was not
    /// retransmitted since: `high` at the timeout, raised past each fast retransmit and
    /// partial-ACK retransmission.
    karn_from: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// DCTCP's state; `None`: ECE is ignored.
    pub dctcp: Option<Dctcp>,
    /// ns-2's timer, window cap and start-up (`flavor = "ns2"`); `None`: the model's.
    pub ns2: Option<Ns2Timer>,
    /// The time of the event being processed, cycles (ns-2's timer reads it).
    pub now: u64,
}

/// The retransmission timer of ns-2.35's `TcpAgent`: `rtt_init`, `rtt_update`,
/// `rtt_timeout` and `rtt_backoff` with `rfc2988_ = true`, `T_SRTT_BITS = 3`,
/// `T_RTTVAR_BITS = 2`, `rttvar_exp_ = 2`, `srtt_init_ = 0`, `rttvar_init_ = 12`.
/// One packet is timed at a time (`rtt_active_`, `rtt_seq_`, `rtt_ts_`): the first new
/// packet sent while none is timed. Its ACK takes the RTT sample and sets `t_backoff_`
/// back to 1; a timeout or a fast retransmit stops the timing.
#[derive(Debug, Clone, PartialEq)]
pub struct Ns2Timer {
    pub p: Ns2Params,
    /// `t_srtt_` (ticks << 3) and `t_rttvar_` (ticks << 2).
    srtt: i64,
    rttvar: i64,
    /// `t_rtxcur_`, cycles.
    rtxcur: u64,
    /// `t_backoff_`.
    pub backoff: u64,
    /// The timed packet and when it left, if one is timed.
    timed: Option<(u64, u64)>,
}

impl Ns2Timer {
    /// `rtt_init`.
    pub fn new(p: Ns2Params) -> Self {
        Self {
            p,
            srtt: 0,
            // `rttvar_init_` is never read: the first sample finds `t_srtt_ = 0` and sets
            // both (and a back-off past 8 adds `t_srtt_ >> 3 = 0` to it).
            rttvar: 0,
            rtxcur: p.rtxcur_init,
            backoff: 1,
            timed: None,
        }
    }

    /// `rtt_timeout` (rfc2988_): `t_rtxcur_ * t_backoff_` (or `minrto_ * t_backoff_` while
    /// `t_rtxcur_ < minrto_`), at most `maxrto_`, at least two ticks.
    pub fn timeout(&self) -> u64 {
        let base = self.rtxcur.max(self.p.minrto);
        (base * self.backoff)
            .min(self.p.maxrto)
            .max(2 * self.p.tick)
    }

    /// `rtt_backoff`: double `t_backoff_` while below 64 or while the timeout is below
    /// `maxrto_`; past 8, move `srtt` into `rttvar`.
    fn back_off(&mut self) {
        if self.backoff < 64 || self.timeout() < self.p.maxrto {
            self.backoff <<= 1;
        }
        if self.backoff > 8 {
            self.rttvar += self.srtt >> 3;
            self.srtt = 0;
        }
    }

    /// `rtt_update(tao)` for a sample of `tao` cycles (without ns-2's random `boot_time_`
    /// phase of the tick clock).
    fn update(&mut self, tao: u64) {
        let rtt = ((tao / self.p.tick) as i64).max(1);
        if self.srtt != 0 {
            let mut delta = rtt - (self.srtt >> 3);
            self.srtt = (self.srtt + delta).max(1);
            delta = delta.abs() - (self.rttvar >> 2);
            self.rttvar = (self.rttvar + delta).max(1);
        } else {
            self.srtt = rtt << 3;
            self.rttvar = rtt << 1;
        }
        // (((t_rttvar_ << (rttvar_exp_ + (T_SRTT_BITS - T_RTTVAR_BITS))) + t_srtt_) >> T_SRTT_BITS) * tcp_tick_
        self.rtxcur = (((self.rttvar << 3) + self.srtt) >> 3) as u64 * self.p.tick;
    }
}

/// DCTCP's sender state (module doc; DCTCP section 3.1).
#[derive(Debug, Clone, PartialEq)]
pub struct Dctcp {
    /// The estimate of the fraction of marked packets (Eq. 1).
    pub alpha: f64,
    /// `g = 2^-shift_g`.
    shift_g: u32,
    /// ACKs, and ACKs with ECE, in the current window.
    acks: u64,
    marked: u64,
    /// The window ends when the cumulative ACK reaches it.
    window_end: u64,
    /// No second cut before the cumulative ACK reaches it.
    cwr_end: u64,
    /// ACKs with ECE, and window cuts, so far.
    pub ece_acks: u64,
    pub cuts: u64,
}

impl Dctcp {
    pub fn new(shift_g: u32) -> Self {
        Self {
            alpha: 1.0,
            shift_g,
            acks: 0,
            marked: 0,
            window_end: 0,
            cwr_end: 0,
            ece_acks: 0,
            cuts: 0,
        }
    }

    /// Count an ACK; at the end of a window, `alpha = (1 - g) alpha + g F` (Eq. 1) and the
    /// next window runs to `high`.
    fn on_ack(&mut self, ack: u64, ece: bool, high: u64) {
        self.acks += 1;
        self.marked += ece as u64;
        self.ece_acks += ece as u64;
        if ack >= self.window_end {
            let f = self.marked as f64 / self.acks as f64;
            let g = (-(self.shift_g as f64)).exp2();
            self.alpha = (1.0 - g) * self.alpha + g * f;
            self.acks = 0;
            self.marked = 0;
            self.window_end = high.max(ack + 1);
        }
    }
}

impl Reno {
    /// A sender of `total` packets starting with `init_cwnd` packets, timer `min_rto`
    /// cycles backing off up to `max_rto`; with `karn`, only the ACK of a packet sent once,
    /// first after the last timeout, ends the back-off (module doc).
    pub fn new(init_cwnd: u32, min_rto: u64, max_rto: u64, total: u64, karn: bool) -> Self {
        Self {
            cwnd: init_cwnd as f64,
            ssthresh: f64::INFINITY,
            snd_una: 0,
            snd_nxt: 0,
            high: 0,
            total,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            rto: min_rto,
            min_rto,
            max_rto,
            karn,
            karn_from: 0,
            retransmits: 0,
            fast_retransmits: 0,
            timeouts: 0,
            dctcp: None,
            ns2: None,
            now: 0,
        }
    }

    /// The same sender with ns-2.35's timer, `window_` cap and start-up: with `syn_`,
    /// packet 0 is the SYN (one more packet in a finite flow) and `cwnd` starts at 1;
    /// the first ACK (of packet 0) sets `cwnd = windowInit_` (`delay_growth_`).
    pub fn with_ns2(mut self, p: Ns2Params) -> Self {
        self.cwnd = if p.syn { 1.0 } else { p.window_init as f64 };
        if p.syn && self.total != u64::MAX {
            self.total += 1;
        }
        self.ns2 = Some(Ns2Timer::new(p));
        self
    }

    /// The same sender with DCTCP's reaction to ECE, gain `g = 2^-shift_g`.
    pub fn with_dctcp(mut self, shift_g: u32) -> Self {
        self.dctcp = Some(Dctcp::new(shift_g));
        self
    }

    /// The next packet the window lets out now, if any.
    pub fn next_send(&mut self) -> Option<u64> {
        let cap = self.ns2.as_ref().map_or(u64::MAX, |n| n.p.window as u64);
        let window = (self.cwnd.floor() as u64).clamp(1, cap);
        if self.snd_nxt >= self.total || self.snd_nxt - self.snd_una >= window {
            return None;
        }
        let seq = self.snd_nxt;
        self.snd_nxt += 1;
        if seq < self.high {
            self.retransmits += 1;
        } else if let Some(n) = &mut self.ns2 {
            // ns-2 `output`: time the first new packet sent while none is timed.
            n.timed.get_or_insert((seq, self.now));
        }
        self.high = self.high.max(self.snd_nxt);
        Some(seq)
    }

    /// Process a cumulative ACK (`ack` = next packet the receiver expects) with the ECE flag
    /// `ece`; returns a packet to retransmit at once (fast retransmit, or the next hole on
    /// a partial ACK).
    pub fn on_ack(&mut self, ack: u64, ece: bool) -> Option<u64> {
        if let Some(d) = &mut self.dctcp {
            d.on_ack(ack, ece, self.high);
            // Eq. 2, once per window, not while a loss is being repaired.
            if ece && !self.in_recovery && ack >= d.cwr_end {
                self.ssthresh = (self.cwnd * (1.0 - d.alpha / 2.0)).max(2.0);
                self.cwnd = self.ssthresh;
                d.cwr_end = self.high.max(ack + 1);
                d.cuts += 1;
            }
        }
        if ack > self.snd_una {
            let first = self.snd_una == 0;
            if let Some(n) = &mut self.ns2 {
                // ns-2 `newack`: the timed packet's ACK is an RTT sample and ends the back-off.
                if let Some((_, at)) = n.timed.filter(|&(seq, _)| ack > seq) {
                    n.update(self.now - at);
                    n.backoff = 1;
                    n.timed = None;
                }
            }
            let acked = (ack - self.snd_una) as f64;
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.dupacks = 0;
            if !self.karn || ack > self.karn_from {
                self.rto = self.min_rto;
            }
            if self.in_recovery {
                if ack >= self.recover {
                    self.in_recovery = false;
                    self.cwnd = self.ssthresh;
                } else {
                    self.retransmits += 1;
                    self.karn_from = self.karn_from.max(ack + 1);
                    return Some(ack);
                }
            } else if self.cwnd < self.ssthresh {
                self.cwnd += acked;
            } else {
                self.cwnd += acked / self.cwnd;
            }
            if let Some(n) = self.ns2.as_ref().filter(|_| first && ack == 1) {
                // `delay_growth_`: the ACK of packet 0 sets `cwnd_ = initial_window()`.
                self.cwnd = n.p.window_init as f64;
            }
        } else if ack == self.snd_una && self.high > ack {
            self.dupacks += 1;
            if self.dupacks == 3 && !self.in_recovery && ack >= self.recover {
                self.ssthresh = (self.cwnd / 2.0).max(2.0);
                self.cwnd = self.ssthresh;
                self.in_recovery = true;
                self.recover = self.high;
                self.fast_retransmits += 1;
                self.retransmits += 1;
                self.karn_from = self.karn_from.max(ack + 1);
                if let Some(n) = &mut self.ns2 {
                    // `reset_rtx_timer(1, 0)`: `rtt_active_ = 0`.
                    n.timed = None;
                }
                return Some(ack);
            }
        }
        None
    }

    /// The retransmission timer fired: collapse the window, go back to the first
    /// unacknowledged packet and back off the timer.
    pub fn on_timeout(&mut self) {
        self.ssthresh = (self.cwnd / 2.0).max(2.0);
        self.cwnd = 1.0;
        self.snd_nxt = self.snd_una;
        self.dupacks = 0;
        self.in_recovery = false;
        self.recover = self.high;
        self.karn_from = self.high;
        self.timeouts += 1;
        self.rto = (self.rto * 2).min(self.max_rto);
        if let Some(n) = &mut self.ns2 {
            n.back_off();
            n.timed = None;
        }
    }

    /// Sent packets are waiting for an acknowledgement (the timer must run).
    pub fn outstanding(&self) -> bool {
        self.high > self.snd_una && !self.done()
    }

    /// Every packet is acknowledged.
    pub fn done(&self) -> bool {
        self.snd_una >= self.total
    }

    /// Current retransmission timeout, cycles.
    pub fn rto(&self) -> u64 {
        self.ns2.as_ref().map_or(self.rto, Ns2Timer::timeout)
    }
}

/// Results of one TCP flow.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TcpStats {
    pub flow: u32,
    /// Packet bytes the receiver got in order (goodput; duplicates not counted).
    pub bytes_delivered: u64,
    /// Transmissions, retransmissions included.
    pub packets_sent: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Flow completion time (from `start_cycle` to the last ACK), cycles; `None` while a
    /// finite flow is unfinished and always for a long-lived one.
    pub fct_cycles: Option<u64>,
    /// Congestion window at the end, packets.
    pub cwnd: f64,
    /// DCTCP flows: `alpha` at the end, ACKs with ECE and window cuts (absent for Reno).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dctcp: Option<DctcpStats>,
}

/// The DCTCP part of [`TcpStats`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DctcpStats {
    pub alpha: f64,
    pub ece_acks: u64,
    pub cuts: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Start,
    /// A cumulative ACK reaches the sender, with the ECE flag.
    Ack(u64, bool),
    /// A flow's RTO deadline as it stood when the event was queued (see `TcpFlow::timer`).
    Rto,
}

#[derive(Debug, Clone)]
struct TcpFlow {
    id: u32,
    src: u8,
    dst: u8,
    prio: u8,
    tuple: FiveTuple,
    /// The ECN field of its packets.
    ecn: Ecn,
    mss: u32,
    /// Bytes of a finite flow (its last packet carries the remainder).
    flow_bytes: Option<u64>,
    start_cycle: u64,
    rtt: u64,
    reno: Reno,
    /// Next `PacketHdr.seq` (transmission number).
    next_tx: u32,
    /// `(transmission, TCP sequence)` of the packets in the network, oldest first.
    in_network: VecDeque<(u32, u64)>,
    /// Receiver: next in-order packet expected, and the packets received above it.
    rcv_nxt: u64,
    out_of_order: BTreeSet<u64>,
    /// Deadline of the running retransmission timer, `None` if stopped.
    timer: Option<u64>,
    /// Time of the flow's earliest `Rto` event in the heap. Restarting the timer later
    /// leaves that event to re-queue itself at the new deadline when it fires, so the heap
    /// holds about one timer event per flow rather than one per ACK.
    rto_event: Option<u64>,
    packets_sent: u64,
    bytes_delivered: u64,
    fct: Option<u64>,
}

impl TcpFlow {
    /// ns-2's SYN: packet 0 carries no data.
    fn syn(&self) -> bool {
        self.reno.ns2.as_ref().is_some_and(|n| n.p.syn)
    }

    /// Wire length of packet `seq`: a SYN is a minimum frame.
    fn len_of(&self, seq: u64) -> u32 {
        if self.syn() && seq == 0 {
            return scenario::MIN_PACKET_BYTES;
        }
        match self.flow_bytes {
            Some(b) if seq + 1 == self.reno.total => {
                let data_seq = seq - self.syn() as u64;
                let rest = b - data_seq * self.mss as u64;
                (rest as u32).max(scenario::MIN_PACKET_BYTES)
            }
            _ => self.mss,
        }
    }

    /// Data bytes packet `seq` delivers (none for a SYN).
    fn data_of(&self, seq: u64) -> u64 {
        if self.syn() && seq == 0 {
            0
        } else {
            self.len_of(seq) as u64
        }
    }

    fn transmit(&mut self, seq: u64, out: &mut impl FnMut(PacketHdr)) {
        out(PacketHdr {
            flow: self.id,
            seq: self.next_tx,
            src: self.src,
            dst: self.dst,
            prio: self.prio,
            len: self.len_of(seq) as u16,
            tuple: self.tuple,
            cm_tag: None,
            ecn: self.ecn,
        });
        self.in_network.push_back((self.next_tx, seq));
        self.next_tx = self.next_tx.wrapping_add(1);
        self.packets_sent += 1;
    }
}

/// All TCP flows of a run and their pending events.
#[derive(Debug, Clone)]
pub struct TcpFlows {
    flows: Vec<TcpFlow>,
    /// Per scenario flow id, its index in `flows` (TCP flows only).
    index: FlowIndex,
    /// `(cycle, insertion order, flow index, event)`: the insertion order keeps a flow's
    /// ACKs of one cycle in the order they were sent, and runs deterministic.
    events: Timeline<Event>,
}

/// Microseconds to core cycles, rounded up.
fn us_to_cycles(us: u64, clock_hz: u64) -> u64 {
    scenario::ns_to_cycles(us.saturating_mul(1000), clock_hz)
}

impl TcpFlows {
    /// The TCP flows among `flows` (the others are left to [`crate::source::Sources`]).
    pub fn new(flows: &[Flow], clock_hz: u64) -> Self {
        let mut t = Self {
            flows: Vec::new(),
            index: FlowIndex::new(flows.len()),
            events: Timeline::new(),
        };
        for f in flows {
            let (Pattern::Tcp(p), SizeDist::Fixed(mss)) = (&f.pattern, &f.size) else {
                continue;
            };
            let total = p
                .flow_bytes
                .map_or(u64::MAX, |b| b.div_ceil(*mss as u64).max(1));
            let i = t.flows.len() as u32;
            t.index.set(f.id, i);
            t.flows.push(TcpFlow {
                id: f.id,
                src: f.src,
                dst: f.dst,
                prio: f.prio,
                tuple: f.five_tuple(FiveTuple::TCP),
                ecn: if p.dctcp_shift_g.is_some() {
                    Ecn::Ect0
                } else {
                    f.ecn_field()
                },
                mss: *mss,
                flow_bytes: p.flow_bytes,
                start_cycle: f.start_cycle,
                rtt: us_to_cycles(p.base_rtt_us, clock_hz),
                reno: {
                    let reno = Reno::new(
                        p.init_cwnd,
                        us_to_cycles(p.min_rto_us, clock_hz),
                        us_to_cycles(p.max_rto_us, clock_hz),
                        total,
                        p.karn,
                    );
                    let reno = match p.ns2 {
                        Some(n) => reno.with_ns2(n.in_cycles(clock_hz)),
                        None => reno,
                    };
                    match p.dctcp_shift_g {
                        Some(g) => reno.with_dctcp(g),
                        None => reno,
                    }
                },
                next_tx: 0,
                in_network: VecDeque::new(),
                rcv_nxt: 0,
                out_of_order: BTreeSet::new(),
                timer: None,
                rto_event: None,
                packets_sent: 0,
                bytes_delivered: 0,
                fct: None,
            });
            t.push(f.start_cycle, i, Event::Start);
        }
        t
    }

    fn push(&mut self, at: u64, i: u32, ev: Event) {
        self.events.push(at, i, ev);
    }

    /// The cycle of the next ACK, start or timeout, `u64::MAX` if none is pending.
    pub fn next_time(&self) -> u64 {
        self.events.next_time()
    }

    /// Whether the plan has no TCP flow (nothing here ever has work).
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Process the ACKs, starts and timeouts due at `now`, handing packets to `out`.
    pub fn fire_due(&mut self, now: u64, mut out: impl FnMut(PacketHdr)) {
        while let Some((t, i, ev)) = self.events.pop_due(now) {
            let f = &mut self.flows[i as usize];
            f.reno.now = now;
            let mut restart = false;
            match ev {
                Event::Start => {}
                Event::Ack(ack, ece) => {
                    let before = f.reno.snd_una;
                    if let Some(seq) = f.reno.on_ack(ack, ece) {
                        f.transmit(seq, &mut out);
                    }
                    restart = f.reno.snd_una > before;
                    if f.reno.done() && f.fct.is_none() {
                        f.fct = Some(now - f.start_cycle);
                    }
                }
                Event::Rto => {
                    if f.rto_event == Some(t) {
                        f.rto_event = None;
                    }
                    match f.timer {
                        Some(d) if d <= now => {
                            f.reno.on_timeout();
                            restart = true;
                        }
                        Some(d) => {
                            if f.rto_event.is_none_or(|e| e > d) {
                                f.rto_event = Some(d);
                                self.push(d, i, Event::Rto);
                            }
                            continue;
                        }
                        None => continue,
                    }
                }
            }
            while let Some(seq) = f.reno.next_send() {
                f.transmit(seq, &mut out);
            }
            // RFC 6298: restart the timer on new data acknowledged or a timeout, start it
            // when data goes out with none running, stop it when nothing is outstanding.
            if !f.reno.outstanding() {
                f.timer = None;
            } else if restart || f.timer.is_none() {
                let deadline = now + f.reno.rto();
                f.timer = Some(deadline);
                if f.rto_event.is_none_or(|e| e > deadline) {
                    f.rto_event = Some(deadline);
                    self.push(deadline, i, Event::Rto);
                }
            }
        }
    }

    /// The receivers take the packets whose last cell departed at `now` and send their
    /// ACKs back, arriving `base_rtt` later.
    pub fn departed(&mut self, now: u64, departures: &[Departure]) {
        if self.flows.is_empty() {
            return;
        }
        for dep in departures {
            let Some(i) = self.index.completed(dep) else {
                continue;
            };
            let f = &mut self.flows[i as usize];
            // Older transmissions still listed were dropped: the switch keeps a flow in order.
            let Some(seq) = std::iter::from_fn(|| f.in_network.pop_front())
                .find(|&(tx, _)| tx == dep.beat.hdr.seq)
                .map(|(_, seq)| seq)
            else {
                continue;
            };
            if seq == f.rcv_nxt {
                f.bytes_delivered += f.data_of(seq);
                f.rcv_nxt += 1;
                while f.out_of_order.remove(&f.rcv_nxt) {
                    f.bytes_delivered += f.data_of(f.rcv_nxt);
                    f.rcv_nxt += 1;
                }
            } else if seq > f.rcv_nxt {
                f.out_of_order.insert(seq);
            }
            let (at, ack) = (now + f.rtt, f.rcv_nxt);
            let ece = dep.beat.hdr.ecn == Ecn::Ce;
            self.push(at, i, Event::Ack(ack, ece));
        }
    }

    /// Per TCP flow results so far, in flow order.
    pub fn stats(&self) -> Vec<TcpStats> {
        self.flows
            .iter()
            .map(|f| TcpStats {
                flow: f.id,
                bytes_delivered: f.bytes_delivered,
                packets_sent: f.packets_sent,
                retransmits: f.reno.retransmits,
                fast_retransmits: f.reno.fast_retransmits,
                timeouts: f.reno.timeouts,
                fct_cycles: f.fct,
                cwnd: f.reno.cwnd,
                dctcp: f.reno.dctcp.as_ref().map(|d| DctcpStats {
                    alpha: d.alpha,
                    ece_acks: d.ece_acks,
                    cuts: d.cuts,
                }),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(r: &mut Reno) -> Vec<u64> {
        std::iter::from_fn(|| r.next_send()).collect()
    }

    #[test]
    fn slow_start_then_three_dup_acks_halve_the_window() {
        let mut r = Reno::new(2, 100, 1000, u64::MAX, false);
        assert_eq!(sent(&mut r), [0, 1]);
        assert_eq!(r.on_ack(1, false), None);
        assert_eq!(r.on_ack(2, false), None);
        assert_eq!(r.cwnd, 4.0, "slow start: +1 per acked packet");
        assert_eq!(sent(&mut r), [2, 3, 4, 5]);
        // Packet 2 is lost: 3, 4, 5 arrive and each acknowledges 2 again.
        assert_eq!(r.on_ack(2, false), None);
        assert_eq!(r.on_ack(2, false), None);
        assert_eq!(
            r.on_ack(2, false),
            Some(2),
            "fast retransmit on the third dup ack"
        );
        assert_eq!((r.cwnd, r.ssthresh), (2.0, 2.0));
        assert_eq!((r.fast_retransmits, r.retransmits), (1, 1));
        assert_eq!(r.on_ack(2, false), None, "no second cut in the same window");
        assert_eq!(r.on_ack(6, false), None, "full ack ends recovery");
        assert_eq!(r.cwnd, 2.0);
        r.on_ack(6, false);
        assert_eq!(sent(&mut r), [6, 7]);
        r.on_ack(8, false);
        assert_eq!(r.cwnd, 3.0, "congestion avoidance: +1 per window");
    }

    #[test]
    fn partial_ack_retransmits_the_next_hole() {
        let mut r = Reno::new(6, 100, 1000, u64::MAX, false);
        assert_eq!(sent(&mut r).len(), 6);
        // 0 and 2 lost.
        for _ in 0..3 {
            r.on_ack(0, false);
        }
        assert_eq!(r.on_ack(2, false), Some(2));
    }

    #[test]
    fn timeout_collapses_window_and_backs_off_to_the_cap() {
        let mut r = Reno::new(8, 100, 350, u64::MAX, false);
        assert_eq!(sent(&mut r).len(), 8);
        r.on_timeout();
        assert_eq!((r.cwnd, r.ssthresh, r.rto()), (1.0, 4.0, 200));
        assert_eq!(sent(&mut r), [0], "go back to the first unacked packet");
        assert_eq!(r.retransmits, 1);
        r.on_timeout();
        assert_eq!(r.rto(), 350, "doubling stops at max_rto");
        r.on_timeout();
        assert_eq!((r.rto(), r.timeouts), (350, 3));
        r.on_ack(1, false);
        assert_eq!(r.rto(), 100, "a new ack resets the back-off");
    }

    #[test]
    fn dctcp_updates_alpha_per_window_and_cuts_once_per_window() {
        // g = 1/2, alpha starts at 1.
        let mut r = Reno::new(4, 100, 1000, u64::MAX, false).with_dctcp(1);
        assert_eq!(sent(&mut r), [0, 1, 2, 3]);
        // The first ACK ends the (empty) start-up window: F = 1/1, alpha stays 1; its ECE
        // cuts cwnd by alpha / 2 = 1/2 (slow start then adds the acked packet).
        r.on_ack(1, true);
        let d = r.dctcp.clone().unwrap();
        assert_eq!((d.alpha, d.cuts), (1.0, 1));
        assert_eq!((r.ssthresh, r.cwnd), (2.0, 2.5));
        // The window now runs to packet 4 (everything sent): no second cut inside it.
        r.on_ack(2, true);
        r.on_ack(3, false);
        assert_eq!(r.dctcp.as_ref().unwrap().cuts, 1, "once per window");
        // ACK 4 ends the window of ACKs 2, 3, 4, one with ECE: F = 1/3, alpha = 1/2 + 1/6.
        r.on_ack(4, false);
        let a = r.dctcp.as_ref().unwrap().alpha;
        assert!((a - (0.5 + 0.5 / 3.0)).abs() < 1e-12, "alpha {a}");
        // The next window ran to packet 5 (nothing else was sent): ACK 5 ends it with
        // F = 1 first, then its ECE cuts with the new alpha.
        let cwnd = r.cwnd;
        r.on_ack(5, true);
        let d = r.dctcp.as_ref().unwrap();
        assert!(
            (d.alpha - (a + 1.0) / 2.0).abs() < 1e-12,
            "alpha {}",
            d.alpha
        );
        assert_eq!(d.cuts, 2, "a new window may cut again");
        assert!((r.ssthresh - (cwnd * (1.0 - d.alpha / 2.0)).max(2.0)).abs() < 1e-12);
    }

    /// ns-2.35's defaults at 1 GHz: no RTT sample yet, so every timeout is
    /// `rtxcur_init_ * t_backoff_` = 3, 6, 12, 24, 48 s, then `maxrto_` = 60 s for ever.
    #[test]
    fn ns2_timeouts_back_off_from_3_s_to_the_60_s_cap() {
        let s = 1_000_000_000;
        let mut r = Reno::new(10, 1, 1, u64::MAX, false).with_ns2(Ns2Params::DEFAULT.in_cycles(s));
        let mut seen = vec![r.rto() / s];
        for _ in 0..8 {
            r.on_timeout();
            seen.push(r.rto() / s);
        }
        assert_eq!(seen, [3, 6, 12, 24, 48, 60, 60, 60, 60]);
        assert_eq!(
            r.ns2.as_ref().unwrap().backoff,
            64,
            "t_backoff_ stops at 64 once the timeout is at maxrto_"
        );
    }

    /// SYN with `cwnd = 1`; its ACK sets `cwnd = windowInit_`; the first timed packet's
    /// ACK takes a sample (10 us is one 10 ms tick: `t_rtxcur_` = 3 ticks < `minrto_`, so
    /// the timer is `minrto_` = 200 ms) and ends the back-off; `window_` caps the window.
    #[test]
    fn ns2_syn_initial_window_rtt_sample_and_window_cap() {
        let s = 1_000_000_000;
        let mut r = Reno::new(10, 1, 1, u64::MAX, false).with_ns2(Ns2Params::DEFAULT.in_cycles(s));
        assert_eq!(sent(&mut r), [0], "the SYN alone");
        r.on_timeout();
        assert_eq!(r.rto(), 6 * s);
        assert_eq!(sent(&mut r), [0], "SYN again");
        r.now = 10_000;
        r.on_ack(1, false);
        assert_eq!(r.cwnd, 2.0, "windowInit_ after the SYN's ACK");
        assert_eq!(
            r.rto(),
            6 * s,
            "a retransmitted SYN is not timed: still backed off"
        );
        r.now = 20_000;
        assert_eq!(sent(&mut r), [1, 2]);
        r.now = 30_000;
        r.on_ack(2, false);
        assert_eq!(r.rto(), s / 5, "sample taken: minrto_, back-off ended");
        // Without the SYN's timeout (slow start all along), every round sends what the
        // window allows and then everything is acknowledged.
        let mut r = Reno::new(10, 1, 1, u64::MAX, false).with_ns2(Ns2Params::DEFAULT.in_cycles(s));
        assert_eq!(sent(&mut r), [0]);
        r.on_ack(1, false);
        let mut rounds = Vec::new();
        for _ in 0..6 {
            let v = sent(&mut r);
            rounds.push(v.len());
            r.on_ack(v[v.len() - 1] + 1, false);
        }
        assert_eq!(
            rounds,
            [2, 4, 8, 16, 20, 20],
            "window_ caps slow start at 20"
        );
        assert!(r.cwnd > 20.0);
    }

    #[test]
    fn finite_flow_is_done_when_all_acked() {
        let mut r = Reno::new(10, 100, 1000, 3, false);
        assert_eq!(sent(&mut r), [0, 1, 2]);
        assert!(r.outstanding() && !r.done());
        r.on_ack(3, false);
        assert!(r.done() && !r.outstanding());
    }
}
