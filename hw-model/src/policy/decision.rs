//! The decision for one packet, shared by every buffer policy (DSH II-C): its inputs (the
//! ingress queue's registered counters and its pool's threshold and occupancy), its
//! result (a [`Plan`] or a [`DropReason`]), the private buffer first (`decide`) and the
//! lossy pool's rule ([`lossy`]). Each policy's own rule for the cells left after the
//! private buffer is in its file (`sih.rs`, `dsh.rs`, `l2bm.rs`).

use crate::config::QUEUES;
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

/// The two pools.
#[derive(Debug, Clone, Copy)]
pub struct Pools {
    pub lossless: PoolParams,
    pub lossy: PoolParams,
}

/// A packet announced by a start-of-packet beat, as admission sees it.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// Ingress port, priority group and ingress queue `port * 8 + pg`.
    pub port: usize,
    pub pg: usize,
    pub qi: usize,
    /// Egress port and egress queue `dst * 8 + pg`.
    pub dst: usize,
    pub eq: usize,
    /// Cells.
    pub n: u32,
    pub lossless: bool,
}

impl Request {
    /// The packet of `n` cells from ingress port `port`, priority `pg`, to egress port `dst`.
    pub fn new(port: usize, pg: usize, dst: usize, n: u32, lossless: bool) -> Self {
        Self {
            port,
            pg,
            qi: port * QUEUES + pg,
            dst,
            eq: dst * QUEUES + pg,
            n,
            lossless,
        }
    }
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
pub(crate) enum Place {
    Shared,
    Headroom,
}

/// Case 1 for every pool: fill the queue's private buffer first; `place` decides where the
/// remaining `m` cells go (or refuses the packet).
pub(crate) fn decide(
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

/// The pool and the queue views of the decisions' unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::{PoolParams, QueueView};

    pub const POOL: PoolParams = PoolParams {
        private: 15,
        shared_segment: 1000,
    };

    pub fn view(private: u32, shared: u32, headroom: u32, t: u32) -> QueueView {
        QueueView {
            private,
            shared,
            headroom,
            t,
            shared_in_use: shared,
        }
    }
}
