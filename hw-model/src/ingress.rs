//! Ingress ports: tag each arriving cell with its packet's admission decision, hold
//! admitted cells in a small per-port cell FIFO, and write them into the shared SRAM.
//!
//! The write stage grants up to `sram_write_cells_per_cycle` FIFO heads per cycle, in
//! round-robin rounds over the ports with cells waiting (several grants to one port when
//! bandwidth is left over). A granted cell takes a pointer from the free list and is
//! chained behind the previous cell of its packet in the cell link RAM; the packet's last
//! cell enqueues it on its egress queue. Configuration checks that the write bandwidth
//! covers the aggregate line rate, and the FIFO is sized so it cannot overflow.

use crate::admission::Plan;
use crate::packet_queue::{Desc, NULL};
use crate::wires::{Beat, DropReason};
use std::collections::VecDeque;

/// An admitted cell waiting for a write port; the start-of-packet cell carries the plan.
#[derive(Debug, Clone, Copy)]
pub struct FifoCell {
    pub beat: Beat,
    pub plan: Plan,
}

/// Per-port state of the ingress stage.
#[derive(Debug, Clone)]
pub struct IngressPort {
    /// Decision for the packet now arriving: `Some(Ok(plan))` admitted, `Some(Err(why))`
    /// dropped, `None` between packets.
    pub arriving: Option<Result<Plan, DropReason>>,
    pub fifo: VecDeque<FifoCell>,
    /// Packets charged and not yet enqueued, oldest first (the checker recounts them).
    pub pending: VecDeque<Desc>,
    /// Cells of the front pending packet already written, and the last one's pointer.
    pub written: u16,
    pub prev: u32,
    /// Beat seen this cycle (for the waveform).
    pub beat_valid: bool,
    /// Index of the cell the bus must deliver next (0: a start of packet).
    pub next_idx: u16,
}

impl IngressPort {
    pub fn new(fifo_depth: usize) -> Self {
        Self {
            arriving: None,
            fifo: VecDeque::with_capacity(fifo_depth),
            // Every packet in the FIFO may be a one-cell packet, plus one being written.
            pending: VecDeque::with_capacity(fifo_depth + 2),
            written: 0,
            prev: NULL,
            beat_valid: false,
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
