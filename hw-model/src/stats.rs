//! Event counters of a run: what the summary reports. Nothing the model drops escapes them.

use crate::wires::{DropReason, Segment};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Cells that arrived on ingress beats.
    pub cells_in: u64,
    /// Cells admitted, by segment (index: position in `Segment::ALL`).
    pub admitted: [u64; 5],
    /// Cells dropped, by reason (index: position in `DropReason::ALL`).
    pub dropped: [u64; DropReason::ALL.len()],
    /// Cells read out of the buffer toward an egress port.
    pub cells_out: u64,
    /// Packets fully transmitted.
    pub packets_out: u64,
    pub pfc_pause_frames_tx: u64,
    pub pfc_resume_frames_tx: u64,
    /// Class transitions to OFF / ON carried by the transmitted frames.
    pub pfc_pause_events: u64,
    pub pfc_resume_events: u64,
    pub pfc_frames_rx: u64,
    /// Highest lossless shared-segment occupancy seen, cells.
    pub max_shared_occupancy_cells: u32,
    /// Highest total buffer occupancy seen, cells.
    pub max_total_occupancy_cells: u32,
    /// Cycles an egress port waited for an SRAM read grant.
    pub read_stall_cycles: u64,
}

impl Stats {
    pub fn admitted_in(&self, s: Segment) -> u64 {
        self.admitted[Segment::ALL.iter().position(|&x| x == s).unwrap()]
    }
    pub fn dropped_for(&self, r: DropReason) -> u64 {
        self.dropped[DropReason::ALL.iter().position(|&x| x == r).unwrap()]
    }
    pub fn dropped_lossless(&self) -> u64 {
        DropReason::sum(true, |r| self.dropped_for(r))
    }
    pub fn dropped_lossy(&self) -> u64 {
        DropReason::sum(false, |r| self.dropped_for(r))
    }
}
