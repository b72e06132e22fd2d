//! The peak memory of a network run, estimated before the network is built, so that a run
//! that would not fit is refused instead of failing hours in (docs/fabric.md, "Memory").
//!
//! The model allocates nearly all of its memory when it builds a switch: its MMU's RAMs
//! (cell link, packet link and descriptor RAMs, the free list: entries per cell of its
//! buffer), and per host its NIC (a link partner with its class queues) and sink. Cells
//! held in a buffer live in those RAMs; what grows as the run goes is the cells on links
//! and at the hosts (a beat each, in a queue). So the estimate is
//!
//! ```text
//! built = BASE + SWITCH * switches + CELL * buffer cells (summed over switches)
//!       + HOST * hosts + FLOW_COPY * flows * copies + SWITCH_FLOW * flows * switches
//! peak  = built + built / GROWTH + IN_FLIGHT * link cells
//! ```
//!
//! `copies` the partitions in the process (each thread keeps a copy of the flows; an MPI
//! rank one), `link cells` the cells every link holds both ways at its rate and delay, and
//! `built / GROWTH` what the hosts' queues and the transports' state add as the run goes.
//! The coefficients are the peak RSS of built-in networks of growing size, fitted
//! (docs/fabric.md, "Memory", with the commands).
//!
//! Every MPI rank builds the whole network (`crate::ranks`), so only what the run adds
//! divides among the ranks.

use crate::topology::{NodeId, Topology};

/// Bytes of the process before the network: the binary, its libraries, the scenario.
pub const BASE: u64 = 9 << 20;
/// Bytes per switch beside its buffer.
pub const SWITCH: u64 = 28 << 10;
/// Bytes per cell of a switch's buffer (its RAMs, allocated when it is built).
pub const CELL: u64 = 60;
/// Bytes per host (its NIC and sink).
pub const HOST: u64 = 40 << 10;
/// Bytes per flow (a data flow and its feedback flow are two) and copy of the flows.
pub const FLOW_COPY: u64 = 700;
/// Bytes per flow and switch (the switch's scoreboard keeps a word per flow).
pub const SWITCH_FLOW: u64 = 8;
/// Bytes per cell on a link or at a host.
pub const IN_FLIGHT: u64 = 64;
/// What a run adds as it goes, as a fraction of the network as built: `built / GROWTH`
/// (`l2bm-clos` grows by 22 % over its 1 ms, and its network as built is estimated 4 %
/// low).
pub const GROWTH: u64 = 3;

/// A run's estimated peak: what every rank builds, and what the run adds as it goes (the
/// cells in flight, the hosts' queues), which the ranks share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    pub built: u64,
    pub running: u64,
}

impl Estimate {
    /// The peak of the network of `topo` with `flows` flows (closed-loop ones counted with
    /// their feedback flows) kept in `copies` copies, each switch's buffer cells from
    /// `cells`, at `cell_bytes` per cell.
    pub fn of(
        topo: &Topology,
        (flows, copies): (usize, usize),
        cell_bytes: u32,
        cells: impl Fn(NodeId) -> u64,
    ) -> Self {
        let switches = topo.switches();
        let flows = flows as u64;
        let buffers: u64 = switches.iter().map(|&s| cells(s)).sum();
        let built = BASE
            + SWITCH * switches.len() as u64
            + CELL * buffers
            + HOST * topo.hosts().count() as u64
            + flows * (FLOW_COPY * copies.max(1) as u64 + SWITCH_FLOW * switches.len() as u64);
        let cell_bits = u128::from(cell_bytes.max(1)) * 8;
        let link_cells: u128 = topo
            .links()
            .iter()
            .map(|l| {
                let bits = u128::from(l.rate.0) * u128::from(l.delay.0);
                2 * bits.div_ceil(1_000_000_000_000 * cell_bits)
            })
            .sum();
        Self {
            built,
            running: (link_cells as u64).saturating_mul(IN_FLIGHT) + built / GROWTH,
        }
    }

    /// The peak of one of `ranks` ranks.
    pub fn per_rank(&self, ranks: usize) -> u64 {
        self.built + self.running.div_ceil(ranks.max(1) as u64)
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
    fn the_estimate_grows_with_switches_buffers_and_flows_and_ranks_share_what_the_run_adds() {
        let cells = |n: u64| move |_| n;
        let small = Estimate::of(&leaf_spine(2), (10, 1), 256, cells(1000));
        assert!(Estimate::of(&leaf_spine(4), (10, 1), 256, cells(1000)).built > small.built);
        assert!(Estimate::of(&leaf_spine(2), (10, 1), 256, cells(2000)).built > small.built);
        assert!(Estimate::of(&leaf_spine(2), (20, 1), 256, cells(1000)).built > small.built);
        assert!(Estimate::of(&leaf_spine(2), (10, 2), 256, cells(1000)).built > small.built);
        // 100 Gb/s for 1 us is 12,500 bytes: 49 cells of 256 B, each way, on 8 host and 4
        // fabric links.
        assert_eq!(
            small.running,
            12 * 2 * 49 * IN_FLIGHT + small.built / GROWTH
        );
        assert!(small.per_rank(2) < small.per_rank(1));
        assert_eq!(small.ranks_to_fit(small.per_rank(1), 4), Some(1));
        assert_eq!(small.ranks_to_fit(small.built, 4), None);
        assert_eq!(small.ranks_to_fit(small.per_rank(2), 4), Some(2));
    }
}
