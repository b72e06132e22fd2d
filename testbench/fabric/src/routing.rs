//! Shortest paths (hop count) from every switch to every host, and ECMP over the equal-cost
//! next hops by a hash of the 5-tuple with a per-switch seed.
//!
//! The routes are HPCC's (`simulation/scratch/third.cc`, `CalculateRoute`, lines 223-268):
//! a breadth-first search from each destination over the links that are up, through
//! switches only (a host is never a middle hop); a switch's next hops towards a host are its
//! neighbours one hop closer to it. A host has one link, so the routes to a host are the
//! routes to its ToR plus the ToR's port to the host: the tables here are kept per ToR
//! (`switches x ToRs` entries, not `switches x hosts`). Failed links are simply not up:
//! computing the routes again after [`Topology::fail_links`] routes around them, as
//! `TakeDownLink` does (`third.cc` line 304).
//!
//! **ECMP hash.** A switch picks next hop `h % n` of its `n` next hops (in port order), where
//! `h = fmix32(crc32(5-tuple) ^ seed(switch))`:
//! - CRC-32 (IEEE 802.3, the `crc32fast` crate) of the 13 bytes source address, destination
//!   address, source port, destination port, protocol, big-endian: the hash the ASICs'
//!   hash units compute and the one HCF's hash unit in this project uses;
//! - the per-switch seed enters after the CRC through murmur3's 32-bit finaliser `fmix32`.
//!   CRC is affine over GF(2), so a seed fed into it (as its initial value or as bytes)
//!   only XORs a constant into `h`; modulo a power of two every switch would then split the
//!   flows into the same classes, and in a fat-tree all the flows a ToR sends to one
//!   aggregation switch would leave it on a single core link (ECMP polarisation; the test
//!   `a_seed_inside_the_crc_polarises_the_fat_tree` shows it). HPCC's `SwitchNode::EcmpHash`
//!   is a seeded murmur3 for the same reason, seeded by the switch id (`switch-node.cc`
//!   lines 47, 87). Here `seed(switch) = fmix32(fabric_seed ^ switch id * 0x9E3779B9)`.
//!
//! Addresses are ns-3's: node `i` is `11.0.0.1 + (i / 256) << 16 + (i % 256) << 8`
//! (`node_id_to_ip`, `third.cc` line 155).

use crate::topology::{LinkId, NodeId, Topology};
use std::collections::VecDeque;

/// UDP, the protocol of HPCC's RDMA flows (`0x11`, `switch-node.cc` line 82).
pub const UDP: u8 = 0x11;
/// TCP.
pub const TCP: u8 = 0x06;

/// The fields ECMP hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FiveTuple {
    pub src: NodeId,
    pub dst: NodeId,
    pub sport: u16,
    pub dport: u16,
    pub protocol: u8,
}

/// ns-3's IPv4 address of a node (`node_id_to_ip`, `third.cc` line 155).
pub fn ipv4_of(node: NodeId) -> u32 {
    0x0b00_0001 + (node / 256) * 0x0001_0000 + (node % 256) * 0x0000_0100
}

impl FiveTuple {
    /// The tuple of the answers to this flow (a feedback flow: addresses and ports swapped).
    pub fn reversed(&self) -> FiveTuple {
        FiveTuple {
            src: self.dst,
            dst: self.src,
            sport: self.dport,
            dport: self.sport,
            protocol: self.protocol,
        }
    }

    /// The bytes hashed: addresses, ports, protocol, big-endian.
    pub fn bytes(&self) -> [u8; 13] {
        let mut out = [0; 13];
        out[0..4].copy_from_slice(&ipv4_of(self.src).to_be_bytes());
        out[4..8].copy_from_slice(&ipv4_of(self.dst).to_be_bytes());
        out[8..10].copy_from_slice(&self.sport.to_be_bytes());
        out[10..12].copy_from_slice(&self.dport.to_be_bytes());
        out[12] = self.protocol;
        out
    }
}

/// murmur3's 32-bit finaliser: a bijection whose every output bit depends on every input bit.
pub fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// ECMP's hash (see the module's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ecmp {
    pub fabric_seed: u32,
}

impl Ecmp {
    /// A switch's seed.
    pub fn switch_seed(&self, switch: NodeId) -> u32 {
        fmix32(self.fabric_seed ^ switch.wrapping_mul(0x9E37_79B9))
    }

    /// The hash a switch computes for a packet of the flow.
    pub fn hash(&self, switch: NodeId, tuple: &FiveTuple) -> u32 {
        fmix32(crc32fast::hash(&tuple.bytes()) ^ self.switch_seed(switch))
    }

    /// Which of `n` next hops the switch takes.
    pub fn choose(&self, switch: NodeId, tuple: &FiveTuple, n: usize) -> usize {
        self.hash(switch, tuple) as usize % n
    }
}

/// Host pairs with no path.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{count} host pairs have no path (failed links or a partitioned topology): {}{}", list_pairs(.pairs), if *.count > .pairs.len() { ", ..." } else { "" })]
pub struct Unreachable {
    /// The number of ordered pairs `(src, dst)` without a path.
    pub count: usize,
    /// The first of them, in order of source then destination.
    pub pairs: Vec<(NodeId, NodeId)>,
}

/// How many unreachable pairs an error lists.
pub const LISTED_PAIRS: usize = 16;

fn list_pairs(pairs: &[(NodeId, NodeId)]) -> String {
    let names: Vec<String> = pairs.iter().map(|(a, b)| format!("{a} -> {b}")).collect();
    names.join(", ")
}

/// One step of a path: the node sending and its egress port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub node: NodeId,
    pub port: usize,
}

/// The routing tables of every switch.
#[derive(Debug, Clone, PartialEq)]
pub struct Routes {
    /// Per node, its index among the switches or among the ToRs (`NONE` if not one).
    switch_index: Vec<u32>,
    tor_index: Vec<u32>,
    /// The ToRs' node ids, by ToR index.
    tor_nodes: Vec<NodeId>,
    tors: usize,
    /// Per host, its ToR's port to it, if the link is up (`NONE` otherwise and for switches).
    host_port: Vec<u32>,
    /// Hops from switch `s` to ToR `t` at `s * tors + t`; `UNREACHED` if none.
    distance: Vec<u32>,
    /// The next-hop ports of switch `s` towards ToR `t`: `ports[offsets[i]..offsets[i + 1]]`
    /// with `i = s * tors + t`.
    offsets: Vec<u32>,
    ports: Vec<u32>,
}

const NONE: u32 = u32::MAX;
const UNREACHED: u32 = u32::MAX;

impl Routes {
    /// The shortest-path tables over the links that are up; an error names the host pairs
    /// without a path.
    pub fn compute(topo: &Topology) -> Result<Routes, Unreachable> {
        let nodes = topo.node_count();
        let mut switch_index = vec![NONE; nodes];
        for (index, &switch) in topo.switches().iter().enumerate() {
            switch_index[switch as usize] = index as u32;
        }
        let mut tor_index = vec![NONE; nodes];
        let mut tor_ids = Vec::new();
        for host in topo.hosts() {
            let tor = topo.tor_of(host) as usize;
            if tor_index[tor] == NONE {
                tor_index[tor] = tor_ids.len() as u32;
                tor_ids.push(tor as NodeId);
            }
        }
        let mut host_port = vec![NONE; nodes];
        for host in topo.hosts() {
            let tor = topo.tor_of(host);
            let port = topo
                .ports(tor)
                .iter()
                .position(|&l| topo.links()[l].peer(tor) == host);
            if let Some(port) = port.filter(|&p| topo.links()[topo.ports(tor)[p]].up) {
                host_port[host as usize] = port as u32;
            }
        }
        let (switches, tors) = (topo.switches().len(), tor_ids.len());
        let mut distance = vec![UNREACHED; switches * tors];
        for (t, &tor) in tor_ids.iter().enumerate() {
            let mut queue = VecDeque::from([tor]);
            distance[switch_index[tor as usize] as usize * tors + t] = 0;
            while let Some(node) = queue.pop_front() {
                let d = distance[switch_index[node as usize] as usize * tors + t];
                for &link in topo.ports(node) {
                    let next = topo.links()[link].peer(node);
                    let s = switch_index[next as usize];
                    if !topo.links()[link].up || s == NONE {
                        continue;
                    }
                    let entry = &mut distance[s as usize * tors + t];
                    if *entry == UNREACHED {
                        *entry = d + 1;
                        queue.push_back(next);
                    }
                }
            }
        }
        let mut routes = Routes {
            switch_index,
            tor_index,
            tor_nodes: tor_ids,
            tors,
            host_port,
            distance,
            offsets: vec![0],
            ports: Vec::new(),
        };
        for &switch in topo.switches() {
            for t in 0..tors {
                let d = routes.distance[routes.switch_index[switch as usize] as usize * tors + t];
                for (port, &link) in topo.ports(switch).iter().enumerate() {
                    let next = topo.links()[link].peer(switch);
                    let closer = routes
                        .switch_distance(next, t)
                        .is_some_and(|dn| d != UNREACHED && dn + 1 == d);
                    if topo.links()[link].up && closer {
                        routes.ports.push(port as u32);
                    }
                }
                routes.offsets.push(routes.ports.len() as u32);
            }
        }
        routes.check_reachable(topo)?;
        Ok(routes)
    }

    fn switch_distance(&self, node: NodeId, tor: usize) -> Option<u32> {
        let s = self.switch_index[node as usize];
        let d = *self.distance.get(s as usize * self.tors + tor)?;
        (s != NONE && d != UNREACHED).then_some(d)
    }

    /// Counts the unreachable host pairs by ToR pair (a k = 64 fat-tree has 65 536 hosts
    /// and 2048 ToRs), then lists the first ones host by host.
    fn check_reachable(&self, topo: &Topology) -> Result<(), Unreachable> {
        let hosts: Vec<NodeId> = topo.hosts().collect();
        let tor_of = |host: NodeId| self.tor_index[topo.tor_of(host) as usize] as usize;
        let mut attached = vec![0; self.tors];
        let mut detached = 0;
        for &host in &hosts {
            if self.host_port[host as usize] == NONE {
                detached += 1;
            } else {
                attached[tor_of(host)] += 1;
            }
        }
        // Per ToR, the attached hosts under the ToRs it cannot reach.
        let cut: Vec<usize> = self
            .tor_nodes
            .iter()
            .map(|&from| {
                (0..self.tors)
                    .filter(|&to| self.switch_distance(from, to).is_none())
                    .map(|to| attached[to])
                    .sum()
            })
            .collect();
        let unreachable_from = |src: NodeId| {
            if self.host_port[src as usize] == NONE {
                hosts.len() - 1
            } else {
                cut[tor_of(src)] + detached
            }
        };
        let count: usize = hosts.iter().map(|&src| unreachable_from(src)).sum();
        if count == 0 {
            return Ok(());
        }
        let pairs = hosts
            .iter()
            .filter(|&&src| unreachable_from(src) > 0)
            .flat_map(|&src| {
                hosts
                    .iter()
                    .filter(move |&&dst| dst != src && self.distance(topo, src, dst).is_none())
                    .map(move |&dst| (src, dst))
            })
            .take(LISTED_PAIRS)
            .collect();
        Err(Unreachable { count, pairs })
    }

    /// Hops (links) from a node (host or switch) to a host, over links that are up.
    pub fn distance(&self, topo: &Topology, from: NodeId, host: NodeId) -> Option<u32> {
        if from == host {
            return Some(0);
        }
        let host_link = &topo.links()[topo.ports(host)[0]];
        let tor = self.tor_index[host_link.peer(host) as usize] as usize;
        let (start, first) = if topo.is_switch(from) {
            (from, 0)
        } else {
            let link = &topo.links()[topo.ports(from)[0]];
            if !link.up {
                return None;
            }
            (link.peer(from), 1)
        };
        let to_tor = self.switch_distance(start, tor)?;
        host_link.up.then_some(first + to_tor + 1)
    }

    /// A switch's ports one hop closer to the host, in port order (empty at no path, and
    /// for a node that is not a switch).
    pub fn next_hops(&self, topo: &Topology, switch: NodeId, host: NodeId) -> &[u32] {
        let tor = topo.tor_of(host);
        if self.switch_index[switch as usize] == NONE {
            return &[];
        }
        if switch == tor {
            let port = &self.host_port[host as usize];
            return if *port == NONE {
                &[]
            } else {
                std::slice::from_ref(port)
            };
        }
        let i = self.switch_index[switch as usize] as usize * self.tors
            + self.tor_index[tor as usize] as usize;
        &self.ports[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The path of a flow: the host's port, then each switch's ECMP choice, until the
    /// destination; `None` if there is no path. The walk stops after as many hops as there
    /// are nodes, so a corrupt table gives a path that does not arrive rather than a hang.
    pub fn path(&self, topo: &Topology, ecmp: &Ecmp, tuple: &FiveTuple) -> Option<Vec<Hop>> {
        self.distance(topo, tuple.src, tuple.dst)?;
        let mut path = vec![Hop {
            node: tuple.src,
            port: 0,
        }];
        let mut node = topo.peer(tuple.src, 0);
        while node != tuple.dst && path.len() <= topo.node_count() {
            let choices = self.next_hops(topo, node, tuple.dst);
            let port = *choices.get(ecmp.choose(node, tuple, choices.len().max(1)))? as usize;
            path.push(Hop { node, port });
            node = topo.peer(node, port);
        }
        Some(path)
    }

    /// The links a path crosses.
    pub fn links_of(topo: &Topology, path: &[Hop]) -> Vec<LinkId> {
        path.iter()
            .map(|hop| topo.ports(hop.node)[hop.port])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Clos, LeafSpine, LinkSpec};
    use crate::topology::{Header, Link};
    use crate::units::{BitRate, Picos};
    use proptest::prelude::*;

    /// Hop counts between all nodes over the links that are up, hosts never in the middle
    /// (Floyd-Warshall with only switches as intermediate nodes): the reference model.
    fn reference_distances(topo: &Topology) -> Vec<Vec<Option<u32>>> {
        let n = topo.node_count();
        let mut d = vec![vec![None; n]; n];
        for (i, row) in d.iter_mut().enumerate() {
            row[i] = Some(0);
        }
        for link in topo.links().iter().filter(|l| l.up) {
            d[link.src as usize][link.dst as usize] = Some(1);
            d[link.dst as usize][link.src as usize] = Some(1);
        }
        for &k in topo.switches() {
            let k = k as usize;
            for i in 0..n {
                for j in 0..n {
                    if let (Some(a), Some(b)) = (d[i][k], d[k][j]) {
                        if d[i][j].is_none_or(|c| a + b < c) {
                            d[i][j] = Some(a + b);
                        }
                    }
                }
            }
        }
        d
    }

    /// The path's invariants: starts at the source, each hop leaves on a link that is up
    /// from the node the previous hop reached, no node twice, ends at the destination, as
    /// many hops as the shortest path.
    fn check_path(
        topo: &Topology,
        reference: &[Vec<Option<u32>>],
        tuple: &FiveTuple,
        path: &[Hop],
    ) -> Result<(), String> {
        let mut node = tuple.src;
        let mut seen = vec![false; topo.node_count()];
        for hop in path {
            if hop.node != node {
                return Err(format!("hop {hop:?} does not leave from {node}"));
            }
            if std::mem::replace(&mut seen[node as usize], true) {
                return Err(format!("node {node} twice: a loop"));
            }
            let link = &topo.links()[topo.ports(node)[hop.port]];
            if !link.up {
                return Err(format!(
                    "{hop:?} uses the failed link {}-{}",
                    link.src, link.dst
                ));
            }
            node = link.peer(node);
        }
        if node != tuple.dst {
            return Err(format!("the path ends at {node}, not at {}", tuple.dst));
        }
        let shortest = reference[tuple.src as usize][tuple.dst as usize];
        if Some(path.len() as u32) != shortest {
            return Err(format!(
                "{} hops, the shortest path has {shortest:?}",
                path.len()
            ));
        }
        Ok(())
    }

    fn tuple(src: NodeId, dst: NodeId, sport: u16) -> FiveTuple {
        FiveTuple {
            src,
            dst,
            sport,
            dport: 100,
            protocol: UDP,
        }
    }

    /// Hosts first (`hosts_per_switch[s]` under switch `s`), then the switches, then the
    /// switch-switch links `pairs` (a, b indices of switches); the hosts' links flagged in
    /// `failed_hosts` and the pairs' flagged in `failed_pairs` are failed.
    fn small_topology(
        hosts_per_switch: &[u32],
        pairs: &[(u32, u32)],
        failed_hosts: &[bool],
        failed_pairs: &[bool],
    ) -> Topology {
        let hosts: u32 = hosts_per_switch.iter().sum();
        let switches = hosts_per_switch.len() as u32;
        let link = |src, dst| Link {
            src,
            dst,
            rate: BitRate::gbps(100),
            delay: Picos::micros(1),
            error_rate: 0.0,
            up: true,
        };
        let mut ends: Vec<(NodeId, NodeId)> = hosts_per_switch
            .iter()
            .enumerate()
            .flat_map(|(s, &count)| (0..count).map(move |_| hosts + s as u32))
            .enumerate()
            .map(|(host, tor)| (host as NodeId, tor))
            .collect();
        ends.extend(pairs.iter().map(|&(a, b)| (hosts + a, hosts + b)));
        let links = ends.iter().map(|&(a, b)| link(a, b)).collect();
        let flags = failed_hosts
            .iter()
            .chain(std::iter::repeat(&false))
            .take(hosts as usize);
        let fail: Vec<(NodeId, NodeId)> = ends
            .iter()
            .zip(flags.chain(failed_pairs))
            .filter(|(_, &down)| down)
            .map(|(&pair, _)| pair)
            .collect();
        let header = Header {
            nodes: hosts + switches,
            switches: (hosts..hosts + switches).collect(),
            tors: None,
        };
        let mut topo = Topology::new(header, links).unwrap();
        topo.fail_links(&fail).unwrap();
        topo
    }

    /// 2-6 switches, each with 1-2 hosts (a switch needs a port), random links between
    /// switches, a random subset of them failed and now and then a host's link.
    fn random_topology() -> impl Strategy<Value = Topology> {
        (2usize..=6)
            .prop_flat_map(|switches| {
                let pairs: Vec<(u32, u32)> = (0..switches as u32)
                    .flat_map(|a| (a + 1..switches as u32).map(move |b| (a, b)))
                    .collect();
                let n = pairs.len();
                (
                    proptest::collection::vec(1u32..=2, switches),
                    proptest::sample::subsequence(pairs, 0..=n),
                    proptest::collection::vec(proptest::bool::weighted(0.05), 12),
                    proptest::collection::vec(proptest::bool::weighted(0.2), n),
                )
            })
            .prop_map(|(hosts, pairs, failed_hosts, failed_pairs)| {
                small_topology(&hosts, &pairs, &failed_hosts, &failed_pairs)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Every chosen path is a shortest path over links that are up, loop-free, and ends
        /// at the destination; unreachable pairs are exactly the reference's.
        #[test]
        fn paths_are_shortest_loop_free_and_avoid_failed_links(topo in random_topology(), seed: u32) {
            let reference = reference_distances(&topo);
            let hosts: Vec<NodeId> = topo.hosts().collect();
            let unreachable: Vec<(NodeId, NodeId)> = hosts
                .iter()
                .flat_map(|&a| hosts.iter().map(move |&b| (a, b)))
                .filter(|&(a, b)| a != b && reference[a as usize][b as usize].is_none())
                .collect();
            match Routes::compute(&topo) {
                Err(err) => {
                    prop_assert_eq!(err.count, unreachable.len());
                    prop_assert_eq!(&err.pairs[..], &unreachable[..err.pairs.len()]);
                }
                Ok(routes) => {
                    prop_assert!(unreachable.is_empty());
                    let ecmp = Ecmp { fabric_seed: seed };
                    for &src in &hosts {
                        for &dst in hosts.iter().filter(|&&d| d != src) {
                            for sport in 10_000..10_008 {
                                let t = tuple(src, dst, sport);
                                let path = routes.path(&topo, &ecmp, &t).unwrap();
                                prop_assert_eq!(check_path(&topo, &reference, &t, &path), Ok(()));
                            }
                        }
                    }
                }
            }
        }

        /// A switch's next hops are all its neighbours one hop closer, and ECMP spreads
        /// 256 flows a next hop evenly: each gets 128 to 384 (the binomial's standard
        /// deviation is at most 16, so a fair hash strays that far with odds below 1e-14).
        #[test]
        fn ecmp_spreads_flows_over_every_equal_cost_next_hop(topo in random_topology(), seed: u32) {
            let Ok(routes) = Routes::compute(&topo) else { return Ok(()) };
            let reference = reference_distances(&topo);
            let ecmp = Ecmp { fabric_seed: seed };
            let hosts: Vec<NodeId> = topo.hosts().collect();
            for &switch in topo.switches() {
                for &dst in &hosts {
                    let d = reference[switch as usize][dst as usize].unwrap();
                    let expected: Vec<u32> = (0..topo.ports(switch).len() as u32)
                        .filter(|&p| {
                            let link = &topo.links()[topo.ports(switch)[p as usize]];
                            let next = link.peer(switch);
                            link.up
                                && (next == dst || topo.is_switch(next))
                                && reference[next as usize][dst as usize] == Some(d - 1)
                        })
                        .collect();
                    let hops = routes.next_hops(&topo, switch, dst);
                    prop_assert_eq!(hops, &expected[..]);
                    let src = *hosts.iter().find(|&&h| h != dst).unwrap();
                    let mut counts = vec![0u32; hops.len()];
                    for sport in 0..256 * hops.len() as u16 {
                        counts[ecmp.choose(switch, &tuple(src, dst, sport), hops.len())] += 1;
                    }
                    prop_assert!(counts.iter().all(|c| (128..=384).contains(c)), "{switch} -> {dst}: {counts:?}");
                }
            }
        }
    }

    fn leaf_spine(spines: u32) -> Topology {
        LeafSpine {
            leaves: 2,
            spines,
            hosts_per_leaf: 16,
            host_link: LinkSpec::new(100, 1),
            fabric_link: LinkSpec::new(100, 1),
        }
        .build()
        .unwrap()
    }

    /// Pearson's chi-square statistic of the counts against a uniform spread.
    fn chi_square(counts: &[u32]) -> f64 {
        let total: u32 = counts.iter().sum();
        let expected = f64::from(total) / counts.len() as f64;
        counts
            .iter()
            .map(|&c| (f64::from(c) - expected).powi(2) / expected)
            .sum()
    }

    /// The 99.9 % quantile of chi-square with 3 degrees of freedom.
    const CHI_SQUARE_3_DOF_999: f64 = 16.27;

    fn uplink_counts(choose: impl Fn(&FiveTuple) -> usize) -> Vec<u32> {
        let mut counts = vec![0; 4];
        for src in 0..16 {
            for dst in 16..32 {
                for sport in 10_000..10_016 {
                    counts[choose(&tuple(src, dst, sport))] += 1;
                }
            }
        }
        counts
    }

    #[test]
    fn ecmp_spreads_4096_flows_evenly_over_four_spines() {
        let topo = leaf_spine(4);
        let routes = Routes::compute(&topo).unwrap();
        let ecmp = Ecmp { fabric_seed: 7 };
        let leaf = 32;
        assert_eq!(routes.next_hops(&topo, leaf, 16), &[16, 17, 18, 19]);
        let counts = uplink_counts(|t| routes.path(&topo, &ecmp, t).unwrap()[1].port - 16);
        let chi = chi_square(&counts);
        assert!(chi < CHI_SQUARE_3_DOF_999, "{counts:?}: chi-square {chi}");
    }

    #[test]
    fn the_spread_bound_catches_a_next_hop_never_taken() {
        let ecmp = Ecmp { fabric_seed: 7 };
        let counts = uplink_counts(|t| ecmp.choose(32, t, 3));
        assert!(chi_square(&counts) > CHI_SQUARE_3_DOF_999, "{counts:?}");
    }

    /// The (aggregation, core) pairs that flows from ToR 0's hosts to the other pod take in a
    /// 4-ary fat-tree, with `choose(switch, tuple, n)` at every switch.
    fn fat_tree_uplink_pairs(choose: impl Fn(NodeId, &FiveTuple, usize) -> usize) -> Vec<u32> {
        let topo = Clos::fat_tree(4, LinkSpec::new(100, 1), LinkSpec::new(100, 1))
            .unwrap()
            .build()
            .unwrap();
        let routes = Routes::compute(&topo).unwrap();
        let mut counts = vec![0; 4];
        for src in 0..2 {
            for dst in 4..8 {
                for sport in 10_000..10_064 {
                    let t = tuple(src, dst, sport);
                    let tor = topo.tor_of(src);
                    let up = routes.next_hops(&topo, tor, dst);
                    let agg = topo.peer(tor, up[choose(tor, &t, up.len())] as usize);
                    let up = routes.next_hops(&topo, agg, dst);
                    let agg_index = (agg - topo.switches()[8]) as usize % 2;
                    counts[agg_index * 2 + choose(agg, &t, up.len())] += 1;
                }
            }
        }
        counts
    }

    #[test]
    fn flows_from_a_tor_use_every_core_of_a_fat_tree() {
        let ecmp = Ecmp { fabric_seed: 1 };
        let counts = fat_tree_uplink_pairs(|s, t, n| ecmp.choose(s, t, n));
        assert!(counts.iter().all(|&c| c > 512 / 8), "{counts:?}");
    }

    #[test]
    fn a_seed_inside_the_crc_polarises_the_fat_tree() {
        // CRC-32 seeded by its initial value: only two of the four (aggregation, core)
        // pairs are ever taken, which is why the seed enters after the CRC.
        let counts = fat_tree_uplink_pairs(|s, t, n| {
            let mut crc =
                crc32fast::Hasher::new_with_initial(Ecmp { fabric_seed: 1 }.switch_seed(s));
            crc.update(&t.bytes());
            crc.finalize() as usize % n
        });
        assert_eq!(counts.iter().filter(|&&c| c == 0).count(), 2, "{counts:?}");
    }

    #[test]
    fn a_failed_link_is_routed_around() {
        let mut topo = leaf_spine(2);
        topo.fail_links(&[(32, 34)]).unwrap();
        let before = Routes::compute(&leaf_spine(2)).unwrap();
        let after = Routes::compute(&topo).unwrap();
        let reference = reference_distances(&topo);
        let ecmp = Ecmp { fabric_seed: 3 };
        let mut stale_used_it = false;
        for sport in 0..64 {
            let t = tuple(0, 20, sport);
            let path = after.path(&topo, &ecmp, &t).unwrap();
            assert_eq!(check_path(&topo, &reference, &t, &path), Ok(()));
            // The companion: the routes from before the failure, checked against the
            // topology after it, send some flows over the failed link, and the check says so.
            let stale = before.path(&topo, &ecmp, &t).unwrap();
            if let Err(why) = check_path(&topo, &reference, &t, &stale) {
                assert!(why.contains("failed link 32-34"), "{why}");
                stale_used_it = true;
            }
        }
        assert!(stale_used_it);
    }

    #[test]
    fn dshs_deadlock_topology_bounces_through_the_middle_leaves() {
        // DSH's Fig. 12: 2 spines, 4 leaves of 16 hosts, links S0-L3 and S1-L0 failed. Flows
        // from L0 to L3 go up to S0, down to L1 or L2, up to S1 and down to L3.
        let mut topo = LeafSpine::dsh().build().unwrap();
        let ([l0, l1, l2, l3], [s0, s1]) = ([64, 65, 66, 67], [68, 69]);
        topo.fail_links(&[(s0, l3), (s1, l0)]).unwrap();
        let routes = Routes::compute(&topo).unwrap();
        let reference = reference_distances(&topo);
        let ecmp = Ecmp { fabric_seed: 0 };
        let mut middle = [0; 2];
        for sport in 0..64 {
            let t = tuple(0, 48, sport);
            let path = routes.path(&topo, &ecmp, &t).unwrap();
            assert_eq!(check_path(&topo, &reference, &t, &path), Ok(()));
            let nodes: Vec<NodeId> = path.iter().map(|hop| hop.node).collect();
            assert_eq!(
                (nodes[1], nodes[2], nodes[4], nodes[5]),
                (l0, s0, s1, l3),
                "{nodes:?}"
            );
            middle[usize::from(nodes[3] == l2)] += 1;
            assert!(nodes[3] == l1 || nodes[3] == l2);
        }
        assert!(middle.iter().all(|&n| n > 16), "{middle:?}");
    }

    #[test]
    fn a_corrupt_table_gives_a_path_the_check_rejects() {
        let topo = Clos::l2bm().build().unwrap();
        let mut routes = Routes::compute(&topo).unwrap();
        let reference = reference_distances(&topo);
        let ecmp = Ecmp { fabric_seed: 0 };
        let (tor0, tor1, agg) = (128, 129, 132);
        let t = tuple(0, 32, 10_000);
        assert_eq!(topo.tor_of(32), tor1);
        let path = routes.path(&topo, &ecmp, &t).unwrap();
        assert_eq!(check_path(&topo, &reference, &t, &path), Ok(()));
        // Aggregation switch 132's route to ToR 129 turned up towards its core.
        let core_port = topo.ports(agg).len() - 1;
        let i = routes.switch_index[agg as usize] as usize * routes.tors
            + routes.tor_index[tor1 as usize] as usize;
        for p in &mut routes.ports[routes.offsets[i] as usize..routes.offsets[i + 1] as usize] {
            *p = core_port as u32;
        }
        let mut caught = 0;
        for sport in 0..16 {
            let t = tuple(0, 32, sport);
            let path = routes.path(&topo, &ecmp, &t).unwrap();
            let crosses_agg = path.iter().any(|hop| hop.node == agg);
            assert_eq!(
                check_path(&topo, &reference, &t, &path).is_err(),
                crosses_agg,
                "{path:?}"
            );
            caught += usize::from(crosses_agg);
        }
        // ToR 128 reaches aggregation switch 132 on its first uplink; ECMP sends some of the
        // 16 flows there.
        assert_eq!(topo.peer(tor0, 32), agg);
        assert!(caught > 0);
    }

    #[test]
    fn unreachable_pairs_are_named() {
        let topo = small_topology(&[1, 1], &[(0, 1)], &[], &[true]);
        let err = Routes::compute(&topo).unwrap_err();
        assert_eq!(
            err,
            Unreachable {
                count: 2,
                pairs: vec![(0, 1), (1, 0)]
            }
        );
        assert_eq!(
            err.to_string(),
            "2 host pairs have no path (failed links or a partitioned topology): 0 -> 1, 1 -> 0"
        );
        // Host 0's own link failed: it reaches no one and no one reaches it.
        let topo = small_topology(&[2, 1], &[(0, 1)], &[true], &[]);
        let err = Routes::compute(&topo).unwrap_err();
        assert_eq!(err.count, 4);
        assert_eq!(err.pairs, vec![(0, 1), (0, 2), (1, 0), (2, 0)]);
    }

    #[test]
    fn addresses_are_ns3s() {
        assert_eq!(ipv4_of(0), 0x0b00_0001);
        assert_eq!(ipv4_of(257), 0x0b01_0101);
        assert_eq!(
            &tuple(1, 2, 0x1234).bytes()[..],
            &[11, 0, 1, 1, 11, 0, 2, 1, 0x12, 0x34, 0, 100, 0x11]
        );
    }
}
