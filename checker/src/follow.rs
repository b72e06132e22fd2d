//! Follow mode: the DUT's arrivals, decisions and departures drive the model's counters,
//! thresholds and PFC state machines (hw-model's own blocks: `Accounting`, `DtThreshold`,
//! the buffer policy, `Admission`'s decision inputs and charges, `PfcFsm`, and `PfcRx`
//! with the DUT's received frames, whose pauses the departures are checked against), and
//! every DUT decision is checked against the one the model makes from the same state. The
//! model's state follows what the DUT did (its segments are charged, not the model's), so
//! one divergence does not cascade into the next, as in ibex's co-simulation.
//!
//! A cycle runs the model's phase table (`hw_model::PHASES`) in its order, each unit the
//! follower keeps driven by the DUT's events of the cycle: the DT threshold
//! `T = alpha (B_s - S)` (DSH Eq. 2) and the policy's units from the registered counters;
//! the received and sent PFC frames; admission of the cycle's starts of packet, in port
//! order, with the running sum of shared grants (the model's own `Admission::admit`, with
//! the DUT's decision as its decision source: the model's decision is checked against it,
//! and the DUT's outcome is charged and flow-controlled as the model's would be); PFC
//! generation (QOFF on headroom or a lossless drop, QON below `X_on = T - delta`, never in
//! the cycle that charged the queue); the reads of departing cells; then the edge. The
//! units of the DUT's datapath (HCF periods, ECM, ECN, the write stage) are the DUT's: the
//! follower checks what they produce (departures), not their state. An error of a model
//! block is reported as a `model error` divergence.
//!
//! Idle stretches are jumped: after three idle cycles nothing the rules read can change
//! (`T` follows the counters two cycles later), so memory and time grow with the events,
//! not with the cycles.

use crate::events::{Admit, Arrive, Counters, Depart, Dir, Event, Pfc};
use crate::{Decisions, Divergence, LineRate, Options, Replay};
use hw_model::accounting::{Accounting, Update};
use hw_model::admission::{Admission, OneList, Registered};
use hw_model::config::QUEUES;
use hw_model::decision_source::DecisionSource;
use hw_model::dirty::Dirty;
use hw_model::dt_threshold::{pool_occupancy, pool_units, DtThreshold};
use hw_model::pfc::fsm::{FsmIn, PfcFsm};
use hw_model::pfc::rx::PfcRx;
use hw_model::policy::{BufferPolicy, Plan, QueueView, Request};
use hw_model::ports::{each_port, FlowRequests};
use hw_model::{Derived, DropReason, PfcFrame, PfcRxMode, Unit, PHASES};
use rtl::{Block, BlockError, Clocked};
use std::collections::{HashMap, HashSet, VecDeque};

/// The slot of a port-level pause in the per-port PFC arrays (after the classes).
const PORT_LEVEL: usize = QUEUES;

/// Events of a flow and of a port kept for a divergence's context.
const HISTORY: usize = 4;
/// Dropped and lost packets remembered (to name a departure of one); older ones are
/// forgotten.
const GONE_KEPT: usize = 1 << 16;
/// Idle cycles evaluated one by one before a jump (`T` settles two cycles after the last
/// counter change; one more for the QON that follows it).
const IDLE_STEPS: u64 = 3;

type Key = (u32, u32);

/// An admitted packet not yet fully read.
#[derive(Debug, Clone, Copy)]
struct Pkt {
    src: u8,
    prio: u8,
    dst: u8,
    ncells: u16,
    bytes: u32,
    lossless: bool,
    /// L2BM's estimated departure (its descriptor's `due`).
    due: u64,
    /// Its start of packet: cycle and line.
    arrived: u64,
    line: usize,
}

impl Pkt {
    /// Whether the packet had fully arrived before `other` started: in a FIFO queue (or a
    /// flow) it is ahead of `other` whether the DUT enqueues at the first or the last cell.
    fn ahead_of(&self, other: &Pkt) -> bool {
        self.arrived + self.ncells as u64 <= other.arrived
    }
}

/// Why a packet no longer in the buffer left it.
#[derive(Debug, Clone)]
enum Gone {
    /// The DUT dropped it.
    Dropped,
    /// The model dropped it (decisions inferred), for these reasons.
    DroppedByModel(String),
    /// Reported lost: a later packet of its FIFO queue or flow departed first.
    Lost,
}

/// The packet being read on an egress port.
#[derive(Debug, Clone, Copy)]
struct Reading {
    key: Key,
    /// Next cell to read.
    next: u16,
    /// The stream does not list the cells: cell `k` is read `k` cycles after the first.
    implied: bool,
    /// Its first cell's cycle and line.
    start: (u64, usize),
}

/// The packet whose cells a stream that lists them is giving on an ingress port.
#[derive(Debug, Clone, Copy)]
struct Listed {
    key: Key,
    /// Next cell expected.
    next: u16,
    ncells: u16,
    /// Its start of packet's cycle and line.
    start: (u64, usize),
}

/// The decision source of the model's admission in follow mode: the DUT's decision for
/// one start of packet (`None` when decisions are inferred: the model's own), keeping the
/// model's decision and the inputs it read for the comparison.
struct DutDecision {
    dut: Option<Result<Plan, String>>,
    model: Option<(QueueView, Result<Plan, DropReason>)>,
}

impl DecisionSource for DutDecision {
    type Reason = String;

    fn admission(
        &mut self,
        _: &Request,
        v: &QueueView,
        model: Result<Plan, DropReason>,
    ) -> Result<Plan, String> {
        self.model = Some((*v, model));
        self.dut
            .take()
            .unwrap_or_else(|| model.map_err(|r| r.name().to_string()))
    }
}

/// `cell 3 of flow 1 seq 7 (its start of packet: cycle 40, line 12)`.
fn next_of(next: u16, key: Key, start: (u64, usize)) -> String {
    format!(
        "cell {next} of flow {} seq {} (its start of packet: cycle {}, line {})",
        key.0, key.1, start.0, start.1
    )
}

#[derive(Debug, Default, Clone)]
struct EgressState {
    reading: Option<Reading>,
    /// The last cell read, and the last start (cycle, bytes of that packet).
    last_read: Option<u64>,
    last_start: Option<(u64, u32)>,
}

/// Sent PFC of one ingress queue (index [`PORT_LEVEL`]: the port's POFF): the model's level and the
/// DUT's, since when they differ, and what the model's last change was for.
#[derive(Debug, Clone, Default)]
struct PfcPair {
    model: bool,
    dut: bool,
    since: u64,
    model_last: bool,
    why: String,
    reported: bool,
}

/// The follower for one buffer policy.
pub struct Follower<P: BufferPolicy> {
    d: Derived,
    opts: Options,
    policy: P,
    adm: Admission,
    acct: Accounting,
    dt: DtThreshold,
    dt_lossy: DtThreshold,
    fsm: PfcFsm,
    /// The received pauses (the model's block, with the DUT's received frames), and per
    /// egress port the cycle from which each class's pause (index [`PORT_LEVEL`]: the
    /// port's) holds, kept from the block's edges for `--pfc-tolerance`.
    rx: PfcRx,
    rx_since: Vec<[Option<u64>; QUEUES + 1]>,
    requests: FlowRequests,
    dirty: Dirty,
    batch: Vec<(usize, Event)>,
    batch_cycle: u64,
    done: Option<u64>,
    packets: HashMap<Key, Pkt>,
    gone: HashMap<Key, Gone>,
    gone_order: VecDeque<Key>,
    /// Admitted packets in arrival order, per FIFO egress queue and per flow (seq): a
    /// departure proves the ones ahead of it lost. Departed ones are dropped lazily.
    queue_order: HashMap<(u8, u8), VecDeque<Key>>,
    flow_order: HashMap<u32, VecDeque<u32>>,
    /// Cells buffered per egress queue.
    queue_cells: Vec<[u32; QUEUES]>,
    last_seq: HashMap<u32, u32>,
    egress: Vec<EgressState>,
    pfc: Vec<[PfcPair; QUEUES + 1]>,
    flow_hist: HashMap<u32, VecDeque<String>>,
    port_hist: Vec<VecDeque<String>>,
    last_was_counters: bool,
    /// The last cycle with an event or a cell read.
    busy: u64,
    /// Cells of admitted packets arrived (written, in a DUT that writes a cell in the cycle
    /// it arrives) before the packet arriving on each port, that packet's start and cells
    /// if the stream implies them, and the cells read: the free list expected.
    written: u64,
    writing: Vec<Option<(u64, u16)>>,
    /// Per ingress port, the packet whose listed cells are arriving.
    listing: Vec<Option<Listed>>,
    read_cells: u64,
    /// The batch being closed is the stream's last (its decisions may be cut off).
    closing: bool,
    out: Vec<Divergence>,
}

/// What a divergence concerns: the flow and port whose last events give its context, and
/// the egress queue (port, queue) it is counted under.
#[derive(Debug, Clone, Copy, Default)]
struct Whose {
    flow: Option<u32>,
    port: Option<u8>,
    queue: Option<(u8, u8)>,
}

impl Whose {
    /// A start of packet: its ingress port, and the egress queue it is headed for.
    fn arrival(a: &Arrive) -> Self {
        Self {
            flow: Some(a.flow),
            port: Some(a.port),
            queue: Some((a.dst, a.prio)),
        }
    }

    /// A cell read: its egress port and queue.
    fn departure(dep: &Depart) -> Self {
        Self {
            flow: Some(dep.flow),
            port: Some(dep.port),
            queue: Some((dep.port, dep.queue)),
        }
    }

    fn port(port: u8) -> Self {
        Self {
            port: Some(port),
            ..Self::default()
        }
    }

    fn flow(self, flow: u32) -> Self {
        Self {
            flow: Some(flow),
            ..self
        }
    }
}

fn push_hist(h: &mut VecDeque<String>, s: String) {
    if h.len() == HISTORY {
        h.pop_front();
    }
    h.push_back(s);
}

impl<P: BufferPolicy> Follower<P> {
    pub fn new(d: Derived, policy: P, opts: Options) -> Self {
        let (dt, dt_lossy) = pool_units(&d);
        let ports = d.ports;
        Self {
            policy,
            adm: Admission::new(&d),
            acct: Accounting::new(ports),
            dt,
            dt_lossy,
            fsm: PfcFsm::new(&d),
            rx: PfcRx::new(&d),
            rx_since: vec![[None; QUEUES + 1]; ports],
            requests: FlowRequests::new(ports),
            dirty: Dirty::new(ports),
            batch: Vec::new(),
            batch_cycle: 0,
            done: None,
            packets: HashMap::new(),
            gone: HashMap::new(),
            gone_order: VecDeque::new(),
            queue_order: HashMap::new(),
            flow_order: HashMap::new(),
            queue_cells: vec![[0; QUEUES]; ports],
            last_seq: HashMap::new(),
            egress: vec![EgressState::default(); ports],
            pfc: vec![Default::default(); ports],
            flow_hist: HashMap::new(),
            port_hist: vec![VecDeque::new(); ports],
            last_was_counters: false,
            busy: 0,
            written: 0,
            writing: vec![None; ports],
            listing: vec![None; ports],
            read_cells: 0,
            closing: false,
            out: Vec::new(),
            opts,
            d,
        }
    }

    /// The cycles before `end` that still have work without events: implied cell reads,
    /// and the few idle cycles in which `T`, `X_on` and QON follow the last changes.
    fn run_until(&mut self, end: u64) {
        loop {
            let next = self.done.map_or(0, |c| c + 1);
            let implied = self
                .egress
                .iter()
                .any(|e| e.reading.is_some_and(|r| r.implied));
            let settling = self.done.is_some() && next <= self.busy + IDLE_STEPS;
            if next >= end || !(implied || settling) {
                return;
            }
            self.cycle(next, Vec::new());
        }
    }

    fn close_batch(&mut self) {
        let batch = std::mem::take(&mut self.batch);
        self.cycle(self.batch_cycle, batch);
    }

    /// Record a divergence (the flow's and port's last events as its context).
    fn report(
        &mut self,
        cycle: u64,
        line: usize,
        check: &'static str,
        event: String,
        expected: String,
        whose: Whose,
    ) {
        let mut history = Vec::new();
        if let Some(h) = whose.flow.and_then(|f| self.flow_hist.get(&f)) {
            history.extend(h.iter().map(|e| format!("flow: {e}")));
        }
        if let Some(h) = whose.port.map(|p| &self.port_hist[p as usize]) {
            history.extend(h.iter().map(|e| format!("port: {e}")));
        }
        self.out.push(Divergence {
            cycle,
            line,
            check,
            event,
            expected,
            history,
            queue: whose.queue,
        });
    }

    fn note(&mut self, flow: u32, port: u8, line: usize, ev: &Event) {
        let s = format!("line {line}: {}", ev.to_line());
        push_hist(self.flow_hist.entry(flow).or_default(), s.clone());
        push_hist(&mut self.port_hist[port as usize], s);
    }

    /// One cycle: the units of the model's phase table in its order, with the DUT's events
    /// of the cycle, then the edge.
    fn cycle(&mut self, c: u64, mut batch: Vec<(usize, Event)>) {
        if self.done.is_some_and(|d| c > d + 1) {
            // Idle cycles jumped: the registers hold what they settled to, but for the
            // received pauses that ran out meanwhile (one edge applies them all).
            self.rx_edge(c - 1);
            self.done = Some(c - 1);
        }
        batch.sort_by_key(|(_, e)| e.rank());
        self.dirty.clear();
        // A snapshot of the DUT's registers is compared with the registered state, which
        // no phase of the cycle changes.
        for (line, ev) in &batch {
            if let Event::Counters(k) = ev {
                self.counters(*line, k);
            }
        }
        let mut active = !batch.is_empty();
        for (_, units) in PHASES {
            for &unit in units {
                let done = match unit {
                    Unit::Dt => {
                        let occupancy = pool_occupancy(&self.d, &self.acct).0;
                        Block::eval(&mut self.dt, c, occupancy, ())
                    }
                    Unit::DtLossy => {
                        let occupancy = pool_occupancy(&self.d, &self.acct).1;
                        Block::eval(&mut self.dt_lossy, c, occupancy, ())
                    }
                    Unit::PolicyUnits => {
                        self.policy
                            .thresholds(self.dt.t(), &self.acct, &mut self.dirty);
                        Ok(())
                    }
                    Unit::PfcRx => {
                        self.pfc_frames(c, &batch);
                        Ok(())
                    }
                    Unit::Admission => {
                        self.admission(c, &batch);
                        Ok(())
                    }
                    Unit::PfcGen => self.pfc_generation(c),
                    Unit::Transmitters => {
                        active |= self.egress(c, &batch);
                        Ok(())
                    }
                    // The DUT's datapath: checked by what departs, not followed.
                    Unit::HcfPeriods | Unit::Ecm | Unit::Ecn | Unit::WriteStage => Ok(()),
                };
                if let Err(e) = done {
                    self.model_error(c, &format!("{unit:?} unit"), e);
                }
            }
        }
        if let Err(e) = self.acct.commit(c) {
            self.report(
                c,
                0,
                "accounting",
                "the cycle's charges and releases".into(),
                format!("a counter would wrap: {e}"),
                Whose::default(),
            );
            self.acct = Accounting::new(self.d.ports);
        }
        let edges = [
            ("DT threshold", self.dt.commit(c)),
            ("lossy DT threshold", self.dt_lossy.commit(c)),
            ("buffer policy", self.policy.commit(c)),
            ("PFC generation", self.fsm.commit(c)),
        ];
        for (block, result) in edges {
            if let Err(e) = result {
                self.model_error(c, &format!("{block} at the edge"), e);
            }
        }
        self.rx_edge(c);
        if active {
            self.busy = c;
        }
        self.done = Some(c);
    }

    /// An error of one of the model's blocks: the model cannot follow the DUT there.
    fn model_error(&mut self, c: u64, block: &str, e: BlockError) {
        self.report(
            c,
            0,
            "model error",
            format!("the events up to cycle {c}"),
            format!("the model's {block} failed: {e}"),
            Whose::default(),
        );
    }

    /// PFC reception's unit: the frames the DUT received in cycle `c`, latched into the
    /// model's `PfcRx`, and the ones it sent (the sent levels that stayed apart too long
    /// are reported first).
    fn pfc_frames(&mut self, c: u64, batch: &[(usize, Event)]) {
        self.pfc_settle(c);
        for (line, ev) in batch {
            match ev {
                Event::Pfc(p) if p.dir == Dir::Received => {
                    let (frame, mode) = self.received(p);
                    self.rx.latch(p.port, frame, mode);
                }
                Event::Pfc(p) => self.sent(*line, p),
                _ => {}
            }
        }
    }

    /// `PfcRx`'s edge at `at`, and the cycle from which each pause it holds now holds:
    /// `at + 1` for one that was not held before.
    fn rx_edge(&mut self, at: u64) {
        if let Err(e) = self.rx.commit(at) {
            self.model_error(at, "received PFC at the edge", e);
        }
        for p in each_port(self.rx.probed()) {
            let (qoff, poff) = (self.rx.qoff(p), self.rx.poff(p));
            for (i, since) in self.rx_since[p].iter_mut().enumerate() {
                let held = if i == PORT_LEVEL {
                    poff
                } else {
                    qoff >> i & 1 != 0
                };
                *since = held.then(|| since.unwrap_or(at + 1));
            }
        }
    }

    /// PFC generation's unit: the requests admission made, the QON/PON checks, and the
    /// model's level changes of the cycle.
    fn pfc_generation(&mut self, c: u64) -> Result<(), BlockError> {
        let pause = self.fsm.state();
        let before: Vec<u8> = (0..self.d.ports).map(|p| pause.off(p)).collect();
        let poff = pause.poff();
        let done = Block::eval(
            &mut self.fsm,
            c,
            FsmIn {
                requests: &mut self.requests,
                // Follow mode evaluates every cycle it runs: the QON/PON checks always.
                recheck: true,
                policy: &mut self.policy,
                acct: &self.acct,
                t: self.dt.t(),
            },
            &mut self.dirty,
        );
        self.model_pfc(c + 1, &before, poff);
        done
    }

    /// A received `pfc` event as the frame `PfcRx` latches and the mode it is read in: a
    /// PAUSE with `quanta` in a switch that runs the IEEE 802.1Qbb timer loads the timer;
    /// one without (the stream need not carry them), or in an `on-off` switch, holds
    /// until the RESUME.
    fn received(&self, p: &Pfc) -> (PfcFrame, PfcRxMode) {
        let (quanta, mode) = match (p.pause, p.quanta, self.d.cfg.pfc_rx_mode) {
            (false, _, mode) => (0, mode),
            (true, Some(q), PfcRxMode::Timer) => (q, PfcRxMode::Timer),
            (true, ..) => (u16::MAX, PfcRxMode::OnOff),
        };
        let mut f = PfcFrame {
            class_enable: 1 << p.class,
            port_level: p.port_level == Some(true),
            ..PfcFrame::default()
        };
        if f.port_level {
            f.class_enable = 0xFF;
            f.quanta = [quanta; QUEUES];
        } else {
            f.quanta[p.class as usize] = quanta;
        }
        (f, mode)
    }

    /// The DUT's sent PFC: its level of the queue changes at `p.cycle`.
    fn sent(&mut self, line: usize, p: &Pfc) {
        self.pfc_overdue(p.port as usize, pfc_index(p), p.cycle);
        let pair = &mut self.pfc[p.port as usize][pfc_index(p)];
        if pair.dut == p.pause {
            let what = if p.pause { "PAUSE" } else { "RESUME" };
            self.report(
                p.cycle,
                line,
                "PFC",
                Event::Pfc(*p).to_line(),
                format!("a {what} of a queue already in that state"),
                Whose::port(p.port),
            );
            return;
        }
        pair.dut = p.pause;
        pair.since = p.cycle;
        pair.model_last = false;
        pair.reported = false;
    }

    /// The model's QOFF/POFF changes of this cycle, stamped `at`.
    fn model_pfc(&mut self, at: u64, before: &[u8], poff: u64) {
        for (port, &old) in before.iter().enumerate() {
            let new = self.fsm.state().off(port);
            for class in 0..QUEUES {
                if (old ^ new) >> class & 1 != 0 {
                    let [_, shared, headroom] = self.acct.group(port, class);
                    let why = if new >> class & 1 != 0 {
                        "a packet of the queue went to headroom or was dropped".to_string()
                    } else {
                        format!(
                            "headroom {headroom} and shared {shared} below X_on (T {} - delta {})",
                            self.dt.t(),
                            self.d.delta_cells
                        )
                    };
                    self.model_change(port, class, new >> class & 1 != 0, at, why);
                }
            }
        }
        let now = self.fsm.state().poff();
        for port in 0..self.d.ports {
            if (now ^ poff) >> port & 1 != 0 {
                let why = "the port's occupancy crossed X_poff or X_pon (DSH Eq. 6)".into();
                self.model_change(port, PORT_LEVEL, now >> port & 1 != 0, at, why);
            }
        }
    }

    fn model_change(&mut self, port: usize, idx: usize, level: bool, at: u64, why: String) {
        self.pfc_overdue(port, idx, at);
        let pair = &mut self.pfc[port][idx];
        pair.model = level;
        pair.since = at;
        pair.model_last = true;
        pair.why = why;
        pair.reported = false;
    }

    /// Sent PFC levels that have differed for more than the tolerance by cycle `now`.
    fn pfc_settle(&mut self, now: u64) {
        for port in 0..self.d.ports {
            for idx in 0..=QUEUES {
                self.pfc_overdue(port, idx, now);
            }
        }
    }

    /// Report queue `idx` of `port` if the model's and the DUT's levels differ since more
    /// than the tolerance before `now` (a change in `now` would come too late).
    fn pfc_overdue(&mut self, port: usize, idx: usize, now: u64) {
        let tol = self.opts.pfc_tolerance;
        let p = &self.pfc[port][idx];
        if p.model == p.dut || p.reported || p.since + tol >= now {
            return;
        }
        let what = if idx == PORT_LEVEL { "port-level " } else { "" };
        let level = if p.model_last { p.model } else { p.dut };
        let frame = if level { "PAUSE" } else { "RESUME" };
        let (check, expected) = if p.model_last {
            (
                "PFC missing",
                format!(
                    "the model sent a {what}{frame} at cycle {} ({}); the DUT did not within {tol} cycles",
                    p.since, p.why
                ),
            )
        } else {
            (
                "PFC spurious",
                format!(
                    "the DUT sent a {what}{frame} at cycle {} that the model did not send within {tol} cycles (model level: {})",
                    p.since,
                    if p.model { "paused" } else { "resumed" }
                ),
            )
        };
        let class = if idx == PORT_LEVEL {
            "port".to_string()
        } else {
            format!("class {idx}")
        };
        let since = p.since;
        self.pfc[port][idx].reported = true;
        self.report(
            since,
            0,
            check,
            format!("sent PFC of ingress port {port} {class}"),
            expected,
            Whose::port(port as u8),
        );
    }

    /// The starts of packet of cycle `c` in port order, each with its decision.
    fn admission(&mut self, c: u64, batch: &[(usize, Event)]) {
        self.adm.start_cycle();
        self.policy.start_admission();
        let mut decided = HashSet::new();
        for (line, ev) in batch {
            let Event::Arrive(a) = ev else { continue };
            self.note(a.flow, a.port, *line, ev);
            if let Some(k) = a.cell {
                self.ingress_cell(c, *line, a, k);
            }
            let port = a.port as usize;
            if let Some((sop, n)) = self.writing[port].take() {
                self.written += (n as u64).min(c - sop);
            }
            if a.cell.unwrap_or(0) != 0 {
                self.written += self.packets.contains_key(&(a.flow, a.seq)) as u64;
                continue;
            }
            let decision = batch.iter().find(|(_, e)| match e {
                Event::Admit(x) => (x.port, x.flow, x.seq) == (a.port, a.flow, a.seq),
                Event::Drop(x) => (x.port, x.flow, x.seq) == (a.port, a.flow, a.seq),
                _ => false,
            });
            let Some((dline, dev)) = decision else {
                if self.opts.decisions == Decisions::Inferred {
                    if self.fresh(c, *line, a, ev) {
                        self.decide(c, *line, a, None);
                    }
                    continue;
                }
                if self.closing {
                    // The stream ends in this cycle: the DUT may have had no time to
                    // report the decision.
                    continue;
                }
                self.report(
                    c,
                    *line,
                    "decision missing",
                    ev.to_line(),
                    "an admit or drop for this start of packet in the same cycle".into(),
                    Whose::arrival(a),
                );
                continue;
            };
            decided.insert(*dline);
            self.note(a.flow, a.port, *dline, dev);
            if self.fresh(c, *line, a, ev) {
                self.decide(c, *dline, a, Some(dev));
            }
        }
        for (line, ev) in batch {
            let (flow, port) = match ev {
                Event::Admit(x) => (x.flow, x.port),
                Event::Drop(x) => (x.flow, x.port),
                _ => continue,
            };
            if !decided.contains(line) {
                self.report(
                    c,
                    *line,
                    "decision without arrival",
                    ev.to_line(),
                    "no start of packet of that flow and seq on that port in this cycle".into(),
                    Whose::port(port).flow(flow),
                );
            }
        }
    }

    /// Cell `k` of `a` listed on its ingress port: the cells of a packet come in order, all
    /// of them, before the next packet's.
    fn ingress_cell(&mut self, c: u64, line: usize, a: &Arrive, k: u16) {
        let port = a.port as usize;
        let key = (a.flow, a.seq);
        let open = self.listing[port].filter(|l| l.next < l.ncells);
        let expected = match open {
            Some(l) if l.key == key && l.next == k => None,
            None if k == 0 => None,
            Some(l) => Some(next_of(l.next, l.key, l.start)),
            None => Some("a start of packet (cell 0)".into()),
        };
        if let Some(expected) = expected {
            self.report(
                c,
                line,
                "ingress framing",
                Event::Arrive(*a).to_line(),
                expected,
                Whose::arrival(a),
            );
        }
        if k == 0 {
            self.listing[port] = Some(Listed {
                key,
                next: 1,
                ncells: a.ncells,
                start: (c, line),
            });
        } else if let Some(l) = open.filter(|l| l.key == key) {
            self.listing[port] = Some(Listed { next: k + 1, ..l });
        }
    }

    /// Whether the start of packet `a` (event `ev`, line `line`) is not already in the
    /// buffer; a duplicate is reported.
    fn fresh(&mut self, c: u64, line: usize, a: &Arrive, ev: &Event) -> bool {
        if !self.packets.contains_key(&(a.flow, a.seq)) {
            return true;
        }
        self.report(
            c,
            line,
            "duplicated arrival",
            ev.to_line(),
            "a (flow, seq) not already in the buffer".into(),
            Whose::arrival(a),
        );
        false
    }

    /// The model's decision for `a` against the DUT's `dev`; then the DUT's is applied.
    /// Without `dev` (decisions inferred) the model's own is applied, and a drop is
    /// remembered with the model's reasons in case the packet departs.
    fn decide(&mut self, c: u64, line: usize, a: &Arrive, dev: Option<&Event>) {
        let lossless = self.d.is_lossless(a.prio);
        let r = Request::new(
            a.port as usize,
            a.prio as usize,
            a.dst as usize,
            a.ncells as u32,
            lossless,
        );
        let dut = match dev {
            Some(Event::Admit(Admit { segments: s, .. })) => Some(Ok(Plan {
                seg0: s.private as u16,
                seg1: s.shared as u16,
                headroom: s.headroom as u16,
            })),
            Some(Event::Drop(x)) => Some(Err(x.reason.clone())),
            Some(_) => unreachable!("a decision"),
            None => None,
        };
        let mut source = DutDecision { dut, model: None };
        // The model's admission with the DUT's decision: its outcome charged and
        // flow-controlled as the model's own would be. The DUT's datapath classifies.
        let admitted = self.adm.admit(
            &r,
            Registered {
                dt: &self.dt,
                dt_lossy: &self.dt_lossy,
                pause: self.fsm.state(),
            },
            &mut self.acct,
            &mut self.policy,
            &mut source,
            &mut OneList,
            &mut self.requests,
            c,
        );
        let (v, model) = source
            .model
            .expect("admission consults its decision source");
        let model_s = model.map_err(|r| r.name().to_string());
        let dut = admitted.map(|a| (a.plan, a.due));
        let hcf_drop = dut.as_ref().is_err_and(|r| r == DropReason::HcfFull.name());
        let dut_s = dut.as_ref().map(|&(plan, _)| plan).map_err(String::clone);
        if model_s != dut_s && !hcf_drop || dev.is_none() && dut.is_err() {
            let pool = if lossless {
                self.adm.pools().lossless
            } else {
                self.adm.pools().lossy
            };
            let why = format!(
                "queue (port {}, prio {}) {}: private {} of phi {}, shared {} vs T {} ({}), pool shared in use {} + {} cells of B_s {}{}",
                a.port,
                a.prio,
                if lossless { "lossless" } else { "lossy" },
                v.private,
                pool.private,
                v.shared,
                v.t,
                if v.shared < v.t { "below" } else { "at or above" },
                v.shared_in_use,
                a.ncells.saturating_sub(pool.private.saturating_sub(v.private) as u16),
                pool.shared_segment,
                if lossless {
                    format!(", headroom {} of eta {}", v.headroom, self.d.eta_cells[a.port as usize])
                } else {
                    String::new()
                }
            );
            let expected = format!("{}; {why}", describe(&model_s));
            match dev {
                Some(dev) => self.report(
                    c,
                    line,
                    "admission",
                    dev.to_line(),
                    expected,
                    Whose::arrival(a),
                ),
                None => self.forget((a.flow, a.seq), Gone::DroppedByModel(expected)),
            }
        }
        match dut {
            Ok((plan, due)) => {
                let sum = plan.seg0 as u32 + plan.seg1 as u32 + plan.headroom as u32;
                if let Some(dev) = dev.filter(|_| sum != a.ncells as u32) {
                    self.report(
                        c,
                        line,
                        "admission",
                        dev.to_line(),
                        format!("segments adding up to the packet's {} cells", a.ncells),
                        Whose::arrival(a),
                    );
                }
                match a.cell {
                    Some(_) => self.written += 1,
                    None => self.writing[a.port as usize] = Some((c, a.ncells)),
                }
                self.packets.insert(
                    (a.flow, a.seq),
                    Pkt {
                        src: a.port,
                        prio: a.prio,
                        dst: a.dst,
                        ncells: a.ncells,
                        bytes: a.bytes,
                        lossless,
                        due,
                        arrived: c,
                        line,
                    },
                );
                self.queue_cells[a.dst as usize][a.prio as usize] += a.ncells as u32;
                if self.fifo(a.dst, a.prio) {
                    let q = self.queue_order.entry((a.dst, a.prio)).or_default();
                    q.push_back((a.flow, a.seq));
                }
                self.flow_order.entry(a.flow).or_default().push_back(a.seq);
            }
            Err(reason) => {
                if let Some(dev) = dev.filter(|_| lossless) {
                    self.report(
                        c,
                        line,
                        "lossless drop",
                        dev.to_line(),
                        format!("a lossless packet is never dropped (the DUT said {reason})"),
                        Whose::arrival(a),
                    );
                }
                if dev.is_some() {
                    self.forget((a.flow, a.seq), Gone::Dropped);
                }
            }
        }
    }

    /// Remember why packet `key` left (the oldest memory is forgotten past [`GONE_KEPT`]).
    fn forget(&mut self, key: Key, why: Gone) {
        if self.gone_order.len() == GONE_KEPT {
            if let Some(k) = self.gone_order.pop_front() {
                self.gone.remove(&k);
            }
        }
        self.gone.insert(key, why);
        self.gone_order.push_back(key);
    }

    /// The cells read in cycle `c`: the departures listed, and the implied next cells of
    /// the packets being read. Returns whether any cell was read.
    fn egress(&mut self, c: u64, batch: &[(usize, Event)]) -> bool {
        let mut listed = 0u64;
        let mut any = false;
        for (line, ev) in batch {
            let Event::Depart(dep) = ev else { continue };
            self.note(dep.flow, dep.port, *line, ev);
            listed |= 1 << dep.port;
            any = true;
            match dep.cell.unwrap_or(0) {
                0 => self.start(c, *line, dep),
                k => self.next_cell(c, *line, dep, k),
            }
        }
        for port in 0..self.d.ports {
            let Some(r) = self.egress[port].reading else {
                continue;
            };
            if r.implied && listed >> port & 1 == 0 {
                any = true;
                self.read(c, port, r.key);
            }
        }
        any
    }

    /// The first cell of a packet read on `dep.port`.
    fn start(&mut self, c: u64, line: usize, dep: &Depart) {
        let key = (dep.flow, dep.seq);
        let port = dep.port as usize;
        let here = Event::Depart(*dep).to_line();
        let flow_seq = self.last_seq.get(&dep.flow).copied();
        let Some(pkt) = self.packets.get(&key).copied() else {
            let (check, expected) = match self.gone.get(&key) {
                Some(Gone::DroppedByModel(why)) => ("admission", why.clone()),
                Some(Gone::Dropped) => (
                    "departure of a dropped packet",
                    "the packet was dropped at its arrival".into(),
                ),
                Some(Gone::Lost) => match flow_seq.filter(|&s| dep.seq < s) {
                    Some(s) => (
                        "flow order",
                        format!("the flow's packets depart in seq order; seq {s} already departed (and this packet was reported lost then)"),
                    ),
                    None => (
                        "departure of a lost packet",
                        "a later packet of its FIFO queue departed first and it was reported lost".into(),
                    ),
                },
                None if flow_seq.is_some_and(|s| dep.seq <= s) => (
                    "duplicated departure",
                    format!(
                        "the flow's packets up to seq {} have departed",
                        flow_seq.unwrap_or(0)
                    ),
                ),
                None => (
                    "departure of a packet that never arrived",
                    "no admitted packet with that flow and seq".into(),
                ),
            };
            self.report(c, line, check, here, expected, Whose::departure(dep));
            return;
        };
        if let Some(r) = self.egress[port].reading.filter(|r| !r.implied) {
            self.report(
                c,
                line,
                "egress framing",
                here.clone(),
                format!(
                    "{} before a new start of packet",
                    next_of(r.next, r.key, r.start)
                ),
                Whose::departure(dep),
            );
        }
        self.lost_before(c, line, dep, &pkt);
        if let Some(s) = flow_seq.filter(|&s| dep.seq < s) {
            self.report(
                c,
                line,
                "flow order",
                here.clone(),
                format!("the flow's packets depart in seq order; seq {s} already departed"),
                Whose::departure(dep),
            );
        }
        if (dep.port, dep.queue, dep.src, dep.ncells) != (pkt.dst, pkt.prio, pkt.src, pkt.ncells) {
            self.report(
                c,
                line,
                "descriptor",
                here.clone(),
                format!(
                    "port {} queue {} src {} ncells {}, as it arrived",
                    pkt.dst, pkt.prio, pkt.src, pkt.ncells
                ),
                Whose::departure(dep),
            );
        }
        if let Some(why) = self.paused(c, port, dep.queue as usize) {
            self.report(
                c,
                line,
                "departure from a paused queue",
                here.clone(),
                why,
                Whose::departure(dep),
            );
        }
        if let Some(why) = self.too_fast(c, port) {
            self.report(
                c,
                line,
                "faster than line rate",
                here,
                why,
                Whose::departure(dep),
            );
        }
        self.last_seq.insert(dep.flow, dep.seq);
        let e = &mut self.egress[port];
        e.last_start = Some((c, pkt.bytes));
        e.reading = Some(Reading {
            key,
            next: 0,
            implied: dep.cell.is_none(),
            start: (c, line),
        });
        self.dequeued(&pkt, c);
        self.read(c, port, key);
    }

    /// Whether `PfcRx` pauses queue `queue` of `port` in cycle `c` since more than the
    /// tolerance: why, if it does.
    fn paused(&self, c: u64, port: usize, queue: usize) -> Option<String> {
        let tol = self.opts.pfc_tolerance;
        let (i, from) = [queue, PORT_LEVEL]
            .into_iter()
            .filter_map(|i| self.rx_since[port][i].map(|from| (i, from)))
            .find(|&(_, from)| from + tol <= c)?;
        let (scope, until) = if i == PORT_LEVEL {
            ("the port", self.rx.port_until(port))
        } else {
            ("the queue", self.rx.until(port, i))
        };
        let end = if until == u64::MAX {
            String::new()
        } else {
            // Paused after the edges before `until`: free from the cycle after it.
            format!(" until cycle {}", until + 1)
        };
        Some(format!(
            "no start: {scope} is paused from cycle {from} (received PFC, tolerance {tol} cycles){end}"
        ))
    }

    /// Whether egress queue `queue` of `port` is FIFO (not HCF).
    fn fifo(&self, port: u8, queue: u8) -> bool {
        !self
            .d
            .hcf
            .iter()
            .any(|h| (h.port, h.queue) == (port, queue))
    }

    /// The policy's record of a packet leaving its egress queue in cycle `c` (L2BM).
    fn dequeued(&mut self, pkt: &Pkt, c: u64) {
        if P::RECORDS_DEQUEUES {
            let (src, prio, dst) = (pkt.src as usize, pkt.prio as usize, pkt.dst as usize);
            let r = Request::new(src, prio, dst, pkt.ncells.into(), pkt.lossless);
            self.policy.dequeued(r.qi, r.eq, r.n, pkt.due, c);
        }
    }

    /// The packets a start of `pkt` (departure `dep`) proves lost: those ahead of it in
    /// its FIFO egress queue and in its flow that have not started. Each is reported once
    /// and released, so that the next checks see the DUT's real occupancy.
    fn lost_before(&mut self, c: u64, line: usize, dep: &Depart, pkt: &Pkt) {
        let key = (dep.flow, dep.seq);
        let fifo = self.fifo(pkt.dst, pkt.prio);
        let mut lost = Vec::new();
        if fifo {
            let q = self.queue_order.entry((pkt.dst, pkt.prio)).or_default();
            ahead(q, key, &self.packets, pkt, &mut lost, |k| k);
        }
        let seqs = self.flow_order.entry(dep.flow).or_default();
        ahead(seqs, dep.seq, &self.packets, pkt, &mut lost, |s| {
            (dep.flow, s)
        });
        for k in lost {
            let Some(o) = self.packets.remove(&k) else {
                continue;
            };
            let (dst, prio) = (o.dst as usize, o.prio as usize);
            let held = self.queue_cells[dst][prio];
            for _ in 0..o.ncells {
                self.acct.push(Update::Release {
                    port: o.src,
                    pg: o.prio,
                    lossless: o.lossless,
                    dport: o.dst,
                });
            }
            self.read_cells += o.ncells as u64;
            self.queue_cells[dst][prio] = held.saturating_sub(o.ncells.into());
            self.dequeued(&o, c);
            self.forget(k, Gone::Lost);
            let scope = if o.dst == pkt.dst && o.prio == pkt.prio && fifo {
                format!("its FIFO egress queue (port {} queue {})", o.dst, o.prio)
            } else {
                format!("its flow {}", k.0)
            };
            self.report(
                c,
                line,
                "lost packet",
                Event::Depart(*dep).to_line(),
                format!(
                    "flow {} seq {} ({} cells, arrived in cycle {} on port {}, line {}) read before this later packet of {scope}; it never departed and is released from the model (egress queue port {} queue {} held {held} cells)",
                    k.0, k.1, o.ncells, o.arrived, o.src, o.line, o.dst, o.prio
                ),
                Whose {
                    flow: Some(k.0),
                    port: Some(dep.port),
                    queue: Some((o.dst, o.prio)),
                },
            );
        }
    }

    /// Whether a packet may start on `port` in cycle `c`: why not, if it may not.
    fn too_fast(&self, c: u64, port: usize) -> Option<String> {
        let e = &self.egress[port];
        match self.opts.line_rate {
            LineRate::CellPerCycle => {
                if let Some(r) = e.reading {
                    return Some(format!(
                        "one cell per cycle: the previous packet (flow {} seq {}) has cells left to read",
                        r.key.0, r.key.1
                    ));
                }
                e.last_read
                    .filter(|&l| l >= c)
                    .map(|l| format!("one cell per cycle: a cell was already read in cycle {l}"))
            }
            LineRate::Scenario => {
                let (s, bytes) = e.last_start?;
                let wire = self.d.wire_bits(bytes) as u128 * self.d.clock_hz as u128
                    / self.d.rate_bps[port] as u128;
                let min = (wire as u64).saturating_sub(1);
                (c - s < min).then(|| {
                    format!(
                        "the previous packet ({bytes} B, {} wire bits) started in cycle {s} and holds the port's {} b/s line for {wire} cycles (tolerance 1)",
                        self.d.wire_bits(bytes),
                        self.d.rate_bps[port]
                    )
                })
            }
        }
    }

    /// A listed cell `k > 0` of the packet being read on `dep.port`.
    fn next_cell(&mut self, c: u64, line: usize, dep: &Depart, k: u16) {
        let port = dep.port as usize;
        match self.egress[port].reading {
            Some(r) if r.key == (dep.flow, dep.seq) && r.next == k => self.read(c, port, r.key),
            r => {
                let expected = match r {
                    Some(r) => next_of(r.next, r.key, r.start),
                    None => "a start of packet (cell 0)".into(),
                };
                self.report(
                    c,
                    line,
                    "egress framing",
                    Event::Depart(*dep).to_line(),
                    expected,
                    Whose::departure(dep),
                );
            }
        }
    }

    /// Cell `next` of packet `key` read on `port` in cycle `c`: released at the edge.
    fn read(&mut self, c: u64, port: usize, key: Key) {
        let Some(pkt) = self.packets.get(&key).copied() else {
            self.egress[port].reading = None;
            return;
        };
        self.acct.push(Update::Release {
            port: pkt.src,
            pg: pkt.prio,
            lossless: pkt.lossless,
            dport: pkt.dst,
        });
        self.read_cells += 1;
        self.read_before_arrival(c, port, key, &pkt);
        let held = &mut self.queue_cells[pkt.dst as usize][pkt.prio as usize];
        *held = held.saturating_sub(1);
        let e = &mut self.egress[port];
        e.last_read = Some(c);
        if let Some(r) = &mut e.reading {
            r.next += 1;
            if r.next == pkt.ncells {
                e.reading = None;
                self.packets.remove(&key);
            }
        }
    }

    /// A stream that lists arriving cells must have listed the cell read now: one that
    /// departs before it arrived is an ingress framing divergence (once per packet).
    fn read_before_arrival(&mut self, c: u64, port: usize, key: Key, pkt: &Pkt) {
        let src = pkt.src as usize;
        let Some(l) = self.listing[src].filter(|l| l.key == key && l.next < l.ncells) else {
            return;
        };
        let next = self.egress[port].reading.map_or(0, |r| r.next);
        if next < l.next {
            return;
        }
        self.listing[src] = None;
        self.report(
            c,
            0,
            "ingress framing",
            format!(
                "cell {next} of flow {} seq {} read on egress port {port}",
                key.0, key.1
            ),
            format!(
                "the stream lists the arriving cells, and not yet {}",
                next_of(l.next, key, l.start)
            ),
            Whose {
                flow: Some(key.0),
                port: Some(pkt.src),
                queue: Some((pkt.dst, pkt.prio)),
            },
        );
    }

    /// A snapshot of the DUT's registers against the model's.
    fn counters(&mut self, line: usize, k: &Counters) {
        let here = Event::Counters(k.clone()).to_line();
        let c = k.cycle;
        if k.t != self.dt.t() {
            self.report(
                c,
                line,
                "threshold",
                here.clone(),
                format!(
                    "T = {} (alpha 2^{} x (B_s {} - S), S registered two cycles before)",
                    self.dt.t(),
                    self.d.cfg.alpha_log2,
                    self.dt.segment_cells
                ),
                Whose::default(),
            );
        }
        let total = self.acct.total.get();
        if k.total != total {
            self.report(
                c,
                line,
                "accounting",
                here.clone(),
                format!("{total} cells charged and not released"),
                Whose::default(),
            );
        }
        if let Some(free) = k.free {
            let n = self.d.total_cells as u64;
            let arriving: u64 = self
                .writing
                .iter()
                .flatten()
                .map(|&(sop, cells)| (cells as u64).min(c - sop))
                .sum();
            let written = self.written + arriving;
            let want = (n + self.read_cells).checked_sub(written);
            if want != Some(free as u64) {
                self.report(
                    c,
                    line,
                    "leaked cells",
                    here,
                    format!(
                        "a free list of {} pointers ({n} cells - {written} written + {} read); {} unaccounted for",
                        want.map_or("?".into(), |w| w.to_string()),
                        self.read_cells,
                        want.map_or(0, |w| w as i64 - free as i64)
                    ),
                    Whose::default(),
                );
            }
        }
    }
}

/// Walk `order` (arrival order) up to `item`, the one departing as `pkt`: the entries ahead
/// of it still buffered and fully arrived before it go to `lost`; departed ones are
/// dropped; the walk stops at the first one it cannot judge, and `item` leaves the order.
fn ahead<T: Copy + PartialEq>(
    order: &mut VecDeque<T>,
    item: T,
    packets: &HashMap<Key, Pkt>,
    pkt: &Pkt,
    lost: &mut Vec<Key>,
    key: impl Fn(T) -> Key,
) {
    while let Some(&front) = order.front() {
        if front == item {
            order.pop_front();
            return;
        }
        match packets.get(&key(front)) {
            None => {}
            Some(o) if o.ahead_of(pkt) => lost.push(key(front)),
            Some(_) => break,
        }
        order.pop_front();
    }
    if let Some(i) = order.iter().position(|&x| x == item) {
        order.remove(i);
    }
}

impl<P: BufferPolicy> Follower<P> {
    /// The packets still buffered per egress queue: `port 1 queue 3: 2 packets (9
    /// cells), ...`.
    fn left_by_queue(&self) -> String {
        let mut by: std::collections::BTreeMap<(u8, u8), (u32, u32)> = Default::default();
        for p in self.packets.values() {
            let (n, cells) = by.entry((p.dst, p.prio)).or_default();
            *n += 1;
            *cells += p.ncells as u32;
        }
        let parts: Vec<_> = by
            .iter()
            .map(|((port, q), (n, cells))| {
                format!("port {port} queue {q}: {n} packets ({cells} cells)")
            })
            .collect();
        parts.join(", ")
    }
}

/// The `pfc` state slot: the class, or 8 for a port-level frame.
fn pfc_index(p: &Pfc) -> usize {
    if p.port_level == Some(true) {
        PORT_LEVEL
    } else {
        p.class as usize
    }
}

fn describe(d: &Result<Plan, String>) -> String {
    match d {
        Ok(p) => format!(
            "admit private {} shared {} headroom {}",
            p.seg0, p.seg1, p.headroom
        ),
        Err(r) => format!("drop {r}"),
    }
}

impl<P: BufferPolicy> Replay for Follower<P> {
    /// One event of the stream (in order).
    fn feed(&mut self, line: usize, ev: Event) {
        if matches!(ev, Event::Meta(_)) {
            return;
        }
        let c = ev.cycle();
        if c != self.batch_cycle && !self.batch.is_empty() {
            self.close_batch();
        }
        self.run_until(c);
        self.batch_cycle = c;
        self.last_was_counters = matches!(ev, Event::Counters(_));
        self.batch.push((line, ev));
    }

    /// The end of the stream: the cells still being read, the PFC levels still apart, and
    /// the packets no event accounts for.
    fn finish(&mut self) {
        if !self.batch.is_empty() {
            self.closing = true;
            self.close_batch();
        }
        self.run_until(u64::MAX);
        let end = self.done.unwrap_or(0);
        self.pfc_settle(end + 1);
        if !self.last_was_counters && !self.packets.is_empty() {
            let mut keys: Vec<_> = self.packets.keys().copied().collect();
            keys.sort_unstable();
            let first: Vec<String> = keys
                .iter()
                .take(4)
                .map(|(f, s)| format!("flow {f} seq {s}"))
                .collect();
            self.report(
                end,
                0,
                "cells left in the buffer",
                "end of the stream".into(),
                format!(
                    "{} admitted packets ({} cells) never departed, e.g. {}; by egress queue: {}",
                    self.packets.len(),
                    self.acct.total.get(),
                    first.join(", "),
                    self.left_by_queue()
                ),
                Whose::default(),
            );
        }
    }

    fn take(&mut self) -> Vec<Divergence> {
        std::mem::take(&mut self.out)
    }

    fn count(&self) -> usize {
        self.out.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::parse_line;
    use hw_model::pfc::state::PauseState;
    use hw_model::policy::{Pools, QueueView, Sih};
    use hw_model::ports::FlowRequests;
    use hw_model::SwitchConfig;

    /// SIH whose edge fails from cycle `from` on: a model block broken on purpose.
    struct BrokenEdge {
        sih: Sih,
        from: u64,
    }

    impl BufferPolicy for BrokenEdge {
        fn thresholds(&mut self, t: u32, acct: &Accounting, dirty: &mut Dirty) {
            self.sih.thresholds(t, acct, dirty);
        }

        fn decide(
            &mut self,
            r: &Request,
            v: QueueView,
            pools: &Pools,
            acct: &Accounting,
            pause: &PauseState,
        ) -> Result<Plan, DropReason> {
            self.sih.decide(r, v, pools, acct, pause)
        }

        fn flow_control(
            &self,
            r: &Request,
            outcome: Option<&Plan>,
            shared: u32,
            acct: &Accounting,
            req: &mut FlowRequests,
        ) {
            self.sih.flow_control(r, outcome, shared, acct, req);
        }

        fn resume_queues(
            &mut self,
            port: usize,
            off: u8,
            acct: &Accounting,
            t: u32,
            dirty: &mut Dirty,
        ) -> u8 {
            self.sih.resume_queues(port, off, acct, t, dirty)
        }

        fn commit(&mut self, cycle: u64) -> Result<(), BlockError> {
            if cycle >= self.from {
                return Err(BlockError("the recorder would wrap".into()));
            }
            Ok(())
        }
    }

    /// A packet of one cell admitted to its private buffer and sent.
    const STREAM: [&str; 3] = [
        r#"{"cycle":1,"event":"arrive","port":0,"prio":0,"flow":1,"seq":0,"bytes":64,"dst":1,"ncells":1}"#,
        r#"{"cycle":1,"event":"admit","port":0,"flow":1,"seq":0,"segments":{"private":1,"shared":0,"headroom":0}}"#,
        r#"{"cycle":4,"event":"depart","port":1,"queue":0,"flow":1,"seq":0,"src":0,"ncells":1}"#,
    ];

    fn follow(from: u64) -> Vec<Divergence> {
        let d = SwitchConfig::small().build().unwrap();
        let sih = Sih::new(&d, pool_units(&d).0.t());
        let mut f = Follower::new(d, BrokenEdge { sih, from }, Options::default());
        for (i, line) in STREAM.iter().enumerate() {
            f.feed(i + 1, parse_line(line).unwrap());
        }
        f.finish();
        f.take()
    }

    /// `STREAM`'s packet (egress port 1, queue 0) departing in cycle `at`, after a PAUSE
    /// of its queue received in cycle 2 (`quanta` if given); `clear` empties the
    /// block's pause by hand once cycle 2 has run. The divergences found.
    fn paused_departure(quanta: Option<u16>, at: u64, clear: bool) -> Vec<Divergence> {
        let d = SwitchConfig::small().build().unwrap();
        let sih = Sih::new(&d, pool_units(&d).0.t());
        let mut f = Follower::new(d, sih, Options::default());
        let q = quanta.map_or(String::new(), |q| format!(r#","quanta":{q}"#));
        let pause = format!(
            r#"{{"cycle":2,"event":"pfc","port":1,"class":0,"pause":true,"dir":"received"{q}}}"#
        );
        let depart = STREAM[2].replace(r#""cycle":4"#, &format!(r#""cycle":{at}"#));
        for (i, line) in [STREAM[0], STREAM[1], &pause].iter().enumerate() {
            f.feed(i + 1, parse_line(line).unwrap());
        }
        f.close_batch();
        assert!(f.rx.qoff(1) & 1 != 0, "the block holds the PAUSE");
        if clear {
            let resume = PfcFrame {
                class_enable: 1,
                ..PfcFrame::default()
            };
            f.rx.latch(1, resume, PfcRxMode::Timer);
        }
        f.feed(4, parse_line(&depart).unwrap());
        f.finish();
        f.take()
    }

    /// A start past the tolerance (2 cycles) after the pause took hold (cycle 3) is
    /// reported, with or without quanta; within it, or once the pause ran out, it is not.
    #[test]
    fn a_departure_from_a_queue_the_block_pauses_is_reported() {
        let checks = |v: Vec<Divergence>| v.iter().map(|d| d.check).collect::<Vec<_>>();
        for quanta in [None, Some(u16::MAX)] {
            let found = paused_departure(quanta, 5, false);
            assert_eq!(checks(found.clone()), ["departure from a paused queue"]);
            assert!(
                found[0].expected.contains("paused from cycle 3"),
                "{}",
                found[0]
            );
            assert_eq!(
                found[0].expected.contains("until cycle"),
                quanta.is_some(),
                "{}",
                found[0]
            );
            assert_eq!(paused_departure(quanta, 4, false), vec![], "{quanta:?}");
        }
        // One quantum at 100 Gb/s and 1 GHz: paused in cycles 3 to 8; the edge before the
        // departure, after the idle cycles jumped, runs the timer out.
        assert_eq!(paused_departure(Some(1), 20, false), vec![]);
        assert_eq!(
            checks(paused_departure(Some(1), 8, false)),
            ["departure from a paused queue"]
        );
    }

    /// Companion: the same departures with the block's pause cleared by hand are not.
    #[test]
    fn a_departure_after_the_blocks_pause_is_cleared_is_not() {
        for quanta in [None, Some(u16::MAX)] {
            assert_eq!(paused_departure(quanta, 5, true), vec![], "{quanta:?}");
        }
    }

    #[test]
    fn a_model_error_is_reported_not_dropped() {
        assert_eq!(follow(u64::MAX), vec![], "the model without the fault");
        let found = follow(3);
        let errors: Vec<_> = found.iter().filter(|d| d.check == "model error").collect();
        assert!(!errors.is_empty(), "{found:?}");
        assert_eq!(errors[0].cycle, 3);
        assert!(
            errors[0]
                .expected
                .contains("buffer policy at the edge failed: the recorder would wrap"),
            "{}",
            errors[0]
        );
    }
}
