//! The simulator: sources, link partners, the MMU, sinks, monitor and scoreboard, clocked
//! together one core cycle at a time.
//!
//! Order within cycle `now` (0-based; the MMU's own cycle counter is `now + 1` after it):
//! 1. sources due at `now`, and TCP senders with ACKs or timeouts due, hand packets to
//!    their partners' class queues; a partner handed a single packet on an idle line with
//!    nothing queued starts it at once, as its step would (`LinkPartner::offer`);
//! 2. every busy link partner applies PFC frames due now, clocks its ECM reaction point
//!    (timers, then ECM frames due now), transmits, and delivers the beat that reaches the
//!    MMU now into `Inputs::ingress`;
//! 3. scripted downstream PFC frames due now go into `Inputs::pfc_rx`;
//! 4. the MMU steps; the monitor reports its cell events and departures to the scoreboard
//!    (and the cell trace), the sinks absorb the departures (TCP receivers send their ACKs
//!    back), and its PFC and ECM frames start travelling to the partners (ECM frames out of
//!    band, arriving after the link's propagation delay; see `link_partner`);
//! 5. the waveform samples the MMU's signals.
//!
//! The loop allocates nothing: one `Outputs` and one ingress vector are reused, and only
//! busy partners are visited (a 64-bit mask, as ports are at most 64), only in a cycle in
//! which the earliest of their wake-ups is due. TCP flows are the
//! exception: their event heap and per-flow queues grow with the windows they reach. So is
//! a packet run of more than one packet (a burst, a message, a flow's backlog in its NIC):
//! one small box when it starts (`stimulus::packet_run`).

use crate::events::EventTrace;
use crate::monitor::{self, CellTxn, TxnKind};
use crate::ns3::Ns3Out;
use crate::scoreboard::Scoreboard;
use crate::summary::{
    EcmRpSummary, EcnSummary, EgressSummary, HcfSummary, LimiterSummary, LosslessSummary, RunMeta,
    SaiCounters, Summary, SCHEMA_VERSION,
};
use crate::trace::{CellTrace, EcmTrace, RpTrace};
use crate::waves::{WaveSignals, Waves};
use hw_model::config::MAX_PORTS;
use hw_model::{
    Beat, DropReason, EcmFrame, EcmKind, HeadroomMode, Inputs, InvariantError, Mmu, Outputs,
    PfcFrame, Policy, Segment,
};
use scenario::{Overrides, Plan, Scenario, ScenarioError};
use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::path::Path;
use std::time::Instant;
use stimulus::dcqcn::DcqcnFlows;
use stimulus::int_cc::IntCcFlows;
use stimulus::link_partner::LinkPartner;
use stimulus::reaction_point::{LimiterState, RpEvent, RpEventKind};
use stimulus::sink::{PfcScript, Sinks};
use stimulus::source::{MessageCounts, MessageStats, Sources};
use stimulus::tcp::{TcpFlows, TcpStats};
use thiserror::Error;
use wave::{Format, SignalFilter, WaveError, Window};

/// Cycles between two calls of the progress callback (a power of two: a mask test).
pub const PROGRESS_EVERY: u64 = 1 << 14;
/// Lossless packet drops the summary describes; the rest are only counted.
pub const FIRST_DROPS: usize = 4;

/// Lossless packets dropped, and the first [`FIRST_DROPS`] with their cause.
#[derive(Debug, Default)]
struct LosslessDrops {
    packets: u64,
    first: Vec<String>,
}

impl LosslessDrops {
    /// The first cell of a lossless packet was dropped for `reason` in `cycle`.
    #[cold]
    fn note(&mut self, cycle: u64, reason: DropReason, b: &Beat, mmu: &Mmu, plan: &Plan) {
        self.packets += 1;
        if self.first.len() < FIRST_DROPS {
            self.first.push(drop_cause(cycle, reason, b, mmu, plan));
        }
    }
}

/// A lossless drop and its cause: what the headroom held and what it was sized for, and
/// whether the packet or the port's link is outside that (the plan's headroom warnings).
fn drop_cause(cycle: u64, reason: DropReason, b: &Beat, mmu: &Mmu, plan: &Plan) -> String {
    let d = &plan.derived;
    let (p, pg) = (b.hdr.src as usize, b.hdr.prio as usize);
    let s = d.eta_sizing[p];
    let held = match d.cfg.policy {
        Policy::Dsh => format!(
            "the port's insurance headroom held {} of eta = {} cells",
            (0..8).map(|g| mmu.ingress_counters(p, g)[2]).sum::<u32>(),
            s.cells
        ),
        Policy::Sih | Policy::L2bm => format!(
            "the queue's headroom held {} of eta = {} cells",
            mmu.ingress_counters(p, pg)[2],
            s.cells
        ),
    };
    let sized = match d.cfg.headroom {
        HeadroomMode::Cells => format!(
            "sized for W = {} B of lossless packets of {}..={} B",
            s.wire_bytes,
            d.cfg.headroom_min_packet_bytes.unwrap_or(d.cfg.mtu_bytes),
            d.cfg.mtu_bytes
        ),
        HeadroomMode::PaperBytes => format!(
            "W = {} B rounded to cells (headroom = \"paper-bytes\")",
            s.wire_bytes
        ),
    };
    let pkt = d.packet_cost(b.hdr.len as u32);
    let why = if pkt.denser_than(&s.densest) {
        format!(
            "this packet fills {pkt}, more than the {} eta is sized for",
            s.densest
        )
    } else if let Some(w) = plan
        .headroom_warnings
        .iter()
        .find(|w| w.ports & (1 << p) != 0)
    {
        format!("port {p} has a headroom warning: {w}")
    } else {
        "no headroom warning for this port: eta should have held it".to_string()
    };
    format!(
        "cycle {cycle}: {} at port {p} pg {pg}, flow {} seq {} of {} B ({} cells): {held}, {sized}; {why}",
        reason.name(),
        b.hdr.flow,
        b.hdr.seq,
        b.hdr.len,
        b.ncells
    )
}

/// CPU time of the calling thread, seconds: what a run costs whatever else shares the core.
pub fn thread_cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

/// The name of the ECM frame trace in [`RunError::Output`].
pub const ECM_TRACE: &str = "ECM trace";
/// The name of the rate-limiter event trace in [`RunError::Output`].
pub const RP_TRACE: &str = "RP trace";
/// The name of the `--trace-events` stream in [`RunError::Output`].
pub const EVENT_TRACE: &str = "event trace";
/// The name of the `--ns3-out` files in [`RunError::Output`].
pub const NS3_OUTPUT: &str = "ns-3 output";

/// A run that could not complete.
#[derive(Debug, Error)]
pub enum RunError {
    /// The model reported a broken invariant while stepping.
    #[error("model invariant broken: {0}")]
    Model(#[from] InvariantError),
    #[error("cell trace: {0}")]
    Trace(#[source] io::Error),
    /// Writing another output ([`ECM_TRACE`], [`RP_TRACE`], [`NS3_OUTPUT`]) failed.
    #[error("{0}: {1}")]
    Output(&'static str, #[source] io::Error),
    #[error("waveform: {0}")]
    Wave(#[from] WaveError),
}

/// Where observed cell transactions go: the scoreboard always, the trace if asked for.
/// Also the ECM and reaction-point traces.
struct Observers {
    scoreboard: Scoreboard,
    trace: Option<CellTrace<File>>,
    trace_err: Option<io::Error>,
    ecm_trace: Option<EcmTrace<File>>,
    rp_trace: Option<RpTrace<File>>,
    out_err: Option<(&'static str, io::Error)>,
}

impl Observers {
    fn ecm_frame(&mut self, cycle: u64, f: &EcmFrame) {
        if let Some(tr) = &mut self.ecm_trace {
            if let Err(e) = tr.record(cycle, f) {
                self.out_err.get_or_insert((ECM_TRACE, e));
            }
        }
    }

    fn rp_event(&mut self, e: &RpEvent) {
        if let Some(tr) = &mut self.rp_trace {
            if let Err(err) = tr.record(e) {
                self.out_err.get_or_insert((RP_TRACE, err));
            }
        }
    }

    /// Inlined into the loop: without a trace, a cell transaction is the scoreboard's
    /// counting and checking alone (an injected beat, one increment).
    #[inline(always)]
    fn record(&mut self, t: &CellTxn) {
        self.scoreboard.record(t);
        if self.trace.is_some() {
            self.trace_txn(*t);
        }
    }

    /// Write `t` into the cell trace.
    #[inline(never)]
    fn trace_txn(&mut self, t: CellTxn) {
        if let Some(tr) = &mut self.trace {
            if let Err(e) = tr.record(&t) {
                self.trace_err.get_or_insert(e);
            }
        }
    }
}

/// When each link partner must be stepped next.
#[derive(Debug)]
struct Wakes {
    /// Per partner, the next cycle it must be stepped in (`u64::MAX`: asleep); one entry per
    /// bit of `active`, so that a partner found in it indexes this without a bounds check.
    at: [u64; MAX_PORTS],
    /// Bit `p`: partner `p` is awake (`at[p]` is finite).
    active: u64,
    /// The earliest of `at`: a cycle before it steps no partner, without a visit of each.
    first: u64,
}

impl Wakes {
    fn new() -> Self {
        Self {
            at: [u64::MAX; MAX_PORTS],
            active: 0,
            first: u64::MAX,
        }
    }

    /// Partner `p` must be stepped in cycle `at` (or earlier, if it already has to be).
    #[inline]
    fn wake(&mut self, p: usize, at: u64) {
        self.at[p] = self.at[p].min(at);
        self.active |= 1 << p;
        self.first = self.first.min(at);
    }
}

/// A runnable testbench built from a validated scenario.
pub struct Sim {
    plan: Plan,
    mmu: Mmu,
    sources: Sources,
    tcp: TcpFlows,
    dcqcn: DcqcnFlows,
    int_cc: IntCcFlows,
    partners: Vec<LinkPartner>,
    wakes: Wakes,
    /// Bit `p`: `ingress[p]` holds a beat to clear after the MMU step.
    delivered: u64,
    /// `Inputs::ingress` of every possible port; the MMU is given the first `ports` (an array,
    /// so that a partner found in a bit mask indexes it without a bounds check).
    ingress: [Option<Beat>; MAX_PORTS],
    pfc_rx: Vec<(u8, PfcFrame)>,
    out: Outputs,
    sinks: Sinks,
    script: PfcScript,
    obs: Observers,
    waves: Option<Waves>,
    /// `--ns3-out`: HPCC-format files written at the end of the run.
    ns3: Option<Ns3Out>,
    /// `--trace-events`: the co-simulation event stream.
    events: Option<EventTrace>,
    pfc_pause_frames: u64,
    /// The cycle of the first PAUSE frame the MMU sent (where the view opens).
    first_pause: Option<u64>,
    pfc_port_pause_frames: u64,
    pfc_port_resume_frames: u64,
    pfc_resume_frames: u64,
    pfc_scripted: u64,
    /// ECM frames whose `Qoff` or `Qdelta` left its saturation bounds: (count, first).
    ecm_out_of_bounds: (u64, Option<String>),
    lossless_drops: LosslessDrops,
    /// Only the open-loop sources, the partners and the model work in a cycle: no TCP or
    /// DCQCN flow, no scripted PFC frame, nothing attached (cell, ECM or reaction-point
    /// trace, event stream, waveform, ns-3 output). [`step`](Self::step) then passes over
    /// the per-cycle checks of those with one test; every `attach_*` clears it.
    bare: bool,
    now: u64,
}

impl Sim {
    /// Validate `scenario` with `ov` applied and build the testbench around a fresh MMU.
    pub fn new(scenario: &Scenario, ov: Overrides) -> Result<Self, ScenarioError> {
        Ok(Self::from_plan(scenario.plan(&ov)?))
    }

    /// Build from an already validated plan.
    pub fn from_plan(plan: Plan) -> Self {
        let d = &plan.derived;
        let partners = (0..d.ports)
            .map(|p| LinkPartner::with_rp(p as u8, plan.links[p], d, &plan.ecm_rp, plan.seed))
            .collect();
        let script = PfcScript::new(plan.pfc_script.clone());
        let mut sim = Self {
            mmu: Mmu::new(d.clone()),
            sources: Sources::new(&plan.flows, plan.seed, d),
            tcp: TcpFlows::new(&plan.flows, d.clock_hz),
            dcqcn: DcqcnFlows::new(&plan.flows, plan.seed, d),
            int_cc: IntCcFlows::new(&plan.flows, d),
            partners,
            wakes: Wakes::new(),
            delivered: 0,
            ingress: [None; MAX_PORTS],
            pfc_rx: Vec::with_capacity(script.max_per_cycle()),
            out: Outputs::with_ports(d.ports),
            sinks: Sinks::new(d.ports),
            obs: Observers {
                scoreboard: Scoreboard::with_ports(plan.flows.len(), d.ports),
                trace: None,
                trace_err: None,
                ecm_trace: None,
                rp_trace: None,
                out_err: None,
            },
            script,
            waves: None,
            ns3: None,
            events: None,
            pfc_pause_frames: 0,
            first_pause: None,
            pfc_port_pause_frames: 0,
            pfc_port_resume_frames: 0,
            pfc_resume_frames: 0,
            pfc_scripted: 0,
            ecm_out_of_bounds: (0, None),
            lossless_drops: LosslessDrops::default(),
            bare: false,
            now: 0,
            plan,
        };
        // INT's stamps are taken every cycle, so INT on is never bare.
        sim.bare = sim.tcp.is_empty()
            && sim.dcqcn.is_empty()
            && sim.int_cc.is_empty()
            && !sim.plan.derived.cfg.int
            && sim.script.next_cycle() == u64::MAX;
        sim
    }

    /// Write a cell trace CSV into `file` during the run.
    pub fn attach_trace(&mut self, file: File) -> io::Result<()> {
        self.obs.trace = Some(CellTrace::new(file)?);
        self.bare = false;
        Ok(())
    }

    /// Write the co-simulation event stream (docs/cosim.md) into `file` during the run.
    pub fn attach_events(&mut self, file: File) -> io::Result<()> {
        let name = &self.plan.name;
        self.events = Some(EventTrace::new(file, &self.mmu, name, self.plan.seed)?);
        self.bare = false;
        Ok(())
    }

    /// Write one CSV line per ECM frame the congestion points send into `file`.
    pub fn attach_ecm_trace(&mut self, file: File) -> io::Result<()> {
        self.obs.ecm_trace = Some(EcmTrace::new(file)?);
        self.bare = false;
        Ok(())
    }

    /// Write one CSV line per rate-limiter event of the reaction points into `file`.
    pub fn attach_rp_trace(&mut self, file: File) -> io::Result<()> {
        self.obs.rp_trace = Some(RpTrace::new(file)?);
        self.bare = false;
        Ok(())
    }

    /// Write the model's signals in `format` into `file` (created at `path`) and, at the end
    /// of the run, a `.gtkw` beside it. A window reaching past the run's cycles is an error.
    pub fn attach_waves(
        &mut self,
        file: File,
        path: &Path,
        format: Format,
        filter: &SignalFilter,
        window: Window,
    ) -> Result<(), WaveError> {
        window.check_within(self.plan.cycles)?;
        self.waves = Some(Waves::new(
            &self.mmu,
            &self.partners,
            &self.dcqcn,
            file,
            path,
            format,
            filter,
            window,
            self.plan.cycles,
        )?);
        self.bare = false;
        Ok(())
    }

    /// Write `fct.txt`, `pfc.txt` and `qlen.txt` in the HPCC ns-3 formats into `dir`
    /// (created if missing) at the end of the run ([`crate::ns3`]).
    pub fn attach_ns3(&mut self, dir: &Path) -> io::Result<()> {
        self.ns3 = Some(Ns3Out::new(dir, &self.plan)?);
        self.bare = false;
        // Its flow-completion file lists every message.
        self.keep_messages();
        Ok(())
    }

    /// Every signal a VCD of this run can hold, and their current values.
    pub fn wave_signals(&self) -> WaveSignals {
        WaveSignals::new(&self.mmu, &self.partners, &self.dcqcn)
    }

    /// The DCQCN flows (their reaction points' registers, for the waveform).
    pub fn dcqcn(&self) -> &DcqcnFlows {
        &self.dcqcn
    }

    /// Every port's link partner.
    pub fn partners(&self) -> &[LinkPartner] {
        &self.partners
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }
    pub fn mmu(&self) -> &Mmu {
        &self.mmu
    }
    /// For companion tests that corrupt the model on purpose.
    pub fn mmu_mut(&mut self) -> &mut Mmu {
        &mut self.mmu
    }
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.obs.scoreboard
    }
    pub fn partner(&self, port: usize) -> &LinkPartner {
        &self.partners[port]
    }
    /// For companion tests that corrupt a reaction point on purpose.
    pub fn partner_mut(&mut self, port: usize) -> &mut LinkPartner {
        &mut self.partners[port]
    }
    /// Cycles simulated so far (the next cycle to run).
    pub fn now(&self) -> u64 {
        self.now
    }
    /// The last cycle's outputs of the MMU.
    pub fn outputs(&self) -> &Outputs {
        &self.out
    }
    /// Results of the TCP flows so far (empty without `tcp` flows).
    pub fn tcp_stats(&self) -> Vec<TcpStats> {
        self.tcp.stats()
    }

    /// Results of the `hpcc`, `powertcp` and `theta_powertcp` flows so far.
    pub fn int_cc_stats(&self) -> Vec<stimulus::int_cc::IntCcStats> {
        self.int_cc.stats()
    }

    /// Results of the DCQCN flows so far (empty without `dcqcn` flows).
    pub fn dcqcn_stats(&self) -> Vec<stimulus::dcqcn::DcqcnStats> {
        self.dcqcn.stats()
    }
    /// Keep every message of the `poisson` flows and of the `dcqcn` flows with messages
    /// for [`messages`](Self::messages) (otherwise only the open ones are held, and the
    /// closed ones counted).
    pub fn keep_messages(&mut self) {
        self.sources.keep_messages();
        self.dcqcn.keep_messages();
    }
    /// The kept and the open messages of the `poisson` and the `dcqcn` message flows, in
    /// arrival order, with their completion: every message so far if
    /// [`keep_messages`](Self::keep_messages) was called before the first cycle.
    pub fn messages(&self) -> Vec<MessageStats> {
        let mut all = self.sources.messages();
        all.extend(self.dcqcn.messages());
        all.sort_by_key(|m| (m.arrival_cycle, m.flow));
        all
    }
    /// Counts of the messages of the `poisson` and the `dcqcn` message flows so far.
    pub fn message_counts(&self) -> MessageCounts {
        let (a, b) = (self.sources.message_counts(), self.dcqcn.message_counts());
        MessageCounts {
            arrived: a.arrived + b.arrived,
            complete: a.complete + b.complete,
            incomplete: a.incomplete + b.incomplete,
        }
    }
    /// Cells on the links, sent by partners and not yet seen by the MMU.
    pub fn cells_in_flight(&self) -> u64 {
        self.partners.iter().map(|p| p.in_flight() as u64).sum()
    }

    /// The first cycle `>= now()` in which something can happen: a source or TCP event, a
    /// partner's event, a scripted PFC frame, the model's next event, or a cycle the
    /// waveform must sample. Every cycle before it is idle: [`run`](Self::run) jumps there.
    #[inline]
    pub fn next_event(&self) -> u64 {
        let mut t = self.mmu.next_event();
        if t <= self.now {
            return self.now;
        }
        t = t
            .min(self.sources.next_time())
            .min(self.tcp.next_time())
            .min(self.dcqcn.next_time())
            .min(self.int_cc.next_time())
            .min(self.script.next_cycle())
            .min(self.wakes.first);
        if let Some(w) = &self.waves {
            t = t.min(w.must_sample(self.now));
        }
        t.max(self.now)
    }

    /// Jump over the idle cycles before `to` (at most [`next_event`](Self::next_event)).
    fn skip_to(&mut self, to: u64) -> Result<(), RunError> {
        self.mmu.skip_to(to)?;
        if let Some(n) = &mut self.ns3 {
            n.idle(self.now, to, &self.mmu, &self.plan);
        }
        self.now = to;
        Ok(())
    }

    /// Clock one cycle.
    pub fn step(&mut self) -> Result<(), RunError> {
        self.cycle()
    }

    /// [`step`](Self::step), inlined into [`run`](Self::run)'s loop: a call per cycle
    /// saves and restores every register the cycle uses.
    #[inline(always)]
    fn cycle(&mut self) -> Result<(), RunError> {
        let now = self.now;
        let d = &self.plan.derived;
        let partners = &mut self.partners;
        // The hand-over phase: bit `p`, partner `p` was handed packets.
        let mut handed = 0u64;
        if self.sources.next_time() <= now {
            // The hand-over inlined into the sources' loop: a call that takes the run in
            // memory costs about as much as the hand-over itself.
            self.sources.fire_due(
                now,
                d,
                &self.plan.flows,
                #[inline(always)]
                |run| {
                    let src = run.head().src as usize;
                    partners[src].offer(run, d);
                    handed |= 1 << src;
                },
            );
        }
        if !self.bare {
            let mut send = |hdr: hw_model::PacketHdr| {
                let src = hdr.src as usize;
                partners[src].offer(hdr.into(), d);
                handed |= 1 << src;
            };
            if self.tcp.next_time() <= now {
                self.tcp.fire_due(now, &mut send);
            }
            if self.dcqcn.next_time() <= now {
                self.dcqcn.fire_due(now, &mut send);
            }
            if self.int_cc.next_time() <= now {
                self.int_cc.fire_due(now, &mut send);
            }
        }
        while handed != 0 {
            let p = handed.trailing_zeros() as usize;
            handed &= handed - 1;
            let at = partners[p].start_handed(now);
            self.wakes.wake(p, at);
        }

        if self.wakes.first <= now {
            self.step_partners(now);
        }

        if !self.bare {
            self.pfc_rx.clear();
            self.script.due(now, &mut self.pfc_rx);
            self.pfc_scripted += self.pfc_rx.len() as u64;
        }

        let inputs = Inputs {
            ingress: &self.ingress[..self.partners.len()],
            pfc_rx: &self.pfc_rx,
        };
        self.mmu.step(&inputs, &mut self.out)?;
        if !self.bare {
            if let Some(t) = &mut self.events {
                t.step(now, &inputs, &self.out, &self.mmu)
                    .map_err(|e| RunError::Output(EVENT_TRACE, e))?;
            }
        }
        while self.delivered != 0 {
            let p = self.delivered.trailing_zeros() as usize;
            self.delivered &= self.delivered - 1;
            self.ingress[p] = None;
        }

        let obs = &mut self.obs;
        let (drops, sinks) = (&mut self.lossless_drops, &mut self.sinks);
        let (mmu, plan) = (&self.mmu, &self.plan);
        for t in monitor::cell_events(now, &self.out) {
            obs.record(&t);
            if let TxnKind::Drop(r) = t.kind {
                if r.lossless() && t.beat.sop() {
                    drops.note(now, r, t.beat, mmu, plan);
                }
            }
        }
        for t in monitor::departures(now, &self.out) {
            obs.record(&t);
            if let TxnKind::Depart(port) = t.kind {
                sinks.absorb(port, t.beat);
            }
        }
        if !self.bare {
            self.tcp.departed(now, &self.out.departures);
            self.dcqcn.departed(now, &self.out.departures);
            self.int_cc.stamped(self.mmu.int_stamps());
            self.int_cc.departed(now, &self.out.departures);
        }
        // Returns at once when the plan has no message flow.
        self.sources.departed(now, &self.out.departures);
        for &(port, frame) in &self.out.pfc_tx {
            if frame.paused() != 0 {
                self.pfc_pause_frames += 1;
                self.first_pause.get_or_insert(now);
                self.pfc_port_pause_frames += frame.port_level as u64;
            } else {
                self.pfc_resume_frames += 1;
                self.pfc_port_resume_frames += frame.port_level as u64;
            }
            if let Some(partner) = self.partners.get_mut(port as usize) {
                let at = partner.pfc_sent(now, frame);
                self.wakes.wake(port as usize, at);
            }
        }
        if !self.out.ecm_tx.is_empty() {
            self.ecm_frames_out(now);
        }
        if !self.bare {
            self.outputs_of(now)?;
        }
        self.now += 1;
        Ok(())
    }

    /// The end of a cycle with something attached: the ns-3 output's cycle, the errors of
    /// the traces written during it, the waveform's sample.
    fn outputs_of(&mut self, now: u64) -> Result<(), RunError> {
        if let Some(n) = &mut self.ns3 {
            let out = &self.out;
            n.cycle(
                now,
                &out.pfc_tx,
                &self.pfc_rx,
                &out.departures,
                &self.mmu,
                &self.plan,
            );
        }
        if let Some(e) = self.obs.trace_err.take() {
            return Err(RunError::Trace(e));
        }
        if let Some((what, e)) = self.obs.out_err.take() {
            return Err(RunError::Output(what, e));
        }
        if let Some(w) = &mut self.waves {
            w.sample(now, &self.mmu, &self.partners, &self.dcqcn)?;
        }
        Ok(())
    }

    /// Step the partners due at `now` (their beats on the link into the scoreboard, the
    /// beats reaching the MMU into `ingress`) and find the earliest wake-up again.
    #[inline]
    fn step_partners(&mut self, now: u64) {
        let d = &self.plan.derived;
        let w = &mut self.wakes;
        let mut first = u64::MAX;
        let mut awake = w.active;
        while awake != 0 {
            let p = awake.trailing_zeros() as usize;
            awake &= awake - 1;
            if w.at[p] > now {
                first = first.min(w.at[p]);
                continue;
            }
            let obs = &mut self.obs;
            let partner = &mut self.partners[p];
            let inject = |b: &Beat| {
                obs.record(&CellTxn {
                    cycle: now,
                    kind: TxnKind::Inject,
                    beat: b,
                })
            };
            if partner.step_into(now, d, inject, &mut self.ingress[p]) {
                self.delivered |= 1 << p;
            }
            partner.rp_mut().drain_events(|e| obs.rp_event(e));
            let at = partner.next_event(now);
            w.at[p] = at;
            if at == u64::MAX {
                w.active &= !(1 << p);
            }
            first = first.min(at);
        }
        w.first = first;
    }

    /// The ECM frames of this cycle: check their saturation bounds (`|Qoff| <= Qeq Qscale`,
    /// `|Qdelta| <= 2 Qeq Qscale`), trace them and send them toward their NICs.
    fn ecm_frames_out(&mut self, now: u64) {
        let e = &self.plan.derived.ecm;
        let qoff_max = (e.qeq as i64) << e.qscale_log2;
        for f in &self.out.ecm_tx {
            if (f.qoff as i64).abs() > qoff_max || (f.qdelta as i64).abs() > 2 * qoff_max {
                let n = &mut self.ecm_out_of_bounds;
                n.0 += 1;
                n.1.get_or_insert_with(|| {
                    format!(
                        "cycle {now}: ECM frame of CPID {} with Qoff {} and Qdelta {} outside +-{qoff_max} and +-{}",
                        f.cpid,
                        f.qoff,
                        f.qdelta,
                        2 * qoff_max
                    )
                });
            }
            self.obs.ecm_frame(now, f);
            if let Some(partner) = self.partners.get_mut(f.port as usize) {
                let at = partner.ecm_sent(now, *f);
                self.wakes.wake(f.port as usize, at);
            }
        }
    }

    /// Run to the scenario's end, calling `progress(cycles done)` every
    /// [`PROGRESS_EVERY`] cycles and at the end; then run the end-of-run checks and close
    /// the trace and waveform files.
    pub fn run(&mut self, mut progress: impl FnMut(u64)) -> Result<Summary, RunError> {
        let t0 = Instant::now();
        let cpu0 = thread_cpu_seconds();
        let end = self.plan.cycles;
        while self.now < end {
            let next = self.next_event().min(end);
            if next > self.now {
                // The progress calls of the cycles jumped over, as if they had been stepped.
                let from = self.now;
                self.skip_to(next)?;
                let mut c = (from / PROGRESS_EVERY + 1) * PROGRESS_EVERY;
                while c <= next {
                    progress(c);
                    c += PROGRESS_EVERY;
                }
                if next == end {
                    break;
                }
            }
            self.cycle()?;
            if self.now & (PROGRESS_EVERY - 1) == 0 {
                progress(self.now);
            }
        }
        progress(self.now);
        if let Some(t) = self.obs.trace.take() {
            t.finish().map_err(RunError::Trace)?;
        }
        if let Some(t) = self.obs.ecm_trace.take() {
            t.finish().map_err(|e| RunError::Output(ECM_TRACE, e))?;
        }
        if let Some(t) = self.obs.rp_trace.take() {
            t.finish().map_err(|e| RunError::Output(RP_TRACE, e))?;
        }
        if let Some(t) = self.events.take() {
            t.finish(self.now, &self.mmu)
                .map_err(|e| RunError::Output(EVENT_TRACE, e))?;
        }
        if let Some(w) = self.waves.take() {
            w.finish(&self.mmu, self.first_pause)?;
        }
        if let Some(n) = self.ns3.take() {
            let tcp = self.tcp.stats();
            n.finish(self.now, &self.plan, &self.messages(), &tcp)
                .map_err(|e| RunError::Output(NS3_OUTPUT, e))?;
        }
        // The run's cost includes completing its outputs (an FST compresses its last block).
        let cpu = thread_cpu_seconds() - cpu0;
        let wall = t0.elapsed().as_secs_f64();
        Ok(self.summarize(wall, cpu))
    }

    /// Counts and end-of-run checks at the current cycle; `wall` seconds of run time (the
    /// CPU time is left 0: [`run`](Self::run)'s summary has it).
    pub fn summary(&self, wall: f64) -> Summary {
        self.summarize(wall, 0.0)
    }

    /// [`summary`](Self::summary) with `cpu` seconds of CPU time.
    fn summarize(&self, wall: f64, cpu: f64) -> Summary {
        let sb = &self.obs.scoreboard;
        let buffered = self.mmu.buffered_cells() as u64;
        let cons = sb.conservation(buffered, self.cells_in_flight());
        let mut violations = Vec::new();
        if sb.reordered > 0 || sb.misrouted > 0 {
            violations.push(format!(
                "{} reordered and {} misrouted cells; first: {}",
                sb.reordered,
                sb.misrouted,
                sb.first_error().unwrap_or("?")
            ));
        }
        if self.plan.expect_lossless && sb.dropped_lossless() > 0 {
            violations.push(format!(
                "{} lossless cells dropped (scenario expects none)",
                sb.dropped_lossless()
            ));
        }
        if !cons.ok() {
            violations.push(format!("conservation: {cons}"));
        }
        if let Err(e) = self.mmu.check_invariants() {
            violations.push(format!("model invariant: {e}"));
        }
        if let (n, Some(first)) = &self.ecm_out_of_bounds {
            violations.push(format!("{n} ECM frames out of bounds; first: {first}"));
        }
        for p in &self.partners {
            if let Err(e) = p.rp().check() {
                violations.push(format!("reaction point: {e}"));
            }
        }
        let secs = self.now as f64 / self.plan.derived.clock_hz as f64;
        let egress = self
            .sinks
            .per_port()
            .iter()
            .enumerate()
            .filter(|(_, s)| s.cells > 0)
            .map(|(p, s)| EgressSummary {
                port: p as u8,
                cells: s.cells,
                packets: s.packets,
                gbps: if secs > 0.0 {
                    s.bytes as f64 * 8.0 / secs / 1e9
                } else {
                    0.0
                },
            })
            .collect();
        let sai = SaiCounters::of(&self.mmu);
        Summary {
            schema_version: SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            scenario: self.plan.name.clone(),
            policy: self.plan.derived.cfg.policy.name().to_string(),
            seed: self.plan.seed,
            cycles: self.now,
            clock_hz: self.plan.derived.clock_hz,
            cell_bytes: self.plan.derived.cfg.cell_bytes,
            scenario_hash: self.plan.scenario_hash.clone(),
            cells_injected: sb.injected,
            cells_admitted: sb.admitted.iter().sum(),
            cells_departed: sb.departed,
            cells_dropped_lossless: sb.dropped_lossless(),
            cells_dropped_lossy: sb.dropped_lossy(),
            cells_buffered_at_end: cons.buffered,
            cells_owed_at_end: sb.owed(),
            cells_in_flight_at_end: cons.in_flight,
            drops_by_reason: DropReason::ALL
                .iter()
                .map(|&r| (r.name().to_string(), sb.dropped_for(r)))
                .collect(),
            admitted_by_segment: Segment::ALL
                .iter()
                .zip(sb.admitted)
                .map(|(s, n)| (s.name().to_string(), n))
                .collect(),
            reordered_cells: sb.reordered,
            misrouted_cells: sb.misrouted,
            pfc_pause_frames: self.pfc_pause_frames,
            pfc_resume_frames: self.pfc_resume_frames,
            partner_pause_events: self.partners.iter().map(|p| p.stats().pause_events).sum(),
            pfc_port_pause_frames: self.pfc_port_pause_frames,
            pfc_port_resume_frames: self.pfc_port_resume_frames,
            partner_port_pause_events: self
                .partners
                .iter()
                .map(|p| p.stats().port_pause_events)
                .sum(),
            pfc_frames_rx_scripted: self.pfc_scripted,
            conservation: cons.to_string(),
            conservation_ok: cons.ok(),
            egress,
            hcf: self
                .mmu
                .hcf_queues()
                .iter()
                .map(|h| HcfSummary {
                    port: h.p.port,
                    queue: h.p.queue,
                    periods: h.periods,
                    packets_to_hp: h.to_hp,
                    packets_to_lp: h.to_lp,
                    packets_dropped: h.dropped,
                })
                .collect(),
            ecm_frames: if self.mmu.ecm_cps().is_empty() {
                BTreeMap::new()
            } else {
                EcmKind::ALL
                    .iter()
                    .map(|&k| {
                        let n = self
                            .mmu
                            .ecm_cps()
                            .iter()
                            .map(|c| c.frames[k as usize])
                            .sum();
                        (k.name().to_string(), n)
                    })
                    .collect()
            },
            ecm_rp: self.rp_summaries(),
            ecn: self
                .mmu
                .ecn_queues()
                .iter()
                .map(|m| EcnSummary {
                    port: m.port,
                    queue: m.queue,
                    ect_packets: m.seen,
                    marked: m.marked,
                })
                .collect(),
            tcp: self.tcp.stats(),
            dcqcn: self.dcqcn.stats(),
            int_cc: self.int_cc.stats(),
            ingress_priority_groups: sai.pgs,
            egress_queues: sai.queues,
            pools: sai.pools,
            pfc: sai.pfc,
            lossless: LosslessSummary {
                headroom_warnings: self
                    .plan
                    .headroom_warnings
                    .iter()
                    .map(|w| w.to_string())
                    .collect(),
                packets_dropped: self.lossless_drops.packets,
                first_drops: self.lossless_drops.first.clone(),
            },
            violations,
            run: RunMeta {
                wall_seconds: wall,
                cycles_per_second: per_second(self.now, wall),
                cpu_seconds: cpu,
                cycles_per_cpu_second: per_second(self.now, cpu),
            },
        }
    }

    /// One entry per NIC whose reaction point received an ECM frame.
    fn rp_summaries(&self) -> Vec<EcmRpSummary> {
        self.partners
            .iter()
            .map(|p| p.rp())
            .filter(|rp| rp.stats().ecm_rx > 0)
            .map(|rp| {
                let st = rp.stats();
                let n = rp.params().fine_limiters as usize;
                let unit_us = (1u64 << rp.params().unit) as f64;
                EcmRpSummary {
                    nic: rp.nic(),
                    ecm_frames_rx: st.ecm_rx,
                    ignored_in_timeout: st.ignored_in_timeout,
                    ignored_positive: st.ignored_positive,
                    frames_limited: st.frames_limited,
                    events: RpEventKind::ALL
                        .iter()
                        .map(|&k| (k.name().to_string(), st.events[k as usize]))
                        .collect(),
                    limiters: rp
                        .limiters()
                        .iter()
                        .enumerate()
                        .filter(|(_, l)| l.state != LimiterState::Inactive)
                        .map(|(i, l)| LimiterSummary {
                            limiter: i as u8,
                            coarse: i >= n,
                            prio: l.prio,
                            flowid: l.flowid,
                            cpid: l.cpid,
                            state: l.state.name().to_string(),
                            rate_bps: l.rate_bps,
                            queued_packets: l.queued(),
                            rtt_avg_us: l.rtt_avg_q8 as f64 / 256.0 * unit_us,
                        })
                        .collect(),
                }
            })
            .collect()
    }
}
