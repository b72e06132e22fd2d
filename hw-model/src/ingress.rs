//! Ingress ports: the beat intake of each port, the cell FIFOs between admission and the
//! shared SRAM, and the write stage.
//!
//! Intake (in the admission phase, driven by the admission block): a beat the MMU cannot
//! have been sent by a MAC is refused with an error naming the port and the field; each
//! beat gets the fate of its packet, decided at its first cell; an admitted cell enters the
//! port's cell FIFO, and the admitted packet waits as a descriptor until its last cell is
//! written.
//!
//! The write stage (phase 5) grants up to `sram_write_cells_per_cycle` FIFO heads per
//! cycle, in round-robin rounds over the ports with cells waiting (several grants to one
//! port when bandwidth is left over), starting one port further each cycle. A granted cell
//! takes a pointer from the free list and is chained behind the previous cell of its
//! packet in the cell link RAM; the packet's last cell enqueues it on its egress queue.
//! Cells admitted in a cycle can be written in the same cycle (the FIFO bypass of the phase
//! table). Configuration checks that the write bandwidth covers the aggregate line rate,
//! and the FIFO is sized so it cannot overflow.

use crate::config::Derived;
use crate::free_list::FreeList;
use crate::packet_queue::{Desc, PacketQueues, NULL};
use crate::policy::Plan;
use crate::ports::{advance_rr, each_port, next_rr, rotate_ports, unrotate};
use crate::stats::Stats;
use crate::wires::{Beat, CellFate, DropReason, Ecn, Segment};
use rtl::{Block, BlockError, Clocked, Visit};
use std::collections::VecDeque;

/// An admitted cell waiting for a write port: the control bits the write stage acts on.
/// The payload is not modelled, and the packet's header waits in its descriptor
/// ([`IngressPort::pending`]), so an entry is two bits, not the beat.
#[derive(Debug, Clone, Copy)]
pub struct FifoCell {
    /// The first cell of its packet (it starts a chain at the descriptor's head).
    pub sop: bool,
    /// The last cell (its write enqueues the packet).
    pub eop: bool,
}

/// Per-port state of the ingress stage.
#[derive(Debug, Clone)]
pub struct IngressPort {
    /// Decision for the packet now arriving: `Some(Ok(plan))` admitted, `Some(Err(why))`
    /// dropped, `None` between packets.
    pub arriving: Option<Result<Plan, DropReason>>,
    /// Decision for the last packet that started, kept after its last cell (the event
    /// trace reads it).
    pub started: Option<Result<Plan, DropReason>>,
    pub fifo: VecDeque<FifoCell>,
    /// Packets charged and not yet enqueued, oldest first (the checker recounts them).
    pub pending: VecDeque<Desc>,
    /// Cells of the front pending packet already written, and the last one's pointer.
    pub written: u16,
    pub prev: u32,
    /// Index of the cell the bus must deliver next (0: a start of packet).
    pub next_idx: u16,
}

impl IngressPort {
    fn new(fifo_depth: usize) -> Self {
        Self {
            arriving: None,
            started: None,
            fifo: VecDeque::with_capacity(fifo_depth),
            // Every packet in the FIFO may be a one-cell packet, plus one being written.
            pending: VecDeque::with_capacity(fifo_depth + 2),
            written: 0,
            prev: NULL,
            next_idx: 0,
        }
    }
}

/// FIFO depth that round-robin service with `write_ports` grants per cycle needs for
/// `ports` ports delivering at most one cell per cycle each, at an aggregate rate the
/// write ports cover: a port waits at most `ceil(ports / write_ports)` cycles per grant.
pub fn fifo_depth(ports: usize, write_ports: usize) -> usize {
    2 * ports.div_ceil(write_ports) + 8
}

/// The ingress ports of the switch.
#[derive(Debug, Clone)]
pub struct Ingress {
    pub ports: Vec<IngressPort>,
    /// Cells each FIFO holds.
    fifo_depth: usize,
    /// Ports with cells in their FIFO.
    fifo_ports: u64,
    /// Ports with a beat in this cycle (`beat_valid`), and in the last.
    beats: u64,
    beats_last: u64,
    write_cells: u32,
    write_rr: usize,
}

/// What the write stage reads and drives: the ports whose packet admitted in this cycle
/// the ECN marker marked CE (phase 4), the free list's pop port, the cell link RAM and the
/// queues' enqueue port.
pub struct WriteIn<'a> {
    pub ce: u64,
    pub free: &'a mut FreeList,
    pub queues: &'a mut PacketQueues,
}

impl Ingress {
    pub fn new(d: &Derived) -> Self {
        let w = d.cfg.sram_write_cells_per_cycle as usize;
        let depth = fifo_depth(d.ports, w);
        Self {
            ports: (0..d.ports).map(|_| IngressPort::new(depth)).collect(),
            fifo_depth: depth,
            fifo_ports: 0,
            beats: 0,
            beats_last: 0,
            write_cells: d.cfg.sram_write_cells_per_cycle,
            write_rr: 0,
        }
    }

    /// The ports with a beat in this cycle become `beats`; returns the ports whose
    /// `beat_valid` may have changed (a beat now or in the last cycle).
    #[inline]
    pub fn set_beats(&mut self, beats: u64) -> u64 {
        self.beats_last = std::mem::replace(&mut self.beats, beats);
        self.beats | self.beats_last
    }

    /// Ports with cells waiting for the write stage.
    #[inline]
    pub fn fifo_ports(&self) -> u64 {
        self.fifo_ports
    }

    /// Ports with a beat in the last cycle evaluated.
    #[inline]
    pub fn beats(&self) -> u64 {
        self.beats
    }

    /// Jump over `cycles` cycles without beats or cells waiting: only the write stage's
    /// round-robin pointer moves (one port a cycle).
    pub fn skip(&mut self, cycles: u64) {
        self.write_rr = advance_rr(self.write_rr, cycles, self.ports.len());
    }

    /// The ingress bus protocol: a beat the MMU cannot have been sent by a MAC is refused
    /// with an error naming the port and the field, not left to corrupt the buffer. The
    /// common case is one test of every field; the message is built out of line.
    #[inline(always)]
    pub fn check_beat(&self, p: usize, b: &Beat, d: &Derived) -> Result<(), String> {
        let h = &b.hdr;
        let expected = self.ports[p].next_idx;
        if h.src as usize == p
            && (h.dst as usize) < d.ports
            && h.prio <= 7
            && d.takes_cells(h.len as u32, b.ncells as u32)
            && b.idx == expected
        {
            Ok(())
        } else {
            Err(malformed(p, b, d, expected))
        }
    }
}

/// Why beat `b` of port `p` breaks the bus protocol ([`Ingress::check_beat`]), naming the
/// first field that is wrong; `expected` is the cell index that was due.
#[cold]
#[inline(never)]
fn malformed(p: usize, b: &Beat, d: &Derived, expected: u16) -> String {
    let h = &b.hdr;
    let what = if h.src as usize != p {
        format!("hdr.src = {} but the beat arrived on port {p}", h.src)
    } else if h.dst as usize >= d.ports {
        format!("hdr.dst = {} is not a port (0..{})", h.dst, d.ports)
    } else if h.prio > 7 {
        format!("hdr.prio = {} is not a priority (0..=7)", h.prio)
    } else if !d.takes_cells(h.len as u32, b.ncells as u32) {
        let n = d.cells_for(h.len as u32);
        format!(
            "ncells = {} but a {} B packet takes {n} cells",
            b.ncells, h.len
        )
    } else {
        format!("cell index {} where {expected} was due", b.idx)
    };
    format!("ingress p{p}: malformed beat {b:?}: {what}")
}

impl Ingress {
    /// The fate admission decided for the packet starting on port `p`: an admitted one
    /// waits as its descriptor until its last cell is written.
    #[inline(always)]
    pub fn start_packet(
        &mut self,
        p: usize,
        fate: Result<(Plan, Desc), DropReason>,
    ) -> Result<(), String> {
        let port = &mut self.ports[p];
        port.started = Some(match fate {
            Ok((plan, desc)) => {
                if port.pending.len() == self.fifo_depth + 2 {
                    return Err(format!(
                        "ingress p{p}: more packets in flight than the FIFO can hold"
                    ));
                }
                port.pending.push_back(desc);
                Ok(plan)
            }
            Err(r) => Err(r),
        });
        port.arriving = port.started;
        Ok(())
    }

    /// The packet admitted last on port `p` (the descriptor of this cycle's admission).
    #[inline]
    pub fn newest(&self, p: usize) -> &Desc {
        self.ports[p]
            .pending
            .back()
            .expect("an admitted packet is pending")
    }

    /// A beat of port `p` takes the fate of its packet: into the cell FIFO, or dropped.
    #[inline(always)]
    pub fn take_cell(
        &mut self,
        p: usize,
        b: &Beat,
        lossless: bool,
        stats: &mut Stats,
    ) -> Result<CellFate, String> {
        let port = &mut self.ports[p];
        let fate = match port.arriving {
            Some(Ok(plan)) => {
                let seg = segment_of(lossless, b.idx, plan.seg0, plan.seg1);
                if port.fifo.len() == self.fifo_depth {
                    return Err(format!(
                        "ingress p{p}: cell FIFO overflow (write stage too slow)"
                    ));
                }
                port.fifo.push_back(FifoCell {
                    sop: b.sop(),
                    eop: b.eop(),
                });
                self.fifo_ports |= 1 << p;
                stats.admitted[seg.index()] += 1;
                CellFate::Admitted(seg)
            }
            Some(Err(r)) => {
                let h = &b.hdr;
                stats.drop_cell(h.src, h.dst, h.prio, r, b.sop());
                CellFate::Dropped(r)
            }
            None => {
                return Err(format!(
                    "ingress p{p}: cell {} of a packet whose start never arrived",
                    b.idx
                ))
            }
        };
        port.next_idx = b.idx + 1;
        if b.eop() {
            port.arriving = None;
            port.next_idx = 0;
        }
        Ok(fate)
    }

    /// `ingress.pNN.beat_valid`.
    pub fn probe_port<V: Visit>(&self, p: usize, v: &mut V) {
        v.wire("beat_valid", 1, (self.beats >> p) & 1);
    }
}

impl<'a> Block<WriteIn<'a>, ()> for Ingress {
    /// The write stage: FIFO heads into the SRAM.
    #[inline(always)]
    fn eval(&mut self, _: u64, input: WriteIn<'a>, _: ()) -> Result<(), BlockError> {
        if input.ce != 0 {
            self.mark_ce(input.ce);
        }
        let n = self.ports.len();
        let mut budget = self.write_cells;
        // Round-robin rounds over the ports with cells waiting, one grant per port per
        // round, until the write bandwidth is used up: work-conserving, so a port that
        // missed a grant (other ports took them) catches up when bandwidth is free. One
        // grant per port per cycle would never let a port near one cell per cycle recover.
        let mut rest = rotate_ports(self.fifo_ports, self.write_rr, n);
        while budget > 0 {
            if rest == 0 {
                rest = rotate_ports(self.fifo_ports, self.write_rr, n);
                if rest == 0 {
                    break;
                }
            }
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let p = unrotate(i, self.write_rr, n);
            budget -= 1;
            let Some(ptr) = input.free.pop() else {
                return Err(BlockError(
                    "free list empty at a cell write: admission over-committed the buffer".into(),
                ));
            };
            let port = &mut self.ports[p];
            let cell = port
                .fifo
                .pop_front()
                .expect("fifo_ports bit set for an empty FIFO");
            if port.fifo.is_empty() {
                self.fifo_ports &= !(1 << p);
            }
            if !cell.sop {
                input.queues.cell_link.write(port.prev as usize, ptr);
            }
            port.prev = ptr;
            if cell.eop {
                // The packet leaves the pending list with its last cell; a one-cell packet
                // gets its head here, without being written in the list first.
                let mut desc = port
                    .pending
                    .pop_front()
                    .expect("a written packet is pending");
                if cell.sop {
                    desc.head = ptr;
                }
                port.written = 0;
                input
                    .queues
                    .enqueue(desc.hdr.dst as usize, desc.hdr.prio as usize, desc);
            } else {
                if cell.sop {
                    port.pending[0].head = ptr;
                    port.written = 0;
                }
                port.written += 1;
            }
        }
        self.write_rr = next_rr(self.write_rr, n);
        Ok(())
    }
}

impl Ingress {
    /// CE into the descriptors of the packets admitted in this cycle on the ports `ce`
    /// (the newest pending of each), before the write stage may store them.
    #[inline(never)]
    fn mark_ce(&mut self, ce: u64) {
        for p in each_port(ce) {
            if let Some(d) = self.ports[p].pending.back_mut() {
                d.hdr.ecn = Ecn::Ce;
            }
        }
    }
}

impl Clocked for Ingress {
    /// Intake and the write stage change the FIFOs during the cycle (the bypass of the
    /// phase table); the pointers and links they produce land at the edge in the free
    /// list and the RAMs. The clocking contract of the intake, which admission drives
    /// through `AdmissionIn::ingress`: admission reads a port's registers only for that
    /// port's own beat (`next_idx`, the fate of its packet), one beat per port and cycle,
    /// so its writes are never read by another port's decision; ECM (phase 3) and ECN
    /// (phase 4) read the descriptor admitted in the cycle, and the write stage (phase 5)
    /// sets the CE that ECN returns before it stores it. A handle: the intake as values
    /// (admission returning per beat what the write stage applies) costs more
    /// instructions (docs/architecture.md, "Blocks", `AdmissionIn::ingress`).
    fn commit(&mut self, _: u64) -> Result<(), BlockError> {
        Ok(())
    }
}

/// The segments of a pool, in the order a packet's cells are charged to them.
pub fn segments(lossless: bool) -> [Segment; 3] {
    if lossless {
        [Segment::Private, Segment::Shared, Segment::Headroom]
    } else {
        [
            Segment::LossyPrivate,
            Segment::LossyShared,
            Segment::Headroom,
        ]
    }
}

/// Segment of cell `k` of a packet whose first `seg0` cells are private and next `seg1`
/// shared.
#[inline]
fn segment_of(lossless: bool, k: u16, seg0: u16, seg1: u16) -> Segment {
    let s = segments(lossless);
    if k < seg0 {
        s[0]
    } else if k < seg0 + seg1 {
        s[1]
    } else {
        s[2]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SwitchConfig;
    use crate::wires::PacketHdr;

    /// A well-formed first beat of a 64 B packet from port 1 to port 2.
    fn beat(d: &Derived) -> Beat {
        let hdr = PacketHdr {
            src: 1,
            dst: 2,
            len: 64,
            ..PacketHdr::default()
        };
        Beat {
            hdr,
            idx: 0,
            ncells: d.cells_for(64) as u16,
        }
    }

    /// Each field the bus check tests, broken alone, is refused with a message naming it;
    /// the well-formed beat passes.
    #[test]
    fn beat_check_names_the_broken_field() {
        let d = SwitchConfig::small().build().unwrap();
        let ing = Ingress::new(&d);
        let good = beat(&d);
        assert_eq!(ing.check_beat(1, &good, &d), Ok(()));
        type Break = fn(&mut Beat);
        let cases: [(Break, &str); 5] = [
            (
                |b| b.hdr.src = 0,
                "hdr.src = 0 but the beat arrived on port 1",
            ),
            (|b| b.hdr.dst = 200, "hdr.dst = 200 is not a port"),
            (|b| b.hdr.prio = 8, "hdr.prio = 8 is not a priority (0..=7)"),
            (
                |b| b.ncells += 1,
                "ncells = 2 but a 64 B packet takes 1 cells",
            ),
            (|b| b.idx = 3, "cell index 3 where 0 was due"),
        ];
        for (breaks, what) in cases {
            let mut b = good;
            breaks(&mut b);
            let e = ing.check_beat(1, &b, &d).unwrap_err();
            assert!(e.starts_with("ingress p1: malformed beat"), "{e}");
            assert!(e.contains(what), "{e}");
        }
    }
}
