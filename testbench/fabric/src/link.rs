//! What crosses a link between two switches: timed messages, cells one way and PFC
//! frames the other, and the counters each end keeps of its link. (ECM frames, ACKs and
//! CNPs are packets: their cells cross links as any packet's.)
//!
//! Every interaction between switches is an [`Envelope`]: it names the receiving switch
//! and port and the cycle it arrives in, at least one cycle after it was sent (the link's
//! propagation delay, rounded up to whole cycles, is never below one). A switch therefore
//! never reads another switch's state while the network runs, and a later, parallel
//! network can run switches apart with the smallest link delay as lookahead.

use crate::topology::{LinkId, NodeId};
use hw_model::config::PFC_QUANTUM_BITS;
use hw_model::{Beat, PfcFrame};
use std::collections::VecDeque;

/// What a link carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Message {
    /// A cell of a packet, downstream: from an egress port into the next switch's ingress.
    Cell(Beat),
    /// A PFC frame, upstream: from the ingress queue that sent it to the egress port it
    /// pauses, arriving after the propagation delay and the receiver's reaction delay.
    Pfc(PfcFrame),
}

/// A message on its way: to `port` of switch `switch` (an index into the network's
/// switches), acting in cycle `at`, over link `link`.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Envelope {
    pub at: u64,
    pub switch: usize,
    pub port: u8,
    pub link: LinkId,
    pub msg: Message,
}

/// A link broken on purpose, for the companion tests of the fabric's checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkFault {
    /// The `nth` packet (from 0) that leaves `from` on `link` is lost with all its cells.
    DropPacket {
        link: LinkId,
        from: NodeId,
        nth: u64,
    },
    /// From the `nth` packet (from 0) that leaves `from` on `link`, the first packet that
    /// is still wholly on the link behind one of its flow with as many cells changes place
    /// with it: the two arrive in the other order.
    SwapPackets {
        link: LinkId,
        from: NodeId,
        nth: u64,
    },
    /// Every PFC frame toward `from` on `link` is lost: its egress is never paused.
    DropPfc { link: LinkId, from: NodeId },
    /// `from`'s egress onto `link` holds class `class` paused all run, as if the far end
    /// sent a PAUSE of that class in every cycle `from` steps.
    PauseForever {
        link: LinkId,
        from: NodeId,
        class: u8,
    },
}

impl LinkFault {
    /// The link and the node whose cells (or whose received PFC frames) it breaks.
    pub fn target(&self) -> (LinkId, NodeId) {
        match *self {
            Self::DropPacket { link, from, .. }
            | Self::SwapPackets { link, from, .. }
            | Self::DropPfc { link, from }
            | Self::PauseForever { link, from, .. } => (link, from),
        }
    }
}

/// A fault in force on one direction of a link.
#[derive(Debug, Clone)]
pub(crate) struct ArmedFault {
    pub fault: LinkFault,
    /// Packets (first cells) seen leaving so far.
    packets: u64,
    /// Whether the packet being sent is being dropped.
    dropping: bool,
    /// Done (a swap or a drop happened); a `DropPfc` never is.
    spent: bool,
}

impl ArmedFault {
    pub fn new(fault: LinkFault) -> Self {
        Self {
            fault,
            packets: 0,
            dropping: false,
            spent: false,
        }
    }

    /// A cell leaving onto the link whose arrivals are `queue`: returns whether the link
    /// loses it. A swap rearranges `queue` after the cell joined it, so it is applied by
    /// [`after_cell`](Self::after_cell).
    pub fn drops_cell(&mut self, b: &Beat) -> bool {
        let LinkFault::DropPacket { nth, .. } = self.fault else {
            return false;
        };
        if b.sop() {
            self.dropping = !self.spent && self.packets == nth;
            self.packets += 1;
        }
        if self.dropping && b.eop() {
            self.spent = true;
        }
        self.dropping
    }

    /// After a cell joined `queue` (arrival cycle, beat): a swap fault exchanges the two
    /// packets at its tail once both are there whole, keeping each slot's arrival cycle.
    pub fn after_cell(&mut self, queue: &mut VecDeque<(u64, Beat)>) {
        let LinkFault::SwapPackets { nth, .. } = self.fault else {
            return;
        };
        let Some(&(_, last)) = queue.back() else {
            return;
        };
        if last.sop() {
            self.packets += 1;
        }
        if self.spent || self.packets <= nth || !last.eop() {
            return;
        }
        let n = last.ncells as usize;
        if queue.len() < 2 * n {
            return;
        }
        let at = queue.len() - 2 * n;
        let whole = queue
            .range(at..at + n)
            .enumerate()
            .all(|(i, (_, b))| b.idx as usize == i && b.ncells == last.ncells);
        if whole && queue[at].1.hdr.flow == last.hdr.flow {
            for i in 0..n {
                let (a, b) = (queue[at + i].1, queue[at + n + i].1);
                queue[at + i].1 = b;
                queue[at + n + i].1 = a;
            }
            self.spent = true;
        }
    }

    /// Whether the link loses this PFC frame.
    pub fn drops_pfc(&self) -> bool {
        matches!(self.fault, LinkFault::DropPfc { .. })
    }
}

/// The pause state of one egress port as the PFC frames it receives set it: per class the
/// end of its pause, DSH's port-level pause apart (as the link partner keeps them), and
/// the paused cycles so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct PauseClock {
    until: [u64; 8],
    port_until: u64,
    /// Paused cycles per class before `since`.
    paused: [u64; 8],
    since: u64,
}

impl PauseClock {
    /// A frame acting in cycle `at` on a link of `rate_bps` under a `clock_hz` core clock.
    pub fn apply(&mut self, at: u64, f: &PfcFrame, rate_bps: u64, clock_hz: u64) {
        self.paused = self.paused_cycles(at);
        self.since = at;
        let cycles = |q: u16| {
            (q as u128 * PFC_QUANTUM_BITS as u128 * clock_hz as u128).div_ceil(rate_bps as u128)
                as u64
        };
        if f.port_level {
            let q = f.quanta.iter().copied().max().unwrap_or(0);
            self.port_until = if q == 0 { at } else { at + cycles(q) };
            return;
        }
        for c in 0..8 {
            if f.class_enable & (1 << c) != 0 {
                self.until[c] = at + cycles(f.quanta[c]);
            }
        }
    }

    /// Paused cycles per class before `now` (a class paused both ways counts once).
    pub fn paused_cycles(&self, now: u64) -> [u64; 8] {
        let mut t = self.paused;
        for (c, t) in t.iter_mut().enumerate() {
            let until = self.until[c].max(self.port_until).min(now);
            *t += until.saturating_sub(self.since);
        }
        t
    }
}

/// What one switch's port has sent on its link and received back.
#[derive(Debug, Clone, Default)]
pub(crate) struct PortStats {
    pub cells_tx: u64,
    /// The last cycle a cell left (0 before the first: the run's start).
    pub last_tx: u64,
    pub pause_rx: u64,
    pub resume_rx: u64,
    pub pause: PauseClock,
    /// PFC frames this port's ingress sent upstream.
    pub pause_tx: u64,
    pub resume_tx: u64,
}

impl PortStats {
    /// A PFC frame acting on this port in cycle `at`.
    pub fn pfc(&mut self, at: u64, f: &PfcFrame, rate_bps: u64, clock_hz: u64) {
        if f.paused() != 0 {
            self.pause_rx += 1;
        } else {
            self.resume_rx += 1;
        }
        self.pause.apply(at, f, rate_bps, clock_hz);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(class: usize, quanta: u16, port_level: bool) -> PfcFrame {
        let mut f = PfcFrame {
            class_enable: 1 << class,
            port_level,
            ..PfcFrame::default()
        };
        f.quanta[class] = quanta;
        f
    }

    /// A RESUME cuts a pause short, a refresh extends it, a port-level pause inside a
    /// class pause counts once: 10 quanta at 100G are 52 cycles at 1 GHz.
    #[test]
    fn pause_time_follows_the_frames() {
        let mut p = PauseClock::default();
        let (rate, hz) = (100_000_000_000, 1_000_000_000);
        p.apply(10, &frame(3, 0xFFFF, false), rate, hz);
        p.apply(50, &frame(3, 0, false), rate, hz);
        assert_eq!(p.paused_cycles(100)[3], 40);
        p.apply(100, &frame(3, 10, false), rate, hz);
        p.apply(120, &frame(3, 10, false), rate, hz);
        assert_eq!(p.paused_cycles(1000)[3], 40 + 20 + 52);
        p.apply(200, &frame(3, 10, true), rate, hz);
        assert_eq!(p.paused_cycles(1000)[0], 52);
        assert_eq!(p.paused_cycles(1000)[3], 40 + 20 + 52 + 52);
    }

    fn beat(flow: u32, seq: u32, idx: u16, ncells: u16) -> Beat {
        let mut b = Beat {
            idx,
            ncells,
            ..Beat::default()
        };
        b.hdr.flow = flow;
        b.hdr.seq = seq;
        b
    }

    /// The swap exchanges two whole packets of one flow and keeps the arrival slots; the
    /// drop loses exactly the nth packet's cells.
    #[test]
    fn faults_swap_and_drop_whole_packets() {
        let mut f = ArmedFault::new(LinkFault::SwapPackets {
            link: 0,
            from: 0,
            nth: 0,
        });
        let mut q = VecDeque::new();
        for (i, (seq, idx)) in [(0, 0), (0, 1), (1, 0), (1, 1)].into_iter().enumerate() {
            q.push_back((i as u64, beat(7, seq, idx, 2)));
            f.after_cell(&mut q);
        }
        let got: Vec<_> = q.iter().map(|(at, b)| (*at, b.hdr.seq, b.idx)).collect();
        assert_eq!(got, [(0, 1, 0), (1, 1, 1), (2, 0, 0), (3, 0, 1)]);

        let mut d = ArmedFault::new(LinkFault::DropPacket {
            link: 0,
            from: 0,
            nth: 1,
        });
        let lost: Vec<bool> = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
            .into_iter()
            .map(|(seq, idx)| d.drops_cell(&beat(7, seq, idx, 2)))
            .collect();
        assert_eq!(lost, [false, false, true, true, false, false]);
    }
}
