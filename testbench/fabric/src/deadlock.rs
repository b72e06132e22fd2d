//! PFC deadlock detection: a cycle of paused queues, each waiting for the next, with no
//! cell moving on any of its links for a configurable time.
//!
//! The wait-for graph, over (switch, egress port, class): a queue is *blocked* when it
//! holds cells, the ingress queue of the same class at the far end of its link is paused
//! (in QOFF, or its port in DSH's POFF: it is what keeps this egress paused), and no cell
//! has left the port for `hold_cycles`. A blocked queue waits for the blocked queues of
//! the same class at the next switch that the paused ingress queue there drains into: the
//! egress ports some flow of the class is routed to from that ingress port (the MMU does
//! not tell which of them hold the queue's cells now, so a route is enough). A cycle in
//! the graph is a deadlock. Its onset is the last cycle a cell left any port of the
//! cycle: the moment it froze.

use crate::switch::{PortEnd, Switch};
use crate::topology::NodeId;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;

/// When the detector looks and how long a cycle must stand still.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadlockOptions {
    /// Cycles without a cell leaving any egress port of the cycle.
    pub hold_cycles: u64,
    /// Cycles between two looks.
    pub check_every: u64,
}

impl Default for DeadlockOptions {
    /// 20 us held, looked for every microsecond (at 1 GHz): ten times a pause refresh.
    fn default() -> Self {
        Self {
            hold_cycles: 20_000,
            check_every: 1_000,
        }
    }
}

/// One hop of a deadlock cycle: the egress queue of `switch` on `port`, paused by the
/// ingress queue on `next_port` of `next_switch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeadlockHop {
    pub switch: NodeId,
    pub port: u8,
    pub next_switch: NodeId,
    pub next_port: u8,
    /// Cells in the egress queue when found.
    pub cells: u32,
}

/// A deadlock found: its class, the cycle's hops in order (the last pauses the first's
/// switch), when it froze and when it was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Deadlock {
    pub class: u8,
    pub onset_cycle: u64,
    pub detected_cycle: u64,
    pub hops: Vec<DeadlockHop>,
}

impl Deadlock {
    /// The switches of the cycle in order, the first repeated at the end.
    pub fn switches(&self) -> Vec<NodeId> {
        let mut s: Vec<NodeId> = self.hops.iter().map(|h| h.switch).collect();
        s.extend(self.hops.first().map(|h| h.switch));
        s
    }
}

impl fmt::Display for Deadlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "class {} deadlocked at cycle {} (found at {}): ",
            self.class, self.onset_cycle, self.detected_cycle
        )?;
        for h in &self.hops {
            write!(f, "{}:{} -> ", h.switch, h.port)?;
        }
        match self.hops.first() {
            Some(h) => write!(f, "{}", h.switch),
            None => Ok(()),
        }
    }
}

/// A queue of the graph: (switch index, egress port, class).
type Queue = (usize, usize, u8);

/// What the detector reads of a switch's structure, known to every partition whether it
/// runs the switch or not (an MPI rank builds only its own switches, `crate::ranks`): its
/// node, its ports' far ends, and the turns its routes take.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub node: NodeId,
    pub ends: Vec<PortEnd>,
    /// Per (ingress port, egress port) at `in * ports + out`, the classes of the flows
    /// routed from one to the other: which egress queues an ingress queue drains into.
    pub turns: Vec<u8>,
}

impl Shape {
    pub(crate) fn new(node: NodeId, ends: Vec<PortEnd>) -> Self {
        let n = ends.len();
        Self {
            node,
            ends,
            turns: vec![0; n * n],
        }
    }

    /// Whether flows of `class` are routed from ingress `from` to egress `to`.
    fn turns(&self, from: usize, to: usize, class: u8) -> bool {
        self.turns[from * self.ends.len() + to] & (1 << class) != 0
    }
}

/// Whether `s` holds an ingress queue paused (QOFF) or a port paused (POFF): without one
/// anywhere no queue is blocked, and a look finds nothing.
pub(crate) fn holds_paused(s: &Switch) -> bool {
    s.mmu.poff() != 0 || (0..s.ports.len()).any(|p| s.mmu.qoff(p) != 0)
}

/// What the detector reads of a switch's state at a look: per port the cycle its last
/// cell left, per egress queue (port * 8 + class) its cells, per port its ingress queues'
/// QOFF mask, and its ports' POFF mask. Taken where the switch runs: an MPI rank sends
/// its switches' looks to the others (`crate::ranks`), which read everything else (far
/// ends, turns) from the switch's [`Shape`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Look {
    last_tx: Vec<u64>,
    cells: Vec<u32>,
    qoff: Vec<u8>,
    poff: u64,
}

impl Look {
    /// Look at `s` again, in this look's room (a look per switch, kept between looks).
    pub(crate) fn take(&mut self, s: &Switch) {
        let ports = s.ports.len();
        self.last_tx.clear();
        self.last_tx.extend(s.ports.iter().map(|p| p.stats.last_tx));
        self.cells.clear();
        self.cells
            .extend((0..ports * 8).map(|i| s.mmu.egress_cells(i / 8, i % 8)));
        self.qoff.clear();
        self.qoff.extend((0..ports).map(|p| s.mmu.qoff(p)));
        self.poff = s.mmu.poff();
    }
}

/// Whether egress queue `q` is blocked at `now`; its cells if so.
fn blocked(all: &[Shape], looks: &[Look], q: Queue, now: u64, hold: u64) -> u32 {
    let (i, port, class) = q;
    let PortEnd::Switch { switch, port: far } = all[i].ends[port] else {
        return 0;
    };
    let cells = looks[i].cells[port * 8 + class as usize];
    let next = &looks[switch];
    let paused = next.qoff[far as usize] & (1 << class) != 0 || next.poff & (1 << far) != 0;
    if cells > 0 && paused && now.saturating_sub(looks[i].last_tx[port]) >= hold {
        cells
    } else {
        0
    }
}

/// The first deadlock cycle at `now` among `switches` (every switch of the network, by its
/// index, with its [`Look`] at `now` in `looks`), if any (the search starts from the lowest
/// switch, port and class, so the same state gives the same cycle).
pub(crate) fn find(
    now: u64,
    switches: &[Shape],
    looks: &[Look],
    opts: &DeadlockOptions,
) -> Option<Deadlock> {
    let mut cells: HashMap<Queue, u32> = HashMap::new();
    let mut by_switch: Vec<Vec<Queue>> = vec![Vec::new(); switches.len()];
    for (i, s) in switches.iter().enumerate() {
        for p in 0..s.ends.len() {
            for c in 0..8u8 {
                let n = blocked(switches, looks, (i, p, c), now, opts.hold_cycles);
                if n > 0 {
                    cells.insert((i, p, c), n);
                    by_switch[i].push((i, p, c));
                }
            }
        }
    }
    if cells.is_empty() {
        return None;
    }
    let next_of = |q: &Queue| -> Vec<Queue> {
        let PortEnd::Switch { switch, port } = switches[q.0].ends[q.1] else {
            return Vec::new();
        };
        let next = &switches[switch];
        by_switch[switch]
            .iter()
            .filter(|n| n.2 == q.2 && next.turns(port as usize, n.1, n.2))
            .copied()
            .collect()
    };
    let mut starts: Vec<Queue> = cells.keys().copied().collect();
    starts.sort_unstable();
    // Depth-first search with the path on a stack: a queue met again on the path closes a
    // cycle; a queue finished without one is never searched again.
    let mut done: HashMap<Queue, ()> = HashMap::new();
    for start in starts {
        if done.contains_key(&start) {
            continue;
        }
        let mut path: Vec<(Queue, Vec<Queue>)> = vec![(start, next_of(&start))];
        while let Some((_, next)) = path.last_mut() {
            let Some(n) = next.pop() else {
                let (q, _) = path.pop().expect("a last");
                done.insert(q, ());
                continue;
            };
            if let Some(i) = path.iter().position(|(q, _)| *q == n) {
                let cycle: Vec<Queue> = path[i..].iter().map(|(q, _)| *q).collect();
                return Some(report(now, switches, looks, &cycle, &cells));
            }
            if !done.contains_key(&n) {
                let next = next_of(&n);
                path.push((n, next));
            }
        }
    }
    None
}

/// The cycle `queues` as a [`Deadlock`], rotated to start at its lowest switch node.
fn report(
    now: u64,
    switches: &[Shape],
    looks: &[Look],
    queues: &[Queue],
    cells: &HashMap<Queue, u32>,
) -> Deadlock {
    let mut hops: Vec<DeadlockHop> = queues
        .iter()
        .map(|q| {
            let s = &switches[q.0];
            let PortEnd::Switch { switch, port } = s.ends[q.1] else {
                unreachable!("a blocked queue faces a switch")
            };
            DeadlockHop {
                switch: s.node,
                port: q.1 as u8,
                next_switch: switches[switch].node,
                next_port: port,
                cells: cells[q],
            }
        })
        .collect();
    let first = (0..hops.len())
        .min_by_key(|&i| (hops[i].switch, hops[i].port))
        .unwrap_or(0);
    hops.rotate_left(first);
    let onset = queues
        .iter()
        .map(|q| looks[q.0].last_tx[q.1])
        .max()
        .unwrap_or(0);
    Deadlock {
        class: queues[0].2,
        onset_cycle: onset,
        detected_cycle: now,
        hops,
    }
}
