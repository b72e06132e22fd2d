//! In-band network telemetry (INT) at the egress (`[switch] int = true`): as a packet is
//! dequeued for its egress port, the transmitter stamps one hop record, the four fields
//! HPCC (Li et al., SIGCOMM 2019, section 3.2 and Fig. 4) and PowerTCP (Addanki et al.,
//! NSDI 2022, section 4) read at the sender: a timestamp, the port's transmitted-bytes
//! counter, the port's queue length and its line rate.
//!
//! The fields and their widths are those of the ns-3 simulators the papers ran
//! (inet-tub/ns3-datacenter, `simulator/ns-3.39/src/network/utils/int-header.h` lines
//! 12-21 and 26-27): time 24 bits (ns), bytes 20 bits in units of 128 B, queue length 17
//! bits in units of 80 B, line rate a 3-bit code of the table on `int-header.cc` line 5.
//! The switch stamps where ns-3's does (`switch-node.cc` line 270, `SwitchNotifyDequeue`):
//! at the dequeue, with the bytes the port sent before this packet (the counter counts the
//! packet after the stamp, line 366) and the bytes queued at the port without it. Queue
//! bytes are the port's egress cell counters times the cell size: what a chip's queue
//! depth in cells gives (the 80 B unit is one such chip's cell).
//!
//! The transmitter stamps from the registers only ([`IntStamper::stamp`]): the stamp is a
//! value that goes out with the cycle's dequeues, and the registers take it at the edge
//! ([`IntStamper::departures`]), as ECN's looks and HCF's departures do. A second packet
//! dequeued for the same port in a cycle counts the bytes of the first from the values.
//!
//! Off, the block has no port and no probe, and the transmitters do not call it.

use crate::accounting::Accounting;
use crate::config::{int_rate_code as rate_code, Derived, INT_LINE_RATES_BPS, QUEUES};
use crate::wires::PacketHdr;
use rtl::Visit;

/// Widths of the hop fields (`int-header.h` lines 12-14; the rate takes the rest of 64).
pub const TIME_BITS: u32 = 24;
pub const BYTES_BITS: u32 = 20;
pub const QLEN_BITS: u32 = 17;
pub const RATE_BITS: u32 = 3;
/// Units of the bytes and queue-length fields (`int-header.h` lines 26-27).
pub const BYTE_UNIT: u64 = 128;
pub const QLEN_UNIT: u64 = 80;
/// Width of the port's transmitted-bytes counter, whose low bits (from bit 7) the hop
/// carries.
pub const TX_BYTES_BITS: u32 = 48;

/// One hop record as stamped: the fields in their units and widths.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct IntHop {
    /// ns, modulo `2^24`.
    pub time: u32,
    /// Transmitted bytes / 128, modulo `2^20`.
    pub bytes: u32,
    /// Queued bytes / 80, saturated at `2^17 - 1`.
    pub qlen: u32,
    /// Line-rate code.
    pub rate: u8,
}

impl IntHop {
    pub fn line_rate_bps(&self) -> u64 {
        INT_LINE_RATES_BPS[self.rate as usize]
    }

    pub fn qlen_bytes(&self) -> u64 {
        self.qlen as u64 * QLEN_UNIT
    }

    /// Bytes sent between `prev` and this stamp, across the counter's wrap
    /// (`GetBytesDelta`, `int-header.h` lines 68-73).
    pub fn bytes_since(&self, prev: &IntHop) -> u64 {
        let d = self.bytes.wrapping_sub(prev.bytes) & ((1 << BYTES_BITS) - 1);
        d as u64 * BYTE_UNIT
    }

    /// ns between `prev` and this stamp, across the wrap (`GetTimeDelta`, lines 74-79).
    pub fn ns_since(&self, prev: &IntHop) -> u64 {
        (self.time.wrapping_sub(prev.time) & ((1 << TIME_BITS) - 1)) as u64
    }
}

/// A hop record and the packet it travels with (the testbench's side data beside the
/// header, as `DataTx::ce` carries the ECN mark).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntStamp {
    pub port: u8,
    pub flow: u32,
    pub seq: u32,
    pub hop: IntHop,
    /// The packet's bytes, which the port's counter takes at the edge.
    pub len: u16,
}

/// The INT registers of the egress ports.
#[derive(Debug, Clone, Default)]
pub struct IntStamper {
    /// Per egress port (empty while off): bytes dequeued, its line-rate code and the last
    /// hop it stamped.
    tx_bytes: Vec<u64>,
    rate: Vec<u8>,
    last: Vec<IntHop>,
    clock_hz: u64,
    cell_bytes: u64,
    /// [`crate::Fault::IntStuckTxBytes`].
    pub(crate) stuck: bool,
}

impl IntStamper {
    /// The block of `d`: one set of registers per port with `int` on, none otherwise
    /// (`SwitchConfig::build` has checked every port's rate has a code).
    pub fn new(d: &Derived) -> Self {
        if !d.cfg.int {
            return Self::default();
        }
        Self {
            tx_bytes: vec![0; d.ports],
            rate: d
                .rate_bps
                .iter()
                .map(|&r| rate_code(r).unwrap_or(0))
                .collect(),
            last: vec![IntHop::default(); d.ports],
            clock_hz: d.clock_hz,
            cell_bytes: d.cfg.cell_bytes as u64,
            stuck: false,
        }
    }

    pub fn on(&self) -> bool {
        !self.tx_bytes.is_empty()
    }

    /// Packet `hdr` of `len` bytes and `ncells` cells is dequeued for port `p` in cycle
    /// `now` after the port's stamps `earlier` of the cycle (its own only: the
    /// transmitter passes the stamps of its visit): its stamp, from the registers and the
    /// bytes of `earlier` (its counter before this packet). `acct`'s egress counters still
    /// hold its cells (they leave one by one as the wire reaches them).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn stamp(
        &self,
        now: u64,
        p: usize,
        hdr: &PacketHdr,
        len: u16,
        ncells: u16,
        acct: &Accounting,
        earlier: &[IntStamp],
    ) -> IntStamp {
        let cells: u64 = (0..QUEUES)
            .map(|q| acct.egress[p * QUEUES + q].get() as u64)
            .sum();
        let queued = cells.saturating_sub(ncells as u64) * self.cell_bytes;
        let ns = (now as u128 * 1_000_000_000 / self.clock_hz as u128) as u64;
        let tx_bytes = earlier
            .iter()
            .fold(self.tx_bytes[p], |b, s| self.count(b, s.len));
        IntStamp {
            port: p as u8,
            flow: hdr.flow,
            seq: hdr.seq,
            hop: IntHop {
                time: (ns & ((1 << TIME_BITS) - 1)) as u32,
                bytes: ((tx_bytes / BYTE_UNIT) & ((1 << BYTES_BITS) - 1)) as u32,
                qlen: (queued / QLEN_UNIT).min((1 << QLEN_BITS) - 1) as u32,
                rate: self.rate[p],
            },
            len,
        }
    }

    /// The transmitted-bytes counter `bytes` after a packet of `len` bytes.
    #[inline]
    fn count(&self, bytes: u64, len: u16) -> u64 {
        if self.stuck {
            bytes
        } else {
            (bytes + len as u64) & ((1 << TX_BYTES_BITS) - 1)
        }
    }

    /// The edge of the cycle's stamps, in their order: each port's counter counts its
    /// packets, and its last hop is its last stamp.
    pub fn departures(&mut self, stamps: &[IntStamp]) {
        for s in stamps {
            let p = s.port as usize;
            self.tx_bytes[p] = self.count(self.tx_bytes[p], s.len);
            self.last[p] = s.hop;
        }
    }

    /// `egress.pNN.int.*`: the counter and the fields of the last hop stamped.
    pub fn probe_port<V: Visit>(&self, p: usize, v: &mut V) {
        if !self.on() {
            return;
        }
        let h = &self.last[p];
        v.scope("int", |v| {
            v.wire("tx_bytes", TX_BYTES_BITS, self.tx_bytes[p]);
            v.wire("time", TIME_BITS, h.time as u64);
            v.wire("bytes", BYTES_BITS, h.bytes as u64);
            v.wire("qlen", QLEN_BITS, h.qlen as u64);
            v.wire("rate", RATE_BITS, h.rate as u64);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_cross_the_wrap_of_their_fields() {
        let prev = IntHop {
            time: (1 << TIME_BITS) - 10,
            bytes: (1 << BYTES_BITS) - 1,
            ..IntHop::default()
        };
        let now = IntHop {
            time: 5,
            bytes: 2,
            ..IntHop::default()
        };
        assert_eq!(now.ns_since(&prev), 15);
        assert_eq!(now.bytes_since(&prev), 3 * BYTE_UNIT);
    }

    #[test]
    fn rate_codes_follow_ns3s_table() {
        assert_eq!(rate_code(100_000_000_000), Some(2));
        assert_eq!(rate_code(40_000_000_000), Some(7));
        assert_eq!(rate_code(10_000_000_000), None);
        assert_eq!(rate_code(0), None);
    }
}
