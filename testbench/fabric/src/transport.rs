//! The hosts' transports (issue 24, item 2): open loop, TCP (Reno with NewReno's partial
//! ACKs, DCTCP), DCQCN, and HPCC and PowerTCP (`stimulus::int_cc::IntSender`, the single
//! switch's queue pair, over every hop's record), with their ACKs and CNPs sent as packets
//! through the fabric.
//!
//! A flow's transport is its priority group's ([`Transports`], `[[fabric.transport]]`).
//! The congestion controls are `stimulus`'s ([`Reno`], [`Rp`]); what differs from the
//! single switch is the feedback path. There the receiver sits behind the switch's egress
//! and its ACK or CNP comes back after a fixed delay; here every data flow has a *feedback
//! flow* from its receiver to its sender, with its own 5-tuple (ports swapped) and ECMP
//! route, whose packets are 64-byte frames queued in the receiver's NIC, the switches'
//! buffers and the links like any other packet: paused by PFC, marked, dropped when lossy.
//!
//! - **Priority.** Feedback travels on `feedback_pg`, by default the data's own: ns3-datacenter
//!   puts an ACK in the data's priority group (`src/point-to-point/model/rdma-hw.cc` line 336,
//!   `seqh.SetPG(ch.udp.pg)`), and its switches queue ACKs and NACKs there unless
//!   `AckHighPrio` is set, CNPs in queue 0 (`switch-node.cc` lines 146-154); `feedback_pg = 0`
//!   is `AckHighPrio`. The receiver's NIC sends feedback from its class queue of that
//!   priority (ns-3's NIC has a separate, high-priority ACK queue, `rdma-hw.cc` line 358,
//!   `RdmaEnqueueHighPrioQ`; here it competes with the NIC's data of the same class).
//! - **What a packet carries.** The model's header has no TCP sequence or ACK number: the
//!   flow keeps them beside its packets in flight (`(transmission, value)` in send order,
//!   as `stimulus::tcp` does), and the receiver takes the entry of the packet that arrived,
//!   discarding older ones (packets the fabric lost: a flow's path keeps its order).
//! - **TCP** (`stimulus::tcp`): every data packet is ACKed at once with the next expected
//!   packet and ECE set when it arrived CE-marked; DCTCP's packets leave ECT(0). The
//!   retransmission timer is the sender's `min_rto` with back-off; `base_rtt_us` is not
//!   used (the path is modelled). ns-2's flavor (`flavor = "ns2"`: its timer, `window_`
//!   and `windowInit_`) runs without its SYN (`syn_ = false`; the network cuts a flow's
//!   packets from its message alone).
//! - **DCQCN** (`stimulus::dcqcn`): packets leave ECT(0), paced at `R_C` from the flow's
//!   start (line rate at first); the receiver (NP) answers a CE-marked packet with a CNP
//!   unless it sent one for the flow in the last `N`; the sender's timers run from the
//!   first CNP and stop when the flow has sent its last packet. `cnp_delay_us` is not
//!   used. A lost packet is not retransmitted (the flow does not complete).
//! - **Open loop**: the whole message is handed to the NIC at the flow's start.
//! - **ECM**: a switch's congestion points send their frames as packets of an ECM flow
//!   (`crate::switch`, `Switch::ecm_inject`) on `ecm_pg`; the flow's source host hands each
//!   frame, carried beside its packet, to its NIC's reaction point on arrival.
//!
//! A flow completes when its receiver has every packet in order; its FCT ends there.

use crate::switch::{FlowRecv, FlowState, Nic};
use hw_model::int_stamp::{IntHop, IntStamp};
use hw_model::{Derived, EcmFrame, Ecn, PacketHdr};
use scenario::params::{DcqcnParams, IntCcParams};
use scenario::{FabricTransport, MIN_PACKET_BYTES};
use std::collections::{BTreeSet, VecDeque};
use stimulus::dcqcn::Rp;
use stimulus::int_cc::{IntHops, IntSender};
use stimulus::packet_run::PacketRun;
use stimulus::tcp::Reno;

/// The transports of a run: per priority group, the priority group of the feedback and
/// that of the switches' ECM frames.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transports {
    pub by_pg: [FabricTransport; 8],
    /// The priority group of ACKs and CNPs; `None`: the data's own.
    pub feedback_pg: Option<u8>,
    /// The priority group of ECM frames (`crate::switch`, `Switch::ecm_inject`): 0 by
    /// default, the queue ns3-datacenter's switches put CNPs and QCN frames in
    /// (`switch-node.cc` lines 146-154).
    pub ecm_pg: u8,
}

impl Transports {
    /// Every flow open loop (no feedback).
    pub fn open_loop() -> Self {
        Self {
            by_pg: [FabricTransport::OpenLoop; 8],
            feedback_pg: None,
            ecm_pg: 0,
        }
    }
}

/// A flow's sender, at its source host.
#[derive(Debug, Clone)]
pub(crate) enum Sender {
    OpenLoop,
    Tcp(Box<TcpSender>),
    Dcqcn(Box<DcqcnSender>),
    IntCc(Box<IntSender>),
    /// The feedback flow of data flow `of` (sent by that flow's receiver).
    Feedback {
        of: usize,
    },
    /// The ECM frames one switch's congestion points send about one flow (a data or a
    /// feedback flow, whose `FlowState::ecm` names this one), to that flow's source host.
    Ecm,
}

#[derive(Debug, Clone)]
pub(crate) struct TcpSender {
    reno: Reno,
    /// The running retransmission timer's deadline.
    timer: Option<u64>,
    /// The cycle of the flow's earliest `Rto` event in the NIC's timeline. A restart to a
    /// later deadline leaves that event to re-queue itself at the deadline when it fires
    /// (`stimulus::tcp`'s pattern), so the timeline holds about one timer event per flow,
    /// not one per ACK, and stale events do not wake the switch.
    rto_event: Option<u64>,
    /// The highest cumulative ACK received: a higher one acknowledges new data.
    acked: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct DcqcnSender {
    rp: Rp,
    /// The next send time, fractional cycles (`stimulus::dcqcn`: the fraction carries over).
    next_send: f64,
    /// Packets handed to the NIC.
    sent: u64,
    /// The timers' deadlines, running from the first CNP.
    alpha_deadline: Option<u64>,
    rate_deadline: Option<u64>,
    k: u64,
    t: u64,
    /// The NP's least interval between CNPs, cycles.
    n: u64,
}

/// A flow's receiver, at its destination host.
#[derive(Debug, Clone, Default)]
pub(crate) struct Receiver {
    /// The next packet expected in order, and those received above it.
    rcv_nxt: u64,
    out_of_order: BTreeSet<u64>,
    /// The last cycle the NP sent a CNP.
    last_cnp: Option<u64>,
}

/// Hop records the flow's packets in flight carry: `(transmission, hop on the path,
/// record)`, as the switches stamped them (data) or the receiver echoed them (ACKs).
pub(crate) type CarriedHops = Vec<(u32, u8, IntHop)>;

/// A transport event of a NIC: `(cycle, flow, event)` in its timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Event {
    /// DCQCN's next paced packet.
    Send,
    /// TCP's retransmission timer, queued for this cycle (`TcpSender::rto_event`).
    Rto(u64),
    /// DCQCN's timers, whose deadline was this cycle when set (stale if it moved since).
    AlphaTimer(u64),
    RateTimer(u64),
}

/// Feedback values: an ACK's number with ECE in bit 63, or a CNP.
const ECE: u64 = 1 << 63;
const CNP: u64 = u64::MAX;

/// Cycles of `ns` nanoseconds at `clock_hz`, rounded up.
fn cycles(ns: u64, clock_hz: u64) -> u64 {
    scenario::ns_to_cycles(ns, clock_hz)
}

/// The feedback a flow's receiver sends, each a `MIN_PACKET_BYTES` packet on `feedback_pg`
/// (what the fabric's headroom check counts, `crate::headroom`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Feedback {
    /// TCP, DCTCP, HPCC, PowerTCP: an ACK per data packet received, retransmissions
    /// included, so as many as the run lets through.
    Acks,
    /// DCQCN: a CNP per CE-marked packet, at most one per `N` (`n_ns`) per flow.
    Cnps,
}

impl Feedback {
    /// The feedback of a flow of `packets` data packets running `t`, and the most packets
    /// of it the flow's receiver can send in `end_cycle` cycles at `clock_hz`: ACKs without
    /// bound; CNPs at most one per data packet and one per `N` from the first
    /// (`data_in`: `now >= last + n`). `None` for open loop.
    pub(crate) fn of(
        t: &FabricTransport,
        packets: u64,
        end_cycle: u64,
        clock_hz: u64,
    ) -> Option<(Feedback, u64)> {
        match t {
            FabricTransport::OpenLoop => None,
            FabricTransport::Tcp(_) | FabricTransport::IntCc(_) => Some((Feedback::Acks, u64::MAX)),
            FabricTransport::Dcqcn(p) => {
                let n = cycles(p.n_ns, clock_hz);
                let cnps = end_cycle
                    .checked_div(n)
                    .map_or(packets, |k| packets.min(k + 1));
                Some((Feedback::Cnps, cnps))
            }
        }
    }
}

/// Bytes of packet `k` of a message of `size` bytes sent in packets of `mtu`: the last
/// one carries the rest, at least `MIN_PACKET_BYTES` (padded).
pub(crate) fn packet_len(size: u64, k: u64, mtu: u32) -> u16 {
    let rest = size - k * mtu as u64;
    (rest.min(mtu as u64) as u32).max(MIN_PACKET_BYTES) as u16
}

/// The sender of a data flow of `packets` packets running `t`, from a host whose link is
/// `line_bps`.
pub(crate) fn sender(t: &FabricTransport, packets: u64, line_bps: u64, d: &Derived) -> Sender {
    let hz = d.clock_hz;
    match *t {
        FabricTransport::OpenLoop => Sender::OpenLoop,
        FabricTransport::Tcp(p) => {
            let reno = Reno::new(
                p.init_cwnd,
                cycles(p.min_rto_us * 1000, hz),
                cycles(p.max_rto_us * 1000, hz),
                packets,
                p.karn,
            );
            let reno = match p.ns2 {
                Some(n) => reno.with_ns2(n.in_cycles(hz)),
                None => reno,
            };
            let reno = match p.dctcp_shift_g {
                Some(g) => reno.with_dctcp(g),
                None => reno,
            };
            Sender::Tcp(Box::new(TcpSender {
                reno,
                timer: None,
                rto_event: None,
                acked: 0,
            }))
        }
        FabricTransport::IntCc(p) => {
            let p = IntCcParams {
                line_bps,
                rate_ai_bps: p.rate_ai_bps.min(line_bps),
                min_rate_bps: p.min_rate_bps.min(line_bps),
                ..p
            };
            Sender::IntCc(Box::new(IntSender::new(p, hz)))
        }
        FabricTransport::Dcqcn(p) => {
            let p = DcqcnParams {
                line_bps,
                min_rate_bps: p.min_rate_bps.min(line_bps),
                ..p
            };
            Sender::Dcqcn(Box::new(DcqcnSender {
                rp: Rp::new(p),
                next_send: 0.0,
                sent: 0,
                alpha_deadline: None,
                rate_deadline: None,
                k: cycles(p.k_ns, hz).max(1),
                t: cycles(p.t_ns, hz).max(1),
                n: cycles(p.n_ns, hz),
            }))
        }
    }
}

impl FlowState {
    /// Whether this is a data flow with a closed-loop transport (its receiver answers).
    fn closed_loop(&self) -> bool {
        matches!(
            self.sender,
            Sender::Tcp(_) | Sender::Dcqcn(_) | Sender::IntCc(_)
        )
    }

    /// Bytes of packet `k` of the flow ([`packet_len`]).
    fn len_of(&self, k: u64, mtu: u32) -> u16 {
        packet_len(self.flow.size, k, mtu)
    }

    /// Hand a packet of `len` bytes carrying `value` to `nic`, whose next step is in cycle
    /// `at` or before.
    fn transmit(&mut self, nic: &mut Nic, len: u16, ecn: Ecn, value: u64, at: u64) {
        let hdr = PacketHdr {
            seq: self.next_tx,
            len,
            ecn,
            ..self.header
        };
        nic.carried_out.push(Carry {
            flow: hdr.flow,
            tx: self.next_tx,
            value: Value::Packet(value),
        });
        self.next_tx = self.next_tx.wrapping_add(1);
        nic.partner.enqueue(hdr);
        nic.wake = nic.wake.min(at);
    }
}

/// Flow `f` starts at `now` at its source's `nic`.
pub(crate) fn start(nic: &mut Nic, flows: &mut [FlowState], f: usize, now: u64, d: &Derived) {
    let fs = &mut flows[f];
    match &mut fs.sender {
        Sender::OpenLoop => {
            let run = PacketRun::message(fs.header, fs.flow.size, d.cfg.mtu_bytes);
            nic.partner.enqueue(run);
            nic.wake = now;
        }
        Sender::Tcp(_) => tcp_send(nic, fs, f, now, d, false),
        Sender::Dcqcn(s) => {
            s.next_send = now as f64;
            nic.events.push(now, f as u32, Event::Send);
        }
        Sender::IntCc(s) => nic.events.push(s.start(now), f as u32, Event::Send),
        Sender::Feedback { .. } | Sender::Ecm => {
            unreachable!("feedback and ECM flows do not start")
        }
    }
}

/// TCP: send what the window allows, then run the timer as RFC 6298 says: restart it on
/// new data acknowledged (`restart`) or a timeout, start it when data goes out with none
/// running, stop it when nothing is outstanding.
fn tcp_send(nic: &mut Nic, fs: &mut FlowState, f: usize, now: u64, d: &Derived, restart: bool) {
    let Sender::Tcp(t) = &mut fs.sender else {
        return;
    };
    t.reno.now = now;
    let ecn = tcp_ecn(&t.reno);
    // One packet at a time, the sender re-borrowed each turn: no list of sequence numbers
    // allocated per ACK.
    while let Sender::Tcp(t) = &mut fs.sender {
        let Some(seq) = t.reno.next_send() else {
            break;
        };
        let len = fs.len_of(seq, d.cfg.mtu_bytes);
        fs.transmit(nic, len, ecn, seq, now);
    }
    let Sender::Tcp(t) = &mut fs.sender else {
        return;
    };
    if !t.reno.outstanding() {
        t.timer = None;
    } else if restart || t.timer.is_none() {
        let deadline = now + t.reno.rto();
        t.timer = Some(deadline);
        rto_at(nic, t, f, deadline);
    }
}

/// Queue the flow's `Rto` event at `deadline` unless an earlier one is queued (it will
/// re-queue itself at the deadline then).
fn rto_at(nic: &mut Nic, t: &mut TcpSender, f: usize, deadline: u64) {
    if t.rto_event.is_none_or(|e| e > deadline) {
        t.rto_event = Some(deadline);
        nic.events.push(deadline, f as u32, Event::Rto(deadline));
    }
}

/// DCTCP's packets are ECN-capable, Reno's are not.
fn tcp_ecn(reno: &Reno) -> Ecn {
    if reno.dctcp.is_some() {
        Ecn::Ect0
    } else {
        Ecn::NotEct
    }
}

/// The events of `nic` due at `now`.
pub(crate) fn fire_due(nic: &mut Nic, flows: &mut [FlowState], now: u64, d: &Derived) {
    while let Some((_, f, ev)) = nic.events.pop_due(now) {
        let fs = &mut flows[f as usize];
        match (&mut fs.sender, ev) {
            (Sender::Tcp(t), Event::Rto(at)) => {
                if t.rto_event == Some(at) {
                    t.rto_event = None;
                }
                match t.timer {
                    Some(deadline) if deadline <= now => {
                        t.reno.on_timeout();
                        tcp_send(nic, fs, f as usize, now, d, true);
                    }
                    Some(deadline) => rto_at(nic, t, f as usize, deadline),
                    None => {}
                }
            }
            (Sender::Dcqcn(_), Event::Send) => dcqcn_send(nic, fs, f as usize, now, d),
            (Sender::IntCc(s), Event::Send) if s.due(now) => {
                int_cc_send(nic, fs, f as usize, now, d);
            }
            (Sender::Dcqcn(s), Event::AlphaTimer(at)) if s.alpha_deadline == Some(at) => {
                s.rp.on_alpha_timer();
                s.alpha_deadline = (!dcqcn_done(s, fs.packets)).then_some(at + s.k);
                if let Some(next) = s.alpha_deadline {
                    nic.events.push(next, f, Event::AlphaTimer(next));
                }
            }
            (Sender::Dcqcn(s), Event::RateTimer(at)) if s.rate_deadline == Some(at) => {
                s.rp.on_rate_timer();
                s.rate_deadline = (!dcqcn_done(s, fs.packets)).then_some(at + s.t);
                if let Some(next) = s.rate_deadline {
                    nic.events.push(next, f, Event::RateTimer(next));
                }
            }
            // A timer that moved or stopped since it was set.
            _ => {}
        }
    }
}

/// Every packet of the flow is sent: its timers stop.
fn dcqcn_done(s: &DcqcnSender, packets: u64) -> bool {
    s.sent >= packets
}

/// DCQCN: the next paced packet, and the send after it at `R_C`.
fn dcqcn_send(nic: &mut Nic, fs: &mut FlowState, f: usize, now: u64, d: &Derived) {
    let packets = fs.packets;
    let Sender::Dcqcn(s) = &mut fs.sender else {
        return;
    };
    if s.sent >= packets {
        return;
    }
    let k = s.sent;
    s.sent += 1;
    let len = fs.len_of(k, d.cfg.mtu_bytes);
    let Sender::Dcqcn(s) = &mut fs.sender else {
        return;
    };
    if s.rate_deadline.is_some() {
        s.rp.on_sent(len as u64);
    }
    let bits = (len as u32 + d.cfg.wire_overhead_bytes) as f64 * 8.0;
    s.next_send = s.next_send.max(now as f64 - 1.0) + bits * d.clock_hz as f64 / s.rp.rc;
    let next = (s.next_send.ceil() as u64).max(now + 1);
    let more = s.sent < packets;
    fs.transmit(nic, len, Ecn::Ect0, k, now);
    if more {
        nic.events.push(next, f as u32, Event::Send);
    }
}

/// HPCC, PowerTCP: a packet if the window allows (an ACK wakes a sender it holds), then
/// the next `Send` at the rate limiter's time.
fn int_cc_send(nic: &mut Nic, fs: &mut FlowState, f: usize, now: u64, d: &Derived) {
    let packets = fs.packets;
    let Sender::IntCc(s) = &mut fs.sender else {
        return;
    };
    if s.packets_sent() >= packets || !s.window_open() {
        return;
    }
    let k = s.packets_sent();
    let len = fs.len_of(k, d.cfg.mtu_bytes);
    let Sender::IntCc(s) = &mut fs.sender else {
        return;
    };
    let wire = len as u32 + d.cfg.wire_overhead_bytes;
    if let Some(at) = s.sent(now, len as u32, wire) {
        nic.events.push(at, f as u32, Event::Send);
    }
    fs.transmit(nic, len, Ecn::NotEct, k, now);
}

/// The switch at `hop` on flow `s.flow`'s path stamped `s` on a packet: an HPCC or
/// PowerTCP data packet carries it to its receiver (other flows' records, the ACKs'
/// among them, are not read: ns-3 stamps data packets only, `switch-node.cc` line 266).
pub(crate) fn stamped(flows: &[FlowState], switch: usize, s: &IntStamp) -> Option<Carry> {
    let fs = flows.get(s.flow as usize)?;
    if !matches!(fs.sender, Sender::IntCc(_)) {
        return None;
    }
    let hop = fs.hops.iter().position(|h| h.0 == switch)?;
    Some(Carry {
        flow: s.flow,
        tx: s.seq,
        value: Value::Hop(hop as u8, s.hop),
    })
}

/// The records transmission `tx` carries, taken from `q` in path order (those of earlier
/// transmissions, lost, go with them).
fn take_hops(q: &mut CarriedHops, tx: u32) -> IntHops {
    let mut mine = [(0u8, IntHop::default()); IntHops::MAX + 1];
    let mut n = 0;
    q.retain(|&(t, hop, record)| {
        if t == tx {
            if let Some(slot) = mine.get_mut(n) {
                *slot = (hop, record);
            }
            n += 1;
        }
        t.wrapping_sub(tx) as i32 > 0
    });
    let found = &mut mine[..n.min(IntHops::MAX + 1)];
    found.sort_by_key(|e| e.0);
    let mut hops = IntHops::default();
    for &(_, record) in found.iter() {
        hops.push(record);
    }
    hops
}

/// A whole packet of flow `f` (`hdr` its last cell's header) reached `nic`'s host at
/// `now` (a host that answers takes it then; one that does not, maybe later): the receiver
/// of a data flow takes it (and answers), the sender of a feedback flow's data flow reacts.
pub(crate) fn packet_in(
    nic: &mut Nic,
    flows: &mut [FlowState],
    f: usize,
    hdr: &PacketHdr,
    now: u64,
    d: &Derived,
) {
    let fs = &mut flows[f];
    if let Sender::Ecm = fs.sender {
        ecm_in(nic, &mut fs.recv, hdr.seq, now);
        return;
    }
    let hops = take_hops(&mut fs.recv.hops, hdr.seq);
    let value = if fs.closed_loop() || matches!(fs.sender, Sender::Feedback { .. }) {
        let carried = &mut fs.recv.carried;
        let found = std::iter::from_fn(|| carried.pop_front()).find(|&(tx, _)| tx == hdr.seq);
        match found {
            Some((_, v)) => v,
            None => return,
        }
    } else {
        hdr.seq as u64
    };
    match fs.sender {
        Sender::Feedback { of } => feedback_in(nic, flows, of, value, hops, now, d),
        _ => data_in(nic, flows, f, value, hdr.ecn == Ecn::Ce, hops, now),
    }
}

/// ECM frame `tx` of an ECM flow reached its flow's source host at `now`: the NIC's
/// reaction point takes the frame it carries (older ones were lost on the way) and acts
/// on it at the NIC's next step.
fn ecm_in(nic: &mut Nic, recv: &mut FlowRecv, tx: u32, now: u64) {
    let q = &mut recv.ecm;
    let Some((_, sent, frame)) = std::iter::from_fn(|| q.pop_front()).find(|e| e.0 == tx) else {
        return;
    };
    recv.ecm_delay.add(now - sent);
    nic.partner.rp_mut().ecm_arrives(now, frame);
    nic.wake = nic.wake.min(now + 1);
}

/// The receiver of data flow `f` takes packet `k`, CE-marked or not, with the hop records
/// it carried, and answers.
fn data_in(
    nic: &mut Nic,
    flows: &mut [FlowState],
    f: usize,
    k: u64,
    ce: bool,
    hops: IntHops,
    now: u64,
) {
    let fs = &mut flows[f];
    let r = &mut fs.recv.receiver;
    if k == r.rcv_nxt {
        r.rcv_nxt += 1;
        while r.out_of_order.remove(&r.rcv_nxt) {
            r.rcv_nxt += 1;
        }
    } else if k > r.rcv_nxt {
        r.out_of_order.insert(k);
    }
    if r.rcv_nxt == fs.packets && fs.recv.done_at.is_none() {
        fs.recv.done_at = Some(now);
    }
    let answer = match &fs.sender {
        Sender::Tcp(_) => Some(r.rcv_nxt | if ce { ECE } else { 0 }),
        Sender::Dcqcn(s) if ce && r.last_cnp.is_none_or(|l| now >= l + s.n) => {
            r.last_cnp = Some(now);
            Some(CNP)
        }
        // Every packet ACKed (`L2_ACK_INTERVAL 1`) with its records.
        Sender::IntCc(_) => Some(k),
        _ => None,
    };
    if let (Some(v), Some(fb)) = (answer, fs.feedback) {
        let len = MIN_PACKET_BYTES as u16;
        let fb = &mut flows[fb];
        for (hop, &record) in hops.as_slice().iter().enumerate() {
            nic.carried_out.push(Carry {
                flow: fb.header.flow,
                tx: fb.next_tx,
                value: Value::Hop(hop as u8, record),
            });
        }
        fb.transmit(nic, len, Ecn::NotEct, v, now + 1);
    }
}

/// The sender of data flow `f` takes an ACK (with the hop records it echoes) or a CNP.
fn feedback_in(
    nic: &mut Nic,
    flows: &mut [FlowState],
    f: usize,
    v: u64,
    hops: IntHops,
    now: u64,
    d: &Derived,
) {
    let fs = &mut flows[f];
    match &mut fs.sender {
        // The ACK arrives after this cycle's events fired: the earliest send is the next
        // cycle.
        Sender::IntCc(s) => {
            if let Some(at) = s.ack(now, v as u32, hops, now + 1) {
                nic.events.push(at, f as u32, Event::Send);
            }
        }
        Sender::Tcp(t) => {
            t.reno.now = now;
            let ack = v & !ECE;
            let restart = ack > t.acked;
            t.acked = ack.max(t.acked);
            let resend = t.reno.on_ack(ack, v & ECE != 0);
            let ecn = tcp_ecn(&t.reno);
            if let Some(seq) = resend {
                let len = fs.len_of(seq, d.cfg.mtu_bytes);
                fs.transmit(nic, len, ecn, seq, now + 1);
            }
            tcp_send(nic, fs, f, now, d, restart);
        }
        Sender::Dcqcn(s) if v == CNP => {
            s.rp.on_cnp();
            let (a, r) = (now + s.k, now + s.t);
            s.alpha_deadline = Some(a);
            s.rate_deadline = Some(r);
            nic.events.push(a, f as u32, Event::AlphaTimer(a));
            nic.events.push(r, f as u32, Event::RateTimer(r));
        }
        _ => {}
    }
}

/// What a sender reports at the end of a run.
///
/// Read back (an MPI rank's report, `crate::report::FlowReport`) without `transport`, which
/// the reader takes from its own copy of the flow: the name is fixed at the build.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SenderStats {
    /// `open_loop`, `tcp`, `dctcp`, `dcqcn`, `hpcc`, `powertcp` or `theta_powertcp`.
    #[serde(skip_deserializing)]
    pub transport: &'static str,
    /// TCP: retransmissions, timeouts, the window at the end; DCTCP: its ECE ACKs and cuts.
    pub retransmits: u64,
    pub timeouts: u64,
    pub cwnd: f64,
    pub ece_acks: u64,
    /// DCTCP's window cuts or DCQCN's rate cuts.
    pub cuts: u64,
    /// DCQCN: CNPs received, and `R_C` at the end, Gb/s; HPCC, PowerTCP: the sending rate.
    pub cnps: u64,
    pub rate_gbps: f64,
    /// HPCC, PowerTCP: ACKs received, those with hop records, and `U` or `Gamma` at the end.
    #[serde(skip_serializing_if = "is_zero")]
    pub acks: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub acks_with_int: u64,
    #[serde(skip_serializing_if = "is_zero_f")]
    pub signal: f64,
}

pub(crate) fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_f(v: &f64) -> bool {
    *v == 0.0
}

impl Sender {
    pub(crate) fn stats(&self) -> SenderStats {
        match self {
            Sender::Tcp(t) => {
                let reno = &t.reno;
                let dctcp = reno.dctcp.as_ref();
                SenderStats {
                    transport: if dctcp.is_some() { "dctcp" } else { "tcp" },
                    retransmits: reno.retransmits,
                    timeouts: reno.timeouts,
                    cwnd: reno.cwnd,
                    ece_acks: dctcp.map_or(0, |x| x.ece_acks),
                    cuts: dctcp.map_or(0, |x| x.cuts),
                    ..SenderStats::default()
                }
            }
            Sender::Dcqcn(s) => SenderStats {
                transport: "dcqcn",
                cuts: s.rp.cuts,
                cnps: s.rp.cnps,
                rate_gbps: s.rp.rc / 1e9,
                ..SenderStats::default()
            },
            Sender::IntCc(s) => SenderStats {
                transport: s.law_name(),
                acks: s.acks().0,
                acks_with_int: s.acks().1,
                signal: s.signal(),
                rate_gbps: s.rate_gbps(),
                ..SenderStats::default()
            },
            _ => SenderStats {
                transport: "open_loop",
                ..SenderStats::default()
            },
        }
    }
}

/// Queue of `(transmission, value)` a flow's receiver keeps of its packets in flight.
pub(crate) type Carried = VecDeque<(u32, u64)>;

/// Queue of `(transmission, cycle sent, frame)` an ECM flow's receiver keeps of its
/// frames in flight.
pub(crate) type CarriedEcm = VecDeque<(u32, u64, EcmFrame)>;

/// Delays of the ECM frames a flow's source received: from the congestion point's cycle
/// to the source host's, cycles.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EcmDelays {
    pub frames: u64,
    pub sum: u64,
    pub min: u64,
    pub max: u64,
}

impl EcmDelays {
    fn add(&mut self, d: u64) {
        self.min = if self.frames == 0 { d } else { self.min.min(d) };
        self.max = self.max.max(d);
        self.frames += 1;
        self.sum += d;
    }

    /// Both sets of delays.
    pub fn merge(&mut self, o: &Self) {
        if o.frames > 0 {
            self.min = if self.frames == 0 {
                o.min
            } else {
                self.min.min(o.min)
            };
        }
        self.max = self.max.max(o.max);
        self.frames += o.frames;
        self.sum += o.sum;
    }
}

/// What packet `tx` of `flow` carries, on its way to the receiver's switch (the model's
/// header has no room for it): from the sender's switch, its value; from each switch on
/// its path that stamps INT, its hop record. It travels beside the packet and arrives
/// first: after the sending (stamping) cycle, or at the end of a parallel run's window,
/// and the packet needs at least a link's delay more.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct Carry {
    pub flow: u32,
    pub tx: u32,
    pub value: Value,
}

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) enum Value {
    /// The sequence or ACK number the sender put in.
    Packet(u64),
    /// The record of the hop at this index on the data flow's path.
    Hop(u8, IntHop),
    /// An ECM frame and the cycle its congestion point sent it.
    Ecm(u64, EcmFrame),
}

impl Carry {
    /// It joins its flow's receiver's queues.
    pub(crate) fn deliver(self, flows: &mut [FlowState]) {
        let recv = &mut flows[self.flow as usize].recv;
        match self.value {
            Value::Packet(v) => recv.carried.push_back((self.tx, v)),
            Value::Hop(hop, record) => recv.hops.push((self.tx, hop, record)),
            Value::Ecm(sent, frame) => recv.ecm.push_back((self.tx, sent, frame)),
        }
    }
}
