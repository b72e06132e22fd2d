//! Egress transmitter of one port: serialises PFC frames and packets at line rate.
//!
//! A packet's cell `k` must be read from the SRAM before the wire reaches its first byte;
//! reading a cell frees it (pointer back to the free list, counters decremented) and issues
//! the read of its next-pointer, which arrives `sram_read_latency` cycles later. If the
//! wire gets to a cell that has not been read (no read grant, or its pointer not back
//! yet) the wire stalls for the cycle and the stall is counted.

use crate::packet_queue::Desc;
use crate::wires::PfcFrame;
use rtl::PhaseAccumulator;

#[derive(Debug, Clone, Copy)]
pub struct DataTx {
    pub desc: Desc,
    /// Egress queue the packet came from.
    pub queue: u8,
    /// Next cell to read.
    pub k: u16,
    /// Pointer of cell `k`, once known.
    pub cell_ptr: Option<u32>,
    /// Pointer of cell `k - 1` (checker access while the link read is in flight).
    pub last_ptr: u32,
    /// Cycle the next-pointer of cell `k - 1` is on the link RAM's output.
    pub ptr_at: u64,
}

#[derive(Debug, Clone, Copy)]
pub enum Tx {
    Idle,
    Pfc(PfcFrame),
    Data(DataTx),
}

impl Tx {
    /// Waveform encoding: 0 idle, 1 PFC frame, 2 data.
    pub fn code(&self) -> u64 {
        match self {
            Tx::Idle => 0,
            Tx::Pfc(_) => 1,
            Tx::Data(_) => 2,
        }
    }
}

/// A port is evaluated only in cycles where something can happen to it: its wake cycle
/// (next cell read point, end of frame, SRAM data due), or a kick from outside (a packet
/// enqueued, a PFC frame to send, a pause change). In between, the wire's phase
/// accumulator is advanced in one step by the cycles skipped, which gives exactly the
/// same bit times as ticking every cycle.
#[derive(Debug, Clone)]
pub struct EgressPort {
    pub tx: Tx,
    pub wire: PhaseAccumulator,
    /// Last cycle the port was evaluated.
    pub last_visit: u64,
    /// Next cycle the port must be evaluated (`u64::MAX`: only on a kick).
    pub wake: u64,
}

impl EgressPort {
    pub fn new(rate_bps: u64, clock_hz: u64) -> Self {
        Self {
            tx: Tx::Idle,
            wire: PhaseAccumulator::new(rate_bps, clock_hz),
            last_visit: 0,
            wake: u64::MAX,
        }
    }
}
