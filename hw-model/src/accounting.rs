//! Occupancy counters, all in cells and all of `CNT_BITS` bits (see `config::CNT_BITS`).
//!
//! Ingress, per (port, priority group): private, shared and headroom cells (for a lossy
//! group the first two hold its lossy private and lossy shared cells). Egress, per
//! (port, queue). Totals: lossless shared (the `sum omega_s` of Eq. 2), lossless headroom,
//! lossy shared, all lossy cells (the occupancy of L2BM's lossy egress pool) and the whole
//! buffer. Updates made in a cycle are applied at the edge.
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

/// Ingress group or egress queue `port * 8 + q`.
#[inline(always)]
fn index(port: u8, q: u8) -> u16 {
    (port as usize * QUEUES + q as usize) as u16
}

/// An [`Update::Charge`] as the edge replays it: the counter indices computed once.
#[derive(Debug, Clone, Copy)]
struct Charge {
    /// Ingress group `port * 8 + pg`, its counter slot, egress queue `dport * 8 + pg`.
    group: u16,
    slot: u8,
    queue: u16,
    port: u8,
    seg: Segment,
    n: u32,
}

/// An [`Update::Release`] as the edge replays it.
#[derive(Debug, Clone, Copy)]
struct Release {
    group: u16,
    queue: u16,
    port: u8,
    lossless: bool,
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
    /// The cycle's updates, waiting for the edge, in the order they were pushed. Charges
    /// (admission, phase 2) all come before releases (egress, phase 4), so two lists
    /// replayed one after the other keep that order.
    charges: Vec<Charge>,
    releases: Vec<Release>,
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
            charges: Vec::with_capacity(ports * 3),
            releases: Vec::with_capacity(ports),
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
        !(self.charges.is_empty() && self.releases.is_empty())
    }

    #[inline(always)]
    pub fn push(&mut self, u: Update) {
        match u {
            Update::Charge {
                port,
                pg,
                seg,
                dport,
                n,
            } => self.charges.push(Charge {
                group: index(port, pg),
                slot: slot(seg) as u8,
                queue: index(dport, pg),
                port,
                seg,
                n,
            }),
            Update::Release {
                port,
                pg,
                lossless,
                dport,
            } => self.releases.push(Release {
                group: index(port, pg),
                queue: index(dport, pg),
                port,
                lossless,
            }),
        }
    }

    /// The updates of the cycle, in the order they were pushed: the charges, then the
    /// releases. A counter that would wrap is a model bug and is returned as such.
    fn apply(&mut self) -> Result<(), CounterError> {
        for c in &self.charges {
            let (n, port) = (c.n, c.port as usize);
            self.ingress[c.group as usize][c.slot as usize].add(n)?;
            self.egress[c.queue as usize].add(n)?;
            self.total.add(n)?;
            match c.seg {
                Segment::Shared => {
                    self.shared_total.add(n)?;
                    self.port_shared[port].add(n)?;
                }
                Segment::Headroom => {
                    self.port_headroom[port].add(n)?;
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
        for r in &self.releases {
            let port = r.port as usize;
            let g = &mut self.ingress[r.group as usize];
            let s = if g[2].get() > 0 {
                2
            } else if g[1].get() > 0 {
                1
            } else {
                0
            };
            g[s].sub(1)?;
            self.egress[r.queue as usize].sub(1)?;
            self.total.sub(1)?;
            if !r.lossless {
                self.lossy_total.sub(1)?;
            }
            match (s, r.lossless) {
                (1, true) => {
                    self.shared_total.sub(1)?;
                    self.port_shared[port].sub(1)?;
                }
                (1, false) => self.lossy_shared_total.sub(1)?,
                (2, _) => {
                    self.port_headroom[port].sub(1)?;
                    self.headroom_total.sub(1)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// After the edge's updates: raise the watermarks of the counters charged at this edge
    /// to their registered values (a charge and a release in one cycle leave the net value,
    /// which is what the registers held).
    fn update_watermarks(&mut self) {
        if self.charges.is_empty() {
            return;
        }
        let wm = &mut self.watermarks;
        for c in &self.charges {
            let i = c.group as usize;
            let g = &self.ingress[i];
            let now = [g[0].get() + g[1].get() + g[2].get(), g[1].get(), g[2].get()];
            for (w, v) in wm.ingress[i].iter_mut().zip(now) {
                *w = (*w).max(v);
            }
            let e = c.queue as usize;
            wm.egress[e] = wm.egress[e].max(self.egress[e].get());
        }
        wm.shared_total = wm.shared_total.max(self.shared_total.get());
        wm.headroom_total = wm.headroom_total.max(self.headroom_total.get());
        wm.lossy_shared_total = wm.lossy_shared_total.max(self.lossy_shared_total.get());
        wm.total = wm.total.max(self.total.get());
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
    /// The clock edge: apply the cycle's updates, then raise the watermarks.
    fn commit(&mut self, _: u64) -> Result<(), BlockError> {
        let applied = self.apply();
        if applied.is_ok() {
            self.update_watermarks();
        }
        self.charges.clear();
        self.releases.clear();
        applied.map_err(|e| BlockError(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charge(acct: &mut Accounting, seg: Segment, n: u32) {
        acct.push(Update::Charge {
            port: 0,
            pg: 3,
            seg,
            dport: 1,
            n,
        });
    }

    fn release(acct: &mut Accounting) {
        acct.push(Update::Release {
            port: 0,
            pg: 3,
            lossless: true,
            dport: 1,
        });
    }

    #[test]
    fn counters_move_at_the_edge_only() {
        let mut acct = Accounting::new(2);
        charge(&mut acct, Segment::Private, 2);
        assert!(acct.has_updates());
        assert_eq!(acct.group(0, 3), [0, 0, 0], "a charge waits for the edge");
        acct.commit(0).unwrap();
        assert!(!acct.has_updates());
        assert_eq!(acct.group(0, 3), [2, 0, 0]);
        assert_eq!(acct.egress[QUEUES + 3].get(), 2);
        assert_eq!(acct.total.get(), 2);
    }

    #[test]
    fn a_release_drains_the_levels_the_cycles_charges_left() {
        let mut acct = Accounting::new(2);
        charge(&mut acct, Segment::Private, 2);
        acct.commit(0).unwrap();
        // Admission's charge comes before egress's release in a cycle: the release takes
        // the shared cell charged in the same cycle, not a private one.
        charge(&mut acct, Segment::Shared, 1);
        release(&mut acct);
        acct.commit(1).unwrap();
        assert_eq!(acct.group(0, 3), [2, 0, 0]);
        assert_eq!(acct.shared_total.get(), 0);
        assert_eq!(acct.port_shared[0].get(), 0);
        assert_eq!(acct.egress[QUEUES + 3].get(), 2);
        assert_eq!(acct.total.get(), 2);
        // The watermarks see the net value the registers held, not the charge alone.
        assert_eq!(acct.watermarks.ingress[3], [2, 0, 0]);
        assert_eq!(acct.watermarks.egress[QUEUES + 3], 2);
        assert_eq!(acct.watermarks.shared_total, 0);
    }

    #[test]
    fn a_counter_that_would_wrap_is_an_error_at_the_edge() {
        let mut acct = Accounting::new(2);
        charge(&mut acct, Segment::Shared, Cells::MAX + 1);
        let err = acct.commit(0).unwrap_err();
        assert!(err.0.contains("overflow"), "{err}");
        release(&mut acct);
        let err = acct.commit(1).unwrap_err();
        assert!(err.0.contains("underflow"), "{err}");
    }
}
