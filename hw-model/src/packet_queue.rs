//! Egress queues as linked lists in the shared buffer's RAMs.
//!
//! Two-level lists, as in most traffic managers: the *cell link RAM* chains the cells of a
//! packet (written by the ingress write stage, walked by the egress transmitter); the
//! *packet link RAM* chains the packets of a queue; the *descriptor RAM* holds each
//! packet's header, indexed by its first cell. A queue's registers are head, tail, packet
//! and cell counts, and a prefetched copy of the head descriptor.
//!
//! Dequeue hands the head descriptor to the transmitter and refetches the next one: a read
//! of the packet link RAM, then of the descriptor RAM, `2 * latency` cycles in all. The
//! port starts no other packet until the refetch is done (one refetch engine per port).
//! The model takes both words when the refetch starts and holds the descriptor back until
//! its cycle: neither can change in between (the link word of the packet just taken was
//! written when the next packet joined, in an earlier cycle; the next packet's descriptor
//! is written once, when it joins, and its cell is not free until it leaves), so the
//! values are those of the two reads, and nothing has to run at the first read's cycle.
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

/// A head refetch in flight: the list, and its next head descriptor.
#[derive(Debug, Clone, Copy)]
struct Refetch {
    list: u32,
    desc: Desc,
}

/// Registers of one linked list of packets.
#[derive(Debug, Clone, Copy)]
pub struct ListRegs {
    pub head: u32,
    pub tail: u32,
    pub packets: u32,
    pub cells: u32,
    /// The prefetched head descriptor; `None` while its refetch runs.
    pub head_desc: Option<Desc>,
}

impl Default for ListRegs {
    fn default() -> Self {
        Self {
            head: NULL,
            tail: NULL,
            packets: 0,
            cells: 0,
            head_desc: None,
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
    pub desc: Sram<Desc>,
    /// Bit `q` of `nonempty[port]`.
    pub nonempty: Vec<u8>,
    /// Per port, the refetch in flight (one at a time per port).
    refetch: Vec<Option<Refetch>>,
    /// Per port, the cycle its refetch is done (`u64::MAX`: none in flight).
    refill_at: Vec<u64>,
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
        for (i, &qi) in two_lists.iter().enumerate() {
            second[qi] = (ports * 8 + i) as u32;
        }
        Self {
            lists: vec![ListRegs::default(); ports * 8 + two_lists.len()],
            second,
            cell_link: Sram::new("cell_link", cells as usize, ports, write_ports, latency),
            // One read port per egress port; one write per cell written per cycle.
            pkt_link: Sram::new("pkt_link", cells as usize, ports, write_ports, latency),
            desc: Sram::new("desc", cells as usize, ports, write_ports, latency),
            nonempty: vec![0; ports],
            refetch: vec![None; ports],
            refill_at: vec![u64::MAX; ports],
            latency: latency as u64,
            enqueued: 0,
            enqueued_last: 0,
        }
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
    #[inline]
    pub fn ready_mask(&self, port: usize, hp: u8) -> u8 {
        let mut m = 0;
        let mut ne = self.nonempty[port];
        while ne != 0 {
            let q = ne.trailing_zeros() as usize;
            ne &= ne - 1;
            if self.lists[self.serve_list(port * 8 + q, hp)]
                .head_desc
                .is_some()
            {
                m |= 1 << q;
            }
        }
        m
    }

    #[inline]
    pub fn head_len(&self, port: usize, q: usize, hp: u8) -> u32 {
        self.lists[self.serve_list(port * 8 + q, hp)]
            .head_desc
            .map_or(0, |d| d.hdr.len as u32)
    }

    /// A fully written packet joins the tail of its list of queue `(port, q)` (ingress
    /// write stage).
    pub fn enqueue(&mut self, port: usize, q: usize, d: Desc) {
        let li = self.list_id(port * 8 + q, d.sub);
        self.desc.write(d.head as usize, d);
        let r = &mut self.lists[li];
        if r.packets == 0 {
            r.head = d.head;
            r.head_desc = Some(d);
        } else {
            self.pkt_link.write(r.tail as usize, d.head);
        }
        r.tail = d.head;
        r.packets += 1;
        r.cells += d.ncells as u32;
        self.nonempty[port] |= 1 << q;
        self.enqueued |= 1 << port;
    }

    /// Take the head packet of `(port, q)` in cycle `now`; its refetch starts now. `hp`:
    /// bit `q` set when physical list 1 is the queue's HP list.
    pub fn dequeue(&mut self, port: usize, q: usize, hp: u8, now: u64) -> Desc {
        let qi = port * 8 + q;
        let li = self.serve_list(qi, hp);
        let r = &mut self.lists[li];
        let d = r
            .head_desc
            .take()
            .expect("scheduler picked a queue without a ready head");
        r.packets -= 1;
        r.cells -= d.ncells as u32;
        if r.packets == 0 {
            r.head = NULL;
            r.tail = NULL;
            if self.lists_of(qi).all(|l| self.lists[l].packets == 0) {
                self.nonempty[port] &= !(1 << q);
            }
        } else {
            // The link read, then the descriptor read (see the module doc).
            let next = self.pkt_link.backdoor(r.head as usize);
            r.head = next;
            self.refetch[port] = Some(Refetch {
                list: li as u32,
                desc: self.desc.backdoor(next as usize),
            });
            self.refill_at[port] = now + 2 * self.latency;
        }
        d
    }

    /// Whether `port` has a refetch in flight (its scheduler waits for it).
    #[inline]
    pub fn refilling(&self, port: usize) -> bool {
        self.refetch[port].is_some()
    }

    /// Cycle at which `port`'s refetch is done (`u64::MAX`: none in flight).
    #[inline]
    pub fn refill_at(&self, port: usize) -> u64 {
        self.refill_at[port]
    }

    /// Finish the refetch of `port` if it is done by cycle `now`: its list gets the head
    /// descriptor. Called whenever the port's transmitter looks at its queues, which is
    /// the only reader of a head descriptor.
    #[inline]
    pub fn advance_refill(&mut self, port: usize, now: u64) {
        if self.refill_at[port] <= now {
            if let Some(f) = self.refetch[port].take() {
                self.lists[f.list as usize].head_desc = Some(f.desc);
                self.refill_at[port] = u64::MAX;
            }
        }
    }

    /// Walk a list's packets through the RAMs (checker access, no timing).
    pub fn walk(&self, li: usize, mut f: impl FnMut(&Desc)) {
        let r = &self.lists[li];
        let mut p = r.head;
        for i in 0..r.packets {
            let d = if i == 0 {
                match r.head_desc {
                    Some(d) => d,
                    None => self.desc.backdoor(p as usize),
                }
            } else {
                self.desc.backdoor(p as usize)
            };
            f(&d);
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
