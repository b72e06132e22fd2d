//! Admission at start of packet, for the whole packet (DSH II-C, SIH).
//!
//! For a lossless ingress queue with counters `(private, shared, headroom)` and a packet of
//! `n` cells, the four cases of DSH II-C become, cell for cell:
//! 1. private buffer while `private < phi` (the packet may straddle into case 2 or 3);
//! 2. shared buffer if `omega_s < T` (Eq. 2) and the shared segment `B_s` has room;
//! 3. headroom if `headroom + m <= eta` (Eq. 1); the queue turns QOFF and PAUSE is sent;
//! 4. otherwise the packet is dropped (`HeadroomFull`).
//!
//! Lossy queues use the same private / DT-shared split on their own pool and drop instead
//! of pausing. All ports decide in the same cycle from the same registered counters and
//! `T`; a running sum of the shared cells granted earlier in the cycle keeps the segment
//! from being over-committed (the bypass adder of an admission pipeline).

use crate::wires::DropReason;

/// Where the cells of an admitted packet go: `seg0` first cells to the private segment,
/// then `seg1` to the shared segment, the rest to headroom (lossless only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub seg0: u16,
    pub seg1: u16,
    pub headroom: u16,
}

/// The static parameters of one pool.
#[derive(Debug, Clone, Copy)]
pub struct PoolParams {
    /// `phi`, cells per ingress queue.
    pub private: u32,
    /// Shared segment size, cells.
    pub shared_segment: u32,
}

/// Inputs of one decision: the ingress queue's registered counters and the pool state.
#[derive(Debug, Clone, Copy)]
pub struct QueueView {
    pub private: u32,
    pub shared: u32,
    pub headroom: u32,
    /// DT threshold `T` of the pool (registered).
    pub t: u32,
    /// Pool's shared occupancy at the start of the cycle plus grants earlier this cycle.
    pub shared_in_use: u32,
}

/// Lossless decision under SIH with headroom `eta` cells.
pub fn lossless(n: u32, v: QueueView, pool: PoolParams, eta: u32) -> Result<Plan, DropReason> {
    let to_private = n.min(pool.private.saturating_sub(v.private));
    let m = n - to_private;
    if m == 0 {
        return Ok(Plan {
            seg0: n as u16,
            seg1: 0,
            headroom: 0,
        });
    }
    if v.shared < v.t && v.shared_in_use + m <= pool.shared_segment {
        return Ok(Plan {
            seg0: to_private as u16,
            seg1: m as u16,
            headroom: 0,
        });
    }
    if v.headroom + m <= eta {
        return Ok(Plan {
            seg0: to_private as u16,
            seg1: 0,
            headroom: m as u16,
        });
    }
    Err(DropReason::HeadroomFull)
}

/// Lossy decision: private, then DT-shared, else drop.
pub fn lossy(n: u32, v: QueueView, pool: PoolParams) -> Result<Plan, DropReason> {
    let to_private = n.min(pool.private.saturating_sub(v.private));
    let m = n - to_private;
    if m == 0 || (v.shared < v.t && v.shared_in_use + m <= pool.shared_segment) {
        return Ok(Plan {
            seg0: to_private as u16,
            seg1: m as u16,
            headroom: 0,
        });
    }
    Err(DropReason::LossyThreshold)
}

#[cfg(test)]
mod tests {
    use super::*;

    const POOL: PoolParams = PoolParams {
        private: 15,
        shared_segment: 1000,
    };

    fn view(private: u32, shared: u32, headroom: u32, t: u32) -> QueueView {
        QueueView {
            private,
            shared,
            headroom,
            t,
            shared_in_use: shared,
        }
    }

    #[test]
    fn the_four_cases() {
        // 1: private.
        assert_eq!(
            lossless(8, view(0, 0, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 8,
                seg1: 0,
                headroom: 0
            })
        );
        // 1 -> 2: straddles private and shared.
        assert_eq!(
            lossless(8, view(10, 0, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 5,
                seg1: 3,
                headroom: 0
            })
        );
        // 2: shared below T.
        assert_eq!(
            lossless(8, view(15, 49, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 0,
                seg1: 8,
                headroom: 0
            })
        );
        // 3: at T, into headroom.
        assert_eq!(
            lossless(8, view(15, 50, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 0,
                seg1: 0,
                headroom: 8
            })
        );
        // 4: headroom would overflow.
        assert_eq!(
            lossless(8, view(15, 50, 93, 50), POOL, 100),
            Err(DropReason::HeadroomFull)
        );
    }

    #[test]
    fn shared_segment_is_never_overcommitted() {
        let v = QueueView {
            private: 15,
            shared: 0,
            headroom: 0,
            t: 50,
            shared_in_use: 995,
        };
        assert_eq!(
            lossless(8, v, POOL, 100),
            Ok(Plan {
                seg0: 0,
                seg1: 0,
                headroom: 8
            })
        );
        assert_eq!(lossy(8, v, POOL), Err(DropReason::LossyThreshold));
    }
}
