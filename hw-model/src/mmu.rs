//! Top level: wires the blocks together and runs evaluate-then-commit each cycle.
//!
//! Order inside a cycle (all reads see the registers of the last edge unless noted):
//! 1. DT: next `T` from the registered shared occupancy (Eq. 2); `X_on = T - delta`.
//!    L2BM: the lossy egress pool's DT too.
//! 2. Ingress admission of every start-of-packet beat (the running shared-grant sum is the
//!    only intra-cycle chain); every beat gets its fate; admitted cells enter the FIFO.
//!    A packet for an HCF queue then goes to HP or LP, or is dropped (`hcf.rs`).
//!    L2BM: the queue's own threshold `T_i` (Eq. 3) from the registered recorder, `C` and
//!    `T`; a lossy packet must also pass the egress DT; an admitted packet's sojourn
//!    estimate is recorded (enqueue; the per-egress-queue grant sum is a second chain).
//! 3. PFC FSM: OFF queues with no headroom cells and shared occupancy below `X_on` turn
//!    ON (not those that turned OFF in step 2); refresh timers. HCF fixed-period
//!    boundaries. L2BM: one OFF queue per port per cycle, against `T_i - delta`.
//! 4. Egress ports (only active ones): refetch heads, pick packets, read and free cells.
//!    An HP departure that empties an HCF queue's HP starts its next period. L2BM: the
//!    read of a packet's first cell is its dequeue from the recorder.
//! 5. Ingress write stage: FIFO heads into the SRAM (work-conserving round robin); a
//!    packet's last cell enqueues it.
//!    Enqueue follows dequeue within the cycle, as a write-after-read bypass would.
//! 6. Edge: counters, free list, RAMs, `T`, received PFC frames, pause timers; L2BM
//!    recorders, `tau` and `C`.

use crate::accounting::{Accounting, Update};
use crate::admission::{self, PoolParams, PortView, QueueView};
use crate::config::{Derived, Policy, CNT_BITS, PFC_FRAME_WIRE_BYTES, QUEUES};
use crate::dsh_thresholds::DshThresholds;
use crate::dt_threshold::DtThreshold;
use crate::dwrr::Dwrr;
use crate::ecm_cp::EcmCp;
use crate::egress_port::{DataTx, EgressPort, Tx};
use crate::free_list::FreeList;
use crate::hcf::HcfQueue;
use crate::ingress::{fifo_depth, FifoCell, IngressPort};
use crate::l2bm::{self, EstUnit, L2bm};
use crate::packet_queue::{Desc, PacketQueues};
use crate::pfc_fsm::PfcFsm;
use crate::pfc_rx::PfcRx;
use crate::stats::Stats;
use crate::wires::{
    Beat, CellEvent, CellFate, Departure, DropReason, Inputs, Outputs, PfcFrame, Segment,
};
use bitvec::prelude::*;
use rtl::{Probed, Sram};
use thiserror::Error;

/// One probed signal of the model: dot-separated path under `top.mmu` and width in bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalDesc {
    pub path: String,
    pub width: u32,
}

/// A broken invariant of the buffer (leak, double use, counter mismatch, overflow).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("cycle {cycle}: {what}")]
pub struct InvariantError {
    pub cycle: u64,
    pub what: String,
}

/// Deliberate corruptions for companion tests that show the checks catch real bugs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Push a pointer that is already free onto the free list again (double allocation).
    DoubleFreeCell,
    /// Pop a cell from the free list and forget it (leak).
    LeakCell,
    /// Add one to an ingress shared counter without a cell behind it.
    SkewCounter,
    /// HCF: stop swapping HP and LP at period starts (the reordering of HCF III-D).
    HcfNoSwap,
    /// HCF: set credit bin 0 of the first HCF queue to its register's all-ones value.
    HcfCreditAboveC0,
    /// HCF: add one to the first HCF queue's list-0 length register.
    HcfSkewLength,
    /// ECM: add one page to the first congestion point's queue length.
    EcmSkewQlen,
    /// L2BM: add one packet to the `N` register of ingress queue (0, 0).
    L2bmSkewCount,
    /// L2BM: add one cycle to the `t_total` register of ingress queue (0, 0).
    L2bmSkewTotal,
    /// Clear the total watermark of the first ingress group that holds cells (a
    /// watermark below its counter).
    LowWatermark,
}

/// Where a signal's value comes from.
#[derive(Debug, Clone, Copy)]
enum Sig {
    Dt(usize),
    DtLossy(usize),
    Xon(usize),
    DshGlobal(usize),
    Xqoff(usize, usize),
    Xqon(usize, usize),
    Poff(usize),
    PortShared(usize),
    PortHeadroom(usize),
    RxQoff(usize),
    RxPoff(usize),
    FreeCells,
    TotalCells,
    SharedCells,
    LossySharedCells,
    BeatValid(usize),
    IngCounter(usize, usize, usize),
    Qoff(usize),
    EgCells(usize, usize),
    Deficit(usize, usize),
    Paused(usize),
    TxState(usize),
    TxQueue(usize),
    HpSel(usize),
    Hcf(usize, usize),
    Ecm(usize, usize),
    L2bmC,
    L2bmDtEgress(usize),
    /// Ingress queue `port * 8 + pg`, register 0..4: `t_total`, `n`, `t_prev`, `tau`.
    L2bmRec(usize, usize),
    L2bmEst(usize, usize),
    L2bmAdm(usize, usize),
    L2bmQon(usize, usize),
    L2bmQonRr(usize),
}

pub struct Mmu {
    d: Derived,
    cycle: u64,
    stats: Stats,
    acct: Accounting,
    dt: DtThreshold,
    dt_lossy: DtThreshold,
    fsm: PfcFsm,
    /// DSH threshold units; `None` under SIH.
    dsh: Option<DshThresholds>,
    /// L2BM recorders, threshold units and egress DT; `None` under SIH and DSH.
    l2bm: Option<Box<L2bm>>,
    rx: PfcRx,
    free: FreeList,
    /// Cell link RAM: `cell_link[c]` = next cell of the same packet.
    cell_link: Sram<u32>,
    queues: PacketQueues,
    /// HCF control blocks, and per queue (`port * 8 + q`) the index of its block.
    hcf: Vec<HcfQueue>,
    hcf_slot: Vec<u16>,
    /// Earliest fixed-period boundary of any HCF queue (`u64::MAX`: none).
    hcf_boundary: u64,
    /// ECM congestion points, and per queue the index of its CP (`u16::MAX`: none).
    ecm: Vec<EcmCp>,
    ecm_slot: Vec<u16>,
    ing: Vec<IngressPort>,
    eg: Vec<EgressPort>,
    dwrr: Vec<Dwrr>,
    /// Ports whose transmitter is not idle.
    tx_busy: u64,
    /// Ports with cells in their ingress FIFO.
    fifo_ports: u64,
    /// Egress ports to evaluate next cycle whatever their wake time (new packet, pause change).
    eg_kick: u64,
    write_rr: usize,
    /// Cells each ingress FIFO holds (`ingress::fifo_depth`).
    fifo_depth: usize,
    read_rr: usize,
    lossless_pool: PoolParams,
    lossy_pool: PoolParams,
    pending_rx: Vec<(u8, PfcFrame)>,
    signals: Vec<SignalDesc>,
    sig_src: Vec<Sig>,
    /// Signal blocks touched in the last step (bit per block, see `signal_block`).
    dirty: Vec<u64>,
    /// Ports that had an ingress beat in this and in the previous cycle.
    beats_now: u64,
    beats_prev: u64,
}

impl Mmu {
    pub fn new(d: Derived) -> Self {
        let ports = d.ports;
        let w = d.cfg.sram_write_cells_per_cycle as usize;
        let lat = d.cfg.sram_read_latency as usize;
        let depth = fifo_depth(ports, w);
        let hcf_queues: Vec<usize> = d
            .hcf
            .iter()
            .map(|h| h.port as usize * QUEUES + h.queue as usize)
            .collect();
        let mut hcf_slot = vec![u16::MAX; ports * QUEUES];
        for (i, &qi) in hcf_queues.iter().enumerate() {
            hcf_slot[qi] = i as u16;
        }
        let mut ecm = Vec::new();
        let mut ecm_slot = vec![u16::MAX; ports * QUEUES];
        for p in 0..ports {
            for q in 0..QUEUES {
                if d.ecm.mask & (1 << q) != 0 {
                    ecm_slot[p * QUEUES + q] = ecm.len() as u16;
                    ecm.push(EcmCp::new(&d.ecm, p as u8, q as u8));
                }
            }
        }
        // With a hybrid ingress pool both thresholds see the free space of both segments.
        let (segment, lossy_segment) = if d.cfg.hybrid_ingress_pool {
            let both = d.shared_cells + d.lossy_shared_cells;
            (both, both)
        } else {
            (d.shared_cells, d.lossy_shared_cells)
        };
        let mut m = Self {
            ecm,
            ecm_slot,
            stats: Stats::new(ports),
            cycle: 0,
            acct: Accounting::new(ports),
            dt: DtThreshold::new(segment, d.cfg.alpha_log2),
            dt_lossy: DtThreshold::new(lossy_segment, d.cfg.lossy_alpha_log2),
            fsm: PfcFsm::new(&d),
            dsh: (d.cfg.policy == Policy::Dsh).then(|| DshThresholds::new(&d)),
            l2bm: (d.cfg.policy == Policy::L2bm).then(|| Box::new(L2bm::new(&d))),
            rx: PfcRx::new(&d),
            free: FreeList::new(d.total_cells),
            cell_link: Sram::new("cell_link", d.total_cells as usize, ports, w, lat),
            queues: PacketQueues::new(ports, d.total_cells, w, lat, &hcf_queues),
            hcf: d.hcf.iter().map(|&h| HcfQueue::new(h)).collect(),
            hcf_slot,
            hcf_boundary: d
                .hcf
                .iter()
                .filter_map(|h| h.period_cycles)
                .min()
                .unwrap_or(u64::MAX),
            ing: (0..ports).map(|_| IngressPort::new(depth)).collect(),
            eg: (0..ports)
                .map(|p| EgressPort::new(d.rate_bps[p], d.clock_hz))
                .collect(),
            dwrr: (0..ports)
                .map(|_| Dwrr::new(d.cfg.dwrr_quantum_bytes, d.cfg.control_queue))
                .collect(),
            tx_busy: 0,
            fifo_ports: 0,
            eg_kick: 0,
            write_rr: 0,
            fifo_depth: depth,
            read_rr: 0,
            lossless_pool: PoolParams {
                private: d.private_cells,
                shared_segment: d.shared_cells,
            },
            lossy_pool: PoolParams {
                private: d.lossy_private_cells,
                shared_segment: d.lossy_shared_cells,
            },
            pending_rx: Vec::with_capacity(ports * 2),
            signals: Vec::new(),
            sig_src: Vec::new(),
            dirty: vec![0; (1 + 2 * ports).div_ceil(64)],
            beats_now: 0,
            beats_prev: 0,
            d,
        };
        // The X_on subtractor shows its value for the reset T from the first sample on.
        m.fsm.eval_xon(m.dt.t());
        m.build_signals();
        m
    }

    pub fn config(&self) -> &Derived {
        &self.d
    }

    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Registered DT threshold of the lossless pool, cells.
    pub fn threshold(&self) -> u32 {
        self.dt.t()
    }

    /// Ingress counters `(private, shared, headroom)` of `(port, pg)`, cells.
    pub fn ingress_counters(&self, port: usize, pg: usize) -> [u32; 3] {
        self.acct.group(port, pg)
    }

    /// Bit `pg`: ingress queue `(port, pg)` is in QOFF.
    pub fn qoff(&self, port: usize) -> u8 {
        self.fsm.off(port)
    }

    /// Egress counter of `(port, queue)`, cells.
    pub fn egress_cells(&self, port: usize, q: usize) -> u32 {
        self.acct.egress[port * QUEUES + q].get()
    }

    /// The HCF block of queue `q` of `port`, and the physical list that is HP now.
    pub fn hcf(&self, port: usize, q: usize) -> Option<(&HcfQueue, u8)> {
        let slot = *self.hcf_slot.get(port * QUEUES + q)?;
        (slot != u16::MAX).then(|| (&self.hcf[slot as usize], self.queues.hp_list(port, q)))
    }

    /// Every ECM congestion point, sorted by (port, queue).
    pub fn ecm_cps(&self) -> &[EcmCp] {
        &self.ecm
    }

    /// Every HCF block, sorted by (port, queue).
    pub fn hcf_queues(&self) -> &[HcfQueue] {
        &self.hcf
    }

    /// The L2BM blocks (recorders, `C`, threshold units, egress DT); `None` unless the
    /// policy is L2BM.
    pub fn l2bm(&self) -> Option<&L2bm> {
        self.l2bm.as_deref()
    }

    /// The occupancy counters and their watermarks.
    pub fn accounting(&self) -> &Accounting {
        &self.acct
    }

    /// Cells held in the buffer or charged to packets still arriving.
    pub fn buffered_cells(&self) -> u32 {
        self.acct.total.get()
    }

    fn err(&self, what: impl Into<String>) -> InvariantError {
        InvariantError {
            cycle: self.cycle,
            what: what.into(),
        }
    }

    /// The first cycle `>= self.cycle()` in which [`Mmu::step`] could change any state or
    /// produce any output if every input stayed idle (no beat, no received PFC frame);
    /// `u64::MAX` if nothing would ever happen without input. A driver may jump to it with
    /// [`Mmu::skip_to`] instead of stepping the idle cycles in between.
    ///
    /// This model evaluates every block every cycle, so the bound is the current cycle: the
    /// driver steps every cycle. An event-driven core tightens it without changing callers.
    pub fn next_event(&self) -> u64 {
        self.cycle
    }

    /// Jump over idle cycles to `cycle`: the model ends in the state that stepping every
    /// cycle from `self.cycle()` to `cycle - 1` with idle inputs would give. `cycle` must
    /// not be past [`Mmu::next_event`] (an `InvariantError` otherwise).
    pub fn skip_to(&mut self, cycle: u64) -> Result<(), InvariantError> {
        let next = self.next_event();
        if cycle < self.cycle || cycle > next {
            return Err(self.err(format!(
                "skip_to({cycle}): allowed {}..={next} (the next event)",
                self.cycle
            )));
        }
        Ok(())
    }

    /// One core clock cycle.
    pub fn step(&mut self, inp: &Inputs, out: &mut Outputs) -> Result<(), InvariantError> {
        out.clear();
        if inp.ingress.len() != self.d.ports {
            return Err(self.err(format!(
                "{} ingress inputs for {} ports",
                inp.ingress.len(),
                self.d.ports
            )));
        }
        for &(p, f) in inp.pfc_rx {
            if p as usize >= self.d.ports {
                return Err(self.err(format!(
                    "PFC frame received on port {p}, which does not exist"
                )));
            }
            self.stats.pfc_frames_rx += 1;
            self.stats.pfc_received(p as usize, &f);
            self.pending_rx.push((p, f));
        }
        self.dirty.fill(0);
        self.dirty[0] = 1;
        // 1. Thresholds.
        let (shared, lossy_shared) = (
            self.acct.shared_total.get(),
            self.acct.lossy_shared_total.get(),
        );
        if self.d.cfg.hybrid_ingress_pool {
            self.dt.eval(shared + lossy_shared);
            self.dt_lossy.eval(shared + lossy_shared);
        } else {
            self.dt.eval(shared);
            self.dt_lossy.eval(lossy_shared);
        }
        if let Some(l) = &mut self.l2bm {
            l.begin_cycle();
            l.dt_egress.eval(self.acct.lossy_total.get());
        }
        let xon = self.fsm.eval_xon(self.dt.t());
        if let Some(dsh) = &mut self.dsh {
            if dsh.eval(self.dt.t()) {
                for p in 0..self.d.ports {
                    self.dirty[(1 + p) / 64] |= 1 << ((1 + p) % 64);
                }
            }
        }
        // 2. Admission.
        let mut shared_granted = 0u32;
        let mut lossy_granted = 0u32;
        for (p, beat) in inp.ingress.iter().enumerate() {
            self.ing[p].beat_valid = beat.is_some();
            if let Some(b) = beat {
                self.beats_now |= 1 << p;
                self.admit_beat(p, b, &mut shared_granted, &mut lossy_granted, out)?;
            }
        }
        // 3. PFC state machines.
        self.resume_queues(xon);
        self.fsm.tick_refresh();
        self.fsm.end_cycle();
        if self.cycle >= self.hcf_boundary {
            self.hcf_boundaries();
        }
        // 4. Egress, round-robin start for fair read grants.
        let mut budget = self.d.cfg.sram_read_cells_per_cycle;
        let n = self.d.ports;
        let mut active = std::mem::take(&mut self.eg_kick) | self.fsm.pending_ports();
        for (p, e) in self.eg.iter().enumerate() {
            if e.wake <= self.cycle {
                active |= 1 << p;
            }
        }
        let mut rest = rotate_ports(active, self.read_rr, n);
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let p = (i + self.read_rr) % n;
            self.touch(1 + n + p);
            self.egress_cycle(p, &mut budget, out)?;
        }
        self.read_rr = (self.read_rr + 1) % n;
        // 5. Write stage.
        self.write_stage()?;
        // 6. Edge.
        self.commit()
    }

    /// HCF queues with a fixed period whose boundary is this cycle (IV-C).
    fn hcf_boundaries(&mut self) {
        let now = self.cycle;
        let mut next = u64::MAX;
        for i in 0..self.hcf.len() {
            let h = &mut self.hcf[i];
            if h.next_boundary == now {
                let (p, q) = (h.p.port as usize, h.p.queue as usize);
                if h.boundary(now, self.queues.hp_list(p, q)) && h.swap {
                    self.queues.swap_roles(p, q);
                }
                self.touch(1 + self.d.ports + p);
            }
            next = next.min(self.hcf[i].next_boundary);
        }
        self.hcf_boundary = next;
    }

    /// QOFF -> QON (and, under DSH, POFF -> PON) for the queues and ports that may resume.
    fn resume_queues(&mut self, xon: u32) {
        let mut ports = self.fsm.off_ports();
        while ports != 0 {
            let p = ports.trailing_zeros() as usize;
            ports &= ports - 1;
            let mut off = self.fsm.resumable(p);
            if self.l2bm.is_some() {
                if off != 0 {
                    self.resume_l2bm(p, off);
                }
                continue;
            }
            while off != 0 {
                let pg = off.trailing_zeros() as usize;
                off &= off - 1;
                let [_, shared, headroom] = self.acct.group(p, pg);
                // Headroom (DSH: the queue's insurance cells) must be empty, or the next
                // pause would find less than eta of it (see pfc_fsm.rs).
                let resume = headroom == 0
                    && match &self.dsh {
                        None => shared < xon,
                        Some(dsh) => shared < dsh.xqon(p),
                    };
                if resume {
                    self.fsm.to_on(p, pg);
                    self.touch(1 + p);
                }
            }
        }
        if let Some(dsh) = &self.dsh {
            let xpon = dsh.xpon();
            let mut ports = self.fsm.resumable_ports();
            while ports != 0 {
                let p = ports.trailing_zeros() as usize;
                ports &= ports - 1;
                // Insurance must be empty: Eq. 4 guarantees no loss only if a port that
                // turns POFF has its whole eta of insurance free for the in-flight cells.
                let insurance = self.acct.port_headroom[p].get();
                if insurance == 0 && (self.acct.port_shared[p].get() as u64) < xpon {
                    self.fsm.to_pon(p);
                    self.touch(1 + p);
                }
            }
        }
    }

    /// L2BM QON: the port's QON unit checks one OFF queue per cycle, round robin from its
    /// scan pointer: `T_i` (Eq. 3) from the registered `tau`, `C` and `T`, then
    /// `X_on = T_i - delta`; the queue turns ON with no headroom cells and its shared
    /// occupancy below `X_on`.
    fn resume_l2bm(&mut self, p: usize, off: u8) {
        let l = self.l2bm.as_mut().expect("L2BM");
        let rr = l.qon_rr[p] as u32;
        let wrapped = (off as u16 | (off as u16) << 8) >> rr;
        let pg = (wrapped.trailing_zeros() + rr) as usize % QUEUES;
        l.qon_rr[p] = ((pg + 1) % QUEUES) as u8;
        let [_, shared, headroom] = self.acct.group(p, pg);
        let tau = l.rec[p * QUEUES + pg].tau;
        let c = l.c;
        l.qon[p].eval(pg as u8, tau, c, self.dt.t());
        let xon = l.qon[p].xon();
        if headroom == 0 && shared < xon {
            self.fsm.to_on(p, pg);
        }
        self.touch(1 + p);
    }

    fn admit_beat(
        &mut self,
        p: usize,
        b: &Beat,
        shared_granted: &mut u32,
        lossy_granted: &mut u32,
        out: &mut Outputs,
    ) -> Result<(), InvariantError> {
        self.check_beat(p, b)?;
        self.stats.cells_in += 1;
        let pg = b.hdr.prio as usize;
        let lossless = self.d.is_lossless(b.hdr.prio);
        if b.sop() {
            let [private, shared, headroom] = self.acct.group(p, pg);
            let n = b.ncells as u32;
            let (t, shared_in_use) = if lossless {
                (self.dt.t(), self.acct.shared_total.get() + *shared_granted)
            } else {
                (
                    self.dt_lossy.t(),
                    self.acct.lossy_shared_total.get() + *lossy_granted,
                )
            };
            let qi = p * QUEUES + pg;
            let eq = b.hdr.dst as usize * QUEUES + pg;
            // L2BM: the queue's own threshold T_i = (C / tau_i) * T (Eq. 3).
            let t = match &mut self.l2bm {
                Some(l) => {
                    let (tau, c) = (l.rec[qi].tau, l.c);
                    l.adm[p].eval(pg as u8, tau, c, t)
                }
                None => t,
            };
            let v = QueueView {
                private,
                shared,
                headroom,
                t,
                shared_in_use,
            };
            let decision = if let (false, Some(l)) = (lossless, &self.l2bm) {
                let eg = self.acct.egress[eq].get() + l.granted(eq);
                admission::l2bm_lossy(n, v, self.lossy_pool, eg, l.dt_egress.t())
            } else if lossless {
                match self.dsh {
                    None => admission::lossless(n, v, self.lossless_pool, self.d.eta_cells[p]),
                    Some(_) => {
                        let port = PortView {
                            poff: self.fsm.poff() & (1 << p) != 0,
                            insurance: self.acct.port_headroom[p].get(),
                            eta: self.d.eta_cells[p],
                        };
                        admission::dsh(n, v, self.lossless_pool, port)
                    }
                }
            } else {
                admission::lossy(n, v, self.lossy_pool)
            };
            // An HCF queue takes the packet into HP or LP, or drops it (Algorithm 1).
            let slot = self.hcf_slot[b.hdr.dst as usize * QUEUES + pg];
            let mut sub = 0;
            let decision = match decision {
                Ok(plan) if slot != u16::MAX => {
                    self.touch(1 + self.d.ports + b.hdr.dst as usize);
                    let hp = self.queues.hp_list(b.hdr.dst as usize, pg);
                    match self.hcf[slot as usize].arrive(&b.hdr.tuple, b.ncells, hp) {
                        Some(list) => {
                            sub = list;
                            Ok(plan)
                        }
                        None => Err(DropReason::HcfFull),
                    }
                }
                other => other,
            };
            match decision {
                Ok(plan) => {
                    let segs = segments(lossless);
                    for (seg, cnt) in segs.into_iter().zip([plan.seg0, plan.seg1, plan.headroom]) {
                        if cnt > 0 {
                            self.touch(1 + self.d.ports + b.hdr.dst as usize);
                            self.acct.push(Update::Charge {
                                port: p as u8,
                                pg: pg as u8,
                                seg,
                                dport: b.hdr.dst,
                                n: cnt as u32,
                            });
                        }
                    }
                    if lossless {
                        *shared_granted += plan.seg1 as u32;
                        match &self.dsh {
                            None => {
                                if plan.headroom > 0 {
                                    self.fsm.to_off(p, pg);
                                }
                            }
                            Some(dsh) => {
                                // Eq. 5: QOFF once the queue's shared occupancy exceeds
                                // X_qoff; Eq. 6: POFF once the port's exceeds X_poff,
                                // or as soon as insurance is needed.
                                let seg1 = plan.seg1 as u32;
                                if seg1 > 0 && shared + seg1 > dsh.xqoff(p) {
                                    self.fsm.to_off(p, pg);
                                }
                                let port_shared = self.acct.port_shared[p].get() + seg1;
                                if plan.headroom > 0 || port_shared as u64 > dsh.xpoff() {
                                    self.fsm.to_poff(p);
                                }
                            }
                        }
                    } else {
                        *lossy_granted += plan.seg1 as u32;
                    }
                    let due = match &mut self.l2bm {
                        Some(l) => {
                            let eg = self.acct.egress[eq].get();
                            l.enqueue(p, qi, b.hdr.dst as usize, eq, eg, n, self.cycle)
                        }
                        None => 0,
                    };
                    let cp = self.ecm_slot[b.hdr.dst as usize * QUEUES + pg];
                    if cp != u16::MAX {
                        if let Some(f) = self.ecm[cp as usize].arrive(&self.d.ecm, &b.hdr) {
                            out.ecm_tx.push(f);
                        }
                    }
                    let ing = &mut self.ing[p];
                    if ing.pending.len() == self.fifo_depth + 2 {
                        return Err(self.err(format!(
                            "ingress p{p}: more packets in flight than the FIFO can hold"
                        )));
                    }
                    ing.pending.push_back(Desc {
                        hdr: b.hdr,
                        ncells: b.ncells,
                        head: crate::packet_queue::NULL,
                        sub,
                        due,
                    });
                    ing.arriving = Some(Ok(plan));
                }
                Err(r) => {
                    // A lossless queue that overflows its headroom must stop its upstream
                    // too (case 4 implies case 3's condition), whatever its eta.
                    if lossless {
                        self.fsm.to_off(p, pg);
                        if self.dsh.is_some() {
                            self.fsm.to_poff(p);
                        }
                    }
                    self.ing[p].arriving = Some(Err(r));
                }
            }
        }
        let fate = match self.ing[p].arriving {
            Some(Ok(plan)) => {
                let seg = segment_of(lossless, b.idx, plan.seg0, plan.seg1);
                let ing = &mut self.ing[p];
                if ing.fifo.len() == self.fifo_depth {
                    return Err(self.err(format!(
                        "ingress p{p}: cell FIFO overflow (write stage too slow)"
                    )));
                }
                ing.fifo.push_back(FifoCell { beat: *b, plan });
                self.fifo_ports |= 1 << p;
                self.stats.admitted[seg_index(seg)] += 1;
                CellFate::Admitted(seg)
            }
            Some(Err(r)) => {
                let h = &b.hdr;
                self.stats.drop_cell(h.src, h.dst, h.prio, r, b.sop());
                CellFate::Dropped(r)
            }
            None => {
                return Err(self.err(format!(
                    "ingress p{p}: cell {} of a packet whose start never arrived",
                    b.idx
                )))
            }
        };
        self.ing[p].next_idx = b.idx + 1;
        if b.eop() {
            self.ing[p].arriving = None;
            self.ing[p].next_idx = 0;
        }
        out.cell_events.push(CellEvent { beat: *b, fate });
        Ok(())
    }

    /// The ingress bus protocol: a beat the MMU cannot have been sent by a MAC is refused
    /// with an error naming the port and the field, not left to corrupt the buffer.
    fn check_beat(&self, p: usize, b: &Beat) -> Result<(), InvariantError> {
        let h = &b.hdr;
        let bad =
            |what: String| Err(self.err(format!("ingress p{p}: malformed beat {b:?}: {what}")));
        if h.src as usize != p {
            return bad(format!(
                "hdr.src = {} but the beat arrived on port {p}",
                h.src
            ));
        }
        if h.dst as usize >= self.d.ports {
            return bad(format!(
                "hdr.dst = {} is not a port (0..{})",
                h.dst, self.d.ports
            ));
        }
        if h.prio > 7 {
            return bad(format!("hdr.prio = {} is not a priority (0..=7)", h.prio));
        }
        let n = self.d.cells_for(h.len as u32);
        if b.ncells as u32 != n || n == 0 {
            return bad(format!(
                "ncells = {} but a {} B packet takes {n} cells",
                b.ncells, h.len
            ));
        }
        let expected = self.ing[p].next_idx;
        if b.idx != expected {
            return bad(format!("cell index {} where {expected} was due", b.idx));
        }
        Ok(())
    }

    fn egress_cycle(
        &mut self,
        p: usize,
        budget: &mut u32,
        out: &mut Outputs,
    ) -> Result<(), InvariantError> {
        let now = self.cycle;
        self.queues.advance_refill(p, now);
        let was_idle = matches!(self.eg[p].tx, Tx::Idle);
        if !was_idle {
            // The cycles since the last visit were all plain transfer cycles.
            let skipped = now - self.eg[p].last_visit - 1;
            self.eg[p].wire.advance(skipped);
        }
        self.eg[p].last_visit = now;
        let lat = self.d.cfg.sram_read_latency as u64;
        let cell_bits = self.d.cfg.cell_bytes as u64 * 8;
        let ovh_bits = self.d.cfg.packet_overhead_bytes as u64 * 8;
        let mut ticked = false;
        let mut wake = u64::MAX;
        for _ in 0..2 {
            if matches!(self.eg[p].tx, Tx::Idle) && !self.start_tx(p, was_idle)? {
                break;
            }
            match self.eg[p].tx {
                Tx::Idle => break,
                Tx::Pfc(frame) => {
                    if !ticked {
                        self.eg[p].wire.tick();
                        ticked = true;
                    }
                    let bits = PFC_FRAME_WIRE_BYTES as u64 * 8;
                    if !self.eg[p].wire.reached(bits) {
                        wake = now + self.eg[p].wire.ticks_until(bits);
                        break;
                    }
                    self.eg[p].wire.consume(bits);
                    self.eg[p].tx = Tx::Idle;
                    if frame.paused() != 0 {
                        self.stats.pfc_pause_frames_tx += 1;
                    } else {
                        self.stats.pfc_resume_frames_tx += 1;
                    }
                    self.stats.pfc_sent(p, &frame);
                    self.stats.pfc_pause_events += frame.paused().count_ones() as u64;
                    self.stats.pfc_resume_events += frame.resumed().count_ones() as u64;
                    out.pfc_tx.push((p as u8, frame));
                }
                Tx::Data(mut t) => {
                    let n = t.desc.ncells;
                    if t.cell_ptr.is_none() && t.k < n {
                        if now == t.ptr_at {
                            t.cell_ptr = self.cell_link.rdata(p);
                        } else if now > t.ptr_at {
                            return Err(
                                self.err(format!("egress p{p}: next-pointer read data missed"))
                            );
                        }
                    }
                    let read_point = |k: u16| (k as u64 * cell_bits).saturating_sub(ovh_bits);
                    if t.k < n && self.eg[p].wire.reached(read_point(t.k)) {
                        match t.cell_ptr {
                            Some(ptr) if *budget > 0 => {
                                *budget -= 1;
                                self.read_cell(p, &mut t, ptr, out);
                                t.ptr_at = now + lat;
                            }
                            _ => {
                                self.stats.read_stall_cycles += 1;
                                self.eg[p].tx = Tx::Data(t);
                                wake = now + 1;
                                break;
                            }
                        }
                    }
                    if !ticked {
                        self.eg[p].wire.tick();
                        ticked = true;
                    }
                    let wire_bits = self.d.wire_bits(t.desc.hdr.len as u32);
                    if t.k == n && self.eg[p].wire.reached(wire_bits) {
                        self.eg[p].wire.consume(wire_bits);
                        self.eg[p].tx = Tx::Idle;
                        self.stats.packets_out += 1;
                        continue;
                    }
                    wake = if t.k == n {
                        now + self.eg[p].wire.ticks_until(wire_bits)
                    } else {
                        // Evaluated before its tick, cycle c sees this cycle's bits plus
                        // c - now - 1 more ticks.
                        let read_at = now + 1 + self.eg[p].wire.ticks_until(read_point(t.k));
                        if t.cell_ptr.is_none() {
                            read_at.min(t.ptr_at)
                        } else {
                            read_at
                        }
                    };
                    self.eg[p].tx = Tx::Data(t);
                    break;
                }
            }
        }
        self.eg[p].wake = wake.min(self.queues.refill_at(p));
        if matches!(self.eg[p].tx, Tx::Idle) {
            self.tx_busy &= !(1 << p);
        } else {
            self.tx_busy |= 1 << p;
        }
        Ok(())
    }

    /// Start a PFC frame (it goes first) or the next packet. `fresh`: the line was idle, so
    /// no fractional bit time carries over.
    fn start_tx(&mut self, p: usize, fresh: bool) -> Result<bool, InvariantError> {
        if self.fsm.has_pending(p) {
            self.eg[p].tx = Tx::Pfc(self.fsm.take_frame(p));
        } else {
            if self.queues.refilling(p) {
                return Ok(false);
            }
            let nonempty = self.queues.nonempty[p];
            let eligible = self.queues.ready_mask(p) & !self.rx.paused(p);
            let queues = &self.queues;
            let Some(q) = self.dwrr[p].pick(nonempty, eligible, |q| queues.head_len(p, q)) else {
                return Ok(false);
            };
            let desc = self.queues.dequeue(p, q, self.cycle);
            let slot = self.hcf_slot[p * QUEUES + q];
            if slot != u16::MAX {
                let hp = self.queues.hp_list(p, q);
                let h = &mut self.hcf[slot as usize];
                match h.depart(desc.sub, desc.ncells, hp, self.cycle) {
                    Ok(true) if h.swap => self.queues.swap_roles(p, q),
                    Ok(_) => {}
                    Err(e) => return Err(self.err(format!("egress p{p} q{q}: {e}"))),
                }
            }
            let cp = self.ecm_slot[p * QUEUES + q];
            if cp != u16::MAX {
                if let Err(e) = self.ecm[cp as usize].depart(desc.hdr.len) {
                    return Err(self.err(format!("egress p{p} q{q}: {e}")));
                }
            }
            if self.queues.nonempty[p] & (1 << q) == 0 {
                self.dwrr[p].queue_emptied(q);
            }
            self.eg[p].tx = Tx::Data(DataTx {
                desc,
                queue: q as u8,
                k: 0,
                cell_ptr: Some(desc.head),
                last_ptr: desc.head,
                ptr_at: u64::MAX,
            });
        }
        if fresh {
            self.eg[p].wire.clear();
        }
        Ok(true)
    }

    fn read_cell(&mut self, p: usize, t: &mut DataTx, ptr: u32, out: &mut Outputs) {
        let lossless = self.d.is_lossless(t.desc.hdr.prio);
        if t.k == 0 {
            // L2BM: the packet leaves its ingress queue's recorder with its first cell.
            if let Some(l) = &mut self.l2bm {
                let qi = t.desc.hdr.src as usize * QUEUES + t.desc.hdr.prio as usize;
                l.dequeue(qi, t.desc.due, self.cycle);
            }
        }
        self.free.push(ptr);
        self.touch(1 + t.desc.hdr.src as usize);
        self.acct.push(Update::Release {
            port: t.desc.hdr.src,
            pg: t.desc.hdr.prio,
            lossless,
            dport: p as u8,
        });
        out.departures.push(Departure {
            port: p as u8,
            beat: Beat {
                hdr: t.desc.hdr,
                idx: t.k,
                ncells: t.desc.ncells,
            },
        });
        self.stats.cells_out += 1;
        t.k += 1;
        t.last_ptr = ptr;
        t.cell_ptr = None;
        if t.k < t.desc.ncells {
            self.cell_link.read(p, ptr as usize);
        }
    }

    fn write_stage(&mut self) -> Result<(), InvariantError> {
        let n = self.d.ports;
        let mut budget = self.d.cfg.sram_write_cells_per_cycle;
        // Round-robin rounds over the ports with cells waiting, one grant per port per
        // round, until the write bandwidth is used up: work-conserving, so a port that
        // missed a grant (other ports took them) catches up when bandwidth is free. One
        // grant per port per cycle would never let a port near one cell per cycle recover.
        let mut rest = rotate_ports(self.fifo_ports, self.write_rr, n);
        while budget > 0 {
            if rest == 0 {
                rest = rotate_ports(self.fifo_ports, self.write_rr, n);
                if rest == 0 {
                    break;
                }
            }
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let p = (i + self.write_rr) % n;
            budget -= 1;
            let Some(ptr) = self.free.pop() else {
                return Err(self
                    .err("free list empty at a cell write: admission over-committed the buffer"));
            };
            let ing = &mut self.ing[p];
            let cell = ing
                .fifo
                .pop_front()
                .expect("fifo_ports bit set for an empty FIFO");
            if ing.fifo.is_empty() {
                self.fifo_ports &= !(1 << p);
            }
            if cell.beat.sop() {
                ing.pending[0].head = ptr;
                ing.written = 0;
            } else {
                self.cell_link.write(ing.prev as usize, ptr);
            }
            ing.prev = ptr;
            ing.written += 1;
            if cell.beat.eop() {
                let desc = ing
                    .pending
                    .pop_front()
                    .expect("a written packet is pending");
                ing.written = 0;
                self.queues
                    .enqueue(desc.hdr.dst as usize, desc.hdr.prio as usize, desc);
                self.eg_kick |= 1 << desc.hdr.dst;
            }
        }
        self.write_rr = (self.write_rr + 1) % n;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), InvariantError> {
        if let Err(e) = self.acct.commit() {
            return Err(self.err(e.to_string()));
        }
        self.free.commit();
        self.cell_link.commit();
        self.queues.commit();
        self.dt.t.commit();
        self.dt_lossy.t.commit();
        if let Some(l) = &mut self.l2bm {
            l.dt_egress.t.commit();
            if let Err(e) = l.commit(self.cycle) {
                return Err(self.err(e));
            }
        }
        self.rx.tick();
        for &(p, f) in &self.pending_rx {
            self.rx.receive(p as usize, &f);
        }
        self.pending_rx.clear();
        let changed = self.rx.take_changed();
        self.eg_kick |= changed;
        let mut ports = changed | self.beats_now | self.beats_prev;
        while ports != 0 {
            let p = ports.trailing_zeros() as usize;
            ports &= ports - 1;
            if changed & (1 << p) != 0 {
                self.touch(1 + self.d.ports + p);
            }
            if (self.beats_now | self.beats_prev) & (1 << p) != 0 {
                self.touch(1 + p);
            }
        }
        self.beats_prev = std::mem::take(&mut self.beats_now);
        self.cycle += 1;
        Ok(())
    }
}

#[inline]
fn mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Rotate an `n`-bit port bitmap right by `r`, so bit `i` of the result is port
/// `(i + r) % n`: the round-robin order starting at port `r`.
#[inline]
fn rotate_ports(bits: u64, r: usize, n: usize) -> u64 {
    if r == 0 {
        bits & mask(n)
    } else {
        ((bits >> r) | (bits << (n - r))) & mask(n)
    }
}

/// The segments of a pool, in the order a packet's cells are charged to them.
fn segments(lossless: bool) -> [Segment; 3] {
    if lossless {
        [Segment::Private, Segment::Shared, Segment::Headroom]
    } else {
        [
            Segment::LossyPrivate,
            Segment::LossyShared,
            Segment::Headroom,
        ]
    }
}

/// Segment of cell `k` of a packet whose first `seg0` cells are private and next `seg1`
/// shared.
#[inline]
fn segment_of(lossless: bool, k: u16, seg0: u16, seg1: u16) -> Segment {
    let s = segments(lossless);
    if k < seg0 {
        s[0]
    } else if k < seg0 + seg1 {
        s[1]
    } else {
        s[2]
    }
}

fn seg_index(s: Segment) -> usize {
    Segment::ALL.iter().position(|&x| x == s).unwrap()
}

impl Mmu {
    #[inline]
    fn touch(&mut self, block: usize) {
        self.dirty[block / 64] |= 1 << (block % 64);
    }

    /// The block a signal belongs to: 0 global (thresholds, buffer totals), `1 + p`
    /// ingress port `p`, `1 + ports + p` egress port `p`.
    pub fn signal_block(&self, i: usize) -> usize {
        let n = self.d.ports;
        match self.sig_src[i] {
            Sig::BeatValid(p)
            | Sig::IngCounter(p, ..)
            | Sig::Qoff(p)
            | Sig::Xqoff(p, _)
            | Sig::Xqon(p, _)
            | Sig::Poff(p)
            | Sig::PortShared(p)
            | Sig::PortHeadroom(p)
            | Sig::L2bmEst(p, _)
            | Sig::L2bmAdm(p, _)
            | Sig::L2bmQon(p, _)
            | Sig::L2bmQonRr(p) => 1 + p,
            Sig::L2bmRec(qi, _) => 1 + qi / QUEUES,
            Sig::RxQoff(p) | Sig::RxPoff(p) => 1 + n + p,
            Sig::EgCells(p, _)
            | Sig::Deficit(p, _)
            | Sig::Paused(p)
            | Sig::TxState(p)
            | Sig::TxQueue(p) => 1 + n + p,
            Sig::HpSel(i) | Sig::Hcf(i, _) => 1 + n + self.hcf[i].p.port as usize,
            Sig::Ecm(i, _) => 1 + n + self.ecm[i].port as usize,
            _ => 0,
        }
    }

    /// Number of signal blocks (`1 + 2 * ports`).
    pub fn signal_blocks(&self) -> usize {
        1 + 2 * self.d.ports
    }

    /// Blocks whose signals may have changed at the last edge (bit `b % 64` of word
    /// `b / 64`); signals of other blocks are guaranteed unchanged. Lets a waveform writer
    /// sample only what moved.
    pub fn dirty_blocks(&self) -> &[u64] {
        &self.dirty
    }

    fn push_sig(&mut self, path: String, width: u32, src: Sig) {
        self.signals.push(SignalDesc { path, width });
        self.sig_src.push(src);
    }

    fn build_signals(&mut self) {
        let dt_wires: Vec<(String, u32)> = self.dt.wires().collect();
        for (i, (name, w)) in dt_wires.iter().enumerate() {
            self.push_sig(format!("top.mmu.dt.{name}"), *w, Sig::Dt(i));
            self.push_sig(format!("top.mmu.dt_lossy.{name}"), *w, Sig::DtLossy(i));
        }
        if let Some(dsh) = &self.dsh {
            for (i, (name, w)) in dsh.global_wires().into_iter().enumerate() {
                self.push_sig(format!("top.mmu.dsh.{name}"), w, Sig::DshGlobal(i));
            }
        } else if self.l2bm.is_none() {
            let xon: Vec<_> = self.fsm.sub_xon.wires().to_vec();
            for (i, w) in xon.iter().enumerate() {
                self.push_sig(
                    format!("top.mmu.pfc.sub_xon.{}", w.name),
                    w.width,
                    Sig::Xon(i),
                );
            }
        }
        for (name, src) in [
            ("free_cells", Sig::FreeCells),
            ("total_cells", Sig::TotalCells),
            ("shared_cells", Sig::SharedCells),
            ("lossy_shared_cells", Sig::LossySharedCells),
        ] {
            self.push_sig(format!("top.mmu.buffer.{name}"), CNT_BITS, src);
        }
        let l2bm_units = self.l2bm.as_ref().map(|l| {
            let dt: Vec<(String, u32)> = l.dt_egress.wires().collect();
            (dt, l.adm[0].wires(), l.qon[0].wires())
        });
        if let Some((dt, ..)) = &l2bm_units {
            self.push_sig("top.mmu.l2bm.c".into(), l2bm::C_BITS, Sig::L2bmC);
            for (i, (name, w)) in dt.iter().enumerate() {
                self.push_sig(
                    format!("top.mmu.l2bm.dt_egress.{name}"),
                    *w,
                    Sig::L2bmDtEgress(i),
                );
            }
        }
        for p in 0..self.d.ports {
            let pre = format!("top.mmu.ingress.p{p:02}");
            self.push_sig(format!("{pre}.beat_valid"), 1, Sig::BeatValid(p));
            self.push_sig(format!("{pre}.qoff"), 8, Sig::Qoff(p));
            if let Some(dsh) = &self.dsh {
                let wires: Vec<_> = dsh.sub_xqoff[p].wires().to_vec();
                for (i, w) in wires.iter().enumerate() {
                    self.push_sig(
                        format!("{pre}.sub_xqoff.{}", w.name),
                        w.width,
                        Sig::Xqoff(p, i),
                    );
                    self.push_sig(
                        format!("{pre}.sub_xqon.{}", w.name),
                        w.width,
                        Sig::Xqon(p, i),
                    );
                }
                self.push_sig(format!("{pre}.poff"), 1, Sig::Poff(p));
                self.push_sig(
                    format!("{pre}.port_shared_cells"),
                    CNT_BITS,
                    Sig::PortShared(p),
                );
                self.push_sig(
                    format!("{pre}.insurance_cells"),
                    CNT_BITS,
                    Sig::PortHeadroom(p),
                );
            }
            if let Some((_, adm, qon)) = &l2bm_units {
                for (i, (name, w)) in EstUnit::WIRES.iter().enumerate() {
                    self.push_sig(format!("{pre}.l2bm.est.{name}"), *w, Sig::L2bmEst(p, i));
                }
                for (i, (name, w)) in adm.iter().enumerate() {
                    self.push_sig(format!("{pre}.l2bm.adm.{name}"), *w, Sig::L2bmAdm(p, i));
                }
                for (i, (name, w)) in qon.iter().enumerate() {
                    self.push_sig(format!("{pre}.l2bm.qon.{name}"), *w, Sig::L2bmQon(p, i));
                }
                self.push_sig(format!("{pre}.l2bm.qon_rr"), 3, Sig::L2bmQonRr(p));
            }
            for pg in 0..QUEUES {
                let names: &[&str] = if self.d.is_lossless(pg as u8) {
                    &["private_cells", "shared_cells", "headroom_cells"]
                } else {
                    &["lossy_private_cells", "lossy_shared_cells"]
                };
                for (s, name) in names.iter().enumerate() {
                    self.push_sig(
                        format!("{pre}.pg{pg}.{name}"),
                        CNT_BITS,
                        Sig::IngCounter(p, pg, s),
                    );
                }
                if l2bm_units.is_some() {
                    for (r, (name, w)) in [
                        ("t_total", l2bm::TOTAL_BITS),
                        ("n", CNT_BITS),
                        ("t_prev", l2bm::TIME_BITS),
                        ("tau", l2bm::TAU_BITS),
                    ]
                    .into_iter()
                    .enumerate()
                    {
                        self.push_sig(
                            format!("{pre}.pg{pg}.l2bm.{name}"),
                            w,
                            Sig::L2bmRec(p * QUEUES + pg, r),
                        );
                    }
                }
            }
            let pre = format!("top.mmu.egress.p{p:02}");
            self.push_sig(format!("{pre}.tx_state"), 2, Sig::TxState(p));
            self.push_sig(format!("{pre}.tx_queue"), 3, Sig::TxQueue(p));
            self.push_sig(format!("{pre}.rx_qoff"), 8, Sig::RxQoff(p));
            self.push_sig(format!("{pre}.rx_poff"), 1, Sig::RxPoff(p));
            self.push_sig(format!("{pre}.paused"), 8, Sig::Paused(p));
            for q in 0..QUEUES {
                self.push_sig(format!("{pre}.q{q}.cells"), CNT_BITS, Sig::EgCells(p, q));
                self.push_sig(format!("{pre}.q{q}.deficit"), 17, Sig::Deficit(p, q));
                let cp = self.ecm_slot[p * QUEUES + q];
                if cp != u16::MAX {
                    for (w, (name, width)) in EcmCp::wires().into_iter().enumerate() {
                        let path = format!("{pre}.q{q}.ecm.{name}");
                        self.push_sig(path, width, Sig::Ecm(cp as usize, w));
                    }
                }
                let slot = self.hcf_slot[p * QUEUES + q];
                if slot != u16::MAX {
                    let i = slot as usize;
                    self.push_sig(format!("{pre}.q{q}.hcf.hp_sel"), 1, Sig::HpSel(i));
                    for (w, (name, width)) in self.hcf[i].wires().into_iter().enumerate() {
                        self.push_sig(format!("{pre}.q{q}.hcf.{name}"), width, Sig::Hcf(i, w));
                    }
                }
            }
        }
    }

    /// Every probed signal, in a fixed order (the same for the same configuration).
    pub fn signals(&self) -> &[SignalDesc] {
        &self.signals
    }

    /// Current value of signal `i` (index into `signals()`), registers as of the last edge.
    pub fn signal_value(&self, i: usize) -> u64 {
        match self.sig_src[i] {
            Sig::Dt(w) => self.dt.wire_value(w),
            Sig::DtLossy(w) => self.dt_lossy.wire_value(w),
            Sig::Xon(w) => self.fsm.sub_xon.wire_value(w),
            Sig::DshGlobal(w) => self.dsh.as_ref().map_or(0, |d| d.global_wire_value(w)),
            Sig::Xqoff(p, w) => self
                .dsh
                .as_ref()
                .map_or(0, |d| d.sub_xqoff[p].wire_value(w)),
            Sig::Xqon(p, w) => self.dsh.as_ref().map_or(0, |d| d.sub_xqon[p].wire_value(w)),
            Sig::Poff(p) => (self.fsm.poff() >> p) & 1,
            Sig::PortShared(p) => self.acct.port_shared[p].get() as u64,
            Sig::PortHeadroom(p) => self.acct.port_headroom[p].get() as u64,
            Sig::RxQoff(p) => self.rx.qoff(p) as u64,
            Sig::RxPoff(p) => self.rx.poff(p) as u64,
            Sig::FreeCells => self.free.count() as u64,
            Sig::TotalCells => self.acct.total.get() as u64,
            Sig::SharedCells => self.acct.shared_total.get() as u64,
            Sig::LossySharedCells => self.acct.lossy_shared_total.get() as u64,
            Sig::BeatValid(p) => self.ing[p].beat_valid as u64,
            Sig::IngCounter(p, pg, s) => self.acct.group(p, pg)[s] as u64,
            Sig::Qoff(p) => self.fsm.off(p) as u64,
            Sig::EgCells(p, q) => self.acct.egress[p * QUEUES + q].get() as u64,
            Sig::Deficit(p, q) => self.dwrr[p].deficit(q) as u64,
            Sig::Paused(p) => self.rx.paused(p) as u64,
            Sig::TxState(p) => self.eg[p].tx.code(),
            Sig::TxQueue(p) => match self.eg[p].tx {
                Tx::Data(t) => t.queue as u64,
                _ => 0,
            },
            Sig::Ecm(i, w) => self.ecm[i].wire_value(w),
            Sig::HpSel(i) => {
                let h = &self.hcf[i].p;
                self.queues.hp_list(h.port as usize, h.queue as usize) as u64
            }
            Sig::Hcf(i, w) => {
                let h = &self.hcf[i];
                let hp = self.queues.hp_list(h.p.port as usize, h.p.queue as usize);
                h.wire_value(w, hp)
            }
            Sig::L2bmC
            | Sig::L2bmDtEgress(_)
            | Sig::L2bmRec(..)
            | Sig::L2bmEst(..)
            | Sig::L2bmAdm(..)
            | Sig::L2bmQon(..)
            | Sig::L2bmQonRr(_) => self.l2bm_signal(self.sig_src[i]),
        }
    }

    fn l2bm_signal(&self, src: Sig) -> u64 {
        let Some(l) = &self.l2bm else { return 0 };
        match src {
            Sig::L2bmC => l.c,
            Sig::L2bmDtEgress(w) => l.dt_egress.wire_value(w),
            Sig::L2bmRec(qi, r) => {
                let rec = &l.rec[qi];
                [rec.t_total as u64, rec.n as u64, rec.t_prev, rec.tau][r]
            }
            Sig::L2bmEst(p, w) => l.est[p].wire_value(w),
            Sig::L2bmAdm(p, w) => l.adm[p].wire_value(w),
            Sig::L2bmQon(p, w) => l.qon[p].wire_value(w),
            Sig::L2bmQonRr(p) => l.qon_rr[p] as u64,
            _ => 0,
        }
    }

    /// GTKWave view: the key signals of each block, as (group name, signal paths).
    pub fn gtkw_groups(&self) -> Vec<(String, Vec<String>)> {
        // A signal of an ingress priority group (`...pNN.pgG....`).
        let in_pg = |s: &str| s.split('.').any(|c| c.len() == 3 && c.starts_with("pg"));
        let pick = |f: &dyn Fn(&str) -> bool| -> Vec<String> {
            self.signals
                .iter()
                .filter(|s| f(&s.path))
                .map(|s| s.path.clone())
                .collect()
        };
        vec![
            ("buffer".into(), pick(&|s| s.starts_with("top.mmu.buffer."))),
            ("dt (Eq. 2)".into(), pick(&|s| s.starts_with("top.mmu.dt."))),
            (
                "pfc X_on = T - delta".into(),
                pick(&|s| s.starts_with("top.mmu.pfc.")),
            ),
            (
                "ingress QOFF per port".into(),
                pick(&|s| s.starts_with("top.mmu.ingress.") && s.ends_with(".qoff")),
            ),
            (
                "egress paused per port".into(),
                pick(&|s| s.starts_with("top.mmu.egress.") && s.ends_with(".paused")),
            ),
            (
                "egress tx state".into(),
                pick(&|s| s.starts_with("top.mmu.egress.") && s.ends_with(".tx_state")),
            ),
            (
                "dsh X_poff = N_q * T (Eq. 6), X_pon".into(),
                pick(&|s| s.starts_with("top.mmu.dsh.")),
            ),
            (
                "dsh X_qoff = T - eta (Eq. 5), X_qon, PON/POFF per port".into(),
                pick(&|s| {
                    s.starts_with("top.mmu.ingress.")
                        && (s.contains(".sub_xqoff.")
                            || s.contains(".sub_xqon.")
                            || s.ends_with(".poff")
                            || s.ends_with(".port_shared_cells")
                            || s.ends_with(".insurance_cells"))
                }),
            ),
            (
                "hcf: HP select, sub-queue lengths, period stamp, credit bins".into(),
                pick(&|s| s.contains(".hcf.")),
            ),
            (
                "ecm congestion points: qlen (64 B pages), sampling".into(),
                pick(&|s| s.contains(".ecm.")),
            ),
            (
                "l2bm: C (sum of tau), lossy egress DT".into(),
                pick(&|s| s.starts_with("top.mmu.l2bm.")),
            ),
            (
                "l2bm recorders (Algorithm 1): t_total, N, t_prev, tau".into(),
                pick(&|s| s.contains(".l2bm.") && in_pg(s)),
            ),
            (
                "l2bm units per ingress port: estimate, T_i (Eq. 3) at admission and QON".into(),
                pick(&|s| s.starts_with("top.mmu.ingress.") && s.contains(".l2bm.") && !in_pg(s)),
            ),
            (
                "egress pause = QOFF OR POFF".into(),
                pick(&|s| {
                    s.starts_with("top.mmu.egress.")
                        && (s.ends_with(".rx_qoff") || s.ends_with(".rx_poff"))
                }),
            ),
        ]
        .into_iter()
        .filter(|(_, signals)| !signals.is_empty())
        .collect()
    }

    /// Break the model on purpose (companion tests of the invariant checks).
    pub fn inject_fault(&mut self, f: Fault) {
        match f {
            Fault::DoubleFreeCell => {
                let first = self.free.iter().next();
                if let Some(p) = first {
                    self.free.push(p);
                    self.free.commit();
                }
            }
            Fault::LeakCell => {
                self.free.pop();
            }
            Fault::SkewCounter => {
                self.acct.ingress[0][1]
                    .add(1)
                    .expect("room for one more cell");
            }
            Fault::HcfNoSwap => self.hcf.iter_mut().for_each(|h| h.swap = false),
            Fault::HcfCreditAboveC0 => {
                if let Some(h) = self.hcf.first_mut() {
                    h.force_credit(0, u32::MAX);
                }
            }
            Fault::HcfSkewLength => {
                if let Some(h) = self.hcf.first_mut() {
                    h.len[0] += 1;
                }
            }
            Fault::EcmSkewQlen => {
                if let Some(cp) = self.ecm.first_mut() {
                    cp.qlen += 1;
                }
            }
            Fault::L2bmSkewCount => {
                if let Some(l) = &mut self.l2bm {
                    l.rec[0].n += 1;
                }
            }
            Fault::L2bmSkewTotal => {
                if let Some(l) = &mut self.l2bm {
                    l.rec[0].t_total += 1;
                }
            }
            Fault::LowWatermark => {
                let a = &mut self.acct;
                if let Some(i) = a.ingress.iter().position(|g| g.iter().any(|c| c.get() > 0)) {
                    a.watermarks.ingress[i][0] = 0;
                }
            }
        }
    }

    /// HCF registers: each list length equals a recount of its packets (queued, or admitted
    /// and still being written), and every credit is within `0..=c0`.
    fn check_hcf(&self, queued: &[Desc]) -> Result<(), InvariantError> {
        for h in &self.hcf {
            let (p, q) = (h.p.port, h.p.queue);
            let mut len = [0u32; 2];
            let pending = self.ing.iter().flat_map(|i| i.pending.iter());
            for d in queued.iter().chain(pending) {
                if d.hdr.dst == p && d.hdr.prio == q {
                    len[d.sub as usize] += h.units(d.ncells);
                }
            }
            if len != h.len {
                return Err(self.err(format!(
                    "egress p{p} q{q}: HCF length registers {:?}, recount of the lists {len:?}",
                    h.len
                )));
            }
            h.check_credits()
                .map_err(|e| self.err(format!("egress p{p} q{q}: {e}")))?;
        }
        Ok(())
    }

    /// ECM queue lengths: each equals the pages of the packets queued or being written.
    fn check_ecm(&self, queued: &[Desc]) -> Result<(), InvariantError> {
        let mut want = vec![0u32; self.ecm.len()];
        let pending = self.ing.iter().flat_map(|i| i.pending.iter());
        for d in queued.iter().chain(pending) {
            let cp = self.ecm_slot[d.hdr.dst as usize * QUEUES + d.hdr.prio as usize];
            if cp != u16::MAX {
                want[cp as usize] += crate::ecm_cp::pages(d.hdr.len);
            }
        }
        for (cp, w) in self.ecm.iter().zip(want) {
            if cp.qlen != w {
                return Err(self.err(format!(
                    "egress p{} q{}: ECM qlen {} pages, recount {w}",
                    cp.port, cp.queue, cp.qlen
                )));
            }
        }
        Ok(())
    }

    /// L2BM recorders: each `N` equals a recount of the queue's packets that are queued,
    /// being written, or being sent with their first cell not yet read; `t_total` equals
    /// the sum of their `due - t_prev`; `tau` equals `t_total / N`; `C` the sum of `tau`.
    fn check_l2bm(&self, queued: &[Desc]) -> Result<(), InvariantError> {
        let Some(l) = &self.l2bm else { return Ok(()) };
        let pending = self.ing.iter().flat_map(|i| i.pending.iter());
        let sending = self.eg.iter().filter_map(|e| match &e.tx {
            Tx::Data(t) if t.k == 0 => Some(&t.desc),
            _ => None,
        });
        let packets = queued
            .iter()
            .chain(pending)
            .chain(sending)
            .map(|d| (d.hdr.src as usize * QUEUES + d.hdr.prio as usize, d.due));
        l.check(packets).map_err(|e| self.err(e))
    }

    /// Full structural check, independent of the counters it verifies:
    /// - every cell is exactly once either free, in a queue, being written or being sent;
    /// - every ingress and egress counter and every total equals a recount of the lists;
    /// - the lossless shared segment and headroom are within their sizes;
    /// - every watermark is at or above the counter it watches.
    ///
    /// Costs a walk of the whole buffer: call it every few thousand cycles, not every cycle.
    pub fn check_invariants(&self) -> Result<(), InvariantError> {
        let total = self.d.total_cells as usize;
        let mut owner: BitVec = bitvec![0; total];
        let mut claim = |c: u32, what: &str| -> Result<(), InvariantError> {
            let i = c as usize;
            if i >= total {
                return Err(self.err(format!("{what}: cell pointer {c} out of range")));
            }
            if owner[i] {
                return Err(self.err(format!("cell {c} is used twice ({what})")));
            }
            owner.set(i, true);
            Ok(())
        };
        for c in self.free.iter() {
            claim(c, "free list")?;
        }
        let ports = self.d.ports;
        let mut ing = vec![0u32; ports * QUEUES];
        let mut eg = vec![0u32; ports * QUEUES];
        let mut charge = |d: &Desc, from: u16| {
            let r = (d.ncells - from) as u32;
            ing[d.hdr.src as usize * QUEUES + d.hdr.prio as usize] += r;
            eg[d.hdr.dst as usize * QUEUES + d.hdr.prio as usize] += r;
        };
        let mut walk_cells = |first: u32, count: u32, what: &str| -> Result<(), InvariantError> {
            let mut c = first;
            for i in 0..count {
                claim(c, what)?;
                if i + 1 < count {
                    c = self.cell_link.backdoor(c as usize);
                }
            }
            Ok(())
        };
        let mut queued: Vec<Desc> = Vec::new();
        for p in 0..ports {
            for q in 0..QUEUES {
                for li in self.queues.lists_of(p * QUEUES + q) {
                    let mut cells = 0u32;
                    self.queues.walk(li, |d| {
                        cells += d.ncells as u32;
                        queued.push(*d);
                    });
                    let regs = &self.queues.lists[li];
                    if cells != regs.cells {
                        return Err(self.err(format!(
                            "egress p{p} q{q} list {li}: register says {} cells, list holds {cells}",
                            regs.cells
                        )));
                    }
                }
            }
        }
        self.check_hcf(&queued)?;
        self.check_ecm(&queued)?;
        self.check_l2bm(&queued)?;
        for d in &queued {
            walk_cells(d.head, d.ncells as u32, "queued packet")?;
            charge(d, 0);
        }
        for (p, ip) in self.ing.iter().enumerate() {
            for (i, d) in ip.pending.iter().enumerate() {
                if i == 0 && ip.written > 0 {
                    walk_cells(d.head, ip.written as u32, "packet being written")?;
                }
                charge(d, 0);
            }
            if ip.pending.len() > ip.fifo.len() + 2 {
                return Err(self.err(format!(
                    "ingress p{p}: {} pending packets for {} FIFO cells",
                    ip.pending.len(),
                    ip.fifo.len()
                )));
            }
        }
        for e in &self.eg {
            if let Tx::Data(t) = e.tx {
                let left = (t.desc.ncells - t.k) as u32;
                if left > 0 {
                    let first = t
                        .cell_ptr
                        .unwrap_or_else(|| self.cell_link.backdoor(t.last_ptr as usize));
                    walk_cells(first, left, "packet being sent")?;
                }
                charge(&t.desc, t.k);
            }
        }
        if let Some(leak) = owner.iter_zeros().next() {
            return Err(self.err(format!(
                "cell {leak} is neither free nor in any list (leak); {} cells unaccounted",
                owner.count_zeros()
            )));
        }
        let (mut shared, mut lossy_shared, mut all, mut lossy_all) = (0u32, 0u32, 0u32, 0u32);
        let mut port_shared = vec![0u32; ports];
        let mut port_headroom = vec![0u32; ports];
        for p in 0..ports {
            for pg in 0..QUEUES {
                let got = self.acct.group(p, pg);
                let want = ing[p * QUEUES + pg];
                if got.iter().sum::<u32>() != want {
                    return Err(self.err(format!("ingress p{p} pg{pg}: counters [private, shared, headroom] = {got:?} sum to {}, recount = {want}", got.iter().sum::<u32>())));
                }
                let phi = if self.d.is_lossless(pg as u8) {
                    self.d.private_cells
                } else {
                    self.d.lossy_private_cells
                };
                if got[0] > phi {
                    return Err(self.err(format!(
                        "ingress p{p} pg{pg}: private {} cells exceeds phi = {phi}",
                        got[0]
                    )));
                }
                if self.d.is_lossless(pg as u8) {
                    shared += got[1];
                    port_shared[p] += got[1];
                    port_headroom[p] += got[2];
                    // SIH: eta per queue. DSH: eta per port, checked below.
                    if self.dsh.is_none() && got[2] > self.d.eta_cells[p] {
                        return Err(self.err(format!(
                            "ingress p{p} pg{pg}: headroom {} cells exceeds eta = {}",
                            got[2], self.d.eta_cells[p]
                        )));
                    }
                } else {
                    lossy_shared += got[1];
                    lossy_all += got.iter().sum::<u32>();
                }
                all += got.iter().sum::<u32>();
                let e = self.acct.egress[p * QUEUES + pg].get();
                if e != eg[p * QUEUES + pg] {
                    return Err(self.err(format!(
                        "egress p{p} q{pg}: counter {e}, recount {}",
                        eg[p * QUEUES + pg]
                    )));
                }
            }
        }
        for (name, got, want) in [
            ("shared total", self.acct.shared_total.get(), shared),
            (
                "lossy shared total",
                self.acct.lossy_shared_total.get(),
                lossy_shared,
            ),
            ("buffer total", self.acct.total.get(), all),
            ("lossy total", self.acct.lossy_total.get(), lossy_all),
            (
                "headroom total",
                self.acct.headroom_total.get(),
                port_headroom.iter().sum(),
            ),
        ] {
            if got != want {
                return Err(self.err(format!(
                    "{name}: counter {got}, sum of queue counters {want}"
                )));
            }
        }
        for p in 0..ports {
            let (s, h) = (
                self.acct.port_shared[p].get(),
                self.acct.port_headroom[p].get(),
            );
            if s != port_shared[p] || h != port_headroom[p] {
                return Err(self.err(format!(
                    "ingress p{p}: port counters shared {s} / headroom {h}, sums of its groups {} / {}",
                    port_shared[p], port_headroom[p]
                )));
            }
            if self.dsh.is_some() && h > self.d.eta_cells[p] {
                return Err(self.err(format!(
                    "ingress p{p}: insurance headroom {h} cells exceeds eta = {} (Eq. 4)",
                    self.d.eta_cells[p]
                )));
            }
        }
        if shared > self.d.shared_cells {
            return Err(self.err(format!(
                "shared segment holds {shared} cells, B_s = {}",
                self.d.shared_cells
            )));
        }
        if let Some((name, wm, now)) = self.acct.check_watermarks() {
            return Err(self.err(format!(
                "{name}: watermark {wm} cells below the counter's {now}"
            )));
        }
        Ok(())
    }
}
