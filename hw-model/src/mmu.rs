//! Top level: the blocks of the switch, wired together, the phase table that is the
//! specification of the order of work inside a cycle (docs/architecture.md, "Blocks,
//! phases and the clock edge"), and the signal hierarchy the probes walk (`Tree`).
//!
//! [`PHASES`] is the table: [`Core::step`] runs its phases in order, the blocks of each
//! phase, then the edge ([`EDGE`]). The blocks of one phase read only registered state and
//! what earlier phases drove, so they may run in any order ([`Mmu::shuffle_phases`] runs
//! them, and the edge's commits, in a pseudo-random order for the test that checks it).
//! A later phase may read what an earlier one drove in the same cycle; each such chain is
//! named in the docs and in the module of the block that drives it.

use crate::accounting::Accounting;
use crate::admission::{Admission, AdmissionIn, AdmissionOut};
use crate::config::{Derived, QUEUES};
use crate::dirty::{Dirty, DirtyWords};
use crate::dt_threshold::{pool_occupancy, pool_units, DtThreshold};
use crate::ecm_cp::{Ecm, EcmCp, EcmIn};
use crate::ecn_marker::{EcnIn, EcnMarker, EcnQueue};
use crate::egress_port::{Egress, EgressIn, EgressOut, Tx};
use crate::fault::Fault;
use crate::free_list::FreeList;
use crate::ingress::{Ingress, WriteIn};
use crate::int_stamp::{IntStamp, IntStamper};
use crate::packet_queue::PacketQueues;
use crate::pfc::fsm::{FsmIn, PfcFsm};
use crate::pfc::rx::PfcRx;
use crate::policy::{with_policy, with_policy_ref, BufferPolicy, L2bm, Plan, Policies};
use crate::ports::{each_port, Dequeue, FlowRequests, PfcTakes};
use crate::probes::{Hierarchy, SignalDesc, Signals};
use crate::sched::hcf::{Hcf, HcfQueue};
use crate::stats::Stats;
use crate::wires::{DropReason, Inputs, Outputs};
use rtl::{interleave, Block, BlockError, Clocked, Lfsr32, Name, Visit};
use thiserror::Error;

/// A broken invariant of the buffer (leak, double use, counter mismatch, overflow).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cycle {cycle}: {what}")]
pub struct InvariantError {
    pub cycle: u64,
    pub what: String,
}

/// A block of the phase table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// DT threshold of the lossless pool, and of the lossy pool.
    Dt,
    DtLossy,
    /// The buffer policy's threshold units.
    PolicyUnits,
    /// PFC reception: the frames of the cycle, latched for the edge.
    PfcRx,
    /// Admission, ingress ports in index order.
    Admission,
    /// PFC generation: requests, QON/PON, refreshes.
    PfcGen,
    /// HCF fixed-period boundaries.
    HcfPeriods,
    /// ECM congestion points: the cycle's arrivals.
    Ecm,
    /// ECN markers: the cycle's arrivals (after ECM sampled the headers).
    Ecn,
    /// Egress transmitters, round robin from `read_rr`.
    Transmitters,
    /// Ingress write stage, round robin from `write_rr`.
    WriteStage,
}

/// Declares the phase table [`PHASES`] and, from the same list, `Core::eval_in_order`:
/// every block called directly in the table's order, which is what `Core::step` runs
/// unless the order is shuffled (no dispatch on [`Unit`] per block and cycle).
macro_rules! phase_table {
    ($($phase:literal: [$($unit:ident),+];)+) => {
        /// The phase table: the phases of a cycle in their order, each with its blocks.
        pub const PHASES: [(&str, &[Unit]); [$($phase),+].len()] =
            [$(($phase, &[$(Unit::$unit),+])),+];

        impl Core {
            /// The blocks of [`PHASES`] in the table's order.
            fn eval_in_order<P: BufferPolicy>(
                &mut self,
                policy: &mut P,
                inp: &Inputs,
                out: &mut Outputs,
            ) -> Result<(), BlockError> {
                $($(self.eval(Unit::$unit, policy, inp, out)?;)+)+
                Ok(())
            }
        }
    };
}

phase_table! {
    "thresholds": [Dt, DtLossy, PolicyUnits, PfcRx];
    "admission": [Admission];
    "flow control": [PfcGen, HcfPeriods, Ecm];
    "egress": [Transmitters, Ecn];
    "write": [WriteStage];
}

/// Declares [`Edge`], [`EDGE`] (every block's edge) and `Core::commit_in_order`: each
/// edge called directly, in the list's order.
macro_rules! edge_list {
    ($($edge:ident),+) => {
        /// A block with state at the clock edge.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Edge {
            $($edge),+
        }

        /// Every block's edge, in any order.
        const EDGE: [Edge; [$(Edge::$edge),+].len()] = [$(Edge::$edge),+];

        impl Core {
            /// The edges of [`EDGE`] in the list's order.
            fn commit_in_order<P: BufferPolicy>(&mut self, policy: &mut P) -> Result<(), BlockError> {
                $(self.commit(Edge::$edge, policy)?;)+
                Ok(())
            }
        }
    };
}

edge_list!(
    Counters,
    FreeList,
    Queues,
    Dt,
    DtLossy,
    Policy,
    PfcRx,
    PfcGen,
    Hcf,
    Ecm,
    Ecn,
    Int,
    Admission,
    Ingress,
    Transmitters
);

/// The blocks of the switch (everything but the buffer policy) and their wires.
pub struct Core {
    pub(crate) d: Derived,
    pub(crate) cycle: u64,
    pub(crate) stats: Stats,
    pub(crate) acct: Accounting,
    pub(crate) dt: DtThreshold,
    pub(crate) dt_lossy: DtThreshold,
    pub(crate) rx: PfcRx,
    pub(crate) admission: Admission,
    pub(crate) ingress: Ingress,
    pub(crate) fsm: PfcFsm,
    pub(crate) hcf: Hcf,
    pub(crate) ecm: Ecm,
    pub(crate) ecn: EcnMarker,
    pub(crate) int: IntStamper,
    pub(crate) egress: Egress,
    pub(crate) queues: PacketQueues,
    pub(crate) free: FreeList,
    /// Admission -> PFC generation: this cycle's QOFF/POFF requests.
    requests: FlowRequests,
    /// Admission -> ECM and ECN: the ports that admitted a packet in this cycle.
    admitted: u64,
    /// ECN arrivals -> write stage: the ports whose packet admitted in this cycle is
    /// marked CE.
    ce: u64,
    /// Transmitters -> the edge of HCF, ECM and ECN: the dequeues from the queues they watch.
    dequeues: Vec<Dequeue>,
    /// Transmitters -> the edge of PFC generation: the frames taken.
    takes: PfcTakes,
    /// Transmitters -> the edge of INT, and the testbench after the step: the cycle's
    /// INT stamps.
    int_stamps: Vec<IntStamp>,
    pub(crate) dirty: Dirty,
    /// [`Fault::XonFromNextT`].
    pub(crate) read_next_t: bool,
    /// [`Fault::NextEventIgnoresWakeups`], [`Fault::NextEventIgnoresResumes`].
    pub(crate) ignore_wakeups: bool,
    pub(crate) ignore_resumes: bool,
    /// [`Fault::DirtyIgnoresFreeCount`].
    pub(crate) ignore_free_count: bool,
    /// The last edge left work for the next cycle whatever the inputs: a beat (its
    /// `beat_valid` falls), cells in an ingress FIFO, counters or a `T` that moved (the
    /// thresholds and QON checks read them), a pause mask that changed, a packet enqueued
    /// (the transmitters look at the last edge's enqueues).
    settling: bool,
    /// The global signal block may change in the next cycle: the last edge moved the
    /// counters (the DT subtractors and L2BM's egress DT read them) or a `T` (the
    /// policy's threshold units read it). In a cycle, the block changes only then, or
    /// when the edge moves the counters, a `T` or the free cell count.
    pub(crate) global_next: bool,
    /// [`Mmu::shuffle_phases`]: the source of the evaluation order, if shuffled.
    order: Option<Lfsr32>,
}

impl Core {
    fn new(d: Derived) -> Self {
        let ports = d.ports;
        let (dt, dt_lossy) = pool_units(&d);
        let hcf = Hcf::new(&d);
        let mut core = Self {
            stats: Stats::new(ports),
            cycle: 0,
            acct: Accounting::new(ports),
            dt,
            dt_lossy,
            rx: PfcRx::new(&d),
            admission: Admission::new(&d),
            ingress: Ingress::new(&d),
            fsm: PfcFsm::new(&d),
            queues: PacketQueues::new(
                ports,
                d.total_cells,
                d.cfg.sram_write_cells_per_cycle as usize,
                d.cfg.sram_read_latency as usize,
                &hcf.queue_ids(),
            ),
            hcf,
            ecm: Ecm::new(&d),
            ecn: EcnMarker::new(&d),
            int: IntStamper::new(&d),
            egress: Egress::new(&d),
            free: FreeList::new(d.total_cells),
            requests: FlowRequests::new(ports),
            admitted: 0,
            ce: 0,
            dequeues: Vec::with_capacity(ports),
            takes: PfcTakes::default(),
            int_stamps: Vec::new(),
            dirty: Dirty::new(ports),
            read_next_t: false,
            ignore_wakeups: false,
            ignore_resumes: false,
            ignore_free_count: false,
            settling: true,
            global_next: true,
            order: None,
            d,
        };
        let (hcf, ecm, ecn) = (&core.hcf, &core.ecm, &core.ecn);
        core.egress.hook_queues(|p, q| {
            hcf.queue(p, q).is_some() || ecm.cp(p, q).is_some() || ecn.queue(p, q).is_some()
        });
        core
    }

    /// The registered occupancies the two DT thresholds read.
    fn occupancy(&self) -> (u32, u32) {
        pool_occupancy(&self.d, &self.acct)
    }

    /// Evaluate one block of the phase table in the current cycle.
    #[inline(always)]
    fn eval<P: BufferPolicy>(
        &mut self,
        unit: Unit,
        policy: &mut P,
        inp: &Inputs,
        out: &mut Outputs,
    ) -> Result<(), BlockError> {
        let now = self.cycle;
        match unit {
            Unit::Dt => {
                let occupancy = self.occupancy().0;
                Block::eval(&mut self.dt, now, occupancy, ())
            }
            Unit::DtLossy => {
                let occupancy = self.occupancy().1;
                Block::eval(&mut self.dt_lossy, now, occupancy, ())
            }
            Unit::PolicyUnits => {
                let t = if self.read_next_t {
                    self.dt.t.next()
                } else {
                    self.dt.t()
                };
                policy.thresholds(t, &self.acct, &mut self.dirty);
                Ok(())
            }
            Unit::PfcRx => Block::eval(&mut self.rx, now, inp.pfc_rx, &mut self.stats),
            Unit::Admission if inp.ingress.iter().all(Option::is_none) => {
                // A cycle without beats: the block's phase without its bundles.
                self.admission.start(policy, &mut self.admitted);
                Admission::finish(0, &mut self.ingress, &mut self.dirty);
                Ok(())
            }
            Unit::Admission => Block::eval(
                &mut self.admission,
                now,
                AdmissionIn {
                    beats: inp.ingress,
                    dt: &self.dt,
                    dt_lossy: &self.dt_lossy,
                    pause: self.fsm.state(),
                    policy,
                    acct: &mut self.acct,
                    hcf: &mut self.hcf,
                    ingress: &mut self.ingress,
                    d: &self.d,
                },
                AdmissionOut {
                    events: &mut out.cell_events,
                    requests: &mut self.requests,
                    admitted: &mut self.admitted,
                    stats: &mut self.stats,
                    dirty: &mut self.dirty,
                },
            ),
            Unit::PfcGen => {
                let recheck = self.settling || policy.busy(self.fsm.state(), self.dt.t());
                Block::eval(
                    &mut self.fsm,
                    now,
                    FsmIn {
                        requests: &mut self.requests,
                        recheck,
                        policy,
                        acct: &self.acct,
                        t: self.dt.t(),
                    },
                    &mut self.dirty,
                )
            }
            Unit::HcfPeriods => Block::eval(&mut self.hcf, now, (), &mut self.dirty),
            Unit::Ecm => Block::eval(
                &mut self.ecm,
                now,
                EcmIn {
                    admitted: self.admitted,
                    ingress: &self.ingress,
                },
                &mut out.ecm_tx,
            ),
            Unit::Transmitters => Block::eval(
                &mut self.egress,
                now,
                EgressIn {
                    fsm: &self.fsm,
                    rx: &self.rx,
                    queues: &mut self.queues,
                    hcf: &self.hcf,
                    ecn: &self.ecn,
                    int: &self.int,
                    policy,
                    free: &mut self.free,
                    acct: &mut self.acct,
                    d: &self.d,
                },
                EgressOut {
                    out,
                    dequeues: &mut self.dequeues,
                    stamps: &mut self.int_stamps,
                    takes: &mut self.takes,
                    stats: &mut self.stats,
                    dirty: &mut self.dirty,
                },
            ),
            Unit::Ecn => Block::eval(
                &mut self.ecn,
                now,
                EcnIn {
                    admitted: self.admitted,
                    ingress: &self.ingress,
                },
                &mut self.ce,
            ),
            Unit::WriteStage => Block::eval(
                &mut self.ingress,
                now,
                WriteIn {
                    ce: self.ce,
                    free: &mut self.free,
                    queues: &mut self.queues,
                },
                (),
            ),
        }
    }

    /// The edge of one block.
    #[inline(always)]
    fn commit<P: BufferPolicy>(&mut self, edge: Edge, policy: &mut P) -> Result<(), BlockError> {
        let now = self.cycle;
        match edge {
            Edge::Counters => self.acct.commit(now),
            Edge::FreeList => self.free.commit(now),
            Edge::Queues => self.queues.commit(now),
            Edge::Dt => self.dt.commit(now),
            Edge::DtLossy => self.dt_lossy.commit(now),
            Edge::Policy => policy.commit(now),
            Edge::PfcRx => {
                self.rx.commit(now)?;
                self.dirty.egress_ports(self.rx.probed());
                Ok(())
            }
            // The wires of the transmitters are tested here, so that a cycle without a
            // frame taken or a watched dequeue costs no call.
            Edge::PfcGen => {
                if self.takes != PfcTakes::default() {
                    self.fsm.taken(&self.takes);
                }
                self.fsm.commit(now)
            }
            Edge::Hcf => {
                // A block with no queue of its own skips the cycle's dequeues.
                if !self.dequeues.is_empty() && !self.hcf.queues.is_empty() {
                    self.hcf
                        .departures(&self.dequeues, now)
                        .map_err(BlockError)?;
                }
                self.hcf.commit(now)
            }
            Edge::Ecm => {
                if !self.dequeues.is_empty() && !self.ecm.cps.is_empty() {
                    self.ecm.departures(&self.dequeues);
                }
                self.ecm.commit(now)
            }
            Edge::Ecn => {
                if !self.dequeues.is_empty() && !self.ecn.queues.is_empty() {
                    self.ecn.departures(&self.dequeues);
                }
                self.ecn.commit(now)
            }
            Edge::Int => {
                if !self.int_stamps.is_empty() {
                    self.int.departures(&self.int_stamps);
                }
                Ok(())
            }
            Edge::Admission => self.admission.commit(now),
            Edge::Ingress => self.ingress.commit(now),
            Edge::Transmitters => self.egress.commit(now),
        }
    }

    /// What the edge will move: whether counter updates wait, and the two `T`s before it.
    fn before_edge(&self) -> (bool, (u32, u32)) {
        (self.acct.has_updates(), (self.dt.t(), self.dt_lossy.t()))
    }

    /// One core clock cycle: the phases of [`PHASES`], then the edge.
    fn step<P: BufferPolicy>(
        &mut self,
        policy: &mut P,
        inp: &Inputs,
        out: &mut Outputs,
    ) -> Result<(), BlockError> {
        self.dirty.clear();
        let free = self.free.count();
        let moved;
        let t;
        if self.order.is_none() {
            self.eval_in_order(policy, inp, out)?;
            (moved, t) = self.before_edge();
            self.commit_in_order(policy)?;
        } else {
            for (_, blocks) in PHASES {
                let mut order = [Unit::Dt; 4];
                let order = &mut order[..blocks.len()];
                order.copy_from_slice(blocks);
                self.shuffle(order);
                for &unit in order.iter() {
                    self.eval(unit, policy, inp, out)?;
                }
            }
            (moved, t) = self.before_edge();
            let mut edge = EDGE;
            self.shuffle(&mut edge);
            for e in edge {
                self.commit(e, policy)?;
            }
        }
        let t_moved = t != (self.dt.t(), self.dt_lossy.t());
        let free_moved = self.free.count() != free && !self.ignore_free_count;
        if self.global_next || moved || t_moved || free_moved {
            self.dirty.global();
        }
        self.global_next = moved || t_moved;
        self.settling = moved
            || t_moved
            || self.ingress.beats() | self.ingress.fifo_ports() != 0
            || self.rx.changed() | self.queues.enqueued_last_cycle() != 0;
        self.cycle += 1;
        Ok(())
    }

    /// The first cycle `>= self.cycle` in which a step with idle inputs changes state: now
    /// if the last edge left work (`settling`), the policy scans (L2BM's QON
    /// unit) or a threshold unit is not settled; else the earliest timer: an egress port's
    /// wake, a port with a PFC frame to send (at its wake if a packet is on the wire), a
    /// received pause running out, a refresh PAUSE, an HCF period boundary.
    fn next_event<P: BufferPolicy>(&self, policy: &P) -> u64 {
        let now = self.cycle;
        let (occ, occ_lossy) = self.occupancy();
        if self.settling
            || policy.busy(self.fsm.state(), self.dt.t())
            || !self.dt.settled(occ)
            || !self.dt_lossy.settled(occ_lossy)
            || !policy.settled(self.dt.t(), &self.acct)
        {
            return now;
        }
        let mut next = self.fsm.next_refresh().min(self.hcf.next_boundary());
        if !self.ignore_wakeups {
            next = next.min(self.egress.next_wake());
        }
        if !self.ignore_resumes {
            next = next.min(self.rx.next_expiry());
        }
        for p in each_port(self.fsm.pending_ports()) {
            next = next.min(match self.egress.port(p).tx {
                Tx::Idle => now,
                _ => self.egress.wake(p),
            });
        }
        next.max(now)
    }

    /// Jump to cycle `to` over idle cycles (at most [`Core::next_event`]): only the
    /// round-robin pointers move, and no signal changes.
    fn skip_to(&mut self, to: u64) {
        let cycles = to - self.cycle;
        if cycles > 0 {
            self.egress.skip(cycles);
            self.ingress.skip(cycles);
            self.dirty.clear();
            self.cycle = to;
        }
    }

    /// Permute `items` if the phase order is shuffled (Fisher-Yates from the LFSR).
    fn shuffle<T>(&mut self, items: &mut [T]) {
        if let Some(lfsr) = &mut self.order {
            for i in (1..items.len()).rev() {
                let j = lfsr.draw(i as u32) as usize;
                items.swap(i, j);
            }
        }
    }
}

/// The blocks and the policy of a model, as the probes see them: the signal hierarchy.
struct Tree<'a, P> {
    core: &'a Core,
    policy: &'a P,
}

impl<P: BufferPolicy> Hierarchy for Tree<'_, P> {
    fn ports(&self) -> usize {
        self.core.d.ports
    }

    fn visit_block<V: Visit>(&self, block: usize, v: &mut V) {
        let (c, policy) = (self.core, self.policy);
        let ports = c.d.ports;
        match block {
            0 => {
                // `dt` and `dt_lossy` side by side, wire by wire (the first waveforms' order).
                interleave(
                    v,
                    (Name::word("dt"), &c.dt),
                    (Name::word("dt_lossy"), &c.dt_lossy),
                );
                policy.probe_pfc_thresholds(v);
                v.scope("buffer", |v| {
                    c.free.probe(v);
                    c.acct.probe_totals(v);
                });
                policy.probe_pool_units(v);
            }
            b if b <= ports => {
                let p = b - 1;
                v.scope("ingress", |v| {
                    v.scope(Name::indexed("p", p as u32, 2), |v| {
                        c.ingress.probe_port(p, v);
                        c.fsm.probe_port(p, v);
                        policy.probe_port(p, c.fsm.state(), &c.acct, v);
                        for pg in 0..QUEUES {
                            v.scope(Name::indexed("pg", pg as u32, 1), |v| {
                                c.acct.probe_group(p, pg, c.d.is_lossless(pg as u8), v);
                                policy.probe_group(p, pg, v);
                            });
                        }
                    })
                });
            }
            b => {
                let p = b - 1 - ports;
                v.scope("egress", |v| {
                    v.scope(Name::indexed("p", p as u32, 2), |v| {
                        c.egress.probe_port(p, v);
                        c.rx.probe_port(p, v);
                        c.int.probe_port(p, v);
                        for q in 0..QUEUES {
                            v.scope(Name::indexed("q", q as u32, 1), |v| {
                                c.acct.probe_egress(p, q, v);
                                c.egress.sched(p).probe_queue(q, v);
                                c.ecm.probe_queue(p, q, v);
                                c.ecn.probe_queue(p, q, v);
                                c.hcf.probe_queue(p, q, v);
                                policy.probe_egress_queue(p, q, v);
                            });
                        }
                    })
                });
            }
        }
    }
}

/// The switch's traffic manager: the blocks, its buffer policy, and its probes.
pub struct Mmu {
    core: Core,
    policy: Policies,
    signals: Signals,
    /// Bumped by every change of state; stamps the signal values read since.
    gen: u64,
}

impl Mmu {
    pub fn new(d: Derived) -> Self {
        let core = Core::new(d);
        let policy = Policies::new(&core.d);
        let signals =
            with_policy_ref!(&policy, p => Signals::new(&Tree { core: &core, policy: p }));
        Self {
            core,
            policy,
            signals,
            gen: 1,
        }
    }

    pub fn config(&self) -> &Derived {
        &self.core.d
    }

    pub fn cycle(&self) -> u64 {
        self.core.cycle
    }

    pub fn stats(&self) -> &Stats {
        &self.core.stats
    }

    /// Registered DT threshold of the lossless pool, cells.
    pub fn threshold(&self) -> u32 {
        self.core.dt.t()
    }

    /// Ingress counters `(private, shared, headroom)` of `(port, pg)`, cells.
    pub fn ingress_counters(&self, port: usize, pg: usize) -> [u32; 3] {
        self.core.acct.group(port, pg)
    }

    /// Bit `pg`: ingress queue `(port, pg)` is in QOFF.
    pub fn qoff(&self, port: usize) -> u8 {
        self.core.fsm.state().off(port)
    }

    /// DSH: bit `p` set = ingress port `p` is in POFF.
    pub fn poff(&self) -> u64 {
        self.core.fsm.state().poff()
    }

    /// The decision for the last packet that started on ingress port `port` (its plan, or
    /// why it was dropped); `None` before the first.
    pub fn started(&self, port: usize) -> Option<Result<Plan, DropReason>> {
        self.core.ingress.ports[port].started
    }

    /// Egress counter of `(port, queue)`, cells.
    pub fn egress_cells(&self, port: usize, q: usize) -> u32 {
        self.core.acct.egress[port * QUEUES + q].get()
    }

    /// The HCF block of queue `q` of `port`, and the physical list that is HP now.
    pub fn hcf(&self, port: usize, q: usize) -> Option<(&HcfQueue, u8)> {
        let h = self.core.hcf.queue(port, q)?;
        Some((h, self.core.hcf.hp_list(port, q)))
    }

    /// Every ECM congestion point, sorted by (port, queue).
    pub fn ecm_cps(&self) -> &[EcmCp] {
        &self.core.ecm.cps
    }

    /// Every ECN marking queue, sorted by (port, queue).
    pub fn ecn_queues(&self) -> &[EcnQueue] {
        &self.core.ecn.queues
    }

    /// Every HCF block, sorted by (port, queue).
    pub fn hcf_queues(&self) -> &[HcfQueue] {
        &self.core.hcf.queues
    }

    /// The L2BM blocks (recorders, `C`, threshold units, egress DT); `None` unless the
    /// policy is L2BM.
    pub fn l2bm(&self) -> Option<&L2bm> {
        match &self.policy {
            Policies::L2bm(l) => Some(l),
            _ => None,
        }
    }

    /// The occupancy counters and their watermarks.
    pub fn accounting(&self) -> &Accounting {
        &self.core.acct
    }

    /// Cells held in the buffer or charged to packets still arriving.
    pub fn buffered_cells(&self) -> u32 {
        self.core.acct.total.get()
    }

    fn err(&self, what: impl Into<String>) -> InvariantError {
        InvariantError {
            cycle: self.core.cycle,
            what: what.into(),
        }
    }

    /// The first cycle `>= self.cycle()` in which [`Mmu::step`] could change any state or
    /// produce any output if every input stayed idle (no beat, no received PFC frame);
    /// `u64::MAX` if nothing would ever happen without input. A driver may jump to it with
    /// [`Mmu::skip_to`] instead of stepping the idle cycles in between
    /// (docs/architecture.md, "Events").
    #[inline]
    pub fn next_event(&self) -> u64 {
        with_policy_ref!(&self.policy, p => self.core.next_event(p))
    }

    /// Jump over idle cycles to `cycle`: the model ends in the state that stepping every
    /// cycle from `self.cycle()` to `cycle - 1` with idle inputs would give, and no signal
    /// changes (a waveform sampled only at stepped cycles is the same). `cycle` must not
    /// be past [`Mmu::next_event`] (an `InvariantError` otherwise).
    pub fn skip_to(&mut self, cycle: u64) -> Result<(), InvariantError> {
        let next = self.next_event();
        if cycle < self.core.cycle || cycle > next {
            return Err(self.err(format!(
                "skip_to({cycle}): allowed {}..={next} (the next event)",
                self.core.cycle
            )));
        }
        self.core.skip_to(cycle);
        Ok(())
    }

    /// One core clock cycle.
    pub fn step(&mut self, inp: &Inputs, out: &mut Outputs) -> Result<(), InvariantError> {
        out.clear();
        let ports = self.core.d.ports;
        if inp.ingress.len() != ports {
            return Err(self.err(format!(
                "{} ingress inputs for {ports} ports",
                inp.ingress.len()
            )));
        }
        if let Some(&(p, _)) = inp.pfc_rx.iter().find(|f| f.0 as usize >= ports) {
            return Err(self.err(format!(
                "PFC frame received on port {p}, which does not exist"
            )));
        }
        self.gen += 1;
        let cycle = self.core.cycle;
        let core = &mut self.core;
        with_policy!(&mut self.policy, p => core.step(p, inp, out))
            .map_err(|e| InvariantError { cycle, what: e.0 })
    }

    /// Evaluate the blocks of each phase, and the commits of the edge, in an order drawn
    /// from `seed` in every cycle from now on (a verification hook: the results must not
    /// change, `tests/it/phase_order.rs`).
    pub fn shuffle_phases(&mut self, seed: u32) {
        self.core.order = Some(Lfsr32::new(seed));
    }

    /// The block a signal belongs to: 0 global (thresholds, buffer totals), `1 + p`
    /// ingress port `p`, `1 + ports + p` egress port `p`.
    pub fn signal_block(&self, i: usize) -> usize {
        self.signals.block_of(i)
    }

    /// Number of signal blocks (`1 + 2 * ports`).
    pub fn signal_blocks(&self) -> usize {
        self.signals.blocks()
    }

    /// Blocks whose signals may have changed at the last edge (bit `b % 64` of word
    /// `b / 64`); signals of other blocks are guaranteed unchanged. Lets a waveform writer
    /// sample only what moved.
    pub fn dirty_blocks(&self) -> DirtyWords {
        self.core.dirty.words()
    }

    /// Every probed signal, in a fixed order (the same for the same configuration).
    pub fn signals(&self) -> &[SignalDesc] {
        self.signals.descs()
    }

    /// Current value of signal `i` (index into `signals()`), registers as of the last edge.
    /// The first read of a block after a change reads the whole block's probes; the rest
    /// of the block's signals come from that read.
    pub fn signal_value(&self, i: usize) -> u64 {
        with_policy_ref!(&self.policy, p => {
            let tree = Tree { core: &self.core, policy: p };
            self.signals.value(&tree, self.gen, i)
        })
    }

    /// The signals of block `b` in their order: indices into `signals()`.
    pub fn block_signals(&self, b: usize) -> std::ops::Range<usize> {
        self.signals.range(b)
    }

    /// Read the current values of block `b` into `out`, as long as the block
    /// (`block_signals(b).len()`).
    pub fn sample_block(&self, b: usize, out: &mut [u64]) {
        with_policy_ref!(&self.policy, p => {
            self.signals.read_block(&Tree { core: &self.core, policy: p }, b, out)
        })
    }

    /// GTKWave view: the key signals of each block, as (group name, signal paths).
    pub fn gtkw_groups(&self) -> Vec<(String, Vec<String>)> {
        self.signals.gtkw_groups()
    }

    /// The INT hop records stamped in the last cycle (none while `int` is off; each step
    /// forgets the cycle before's): the testbench carries each to the packet's receiver.
    pub fn int_stamps(&mut self) -> std::vec::Drain<'_, IntStamp> {
        self.core.int_stamps.drain(..)
    }

    /// Break the model on purpose (companion tests of the invariant checks).
    pub fn inject_fault(&mut self, f: Fault) {
        self.gen += 1;
        let core = &mut self.core;
        with_policy!(&mut self.policy, p => core.inject(p, f));
    }

    /// Full structural check, independent of the counters it verifies:
    /// - every cell is exactly once either free, in a queue, being written or being sent;
    /// - every ingress and egress counter and every total equals a recount of the lists;
    /// - the lossless shared segment and headroom are within their sizes;
    /// - every watermark is at or above the counter it watches.
    ///
    /// Costs a walk of the whole buffer: call it every few thousand cycles, not every cycle.
    pub fn check_invariants(&self) -> Result<(), InvariantError> {
        with_policy_ref!(&self.policy, p => self.core.check(p)).map_err(|what| self.err(what))
    }
}
