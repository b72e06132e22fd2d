//! One switch of the network: its `hw_model::Mmu`, the NICs of the hosts below it, the
//! arrivals on its links, and its own scoreboard. Everything here is owned by the switch;
//! what it sends to another switch leaves as an [`Envelope`].
//!
//! Order within a cycle `now` in which the switch is stepped:
//! 1. flows starting at `now` are handed to their host's NIC (a `stimulus` link partner:
//!    class queues, line rate, propagation delay, PFC reaction), and every NIC due steps;
//!    the beat reaching the switch goes into `Inputs::ingress`;
//! 2. cells arriving from other switches go into `Inputs::ingress`, their header's ingress
//!    and egress ports set for this switch (the egress port from the flow's route), and
//!    PFC frames arriving into `Inputs::pfc_rx`;
//! 3. an ECM frame waiting to enter the buffer takes the ingress slot of its port if the
//!    port receives nothing now and is between two packets (`Switch::ecm_inject`);
//! 4. the MMU steps (first jumping over the idle cycles since its last step) if it has an
//!    input or an event of its own due; the scoreboard sees every cell event and departure;
//! 5. departures leave on their links (to a host's sink, or as envelopes to the next
//!    switch), PFC frames go upstream (to a NIC directly, or as envelopes), and the ECM
//!    frames of this switch's congestion points wait for their ingress slot;
//! 6. the sinks take the cells that reached their hosts by now.

use crate::due::DueCycles;
use crate::flows::Flow;
use crate::link::{Envelope, Message, PortStats};
use crate::routing;
use crate::topology::{LinkId, NodeId};
use crate::trace::SwitchEvents;
use crate::transport::{
    self, Carried, CarriedEcm, CarriedHops, Carry, EcmDelays, Event, Receiver, Sender, Value,
};
use crate::waves::SwitchWaves;
use hw_model::{
    Beat, Derived, EcmFrame, Inputs, InvariantError, Mmu, Outputs, PacketHdr, PfcFrame,
};
use std::collections::VecDeque;
use stimulus::link_partner::LinkPartner;
use stimulus::timeline::Timeline;
use switch_run::monitor::{self, CellTxn, TxnKind};
use switch_run::scoreboard::Scoreboard;

/// A flow of the run, with its route and what its receiver has seen.
///
/// Who writes what: the fields up to `sender` are fixed at the build but for `next_tx`
/// and `sender`, which only the switch of the flow's source host changes; `recv` only the
/// switch of its destination host. A parallel run gives each partition its own copy and
/// merges them at the end (`crate::parallel`).
#[derive(Debug, Clone)]
pub(crate) struct FlowState {
    pub flow: Flow,
    pub tuple: routing::FiveTuple,
    pub start_cycle: u64,
    /// Per switch on the path, in order: (switch index, egress port).
    pub hops: Vec<(usize, u8)>,
    /// The header of its packets as its source's NIC sends them (`seq`, `len` and `ecn`
    /// set per packet).
    pub header: PacketHdr,
    /// Packets of the message (cut at the MTU); 0 for a feedback flow.
    pub packets: u64,
    /// The next packet's `seq` (transmissions, retransmissions included).
    pub next_tx: u32,
    pub sender: Sender,
    /// The flow its receiver answers on (ACKs, CNPs), if closed loop.
    pub feedback: Option<usize>,
    /// Per switch on its path with congestion points: (switch index, the ECM flow that
    /// switch sends this flow's source its frames on). Empty without `[switch.ecm]`.
    pub ecm: Vec<(usize, u32)>,
    pub standalone_ns: u64,
    pub recv: FlowRecv,
}

/// What a flow's destination host has seen of it.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlowRecv {
    /// What its packets in flight carry (`crate::transport`), as its sender's switch
    /// sent it over ([`Outbox::carried`]).
    pub carried: Carried,
    /// The hop records they carry (HPCC, PowerTCP and their ACKs).
    pub hops: CarriedHops,
    /// An ECM flow's frames in flight, as the congestion point's switch sent them over.
    pub ecm: CarriedEcm,
    /// An ECM flow's frames received, and their delays.
    pub ecm_delay: EcmDelays,
    pub receiver: Receiver,
    /// Cells received, of any packet (at any host: a misrouted cell counts where it lands).
    pub received: u64,
    /// The highest `(seq, idx)` received, as [`order_key`] (0: none yet).
    pub last_key: u64,
    pub reordered: u64,
    /// The cycle its receiver had every packet in order.
    pub done_at: Option<u64>,
}

/// What a switch's step sends to other switches: envelopes over its links, and the values
/// its NICs' packets carry, for their flows' receivers.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    pub envelopes: Vec<Envelope>,
    pub carried: Vec<Carry>,
}

impl FlowState {
    /// The egress port of `switch` on this flow's path.
    fn egress_at(&self, switch: usize) -> Option<u8> {
        self.hops.iter().find(|h| h.0 == switch).map(|h| h.1)
    }
}

/// Cell `idx` of packet `seq` as one integer ordered as `(seq, idx)`, above 0.
fn order_key(seq: u32, idx: u16) -> u64 {
    ((seq as u64) << 16 | idx as u64) + 1
}

/// What is at the far end of a port.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PortEnd {
    /// A host: its NIC, an index into the switch's NICs.
    Host(usize),
    /// Port `port` of switch `switch` (an index into the network's switches).
    Switch { switch: usize, port: u8 },
}

/// One port: its far end, its link, the link's delay and rate.
#[derive(Debug, Clone)]
pub(crate) struct Port {
    pub end: PortEnd,
    pub link: LinkId,
    pub prop_cycles: u64,
    /// Cycles the far end takes to act on a PFC frame from here (its reaction delay).
    pub peer_proc_cycles: u64,
    pub rate_bps: u64,
    /// The cycle the last cell sent reaches the far end.
    pub last_arrival: u64,
    pub stats: PortStats,
}

/// A host's NIC, the sending side a link partner of the ToR's port, and its sink.
#[derive(Debug, Clone)]
pub(crate) struct Nic {
    pub host: NodeId,
    pub port: u8,
    pub partner: LinkPartner,
    /// The next cycle the partner must be stepped in (`u64::MAX`: idle).
    pub wake: u64,
    /// Flows this host sends, by start cycle; `next` is the first not yet handed over.
    pub flows: Vec<usize>,
    pub next: usize,
    /// Cells the ToR sent toward the host: (cycle they reach it, beat).
    pub sink: VecDeque<(u64, Beat)>,
    pub cells_sent: u64,
    /// The transports' timers and paced sends (`crate::transport`).
    pub events: Timeline<Event>,
    /// Whether a closed-loop flow ends or starts here: the sink must take each packet when
    /// it arrives, to answer it or react. Otherwise it is drained when the switch steps
    /// anyway (a packet's arrival cycle is kept), which costs no step of its own.
    pub answers: bool,
    /// What the packets handed to the partner this step carry, for the switch's outbox.
    pub carried_out: Vec<Carry>,
}

impl Nic {
    /// The first cycle at which this NIC has something to do: the partner, a flow's start,
    /// a transport's event, a cell reaching the host.
    fn next_event(&self, flows: &[FlowState]) -> u64 {
        let start = self
            .flows
            .get(self.next)
            .map_or(u64::MAX, |&f| flows[f].start_cycle);
        let sink = match self.sink.front() {
            Some(e) if self.answers => e.0,
            _ => u64::MAX,
        };
        self.wake.min(start).min(self.events.next_time()).min(sink)
    }
}

/// The model reported a broken invariant at a switch.
#[derive(Debug, Clone, thiserror::Error)]
#[error("model invariant broken at switch {switch}: {what}", what = .error.what)]
pub struct SwitchError {
    pub switch: NodeId,
    pub error: InvariantError,
}

/// One switch and what it owns.
pub(crate) struct Switch {
    pub node: NodeId,
    pub index: usize,
    pub mmu: Mmu,
    pub ports: Vec<Port>,
    pub nics: Vec<Nic>,
    ingress: Vec<Option<Beat>>,
    /// The ports with a beat in `ingress` this cycle (cleared after the MMU's step).
    fed: Vec<usize>,
    pfc_rx: Vec<(u8, PfcFrame)>,
    out: Outputs,
    /// The ports to other switches, the only ones messages arrive on (`cells_in`,
    /// `pfc_in`): a ToR's arrivals are read on its 2 uplinks, not its 34 ports.
    switch_ports: Vec<usize>,
    /// Per port, cells on the link into it: (cycle they arrive, beat).
    pub cells_in: Vec<VecDeque<(u64, Beat)>>,
    /// Per port, PFC frames on their way to it: (cycle they act, frame).
    pub pfc_in: Vec<VecDeque<(u64, PfcFrame)>>,
    /// Per port, whether the last beat it received left a packet open: another packet's
    /// cell may not enter its ingress before that packet's last.
    open: Vec<bool>,
    /// Per port, the ECM frames (one cell each) waiting for its ingress slot, and the
    /// ports with one waiting (a bit each: `hw_model::config::MAX_PORTS` is 64).
    ecm_out: Vec<VecDeque<Beat>>,
    ecm_ports: u64,
    /// ECM frames its congestion points sent, and those of them that entered its MMU by
    /// now (cells injected, for the conservation check).
    pub ecm_tx: u64,
    pub ecm_injected: u64,
    /// ECM frames its congestion points asked for about a flow with no ECM flow from here
    /// (an ECM frame's own: its source is a switch, with no reaction point).
    pub ecm_unsent: u64,
    pub scoreboard: Scoreboard,
    pub pfc_pause_tx: u64,
    pub pfc_resume_tx: u64,
    /// A PAUSE its MMU receives on a port in every step (`LinkFault::PauseForever`, for
    /// companion tests).
    pub held: Option<(u8, PfcFrame)>,
    /// Cells that arrived with a flow whose path does not cross this switch.
    pub misrouted_in: u64,
    /// A second cell arriving on a port in one cycle (a link faster than its line rate).
    pub overrun: u64,
    /// Messages handed over after the switch had run the cycle they act in: a parallel
    /// run's window went past its horizon (`crate::parallel`).
    pub late_in: u64,
    /// The next cycle the switch must be stepped in.
    pub wake: u64,
    /// The cycle after its last step (what arrives for an earlier cycle is late).
    ran: u64,
    /// The MMU's [`Mmu::next_event`], which changes only when it steps.
    mmu_due: u64,
    /// Per NIC, its [`Nic::next_event`], and the cycle the first cell of its sink reaches
    /// the host (`u64::MAX`: none). A NIC is some kilobytes (its link partner's queues),
    /// so a step reads these copies, not the NICs, and visits only the NICs due: each
    /// copy is exact, set again after every visit and lowered when a cell or a PFC frame
    /// is sent to the NIC.
    pub(crate) nic_due: DueCycles,
    sink_due: DueCycles,
    /// The earliest cycle a cell or PFC frame on a link from another switch acts here.
    in_due: u64,
    /// The NICs visited in this step: what their packets carry leaves in NIC order.
    visited: Vec<usize>,
    /// Its golden-model event stream and its waveform recorder, if asked for
    /// (`crate::trace`, `crate::waves`).
    pub events: Option<SwitchEvents>,
    pub waves: Option<SwitchWaves>,
    /// Its buffer occupancy over time, if asked for (`[fabric] occupancy_interval_us`).
    pub occupancy: Option<Occupancy>,
}

/// Buffer occupancy over time: per interval of `interval` cycles, the most cells the
/// buffer held at the end of any cycle in it. A switch's buffer changes only in the
/// cycles it is stepped, so the intervals it skips hold what it was left at.
#[derive(Debug, Clone, PartialEq)]
pub struct Occupancy {
    pub interval: u64,
    pub peak_cells: Vec<u32>,
    last: u32,
}

impl Occupancy {
    pub fn new(interval: u64) -> Self {
        Self {
            interval,
            peak_cells: Vec::new(),
            last: 0,
        }
    }

    /// The buffer holds `cells` after cycle `now`.
    fn record(&mut self, now: u64, cells: u32) {
        let bin = (now / self.interval) as usize;
        if self.peak_cells.len() <= bin {
            self.peak_cells.resize(bin + 1, self.last);
        }
        self.peak_cells[bin] = self.peak_cells[bin].max(cells);
        self.last = cells;
    }
}

impl Switch {
    pub fn new(node: NodeId, index: usize, d: Derived, ports: Vec<Port>) -> Self {
        let n = d.ports;
        let switch_ports = (0..ports.len())
            .filter(|&p| matches!(ports[p].end, PortEnd::Switch { .. }))
            .collect();
        Self {
            node,
            index,
            mmu: Mmu::new(d),
            ports,
            nics: Vec::new(),
            ingress: vec![None; n],
            fed: Vec::with_capacity(n),
            pfc_rx: Vec::with_capacity(n),
            out: Outputs::with_ports(n),
            switch_ports,
            cells_in: vec![VecDeque::new(); n],
            pfc_in: vec![VecDeque::new(); n],
            open: vec![false; n],
            ecm_out: vec![VecDeque::new(); n],
            ecm_ports: 0,
            ecm_tx: 0,
            ecm_injected: 0,
            ecm_unsent: 0,
            scoreboard: Scoreboard::with_ports(0, n),
            pfc_pause_tx: 0,
            pfc_resume_tx: 0,
            held: None,
            misrouted_in: 0,
            overrun: 0,
            late_in: 0,
            wake: 0,
            ran: 0,
            mmu_due: 0,
            nic_due: DueCycles::idle(0),
            sink_due: DueCycles::idle(0),
            in_due: u64::MAX,
            visited: Vec::new(),
            events: None,
            waves: None,
            occupancy: None,
        }
    }

    /// Size the scoreboard for the run's flows and set up the NICs' due cycles from their
    /// state (before the first step).
    pub fn init_due(&mut self, flows: &[FlowState]) {
        self.scoreboard = Scoreboard::with_ports(flows.len(), self.ports.len());
        self.nic_due = DueCycles::idle(self.nics.len());
        self.sink_due = DueCycles::idle(self.nics.len());
        for n in 0..self.nics.len() {
            self.refresh(n, flows);
        }
        self.mmu_due = self.mmu.next_event();
        self.wake = self.next_event();
    }

    /// The first cycle at which the switch has something to do: its MMU's next event, a
    /// NIC's, an arrival on a link, an ECM frame waiting for its ingress slot (the cycle
    /// after the last step).
    pub fn next_event(&self) -> u64 {
        let ecm = if self.ecm_ports != 0 {
            self.ran
        } else {
            u64::MAX
        };
        self.mmu_due
            .min(self.nic_due.min())
            .min(self.in_due)
            .min(ecm)
    }

    /// The cycle after its last step.
    pub fn cycle(&self) -> u64 {
        self.ran
    }

    /// A message from another switch (a cell or a PFC frame, queued in `cells_in` or
    /// `pfc_in`) acts here at `at`.
    pub fn arrives_at(&mut self, at: u64) {
        self.in_due = self.in_due.min(at);
        self.wake = self.wake.min(at);
    }

    /// The due-cycle copies are never later than the work they stand for (a copy earlier
    /// than its work only costs a visit): what the step's skipping of NICs and links rests on.
    fn due_cycles_hold(&self, flows: &[FlowState]) -> bool {
        let nics = self.nics.iter().enumerate().all(|(n, nic)| {
            self.nic_due.get(n) <= nic.next_event(flows) && self.sink_due.get(n) <= sink_front(nic)
        });
        nics && self.nic_due.holds() && self.sink_due.holds() && self.in_due <= self.inbound_due()
    }

    /// NIC `n` changed: its due cycles again.
    fn refresh(&mut self, n: usize, flows: &[FlowState]) {
        self.nic_due.set(n, self.nics[n].next_event(flows));
        self.sink_due.set(n, sink_front(&self.nics[n]));
    }

    /// Clock cycle `now`: see the module doc. Envelopes to other switches go into `outbox`.
    pub fn step(
        &mut self,
        now: u64,
        flows: &mut [FlowState],
        outbox: &mut Outbox,
    ) -> Result<(), SwitchError> {
        debug_assert!(
            self.due_cycles_hold(flows),
            "switch {}: a NIC's or a link's due cycle is later than its work",
            self.node
        );
        self.nics_send(now, flows);
        self.arrivals(now, flows);
        if self.ecm_ports != 0 {
            self.ecm_inject(now);
        }
        for &q in &self.fed {
            self.open[q] = self.ingress[q].is_some_and(|b| !b.eop());
        }
        // The MMU sees every cycle in which it has an input or an event of its own; in
        // the others (a NIC's timer, a cell reaching a host) a step with idle inputs
        // would change nothing (`Mmu::next_event`), and its next step jumps them with
        // `skip_to`. A recorder samples every cycle the switch steps, so it keeps them.
        let recorded = self.events.is_some() || self.waves.is_some();
        if !self.fed.is_empty() || !self.pfc_rx.is_empty() || self.mmu_due <= now || recorded {
            self.mmu_step(now, flows, outbox)?;
        }
        let from = self.visited.len();
        self.sink_due.due(now, &mut self.visited);
        for k in from..self.visited.len() {
            let n = self.visited[k];
            receive(&mut self.nics[n], now, flows, self.mmu.config());
            self.refresh(n, flows);
        }
        self.visited.sort_unstable();
        self.visited.dedup();
        for n in self.visited.drain(..) {
            outbox.carried.append(&mut self.nics[n].carried_out);
        }
        if let Some(w) = &mut self.waves {
            w.step(now, &self.mmu, &self.out, &self.ports, &self.nics);
        }
        if let Some(o) = &mut self.occupancy {
            o.record(now, self.mmu.buffered_cells());
        }
        // What the step left due now (an ACK's transport event, a NIC's next send) runs
        // in the next cycle: the switch has had its cycle.
        self.wake = self.next_event().max(now + 1);
        self.ran = now + 1;
        Ok(())
    }

    /// The MMU's cycle `now` (first jumping over the idle cycles since its last step), and
    /// what it sent: the scoreboard sees every cell event and departure, departures and
    /// PFC frames leave, ECM frames wait for their ingress slot.
    fn mmu_step(
        &mut self,
        now: u64,
        flows: &mut [FlowState],
        outbox: &mut Outbox,
    ) -> Result<(), SwitchError> {
        let err = |error| SwitchError {
            switch: self.node,
            error,
        };
        if self.mmu.cycle() < now {
            self.mmu.skip_to(now).map_err(err)?;
        }
        let inputs = Inputs {
            ingress: &self.ingress,
            pfc_rx: &self.pfc_rx,
        };
        self.mmu.step(&inputs, &mut self.out).map_err(err)?;
        if let Some(e) = &mut self.events {
            e.step(now, &inputs, &self.out, &self.mmu);
        }
        for q in self.fed.drain(..) {
            self.ingress[q] = None;
        }
        self.mmu_due = self.mmu.next_event();
        for t in monitor::cell_events(now, &self.out) {
            self.scoreboard.record(&t);
        }
        for t in monitor::departures(now, &self.out) {
            self.scoreboard.record(&t);
        }
        for s in self.mmu.int_stamps() {
            outbox
                .carried
                .extend(transport::stamped(flows, self.index, &s));
        }
        self.departures(now, &mut outbox.envelopes);
        self.pfc_out(now, &mut outbox.envelopes);
        for i in 0..self.out.ecm_tx.len() {
            let f = self.out.ecm_tx[i];
            self.ecm_send(now, f, flows, &mut outbox.carried);
        }
        Ok(())
    }

    /// Start the flows starting now, fire the transports' events due and step the NICs
    /// that are due (a NIC not due has none of these to do).
    fn nics_send(&mut self, now: u64, flows: &mut [FlowState]) {
        let from = self.visited.len();
        self.nic_due.due(now, &mut self.visited);
        for k in from..self.visited.len() {
            let n = self.visited[k];
            self.nic_send(n, now, flows);
            self.refresh(n, flows);
        }
    }

    fn nic_send(&mut self, n: usize, now: u64, flows: &mut [FlowState]) {
        let d = self.mmu.config();
        let nic = &mut self.nics[n];
        while let Some(&f) = nic.flows.get(nic.next) {
            if flows[f].start_cycle > now {
                break;
            }
            nic.next += 1;
            transport::start(nic, flows, f, now, d);
        }
        transport::fire_due(nic, flows, now, d);
        if nic.wake > now {
            return;
        }
        let scoreboard = &mut self.scoreboard;
        let sent = &mut nic.cells_sent;
        let slot = &mut self.ingress[nic.port as usize];
        if nic.partner.step_into(now, d, |_| *sent += 1, slot) {
            self.fed.push(nic.port as usize);
            let beat = slot.as_ref().expect("the partner delivered a beat");
            scoreboard.record(&CellTxn {
                cycle: now,
                kind: TxnKind::Inject,
                beat,
            });
        }
        nic.wake = nic.partner.next_event(now);
    }

    /// Cells and PFC frames from other switches arriving now.
    fn arrivals(&mut self, now: u64, flows: &[FlowState]) {
        self.pfc_rx.clear();
        self.pfc_rx.extend(self.held);
        if self.in_due > now {
            return;
        }
        for i in 0..self.switch_ports.len() {
            let q = self.switch_ports[i];
            while self.cells_in[q].front().is_some_and(|e| e.0 <= now) {
                let (_, mut b) = self.cells_in[q].pop_front().expect("a front");
                let Some(dst) = flows
                    .get(b.hdr.flow as usize)
                    .and_then(|f| f.egress_at(self.index))
                else {
                    self.misrouted_in += 1;
                    continue;
                };
                b.hdr.src = q as u8;
                b.hdr.dst = dst;
                if self.ingress[q].is_some() {
                    self.overrun += 1;
                    continue;
                }
                self.feed(now, q, b);
            }
        }
        let hz = self.mmu.config().clock_hz;
        for &p in &self.switch_ports {
            let frames = &mut self.pfc_in[p];
            while let Some(&(at, f)) = frames.front().filter(|e| e.0 <= now) {
                frames.pop_front();
                let port = &mut self.ports[p];
                port.stats.pfc(at, &f, port.rate_bps, hz);
                self.pfc_rx.push((p as u8, f));
            }
        }
        self.in_due = self.inbound_due();
    }

    /// The first cycle a message queued from another switch acts here.
    fn inbound_due(&self) -> u64 {
        let queued = |&p: &usize| front(&self.cells_in[p]).min(front(&self.pfc_in[p]));
        self.switch_ports
            .iter()
            .map(queued)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// This cycle's departures onto their links.
    fn departures(&mut self, now: u64, outbox: &mut Vec<Envelope>) {
        for dep in &self.out.departures {
            let port = &mut self.ports[dep.port as usize];
            port.stats.cells_tx += 1;
            port.stats.last_tx = now;
            // The MMU reads a packet's short last cell and the next packet's first in one
            // cycle when the line is fast; the far end takes one beat per cycle, so the
            // second waits a cycle (as the link partner's transmitter holds it).
            let at = (now + port.prop_cycles).max(port.last_arrival + 1);
            port.last_arrival = at;
            match port.end {
                PortEnd::Host(n) => {
                    let nic = &mut self.nics[n];
                    nic.sink.push_back((at, dep.beat));
                    self.sink_due.lower(n, at);
                    if nic.answers {
                        self.nic_due.lower(n, at);
                    }
                }
                PortEnd::Switch { switch, port: q } => outbox.push(Envelope {
                    at,
                    switch,
                    port: q,
                    link: port.link,
                    msg: Message::Cell(dep.beat),
                }),
            }
        }
    }

    /// This cycle's PFC frames toward the upstream devices.
    fn pfc_out(&mut self, now: u64, outbox: &mut Vec<Envelope>) {
        for &(p, frame) in &self.out.pfc_tx {
            let port = &mut self.ports[p as usize];
            if frame.paused() != 0 {
                self.pfc_pause_tx += 1;
                port.stats.pause_tx += 1;
            } else {
                self.pfc_resume_tx += 1;
                port.stats.resume_tx += 1;
            }
            match port.end {
                PortEnd::Host(n) => {
                    let nic = &mut self.nics[n];
                    let at = nic.partner.pfc_sent(now, frame);
                    nic.wake = nic.wake.min(at);
                    self.nic_due.lower(n, at);
                }
                PortEnd::Switch { switch, port: q } => outbox.push(Envelope {
                    at: now + port.prop_cycles + port.peer_proc_cycles,
                    switch,
                    port: q,
                    link: port.link,
                    msg: Message::Pfc(frame),
                }),
            }
        }
    }

    /// ECM frame `f` of this switch's congestion points becomes a packet of the ECM flow
    /// from here to the sampled flow's source (`FlowState::ecm`): a 64 B frame of one cell
    /// (`crate::network` refuses a cell that cannot hold it) on the ECM class, from and to
    /// the port the sampled frame came in on, which waits for that port's ingress slot
    /// (`ecm_inject`). The frame's fields go to the source's switch beside it.
    fn ecm_send(&mut self, now: u64, f: EcmFrame, flows: &mut [FlowState], out: &mut Vec<Carry>) {
        let ecm = flows.get(f.sampled.flow as usize).and_then(|fs| {
            let to = fs.ecm.iter().find(|e| e.0 == self.index);
            to.map(|e| e.1 as usize)
        });
        let Some(e) = ecm else {
            self.ecm_unsent += 1;
            return;
        };
        let fs = &mut flows[e];
        let hdr = PacketHdr {
            seq: fs.next_tx,
            ..fs.header
        };
        out.push(Carry {
            flow: hdr.flow,
            tx: fs.next_tx,
            value: Value::Ecm(now, f),
        });
        fs.next_tx = fs.next_tx.wrapping_add(1);
        self.ecm_tx += 1;
        self.ecm_ports |= 1 << hdr.src;
        self.ecm_out[hdr.src as usize].push_back(Beat {
            hdr,
            idx: 0,
            ncells: 1,
        });
    }

    /// The ECM frames waiting whose port's ingress slot is free now: the port receives no
    /// beat this cycle and is between two packets. This is the switch's own transmitter,
    /// as a switch CPU's packet enters the pipeline of a front-panel port in an idle slot;
    /// the model's MMU has no port without a link (a CPU port), and the frame enters at the
    /// port whose queue it leaves by, charged to that port's ingress (its priority group
    /// and PFC) like any packet arriving there. A frame never splits another packet's
    /// cells; on a port that receives a beat in every cycle it waits.
    fn ecm_inject(&mut self, now: u64) {
        let mut waiting = self.ecm_ports;
        while waiting != 0 {
            let p = waiting.trailing_zeros() as usize;
            waiting &= waiting - 1;
            if self.ingress[p].is_some() || self.open[p] {
                continue;
            }
            let b = self.ecm_out[p]
                .pop_front()
                .expect("a port's bit stands for a frame");
            if self.ecm_out[p].is_empty() {
                self.ecm_ports &= !(1 << p);
            }
            self.ecm_injected += 1;
            self.feed(now, p, b);
        }
    }

    /// Beat `b` enters port `q`'s free ingress slot now, seen by the scoreboard.
    fn feed(&mut self, now: u64, q: usize, b: Beat) {
        self.scoreboard.record(&CellTxn {
            cycle: now,
            kind: TxnKind::Inject,
            beat: &b,
        });
        self.ingress[q] = Some(b);
        self.fed.push(q);
    }

    /// Cells in this switch's buffer (without those charged to packets still arriving),
    /// on its links from other switches, on its NICs' links and in its sinks' links.
    pub fn cells_buffered(&self) -> u64 {
        (self.mmu.buffered_cells() as u64).saturating_sub(self.scoreboard.owed())
    }

    pub fn cells_on_links(&self) -> u64 {
        let into: usize = self.cells_in.iter().map(VecDeque::len).sum();
        let nics: usize = self
            .nics
            .iter()
            .map(|n| n.partner.in_flight() + n.sink.len())
            .sum();
        (into + nics) as u64
    }

    /// The sinks take every cell that reached them before `end`.
    pub fn finish(&mut self, end: u64, flows: &mut [FlowState]) {
        if let Some(o) = &mut self.occupancy {
            o.record(end.saturating_sub(1), o.last);
        }
        let d = self.mmu.config();
        for nic in &mut self.nics {
            receive(nic, end.saturating_sub(1), flows, d);
        }
    }
}

/// The cycle the first entry of a timed queue is due (`u64::MAX`: empty).
fn front<T>(q: &VecDeque<(u64, T)>) -> u64 {
    q.front().map_or(u64::MAX, |e| e.0)
}

/// The cycle the first cell in `nic`'s sink reaches its host.
fn sink_front(nic: &Nic) -> u64 {
    front(&nic.sink)
}

/// The cells that reached `nic`'s host by `now`: counted and order-checked; a packet's
/// last cell hands the packet to its transport (`crate::transport::packet_in`).
fn receive(nic: &mut Nic, now: u64, flows: &mut [FlowState], d: &Derived) {
    while let Some(&(at, b)) = nic.sink.front().filter(|e| e.0 <= now) {
        nic.sink.pop_front();
        let i = b.hdr.flow as usize;
        let Some(f) = flows.get_mut(i) else {
            continue;
        };
        let r = &mut f.recv;
        r.received += 1;
        let key = order_key(b.hdr.seq, b.idx);
        if key <= r.last_key || f.flow.dst != nic.host {
            r.reordered += 1;
            continue;
        }
        r.last_key = key;
        if b.eop() {
            transport::packet_in(nic, flows, i, &b.hdr, at, d);
        }
    }
    // What the transports sent waits for the NIC's next step.
    if nic.wake <= now {
        nic.wake = now + 1;
    }
}
