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
//! of pausing.
//!
//! Under L2BM the same SIH cases apply with the queue's own threshold `T_i` (L2BM Eq. 3,
//! `l2bm.rs`) in place of `T`, for lossless and lossy queues; a lossy packet must also pass
//! the egress pool's DT (`l2bm_lossy`, dual admission of L2BM Fig. 5). All ports decide in the same cycle from the same registered counters and
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

/// Where the cells left after the private buffer go.
enum Place {
    Shared,
    Headroom,
}

/// Case 1 for every pool: fill the queue's private buffer first; `place` decides where the
/// remaining `m` cells go (or refuses the packet).
fn decide(
    n: u32,
    v: &QueueView,
    pool: PoolParams,
    place: impl FnOnce(u32) -> Result<Place, DropReason>,
) -> Result<Plan, DropReason> {
    let to_private = n.min(pool.private.saturating_sub(v.private));
    let m = n - to_private;
    let (seg1, headroom) = match m {
        0 => (0, 0),
        _ => match place(m)? {
            Place::Shared => (m, 0),
            Place::Headroom => (0, m),
        },
    };
    Ok(Plan {
        seg0: to_private as u16,
        seg1: seg1 as u16,
        headroom: headroom as u16,
    })
}

/// Lossless decision under SIH with headroom `eta` cells.
pub fn lossless(n: u32, v: QueueView, pool: PoolParams, eta: u32) -> Result<Plan, DropReason> {
    decide(n, &v, pool, |m| {
        if v.shared < v.t && v.shared_in_use + m <= pool.shared_segment {
            Ok(Place::Shared)
        } else if v.headroom + m <= eta {
            Ok(Place::Headroom)
        } else {
            Err(DropReason::HeadroomFull)
        }
    })
}

/// The ingress port's DSH state for one decision.
#[derive(Debug, Clone, Copy)]
pub struct PortView {
    /// The port is in POFF (Fig. 8).
    pub poff: bool,
    /// Insurance headroom cells the port holds.
    pub insurance: u32,
    /// The port's insurance headroom, `eta` cells (Eq. 4 reserves one per port).
    pub eta: u32,
}

/// Lossless decision under DSH (section IV-B, Fig. 8). Private while `q < phi`, as in SIH;
/// then, while the port is PON, the shared segment, which holds footroom and shared
/// headroom alike (no per-queue cap: queue-level PFC at `X_qoff = T - eta` does the
/// limiting, and a congested queue may use headroom left by the other queues of its port);
/// while the port is POFF, or if the segment is full, the port's insurance headroom;
/// otherwise the packet is dropped.
pub fn dsh(n: u32, v: QueueView, pool: PoolParams, port: PortView) -> Result<Plan, DropReason> {
    decide(n, &v, pool, |m| {
        if !port.poff && v.shared_in_use + m <= pool.shared_segment {
            Ok(Place::Shared)
        } else if port.insurance + m <= port.eta {
            Ok(Place::Headroom)
        } else {
            Err(DropReason::HeadroomFull)
        }
    })
}

/// L2BM dual admission of a lossy packet (Fig. 5): the ingress decision ([`lossy`] with the
/// queue's L2BM threshold `T_i` in `v.t`), then the egress pool: the packet's egress queue,
/// `eg_cells` cells counting this cycle's earlier grants, must be below the lossy egress
/// pool's DT threshold `t_egress`, or the packet is dropped (`EgressThreshold`). Lossless
/// packets get no egress check (a lossless class must not drop; `l2bm.rs`).
pub fn l2bm_lossy(
    n: u32,
    v: QueueView,
    pool: PoolParams,
    eg_cells: u32,
    t_egress: u32,
) -> Result<Plan, DropReason> {
    let plan = lossy(n, v, pool)?;
    if eg_cells < t_egress {
        Ok(plan)
    } else {
        Err(DropReason::EgressThreshold)
    }
}

/// Lossy decision: private, then DT-shared, else drop.
pub fn lossy(n: u32, v: QueueView, pool: PoolParams) -> Result<Plan, DropReason> {
    decide(n, &v, pool, |m| {
        if v.shared < v.t && v.shared_in_use + m <= pool.shared_segment {
            Ok(Place::Shared)
        } else {
            Err(DropReason::LossyThreshold)
        }
    })
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
    fn dsh_uses_shared_until_poff_then_insurance() {
        let port = |poff, insurance| PortView {
            poff,
            insurance,
            eta: 20,
        };
        // Above T the queue still goes to shared: DSH has no per-queue cap.
        assert_eq!(
            dsh(8, view(15, 500, 0, 50), POOL, port(false, 0)),
            Ok(Plan {
                seg0: 0,
                seg1: 8,
                headroom: 0
            })
        );
        assert_eq!(
            dsh(8, view(15, 0, 0, 50), POOL, port(true, 0)),
            Ok(Plan {
                seg0: 0,
                seg1: 0,
                headroom: 8
            })
        );
        assert_eq!(
            dsh(8, view(15, 0, 0, 50), POOL, port(true, 13)),
            Err(DropReason::HeadroomFull)
        );
        // Private first even in POFF: it is reserved per queue.
        assert_eq!(
            dsh(8, view(10, 0, 0, 50), POOL, port(true, 0)),
            Ok(Plan {
                seg0: 5,
                seg1: 0,
                headroom: 3
            })
        );
    }

    #[test]
    fn l2bm_lossy_needs_both_pools() {
        let v = view(0, 40, 0, 50);
        let plan = Plan {
            seg0: 8,
            seg1: 0,
            headroom: 0,
        };
        let lossy_pool = PoolParams {
            private: 8,
            shared_segment: 1000,
        };
        assert_eq!(l2bm_lossy(8, v, lossy_pool, 99, 100), Ok(plan));
        assert_eq!(
            l2bm_lossy(8, v, lossy_pool, 100, 100),
            Err(DropReason::EgressThreshold),
            "egress queue at its threshold"
        );
        // The ingress refusal comes first.
        assert_eq!(
            l2bm_lossy(8, view(8, 50, 0, 50), lossy_pool, 0, 100),
            Err(DropReason::LossyThreshold)
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
