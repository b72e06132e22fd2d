//! Occupancy counters, all in cells and all of `CNT_BITS` bits (see `config::CNT_BITS`).
//!
//! Ingress, per (port, priority group): private, shared and headroom cells (for a lossy
//! group the first two hold its lossy private and lossy shared cells). Egress, per
//! (port, queue). Totals: lossless shared (the `sum omega_s` of Eq. 2), lossless headroom,
//! lossy shared, all lossy cells (the occupancy of L2BM's lossy egress pool) and the whole
//! buffer. Updates made in a cycle change the registers at the edge: each update moves
//! the D inputs of the counters it touches at once (the next values, in the order of the
//! updates), and the edge copies the D inputs of the moved counters to the registers,
//! which every reader sees.
//!
//! Watermarks ([`Watermarks`]) sit next to the counters they watch: the highest value each
//! counter held at an edge since reset, the registers SAI reads as `..._WATERMARK_BYTES`
//! (docs/signals.md). A watermark is compared only when a charge raised its counter at that
//! edge, so idle queues cost nothing.
//!
//! The ingress counters of a group are water levels, not tags on cells: an admitted packet
//! fills private, then shared, then headroom (DSH II-C), and a departing cell drains them
//! in the opposite order, headroom first. Draining by the segment a cell was admitted to
//! would leave old headroom charges in place while the queue is resumed and refilled, so
//! headroom use would ratchet up over successive pause episodes until it overflowed; with
//! headroom drained first, the headroom count is the queue's excess over `phi + T` at the
//! time it was paused, which is what Eq. 1 sizes.

use crate::config::{CNT_BITS, QUEUES};
use crate::wires::Segment;
use rtl::{BlockError, Clocked, Counter, CounterError, Visit};

pub type Cells = Counter<{ CNT_BITS as usize }>;

/// Counter slot within an ingress group for a segment.
#[inline]
pub fn slot(s: Segment) -> usize {
    match s {
        Segment::Private | Segment::LossyPrivate => 0,
        Segment::Shared | Segment::LossyShared => 1,
        Segment::Headroom => 2,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    /// `n` cells of a packet charged to `(port, pg)` segment `seg` and egress `(dport, q)`.
    Charge {
        port: u8,
        pg: u8,
        seg: Segment,
        dport: u8,
        n: u32,
    },
    /// One cell of a lossless or lossy group released.
    Release {
        port: u8,
        pg: u8,
        lossless: bool,
        dport: u8,
    },
}

/// Highest value since reset of the occupancy counters, cells; each register is
/// `CNT_BITS` wide like the counter it watches and never below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watermarks {
    /// `[port * 8 + pg]`: `[total, shared, headroom]` of the ingress group, where total is
    /// the sum of its three counters (SAI: PG `WATERMARK`, `SHARED_WATERMARK`,
    /// `XOFF_ROOM_WATERMARK`).
    pub ingress: Vec<[u32; 3]>,
    /// `[port * 8 + q]`: the egress queue counter.
    pub egress: Vec<u32>,
    /// Lossless shared segment, lossless headroom, lossy shared segment, whole buffer.
    pub shared_total: u32,
    pub headroom_total: u32,
    pub lossy_shared_total: u32,
    pub total: u32,
}

#[derive(Debug, Clone)]
pub struct Accounting {
    /// `[port * 8 + pg][slot]`.
    pub ingress: Vec<[Cells; 3]>,
    /// `[port * 8 + q]`.
    pub egress: Vec<Cells>,
    pub shared_total: Cells,
    pub lossy_shared_total: Cells,
    /// Every lossy cell, private and shared: the sum of the lossy egress counters, which
    /// L2BM's egress DT compares with the lossy pool.
    pub lossy_total: Cells,
    pub total: Cells,
    /// Lossless headroom cells of every group (SAI: the pool's XOFF room occupancy).
    pub headroom_total: Cells,
    pub watermarks: Watermarks,
    /// Per ingress port, the lossless shared cells of all its groups (DSH compares it
    /// with `X_poff`, Eq. 6) and the lossless headroom cells (DSH: the port's insurance).
    pub port_shared: Vec<Cells>,
    pub port_headroom: Vec<Cells>,
    /// The D inputs of the registers above.
    next: Next,
    /// Per update of the cycle: its ingress group, its egress queue and whether it is a
    /// charge (the registers the edge publishes, and the watermarks it raises).
    moved: Vec<(u32, u32, bool)>,
    /// The first update of the cycle that would have wrapped a counter.
    wrapped: Option<CounterError>,
}

/// The counters as the cycle's updates leave them.
#[derive(Debug, Clone)]
struct Next {
    ingress: Vec<[Cells; 3]>,
    egress: Vec<Cells>,
    shared_total: Cells,
    lossy_shared_total: Cells,
    lossy_total: Cells,
    total: Cells,
    headroom_total: Cells,
    port_shared: Vec<Cells>,
    port_headroom: Vec<Cells>,
}

impl Next {
    fn new(ports: usize) -> Self {
        Self {
            ingress: vec![[Cells::ZERO; 3]; ports * QUEUES],
            egress: vec![Cells::ZERO; ports * QUEUES],
            shared_total: Cells::ZERO,
            lossy_shared_total: Cells::ZERO,
            lossy_total: Cells::ZERO,
            total: Cells::ZERO,
            headroom_total: Cells::ZERO,
            port_shared: vec![Cells::ZERO; ports],
            port_headroom: vec![Cells::ZERO; ports],
        }
    }

    /// One update. A counter that would wrap is a model bug and is returned as such.
    fn apply(&mut self, u: Update) -> Result<(), CounterError> {
        match u {
            Update::Charge {
                port,
                pg,
                seg,
                dport,
                n,
            } => {
                self.ingress[port as usize * QUEUES + pg as usize][slot(seg)].add(n)?;
                self.egress[dport as usize * QUEUES + pg as usize].add(n)?;
                self.total.add(n)?;
                match seg {
                    Segment::Shared => {
                        self.shared_total.add(n)?;
                        self.port_shared[port as usize].add(n)?;
                    }
                    Segment::Headroom => {
                        self.port_headroom[port as usize].add(n)?;
                        self.headroom_total.add(n)?;
                    }
                    Segment::LossyShared => {
                        self.lossy_shared_total.add(n)?;
                        self.lossy_total.add(n)?;
                    }
                    Segment::LossyPrivate => self.lossy_total.add(n)?,
                    Segment::Private => {}
                }
            }
            Update::Release {
                port,
                pg,
                lossless,
                dport,
            } => {
                let g = &mut self.ingress[port as usize * QUEUES + pg as usize];
                let s = if g[2].get() > 0 {
                    2
                } else if g[1].get() > 0 {
                    1
                } else {
                    0
                };
                g[s].sub(1)?;
                self.egress[dport as usize * QUEUES + pg as usize].sub(1)?;
                self.total.sub(1)?;
                if !lossless {
                    self.lossy_total.sub(1)?;
                }
                match (s, lossless) {
                    (1, true) => {
                        self.shared_total.sub(1)?;
                        self.port_shared[port as usize].sub(1)?;
                    }
                    (1, false) => self.lossy_shared_total.sub(1)?,
                    (2, _) => {
                        self.port_headroom[port as usize].sub(1)?;
                        self.headroom_total.sub(1)?;
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

impl Accounting {
    pub fn new(ports: usize) -> Self {
        Self {
            ingress: vec![[Cells::ZERO; 3]; ports * QUEUES],
            egress: vec![Cells::ZERO; ports * QUEUES],
            shared_total: Cells::ZERO,
            lossy_shared_total: Cells::ZERO,
            lossy_total: Cells::ZERO,
            total: Cells::ZERO,
            headroom_total: Cells::ZERO,
            watermarks: Watermarks {
                ingress: vec![[0; 3]; ports * QUEUES],
                egress: vec![0; ports * QUEUES],
                shared_total: 0,
                headroom_total: 0,
                lossy_shared_total: 0,
                total: 0,
            },
            port_shared: vec![Cells::ZERO; ports],
            port_headroom: vec![Cells::ZERO; ports],
            next: Next::new(ports),
            moved: Vec::with_capacity(ports * 4),
            wrapped: None,
        }
    }

    #[inline]
    pub fn group(&self, port: usize, pg: usize) -> [u32; 3] {
        let g = &self.ingress[port * QUEUES + pg];
        [g[0].get(), g[1].get(), g[2].get()]
    }

    /// Whether updates wait for the edge (the counters move at it).
    #[inline]
    pub fn has_updates(&self) -> bool {
        !self.moved.is_empty()
    }

    /// An update of the cycle: a release picks its segment from the levels the earlier
    /// updates of the cycle left (every charge of admission, then the releases of egress).
    #[inline]
    pub fn push(&mut self, u: Update) {
        let (port, pg, dport, charged) = match u {
            Update::Charge {
                port, pg, dport, ..
            } => (port, pg, dport, true),
            Update::Release {
                port, pg, dport, ..
            } => (port, pg, dport, false),
        };
        if let Err(e) = self.next.apply(u) {
            self.wrapped.get_or_insert(e);
        }
        let g = port as u32 * QUEUES as u32 + pg as u32;
        let e = dport as u32 * QUEUES as u32 + pg as u32;
        self.moved.push((g, e, charged));
    }

    /// Add one cell to ingress counter `slot` of group `g` without a cell behind it
    /// (`Fault::SkewCounter`).
    pub fn skew(&mut self, g: usize, slot: usize) {
        for c in [&mut self.ingress[g][slot], &mut self.next.ingress[g][slot]] {
            c.add(1).expect("room for one more cell");
        }
    }

    /// The edge: the moved counters take their D inputs, then the watermarks of the
    /// counters charged at this edge rise to their registered values (a charge and a
    /// release in one cycle leave the net value, which is what the registers held).
    fn publish(&mut self) {
        let next = &self.next;
        let wm = &mut self.watermarks;
        let mut charged = false;
        for &(g, e, charge) in &self.moved {
            let (g, e, port) = (g as usize, e as usize, g as usize / QUEUES);
            self.ingress[g] = next.ingress[g];
            self.egress[e] = next.egress[e];
            self.port_shared[port] = next.port_shared[port];
            self.port_headroom[port] = next.port_headroom[port];
            if charge {
                charged = true;
                let c = &self.ingress[g];
                let now = [c[0].get() + c[1].get() + c[2].get(), c[1].get(), c[2].get()];
                for (w, v) in wm.ingress[g].iter_mut().zip(now) {
                    *w = (*w).max(v);
                }
                wm.egress[e] = wm.egress[e].max(self.egress[e].get());
            }
        }
        self.shared_total = next.shared_total;
        self.lossy_shared_total = next.lossy_shared_total;
        self.lossy_total = next.lossy_total;
        self.total = next.total;
        self.headroom_total = next.headroom_total;
        if charged {
            wm.shared_total = wm.shared_total.max(self.shared_total.get());
            wm.headroom_total = wm.headroom_total.max(self.headroom_total.get());
            wm.lossy_shared_total = wm.lossy_shared_total.max(self.lossy_shared_total.get());
            wm.total = wm.total.max(self.total.get());
        }
    }

    /// The counters of ingress queue `(port, pg)`, named for its pool.
    pub fn probe_group<V: Visit>(&self, port: usize, pg: usize, lossless: bool, v: &mut V) {
        let [private, shared, headroom] = self.group(port, pg);
        if lossless {
            v.wire("private_cells", CNT_BITS, private as u64);
            v.wire("shared_cells", CNT_BITS, shared as u64);
            v.wire("headroom_cells", CNT_BITS, headroom as u64);
        } else {
            v.wire("lossy_private_cells", CNT_BITS, private as u64);
            v.wire("lossy_shared_cells", CNT_BITS, shared as u64);
        }
    }

    /// `buffer.*` after `free_cells`.
    pub fn probe_totals<V: Visit>(&self, v: &mut V) {
        v.wire("total_cells", CNT_BITS, self.total.get() as u64);
        v.wire("shared_cells", CNT_BITS, self.shared_total.get() as u64);
        v.wire(
            "lossy_shared_cells",
            CNT_BITS,
            self.lossy_shared_total.get() as u64,
        );
    }

    /// The counter of egress queue `(port, q)`.
    pub fn probe_egress<V: Visit>(&self, port: usize, q: usize, v: &mut V) {
        v.wire(
            "cells",
            CNT_BITS,
            self.egress[port * QUEUES + q].get() as u64,
        );
    }

    /// Every watermark at or above the counter it watches: the first that is not, as
    /// `(name, watermark, counter)`.
    pub fn check_watermarks(&self) -> Option<(String, u32, u32)> {
        let wm = &self.watermarks;
        for (i, g) in self.ingress.iter().enumerate() {
            let now = [g[0].get() + g[1].get() + g[2].get(), g[1].get(), g[2].get()];
            for (k, name) in ["total", "shared", "headroom"].iter().enumerate() {
                if wm.ingress[i][k] < now[k] {
                    let (p, pg) = (i / QUEUES, i % QUEUES);
                    return Some((
                        format!("ingress p{p} pg{pg} {name}"),
                        wm.ingress[i][k],
                        now[k],
                    ));
                }
            }
        }
        for (i, e) in self.egress.iter().enumerate() {
            if wm.egress[i] < e.get() {
                let (p, q) = (i / QUEUES, i % QUEUES);
                return Some((format!("egress p{p} q{q}"), wm.egress[i], e.get()));
            }
        }
        [
            ("shared total", wm.shared_total, self.shared_total),
            ("headroom total", wm.headroom_total, self.headroom_total),
            (
                "lossy shared total",
                wm.lossy_shared_total,
                self.lossy_shared_total,
            ),
            ("buffer total", wm.total, self.total),
        ]
        .into_iter()
        .find(|(_, w, c)| *w < c.get())
        .map(|(name, w, c)| (name.to_string(), w, c.get()))
    }
}

impl Clocked for Accounting {
    /// The clock edge: publish the cycle's updates and raise the watermarks.
    fn commit(&mut self, _: u64) -> Result<(), BlockError> {
        self.publish();
        self.moved.clear();
        match self.wrapped.take() {
            None => Ok(()),
            Some(e) => Err(BlockError(e.to_string())),
        }
    }
}
