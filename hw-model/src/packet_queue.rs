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
//! This is hidden when a packet lasts at least `2 * latency` cycles on the wire; it is not
//! for minimum-size packets at 400G (about 1.7 cycles per 64 B packet at 1 GHz), where it
//! costs throughput: a deeper per-queue prefetch would fix that.

use crate::wires::PacketHdr;
use rtl::Sram;

pub const NULL: u32 = u32::MAX;

/// A packet descriptor: header, size and first cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Desc {
    pub hdr: PacketHdr,
    pub ncells: u16,
    pub head: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refill {
    Idle,
    LinkRead,
    DescRead,
}

#[derive(Debug, Clone, Copy)]
pub struct QueueRegs {
    pub head: u32,
    pub tail: u32,
    pub packets: u32,
    pub cells: u32,
    pub head_desc: Option<Desc>,
    refill: Refill,
}

impl Default for QueueRegs {
    fn default() -> Self {
        Self {
            head: NULL,
            tail: NULL,
            packets: 0,
            cells: 0,
            head_desc: None,
            refill: Refill::Idle,
        }
    }
}

/// All egress queues of the switch, `ports * 8`, with the RAMs behind them.
#[derive(Debug, Clone)]
pub struct PacketQueues {
    pub q: Vec<QueueRegs>,
    /// `pkt_link[head cell of P]` = head cell of the packet after P in its queue.
    pub pkt_link: Sram<u32>,
    pub desc: Sram<Desc>,
    /// Bit `q` of `nonempty[port]`.
    pub nonempty: Vec<u8>,
    /// Per port, the queue whose head is being refetched (one at a time per port).
    refilling: Vec<Option<u8>>,
    /// Per port, the cycle the refetch's next read data is on the RAM's output.
    refill_at: Vec<u64>,
    latency: u64,
    ports_nonempty: u64,
}

impl PacketQueues {
    pub fn new(ports: usize, cells: u32, write_ports: usize, latency: usize) -> Self {
        Self {
            q: vec![QueueRegs::default(); ports * 8],
            // One read port per egress port; one write per cell written per cycle.
            pkt_link: Sram::new("pkt_link", cells as usize, ports, write_ports, latency),
            desc: Sram::new("desc", cells as usize, ports, write_ports, latency),
            nonempty: vec![0; ports],
            refilling: vec![None; ports],
            refill_at: vec![u64::MAX; ports],
            latency: latency as u64,
            ports_nonempty: 0,
        }
    }

    /// Ports with at least one non-empty queue.
    #[inline]
    pub fn ports_nonempty(&self) -> u64 {
        self.ports_nonempty
    }

    /// Queue `q` of `port` has a head packet the scheduler may pick now.
    #[inline]
    pub fn ready_mask(&self, port: usize) -> u8 {
        let mut m = 0;
        let mut ne = self.nonempty[port];
        while ne != 0 {
            let q = ne.trailing_zeros() as usize;
            ne &= ne - 1;
            if self.q[port * 8 + q].head_desc.is_some() {
                m |= 1 << q;
            }
        }
        m
    }

    #[inline]
    pub fn head_len(&self, port: usize, q: usize) -> u32 {
        self.q[port * 8 + q]
            .head_desc
            .map_or(0, |d| d.hdr.len as u32)
    }

    /// A fully written packet joins the tail of queue `(port, q)` (ingress write stage).
    pub fn enqueue(&mut self, port: usize, qi: usize, d: Desc) {
        let idx = port * 8 + qi;
        self.desc.write(d.head as usize, d);
        let r = &mut self.q[idx];
        if r.packets == 0 {
            r.head = d.head;
            r.head_desc = Some(d);
        } else {
            self.pkt_link.write(r.tail as usize, d.head);
        }
        r.tail = d.head;
        r.packets += 1;
        r.cells += d.ncells as u32;
        self.nonempty[port] |= 1 << qi;
        self.ports_nonempty |= 1 << port;
    }

    /// Take the head packet of `(port, q)` in cycle `now`; its refetch starts now.
    pub fn dequeue(&mut self, port: usize, qi: usize, now: u64) -> Desc {
        let idx = port * 8 + qi;
        let r = &mut self.q[idx];
        let d = r
            .head_desc
            .take()
            .expect("scheduler picked a queue without a ready head");
        r.packets -= 1;
        r.cells -= d.ncells as u32;
        if r.packets == 0 {
            r.head = NULL;
            r.tail = NULL;
            self.nonempty[port] &= !(1 << qi);
            if self.nonempty[port] == 0 {
                self.ports_nonempty &= !(1 << port);
            }
        } else {
            self.pkt_link.read(port, r.head as usize);
            r.refill = Refill::LinkRead;
            self.refilling[port] = Some(qi as u8);
            self.refill_at[port] = now + self.latency;
        }
        d
    }

    /// Whether `port` has a refetch in flight (its scheduler waits for it).
    #[inline]
    pub fn refilling(&self, port: usize) -> bool {
        self.refilling[port].is_some()
    }

    /// Cycle at which `port`'s refetch needs its next step (`u64::MAX`: none in flight).
    #[inline]
    pub fn refill_at(&self, port: usize) -> u64 {
        self.refill_at[port]
    }

    /// Advance the refetch of `port` if its read data is on the RAM output in cycle `now`.
    pub fn advance_refill(&mut self, port: usize, now: u64) {
        if self.refill_at[port] != now {
            return;
        }
        let Some(qi) = self.refilling[port] else {
            return;
        };
        let idx = port * 8 + qi as usize;
        match self.q[idx].refill {
            Refill::LinkRead => {
                let next = self
                    .pkt_link
                    .rdata(port)
                    .expect("packet link data due this cycle");
                self.q[idx].head = next;
                self.desc.read(port, next as usize);
                self.q[idx].refill = Refill::DescRead;
                self.refill_at[port] = now + self.latency;
            }
            Refill::DescRead => {
                let d = self
                    .desc
                    .rdata(port)
                    .expect("descriptor data due this cycle");
                self.q[idx].head_desc = Some(d);
                self.q[idx].refill = Refill::Idle;
                self.refilling[port] = None;
                self.refill_at[port] = u64::MAX;
            }
            Refill::Idle => unreachable!("refilling port without a refill state"),
        }
    }

    pub fn commit(&mut self) {
        self.pkt_link.commit();
        self.desc.commit();
    }

    /// Walk a queue's packets through the RAMs (checker access, no timing).
    pub fn walk(&self, port: usize, qi: usize, mut f: impl FnMut(&Desc)) {
        let r = &self.q[port * 8 + qi];
        // While the link read of a refetch is in flight, `head` still names the packet
        // that was just taken.
        let mut p = if r.refill == Refill::LinkRead {
            self.pkt_link.backdoor(r.head as usize)
        } else {
            r.head
        };
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
