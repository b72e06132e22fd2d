//! Egress queues as linked lists in the shared buffer's RAMs.
//!
//! Two-level lists, as in most traffic managers: the *cell link RAM* chains the cells of a
//! packet (written by the ingress write stage, walked by the egress transmitter); the
//! *packet link RAM* chains the packets of a queue; the *descriptor RAM* holds each
//! packet's header, indexed by its first cell. A queue's registers are head, tail, packet
//! and cell counts, and the prefetched head (its handle, length and cell count).
//!
//! A packet's descriptor is written once, when the packet joins its queue, into the
//! descriptor RAM at its head cell; from then on the packet moves as a *handle*, that head
//! cell's pointer: through the list registers, the refetch and the transmitter, which reads
//! the header from the table when it takes the packet.
//!
//! Dequeue hands the head packet to the transmitter and refetches the next one: a read
//! of the packet link RAM, then of the descriptor RAM, `2 * latency` cycles in all. The
//! port starts no other packet until the refetch is done (one refetch engine per port).
//! The model takes the link word when the refetch starts and marks the head ready at its
//! cycle: neither word can change in between (the link word of the packet just taken was
//! written when the next packet joined, in an earlier cycle; the next packet's descriptor
//! is written once, when it joins, and its cell is not free until it leaves), so the
//! values are those of the two reads, and nothing has to run at the first read's cycle.
//! The two RAMs are therefore read by backdoor and built with no read ports: their reads'
//! timing is the refetch's delay, modelled here.
//! This is hidden when a packet lasts at least `2 * latency` cycles on the wire; it is not
//! for minimum-size packets at 400G (about 1.7 cycles per 64 B packet at 1 GHz), where it
//! costs throughput: a deeper per-queue prefetch would fix that.
//!
//! A FIFO queue is one list. An HCF queue (`sched/hcf.rs`) is two lists, each with its own
//! registers and prefetched head; a packet's descriptor says which (`Desc::sub`, fixed at
//! admission). The dequeue mux serves the HP list whenever it holds a packet, the LP list
//! otherwise; its select is HCF's HP register (`Hcf::hp_sel`), flipped at each new priority
//! period (HCF III-D).
//!
//! The cell link RAM, which chains the cells of a packet, lives here too: the write stage
//! writes it, the transmitters read it.
//!
//! A storage block: the write stage enqueues (phase 5) after the transmitters dequeued
//! (phase 4), so an enqueue sees the list registers as that cycle's dequeues left them (a
//! write-after-read bypass). RAM writes land at the edge, and so does the set of ports that
//! got a packet this cycle (the transmitters' kicks of the next cycle).

use crate::config::MAX_PORTS;
use crate::wires::PacketHdr;
use rtl::{BlockError, Clocked, Sram};

pub const NULL: u32 = u32::MAX;

/// A packet descriptor: header, size, first cell and (HCF queues) the list it joins.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Desc {
    pub hdr: PacketHdr,
    pub ncells: u16,
    pub head: u32,
    /// Physical list of the queue: 0, or 1 (the second list of an HCF queue).
    pub sub: u8,
    /// L2BM: the packet's estimated departure cycle, admission cycle + `Q_out / mu`
    /// (Algorithm 1), a 48-bit field (`l2bm::TIME_BITS`); 0 under the other policies.
    pub due: u64,
}

/// Registers of one linked list of packets.
#[derive(Debug, Clone, Copy)]
pub struct ListRegs {
    pub head: u32,
    pub tail: u32,
    pub packets: u32,
    pub cells: u32,
    /// The head's descriptor has been read; `false` while its refetch runs, and in an
    /// empty list.
    pub head_ready: bool,
    /// The prefetched head: the fields of its descriptor the scheduler and these
    /// registers use (the rest stays in the table, at `head`).
    pub head_len: u16,
    pub head_ncells: u16,
}

/// A packet taken from its queue: its handle (head cell), and the fields of its
/// descriptor the dequeue read.
#[derive(Debug, Clone, Copy)]
pub struct Head {
    pub h: u32,
    pub len: u16,
    pub ncells: u16,
    /// The physical list it left (`Desc::sub`).
    pub sub: u8,
}

impl Default for ListRegs {
    fn default() -> Self {
        Self {
            head: NULL,
            tail: NULL,
            packets: 0,
            cells: 0,
            head_ready: false,
            head_len: 0,
            head_ncells: 0,
        }
    }
}

/// The registers of one port's queues that the scheduler and the refetch use.
#[derive(Debug, Clone, Copy)]
struct PortRegs {
    /// Bit `q`: queue `q` holds a packet.
    nonempty: u8,
    /// Bit `q`: the first list of queue `q` has a ready head (its `head_ready`, kept as a
    /// mask so a FIFO port's ready queues are one load).
    ready: u8,
    /// Bit `q`: queue `q` has a second list (HCF), so which list it serves depends on
    /// HCF's select and its ready bit is computed.
    two: u8,
    /// The list whose head the refetch in flight reads (`NULL`: none).
    refetch: u32,
    /// The cycle the refetch is done (`u64::MAX`: none in flight).
    refill_at: u64,
}

impl Default for PortRegs {
    fn default() -> Self {
        Self {
            nonempty: 0,
            ready: 0,
            two: 0,
            refetch: NULL,
            refill_at: u64::MAX,
        }
    }
}

/// All egress queues of the switch, `ports * 8`, with the RAMs behind them.
#[derive(Debug, Clone)]
pub struct PacketQueues {
    /// List registers: list `port * 8 + q` is queue `q`'s first list; the second lists of
    /// the HCF queues follow.
    pub lists: Vec<ListRegs>,
    /// Per queue, the index of its second list (`NULL`: a FIFO queue).
    second: Vec<u32>,
    /// Cell link RAM: `cell_link[c]` = next cell of the same packet.
    pub cell_link: Sram<u32>,
    /// `pkt_link[head cell of P]` = head cell of the packet after P in its list.
    pub pkt_link: Sram<u32>,
    /// The descriptor table: `desc[head cell of P]` = P's descriptor.
    pub desc: Sram<Desc>,
    /// Per port, sized for the largest switch and indexed through [`Self::regs`], so the
    /// transmitters' many reads of them need no bounds checks.
    port: [PortRegs; MAX_PORTS],
    /// The first lists, `ports * 8` (the ready masks hold only them).
    first_lists: usize,
    latency: u64,
    /// Ports that got a packet in this cycle, and in the last (published at the edge).
    enqueued: u64,
    enqueued_last: u64,
}

impl PacketQueues {
    /// `two_lists`: the queues (`port * 8 + q`) that are HCF and get a second list.
    pub fn new(
        ports: usize,
        cells: u32,
        write_ports: usize,
        latency: usize,
        two_lists: &[usize],
    ) -> Self {
        // The cell link RAM: one read port per egress port, one write per cell written.
        let mut second = vec![NULL; ports * 8];
        let mut port = [PortRegs::default(); MAX_PORTS];
        for (i, &qi) in two_lists.iter().enumerate() {
            second[qi] = (ports * 8 + i) as u32;
            port[qi / 8].two |= 1 << (qi % 8);
        }
        Self {
            lists: vec![ListRegs::default(); ports * 8 + two_lists.len()],
            second,
            cell_link: Sram::new("cell_link", cells as usize, ports, write_ports, latency),
            // No read ports (the refetch's reads, see the module doc); one write per cell
            // written per cycle.
            pkt_link: Sram::new("pkt_link", cells as usize, 0, write_ports, latency),
            desc: Sram::new("desc", cells as usize, 0, write_ports, latency),
            port,
            first_lists: ports * 8,
            latency: latency as u64,
            enqueued: 0,
            enqueued_last: 0,
        }
    }

    /// The registers of `port` (< `MAX_PORTS`, so the index is a mask).
    #[inline(always)]
    fn regs(&self, port: usize) -> &PortRegs {
        &self.port[port % MAX_PORTS]
    }

    #[inline(always)]
    fn regs_mut(&mut self, port: usize) -> &mut PortRegs {
        &mut self.port[port % MAX_PORTS]
    }

    /// Bit `q`: queue `q` of `port` holds a packet.
    #[inline(always)]
    pub fn nonempty(&self, port: usize) -> u8 {
        self.regs(port).nonempty
    }

    /// Ports that got a packet in the last cycle: their schedulers must look again.
    #[inline]
    pub fn enqueued_last_cycle(&self) -> u64 {
        self.enqueued_last
    }

    /// Index of physical list `sub` of queue `qi` (`port * 8 + q`).
    #[inline]
    pub fn list_id(&self, qi: usize, sub: u8) -> usize {
        if sub == 0 {
            qi
        } else {
            self.second[qi] as usize
        }
    }

    /// The lists of queue `qi`: one for FIFO, two for HCF.
    pub fn lists_of(&self, qi: usize) -> impl Iterator<Item = usize> {
        let second = self.second[qi];
        std::iter::once(qi).chain((second != NULL).then_some(second as usize))
    }

    /// The list the dequeue mux selects: HP if it holds a packet, else LP. `hp` has bit `q`
    /// set when physical list 1 is the HP list of queue `q` of the port (HCF's select).
    #[inline]
    fn serve_list(&self, qi: usize, hp: u8) -> usize {
        let sel = (hp >> (qi % 8)) & 1;
        let first = self.list_id(qi, sel);
        if self.second[qi] == NULL || self.lists[first].packets > 0 {
            first
        } else {
            self.list_id(qi, sel ^ 1)
        }
    }

    /// Queue `q` of `port` has a head packet the scheduler may pick now; `hp` as in
    /// [`Self::dequeue`].
    #[inline(always)]
    pub fn ready_mask(&self, port: usize, hp: u8) -> u8 {
        let r = self.regs(port);
        let m = r.ready & !r.two;
        if r.two & r.nonempty == 0 {
            m
        } else {
            m | self.ready_two(port, hp, r.two & r.nonempty)
        }
    }

    /// The ready bits of the HCF queues `qs` of `port`: their served list's head.
    #[inline(never)]
    fn ready_two(&self, port: usize, hp: u8, mut qs: u8) -> u8 {
        let mut m = 0;
        while qs != 0 {
            let q = qs.trailing_zeros() as usize;
            qs &= qs - 1;
            if self.lists[self.serve_list(port * 8 + q, hp)].head_ready {
                m |= 1 << q;
            }
        }
        m
    }

    /// Bytes of the head packet of queue `q` of `port` (the scheduler asks only for a
    /// ready head, [`Self::ready_mask`]).
    #[inline(always)]
    pub fn head_len(&self, port: usize, q: usize, hp: u8) -> u32 {
        let r = &self.lists[self.serve_list(port * 8 + q, hp)];
        debug_assert!(r.head_ready, "head_len of a head not yet read");
        r.head_len as u32
    }

    /// The descriptor of the packet whose handle (head cell) is `h`: the table entry the
    /// refetch or the enqueue bypass read.
    #[inline(always)]
    pub fn desc_of(&self, h: u32) -> &Desc {
        self.desc.word(h as usize)
    }

    /// A fully written packet joins the tail of its list of queue `(port, q)` (ingress
    /// write stage).
    #[inline(always)]
    pub fn enqueue(&mut self, port: usize, q: usize, d: Desc) {
        let li = self.list_id(port * 8 + q, d.sub);
        self.desc.write(d.head as usize, d);
        let r = &mut self.lists[li];
        if r.packets == 0 {
            // The prefetched head is the descriptor being written (a bypass of the RAM
            // write: the transmitters look at it in the next cycle, after the edge).
            r.head = d.head;
            r.head_len = d.hdr.len;
            r.head_ncells = d.ncells;
            r.head_ready = true;
            // The ready mask holds first lists only.
            self.port[port % MAX_PORTS].ready |= ((d.sub == 0) as u8) << q;
        } else {
            self.pkt_link.write(r.tail as usize, d.head);
        }
        r.tail = d.head;
        r.packets += 1;
        r.cells += d.ncells as u32;
        self.regs_mut(port).nonempty |= 1 << q;
        self.enqueued |= 1 << port;
    }

    /// Take the head packet of `(port, q)` in cycle `now`; its refetch starts now. `hp`:
    /// bit `q` set when physical list 1 is the queue's HP list.
    #[inline(always)]
    pub fn dequeue(&mut self, port: usize, q: usize, hp: u8, now: u64) -> Head {
        let qi = port * 8 + q;
        let li = self.serve_list(qi, hp);
        let r = &mut self.lists[li];
        assert!(
            r.head_ready,
            "scheduler picked a queue without a ready head"
        );
        let head = Head {
            h: r.head,
            len: r.head_len,
            ncells: r.head_ncells,
            sub: (li != qi) as u8,
        };
        // The ready mask holds first lists only.
        self.port[port % MAX_PORTS].ready &= !(((head.sub == 0) as u8) << q);
        r.head_ready = false;
        r.packets -= 1;
        r.cells -= head.ncells as u32;
        if r.packets == 0 {
            r.head = NULL;
            r.tail = NULL;
            if self.lists_of(qi).all(|l| self.lists[l].packets == 0) {
                self.regs_mut(port).nonempty &= !(1 << q);
            }
        } else {
            // The link read now, the descriptor read when it is done (module doc).
            r.head = self.pkt_link.backdoor(head.h as usize);
            let refill_at = now + 2 * self.latency;
            let regs = self.regs_mut(port);
            regs.refetch = li as u32;
            regs.refill_at = refill_at;
        }
        head
    }

    /// Whether `port` has a refetch in flight (its scheduler waits for it).
    #[inline]
    pub fn refilling(&self, port: usize) -> bool {
        self.regs(port).refetch != NULL
    }

    /// Cycle at which `port`'s refetch is done (`u64::MAX`: none in flight).
    #[inline]
    pub fn refill_at(&self, port: usize) -> u64 {
        self.regs(port).refill_at
    }

    /// Finish the refetch of `port` if it is done by cycle `now`: its list's head is
    /// ready. Called whenever the port's transmitter looks at its queues, which is the
    /// only reader of a head descriptor.
    #[inline(always)]
    pub fn advance_refill(&mut self, port: usize, now: u64) {
        if self.regs(port).refill_at <= now {
            let first_lists = self.first_lists;
            let regs = &mut self.port[port % MAX_PORTS];
            let li = std::mem::replace(&mut regs.refetch, NULL);
            regs.refill_at = u64::MAX;
            // The ready mask holds first lists only.
            if (li as usize) < first_lists {
                regs.ready |= 1 << (li % 8);
            }
            let r = &mut self.lists[li as usize];
            let d = self.desc.word(r.head as usize);
            r.head_len = d.hdr.len;
            r.head_ncells = d.ncells;
            r.head_ready = true;
        }
    }

    /// Walk a list's packets through the RAMs (checker access, no timing).
    pub fn walk(&self, li: usize, mut f: impl FnMut(&Desc)) {
        let r = &self.lists[li];
        let mut p = r.head;
        for _ in 0..r.packets {
            f(self.desc_of(p));
            p = self.pkt_link.backdoor(p as usize);
        }
    }
}

impl Clocked for PacketQueues {
    fn commit(&mut self, cycle: u64) -> Result<(), BlockError> {
        self.cell_link.commit(cycle)?;
        self.pkt_link.commit(cycle)?;
        self.desc.commit(cycle)?;
        self.enqueued_last = std::mem::take(&mut self.enqueued);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wires::PacketHdr;
    use rtl::Lfsr32;

    /// The ready mask from the list registers, queue by queue (what the kept mask saves).
    fn ready_by_lists(pq: &PacketQueues, port: usize, hp: u8) -> u8 {
        (0..8)
            .filter(|&q| pq.nonempty(port) & (1 << q) != 0)
            .filter(|&q| pq.lists[pq.serve_list(port * 8 + q, hp)].head_ready)
            .fold(0, |m, q| m | 1 << q)
    }

    #[test]
    fn kept_ready_mask_is_the_lists_heads() {
        // Two ports; queue 3 of port 0 and queue 5 of port 1 are HCF (two lists).
        let mut pq = PacketQueues::new(2, 64, 1, 2, &[3, 13]);
        let mut free: Vec<u32> = (0..64).collect();
        let mut lfsr = Lfsr32::new(7);
        for now in 0..20_000u64 {
            // HCF's select has bits for its queues only.
            let port = lfsr.draw(1) as usize;
            let hp = lfsr.draw(255) as u8 & pq.regs(port).two;
            pq.advance_refill(port, now);
            let ready = pq.ready_mask(port, hp);
            assert_eq!(ready, ready_by_lists(&pq, port, hp), "cycle {now}");
            if lfsr.draw(1) == 0 && !pq.refilling(port) && ready != 0 {
                let q = (0..8).find(|q| ready & (1 << q) != 0).unwrap();
                free.push(pq.dequeue(port, q, hp, now).h);
            } else if let Some(head) = free.pop() {
                let q = lfsr.draw(7) as usize;
                let sub = (pq.second[port * 8 + q] != NULL && lfsr.draw(1) == 1) as u8;
                let hdr = PacketHdr {
                    len: 64,
                    ..PacketHdr::default()
                };
                let d = Desc {
                    hdr,
                    ncells: 1,
                    head,
                    sub,
                    due: 0,
                };
                pq.enqueue(port, q, d);
            }
            pq.commit(now).unwrap();
        }
    }
}
