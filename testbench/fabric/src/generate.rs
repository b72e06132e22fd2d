//! Topologies from a few keys: leaf-spine, three-layer Clos and k-ary fat-tree.
//!
//! Numbering and link order follow ns3-datacenter's generated files
//! (`simulator/ns-3.39/examples/PowerTCP/topology-256.txt`): hosts first (`0..hosts`), then
//! the switches layer by layer from the hosts up; the host links in host order, then each
//! lower switch's links to the layer above in switch order. So a generated topology written
//! with [`Topology::to_ns3`] is that file byte for byte (tested), and a switch's ports are
//! its host links, then its links to the layer below, then to the layer above.

use crate::input::FieldError;
use crate::topology::{Header, Link, NodeId, Topology, MAX_NODES};
use crate::units::{BitRate, Picos};

/// A link class's rate and one-way delay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkSpec {
    pub rate: BitRate,
    pub delay: Picos,
}

impl LinkSpec {
    pub const fn new(gbps: u64, delay_us: u64) -> LinkSpec {
        LinkSpec {
            rate: BitRate::gbps(gbps),
            delay: Picos::micros(delay_us),
        }
    }
}

/// A generator key out of its range.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("{key}: {value}; allowed: {allowed}")]
    Key {
        key: &'static str,
        value: u64,
        allowed: String,
    },
    #[error(transparent)]
    Topology(#[from] FieldError),
}

fn at_least_one(key: &'static str, value: u32) -> Result<(), GenerateError> {
    if value == 0 {
        return Err(GenerateError::Key {
            key,
            value: 0,
            allowed: "1 or more".into(),
        });
    }
    Ok(())
}

/// A two-layer leaf-spine: every leaf linked to every spine.
#[derive(Debug, Clone, PartialEq)]
pub struct LeafSpine {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    pub host_link: LinkSpec,
    pub fabric_link: LinkSpec,
}

/// A three-layer Clos of pods: each ToR linked to every aggregation switch of its pod, and
/// aggregation switch `j` of every pod linked to the `j`-th plane of cores (the cores split
/// into `aggs_per_pod` planes of equal size, the fat-tree's wiring).
#[derive(Debug, Clone, PartialEq)]
pub struct Clos {
    pub pods: u32,
    pub tors_per_pod: u32,
    pub aggs_per_pod: u32,
    pub cores: u32,
    pub servers_per_tor: u32,
    pub host_link: LinkSpec,
    pub tor_agg_link: LinkSpec,
    pub agg_core_link: LinkSpec,
}

impl Clos {
    /// L2BM's evaluation network (seed 002, section IV, Fig. 6): 2 core, 4 aggregation and 4
    /// ToR switches, 32 servers per ToR at 25 Gb/s, 100 Gb/s between switches, 5 us between
    /// core and aggregation and 1 us elsewhere. The paper's text does not say how the
    /// aggregation and core switches are joined; this is the fat-tree's wiring above, two
    /// pods with each aggregation switch on one core.
    pub fn l2bm() -> Clos {
        Clos {
            pods: 2,
            tors_per_pod: 2,
            aggs_per_pod: 2,
            cores: 2,
            servers_per_tor: 32,
            host_link: LinkSpec::new(25, 1),
            tor_agg_link: LinkSpec::new(100, 1),
            agg_core_link: LinkSpec::new(100, 5),
        }
    }

    /// ns3-datacenter's `examples/PowerTCP/topology-256.txt`: 256 servers at 25 Gb/s under 8
    /// ToRs, 8 aggregation and 4 core switches at 100 Gb/s, 5 us between core and aggregation.
    pub fn ns3_datacenter_256() -> Clos {
        Clos {
            pods: 4,
            cores: 4,
            ..Clos::l2bm()
        }
    }

    /// The k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 ToRs and k/2
    /// aggregation switches, (k/2)^2 cores, k/2 hosts per ToR; one rate and delay for all
    /// links between switches.
    pub fn fat_tree(
        k: u32,
        host_link: LinkSpec,
        fabric_link: LinkSpec,
    ) -> Result<Clos, GenerateError> {
        if k < 2 || !k.is_multiple_of(2) {
            return Err(GenerateError::Key {
                key: "k",
                value: u64::from(k),
                allowed: "an even number, 2 or more".into(),
            });
        }
        let half = k / 2;
        Ok(Clos {
            pods: k,
            tors_per_pod: half,
            aggs_per_pod: half,
            cores: half * half,
            servers_per_tor: half,
            host_link,
            tor_agg_link: fabric_link,
            agg_core_link: fabric_link,
        })
    }

    pub fn build(&self) -> Result<Topology, GenerateError> {
        for (key, value) in [
            ("pods", self.pods),
            ("tors_per_pod", self.tors_per_pod),
            ("aggs_per_pod", self.aggs_per_pod),
            ("cores", self.cores),
            ("servers_per_tor", self.servers_per_tor),
        ] {
            at_least_one(key, value)?;
        }
        if !self.cores.is_multiple_of(self.aggs_per_pod) {
            return Err(GenerateError::Key {
                key: "cores",
                value: u64::from(self.cores),
                allowed: format!("a multiple of aggs_per_pod ({})", self.aggs_per_pod),
            });
        }
        let tors = self.pods * self.tors_per_pod;
        let mut layers = Layers::new(
            u64::from(tors) * u64::from(self.servers_per_tor),
            &[
                u64::from(tors),
                u64::from(self.pods) * u64::from(self.aggs_per_pod),
                u64::from(self.cores),
            ],
        )?;
        let plane = self.cores / self.aggs_per_pod;
        layers.hosts_under(1, self.servers_per_tor, self.host_link);
        for tor in 0..tors {
            let pod = tor / self.tors_per_pod;
            for agg in 0..self.aggs_per_pod {
                layers.link(1, tor, 2, pod * self.aggs_per_pod + agg, self.tor_agg_link);
            }
        }
        for agg in 0..self.pods * self.aggs_per_pod {
            let index = agg % self.aggs_per_pod;
            for core in index * plane..(index + 1) * plane {
                layers.link(2, agg, 3, core, self.agg_core_link);
            }
        }
        layers.finish(tors)
    }
}

impl LeafSpine {
    /// DSH's deadlock network (seed 000, section V, Fig. 12): 2 spines, 4 leaves of 16 hosts
    /// at 100 Gb/s, 400 Gb/s uplinks, 2 us links (its failed links are the scenario's).
    pub fn dsh() -> LeafSpine {
        LeafSpine {
            leaves: 4,
            spines: 2,
            hosts_per_leaf: 16,
            host_link: LinkSpec::new(100, 2),
            fabric_link: LinkSpec::new(400, 2),
        }
    }

    pub fn build(&self) -> Result<Topology, GenerateError> {
        for (key, value) in [
            ("leaves", self.leaves),
            ("spines", self.spines),
            ("hosts_per_leaf", self.hosts_per_leaf),
        ] {
            at_least_one(key, value)?;
        }
        let mut layers = Layers::new(
            u64::from(self.leaves) * u64::from(self.hosts_per_leaf),
            &[u64::from(self.leaves), u64::from(self.spines)],
        )?;
        layers.hosts_under(1, self.hosts_per_leaf, self.host_link);
        for leaf in 0..self.leaves {
            for spine in 0..self.spines {
                layers.link(1, leaf, 2, spine, self.fabric_link);
            }
        }
        layers.finish(self.leaves)
    }
}

/// Node numbering by layer (layer 0 the hosts) and the links in the order they are made.
struct Layers {
    /// The first id of each layer, and one past the last node.
    starts: Vec<NodeId>,
    links: Vec<Link>,
}

impl Layers {
    fn new(hosts: u64, switch_layers: &[u64]) -> Result<Layers, GenerateError> {
        let mut starts = vec![0];
        let mut next = hosts;
        for size in switch_layers {
            starts.push(u32::try_from(next).unwrap_or(u32::MAX));
            next += size;
        }
        if next > u64::from(MAX_NODES) {
            return Err(GenerateError::Key {
                key: "nodes",
                value: next,
                allowed: format!("at most {MAX_NODES} hosts and switches together"),
            });
        }
        starts.push(next as NodeId);
        Ok(Layers {
            starts,
            links: Vec::new(),
        })
    }

    fn link(&mut self, lower: usize, a: u32, upper: usize, b: u32, spec: LinkSpec) {
        self.links.push(Link {
            src: self.starts[lower] + a,
            dst: self.starts[upper] + b,
            rate: spec.rate,
            delay: spec.delay,
            error_rate: 0.0,
            up: true,
        });
    }

    /// Host `h` to switch `h / per_switch` of `layer`.
    fn hosts_under(&mut self, layer: usize, per_switch: u32, spec: LinkSpec) {
        for host in 0..self.starts[1] {
            self.link(0, host, layer, host / per_switch, spec);
        }
    }

    fn finish(self, tors: u32) -> Result<Topology, GenerateError> {
        let end = *self.starts.last().unwrap_or(&0);
        let header = Header {
            nodes: end,
            switches: (self.starts[1]..end).collect(),
            tors: Some(tors),
        };
        Ok(Topology::new(header, self.links)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sha2::{Digest, Sha256};

    /// Each switch's ports, from the keys alone: a ToR's hosts then its pod's aggregation
    /// switches, an aggregation switch's ToRs then its plane of cores, a core's one
    /// aggregation switch per pod.
    fn check_clos(topo: &Topology, clos: &Clos) -> Result<(), String> {
        let tors = clos.pods * clos.tors_per_pod;
        let aggs = clos.pods * clos.aggs_per_pod;
        let hosts = tors * clos.servers_per_tor;
        let plane = clos.cores / clos.aggs_per_pod;
        let expected_ports = |node: NodeId| -> Vec<NodeId> {
            if node < hosts {
                return vec![hosts + node / clos.servers_per_tor];
            }
            let (tor0, agg0, core0) = (hosts, hosts + tors, hosts + tors + aggs);
            if node < agg0 {
                let (tor, pod) = (node - tor0, (node - tor0) / clos.tors_per_pod);
                let servers = (tor * clos.servers_per_tor..(tor + 1) * clos.servers_per_tor)
                    .collect::<Vec<_>>();
                let up = (0..clos.aggs_per_pod).map(|j| agg0 + pod * clos.aggs_per_pod + j);
                servers.into_iter().chain(up).collect()
            } else if node < core0 {
                let (pod, j) = (
                    (node - agg0) / clos.aggs_per_pod,
                    (node - agg0) % clos.aggs_per_pod,
                );
                let down = (0..clos.tors_per_pod).map(|t| tor0 + pod * clos.tors_per_pod + t);
                down.chain((j * plane..(j + 1) * plane).map(|c| core0 + c))
                    .collect()
            } else {
                let j = (node - core0) / plane;
                (0..clos.pods)
                    .map(|pod| agg0 + pod * clos.aggs_per_pod + j)
                    .collect()
            }
        };
        if topo.node_count() as u32 != hosts + tors + aggs + clos.cores {
            return Err(format!("{} nodes", topo.node_count()));
        }
        for node in 0..topo.node_count() as NodeId {
            let peers: Vec<NodeId> = (0..topo.ports(node).len())
                .map(|p| topo.peer(node, p))
                .collect();
            if peers != expected_ports(node) {
                return Err(format!(
                    "node {node}: ports to {peers:?}, expected {:?}",
                    expected_ports(node)
                ));
            }
        }
        Ok(())
    }

    fn small_clos() -> impl Strategy<Value = Clos> {
        (1u32..=4, 1u32..=3, 1u32..=3, 1u32..=2, 1u32..=4).prop_map(
            |(pods, tors, aggs, planes, servers)| Clos {
                pods,
                tors_per_pod: tors,
                aggs_per_pod: aggs,
                cores: aggs * planes,
                servers_per_tor: servers,
                host_link: LinkSpec::new(25, 1),
                tor_agg_link: LinkSpec::new(100, 1),
                agg_core_link: LinkSpec::new(100, 5),
            },
        )
    }

    proptest! {
        /// Every generated Clos is wired as its keys say and reads back from its file.
        #[test]
        fn clos_ports_follow_the_keys_and_the_file_reads_back(clos in small_clos()) {
            let topo = clos.build().unwrap();
            prop_assert_eq!(check_clos(&topo, &clos), Ok(()));
            prop_assert_eq!(Topology::parse(&topo.to_ns3()).unwrap(), topo);
        }
    }

    #[test]
    fn the_wiring_check_catches_other_keys() {
        let topo = Clos::l2bm().build().unwrap();
        let four_cores = Clos {
            cores: 4,
            ..Clos::l2bm()
        };
        assert_eq!(check_clos(&topo, &Clos::l2bm()), Ok(()));
        assert!(check_clos(&topo, &four_cores).is_err());
        assert!(check_clos(
            &Clos {
                pods: 3,
                ..Clos::l2bm()
            }
            .build()
            .unwrap(),
            &Clos::l2bm()
        )
        .is_err());
    }

    /// SHA-256 of ns3-datacenter's `simulator/ns-3.39/examples/PowerTCP/topology-256.txt` at
    /// commit dc4d0c0b3797494b2cefeea688c1bce329b14561 (8078 bytes, no newline at the end).
    /// The file is GPL-2.0 and this crate is MIT/Apache-2.0, so only its hash is kept.
    const TOPOLOGY_256_SHA256: &str =
        "7aefabdcfe1ec80d2062f7a26e661a1709148179c1184f43a553aa12271b83df";

    #[test]
    fn the_256_server_clos_is_ns3_datacenters_file_byte_for_byte() {
        let topo = Clos::ns3_datacenter_256().build().unwrap();
        let text = topo.to_ns3();
        assert!(text.starts_with("276 20 8 288\n256 257 "));
        assert!(text.contains("\n0 256 25000000000.0 1us 0\n"));
        assert!(text.contains("\n264 272 100000000000.0 5us 0\n"));
        let digest = Sha256::digest(text.trim_end_matches('\n').as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, TOPOLOGY_256_SHA256);
        assert_eq!(Topology::parse(&text).unwrap(), topo);
    }

    #[test]
    fn the_hash_comparison_catches_a_one_link_difference() {
        // The byte-for-byte test above must be able to fail: one delay changed.
        let mut clos = Clos::ns3_datacenter_256();
        clos.agg_core_link.delay = Picos::micros(4);
        let text = clos.build().unwrap().to_ns3();
        let digest = Sha256::digest(text.trim_end_matches('\n').as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_ne!(hex, TOPOLOGY_256_SHA256);
    }

    #[test]
    fn l2bm_clos_has_the_papers_counts() {
        let topo = Clos::l2bm().build().unwrap();
        assert_eq!(topo.hosts().count(), 128);
        assert_eq!(topo.switches().len(), 10);
        // 128 host links, 4 ToRs x 2 aggregation, 4 aggregation x 1 core.
        assert_eq!(topo.links().len(), 128 + 8 + 4);
        let core_links = topo
            .links()
            .iter()
            .filter(|l| l.delay == Picos::micros(5))
            .count();
        assert_eq!(core_links, 4);
        assert!(topo.links()[..128]
            .iter()
            .all(|l| l.rate == BitRate::gbps(25)));
    }

    #[test]
    fn a_16_ary_fat_tree_has_320_switches_and_1024_hosts() {
        let topo = Clos::fat_tree(16, LinkSpec::new(100, 1), LinkSpec::new(100, 1))
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(topo.switches().len(), 320);
        assert_eq!(topo.hosts().count(), 1024);
        assert_eq!(topo.links().len(), 3 * 1024);
        // Every switch has k ports.
        assert!(topo.switches().iter().all(|&s| topo.ports(s).len() == 16));
    }

    #[test]
    fn leaf_spine_links_every_leaf_to_every_spine() {
        let topo = LeafSpine::dsh().build().unwrap();
        assert_eq!(topo.node_count(), 64 + 6);
        assert_eq!(topo.links().len(), 64 + 8);
        // Leaf 64: 16 host ports, then the two spines.
        assert_eq!(topo.ports(64).len(), 18);
        assert_eq!((topo.peer(64, 16), topo.peer(64, 17)), (68, 69));
        assert_eq!(topo.ports(69).len(), 4);
    }

    #[test]
    fn keys_out_of_range_are_named() {
        let err = Clos::fat_tree(3, LinkSpec::new(1, 1), LinkSpec::new(1, 1)).unwrap_err();
        assert_eq!(err.to_string(), "k: 3; allowed: an even number, 2 or more");
        let err = Clos {
            cores: 3,
            ..Clos::l2bm()
        }
        .build()
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cores: 3; allowed: a multiple of aggs_per_pod (2)"
        );
        let err = Clos {
            pods: 0,
            ..Clos::l2bm()
        }
        .build()
        .unwrap_err();
        assert_eq!(err.to_string(), "pods: 0; allowed: 1 or more");
        let err = LeafSpine {
            leaves: 1 << 20,
            spines: 1,
            hosts_per_leaf: 2,
            host_link: LinkSpec::new(1, 1),
            fabric_link: LinkSpec::new(1, 1),
        }
        .build()
        .unwrap_err();
        assert!(err.to_string().starts_with("nodes: 3145729;"), "{err}");
    }
}
