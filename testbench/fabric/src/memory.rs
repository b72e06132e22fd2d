//! The peak memory of a network run, estimated before the network is built, so that a run
//! that would not fit is refused instead of failing hours in (docs/fabric.md, "Memory").
//!
//! The model allocates nearly all of its memory when it builds a switch: its MMU's RAMs
//! (cell link, packet link and descriptor RAMs, the free list: entries per cell of its
//! buffer), and per host its NIC (a link partner with its class queues) and sink. Cells
//! held in a buffer live in those RAMs; what grows as the run goes is the cells on links
//! and at the hosts (a beat each, in a queue), and each switch's occupancy series. So the
//! estimate of a process holding some of the switches is
//!
//! ```text
//! built = BASE + SWITCH * switches + CELL * buffer cells (summed over its switches)
//!       + HOST * hosts + FLOW_COPY * flows * copies + SWITCH_FLOW * flows * switches
//! peak  = built + built / GROWTH + IN_FLIGHT * link cells + INTERVAL * intervals
//! ```
//!
//! over the switches it holds and their hosts: `copies` the partitions in the process
//! (each thread keeps a copy of the flows; an MPI rank one), `link cells` the cells the
//! links at its switches hold both ways at their rate and delay, `built / GROWTH` what
//! the hosts' queues and the transports' state add as the run goes, `intervals` the
//! occupancy series' entries of the switches it reports (an MPI rank 0 reports every
//! switch). The coefficients are the peak RSS of built-in networks of growing size, fitted
//! (docs/fabric.md, "Memory", with the commands).
//!
//! An MPI rank builds only its own partition's switches and hosts (`crate::ranks`), so a
//! run's peak per rank is its largest part's; a run with a waveform builds the whole
//! network on every rank.

use crate::parallel::{line_rate, partition};
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
/// Bytes per interval of a switch's occupancy series: its 4-byte entry, and the entry in
/// the summary's JSON text (at most 10 digits and a comma).
pub const INTERVAL: u64 = 16;
/// What a run adds as it goes, as a fraction of the network as built: `built / GROWTH`
/// (`l2bm-clos` grows by 22 % over its 1 ms, and its network as built is estimated 4 %
/// low).
pub const GROWTH: u64 = 3;

/// A process's estimated peak: the network (or its part) as built, and what the run adds
/// as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    pub built: u64,
    pub running: u64,
}

impl Estimate {
    pub fn peak(&self) -> u64 {
        self.built + self.running
    }
}

/// What the estimate reads of a run.
pub struct Sizes<'a> {
    pub topo: &'a Topology,
    /// The flows, closed-loop ones counted with their feedback flows.
    pub flows: usize,
    pub cell_bytes: u32,
    /// Per switch (node id), the cells of its buffer.
    pub cells: &'a dyn Fn(NodeId) -> u64,
    /// The occupancy series' intervals per switch (`[fabric] occupancy_interval_us`; 0:
    /// none).
    pub intervals: u64,
}

impl Sizes<'_> {
    /// Per part of `parts` (`part_of` a switch index), the peak of a process holding its
    /// switches with their hosts and `copies` copies of the flows, reporting `reported`
    /// switches' occupancy series (per part).
    fn parts(
        &self,
        (part_of, parts): (&dyn Fn(usize) -> usize, usize),
        copies: usize,
        reported: &dyn Fn(usize) -> usize,
    ) -> Vec<Estimate> {
        let topo = self.topo;
        let mut part = vec![None; topo.node_count()];
        // Per part: switches, buffer cells, hosts, cells on its links.
        let mut sum = vec![[0u64; 4]; parts];
        for (i, &s) in topo.switches().iter().enumerate() {
            let p = part_of(i);
            part[s as usize] = Some(p);
            sum[p][0] += 1;
            sum[p][1] += (self.cells)(s);
        }
        let cell_bits = u128::from(self.cell_bytes.max(1)) * 8;
        for l in topo.links() {
            let bits = u128::from(l.rate.0) * u128::from(l.delay.0);
            let cells = 2 * bits.div_ceil(1_000_000_000_000 * cell_bits);
            let cells = u64::try_from(cells).unwrap_or(u64::MAX);
            // A link is held where either end's switch is; a host with its switch.
            match (part[l.src as usize], part[l.dst as usize]) {
                (Some(a), Some(b)) => {
                    sum[a][3] = sum[a][3].saturating_add(cells);
                    if a != b {
                        sum[b][3] = sum[b][3].saturating_add(cells);
                    }
                }
                (Some(p), None) | (None, Some(p)) => {
                    sum[p][2] += 1;
                    sum[p][3] = sum[p][3].saturating_add(cells);
                }
                (None, None) => {}
            }
        }
        let flows = self.flows as u64;
        sum.iter()
            .enumerate()
            .map(|(p, &[switches, buffers, hosts, link_cells])| {
                let built = BASE
                    + SWITCH * switches
                    + CELL * buffers
                    + HOST * hosts
                    + flows * (FLOW_COPY * copies.max(1) as u64 + SWITCH_FLOW * switches);
                let series = INTERVAL
                    .saturating_mul(self.intervals)
                    .saturating_mul(reported(p) as u64);
                Estimate {
                    built,
                    running: link_cells.saturating_mul(IN_FLIGHT) + built / GROWTH + series,
                }
            })
            .collect()
    }

    /// The whole network in one process of `threads` partitions (each a copy of the
    /// flows; at most one a switch).
    pub fn whole(&self, threads: usize) -> Estimate {
        let all = self.topo.switches().len();
        let copies = threads.clamp(1, all.max(1));
        self.parts((&|_| 0, 1), copies, &|_| all)[0]
    }

    /// The largest peak of `ranks` MPI ranks, each holding its partition's part with one
    /// copy of the flows; rank 0 reports every switch's series.
    pub fn per_rank(&self, ranks: usize) -> Estimate {
        let ranks = ranks.max(1);
        let part = partition(self.topo, &line_rate(self.topo), ranks);
        let all = self.topo.switches().len();
        let reported = |r: usize| match r {
            0 => all,
            _ => part.iter().filter(|&&p| p == r).count(),
        };
        let parts = self.parts((&|i| part[i], ranks), 1, &reported);
        parts
            .into_iter()
            .max_by_key(Estimate::peak)
            .expect("a rank")
    }

    /// The fewest ranks (up to `most`) whose parts each fit `limit`, if any does.
    pub fn ranks_to_fit(&self, limit: u64, most: usize) -> Option<usize> {
        (1..=most.max(1)).find(|&n| self.per_rank(n).peak() <= limit)
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

    fn sizes<'a>(topo: &'a Topology, flows: usize, cells: &'a dyn Fn(NodeId) -> u64) -> Sizes<'a> {
        Sizes {
            topo,
            flows,
            cell_bytes: 256,
            cells,
            intervals: 0,
        }
    }

    #[test]
    fn the_estimate_grows_with_switches_buffers_flows_and_series() {
        let (two, four) = (leaf_spine(2), leaf_spine(4));
        let (k, m) = (|_| 1000, |_| 2000);
        let small = sizes(&two, 10, &k).whole(1);
        assert!(sizes(&four, 10, &k).whole(1).built > small.built);
        assert!(sizes(&two, 10, &m).whole(1).built > small.built);
        assert!(sizes(&two, 20, &k).whole(1).built > small.built);
        assert!(sizes(&two, 10, &k).whole(2).built > small.built);
        // 100 Gb/s for 1 us is 12,500 bytes: 49 cells of 256 B, each way, on 8 host and 4
        // fabric links.
        assert_eq!(
            small.running,
            12 * 2 * 49 * IN_FLIGHT + small.built / GROWTH
        );
        // 4 switches' series of 1,000 intervals.
        let series = Sizes {
            intervals: 1000,
            ..sizes(&two, 10, &k)
        };
        assert_eq!(series.whole(1).running, small.running + 4 * 1000 * INTERVAL);
    }

    #[test]
    fn ranks_divide_the_switches_and_hosts_and_the_hint_reads_the_per_rank_peak() {
        let topo = leaf_spine(4);
        let k = |_| 100_000;
        let s = sizes(&topo, 10, &k);
        let (one, two) = (s.per_rank(1), s.per_rank(2));
        // One rank holds what one process does.
        assert_eq!(one, s.whole(1));
        // Two ranks each hold about half the switches' buffers and hosts (the leaves and
        // spines split by port weight), so the larger is well below the whole.
        assert!(two.built < one.built * 3 / 4, "{two:?} against {one:?}");
        assert!(s.per_rank(6).built < two.built);
        assert_eq!(s.ranks_to_fit(one.peak(), 6), Some(1));
        assert_eq!(s.ranks_to_fit(two.peak(), 6), Some(2));
        assert_eq!(s.ranks_to_fit(BASE, 6), None);
        // The companion: the hint is the per-rank figure, not the whole network's with one
        // flow copy per thread.
        assert!(s.whole(2).peak() > one.peak());
    }
}
