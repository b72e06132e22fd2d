//! The headroom check of a network scenario with `run.expect_lossless` (docs/fabric.md,
//! "Lossless packets outside the headroom"): for every switch, ingress port and lossless
//! class, the packets that can arrive there against what the port's `eta` was sized for.
//!
//! A switch sizes `eta` for lossless packets of `headroom_min_packet_bytes..=mtu_bytes`
//! (`hw_model::config::eta_cells_for`: the packets whose first bytes arrive within Eq. 1's
//! `W` wire bytes occupy at most `floor(W * rho) + c_max` cells, `rho` the most cells per
//! wire byte in the range). The fabric also carries packets outside the range on data
//! classes: ACKs and CNPs (64 B, on `fabric.feedback_pg`, by default the data's class) and
//! a message's short last packet. Each packet denser than `rho` can add its excess
//! `cells - rho * wire` to a window, so the check counts them per ingress queue over the
//! whole run, routed as the network routes them:
//!
//! - ACKs: one per data packet received, retransmissions included: no bound;
//! - CNPs: per flow at most one per data packet and one per `N` (`transport::Feedback`);
//! - ECM frames (64 B, on `ecm_pg`): at most one per packet of a flow crossing a switch
//!   with congestion points on its class, into that switch by the flow's ingress port and
//!   into each earlier switch of its path;
//! - a message's last packet: one per flow; its full packets: one per MTU.
//!
//! With `n_i` dense packets of `c_i` cells and `w_i` wire bytes in all, the proof's bound
//! becomes `floor((W - sum n_i w_i) * rho) + sum n_i c_i + c_max` when they all fit in `W`
//! (adding a denser packet never lowers it, so all of them is the worst case), and
//! `floor(W * rho_d) + c_max` otherwise, `rho_d` the densest of them. The queue is refused
//! when the bound is above `eta`. On tomahawk one short last packet of any size fits (64 B:
//! 307 cells, `eta` itself); two 64 B ones do not (308); a stream of ACKs does not (684).

use crate::flows::{self, Flow};
use crate::network::switch_configs;
use crate::routing::{Ecmp, FiveTuple, Hop, Routes};
use crate::topology::{NodeId, Topology};
use crate::transport::{packet_len, Feedback, Transports};
use hw_model::config::eta_cells_for;
use hw_model::{Derived, EtaSizing, HeadroomMode, PacketCost, SwitchConfig};
use scenario::{eta_from_min_packet, FabricTransport, ScenarioError, MIN_PACKET_BYTES};
use std::collections::BTreeMap;

/// What a packet denser than its port's headroom range is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Feedback(Feedback),
    /// A congestion point's ECM frames about one flow (`fabric.ecm_pg`): at most one per
    /// packet of the flow it samples.
    Ecm,
    /// A message's last packet (its only one if it is shorter than the MTU).
    Last,
    /// A message's full packets.
    Full,
}

/// The dense packets of one kind into one lossless ingress queue.
#[derive(Debug, Clone, Copy)]
struct Dense {
    flows: u64,
    /// Saturating: ACKs have no bound.
    packets: u64,
    densest: PacketCost,
    sizes: (u32, u32),
}

/// The dense packets into one lossless ingress queue, by kind, and their sums.
#[derive(Debug, Clone)]
struct Queue {
    kinds: BTreeMap<Kind, Dense>,
    wire: u64,
    cells: u64,
    densest: PacketCost,
}

impl Queue {
    fn new(first: PacketCost) -> Queue {
        Queue {
            kinds: BTreeMap::new(),
            wire: 0,
            cells: 0,
            densest: first,
        }
    }

    fn add(&mut self, kind: Kind, cost: PacketCost, packets: u64) {
        self.wire = self
            .wire
            .saturating_add(packets.saturating_mul(cost.wire.into()));
        self.cells = self
            .cells
            .saturating_add(packets.saturating_mul(cost.cells.into()));
        if cost.denser_than(&self.densest) {
            self.densest = cost;
        }
        let d = self.kinds.entry(kind).or_insert(Dense {
            flows: 0,
            packets: 0,
            densest: cost,
            sizes: (cost.len, cost.len),
        });
        d.flows += 1;
        d.packets = d.packets.saturating_add(packets);
        if cost.denser_than(&d.densest) {
            d.densest = cost;
        }
        d.sizes = (d.sizes.0.min(cost.len), d.sizes.1.max(cost.len));
    }

    /// The most cells the packets whose first bytes arrive within `W` can occupy (the
    /// module's bound).
    fn bound(&self, sized: &EtaSizing) -> u64 {
        let w = sized.wire_bytes;
        match w.checked_sub(self.wire) {
            Some(rest) => {
                eta_cells_for(rest, sized.densest, sized.largest.cells).saturating_add(self.cells)
            }
            None => eta_cells_for(w, self.densest, sized.largest.cells),
        }
    }
}

/// Every lossless ingress queue of the network that the packets routed into it can
/// overflow, by switch, port and class: each an error naming the packets and the fixes.
/// Only flows starting before `end_cycle` send; it also bounds the CNPs. Also the number
/// of ECM flows the network will hold (`Network`: one per data or feedback flow and switch
/// with congestion points on its path), for the memory estimate. `Err`: the topology's own
/// error, which the network's build names as well.
pub(crate) fn overflows(
    topo: &Topology,
    flows: &[Flow],
    transports: &Transports,
    config: impl Fn(NodeId) -> SwitchConfig,
    ecmp: &Ecmp,
    end_cycle: u64,
) -> Result<(Vec<ScenarioError>, usize), ScenarioError> {
    let fabric = |e: String| ScenarioError::new("fabric", e);
    let derived = switch_configs(topo, config).map_err(|e| fabric(e.to_string()))?;
    let routes = Routes::compute(topo).map_err(|e| fabric(e.to_string()))?;
    let Some(clock_hz) = derived.first().map(|d| d.clock_hz) else {
        return Ok((Vec::new(), 0));
    };
    let cps = derived.iter().any(|d| !d.cfg.ecm.priorities.is_empty());
    let mut ecm_flows = 0;
    let end_ps = u128::from(end_cycle) * 1_000_000_000_000 / u128::from(clock_hz);
    let mut index = vec![usize::MAX; topo.node_count()];
    for (i, &s) in topo.switches().iter().enumerate() {
        index[s as usize] = i;
    }
    let mut queues: BTreeMap<(usize, usize, u8), Queue> = BTreeMap::new();
    // A flow without a path is left to the network's build, which names it.
    let path = |tuple: &FiveTuple| routes.path(topo, ecmp, tuple).filter(|p| p.len() > 1);
    // Packets `sent` on class `pg` into each (switch, ingress port) of `into`.
    let mut charge = |into: &[(usize, usize)], pg: u8, sent: &[(Kind, u32, u64)]| {
        for &(s, port) in into {
            let d = &derived[s];
            if !d.is_lossless(pg) {
                continue;
            }
            for &(kind, len, packets) in sent {
                let cost = d.packet_cost(len);
                if cost.denser_than(&d.eta_sizing[port].densest) {
                    queues
                        .entry((s, port, pg))
                        .or_insert_with(|| Queue::new(cost))
                        .add(kind, cost, packets);
                }
            }
        }
    };
    // The switches of `path`, from the source's, each with the port the path comes in on.
    let ingress = |path: &[Hop]| -> Vec<(usize, usize)> {
        let links = Routes::links_of(topo, path);
        let port = |hop: &Hop, link| topo.ports(hop.node).iter().position(|&l| l == link);
        let into = links.iter().zip(&path[1..]);
        into.map(|(&l, hop)| {
            (
                index[hop.node as usize],
                port(hop, l).expect("a path's links are ports of its nodes"),
            )
        })
        .collect()
    };
    // A switch with congestion points on class `pg` answers a packet of a flow crossing it
    // with at most one ECM frame, which enters its buffer by the port the flow comes in on
    // and goes back up the flow's path (`Network`'s ECM flows): into that port, then into
    // each earlier switch by the port the flow leaves it by.
    let ecm_paths = |path: &[Hop], into: &[(usize, usize)], pg: u8| -> Vec<Vec<(usize, usize)>> {
        let cps = into.iter().enumerate();
        let cps = cps.filter(|(_, &(s, _))| derived[s].cfg.ecm.priorities.contains(&pg));
        cps.map(|(c, &(s, port))| {
            let up = (0..c).rev().map(|k| (into[k].0, path[k + 1].port));
            std::iter::once((s, port)).chain(up).collect()
        })
        .collect()
    };
    let ecm = |packets| [(Kind::Ecm, MIN_PACKET_BYTES, packets)];
    let is_cp = |&(s, _): &(usize, usize)| !derived[s].cfg.ecm.priorities.is_empty();
    for (flow, tuple) in flows.iter().zip(flows::five_tuples(flows)) {
        let late = u128::from(flow.start.0) >= end_ps;
        if late && !cps {
            continue;
        }
        let Some(data) = path(&tuple) else {
            continue;
        };
        let into = ingress(&data);
        let closed = transports.by_pg[flow.pg as usize] != FabricTransport::OpenLoop;
        let back = closed.then(|| path(&tuple.reversed())).flatten();
        let back = back.map(|b| {
            let into = ingress(&b);
            (b, into)
        });
        let back_into = back.iter().flat_map(|b| &b.1);
        ecm_flows += into.iter().chain(back_into).filter(|h| is_cp(h)).count();
        if late {
            continue;
        }
        // Packets as the sender's switch cuts them (`Network::new`).
        let mtu = derived[index[data[1].node as usize]].cfg.mtu_bytes;
        let packets = flow.size.div_ceil(mtu.into());
        if packets == 0 {
            continue;
        }
        let last = packet_len(flow.size, packets - 1, mtu);
        let mut sent = vec![(Kind::Last, u32::from(last), 1)];
        if packets > 1 {
            sent.push((Kind::Full, mtu, packets - 1));
        }
        charge(&into, flow.pg, &sent);
        for back in ecm_paths(&data, &into, flow.pg) {
            charge(&back, transports.ecm_pg, &ecm(packets));
        }
        let t = &transports.by_pg[flow.pg as usize];
        let feedback = Feedback::of(t, packets, end_cycle, clock_hz);
        if let (Some((fb, n)), Some((back, into))) = (feedback, &back) {
            let pg = transports.feedback_pg.unwrap_or(flow.pg);
            charge(into, pg, &[(Kind::Feedback(fb), MIN_PACKET_BYTES, n)]);
            for up in ecm_paths(back, into, pg) {
                charge(&up, transports.ecm_pg, &ecm(n));
            }
        }
    }
    let over = queues.iter().filter_map(|(&(s, port, pg), q)| {
        let bound = q.bound(&derived[s].eta_sizing[port]);
        (bound > u64::from(derived[s].eta_sizing[port].cells))
            .then(|| refusal(topo, &derived, (s, port, pg), q, bound))
    });
    Ok((over.collect(), ecm_flows))
}

/// The error of queue `(s, port, pg)`, whose packets `q` can take `bound` cells.
fn refusal(
    topo: &Topology,
    derived: &[Derived],
    (s, port, pg): (usize, usize, u8),
    q: &Queue,
    bound: u64,
) -> ScenarioError {
    let d = &derived[s];
    let sized = d.eta_sizing[port];
    let node = topo.switches()[s];
    let kinds: Vec<String> = q.kinds.iter().map(|(k, v)| describe(*k, v)).collect();
    let mut fixes = Vec::new();
    // Feedback and ECM frames have a class key of their own: a lossy class takes them out.
    let keys = [
        (
            "fabric.feedback_pg",
            q.kinds.keys().any(|k| matches!(k, Kind::Feedback(_))),
        ),
        ("fabric.ecm_pg", q.kinds.contains_key(&Kind::Ecm)),
    ];
    let lossy = (0..8u8)
        .rev()
        .find(|&c| derived.iter().all(|d| !d.is_lossless(c)));
    for (key, _) in keys.iter().filter(|k| k.1) {
        fixes.push(match lossy {
            Some(c) => format!("{key} = {c} (a lossy class)"),
            None => format!(
                "{key} = a lossy class (none is: leave one out of switch.lossless_priorities)"
            ),
        });
    }
    let smallest = q
        .kinds
        .values()
        .map(|v| v.sizes.0)
        .min()
        .unwrap_or(MIN_PACKET_BYTES);
    let eta = eta_from_min_packet(d, port, smallest)
        .map_or(String::new(), |e| format!(" (eta {e} cells)"));
    fixes.push(match d.cfg.headroom {
        HeadroomMode::Cells => format!("switch.headroom_min_packet_bytes = {smallest}{eta}"),
        HeadroomMode::PaperBytes => format!(
            "switch.headroom = \"cells\" with switch.headroom_min_packet_bytes = {smallest}{eta}"
        ),
    });
    let field = keys
        .iter()
        .find(|k| k.1)
        .map_or("switch.headroom_min_packet_bytes", |k| k.0);
    ScenarioError::new(
        field,
        format!(
            "switch {node}, port {port} (from node {}), lossless class {pg}: {}, denser than the {} B packets eta is sized for ({}; switch.headroom_min_packet_bytes = {}): the packets arriving within Eq. 1's {} B can take {bound} cells, eta is {} cells; allowed: {}",
            topo.peer(node, port),
            kinds.join(", "),
            sized.densest.len,
            sized.densest,
            d.cfg.headroom_min_packet_bytes.unwrap_or(d.cfg.mtu_bytes),
            sized.wire_bytes,
            sized.cells,
            fixes.join(", or ")
        ),
    )
}

/// `ACKs of 12 flows (64 B: 1 cell per 84 wire bytes, one per data packet)`.
fn describe(kind: Kind, v: &Dense) -> String {
    let (lo, hi) = v.sizes;
    let sizes = match lo == hi {
        true => format!("{lo} B: {}", v.densest),
        false => format!("{lo}..={hi} B, densest {} B: {}", v.densest.len, v.densest),
    };
    let (what, count) = match kind {
        Kind::Feedback(Feedback::Acks) => ("ACKs", "one per data packet".to_string()),
        Kind::Feedback(Feedback::Cnps) => (
            "CNPs",
            format!("at most {} in the run: one per N per flow", v.packets),
        ),
        Kind::Ecm => ("ECM frames", "at most one per packet sampled".to_string()),
        Kind::Last => ("the last packets", "one per flow".to_string()),
        Kind::Full => ("the full packets", format!("{} in all", v.packets)),
    };
    let s = if v.flows == 1 { "" } else { "s" };
    format!("{what} of {} flow{s} ({sizes}, {count})", v.flows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Picos;

    /// Tomahawk's queue sizing (1500 B packets: eta 307 cells of Eq. 1's 56840 B) and a
    /// queue of `packets` dense packets of `len` bytes.
    fn tomahawk_bound(len: u32, packets: u64) -> (u64, u32) {
        let d = SwitchConfig::tomahawk().build().unwrap();
        let mut q = Queue::new(d.packet_cost(len));
        q.add(Kind::Last, d.packet_cost(len), packets);
        (q.bound(&d.eta_sizing[0]), d.eta_sizing[0].cells)
    }

    #[test]
    fn one_short_last_packet_fits_tomahawks_eta_two_and_a_stream_of_acks_do_not() {
        // floor((56840 - 84) x 8 / 1520) + 1 + 8 = 298 + 9.
        assert_eq!(tomahawk_bound(64, 1), (307, 307));
        // One packet of any size fits (the largest excess, 209 B: 2 cells per 229 wire
        // bytes, is 0.795 cells, and W rho leaves 0.842 to the next cell).
        for len in 64..=1500 {
            let (bound, eta) = tomahawk_bound(len, 1);
            assert!(bound <= u64::from(eta), "{len} B: {bound}");
        }
        // floor((56840 - 168) x 8 / 1520) + 2 + 8 = 298 + 10.
        assert_eq!(tomahawk_bound(64, 2), (308, 307));
        // The densest of them over all of W: floor(56840 / 84) + 8, the single switch's
        // figure for 64 B packets.
        assert_eq!(tomahawk_bound(64, u64::MAX), (684, 307));
    }

    /// The transport of class 3 set by `table` (`dcqcn = { n_us = 50 }`).
    fn transport(table: &str) -> FabricTransport {
        let text = format!(
            "name = \"t\"\n[switch]\nprofile = \"small\"\n[run]\ncycles = 1000\n\
             [fabric.leaf_spine]\nleaves = 2\nspines = 1\nhosts_per_leaf = 1\nhost_link_gbps = 25\n\
             host_link_delay_ns = 1000\nfabric_link_gbps = 25\nfabric_link_delay_ns = 1000\n\
             [[fabric.workload]]\nkind = \"permutation\"\nsize_bytes = 1000\n\
             [[fabric.transport]]\npg = 3\n{table}\n"
        );
        let s = scenario::Scenario::parse(&text, "t").unwrap();
        s.fabric.unwrap().transports().unwrap()[3]
    }

    #[test]
    fn cnps_are_bounded_per_flow_by_n_and_by_the_data_acks_are_not() {
        let dcqcn = transport("dcqcn = { n_us = 50 }");
        let hz = 1_000_000_000;
        // 300 us: one at the start and one per 50 us after it.
        assert_eq!(
            Feedback::of(&dcqcn, 1000, 300_000, hz),
            Some((Feedback::Cnps, 7))
        );
        assert_eq!(
            Feedback::of(&dcqcn, 3, 300_000, hz),
            Some((Feedback::Cnps, 3))
        );
        let tcp = transport("tcp = {}");
        assert_eq!(
            Feedback::of(&tcp, 3, 300_000, hz),
            Some((Feedback::Acks, u64::MAX))
        );
        let open = FabricTransport::OpenLoop;
        assert_eq!(Feedback::of(&open, 3, 300_000, hz), None);
    }

    /// Hosts 0 and 1 under switch 3, host 2 under switch 4, every link 100G and 2 us; the
    /// open-loop flows `sizes` from hosts 0 and 1 to host 2 on lossless class 3.
    fn two_switches(sizes: &[u64]) -> Result<(), ScenarioError> {
        two_switches_with(sizes, &Transports::open_loop(), |_| {
            SwitchConfig::tomahawk()
        })
    }

    fn two_switches_with(
        sizes: &[u64],
        transports: &Transports,
        config: impl Fn(NodeId) -> SwitchConfig,
    ) -> Result<(), ScenarioError> {
        let topo = Topology::parse(
            "5 2 4\n3 4\n0 3 100Gbps 2us 0\n1 3 100Gbps 2us 0\n2 4 100Gbps 2us 0\n3 4 100Gbps 2us 0\n",
        )
        .unwrap();
        let flows: Vec<Flow> = sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| Flow {
                src: i as u32 % 2,
                dst: 2,
                pg: 3,
                dport: 100,
                size,
                start: Picos(0),
            })
            .collect();
        let ecmp = Ecmp { fabric_seed: 0 };
        let over = overflows(&topo, &flows, transports, config, &ecmp, 1000);
        over.unwrap().0.into_iter().next().map_or(Ok(()), Err)
    }

    #[test]
    fn the_check_refuses_two_short_last_packets_into_one_queue_not_one() {
        // 1500 + 64 B: a full packet and a 64 B last one.
        two_switches(&[1564, 3000]).unwrap();
        let e = two_switches(&[1564, 1564]).unwrap_err();
        assert_eq!(e.field, "switch.headroom_min_packet_bytes");
        for part in [
            "switch 4, port 1 (from node 3), lossless class 3: the last packets of 2 flows (64 B: 1 cell per 84 wire bytes, one per flow)",
            "can take 308 cells, eta is 307 cells; allowed: switch.headroom_min_packet_bytes = 64 (eta 684 cells)",
        ] {
            assert!(e.message.contains(part), "{part:?} missing from {e}");
        }
    }

    #[test]
    fn ecm_frames_on_a_lossless_class_are_counted_back_up_the_path() {
        // Ten MTU packets from host 0 cross congestion points on class 3 at switch 4: up to
        // ten 64 B frames into switch 4's port from switch 3, then into switch 3's port from
        // switch 4 (the first refused: 312 cells against 307).
        let cp_at_4 = |n: NodeId| {
            let mut c = SwitchConfig::tomahawk();
            if n == 4 {
                c.ecm.priorities = vec![3];
            }
            c
        };
        let lossless = Transports {
            ecm_pg: 3,
            ..Transports::open_loop()
        };
        let e = two_switches_with(&[15000], &lossless, cp_at_4).unwrap_err();
        assert_eq!(e.field, "fabric.ecm_pg");
        assert!(
            e.message.contains("can take 312 cells")
                && e.message.starts_with(
                    "switch 3, port 2 (from node 4), lossless class 3: ECM frames of 1 flow (64 B"
                ),
            "{e}"
        );
        // On a lossy class, or with no congestion point on the data's class, none count.
        let lossy = Transports {
            ecm_pg: 7,
            ..Transports::open_loop()
        };
        two_switches_with(&[15000], &lossy, cp_at_4).unwrap();
        two_switches_with(&[15000], &lossless, |_| SwitchConfig::tomahawk()).unwrap();
    }
}
