//! The peak memory of a network run, estimated before the network is built, so that a run
//! that would not fit is refused instead of failing hours in (docs/fabric.md, "Memory").
//!
//! The model allocates nearly all of its memory when it builds a switch: its MMU's RAMs
//! (cell link, packet link and descriptor RAMs, the free list: one entry per cell of its
//! buffer), its per-port blocks, and per flow of the network a word of its scoreboard and
//! of its route map. Cells held in a buffer live in those RAMs; what grows as the run goes
//! is the cells on links and at the hosts (a beat each, in a queue). So the estimate is
//!
//! ```text
//! peak = BASE + sum over switches (SWITCH + PORT * ports + CELL * buffer cells)
//!      + flows * (FLOW + SWITCH_FLOW * switches) + IN_FLIGHT * cells the links hold
//! ```
//!
//! with the coefficients measured as peak RSS of built-in networks of growing size (the
//! commands are in docs/fabric.md), and the cells the links hold the bandwidth-delay
//! product of every link, both ways.
//!
//! Every MPI rank builds the whole network (`crate::ranks`), so only the cells in flight
//! divide among the ranks; threads share one process.

use crate::topology::{NodeId, Topology};

/// Bytes of the process before the network: the binary, its libraries, the scenario.
pub const BASE: u64 = 6 << 20;
/// Bytes per switch beside its ports and buffer.
pub const SWITCH: u64 = 200 << 10;
/// Bytes per port of a switch (its queues, schedulers, PFC state, signals).
pub const PORT: u64 = 16 << 10;
/// Bytes per cell of a switch's buffer.
pub const CELL: u64 = 40;
/// Bytes per flow, and per flow and switch.
pub const FLOW: u64 = 600;
pub const SWITCH_FLOW: u64 = 16;
/// Bytes per cell on a link or at a host.
pub const IN_FLIGHT: u64 = 64;

/// One switch as the estimate sees it.
#[derive(Debug, Clone, Copy)]
pub struct SwitchSize {
    pub ports: usize,
    /// Cells of its buffer (`buffer_bytes / cell_bytes`).
    pub cells: u64,
}

/// A run's estimated peak: what every rank builds, and the cells in flight, which the
/// ranks share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    pub built: u64,
    pub in_flight: u64,
}

impl Estimate {
    /// The peak of the network of `topo` with `flows` flows (closed-loop ones counted with
    /// their feedback flows), each switch's size from `size`, at `cell_bytes` per cell.
    pub fn of(
        topo: &Topology,
        flows: usize,
        cell_bytes: u32,
        size: impl Fn(NodeId) -> SwitchSize,
    ) -> Self {
        let switches = topo.switches();
        let mut built = BASE + flows as u64 * (FLOW + SWITCH_FLOW * switches.len() as u64);
        for &s in switches {
            let z = size(s);
            built += SWITCH + PORT * z.ports as u64 + CELL * z.cells;
        }
        let cell_bits = u128::from(cell_bytes.max(1)) * 8;
        let cells: u128 = topo
            .links()
            .iter()
            .map(|l| {
                2 * (u128::from(l.rate.0) * u128::from(l.delay.0))
                    .div_ceil(1_000_000_000_000 * cell_bits)
            })
            .sum();
        Self {
            built,
            in_flight: (cells as u64).saturating_mul(IN_FLIGHT),
        }
    }

    /// The peak of one of `ranks` ranks.
    pub fn per_rank(&self, ranks: usize) -> u64 {
        self.built + self.in_flight.div_ceil(ranks.max(1) as u64)
    }

    /// The fewest ranks (up to `most`) whose peak each fits `limit`, if any does.
    pub fn ranks_to_fit(&self, limit: u64, most: usize) -> Option<usize> {
        (1..=most.max(1)).find(|&n| self.per_rank(n) <= limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{LeafSpine, LinkSpec};
    use crate::units::{BitRate, Picos};

    fn leaf_spine(leaves: u32) -> Topology {
        let link = LinkSpec {
            rate: BitRate(100_000_000_000),
            delay: Picos(1_000_000),
        };
        LeafSpine {
            leaves,
            spines: 2,
            hosts_per_leaf: 4,
            host_link: link,
            fabric_link: link,
        }
        .build()
        .expect("a leaf-spine")
    }

    #[test]
    fn the_estimate_grows_with_switches_buffers_and_flows_and_ranks_share_the_cells_in_flight() {
        let size = |cells| move |_| SwitchSize { ports: 6, cells };
        let small = Estimate::of(&leaf_spine(2), 10, 256, size(1000));
        assert!(Estimate::of(&leaf_spine(4), 10, 256, size(1000)).built > small.built);
        assert!(Estimate::of(&leaf_spine(2), 10, 256, size(2000)).built > small.built);
        assert!(Estimate::of(&leaf_spine(2), 20, 256, size(1000)).built > small.built);
        // 100 Gb/s for 1 us is 12,500 bytes: 49 cells of 256 B, each way, on 8 host and 4
        // fabric links.
        assert_eq!(small.in_flight, 12 * 2 * 49 * IN_FLIGHT);
        assert!(small.per_rank(2) < small.per_rank(1));
        assert_eq!(small.ranks_to_fit(small.per_rank(1), 4), Some(1));
        assert_eq!(small.ranks_to_fit(small.built, 4), None);
        assert_eq!(small.ranks_to_fit(small.per_rank(2), 4), Some(2));
    }
}
