//! Event counters of a run: what the summary reports. Nothing the model drops escapes them.

use crate::config::QUEUES;
use crate::wires::{DropReason, PfcFrame, Segment};

/// Drops charged to one ingress priority group or egress queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropCounts {
    /// Packets refused (SAI: `DROPPED_PACKETS` of the PG or queue).
    pub packets: u64,
    /// Their cells, by reason (index: position in `DropReason::ALL`).
    pub cells: [u64; DropReason::ALL.len()],
}

/// PFC frames of one port that carried one priority: PAUSE (time > 0) and RESUME (time 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PfcCounts {
    pub pause: u64,
    pub resume: u64,
}

impl PfcCounts {
    /// Count `f` under each priority it carries.
    fn add(per_prio: &mut [PfcCounts; QUEUES], f: &PfcFrame) {
        for (c, n) in per_prio.iter_mut().enumerate() {
            if f.class_enable & (1 << c) != 0 {
                if f.quanta[c] != 0 {
                    n.pause += 1;
                } else {
                    n.resume += 1;
                }
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Cycles an egress port waited for an SRAM read grant.
    pub read_stall_cycles: u64,
    /// `[port * 8 + pg]`: drops at ingress admission (the reasons for which
    /// [`DropReason::at_egress`] is false), charged to the packet's ingress group.
    pub pg_drops: Vec<DropCounts>,
    /// `[port * 8 + q]`: drops at an egress queue's own limit, charged to that queue.
    pub queue_drops: Vec<DropCounts>,
    /// `[port][priority]`: PFC frames the port transmitted upstream and received from
    /// downstream.
    pub pfc_tx: Vec<[PfcCounts; QUEUES]>,
    pub pfc_rx: Vec<[PfcCounts; QUEUES]>,
}

impl Stats {
    pub fn new(ports: usize) -> Self {
        Self {
            cells_in: 0,
            admitted: [0; 5],
            dropped: [0; DropReason::ALL.len()],
            cells_out: 0,
            packets_out: 0,
            pfc_pause_frames_tx: 0,
            pfc_resume_frames_tx: 0,
            pfc_pause_events: 0,
            pfc_resume_events: 0,
            pfc_frames_rx: 0,
            read_stall_cycles: 0,
            pg_drops: vec![DropCounts::default(); ports * QUEUES],
            queue_drops: vec![DropCounts::default(); ports * QUEUES],
            pfc_tx: vec![[PfcCounts::default(); QUEUES]; ports],
            pfc_rx: vec![[PfcCounts::default(); QUEUES]; ports],
        }
    }

    /// One dropped cell of a packet from ingress `src` to egress `dst` at priority `prio`;
    /// `sop`: its first cell, which counts the packet.
    pub fn drop_cell(&mut self, src: u8, dst: u8, prio: u8, r: DropReason, sop: bool) {
        let ri = reason_index(r);
        self.dropped[ri] += 1;
        let (table, port) = if r.at_egress() {
            (&mut self.queue_drops, dst)
        } else {
            (&mut self.pg_drops, src)
        };
        let d = &mut table[port as usize * QUEUES + prio as usize];
        d.cells[ri] += 1;
        d.packets += sop as u64;
    }

    /// A PFC frame whose last bit left `port` upstream.
    pub fn pfc_sent(&mut self, port: usize, f: &PfcFrame) {
        PfcCounts::add(&mut self.pfc_tx[port], f);
    }

    /// A PFC frame received from the device downstream of `port`.
    pub fn pfc_received(&mut self, port: usize, f: &PfcFrame) {
        PfcCounts::add(&mut self.pfc_rx[port], f);
    }

    pub fn admitted_in(&self, s: Segment) -> u64 {
        self.admitted[s.index()]
    }
    pub fn dropped_for(&self, r: DropReason) -> u64 {
        self.dropped[reason_index(r)]
    }
    pub fn dropped_lossless(&self) -> u64 {
        DropReason::sum(true, |r| self.dropped_for(r))
    }
    pub fn dropped_lossy(&self) -> u64 {
        DropReason::sum(false, |r| self.dropped_for(r))
    }
}

/// Position of `r` in `DropReason::ALL`.
pub fn reason_index(r: DropReason) -> usize {
    DropReason::ALL.iter().position(|&x| x == r).unwrap()
}
