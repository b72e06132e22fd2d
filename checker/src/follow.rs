//! Follow mode: the DUT's arrivals, decisions and departures drive the model's counters,
//! thresholds and PFC state machines (hw-model's own blocks: `Accounting`, `DtThreshold`,
//! the buffer policy, `Admission`'s decision inputs and charges, `PfcFsm`), and every DUT
//! decision is checked against the one the model makes from the same state. The model's
//! state follows what the DUT did (its segments are charged, not the model's), so one
//! divergence does not cascade into the next, as in ibex's co-simulation.
//!
//! Within a cycle the order is the model's phase table (`hw-model/src/mmu.rs`): the DT
//! threshold `T = alpha (B_s - S)` (DSH Eq. 2) and the policy's units from the registered
//! counters; admission of the cycle's starts of packet, in port order, with the running
//! sum of shared grants; PFC generation (QOFF on headroom or a lossless drop, QON below
//! `X_on = T - delta`, never in the cycle that charged the queue); the reads of departing
//! cells; then the edge (charges before releases).
//!
//! Idle stretches are jumped: after three idle cycles nothing the rules read can change
//! (`T` follows the counters two cycles later), so memory and time grow with the events,
//! not with the cycles.

use crate::events::{Admit, Arrive, Counters, Depart, Dir, Event, Pfc};
use crate::{Divergence, LineRate, Options, Replay};
use hw_model::accounting::{Accounting, Update};
use hw_model::admission::Admission;
use hw_model::dirty::Dirty;
use hw_model::dt_threshold::{pool_occupancy, pool_units, DtThreshold};
use hw_model::pfc::fsm::{FsmIn, PfcFsm};
use hw_model::policy::{BufferPolicy, Plan, Request};
use hw_model::ports::FlowRequests;
use hw_model::{Derived, DropReason, PfcRxMode};
use rtl::{Block, Clocked};
use std::collections::{HashMap, HashSet, VecDeque};

/// Events of a flow and of a port kept for a divergence's context.
const HISTORY: usize = 4;
/// Dropped packets remembered (to name a departure of one); older ones are forgotten.
const DROPS_KEPT: usize = 1 << 16;
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
}

/// The packet being read on an egress port.
#[derive(Debug, Clone, Copy)]
struct Reading {
    key: Key,
    /// Next cell to read.
    next: u16,
    /// The stream does not list the cells: cell `k` is read `k` cycles after the first.
    implied: bool,
}

#[derive(Debug, Default, Clone)]
struct EgressState {
    reading: Option<Reading>,
    /// The last cell read, and the last start (cycle, bytes of that packet).
    last_read: Option<u64>,
    last_start: Option<(u64, u32)>,
}

/// Received pause of one egress queue (or of a whole port): starts are refused in
/// `from..until`.
#[derive(Debug, Clone, Copy)]
struct RxPause {
    from: u64,
    until: u64,
}

/// Sent PFC of one ingress queue (index 8: the port's POFF): the model's level and the
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
    requests: FlowRequests,
    dirty: Dirty,
    batch: Vec<(usize, Event)>,
    batch_cycle: u64,
    done: Option<u64>,
    packets: HashMap<Key, Pkt>,
    dropped: HashSet<Key>,
    dropped_order: VecDeque<Key>,
    last_seq: HashMap<u32, u32>,
    egress: Vec<EgressState>,
    rx: Vec<[Option<RxPause>; 9]>,
    pfc: Vec<[PfcPair; 9]>,
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
    read_cells: u64,
    /// The batch being closed is the stream's last (its decisions may be cut off).
    closing: bool,
    out: Vec<Divergence>,
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
            requests: FlowRequests::new(ports),
            dirty: Dirty::new(ports),
            batch: Vec::new(),
            batch_cycle: 0,
            done: None,
            packets: HashMap::new(),
            dropped: HashSet::new(),
            dropped_order: VecDeque::new(),
            last_seq: HashMap::new(),
            egress: vec![EgressState::default(); ports],
            rx: vec![[None; 9]; ports],
            pfc: vec![Default::default(); ports],
            flow_hist: HashMap::new(),
            port_hist: vec![VecDeque::new(); ports],
            last_was_counters: false,
            busy: 0,
            written: 0,
            writing: vec![None; ports],
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
    #[allow(clippy::too_many_arguments)]
    fn report(
        &mut self,
        cycle: u64,
        line: usize,
        check: &'static str,
        event: String,
        expected: String,
        flow: Option<u32>,
        port: Option<u8>,
    ) {
        let mut history = Vec::new();
        if let Some(h) = flow.and_then(|f| self.flow_hist.get(&f)) {
            history.extend(h.iter().map(|e| format!("flow: {e}")));
        }
        if let Some(h) = port.map(|p| &self.port_hist[p as usize]) {
            history.extend(h.iter().map(|e| format!("port: {e}")));
        }
        self.out.push(Divergence {
            cycle,
            line,
            check,
            event,
            expected,
            history,
        });
    }

    fn note(&mut self, flow: u32, port: u8, line: usize, ev: &Event) {
        let s = format!("line {line}: {}", ev.to_line());
        push_hist(self.flow_hist.entry(flow).or_default(), s.clone());
        push_hist(&mut self.port_hist[port as usize], s);
    }

    /// One cycle: the phases of the model's table, with the DUT's events of the cycle.
    fn cycle(&mut self, c: u64, mut batch: Vec<(usize, Event)>) {
        if self.done.is_some_and(|d| c > d + 1) {
            // Idle cycles jumped: the registers hold what they settled to.
            self.done = Some(c - 1);
        }
        batch.sort_by_key(|(_, e)| e.rank());
        self.dirty.clear();
        let (occ, occ_lossy) = pool_occupancy(&self.d, &self.acct);
        Block::eval(&mut self.dt, c, occ, ()).ok();
        Block::eval(&mut self.dt_lossy, c, occ_lossy, ()).ok();
        self.policy
            .thresholds(self.dt.t(), &self.acct, &mut self.dirty);
        let mut active = !batch.is_empty();
        for (line, ev) in &batch {
            if let Event::Counters(k) = ev {
                self.counters(*line, k);
            }
        }
        self.pfc_settle(c);
        for (line, ev) in &batch {
            match ev {
                Event::Pfc(p) if p.dir == Dir::Received => self.received(p),
                Event::Pfc(p) => self.sent(*line, p),
                _ => {}
            }
        }
        self.admission(c, &batch);
        let before: Vec<u8> = (0..self.d.ports).map(|p| self.fsm.state().off(p)).collect();
        let poff = self.fsm.state().poff();
        Block::eval(
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
        )
        .ok();
        self.model_pfc(c + 1, &before, poff);
        active |= self.egress(c, &batch);
        if let Err(e) = self.acct.commit(c) {
            self.report(
                c,
                0,
                "accounting",
                "the cycle's charges and releases".into(),
                format!("a counter would wrap: {e}"),
                None,
                None,
            );
            self.acct = Accounting::new(self.d.ports);
        }
        self.dt.commit(c).ok();
        self.dt_lossy.commit(c).ok();
        self.policy.commit(c).ok();
        self.fsm.commit(c).ok();
        if active {
            self.busy = c;
        }
        self.done = Some(c);
    }

    fn received(&mut self, p: &Pfc) {
        let (port, idx) = (p.port as usize, pfc_index(p));
        let start = p.cycle + 1;
        self.rx[port][idx] = if !p.pause {
            // A start in the cycle of the RESUME still sees the pause.
            self.rx[port][idx].map(|r| RxPause {
                until: r.until.min(start),
                ..r
            })
        } else {
            // IEEE 802.1Qbb timer: the quanta's time, if the switch runs the timer.
            let until = match (p.quanta, self.d.cfg.pfc_rx_mode) {
                (Some(q), PfcRxMode::Timer) => start + self.d.pause_cycles(port, q),
                _ => u64::MAX,
            };
            Some(RxPause { from: start, until })
        };
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
                None,
                Some(p.port),
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
            for class in 0..8 {
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
                self.model_change(port, 8, now >> port & 1 != 0, at, why);
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
            for idx in 0..9 {
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
        let what = if idx == 8 { "port-level " } else { "" };
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
        let class = if idx == 8 {
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
            None,
            Some(port as u8),
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
            let port = a.port as usize;
            if let Some((sop, n)) = self.writing[port].take() {
                self.written += (n as u64).min(c - sop);
            }
            if a.cell.unwrap_or(0) != 0 {
                self.written += self.packets.contains_key(&(a.flow, a.seq)) as u64;
                continue;
            }
            let key = (a.flow, a.seq);
            let decision = batch.iter().find(|(_, e)| match e {
                Event::Admit(x) => (x.port, x.flow, x.seq) == (a.port, a.flow, a.seq),
                Event::Drop(x) => (x.port, x.flow, x.seq) == (a.port, a.flow, a.seq),
                _ => false,
            });
            let Some((dline, dev)) = decision else {
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
                    Some(a.flow),
                    Some(a.port),
                );
                continue;
            };
            decided.insert(*dline);
            self.note(a.flow, a.port, *dline, dev);
            if self.packets.contains_key(&key) {
                self.report(
                    c,
                    *line,
                    "duplicated arrival",
                    ev.to_line(),
                    "a (flow, seq) not already in the buffer".into(),
                    Some(a.flow),
                    Some(a.port),
                );
                continue;
            }
            self.decide(c, *dline, a, dev);
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
                    Some(flow),
                    Some(port),
                );
            }
        }
    }

    /// The model's decision for `a` against the DUT's `dev`; then the DUT's is applied.
    fn decide(&mut self, c: u64, line: usize, a: &Arrive, dev: &Event) {
        let lossless = self.d.is_lossless(a.prio);
        let r = Request::new(
            a.port as usize,
            a.prio as usize,
            a.dst as usize,
            a.ncells as u32,
            lossless,
        );
        let v = self
            .adm
            .view(&r, &self.acct, &self.dt, &self.dt_lossy, &mut self.policy);
        let model = self
            .policy
            .decide(&r, v, self.adm.pools(), &self.acct, self.fsm.state());
        let dut: Result<Plan, String> = match dev {
            Event::Admit(Admit { segments: s, .. }) => Ok(Plan {
                seg0: s.private as u16,
                seg1: s.shared as u16,
                headroom: s.headroom as u16,
            }),
            Event::Drop(x) => Err(x.reason.clone()),
            _ => unreachable!("a decision"),
        };
        let model_s = model.map_err(|r| r.name().to_string());
        let hcf_drop = dut.as_ref().is_err_and(|r| r == DropReason::HcfFull.name());
        if model_s != dut && !hcf_drop {
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
            self.report(
                c,
                line,
                "admission",
                dev.to_line(),
                format!("{}; {why}", describe(&model_s)),
                Some(a.flow),
                Some(a.port),
            );
        }
        let shared = v.shared;
        match dut {
            Ok(plan) => {
                if plan.seg0 as u32 + plan.seg1 as u32 + plan.headroom as u32 != a.ncells as u32 {
                    self.report(
                        c,
                        line,
                        "admission",
                        dev.to_line(),
                        format!("segments adding up to the packet's {} cells", a.ncells),
                        Some(a.flow),
                        Some(a.port),
                    );
                }
                self.adm.charge(&r, &plan, &mut self.acct);
                if lossless {
                    self.policy.flow_control(
                        &r,
                        Some(&plan),
                        shared,
                        &self.acct,
                        &mut self.requests,
                    );
                }
                let due = self.policy.admitted(&r, &self.acct, c);
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
                    },
                );
            }
            Err(reason) => {
                if lossless {
                    self.policy
                        .flow_control(&r, None, shared, &self.acct, &mut self.requests);
                    self.report(
                        c,
                        line,
                        "lossless drop",
                        dev.to_line(),
                        format!("a lossless packet is never dropped (the DUT said {reason})"),
                        Some(a.flow),
                        Some(a.port),
                    );
                }
                if self.dropped_order.len() == DROPS_KEPT {
                    if let Some(k) = self.dropped_order.pop_front() {
                        self.dropped.remove(&k);
                    }
                }
                self.dropped.insert((a.flow, a.seq));
                self.dropped_order.push_back((a.flow, a.seq));
            }
        }
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
            let (check, expected) = if self.dropped.contains(&key) {
                (
                    "departure of a dropped packet",
                    "the packet was dropped at its arrival".into(),
                )
            } else if flow_seq.is_some_and(|s| dep.seq <= s) {
                (
                    "duplicated departure",
                    format!(
                        "the flow's packets up to seq {} have departed",
                        flow_seq.unwrap_or(0)
                    ),
                )
            } else {
                (
                    "departure of a packet that never arrived",
                    "no admitted packet with that flow and seq".into(),
                )
            };
            self.report(
                c,
                line,
                check,
                here,
                expected,
                Some(dep.flow),
                Some(dep.port),
            );
            return;
        };
        if let Some(s) = flow_seq.filter(|&s| dep.seq < s) {
            self.report(
                c,
                line,
                "flow order",
                here.clone(),
                format!("the flow's packets depart in seq order; seq {s} already departed"),
                Some(dep.flow),
                Some(dep.port),
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
                Some(dep.flow),
                Some(dep.port),
            );
        }
        let paused = [dep.queue as usize, 8]
            .into_iter()
            .filter_map(|i| self.rx[port][i].map(|r| (i, r)))
            .find(|(_, r)| r.from + self.opts.pfc_tolerance <= c && c < r.until);
        if let Some((i, r)) = paused {
            let scope = if i == 8 { "the port" } else { "the queue" };
            self.report(
                c,
                line,
                "departure from a paused queue",
                here.clone(),
                format!(
                    "no start: {scope} is paused from cycle {} (received PFC, tolerance {} cycles){}",
                    r.from,
                    self.opts.pfc_tolerance,
                    if r.until == u64::MAX {
                        String::new()
                    } else {
                        format!(" until cycle {}", r.until)
                    }
                ),
                Some(dep.flow),
                Some(dep.port),
            );
        }
        if let Some(why) = self.too_fast(c, port) {
            self.report(
                c,
                line,
                "faster than line rate",
                here,
                why,
                Some(dep.flow),
                Some(dep.port),
            );
        }
        self.last_seq.insert(dep.flow, dep.seq);
        let e = &mut self.egress[port];
        e.last_start = Some((c, pkt.bytes));
        e.reading = Some(Reading {
            key,
            next: 0,
            implied: dep.cell.is_none(),
        });
        if P::RECORDS_DEQUEUES {
            let (qi, eq) = (pkt.src as usize * 8, pkt.dst as usize * 8);
            let prio = pkt.prio as usize;
            self.policy
                .dequeued(qi + prio, eq + prio, pkt.ncells.into(), pkt.due, c);
        }
        self.read(c, port, key);
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
                    Some(r) => format!("cell {} of flow {} seq {}", r.next, r.key.0, r.key.1),
                    None => "a start of packet (cell 0)".into(),
                };
                self.report(
                    c,
                    line,
                    "egress framing",
                    Event::Depart(*dep).to_line(),
                    expected,
                    Some(dep.flow),
                    Some(dep.port),
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
                None,
                None,
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
                None,
                None,
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
                    None,
                    None,
                );
            }
        }
    }
}

/// The `pfc` state slot: the class, or 8 for a port-level frame.
fn pfc_index(p: &Pfc) -> usize {
    if p.port_level == Some(true) {
        8
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
                    "{} admitted packets ({} cells) never departed, e.g. {}",
                    self.packets.len(),
                    self.acct.total.get(),
                    first.join(", ")
                ),
                None,
                None,
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
