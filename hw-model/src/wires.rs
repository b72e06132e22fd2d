//! The model's external interface: what crosses the chip boundary each cycle.
//!
//! Ingress MACs hand the MMU one cell beat per port per cycle at most; the MMU hands back
//! departing cells, the PFC frames it transmits and one event per arriving cell saying
//! where it went. These are plain structs, like a typed port record of an RTL block.

/// Header fields the MMU keeps in a packet's descriptor.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct PacketHdr {
    /// Flow id, unique across the run.
    pub flow: u32,
    /// Packet sequence number within the flow, from 0.
    pub seq: u32,
    /// Ingress port.
    pub src: u8,
    /// Egress port.
    pub dst: u8,
    /// Priority: selects the ingress priority group and the egress queue (1:1).
    pub prio: u8,
    /// Packet length on the wire, bytes, without preamble and gap.
    pub len: u16,
    /// The flow's IP 5-tuple, the input of HCF's hash (HCF III-B).
    pub tuple: FiveTuple,
    /// ECM CM-Tag (ECM 3.1, Fig. 4), added by a reaction point's rate limiter.
    pub cm_tag: Option<CmTag>,
    /// The IP header's ECN field (RFC 3168 section 5); the ECN marker sets CE.
    pub ecn: Ecn,
}

/// The two ECN bits of the IP header (RFC 3168 section 5).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Ecn {
    /// `00`: not ECN-capable; never marked.
    #[default]
    NotEct,
    /// `10`: ECN-capable transport, ECT(0), what DCTCP and RoCEv2 NICs send.
    Ect0,
    /// `11`: congestion experienced, set by a marking queue.
    Ce,
}

impl Ecn {
    /// The packet may be marked (ECT, or already CE).
    #[inline]
    pub fn capable(self) -> bool {
        self != Self::NotEct
    }
}

/// The ECM Congestion Management Tag: the CPID the sender's rate limiter is associated
/// with and its timer value when the frame left (`time unit = 2^unit us`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct CmTag {
    pub cpid: u16,
    pub timestamp: u16,
    pub unit: u8,
}

/// Which of the three ECM messages a congestion point sent (ECM 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum EcmKind {
    /// `Qoff` and `Qdelta` from the queue.
    Regular,
    /// ECM-Max, `(Qeq, 2 Qeq)`: the queue is above `Qmc`.
    Max,
    /// ECM(0,0): the queue is above `Qsc`; the rate limiter stops and restarts at random.
    Zero,
}

impl EcmKind {
    pub const ALL: [EcmKind; 3] = [EcmKind::Regular, EcmKind::Max, EcmKind::Zero];
    pub fn name(self) -> &'static str {
        match self {
            Self::Regular => "regular",
            Self::Max => "max",
            Self::Zero => "zero",
        }
    }
}

/// An ECM feedback frame (ECM 3.1, Fig. 3), sent toward the source of the sampled frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EcmFrame {
    /// The port it leaves on: the one the sampled frame came in on.
    pub port: u8,
    pub cpid: u16,
    pub kind: EcmKind,
    /// `Qscale * Qoff` and `Qscale * Qdelta`, pages of 64 B.
    pub qoff: i32,
    pub qdelta: i32,
    /// `Qdelta` saturated at `+-2 Qeq`.
    pub q: bool,
    /// Copied from the sampled frame's CM-Tag (0 without one).
    pub timestamp: u16,
    pub unit: u8,
    /// The sampled frame's header (the paper's first N bytes).
    pub sampled: PacketHdr,
}

/// IP source and destination, L4 ports and protocol of a packet.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct FiveTuple {
    pub src_ip: u32,
    pub dst_ip: u32,
    pub src_port: u16,
    pub dst_port: u16,
    pub proto: u8,
}

impl FiveTuple {
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;

    /// The testbench's addressing plan: host `10.<src port>.<flow>` talks to
    /// `10.<128 + dst port>.0.1`, source port `49152 + flow % 16384`, destination port 5001
    /// (TCP) or 4791 (UDP, RoCEv2). Distinct flows get distinct tuples.
    pub fn for_flow(flow: u32, src: u8, dst: u8, proto: u8) -> Self {
        Self {
            src_ip: 0x0A00_0000 | (src as u32) << 16 | (flow & 0xFFFF),
            dst_ip: 0x0A80_0001 | (dst as u32) << 16,
            src_port: 0xC000 | (flow >> 16 & 0x3FFF) as u16,
            dst_port: if proto == Self::TCP { 5001 } else { 4791 },
            proto,
        }
    }

    /// The 13 header bytes in network order, as a hash unit reads them.
    pub fn bytes(&self) -> [u8; 13] {
        let mut b = [0u8; 13];
        b[0..4].copy_from_slice(&self.src_ip.to_be_bytes());
        b[4..8].copy_from_slice(&self.dst_ip.to_be_bytes());
        b[8..10].copy_from_slice(&self.src_port.to_be_bytes());
        b[10..12].copy_from_slice(&self.dst_port.to_be_bytes());
        b[12] = self.proto;
        b
    }
}

/// One cell of a packet on the ingress or egress cell bus.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Beat {
    pub hdr: PacketHdr,
    /// Index of this cell within the packet (0 = start of packet).
    pub idx: u16,
    /// Cells in the packet, `ceil((len + packet_overhead) / cell_bytes)`.
    pub ncells: u16,
}

impl Beat {
    #[inline]
    pub fn sop(&self) -> bool {
        self.idx == 0
    }
    #[inline]
    pub fn eop(&self) -> bool {
        self.idx + 1 == self.ncells
    }
}

/// An IEEE 802.1Qbb PFC frame: per class an enable bit and a pause time in quanta of 512
/// bit times. A time of zero is a RESUME.
///
/// `port_level` marks DSH's port-level frames (section IV-B): all eight classes enabled,
/// all times set (PAUSE) or all zero (RESUME). The receiver keeps them apart from the
/// queue-level state, so a port-level RESUME does not undo a queue-level PAUSE (egress
/// pause = `QOFF[q] OR POFF[port]`, Fig. 9). On a real link this needs a distinct opcode
/// or a reserved bit; the paper does not say which.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PfcFrame {
    pub class_enable: u8,
    pub quanta: [u16; 8],
    pub port_level: bool,
}

impl PfcFrame {
    /// Classes this frame pauses (enabled with a non-zero time).
    pub fn paused(&self) -> u8 {
        (0..8)
            .filter(|&c| self.class_enable & (1 << c) != 0 && self.quanta[c] != 0)
            .fold(0, |m, c| m | (1 << c))
    }
    /// Classes this frame resumes (enabled with a zero time).
    pub fn resumed(&self) -> u8 {
        self.class_enable & !self.paused()
    }
}

/// Buffer segment a cell is charged to (DSH section II-B, Fig. 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Segment {
    /// Lossless private buffer `phi` of the ingress queue.
    Private,
    /// Lossless shared buffer, bounded by the DT threshold `T` (Eq. 2).
    Shared,
    /// Lossless static headroom `eta` of the ingress queue (Eq. 1).
    Headroom,
    /// Lossy pool, private part.
    LossyPrivate,
    /// Lossy pool, shared part (its own DT).
    LossyShared,
}

impl Segment {
    pub const ALL: [Segment; 5] = [
        Segment::Private,
        Segment::Shared,
        Segment::Headroom,
        Segment::LossyPrivate,
        Segment::LossyShared,
    ];
    /// Position in [`Segment::ALL`].
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::Shared => "shared",
            Self::Headroom => "headroom",
            Self::LossyPrivate => "lossy_private",
            Self::LossyShared => "lossy_shared",
        }
    }
}

/// Why the MMU refused a packet. Every dropped cell is counted under one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Lossless: `q >= phi + T + eta`, case 4 of DSH II-C (headroom exhausted).
    HeadroomFull,
    /// Lossy: the ingress queue is at or above its DT threshold.
    LossyThreshold,
    /// HCF queue: both the HP and the LP sub-queue are full (HCF Algorithm 1, `drop(p)`).
    HcfFull,
    /// L2BM, lossy: the ingress threshold admitted the packet but its egress queue is at or
    /// above the lossy egress pool's DT threshold (dual admission, L2BM Fig. 5).
    EgressThreshold,
}

impl DropReason {
    pub const ALL: [DropReason; 4] = [
        DropReason::HeadroomFull,
        DropReason::LossyThreshold,
        DropReason::HcfFull,
        DropReason::EgressThreshold,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Self::HeadroomFull => "headroom_full",
            Self::LossyThreshold => "lossy_threshold",
            Self::HcfFull => "hcf_full",
            Self::EgressThreshold => "egress_threshold",
        }
    }
    /// Whether the drop is charged to the egress queue whose own limit refused the packet
    /// (else to the ingress priority group it arrived on).
    pub fn at_egress(self) -> bool {
        match self {
            Self::HeadroomFull | Self::LossyThreshold => false,
            Self::HcfFull | Self::EgressThreshold => true,
        }
    }
    /// Whether this reason applies to lossless traffic.
    pub fn lossless(self) -> bool {
        matches!(self, Self::HeadroomFull)
    }

    /// `count(r)` summed over the lossless (`lossless = true`) or lossy reasons.
    pub fn sum(lossless: bool, count: impl Fn(DropReason) -> u64) -> u64 {
        Self::ALL
            .iter()
            .filter(|r| r.lossless() == lossless)
            .map(|&r| count(r))
            .sum()
    }
}

/// What happened to an arriving cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellFate {
    Admitted(Segment),
    Dropped(DropReason),
}

/// One event per ingress beat, emitted in the cycle the beat arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellEvent {
    pub beat: Beat,
    pub fate: CellFate,
}

/// A cell leaving on an egress port (emitted when it is read out of the buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Departure {
    pub port: u8,
    pub beat: Beat,
}

/// Inputs of one cycle.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// Per port, the beat its ingress MAC delivers this cycle (length = ports).
    pub ingress: &'a [Option<Beat>],
    /// PFC frames received this cycle from the device downstream of each port.
    pub pfc_rx: &'a [(u8, PfcFrame)],
}

/// Outputs of one cycle. The vectors are cleared (not freed) at the start of each step, so
/// a caller that reuses one `Outputs` makes the cycle loop allocation-free.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    pub cell_events: Vec<CellEvent>,
    pub departures: Vec<Departure>,
    /// PFC frames whose last bit left port `.0` this cycle, toward its upstream device.
    pub pfc_tx: Vec<(u8, PfcFrame)>,
    /// ECM frames generated this cycle by the congestion points.
    pub ecm_tx: Vec<EcmFrame>,
}

impl Outputs {
    pub fn with_ports(ports: usize) -> Self {
        Self {
            cell_events: Vec::with_capacity(ports),
            departures: Vec::with_capacity(ports),
            pfc_tx: Vec::with_capacity(ports),
            ecm_tx: Vec::with_capacity(ports),
        }
    }

    pub fn clear(&mut self) {
        self.cell_events.clear();
        self.departures.clear();
        self.pfc_tx.clear();
        self.ecm_tx.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_index_is_its_position_in_all() {
        for (i, s) in Segment::ALL.into_iter().enumerate() {
            assert_eq!(s.index(), i, "{}", s.name());
        }
    }
}
