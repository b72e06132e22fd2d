//! Workload generators: Poisson arrivals at a target load, many-to-one fan-in bursts, random
//! permutation and all-to-all, as lists of [`Flow`]s sorted by start time (the order a flow
//! file needs). Each is deterministic for its seed (ChaCha8).
//!
//! **Load.** ns3-datacenter's PowerTCP workload defines the load on the ToRs' uplinks:
//! each server starts flows at `requestRate = load * LEAF_SERVER_CAPACITY * SERVER_COUNT /
//! oversubRatio / (8 * avg_cdf) / SERVER_COUNT` per second, `oversubRatio = SERVER_COUNT *
//! LEAF_SERVER_CAPACITY / (SPINE_LEAF_CAPACITY * SPINE_COUNT)`
//! (`examples/PowerTCP/powertcp-evaluation-workload.cc` lines 1262 and 1270), which is
//! `load * uplink capacity / (8 * mean size * servers under the ToR)`: at load 1 a ToR's
//! servers together offer its uplinks' capacity. [`LoadBase::TorUplinks`] is that, with the
//! uplinks and servers read from the topology. HPCC's `traffic_gen.py` defines it on the
//! host's own link instead (`avg_inter_arrival = 1/(bandwidth*load/8./avg)`):
//! [`LoadBase::HostLink`]. Inter-arrival times are exponential (`poission_gen_interval`,
//! line 373), each host's stream independent, from `start` to `start + duration`, rounded
//! to the nanosecond (ns-3's resolution); destinations are uniform over the other hosts, as
//! `traffic_gen.py` draws them.

use crate::cdf::SizeCdf;
use crate::flows::{Flow, MAX_FLOWS};
use crate::topology::{NodeId, Topology};
use crate::units::Picos;
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A generator key out of its range.
#[derive(Debug, thiserror::Error)]
#[error("{key}: {value}; allowed: {allowed}")]
pub struct WorkloadError {
    pub key: &'static str,
    pub value: String,
    pub allowed: String,
}

fn key_error(key: &'static str, value: impl ToString, allowed: impl Into<String>) -> WorkloadError {
    WorkloadError {
        key,
        value: value.to_string(),
        allowed: allowed.into(),
    }
}

/// The fields every generated flow shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowTemplate {
    pub pg: u8,
    pub dport: u16,
}

/// HPCC's `traffic_gen.py` writes `src dst 3 100 size start`.
impl Default for FlowTemplate {
    fn default() -> FlowTemplate {
        FlowTemplate { pg: 3, dport: 100 }
    }
}

impl FlowTemplate {
    fn flow(self, src: NodeId, dst: NodeId, size: u64, start: Picos) -> Flow {
        Flow {
            src,
            dst,
            pg: self.pg,
            dport: self.dport,
            size,
            start,
        }
    }
}

/// What a load of 1 means (see the module's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadBase {
    /// ns3-datacenter's PowerTCP: the host's ToR's uplink capacity shared by its hosts.
    TorUplinks,
    /// HPCC's `traffic_gen.py`: the host's link.
    HostLink,
}

/// Poisson arrivals of flows with sizes from a CDF.
#[derive(Debug, Clone, PartialEq)]
pub struct Poisson {
    pub cdf: SizeCdf,
    /// 0 < load <= 1.
    pub load: f64,
    pub base: LoadBase,
    pub start: Picos,
    pub duration: Picos,
    pub seed: u64,
    pub template: FlowTemplate,
    /// The hosts that send (empty: every host) and those they send to (empty: every
    /// host), each flow to a uniformly drawn one of `to` other than its source.
    pub from: Vec<NodeId>,
    pub to: Vec<NodeId>,
    /// The classes the flows are spread over, each flow's drawn uniformly (DSH section
    /// V-B: "background flows are randomly classified into other traffic classes"); empty:
    /// every flow on the template's.
    pub pgs: Vec<u8>,
}

/// A uniform draw in [0, 1) with 53 bits.
fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A uniform draw in `0..n` (`n > 0`), by the high half of a 128-bit product.
fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    below_u64(rng, n as u64) as usize
}

/// As [`below`], for `n` in 64 bits.
fn below_u64(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

const PICOS_PER_NS: u64 = 1_000;

/// The capacity in bits per second a load of 1 means for `host` (see the module's doc).
fn host_capacity(topo: &Topology, base: LoadBase, host: NodeId) -> Result<f64, WorkloadError> {
    let host_link = &topo.links()[topo.ports(host)[0]];
    match base {
        LoadBase::HostLink => Ok(host_link.rate.0 as f64),
        LoadBase::TorUplinks => {
            let tor = topo.tor_of(host);
            let mut uplinks = 0u64;
            let mut hosts = 0u32;
            for &link in topo.ports(tor) {
                let peer = topo.links()[link].peer(tor);
                if topo.is_switch(peer) && topo.links()[link].up {
                    uplinks += topo.links()[link].rate.0;
                } else if !topo.is_switch(peer) {
                    hosts += 1;
                }
            }
            if uplinks == 0 {
                return Err(key_error(
                    "base",
                    "tor-uplinks",
                    format!(
                        "host-link (switch {tor}, host {host}'s ToR, has no uplink that is up)"
                    ),
                ));
            }
            Ok(uplinks as f64 / f64::from(hosts))
        }
    }
}

/// Refuses a load outside (0, 1].
fn checked_load(load: f64) -> Result<f64, WorkloadError> {
    if !(load > 0.0 && load <= 1.0) {
        return Err(key_error("load", load, "0 < load <= 1"));
    }
    Ok(load)
}

/// Refuses an expected flow count above [`MAX_FLOWS`].
fn checked_count(expected: f64, duration: Picos) -> Result<(), WorkloadError> {
    if expected > f64::from(MAX_FLOWS) {
        return Err(key_error(
            "duration",
            duration.seconds_text(),
            format!(
                "about {expected:.0} flows at this load; at most {MAX_FLOWS} (a shorter duration)"
            ),
        ));
    }
    Ok(())
}

/// The next arrival after `t` picoseconds of a Poisson process of `rate` per second, and
/// that time rounded to the nanosecond.
fn next_arrival(rng: &mut ChaCha8Rng, t: &mut f64, rate: f64) -> u64 {
    *t += -(1.0 - unit(rng)).ln() / rate * 1e12;
    (*t / PICOS_PER_NS as f64).round() as u64 * PICOS_PER_NS
}

impl Poisson {
    /// Flows per second each host starts.
    fn rate(&self, topo: &Topology, host: NodeId) -> Result<f64, WorkloadError> {
        Ok(self.load * host_capacity(topo, self.base, host)? / (8.0 * self.cdf.mean()))
    }

    /// The flows, sorted by start time (then source, then draw order).
    pub fn generate(&self, topo: &Topology) -> Result<Vec<Flow>, WorkloadError> {
        checked_load(self.load)?;
        let pgs = checked_classes(&self.pgs)?;
        let all: Vec<NodeId> = topo.hosts().collect();
        if all.len() < 2 {
            return Err(key_error("hosts", all.len(), "2 or more in the topology"));
        }
        let pick = |key: &'static str, set: &[NodeId]| -> Result<Vec<NodeId>, WorkloadError> {
            if set.is_empty() {
                return Ok(all.clone());
            }
            let mut v = set
                .iter()
                .map(|&h| checked_host(topo, key, h))
                .collect::<Result<Vec<_>, _>>()?;
            v.sort_unstable();
            v.dedup();
            Ok(v)
        };
        let hosts = pick("from", &self.from)?;
        let to = pick("to", &self.to)?;
        if let Some(&h) = hosts.iter().find(|&&h| to == [h]) {
            return Err(key_error(
                "to",
                h,
                format!("hosts other than the only sender {h}"),
            ));
        }
        let rates = hosts
            .iter()
            .map(|&host| self.rate(topo, host))
            .collect::<Result<Vec<f64>, _>>()?;
        checked_count(
            rates.iter().sum::<f64>() * self.duration.as_secs_f64(),
            self.duration,
        )?;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let end = self.start.0 + self.duration.0;
        let mut flows = Vec::new();
        for (&src, &rate) in hosts.iter().zip(&rates) {
            let mut t = self.start.0 as f64;
            loop {
                let start = next_arrival(&mut rng, &mut t, rate);
                if start >= end {
                    break;
                }
                // Uniform over the others: index past the source's own.
                let dst = match to.binary_search(&src) {
                    Ok(own) => {
                        let k = below(&mut rng, to.len() - 1);
                        to[if k >= own { k + 1 } else { k }]
                    }
                    Err(_) => to[below(&mut rng, to.len())],
                };
                let size = loop {
                    let size = self.cdf.size_at(unit(&mut rng));
                    if size > 0 {
                        break size;
                    }
                };
                // One class of several drawn last, so that a single class draws nothing
                // and leaves the other draws as they were.
                let pg = match pgs {
                    [] => self.template.pg,
                    [pg] => *pg,
                    _ => pgs[below(&mut rng, pgs.len())],
                };
                let template = FlowTemplate {
                    pg,
                    ..self.template
                };
                flows.push(template.flow(src, dst, size, Picos(start)));
            }
        }
        flows.sort_by_key(|flow| flow.start);
        Ok(flows)
    }
}

/// Refuses a class list with a class above 7 or one named twice.
fn checked_classes(pgs: &[u8]) -> Result<&[u8], WorkloadError> {
    for (i, &pg) in pgs.iter().enumerate() {
        if pg > 7 || pgs[..i].contains(&pg) {
            return Err(key_error(
                "pgs",
                format!("{pgs:?}"),
                "distinct classes 0..=7",
            ));
        }
    }
    Ok(pgs)
}

/// Fan-in bursts with Poisson arrivals: each burst, `senders` hosts drawn from the racks
/// other than a uniformly drawn receiver's each send `size` bytes to it, all starting at
/// the burst's time (DSH section V-B's "16 senders simultaneously transmit 64KB data to
/// the same receiver ... in different racks from the receiver").
///
/// **Load** as [`Poisson`] defines it: the bursts of the whole network offer `load` times
/// the sum over the hosts of the capacity a load of 1 means for each (`base`), so one
/// burst of `senders * size` bytes arrives at the rate `load * sum(capacity) / (8 *
/// senders * size)` per second, the gaps exponential (one stream for the network).
#[derive(Debug, Clone, PartialEq)]
pub struct FanInBursts {
    pub senders: usize,
    pub size: u64,
    /// 0 < load <= 1.
    pub load: f64,
    pub base: LoadBase,
    pub start: Picos,
    pub duration: Picos,
    pub seed: u64,
    pub template: FlowTemplate,
}

impl FanInBursts {
    /// Bursts per second in `topo`.
    pub fn rate(&self, topo: &Topology) -> Result<f64, WorkloadError> {
        let capacity = topo
            .hosts()
            .map(|h| host_capacity(topo, self.base, h))
            .sum::<Result<f64, _>>()?;
        Ok(self.load * capacity / (8.0 * self.senders as f64 * self.size as f64))
    }

    /// The flows, sorted by start time (then burst, then sender id).
    pub fn generate(&self, topo: &Topology) -> Result<Vec<Flow>, WorkloadError> {
        checked_load(self.load)?;
        let size = checked_size(self.size)?;
        let hosts: Vec<NodeId> = topo.hosts().collect();
        if hosts.len() < 2 {
            return Err(key_error("hosts", hosts.len(), "2 or more in the topology"));
        }
        if self.senders == 0 {
            return Err(key_error("senders", 0, "1 or more"));
        }
        let rate = self.rate(topo)?;
        checked_count(
            rate * self.senders as f64 * self.duration.as_secs_f64(),
            self.duration,
        )?;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let end = self.start.0 + self.duration.0;
        let mut t = self.start.0 as f64;
        let mut flows = Vec::new();
        loop {
            let start = next_arrival(&mut rng, &mut t, rate);
            if start >= end {
                break;
            }
            let receiver = hosts[below(&mut rng, hosts.len())];
            let mut senders = draw_senders(topo, receiver, self.senders, &mut rng)?;
            senders.sort_unstable();
            flows.extend(
                senders
                    .into_iter()
                    .map(|src| self.template.flow(src, receiver, size, Picos(start))),
            );
        }
        Ok(flows)
    }
}

fn checked_host(topo: &Topology, key: &'static str, node: NodeId) -> Result<NodeId, WorkloadError> {
    if (node as usize) < topo.node_count() && !topo.is_switch(node) {
        Ok(node)
    } else {
        Err(key_error(key, node, "a host of the topology"))
    }
}

fn checked_size(size: u64) -> Result<u64, WorkloadError> {
    if size == 0 {
        return Err(key_error("size", 0, "bytes, 1 or more"));
    }
    Ok(size)
}

/// Who sends in a fan-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Senders {
    /// This many hosts, drawn without repetition from the racks other than the receiver's
    /// (the many-to-one burst of the papers' incast).
    Drawn(usize),
    /// These hosts (any rack but not the receiver; DSH's Fig. 13 fans in from the
    /// receiver's own switch).
    Given(Vec<NodeId>),
}

/// Senders each sending `size` bytes to `receiver`, starting within `jitter` after
/// `start` (uniform, drawn from `seed` after the senders; no jitter draws nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct FanIn {
    pub receiver: NodeId,
    pub senders: Senders,
    pub size: u64,
    pub start: Picos,
    pub jitter: Picos,
    pub seed: u64,
    pub template: FlowTemplate,
}

impl FanIn {
    /// The flows, sorted by sender.
    pub fn generate(&self, topo: &Topology) -> Result<Vec<Flow>, WorkloadError> {
        let receiver = checked_host(topo, "receiver", self.receiver)?;
        let size = checked_size(self.size)?;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut senders = match &self.senders {
            Senders::Drawn(n) => draw_senders(topo, receiver, *n, &mut rng)?,
            Senders::Given(hosts) => {
                for (i, &h) in hosts.iter().enumerate() {
                    checked_host(topo, "from", h)?;
                    if h == receiver {
                        return Err(key_error("from", h, "hosts other than the receiver"));
                    }
                    if hosts[..i].contains(&h) {
                        return Err(key_error("from", h, "distinct hosts (one flow each)"));
                    }
                }
                if hosts.is_empty() {
                    return Err(key_error("from", "[]", "one host or more"));
                }
                hosts.clone()
            }
        };
        senders.sort_unstable();
        senders.dedup();
        Ok(senders
            .into_iter()
            .map(|src| {
                let late = match self.jitter.0 {
                    0 => 0,
                    j => below_u64(&mut rng, j),
                };
                let start = Picos(self.start.0 + late);
                self.template.flow(src, receiver, size, start)
            })
            .collect())
    }
}

/// `n` hosts, drawn without repetition from the racks other than `receiver`'s.
fn draw_senders(
    topo: &Topology,
    receiver: NodeId,
    n: usize,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<NodeId>, WorkloadError> {
    let rack = topo.tor_of(receiver);
    let mut candidates: Vec<NodeId> = topo.hosts().filter(|&h| topo.tor_of(h) != rack).collect();
    if n == 0 || n > candidates.len() {
        return Err(key_error(
            "senders",
            n,
            format!(
                "1..={} (the hosts outside receiver {receiver}'s rack)",
                candidates.len()
            ),
        ));
    }
    // A partial Fisher-Yates shuffle: the first `n` places.
    for i in 0..n {
        let j = i + below(rng, candidates.len() - i);
        candidates.swap(i, j);
    }
    candidates.truncate(n);
    Ok(candidates)
}

/// Every host sends `size` bytes to one other host and receives from one: a random cyclic
/// permutation of the hosts (Sattolo's algorithm, so no host sends to itself).
pub fn permutation(
    topo: &Topology,
    size: u64,
    start: Picos,
    seed: u64,
    template: FlowTemplate,
) -> Result<Vec<Flow>, WorkloadError> {
    let size = checked_size(size)?;
    let hosts: Vec<NodeId> = topo.hosts().collect();
    if hosts.len() < 2 {
        return Err(key_error("hosts", hosts.len(), "2 or more in the topology"));
    }
    let mut next: Vec<usize> = (0..hosts.len()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in (1..next.len()).rev() {
        next.swap(i, below(&mut rng, i));
    }
    Ok(hosts
        .iter()
        .zip(&next)
        .map(|(&src, &to)| template.flow(src, hosts[to], size, start))
        .collect())
}

/// Every host sends `size` bytes to every other host at `start`.
pub fn all_to_all(
    topo: &Topology,
    size: u64,
    start: Picos,
    template: FlowTemplate,
) -> Result<Vec<Flow>, WorkloadError> {
    let size = checked_size(size)?;
    let hosts: Vec<NodeId> = topo.hosts().collect();
    let pairs = hosts.len() * hosts.len().saturating_sub(1);
    if pairs > MAX_FLOWS as usize {
        return Err(key_error(
            "hosts",
            hosts.len(),
            format!("at most {MAX_FLOWS} flows, one per ordered pair"),
        ));
    }
    Ok(hosts
        .iter()
        .flat_map(|&src| {
            hosts
                .iter()
                .filter(move |&&dst| dst != src)
                .map(move |&dst| (src, dst))
        })
        .map(|(src, dst)| template.flow(src, dst, size, start))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdf::Builtin;
    use crate::flows::{to_ns3, FlowFile};
    use crate::generate::Clos;
    use std::collections::HashSet;

    fn web_search(load: f64, base: LoadBase, seed: u64) -> Poisson {
        Poisson {
            cdf: Builtin::WebSearch.cdf(),
            load,
            base,
            start: Picos::micros(100_000),
            duration: Picos::micros(200_000),
            seed,
            template: FlowTemplate::default(),
            from: Vec::new(),
            to: Vec::new(),
            pgs: Vec::new(),
        }
    }

    /// The bits offered per second over the ToRs' uplink capacity, in ns3-datacenter's
    /// 256-server Clos (ToRs 256-263).
    fn offered_over_uplinks(topo: &Topology, flows: &[Flow], duration: Picos) -> f64 {
        let uplinks: u64 = topo
            .links()
            .iter()
            .filter(|l| (256..264).contains(&l.src) && topo.is_switch(l.dst))
            .map(|l| l.rate.0)
            .sum();
        assert_eq!(uplinks, 16 * 100_000_000_000);
        let bits: u64 = flows.iter().map(|f| 8 * f.size).sum();
        bits as f64 / duration.as_secs_f64() / uplinks as f64
    }

    #[test]
    fn poisson_offers_the_load_on_the_tor_uplinks() {
        // ns3-datacenter's 256-server Clos: 8 ToRs with 2 x 100 Gb/s uplinks each, 32 servers
        // at 25 Gb/s each (4:1 oversubscribed).
        let topo = Clos::ns3_datacenter_256().build().unwrap();
        let gen = web_search(0.5, LoadBase::TorUplinks, 1);
        let flows = gen.generate(&topo).unwrap();
        // About 0.5 * 1600 Gb/s * 0.2 s / (8 * 1.71 MB) = 11 688 flows.
        assert!((11_000..12_400).contains(&flows.len()), "{}", flows.len());
        let load = offered_over_uplinks(&topo, &flows, gen.duration);
        assert!((load - 0.5).abs() < 0.03, "offered {load}");
        // The same measure tells the definitions apart: HPCC's, on the 25 Gb/s host links,
        // offers four times as much at the same load.
        let hpcc = web_search(0.5, LoadBase::HostLink, 1);
        let load = offered_over_uplinks(&topo, &hpcc.generate(&topo).unwrap(), hpcc.duration);
        assert!((load - 2.0).abs() < 0.12, "offered {load}");
    }

    /// The gaps between a host's flow starts are exponential with mean `1 / rate`: their
    /// mean within 3 % and their coefficient of variation within 0.05 of 1.
    fn check_exponential_gaps(starts: &[Picos], rate: f64) -> Result<(), String> {
        let gaps: Vec<f64> = starts
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) as f64 * 1e-12)
            .collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let variance = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        let cv = variance.sqrt() / mean;
        if (mean * rate - 1.0).abs() > 0.03 || (cv - 1.0).abs() > 0.05 {
            return Err(format!(
                "{} gaps: mean {mean} s (1/rate {}), CV {cv}",
                gaps.len(),
                1.0 / rate
            ));
        }
        Ok(())
    }

    #[test]
    fn poisson_gaps_are_exponential() {
        let star = Topology::parse("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n").unwrap();
        let gen = Poisson {
            cdf: Builtin::FbHadoop.cdf(),
            ..web_search(0.5, LoadBase::HostLink, 5)
        };
        // 0.5 * 100 Gb/s / (8 * 120 420.75 B): 51 901 flows/s, about 10 380 a host in 0.2 s.
        let rate = 0.5 * 100e9 / (8.0 * gen.cdf.mean());
        let flows = gen.generate(&star).unwrap();
        let starts: Vec<Picos> = flows
            .iter()
            .filter(|f| f.src == 0)
            .map(|f| f.start)
            .collect();
        assert_eq!(check_exponential_gaps(&starts, rate), Ok(()));
        // The companion: arrivals evenly spaced at the same rate are not Poisson.
        let even: Vec<Picos> = (0..10_000)
            .map(|i| Picos((i as f64 / rate * 1e12) as u64))
            .collect();
        assert!(check_exponential_gaps(&even, rate).is_err());
    }

    #[test]
    fn poisson_flows_are_sorted_in_the_window_and_deterministic() {
        let topo = Clos::l2bm().build().unwrap();
        let gen = web_search(0.3, LoadBase::TorUplinks, 9);
        let flows = gen.generate(&topo).unwrap();
        assert_eq!(flows, gen.generate(&topo).unwrap());
        assert_ne!(
            flows,
            web_search(0.3, LoadBase::TorUplinks, 10)
                .generate(&topo)
                .unwrap()
        );
        assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
        let end = gen.start.0 + gen.duration.0;
        for flow in &flows {
            assert!(flow.start.0 > gen.start.0 && flow.start.0 < end && flow.start.0 % 1_000 == 0);
            assert!(flow.src != flow.dst && !topo.is_switch(flow.dst) && flow.size > 0);
            assert_eq!((flow.pg, flow.dport), (3, 100));
        }
        // They make a valid flow file.
        let file = FlowFile::parse(&to_ns3(&flows), &topo).unwrap();
        assert_eq!(file.flows, flows);
        let sources: HashSet<NodeId> = flows.iter().map(|f| f.src).collect();
        let destinations: HashSet<NodeId> = flows.iter().map(|f| f.dst).collect();
        assert_eq!((sources.len(), destinations.len()), (128, 128));
    }

    #[test]
    fn poisson_keys_out_of_range_are_named() {
        let topo = Clos::l2bm().build().unwrap();
        for load in [0.0, 1.5, f64::NAN] {
            let err = web_search(load, LoadBase::TorUplinks, 1)
                .generate(&topo)
                .unwrap_err();
            assert_eq!((err.key, err.allowed.as_str()), ("load", "0 < load <= 1"));
        }
        let mut long = web_search(1.0, LoadBase::HostLink, 1);
        long.duration = Picos::micros(1_000_000_000);
        assert_eq!(long.generate(&topo).unwrap_err().key, "duration");
        let star = Topology::parse("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n").unwrap();
        let err = web_search(0.5, LoadBase::TorUplinks, 1)
            .generate(&star)
            .unwrap_err();
        assert_eq!(err.to_string(), "base: tor-uplinks; allowed: host-link (switch 2, host 0's ToR, has no uplink that is up)");
        assert!(web_search(0.5, LoadBase::HostLink, 1)
            .generate(&star)
            .is_ok());
    }

    #[test]
    fn fan_in_draws_distinct_senders_from_other_racks() {
        let topo = Clos::l2bm().build().unwrap();
        let burst = |receiver, n| FanIn {
            receiver,
            senders: Senders::Drawn(n),
            size: 64_000,
            start: Picos(0),
            jitter: Picos(0),
            seed: 4,
            template: FlowTemplate::default(),
        };
        let flows = burst(5, 15).generate(&topo).unwrap();
        assert_eq!(flows.len(), 15);
        let senders: HashSet<NodeId> = flows.iter().map(|f| f.src).collect();
        assert_eq!(senders.len(), 15);
        assert!(flows
            .iter()
            .all(|f| f.dst == 5 && topo.tor_of(f.src) != topo.tor_of(5) && f.size == 64_000));
        assert_eq!(flows, burst(5, 15).generate(&topo).unwrap());
        let err = burst(5, 97).generate(&topo).unwrap_err();
        assert_eq!(
            err.to_string(),
            "senders: 97; allowed: 1..=96 (the hosts outside receiver 5's rack)"
        );
        let err = burst(128, 1).generate(&topo).unwrap_err();
        assert_eq!(err.key, "receiver");
    }

    #[test]
    fn fan_in_from_given_senders_starts_them_within_the_jitter() {
        let topo = Clos::l2bm().build().unwrap();
        let burst = FanIn {
            receiver: 5,
            senders: Senders::Given(vec![9, 1, 4]),
            size: 1_000,
            start: Picos::micros(10),
            jitter: Picos(1_000_000),
            seed: 1,
            template: FlowTemplate::default(),
        };
        let flows = burst.generate(&topo).unwrap();
        let srcs: Vec<NodeId> = flows.iter().map(|f| f.src).collect();
        // Given senders may share the receiver's rack (1, 4 do), in id order.
        assert_eq!(srcs, [1, 4, 9]);
        let from = Picos::micros(10).0..Picos::micros(11).0;
        assert!(flows.iter().all(|f| from.contains(&f.start.0)));
        // The jitter is drawn: the starts differ (the companion: no jitter, one start).
        assert!(flows.windows(2).any(|w| w[0].start != w[1].start));
        let together = FanIn {
            jitter: Picos(0),
            ..burst.clone()
        };
        let flows = together.generate(&topo).unwrap();
        assert!(flows.iter().all(|f| f.start == Picos::micros(10)));
        let bad = FanIn {
            senders: Senders::Given(vec![5]),
            ..burst
        };
        assert_eq!(bad.generate(&topo).unwrap_err().key, "from");
        // A host named twice would be one flow, not two: refused.
        let twice = FanIn {
            senders: Senders::Given(vec![9, 1, 9]),
            ..burst
        };
        let e = twice.generate(&topo).unwrap_err();
        assert_eq!((e.key, e.value.as_str()), ("from", "9"));
    }

    /// DSH section V-B's network: 16 leaves, 16 spines, 16 hosts a leaf, 100G, 2 us.
    fn dsh_leaf_spine() -> Topology {
        crate::generate::LeafSpine {
            leaves: 16,
            spines: 16,
            hosts_per_leaf: 16,
            host_link: crate::generate::LinkSpec::new(100, 2),
            fabric_link: crate::generate::LinkSpec::new(100, 2),
        }
        .build()
        .unwrap()
    }

    fn bursts(load: f64, seed: u64) -> FanInBursts {
        FanInBursts {
            senders: 16,
            size: 64_000,
            load,
            base: LoadBase::TorUplinks,
            start: Picos(0),
            duration: Picos::micros(20_000),
            seed,
            template: FlowTemplate::default(),
        }
    }

    /// Each burst's flows: `n` distinct senders outside the receiver's rack, one start,
    /// one receiver, `size` each. Returns the burst starts.
    fn check_bursts(
        topo: &Topology,
        flows: &[Flow],
        n: usize,
        size: u64,
    ) -> Result<Vec<Picos>, String> {
        if !flows.len().is_multiple_of(n) {
            return Err(format!("{} flows, not bursts of {n}", flows.len()));
        }
        let mut starts = Vec::new();
        for burst in flows.chunks(n) {
            let (first, rx) = (burst[0].start, burst[0].dst);
            let senders: HashSet<NodeId> = burst.iter().map(|f| f.src).collect();
            let alike = burst.iter().all(|f| {
                f.start == first
                    && f.dst == rx
                    && f.size == size
                    && topo.tor_of(f.src) != topo.tor_of(rx)
            });
            if !alike || senders.len() != n {
                return Err(format!("burst at {first:?} to {rx}: {burst:?}"));
            }
            starts.push(first);
        }
        Ok(starts)
    }

    #[test]
    fn fan_in_bursts_arrive_as_poisson_at_the_load() {
        let topo = dsh_leaf_spine();
        let gen = bursts(0.1, 3);
        let flows = gen.generate(&topo).unwrap();
        let starts = check_bursts(&topo, &flows, 16, 64_000).unwrap();
        // Load 0.1 of 256 x 100 Gb/s (each rack's 16 uplinks shared by its 16 hosts) in
        // bursts of 16 x 64 KB: 312 500 bursts/s, about 6 250 in 20 ms.
        let rate = 0.1 * 256.0 * 100e9 / (8.0 * 16.0 * 64_000.0);
        assert!((gen.rate(&topo).unwrap() - rate).abs() < 1e-6 * rate);
        assert_eq!(check_exponential_gaps(&starts, rate), Ok(()));
        let bits: u64 = flows.iter().map(|f| 8 * f.size).sum();
        let offered = bits as f64 / gen.duration.as_secs_f64() / (256.0 * 100e9);
        assert!((offered - 0.1).abs() < 0.003, "offered {offered}");
        // Receivers spread over the hosts.
        let receivers: HashSet<NodeId> = flows.iter().map(|f| f.dst).collect();
        assert_eq!(receivers.len(), 256);
        assert_eq!(flows, gen.generate(&topo).unwrap());
        assert_ne!(flows, bursts(0.1, 4).generate(&topo).unwrap());
    }

    #[test]
    fn the_burst_check_catches_a_sender_in_the_receivers_rack() {
        let topo = dsh_leaf_spine();
        let mut flows = bursts(0.05, 1).generate(&topo).unwrap();
        assert!(check_bursts(&topo, &flows, 16, 64_000).is_ok());
        // Host 16k+j shares host 16k's rack.
        let rx = flows[0].dst;
        flows[0].src = if rx.is_multiple_of(16) {
            rx + 1
        } else {
            rx - 1
        };
        assert!(check_bursts(&topo, &flows, 16, 64_000).is_err());
        let mut flows = bursts(0.05, 1).generate(&topo).unwrap();
        flows[1].start = Picos(flows[1].start.0 + 1_000);
        assert!(check_bursts(&topo, &flows, 16, 64_000).is_err());
    }

    #[test]
    fn fan_in_burst_keys_out_of_range_are_named() {
        let topo = dsh_leaf_spine();
        let err = bursts(1.5, 1).generate(&topo).unwrap_err();
        assert_eq!(err.to_string(), "load: 1.5; allowed: 0 < load <= 1");
        let err = FanInBursts {
            senders: 241,
            ..bursts(0.5, 1)
        }
        .generate(&topo)
        .unwrap_err();
        assert_eq!(err.key, "senders");
        assert!(err.allowed.starts_with("1..=240"), "{err}");
        let err = FanInBursts {
            senders: 0,
            ..bursts(0.5, 1)
        }
        .generate(&topo)
        .unwrap_err();
        assert_eq!((err.key, err.allowed.as_str()), ("senders", "1 or more"));
        let err = FanInBursts {
            size: 0,
            ..bursts(0.5, 1)
        }
        .generate(&topo)
        .unwrap_err();
        assert_eq!(err.key, "size");
        let err = FanInBursts {
            duration: Picos::micros(100_000_000),
            ..bursts(1.0, 1)
        }
        .generate(&topo)
        .unwrap_err();
        assert_eq!(err.key, "duration");
    }

    #[test]
    fn poisson_spreads_flows_over_the_classes_at_random() {
        let topo = Clos::l2bm().build().unwrap();
        let classes = vec![0, 1, 2, 4, 5, 6];
        let gen = Poisson {
            pgs: classes.clone(),
            ..web_search(0.5, LoadBase::HostLink, 2)
        };
        let flows = gen.generate(&topo).unwrap();
        let mut counts = [0usize; 8];
        for f in &flows {
            counts[usize::from(f.pg)] += 1;
        }
        // Each of six classes within 15 % of a sixth (thousands of flows).
        let even = flows.len() as f64 / 6.0;
        for pg in 0..8u8 {
            let n = counts[usize::from(pg)] as f64;
            if classes.contains(&pg) {
                assert!((n - even).abs() < 0.15 * even, "class {pg}: {n} of {even}");
            } else {
                assert_eq!(n, 0.0, "class {pg}");
            }
        }
        // The companion: one class draws nothing, so the flows are the plain generator's
        // on that class.
        let one = Poisson {
            pgs: vec![5],
            ..web_search(0.5, LoadBase::HostLink, 2)
        };
        let plain = web_search(0.5, LoadBase::HostLink, 2)
            .generate(&topo)
            .unwrap();
        let on_five: Vec<Flow> = plain.iter().map(|f| Flow { pg: 5, ..*f }).collect();
        assert_eq!(one.generate(&topo).unwrap(), on_five);
        for bad in [vec![8], vec![1, 1]] {
            let err = Poisson {
                pgs: bad,
                ..web_search(0.5, LoadBase::HostLink, 2)
            }
            .generate(&topo)
            .unwrap_err();
            assert_eq!(
                (err.key, err.allowed.as_str()),
                ("pgs", "distinct classes 0..=7")
            );
        }
    }

    #[test]
    fn permutation_sends_once_and_receives_once_per_host() {
        let topo = Clos::l2bm().build().unwrap();
        let flows = permutation(&topo, 1_000, Picos(0), 2, FlowTemplate::default()).unwrap();
        assert_eq!(flows.len(), 128);
        let receivers: HashSet<NodeId> = flows.iter().map(|f| f.dst).collect();
        assert_eq!(receivers.len(), 128);
        assert!(flows
            .iter()
            .enumerate()
            .all(|(i, f)| f.src == i as NodeId && f.dst != f.src));
        assert_ne!(
            flows,
            permutation(&topo, 1_000, Picos(0), 3, FlowTemplate::default()).unwrap()
        );
    }

    #[test]
    fn all_to_all_covers_every_ordered_pair() {
        let topo = Clos::l2bm().build().unwrap();
        let flows = all_to_all(&topo, 1, Picos(0), FlowTemplate::default()).unwrap();
        let pairs: HashSet<(NodeId, NodeId)> = flows.iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!((flows.len(), pairs.len()), (128 * 127, 128 * 127));
        assert!(pairs.iter().all(|(a, b)| a != b));
        assert_eq!(
            all_to_all(&topo, 0, Picos(0), FlowTemplate::default())
                .unwrap_err()
                .key,
            "size"
        );
    }
}
