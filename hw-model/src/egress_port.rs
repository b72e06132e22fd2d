//! Egress transmitters: each port serialises PFC frames and packets at line rate.
//!
//! A packet's cell `k` must be read from the SRAM before the wire reaches its first byte;
//! reading a cell frees it (pointer back to the free list, counters decremented) and issues
//! the read of its next-pointer, which arrives `sram_read_latency` cycles later. If the
//! wire gets to a cell that has not been read (no read grant, or its pointer not back
//! yet) the wire stalls for the cycle and the stall is counted.
//!
//! The egress phase visits the ports with something to do in round-robin order from
//! `read_rr` (one port further each cycle); `sram_read_cells_per_cycle` read grants are
//! counted down over the visits (a chain of the phase table). A visit takes a pending PFC
//! frame first, then asks the port's scheduler (`sched/`) for a queue, dequeues its head
//! packet (through HCF's select, and telling HCF, the queue's ECM congestion point and its
//! ECN marker, which may mark it CE),
//! and reads cells as the wire reaches them.

use crate::accounting::{Accounting, Update};
use crate::config::{Derived, MAX_PORTS, PFC_FRAME_WIRE_BYTES, QUEUES};
use crate::dirty::Dirty;
use crate::ecn_marker::EcnMarker;
use crate::free_list::FreeList;
use crate::int_stamp::{IntStamp, IntStamper};
use crate::packet_queue::PacketQueues;
use crate::pfc::fsm::PfcFsm;
use crate::pfc::rx::PfcRx;
use crate::policy::BufferPolicy;
use crate::ports::{
    advance_rr, each_port, mask, next_rr, rotate_ports, unrotate, Dequeue, EcnLook, PfcTakes,
};
use crate::sched::dwrr::Dwrr;
use crate::sched::hcf::Hcf;
use crate::stats::Stats;
use crate::wires::{Beat, Departure, Ecn, Outputs, PacketHdr, PfcFrame};
use rtl::{Block, BlockError, Clocked, PhaseAccumulator, Visit};

/// The packet on a port's wire, as its handle: its header stays in the descriptor table
/// until its first cell is read ([`EgressPort::hdr`]).
#[derive(Debug, Clone, Copy)]
pub struct DataTx {
    /// Handle: the head cell, the index of its descriptor.
    pub head: u32,
    pub ncells: u16,
    /// Bytes on the wire (the end of the packet), from its descriptor.
    pub len: u16,
    /// Egress queue the packet came from.
    pub queue: u8,
    /// Next cell to read.
    pub k: u16,
    /// Pointer of cell `k`, once known.
    pub cell_ptr: Option<u32>,
    /// Pointer of cell `k - 1` (checker access while the link read is in flight).
    pub last_ptr: u32,
    /// Cycle the next-pointer of cell `k - 1` is on the link RAM's output.
    pub ptr_at: u64,
    /// The ECN marker marked the packet CE at its dequeue: the transmitter carries the bit
    /// into the header it reads from the descriptor table (which is not written).
    pub ce: bool,
}

impl DataTx {
    /// `hdr`, the packet's header as the descriptor table holds it, as it leaves: with CE
    /// if the marker marked it at its dequeue.
    #[inline(always)]
    pub fn marked(&self, mut hdr: PacketHdr) -> PacketHdr {
        if self.ce {
            hdr.ecn = Ecn::Ce;
        }
        hdr
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Tx {
    Idle,
    Pfc(PfcFrame),
    Data(DataTx),
}

impl Tx {
    /// Waveform encoding: 0 idle, 1 PFC frame, 2 data.
    pub fn code(&self) -> u64 {
        match self {
            Tx::Idle => 0,
            Tx::Pfc(_) => 1,
            Tx::Data(_) => 2,
        }
    }
}

/// A port is evaluated only in cycles where something can happen to it: its wake cycle
/// (next cell read point, end of frame, SRAM data due; idle: its queue's refetch done), or,
/// idle, a kick from outside (a packet enqueued, a PFC frame to send, a pause change). In between, the wire's phase
/// accumulator is advanced in one step by the cycles skipped, which gives exactly the
/// same bit times as ticking every cycle.
#[derive(Debug, Clone)]
pub struct EgressPort {
    pub tx: Tx,
    /// The header of a packet of more than one cell, latched from the descriptor table as
    /// its first cell is read: that read frees the head cell, the entry's index, which may
    /// then be reused. The later cells' departures carry it. A one-cell packet's only
    /// departure reads the table.
    pub hdr: PacketHdr,
    pub wire: PhaseAccumulator,
    /// Last cycle the port was evaluated.
    pub last_visit: u64,
}

impl EgressPort {
    pub fn new(rate_bps: u64, clock_hz: u64) -> Self {
        Self {
            tx: Tx::Idle,
            hdr: PacketHdr::default(),
            wire: PhaseAccumulator::new(rate_bps, clock_hz),
            last_visit: 0,
        }
    }

    /// The header of `t`, the packet on this port (checker access): the table's until its
    /// first cell is read, then the latched one.
    pub fn header(&self, t: &DataTx, queues: &PacketQueues) -> PacketHdr {
        if t.k == 0 {
            t.marked(queues.desc_of(t.head).hdr)
        } else {
            self.hdr
        }
    }
}

/// The transmitters of the switch.
#[derive(Debug, Clone)]
pub struct Egress {
    /// The transmitter and the scheduler of each port, sized for the largest switch and
    /// indexed by a mask (no bounds check in a visit); the slots from `n` on are never
    /// visited.
    ports: Box<[EgressPort; MAX_PORTS]>,
    sched: Box<[Dwrr; MAX_PORTS]>,
    n: usize,
    read_cells: u32,
    read_rr: usize,
    /// Ports whose transmitter is idle. Only they act on a kick: a busy port always has a
    /// wake, at which it takes pending frames, sees new packets and its pause mask.
    idle: u64,
    /// Per port, the next cycle it must be evaluated (`u64::MAX`: only on a kick); sized
    /// for the largest switch and indexed by a mask, so the phase's scan of the timed
    /// ports is a walk of one array without bounds checks.
    wake: [u64; MAX_PORTS],
    /// Ports with a finite `wake`, and a lower bound of their wakes (exact after a cycle
    /// in which a port was due): the phase looks at no port before that cycle unless
    /// kicked.
    timed: u64,
    wake_min: u64,
    latency: u64,
    cell_bits: u64,
    overhead_bits: u64,
    /// Per port, the queues whose departures other blocks watch (bit `q`: an HCF block,
    /// an ECM congestion point or an ECN marking queue): a dequeue from any other queue
    /// skips the three lookups (INT stamps every dequeue without them). Fixed by the configuration ([`Egress::hook_queues`]).
    hooked: [u8; MAX_PORTS],
}

/// What the transmitters read, and the ports of other blocks they drive.
///
/// The clocking contract of each `&mut`: `free`, `acct` and `policy` (L2BM's recorders)
/// are push ports whose writes land at the edge; `queues` is the dequeue port, changed in
/// the cycle because the write stage's enqueue reads it after the dequeues (the
/// write-after-read bypass of the phase table) and the refetch and link reads start now
/// (kept as a handle: its value form costs more, see the field).
/// ECN's dequeue mark is decided inside the visit, because it is in the header of a cell
/// that may leave in the same visit, from the marker's registers and the cycle's earlier
/// dequeues (`EcnMarker::look_at`). What the other blocks count of a dequeue (ECN's look
/// included), and the PFC frames taken, go out as values in [`EgressOut`].
pub struct EgressIn<'a, P> {
    /// Pending PFC frames (the chain from PFC generation; what is taken goes out as
    /// [`EgressOut::takes`]).
    pub fsm: &'a PfcFsm,
    /// Received pause mask (registered) and the ports whose mask changed at the last edge.
    pub rx: &'a PfcRx,
    /// Dequeue port, refetch, cell link RAM reads. A handle: the dequeues as values
    /// (decided from the registers, applied by the write stage before its enqueues) cost
    /// more instructions (docs/architecture.md, "Blocks", `EgressIn::queues`).
    pub queues: &'a mut PacketQueues,
    /// HCF: the HP select (departures go out as [`EgressOut::dequeues`]).
    pub hcf: &'a Hcf,
    /// ECN: marking on dequeue (its registers; the look goes out in [`Dequeue`]).
    pub ecn: &'a EcnMarker,
    /// INT: the registers the stamps of the dequeued packets read (the stamps go out as
    /// [`EgressOut::stamps`]; what it reads of `acct` is registered). Its cost:
    /// docs/architecture.md, "Blocks", `EgressIn::int`.
    pub int: &'a IntStamper,
    pub policy: &'a mut P,
    /// Push port (lands at the edge).
    pub free: &'a mut FreeList,
    /// Release port (lands at the edge).
    pub acct: &'a mut Accounting,
    pub d: &'a Derived,
}

/// What the transmitters produce.
pub struct EgressOut<'a> {
    pub out: &'a mut Outputs,
    /// The dequeues from watched queues ([`Egress::hook_queues`]), for the edge of the
    /// blocks that count them.
    pub dequeues: &'a mut Vec<Dequeue>,
    /// The INT stamps of the packets dequeued, for INT's edge and the testbench.
    pub stamps: &'a mut Vec<IntStamp>,
    /// The PFC frames taken, for PFC generation's edge.
    pub takes: &'a mut PfcTakes,
    pub stats: &'a mut Stats,
    pub dirty: &'a mut Dirty,
}

impl Egress {
    pub fn new(d: &Derived) -> Self {
        // A slot beyond the switch's ports gets a one-bit-per-cycle line it never uses.
        let rate = |p: usize| d.rate_bps.get(p).copied().unwrap_or(d.clock_hz);
        Self {
            ports: Box::new(std::array::from_fn(|p| {
                EgressPort::new(rate(p), d.clock_hz)
            })),
            sched: Box::new(std::array::from_fn(|_| {
                Dwrr::new(d.cfg.dwrr_quantum_bytes, d.cfg.control_queue)
            })),
            n: d.ports,
            read_cells: d.cfg.sram_read_cells_per_cycle,
            read_rr: 0,
            idle: mask(d.ports),
            wake: [u64::MAX; MAX_PORTS],
            timed: 0,
            wake_min: u64::MAX,
            latency: d.cfg.sram_read_latency as u64,
            cell_bits: d.cfg.cell_bytes as u64 * 8,
            overhead_bits: d.cfg.packet_overhead_bytes as u64 * 8,
            hooked: [0; MAX_PORTS],
        }
    }

    /// Mark the queues `(p, q)` for which `watched(p, q)` holds: their departures are told
    /// to HCF, ECM and ECN (each block ignores a queue it does not have).
    pub fn hook_queues(&mut self, watched: impl Fn(usize, usize) -> bool) {
        for p in 0..self.n {
            self.hooked[p] = (0..QUEUES).fold(0, |m, q| m | (watched(p, q) as u8) << q);
        }
    }

    /// The next cycle port `p` must be evaluated (`u64::MAX`: only on a kick).
    #[inline]
    pub fn wake(&self, p: usize) -> u64 {
        self.wake[p % MAX_PORTS]
    }

    /// The transmitters of the switch's ports.
    pub fn ports(&self) -> &[EgressPort] {
        &self.ports[..self.n]
    }

    /// The transmitter of port `p`.
    #[inline]
    pub fn port(&self, p: usize) -> &EgressPort {
        &self.ports[p % MAX_PORTS]
    }

    /// The scheduler of port `p`.
    pub fn sched(&self, p: usize) -> &Dwrr {
        &self.sched[p % MAX_PORTS]
    }

    /// No port must be evaluated without a kick before this cycle (`u64::MAX`: none).
    #[inline]
    pub fn next_wake(&self) -> u64 {
        self.wake_min
    }

    /// Jump over `cycles` cycles in which no port was evaluated: only the round-robin
    /// pointer moves (one port a cycle).
    pub fn skip(&mut self, cycles: u64) {
        self.read_rr = advance_rr(self.read_rr, cycles, self.n);
    }

    /// The `idle` mask is `Tx::Idle`, port by port, and every busy port has a wake: a kick
    /// acts only on an idle port, so a busy one without a wake would never be visited
    /// again (checked after every cycle in debug builds).
    fn idle_mask_holds(&self) -> bool {
        self.ports().iter().enumerate().all(|(p, e)| {
            let idle = matches!(e.tx, Tx::Idle);
            (self.idle >> p) & 1 == idle as u64 && (idle || self.wake(p) != u64::MAX)
        })
    }

    /// `egress.pNN.{tx_state, tx_queue}`.
    pub fn probe_port<V: Visit>(&self, p: usize, v: &mut V) {
        let tx = &self.port(p).tx;
        v.wire("tx_state", 2, tx.code());
        let queue = match tx {
            Tx::Data(t) => t.queue as u64,
            _ => 0,
        };
        v.wire("tx_queue", 3, queue);
    }

    /// The visit of port `p` in cycle `now` when it only ends the packet on its wire: every
    /// cell read, the wire at its end, and nothing to start after it (no PFC frame, no
    /// eligible queue). Done here, in the phase, without [`Egress::visit`]'s call and
    /// bundle, with the same result; `false` (nothing changed) for any other visit.
    #[inline(always)]
    fn ends_quietly<P: BufferPolicy>(
        &mut self,
        now: u64,
        p: usize,
        input: &EgressIn<'_, P>,
        stats: &mut Stats,
    ) -> bool {
        let port = &mut self.ports[p % MAX_PORTS];
        let Tx::Data(t) = &port.tx else {
            return false;
        };
        if t.k != t.ncells {
            return false;
        }
        let bits = input.d.wire_bits(t.len as u32);
        // The skipped cycles and this one's tick.
        let mut wire = port.wire;
        wire.advance(now - port.last_visit);
        if !wire.reached(bits) || input.fsm.has_pending(p) || eligible(p, input).0 != 0 {
            return false;
        }
        port.wire = wire;
        port.last_visit = now;
        end_packet(port, bits, stats);
        self.wake[p % MAX_PORTS] = input.queues.refill_at(p);
        true
    }

    /// One visit of port `p` in cycle `now`, its queues' refetch advanced to `now`. The
    /// port's transmitter state is changed in place.
    fn visit<P: BufferPolicy>(
        &mut self,
        now: u64,
        p: usize,
        budget: &mut u32,
        input: &mut EgressIn<'_, P>,
        out: &mut EgressOut<'_>,
    ) -> Result<(), String> {
        let (cell_bits, ovh_bits, latency) = (self.cell_bits, self.overhead_bits, self.latency);
        let port = &mut self.ports[p % MAX_PORTS];
        let sched = &mut self.sched[p % MAX_PORTS];
        let was_idle = matches!(port.tx, Tx::Idle);
        if !was_idle {
            // The cycles since the last visit were all plain transfer cycles.
            let skipped = now - port.last_visit - 1;
            port.wire.advance(skipped);
        }
        port.last_visit = now;
        let mut ticked = false;
        let mut wake = u64::MAX;
        let own = Own {
            hooked: self.hooked[p % MAX_PORTS],
            dequeues: out.dequeues.len(),
            stamps: out.stamps.len(),
        };
        for _ in 0..2 {
            if matches!(port.tx, Tx::Idle)
                && !start_tx(now, p, port, sched, was_idle, own, input, out)?
            {
                break;
            }
            match &mut port.tx {
                Tx::Idle => break,
                Tx::Pfc(frame) => {
                    let frame = *frame;
                    if !ticked {
                        port.wire.tick();
                        ticked = true;
                    }
                    let bits = PFC_FRAME_WIRE_BYTES as u64 * 8;
                    if !port.wire.reached(bits) {
                        wake = now + port.wire.ticks_until(bits);
                        break;
                    }
                    port.wire.consume(bits);
                    port.tx = Tx::Idle;
                    let stats = &mut *out.stats;
                    if frame.paused() != 0 {
                        stats.pfc_pause_frames_tx += 1;
                    } else {
                        stats.pfc_resume_frames_tx += 1;
                    }
                    stats.pfc_sent(p, &frame);
                    stats.pfc_pause_events += frame.paused().count_ones() as u64;
                    stats.pfc_resume_events += frame.resumed().count_ones() as u64;
                    out.out.pfc_tx.push((p as u8, frame));
                }
                Tx::Data(t) => {
                    let n = t.ncells;
                    let read_point = |k: u16| (k as u64 * cell_bits).saturating_sub(ovh_bits);
                    if n == 1 {
                        // A one-cell packet: its only cell's read point is the start and
                        // its pointer the handle, so it needs a read grant and nothing else.
                        if t.k == 0 {
                            if *budget == 0 {
                                out.stats.read_stall_cycles += 1;
                                wake = now + 1;
                                break;
                            }
                            *budget -= 1;
                            let hdr = first_header(now, p, t, input);
                            cell_leaves(p, &hdr, t, t.head, input, out);
                        }
                    } else if t.k < n {
                        if t.cell_ptr.is_none() {
                            if now == t.ptr_at {
                                t.cell_ptr = input.queues.cell_link.rdata(p, now);
                            } else if now > t.ptr_at {
                                return Err(format!("egress p{p}: next-pointer read data missed"));
                            }
                        }
                        if port.wire.reached(read_point(t.k)) {
                            match t.cell_ptr {
                                Some(ptr) if *budget > 0 => {
                                    *budget -= 1;
                                    read_cell(now, p, t, &mut port.hdr, ptr, input, out);
                                    t.ptr_at = now + latency;
                                }
                                _ => {
                                    out.stats.read_stall_cycles += 1;
                                    wake = now + 1;
                                    break;
                                }
                            }
                        }
                    }
                    if !ticked {
                        port.wire.tick();
                        ticked = true;
                    }
                    let wire_bits = input.d.wire_bits(t.len as u32);
                    if t.k == n && port.wire.reached(wire_bits) {
                        end_packet(port, wire_bits, out.stats);
                        continue;
                    }
                    wake = if t.k == n {
                        now + port.wire.ticks_until(wire_bits)
                    } else {
                        // Evaluated before its tick, cycle c sees this cycle's bits plus
                        // c - now - 1 more ticks.
                        let read_at = now + 1 + port.wire.ticks_until(read_point(t.k));
                        if t.cell_ptr.is_none() {
                            read_at.min(t.ptr_at)
                        } else {
                            read_at
                        }
                    };
                    break;
                }
            }
        }
        // A busy port looks at its queues again at the end of its frame or packet (its
        // wake); an idle one waits for its refetch.
        self.wake[p % MAX_PORTS] = if matches!(port.tx, Tx::Idle) {
            wake.min(input.queues.refill_at(p))
        } else {
            wake
        };
        Ok(())
    }
}

/// The packet on `port`'s wire ends: its `bits` leave the accumulator, the line is idle.
#[inline(always)]
fn end_packet(port: &mut EgressPort, bits: u64, stats: &mut Stats) {
    port.wire.consume(bits);
    port.tx = Tx::Idle;
    stats.packets_out += 1;
}

/// The queues port `p`'s scheduler may pick from now (a ready head, not paused; none
/// while a refetch is in flight), and HCF's select of the port.
#[inline(always)]
fn eligible<P>(p: usize, input: &EgressIn<'_, P>) -> (u8, u8) {
    let hp = input.hcf.hp_sel(p);
    if input.queues.refilling(p) {
        return (0, hp);
    }
    (input.queues.ready_mask(p, hp) & !input.rx.paused(p), hp)
}

/// A port's own values of the cycle: the queues whose dequeues go out as [`Dequeue`]
/// values, and where the port's visit (one a cycle) began on the cycle's lists of
/// dequeues and INT stamps.
#[derive(Debug, Clone, Copy)]
struct Own {
    /// Bit `q`: queue `q` is watched by HCF, ECM or ECN ([`Egress::hook_queues`]).
    hooked: u8,
    /// The port's dequeues of this cycle are `out.dequeues[dequeues..]`, its stamps
    /// `out.stamps[stamps..]`.
    dequeues: usize,
    stamps: usize,
}

/// Start a PFC frame (it goes first) or the next packet on port `p`, scheduled by `sched`.
/// `fresh`: the line was idle, so no fractional bit time carries over. `own`: the port's
/// watched queues, whose dequeues go out on `out.dequeues`, and its values so far; INT
/// stamps go out on `out.stamps`, a PFC frame taken on `out.takes`.
#[allow(clippy::too_many_arguments)]
fn start_tx<P>(
    now: u64,
    p: usize,
    port: &mut EgressPort,
    sched: &mut Dwrr,
    fresh: bool,
    own: Own,
    input: &mut EgressIn<'_, P>,
    out: &mut EgressOut<'_>,
) -> Result<bool, String> {
    if let Some(frame) = input.fsm.next_frame(p, out.takes) {
        port.tx = Tx::Pfc(frame);
    } else {
        let (eligible, hp) = eligible(p, input);
        let queues = &mut *input.queues;
        // Nothing eligible (a refetch in flight included) is no pick.
        let Some(q) = sched.pick(eligible, |q| queues.head_len(p, q, hp)) else {
            return Ok(false);
        };
        let head = queues.dequeue(p, q, hp, now);
        let mut ce = false;
        if own.hooked & (1 << q) != 0 {
            let mut dq = Dequeue {
                port: p as u8,
                queue: q as u8,
                list: head.sub,
                ncells: head.ncells,
                len: head.len,
                ecn: EcnLook::default(),
            };
            let desc = queues.desc_of(head.h);
            // The earlier dequeues of its queue are among the port's own.
            dq.ecn = input
                .ecn
                .look_at(&dq, &desc.hdr, &out.dequeues[own.dequeues..]);
            ce = dq.ecn.ce();
            out.dequeues.push(dq);
        }
        // INT stamps every packet of the port; it needs no `Dequeue` of its own.
        if input.int.on() {
            let hdr = &queues.desc_of(head.h).hdr;
            let earlier = &out.stamps[own.stamps..];
            let stamp = input
                .int
                .stamp(now, p, hdr, head.len, head.ncells, input.acct, earlier);
            out.stamps.push(stamp);
        }
        if queues.nonempty(p) & (1 << q) == 0 {
            sched.queue_emptied(q);
        }
        port.tx = Tx::Data(DataTx {
            head: head.h,
            ncells: head.ncells,
            len: head.len,
            queue: q as u8,
            k: 0,
            cell_ptr: Some(head.h),
            last_ptr: head.h,
            ptr_at: u64::MAX,
            ce,
        });
    }
    if fresh {
        port.wire.clear();
    }
    Ok(true)
}

/// The header of `t`, the packet on port `p`, read from the descriptor table as its first
/// cell is read (the read that frees the head cell, the entry's index).
#[inline(always)]
fn first_header<P: BufferPolicy>(
    now: u64,
    p: usize,
    t: &DataTx,
    input: &mut EgressIn<'_, P>,
) -> PacketHdr {
    let d = input.queues.desc_of(t.head);
    if P::RECORDS_DEQUEUES {
        // L2BM: the packet leaves its ingress queue's recorder with its first cell.
        let qi = d.hdr.src as usize * QUEUES + d.hdr.prio as usize;
        let eq = p * QUEUES + d.hdr.prio as usize;
        input.policy.dequeued(qi, eq, t.ncells.into(), d.due, now);
    }
    t.marked(d.hdr)
}

/// Read cell `t.k` of a packet of more than one cell on port `p` from `ptr`, and issue
/// the read of the next cell's pointer. The first cell's read latches the header in
/// `latch`.
fn read_cell<P: BufferPolicy>(
    now: u64,
    p: usize,
    t: &mut DataTx,
    latch: &mut PacketHdr,
    ptr: u32,
    input: &mut EgressIn<'_, P>,
    out: &mut EgressOut<'_>,
) {
    if t.k == 0 {
        *latch = first_header(now, p, t, input);
    }
    cell_leaves(p, latch, t, ptr, input, out);
    t.last_ptr = ptr;
    t.cell_ptr = None;
    if t.k < t.ncells {
        input.queues.cell_link.read(p, ptr as usize, now);
    }
}

/// Cell `t.k` of the packet on port `p`, at `ptr`, leaves with header `hdr`: it is freed,
/// its charge released, its departure driven.
#[inline(always)]
fn cell_leaves<P: BufferPolicy>(
    p: usize,
    hdr: &PacketHdr,
    t: &mut DataTx,
    ptr: u32,
    input: &mut EgressIn<'_, P>,
    out: &mut EgressOut<'_>,
) {
    input.free.push(ptr);
    out.dirty.ingress(hdr.src as usize);
    input.acct.push(Update::Release {
        port: hdr.src,
        pg: hdr.prio,
        lossless: input.d.is_lossless(hdr.prio),
        dport: p as u8,
    });
    out.out.departures.push(Departure {
        port: p as u8,
        beat: Beat {
            hdr: *hdr,
            idx: t.k,
            ncells: t.ncells,
        },
    });
    out.stats.cells_out += 1;
    t.k += 1;
}

impl<'a, P: BufferPolicy> Block<EgressIn<'a, P>, EgressOut<'a>> for Egress {
    /// The ports with something to do in this cycle, round robin from `read_rr`.
    #[inline(always)]
    fn eval(
        &mut self,
        now: u64,
        mut input: EgressIn<'a, P>,
        mut out: EgressOut<'a>,
    ) -> Result<(), BlockError> {
        let n = self.n;
        let mut budget = self.read_cells;
        out.dequeues.clear();
        out.stamps.clear();
        *out.takes = PfcTakes::default();
        let kicked =
            input.queues.enqueued_last_cycle() | input.rx.changed() | input.fsm.pending_ports();
        let mut active = kicked & self.idle;
        // The earliest wake of the ports not visited now (a lower bound when no port was
        // due: a kicked port's old wake may be the one it keeps).
        let mut later = self.wake_min;
        if now >= self.wake_min {
            later = u64::MAX;
            for p in each_port(self.timed) {
                let wake = self.wake(p);
                if wake <= now {
                    active |= 1 << p;
                } else {
                    later = later.min(wake);
                }
            }
        }
        let mut rest = rotate_ports(active, self.read_rr, n);
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let p = unrotate(i, self.read_rr, n);
            out.dirty.egress(p);
            input.queues.advance_refill(p, now);
            if !self.ends_quietly(now, p, &input, out.stats) {
                self.visit(now, p, &mut budget, &mut input, &mut out)?;
            }
            let idle = matches!(self.port(p).tx, Tx::Idle) as u64;
            self.idle = self.idle & !(1 << p) | idle << p;
            let wake = self.wake(p);
            let timed = (wake != u64::MAX) as u64;
            self.timed = self.timed & !(1 << p) | timed << p;
            later = later.min(wake);
        }
        self.wake_min = later;
        self.read_rr = next_rr(self.read_rr, n);
        debug_assert!(
            self.idle_mask_holds(),
            "egress: the idle mask is not Tx::Idle, or a busy port has no wake"
        );
        Ok(())
    }
}

impl Clocked for Egress {
    /// The transmitters' registers change as they send, and only their own visit reads
    /// them (the ports' wakes, idle and timed masks); what they drive (frees, releases,
    /// link reads, dequeues, frames taken) lands at the edge in the blocks it belongs to.
    fn commit(&mut self, _: u64) -> Result<(), BlockError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SwitchConfig;

    fn egress() -> Egress {
        Egress::new(&SwitchConfig::small().build().unwrap())
    }

    #[test]
    fn idle_mask_check_holds_for_idle_and_timed_busy_ports() {
        let mut e = egress();
        assert!(e.idle_mask_holds());
        e.ports[1].tx = Tx::Pfc(PfcFrame::default());
        e.wake[1] = 7;
        e.idle &= !(1 << 1);
        assert!(e.idle_mask_holds());
    }

    /// Companion: a busy port without a wake, and a busy port still marked idle.
    #[test]
    fn idle_mask_check_catches_a_busy_port_without_a_wake_or_bit() {
        let mut e = egress();
        e.ports[1].tx = Tx::Pfc(PfcFrame::default());
        e.idle &= !(1 << 1);
        assert!(!e.idle_mask_holds(), "busy, no wake");
        e.wake[1] = 7;
        e.idle |= 1 << 1;
        assert!(!e.idle_mask_holds(), "busy, marked idle");
    }
}
