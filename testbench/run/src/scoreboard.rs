//! Scoreboard: checks the cell transactions the monitor reports.
//!
//! - Order: the cells of a flow must depart in strictly increasing `(seq, idx)` order.
//!   Dropped packets leave gaps, which are allowed; a cell that departs behind one already
//!   departed (or twice) counts as reordered.
//! - Routing: a cell must depart on its header's `dst` port.
//! - Conservation (at the end): every injected cell has departed, was dropped, is still
//!   buffered, or is still on a link.
//!
//! The model charges a packet's cells at its first cell (admission is per packet), so its
//! `buffered_cells()` includes cells of packets still arriving. The scoreboard tracks those
//! "owed" cells per ingress port from the admit events and takes them out of the buffered
//! count, so the equation balances on every cycle, not only when no packet is mid-arrival.

use crate::monitor::{CellTxn, TxnKind};
use hw_model::DropReason;
use std::fmt;

/// Cell counts of the conservation check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conservation {
    pub injected: u64,
    pub departed: u64,
    pub dropped: u64,
    pub buffered: u64,
    pub in_flight: u64,
}

impl Conservation {
    pub fn ok(&self) -> bool {
        self.injected == self.departed + self.dropped + self.buffered + self.in_flight
    }
}

impl fmt::Display for Conservation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let accounted = self.departed + self.dropped + self.buffered + self.in_flight;
        write!(
            f,
            "injected {} = departed {} + dropped {} + buffered {} + in flight {} ",
            self.injected, self.departed, self.dropped, self.buffered, self.in_flight
        )?;
        if self.ok() {
            write!(f, "OK")
        } else {
            write!(f, "FAILED ({accounted} accounted for)")
        }
    }
}

/// Cell `idx` of packet `seq` as one integer that orders as `(seq, idx)` does, above 0 (a
/// flow with nothing departed yet): the order check is one comparison.
fn order_key(seq: u32, idx: u16) -> u64 {
    ((seq as u64) << 16 | idx as u64) + 1
}

/// Running checks and counts over all cell transactions.
#[derive(Debug, Clone)]
pub struct Scoreboard {
    pub injected: u64,
    pub departed: u64,
    /// By segment, in `Segment::ALL` order.
    pub admitted: [u64; 5],
    /// By reason, in `DropReason::ALL` order.
    pub dropped: [u64; DropReason::ALL.len()],
    pub reordered: u64,
    /// Departed on a port other than the header's `dst`, or with an unknown flow id.
    pub misrouted: u64,
    /// Highest `(seq, idx)` departed per flow, as an [`order_key`] (0: none yet).
    last: Vec<u64>,
    /// Per ingress port, cells of the admitted packet still to arrive.
    owed: Vec<u16>,
    first_error: Option<String>,
}

impl Scoreboard {
    /// A scoreboard for flow ids `0..flows`.
    pub fn new(flows: usize) -> Self {
        Self::with_ports(flows, hw_model::config::MAX_PORTS)
    }

    /// A scoreboard for flow ids `0..flows` on a switch of `ports` ports.
    pub fn with_ports(flows: usize, ports: usize) -> Self {
        Self {
            injected: 0,
            departed: 0,
            admitted: [0; 5],
            dropped: [0; DropReason::ALL.len()],
            reordered: 0,
            misrouted: 0,
            last: vec![0; flows],
            owed: vec![0; ports],
            first_error: None,
        }
    }

    fn note(&mut self, what: impl FnOnce() -> String) {
        if self.first_error.is_none() {
            self.first_error = Some(what());
        }
    }

    /// Inlined into the monitor's loop: a transaction is a few counts and, for a
    /// departure, the order and routing checks.
    #[inline(always)]
    pub fn record(&mut self, t: &CellTxn) {
        match t.kind {
            TxnKind::Inject => self.injected += 1,
            TxnKind::Admit(s) => {
                // `Segment::ALL` lists the segments in declaration order (unit test below).
                self.admitted[s as usize] += 1;
                if let Some(o) = self.owed.get_mut(t.beat.hdr.src as usize) {
                    *o = t.beat.ncells.saturating_sub(t.beat.idx + 1);
                }
            }
            TxnKind::Drop(r) => {
                self.dropped[r as usize] += 1;
                if let Some(o) = self.owed.get_mut(t.beat.hdr.src as usize) {
                    *o = 0;
                }
            }
            TxnKind::Depart(port) => self.depart(t, port),
        }
    }

    #[inline(always)]
    fn depart(&mut self, t: &CellTxn, port: u8) {
        self.departed += 1;
        let h = &t.beat.hdr;
        let key = order_key(h.seq, t.beat.idx);
        let Some(last) = self.last.get_mut(h.flow as usize) else {
            self.note_unknown_flow(*t);
            return;
        };
        if key <= *last {
            let prev = *last;
            self.note_reordered(*t, prev);
        } else {
            *last = key;
        }
        if port != h.dst {
            self.note_misrouted(*t, port);
        }
    }

    /// Cell `t` departed with a flow id the scoreboard does not know.
    #[cold]
    fn note_unknown_flow(&mut self, t: CellTxn) {
        self.misrouted += 1;
        self.note(|| {
            format!(
                "cycle {}: departure of unknown flow {}",
                t.cycle, t.beat.hdr.flow
            )
        });
    }

    /// Cell `t` departed behind `prev`, the [`order_key`] of the highest `(seq, idx)` of
    /// its flow so far.
    #[cold]
    fn note_reordered(&mut self, t: CellTxn, prev: u64) {
        self.reordered += 1;
        let prev = ((prev - 1) >> 16, (prev - 1) & 0xFFFF);
        self.note(|| {
            format!(
                "cycle {}: flow {} cell (seq {}, idx {}) departed after (seq {}, idx {})",
                t.cycle, t.beat.hdr.flow, t.beat.hdr.seq, t.beat.idx, prev.0, prev.1
            )
        });
    }

    /// Cell `t` departed on `port`, not on its header's `dst`.
    #[cold]
    fn note_misrouted(&mut self, t: CellTxn, port: u8) {
        self.misrouted += 1;
        self.note(|| {
            format!(
                "cycle {}: flow {} cell departed on port {port}, dst is {}",
                t.cycle, t.beat.hdr.flow, t.beat.hdr.dst
            )
        });
    }

    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }

    pub fn dropped_for(&self, r: DropReason) -> u64 {
        self.dropped[r as usize]
    }

    pub fn dropped_lossless(&self) -> u64 {
        DropReason::sum(true, |r| self.dropped_for(r))
    }

    pub fn dropped_lossy(&self) -> u64 {
        self.dropped_total() - self.dropped_lossless()
    }

    /// Cells charged to admitted packets that have not arrived at the MMU yet.
    pub fn owed(&self) -> u64 {
        self.owed.iter().map(|&o| o as u64).sum()
    }

    /// The conservation equation with the DUT's `buffered_cells()` (which includes owed
    /// cells, see the module doc) and the links' in-flight cells.
    pub fn conservation(&self, dut_buffered: u64, in_flight: u64) -> Conservation {
        Conservation {
            injected: self.injected,
            departed: self.departed,
            dropped: self.dropped_total(),
            buffered: dut_buffered.saturating_sub(self.owed()),
            in_flight,
        }
    }

    /// The first ordering or routing error seen, for the report.
    pub fn first_error(&self) -> Option<&str> {
        self.first_error.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw_model::Segment;

    /// The counters are indexed by discriminant: `ALL` must list the variants in
    /// declaration order, or a cell is counted under another segment or reason.
    #[test]
    fn segments_and_drop_reasons_are_indexed_in_all_order() {
        for (i, s) in Segment::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i, "{}", s.name());
        }
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i, "{}", r.name());
        }
    }
}
