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
use scenario::{eta_from_min_packet, ScenarioError, MIN_PACKET_BYTES};
use std::collections::BTreeMap;

/// What a packet denser than its port's headroom range is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Feedback(Feedback),
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
/// Only flows starting before `end_cycle` send; it also bounds the CNPs. `Err`: the
/// topology's own error, which the network's build names as well.
pub(crate) fn overflows(
    topo: &Topology,
    flows: &[Flow],
    transports: &Transports,
    config: impl Fn(NodeId) -> SwitchConfig,
    ecmp: &Ecmp,
    end_cycle: u64,
) -> Result<Vec<ScenarioError>, ScenarioError> {
    let fabric = |e: String| ScenarioError::new("fabric", e);
    let derived = switch_configs(topo, config).map_err(|e| fabric(e.to_string()))?;
    let routes = Routes::compute(topo).map_err(|e| fabric(e.to_string()))?;
    let Some(clock_hz) = derived.first().map(|d| d.clock_hz) else {
        return Ok(Vec::new());
    };
    let end_ps = u128::from(end_cycle) * 1_000_000_000_000 / u128::from(clock_hz);
    let mut index = vec![usize::MAX; topo.node_count()];
    for (i, &s) in topo.switches().iter().enumerate() {
        index[s as usize] = i;
    }
    let mut queues: BTreeMap<(usize, usize, u8), Queue> = BTreeMap::new();
    // A flow without a path is left to the network's build, which names it.
    let path = |tuple: &FiveTuple| routes.path(topo, ecmp, tuple).filter(|p| p.len() > 1);
    let mut route = |pg: u8, path: &[Hop], sent: &[(Kind, u32, u64)]| {
        let links = Routes::links_of(topo, path);
        for (w, hop) in links.windows(2).zip(&path[1..]) {
            let s = index[hop.node as usize];
            let d = &derived[s];
            let port = topo.ports(hop.node).iter().position(|&l| l == w[0]);
            let port = port.expect("a path's links are ports of its nodes");
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
    for (flow, tuple) in flows.iter().zip(flows::five_tuples(flows)) {
        if u128::from(flow.start.0) >= end_ps {
            continue;
        }
        let Some(data) = path(&tuple) else {
            continue;
        };
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
        route(flow.pg, &data, &sent);
        let t = &transports.by_pg[flow.pg as usize];
        let feedback = Feedback::of(t, packets, end_cycle, clock_hz);
        if let (Some((fb, n)), Some(back)) = (feedback, path(&tuple.reversed())) {
            let pg = transports.feedback_pg.unwrap_or(flow.pg);
            route(pg, &back, &[(Kind::Feedback(fb), MIN_PACKET_BYTES, n)]);
        }
    }
    let over = queues.iter().filter_map(|(&(s, port, pg), q)| {
        let bound = q.bound(&derived[s].eta_sizing[port]);
        (bound > u64::from(derived[s].eta_sizing[port].cells))
            .then(|| refusal(topo, &derived, (s, port, pg), q, bound))
    });
    Ok(over.collect())
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
    let feedback = q.kinds.keys().any(|k| matches!(k, Kind::Feedback(_)));
    if feedback {
        let lossy = (0..8u8)
            .rev()
            .find(|&c| derived.iter().all(|d| !d.is_lossless(c)));
        fixes.push(match lossy {
            Some(c) => format!("fabric.feedback_pg = {c} (a lossy class)"),
            None => "fabric.feedback_pg = a lossy class (none is: leave one out of switch.lossless_priorities)".to_string(),
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
    let field = match feedback {
        true => "fabric.feedback_pg",
        false => "switch.headroom_min_packet_bytes",
    };
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
    use scenario::FabricTransport;

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
        let config = |_| SwitchConfig::tomahawk();
        let over = overflows(&topo, &flows, &Transports::open_loop(), config, &ecmp, 1000);
        over.unwrap().into_iter().next().map_or(Ok(()), Err)
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
}
