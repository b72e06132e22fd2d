//! Monitor: turns the wires of the MMU's outputs (and the link partners' transmit side)
//! into cell transactions, the one currency the scoreboard and the cell trace understand.
//! Kept apart from the checking, as in cocotb-bus, so a check never depends on how a
//! transaction was observed.

use hw_model::{Beat, CellFate, DropReason, Outputs, Segment};

/// What happened to a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnKind {
    /// A link partner put the cell's beat on the link (testbench side).
    Inject,
    Admit(Segment),
    Drop(DropReason),
    /// The cell left the buffer on this egress port.
    Depart(u8),
}

impl TxnKind {
    /// Event name used in the cell trace.
    pub fn name(self) -> &'static str {
        match self {
            Self::Inject => "inject",
            Self::Admit(_) => "admit",
            Self::Drop(_) => "drop",
            Self::Depart(_) => "depart",
        }
    }
}

/// One observed cell event: the beat where the wire holds it (an event, a departure, the
/// link), not a copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellTxn<'a> {
    pub cycle: u64,
    pub kind: TxnKind,
    pub beat: &'a Beat,
}

/// The cell events (admissions and drops) of one MMU cycle, in output order; its
/// [`departures`] follow them. Two iterators over plain slices rather than one chained: the
/// caller's handling of each is one inlined loop body with the kind's half of the match
/// known.
#[inline]
pub fn cell_events(cycle: u64, out: &Outputs) -> impl Iterator<Item = CellTxn<'_>> {
    out.cell_events.iter().map(move |ev| CellTxn {
        cycle,
        kind: match ev.fate {
            CellFate::Admitted(s) => TxnKind::Admit(s),
            CellFate::Dropped(r) => TxnKind::Drop(r),
        },
        beat: &ev.beat,
    })
}

/// The departures of one MMU cycle, in output order (after its [`cell_events`]).
#[inline]
pub fn departures(cycle: u64, out: &Outputs) -> impl Iterator<Item = CellTxn<'_>> {
    out.departures.iter().map(move |dep| CellTxn {
        cycle,
        kind: TxnKind::Depart(dep.port),
        beat: &dep.beat,
    })
}
