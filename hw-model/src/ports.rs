//! The bundles that pass between blocks inside a cycle, each written by one phase and read
//! by a later one (docs/architecture.md, "Signals between blocks"). Port sets are `u64`
//! words (`MAX_PORTS` = 64), walked with find-first-set.

/// Flow-control requests of admission (phase 2) to PFC generation (phase 3): the queues and
/// ports a packet of this cycle charged to headroom or insurance, or pushed above `X_qoff`
/// or `X_poff`, or that dropped a lossless packet.
#[derive(Debug, Clone)]
pub struct FlowRequests {
    /// Bit `pg` of `off[p]`: ingress queue `(p, pg)` turns (or stays) QOFF.
    off: Vec<u8>,
    /// Ports with a bit in `off`.
    off_ports: u64,
    /// Ports that turn (or stay) POFF.
    poff: u64,
}

impl FlowRequests {
    pub fn new(ports: usize) -> Self {
        Self {
            off: vec![0; ports],
            off_ports: 0,
            poff: 0,
        }
    }

    #[inline]
    pub fn off(&mut self, port: usize, pg: usize) {
        self.off[port] |= 1 << pg;
        self.off_ports |= 1 << port;
    }

    #[inline]
    pub fn poff(&mut self, port: usize) {
        self.poff |= 1 << port;
    }

    /// Ports with a request of either kind.
    #[inline]
    pub fn ports(&self) -> u64 {
        self.off_ports | self.poff
    }

    /// The queues of `port` that must turn QOFF.
    #[inline]
    pub fn off_of(&self, port: usize) -> u8 {
        self.off[port]
    }

    #[inline]
    pub fn poff_ports(&self) -> u64 {
        self.poff
    }

    /// Forget the requests (PFC generation has taken them).
    #[inline]
    pub fn clear(&mut self) {
        let mut ports = std::mem::take(&mut self.off_ports);
        while ports != 0 {
            let p = ports.trailing_zeros() as usize;
            ports &= ports - 1;
            self.off[p] = 0;
        }
        self.poff = 0;
    }
}

/// A packet dequeued by a transmitter (phase 4) from a queue that HCF, ECM or ECN watches:
/// the value the watching blocks apply at the edge, in the order of the dequeues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dequeue {
    pub port: u8,
    pub queue: u8,
    /// The physical list it left (HCF; 0 for a FIFO queue).
    pub list: u8,
    pub ncells: u16,
    /// Bytes.
    pub len: u16,
    /// ECN's look at the packet (`mark_on = "dequeue"`), for the marker's edge.
    pub ecn: EcnLook,
}

/// What the ECN marker decided of one dequeued packet in the transmitter's visit (the
/// mark must be in the header, which may leave in the same visit), from its registers
/// only; its registers follow at the edge (`EcnMarker::departures`): `seen` counts a
/// look, the LFSR advances on a draw, `marked` counts a mark.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EcnLook(u8);

impl EcnLook {
    const LOOKED: u8 = 1;
    const DREW: u8 = 2;
    const CE: u8 = 4;

    /// An ECN-capable packet looked at: whether it drew from the LFSR, whether it is marked.
    pub fn looked(drew: bool, ce: bool) -> Self {
        Self(Self::LOOKED | ((drew as u8) * Self::DREW) | ((ce as u8) * Self::CE))
    }

    pub fn seen(self) -> bool {
        self.0 & Self::LOOKED != 0
    }

    pub fn drew(self) -> bool {
        self.0 & Self::DREW != 0
    }

    pub fn ce(self) -> bool {
        self.0 & Self::CE != 0
    }
}

/// The PFC frames the transmitters (phase 4) took from PFC generation in a cycle: the
/// ports whose port-level frame, and whose queue-level frame, went on the wire. PFC
/// generation clears them at the edge ([`crate::pfc::fsm::PfcFsm::taken`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PfcTakes {
    pub port_level: u64,
    pub queue_level: u64,
}

/// Iterate the set bits of a port set in ascending order.
#[inline]
pub fn each_port(mut ports: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (ports != 0).then(|| {
            let p = ports.trailing_zeros() as usize;
            ports &= ports - 1;
            p
        })
    })
}

/// The set of ports `0..n`, for a switch's `n` in `1..=64`: one shift, no branch.
#[inline]
pub fn mask(n: usize) -> u64 {
    debug_assert!((1..=64).contains(&n), "{n} ports");
    u64::MAX >> (64 - n)
}

/// A round-robin pointer over `n` ports after `cycles` more cycles (one port a cycle).
#[inline]
pub fn advance_rr(rr: usize, cycles: u64, n: usize) -> usize {
    ((rr as u64 + cycles) % n as u64) as usize
}

/// A round-robin pointer over `n` ports one cycle later (without a division).
#[inline]
pub fn next_rr(rr: usize, n: usize) -> usize {
    if rr + 1 == n {
        0
    } else {
        rr + 1
    }
}

/// Port `(i + r) % n` for `i, r < n`: bit `i` of a set rotated by [`rotate_ports`].
#[inline]
pub fn unrotate(i: usize, r: usize, n: usize) -> usize {
    let p = i + r;
    if p >= n {
        p - n
    } else {
        p
    }
}

/// Rotate an `n`-bit port set right by `r`, so bit `i` of the result is port
/// `(i + r) % n`: the round-robin order starting at port `r`.
#[inline]
pub fn rotate_ports(bits: u64, r: usize, n: usize) -> u64 {
    if r == 0 {
        bits & mask(n)
    } else {
        ((bits >> r) | (bits << (n - r))) & mask(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_is_the_ports_below_n() {
        for n in 1..=64 {
            assert_eq!(mask(n) as u128, (1u128 << n) - 1, "{n}");
        }
    }
}
