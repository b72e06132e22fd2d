//! L2BM: sojourn-time-weighted ingress thresholds (Liu et al., "L2BM: Switch Buffer
//! Management for Hybrid Traffic in Data Center Networks", sections II-A and III).
//!
//! Present only under `Policy::L2bm`. The blocks (`docs/l2bm.md` has the equations with
//! numbers, the widths and the error bounds):
//!
//! - **Sojourn-time recorder** per ingress queue `(p, pg)` (Algorithm 1), registers
//!   `t_total` (signed), `N`, `t_prev` and `tau`. Events: *enqueue* at the packet's
//!   admission (start of packet, where the model charges the counters) and *dequeue* at
//!   the read of its first cell out of the buffer (the egress transmitter starts it). At
//!   each event the recorder ages `t_total` by `N * (now - t_prev)`, sets `t_prev = now`,
//!   adds the new packet's estimate `Q_out / mu` (enqueue) or removes the departing
//!   packet's own remaining estimate `due - now` (dequeue; `due` is kept in the packet's
//!   descriptor). So `t_total` is, exactly, the sum over the queue's packets of
//!   `due - t_prev`. Events of a cycle are collected and applied at the edge, like the
//!   occupancy counters: admission reads the registers of the last edge.
//!
//!   Algorithm 1 as printed is incomplete: its dequeue line subtracts one interval
//!   `t_now - t_prev` (not the departing packet's remainder, and not `N` intervals) and
//!   leaves `t_prev`, so the next event ages the survivors over the same interval again
//!   and the departing packet's residue stays in `t_total` for ever. The exact form above
//!   is what it describes in words ("remove the remaining sojourn time").
//!
//! - **Negative remainders** (a packet still queued after its estimated departure, e.g.
//!   while its egress is paused by PFC or shares the port with other queues) are kept, so
//!   the invariant above stays exact and a packet leaves `t_total` with exactly what it
//!   brought. `tau = max(t_total, 0) / N`: time a packet spends beyond its estimate never
//!   *raises* `tau` (the paper's "time spent paused by PFC is not counted"), it lowers it,
//!   and a queue whose packets are on average overdue counts as not congested. Its
//!   threshold rises instead of falling, so L2BM does not push a downstream pause further
//!   upstream ("mitigate PFC diffusion").
//!
//! - **tau and C**: `tau = t_total / N` (Eq. 2) is computed at the queue's events by the
//!   reciprocal divider (`rtl::RecipDivider`) and held in a register; it is the value at
//!   the queue's last event, not aged between events. `C`, the sum of the `tau` of all
//!   ingress queues (empty queues hold `tau = 0`), is one register updated incrementally,
//!   `C += tau_new - tau_old`, at the same edges: nothing scans all queues.
//!
//! - **Threshold unit** (Eq. 3), `T_i = (C / tau_i) * alpha * (B - Q)`: `alpha * (B - Q)`
//!   is the registered DT threshold of the queue's pool (`dt.t` or `dt_lossy.t`; with
//!   `hybrid_ingress_pool` both see the combined free space), the weight `w = C / tau` is
//!   one reciprocal division into UQ10.12, clamped to `[1, 1024)`: `C >= tau_i` holds
//!   exactly in the registers, so `w < 1` could only come from rounding, and `tau = 0`
//!   (an empty queue, or one whose packets are overdue) saturates `w` (not congested).
//!   One unit per ingress port is evaluated at the port's start of packet (`adm`), a
//!   second one (`qon`) checks one OFF queue of the port per cycle, round robin, for QON at
//!   `X_on = T_i - delta`.
//!
//! - **Drain meter** per egress queue (`l2bm_mu = "measured"`; Table I's `mu` of egress
//!   port `j` / priority `p`): registers `n` (packets admitted toward the queue and not yet
//!   started), `last` (cycle of the last packet start), `cells` (that packet's cells),
//!   `busy` (the queue held another packet when it started) and `k` (`1 / mu`, UQ16.16
//!   cycles per cell, reset to the port's line rate; one register per egress queue,
//!   `L2bm::k`, read by the enqueue units either way). At a packet start with `busy` set,
//!   the sample `((now - last) << 16) / cells` (the previous packet's service plus the time
//!   the queue waited for the port's other queues or a pause, per cell) enters an EWMA,
//!   `k += (sample - k) >> MU_SHIFT`. Updated at the edge, like the recorders. Under the
//!   default `line-rate`, `k` keeps the port's constant and the meter is not built.
//!
//! - **Egress DT** of the lossy pool (dual admission, Fig. 5): `T_e = alpha_e * (P - L)`
//!   with `P` the lossy pool and `L` its cells; a lossy packet is admitted only if its
//!   egress queue is below `T_e`. Lossless packets get no egress check: a lossless class
//!   must not drop, so RoCE deployments give lossless egress queues an unlimited (static
//!   maximum) threshold and let ingress PFC do the limiting.

use super::decision::{lossy, Plan, PoolParams, Pools, QueueView, Request};
use super::rules::BufferPolicy;
use super::sih::{self, off_on_headroom};
use crate::accounting::Accounting;
use crate::config::{Derived, L2bmMu, CNT_BITS, QUEUES};
use crate::dirty::Dirty;
use crate::dt_threshold::DtThreshold;
use crate::fault::Fault;
use crate::pfc::state::PauseState;
use crate::ports::{each_port, FlowRequests};
use crate::wires::DropReason;
use rtl::{BlockError, Clocked, Probed, RecipDivider, SatSub, Visit};

/// L2BM dual admission of a lossy packet (Fig. 5): the ingress decision ([`lossy`] with the
/// queue's L2BM threshold `T_i` in `v.t`), then the egress pool: the packet's egress queue,
/// `eg_cells` cells counting this cycle's earlier grants, must be below the lossy egress
/// pool's DT threshold `t_egress`, or the packet is dropped (`EgressThreshold`). Lossless
/// packets get no egress check (a lossless class must not drop; `l2bm.rs`).
pub fn lossy_dual(
    n: u32,
    v: QueueView,
    pool: PoolParams,
    eg_cells: u32,
    t_egress: u32,
) -> Result<Plan, DropReason> {
    let plan = lossy(n, v, pool)?;
    if eg_cells < t_egress {
        Ok(plan)
    } else {
        Err(DropReason::EgressThreshold)
    }
}

/// Width of a time stamp (`t_prev`, a descriptor's `due`): cycles.
pub const TIME_BITS: u32 = 48;
/// Width of the per-port rate register `1 / mu`, UQ16.16 cycles per cell.
pub const K_BITS: u32 = 32;
/// Fraction bits of the rate register.
pub const K_FRAC: u32 = 16;
/// EWMA gain of the drain meter, `2^-MU_SHIFT`: one sample moves `k` by 1/8 of its error.
pub const MU_SHIFT: u32 = 3;

/// Width of one packet's estimate `Q_out / mu`, cycles: 21-bit `Q_out` times a 32-bit rate
/// register, shifted by 16, is below `2^37`.
pub const EST_BITS: u32 = 40;
/// Width of `t_total`, two's complement.
pub const TOTAL_BITS: u32 = 64;
/// Width of `tau`, cycles (an average of estimates, each below `2^37`).
pub const TAU_BITS: u32 = 40;
/// Width of `C`: the sum of at most 512 `tau`s.
pub const C_BITS: u32 = 50;
/// Fraction bits of the weight `w = C / tau`.
pub const W_FRAC: u32 = 12;
/// Width of the weight, UQ10.12.
pub const W_BITS: u32 = 22;
/// `w = 1`.
pub const W_ONE: u64 = 1 << W_FRAC;
/// Largest weight, `1024 - 2^-12`: the value of a queue with `tau = 0`.
pub const W_MAX: u64 = (1 << W_BITS) - 1;

#[inline]
fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// The registers of one ingress queue's sojourn-time recorder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recorder {
    /// Sum over the queue's packets of `due - t_prev`, cycles (may be negative).
    pub t_total: i64,
    /// Packets of the queue admitted and not yet dequeued.
    pub n: u32,
    /// Cycle of the last event.
    pub t_prev: u64,
    /// `max(t_total, 0) / N` at the last event (0 when empty), cycles.
    pub tau: u64,
}

/// `tau = max(t_total, 0) / N` as the recorder's divider computes it; 0 for an empty queue.
#[inline]
pub fn tau_of(t_total: i64, n: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    RecipDivider::quotient(t_total.max(0) as u64, n as u64, TAU_BITS).0
}

/// The weight `w = C / tau` in UQ10.12, clamped to `[1, W_MAX]`; `tau = 0` gives `W_MAX`.
#[inline]
pub fn weight_of(c: u64, tau: u64) -> u64 {
    let (q, _) = RecipDivider::quotient(c << W_FRAC, tau, W_BITS);
    q.max(W_ONE)
}

/// `T_i = t_base * w`, truncated, saturated at the counter width.
#[inline]
pub fn threshold_of(t_base: u32, w: u64) -> u32 {
    ((t_base as u64 * w) >> W_FRAC).min(mask(CNT_BITS)) as u32
}

/// The drain meter of one egress queue (`l2bm_mu = "measured"`); its `k` register is the
/// queue's `L2bm::k`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meter {
    /// Packets admitted toward the queue and not yet started.
    pub n: u32,
    /// Cycle the queue's last packet started.
    pub last: u64,
    /// Cells of that packet.
    pub cells: u32,
    /// The queue held another packet when its last packet started: the next start closes
    /// a back-to-back gap, a sample.
    pub busy: bool,
}

impl Meter {
    /// The sample of a back-to-back gap, `((now - last) << 16) / cells`, saturated at
    /// the register width.
    #[inline]
    pub fn sample(&self, now: u64) -> u64 {
        let gap = (now - self.last).min(mask(TIME_BITS - K_FRAC));
        RecipDivider::quotient(gap << K_FRAC, self.cells.max(1) as u64, K_BITS).0
    }

    /// A packet of `cells` cells starts at `now` (the edge): close the gap since the last
    /// start if the queue was backlogged, then `k += (sample - k) >> MU_SHIFT` (`k`, the
    /// queue's `1 / mu`).
    #[inline]
    pub fn start(&mut self, k: &mut u32, cells: u32, now: u64) {
        if self.busy {
            let old = *k as i64;
            let next = old + ((self.sample(now) as i64 - old) >> MU_SHIFT);
            *k = next.clamp(0, mask(K_BITS) as i64) as u32;
        }
        self.n -= 1;
        self.busy = self.n > 0;
        self.last = now;
        self.cells = cells;
    }
}

impl Probed for Meter {
    fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("n", CNT_BITS, self.n as u64);
        v.wire("last", TIME_BITS, self.last);
        v.wire("cells", CNT_BITS, self.cells as u64);
        v.wire("busy", 1, self.busy as u64);
    }
}

/// The enqueue unit of an ingress port: `est = (Q_out * k) >> 16`, the packet's sojourn
/// estimate `Q_out / mu` in cycles (`k` = the egress port's cycles per cell, UQ16.16).
#[derive(Debug, Clone, Default)]
pub struct EstUnit {
    pub q_out: u32,
    pub k: u32,
    pub est: u64,
}

impl EstUnit {
    #[inline]
    pub fn eval(&mut self, q_out: u32, k: u32) -> u64 {
        debug_assert!(q_out as u64 <= mask(CNT_BITS), "q_out {q_out}");
        self.q_out = q_out;
        self.k = k;
        self.est = ((q_out as u64 * k as u64) >> K_FRAC).min(mask(EST_BITS));
        self.est
    }
}

impl Probed for EstUnit {
    fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("q_out", CNT_BITS, self.q_out as u64);
        v.wire("k", K_BITS, self.k as u64);
        v.wire("est", EST_BITS, self.est);
    }
}

/// The threshold unit of Eq. 3 for one queue: `w = C / tau` (reciprocal divider, clamp),
/// `T = alpha (B - Q) * w`; the QON unit also forms `X_on = T - delta`.
#[derive(Debug, Clone)]
pub struct ThrUnit {
    /// The priority group evaluated last.
    pub pg: u8,
    pub tau: u64,
    pub c: u64,
    /// `(C << 12) / tau`.
    pub div: RecipDivider,
    /// The clamped weight.
    pub w: u64,
    /// `alpha * (B - Q)`, the registered DT threshold of the queue's pool.
    pub t_base: u32,
    /// `T_i`.
    pub t: u32,
    /// QON unit only: `X_on = T_i - delta`.
    pub sub_xon: Option<SatSub>,
    delta: u32,
}

impl ThrUnit {
    /// A unit whose input registers are zero out of reset, its outputs showing what
    /// those inputs give (an empty queue's saturated weight) from the first sample on.
    pub fn new(xon: bool, delta: u32) -> Self {
        let mut u = Self {
            pg: 0,
            tau: 0,
            c: 0,
            div: RecipDivider::new(C_BITS + W_FRAC, TAU_BITS, W_BITS),
            w: 0,
            t_base: 0,
            t: 0,
            sub_xon: xon.then(|| SatSub::new(CNT_BITS)),
            delta,
        };
        u.eval(0, 0, 0, 0);
        u
    }

    /// Evaluate for queue `pg` with the registered `tau`, `C` and pool threshold; returns
    /// `T_i` (and, in the QON unit, computes `X_on`).
    #[inline]
    pub fn eval(&mut self, pg: u8, tau: u64, c: u64, t_base: u32) -> u32 {
        self.pg = pg;
        self.tau = tau;
        self.c = c;
        self.t_base = t_base;
        self.w = self.div.eval(c << W_FRAC, tau).max(W_ONE);
        self.t = threshold_of(t_base, self.w);
        if let Some(s) = &mut self.sub_xon {
            s.eval(self.t as u64, self.delta as u64);
        }
        self.t
    }

    /// `X_on` of the last evaluation (QON unit).
    pub fn xon(&self) -> u32 {
        self.sub_xon.as_ref().map_or(0, |s| s.y() as u32)
    }
}

impl Probed for ThrUnit {
    fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("pg", 3, self.pg as u64);
        v.wire("tau", TAU_BITS, self.tau);
        v.wire("c", C_BITS, self.c);
        v.unit("div", &self.div);
        v.wire("w", W_BITS, self.w);
        v.wire("t_base", CNT_BITS, self.t_base as u64);
        v.wire("t", CNT_BITS, self.t as u64);
        if let Some(s) = &self.sub_xon {
            v.unit("sub_xon", s);
        }
    }
}

/// Events of one ingress queue in the current cycle, applied at the edge.
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    /// Estimates added minus remainders removed, cycles.
    add: i64,
    /// Packets enqueued minus dequeued.
    dn: i32,
    marked: bool,
}

/// The L2BM blocks of the switch.
#[derive(Debug, Clone)]
pub struct L2bm {
    /// Per ingress queue `port * 8 + pg`.
    pub rec: Vec<Recorder>,
    /// `C`, the sum of every queue's `tau`.
    pub c: u64,
    /// Per egress queue `port * 8 + q`, `1 / mu` in UQ16.16 cycles per cell: the port's
    /// line rate, and with the drain meters the register they update.
    pub k: Vec<u32>,
    /// Per egress queue, the drain meters (`l2bm_mu = "measured"`; empty otherwise).
    pub meter: Vec<Meter>,
    /// Packet starts of the cycle: (egress queue, cells), applied to the meters at the edge.
    starts: Vec<(u16, u32)>,
    /// `Fault::L2bmMeterStuck`: the meters take no sample.
    meter_stuck: bool,
    /// Per ingress port: the enqueue unit, the admission threshold unit, the QON unit and
    /// the QON scan pointer.
    pub est: Vec<EstUnit>,
    pub adm: Vec<ThrUnit>,
    pub qon: Vec<ThrUnit>,
    pub qon_rr: Vec<u8>,
    /// DT of the lossy egress pool.
    pub dt_egress: DtThreshold,
    /// Cells granted this cycle per egress queue, in port order (the `Q_out` bypass).
    eg_granted: Vec<u32>,
    eg_touched: Vec<u16>,
    pend: Vec<Pending>,
    touched: Vec<u16>,
    /// `eta` per ingress port, cells (headroom per lossless queue, as under SIH).
    eta: Vec<u32>,
}

impl L2bm {
    pub fn new(d: &Derived) -> Self {
        let n = d.ports * QUEUES;
        Self {
            rec: vec![Recorder::default(); n],
            c: 0,
            k: (0..n)
                .map(|eq| d.cycles_per_cell_q16[eq / QUEUES])
                .collect(),
            meter: match d.cfg.l2bm_mu {
                L2bmMu::LineRate => Vec::new(),
                L2bmMu::Measured => vec![Meter::default(); n],
            },
            starts: Vec::with_capacity(d.ports),
            meter_stuck: false,
            est: vec![EstUnit::default(); d.ports],
            adm: vec![ThrUnit::new(false, d.delta_cells); d.ports],
            qon: vec![ThrUnit::new(true, d.delta_cells); d.ports],
            qon_rr: vec![0; d.ports],
            dt_egress: DtThreshold::new(d.lossy_pool_cells, d.cfg.egress_alpha_log2),
            eg_granted: vec![0; n],
            eg_touched: Vec::with_capacity(d.ports),
            pend: vec![Pending::default(); n],
            touched: Vec::with_capacity(2 * d.ports),
            eta: d.eta_cells.clone(),
        }
    }

    /// The same-cycle grant bypass starts empty (admission of a new cycle).
    #[inline]
    pub fn clear_grants(&mut self) {
        for &qi in &self.eg_touched {
            self.eg_granted[qi as usize] = 0;
        }
        self.eg_touched.clear();
    }

    /// Cells granted earlier this cycle to egress queue `qi`.
    #[inline]
    pub fn granted(&self, qi: usize) -> u32 {
        self.eg_granted[qi]
    }

    #[inline]
    fn push(&mut self, qi: usize, add: i64, dn: i32) {
        let p = &mut self.pend[qi];
        p.add += add;
        p.dn += dn;
        if !p.marked {
            p.marked = true;
            self.touched.push(qi as u16);
        }
    }

    /// A packet of ingress queue `qi` (on ingress port `port`) is admitted toward egress
    /// queue `eq`, whose registered counter holds `eg_cells`: estimate its sojourn
    /// `Q_out / mu` with `Q_out` including this cycle's earlier grants and the packet
    /// itself, record the enqueue, and return its due cycle.
    pub fn enqueue(
        &mut self,
        port: usize,
        qi: usize,
        eq: usize,
        eg_cells: u32,
        ncells: u32,
        now: u64,
    ) -> u64 {
        let granted = self.eg_granted[eq];
        if granted == 0 {
            self.eg_touched.push(eq as u16);
        }
        self.eg_granted[eq] = granted + ncells;
        let q_out = (eg_cells + granted + ncells).min(mask(CNT_BITS) as u32);
        if let Some(m) = self.meter.get_mut(eq) {
            m.n += 1;
        }
        let est = self.est[port].eval(q_out, self.k[eq]);
        self.push(qi, est as i64, 1);
        now + est
    }

    /// The first cell of a packet of ingress queue `qi` with due cycle `due` is read at
    /// `now` from egress queue `eq`: remove its remaining estimate (negative if it is
    /// overdue); its start and its `ncells` go to the queue's drain meter at the edge.
    #[inline]
    pub fn dequeue(&mut self, qi: usize, eq: usize, ncells: u32, due: u64, now: u64) {
        self.push(qi, -(due as i64 - now as i64), -1);
        if !self.meter.is_empty() {
            self.starts.push((eq as u16, ncells));
        }
    }

    /// At the edge: the cycle's packet starts enter their queues' drain meters.
    fn apply_starts(&mut self, now: u64) -> Result<(), String> {
        for &(eq, cells) in &self.starts {
            let m = &mut self.meter[eq as usize];
            if m.n == 0 {
                return Err(format!(
                    "L2BM drain meter of egress queue {eq}: a start with n = 0"
                ));
            }
            if self.meter_stuck {
                m.busy = false;
            }
            m.start(&mut self.k[eq as usize], cells, now);
        }
        self.starts.clear();
        Ok(())
    }

    /// At the edge: apply the cycle's events of each touched queue, recompute its `tau` and
    /// update `C` by the difference.
    pub fn apply_events(&mut self, now: u64) -> Result<(), String> {
        for i in 0..self.touched.len() {
            let qi = self.touched[i] as usize;
            let e = std::mem::take(&mut self.pend[qi]);
            let r = &mut self.rec[qi];
            let dt = (now - r.t_prev) as i128;
            let total = r.t_total as i128 - r.n as i128 * dt + e.add as i128;
            let n = r.n as i64 + e.dn as i64;
            if n < 0 || n as u64 > mask(CNT_BITS) {
                return Err(format!("L2BM recorder of queue {qi}: N would become {n}"));
            }
            r.t_total = i64::try_from(total)
                .map_err(|_| format!("L2BM recorder of queue {qi}: t_total {total} overflows"))?;
            r.n = n as u32;
            r.t_prev = now;
            let tau = tau_of(r.t_total, r.n);
            self.c = self.c - r.tau + tau;
            r.tau = tau;
        }
        self.touched.clear();
        if self.c > mask(C_BITS) {
            return Err(format!("L2BM C = {} exceeds {C_BITS} bits", self.c));
        }
        Ok(())
    }

    /// Recount from the packets the switch holds, each given as (ingress queue, due):
    /// every `N`, `t_total = sum of (due - t_prev)`, `tau` and `C`.
    pub fn check(&self, packets: impl Iterator<Item = (usize, u64)>) -> Result<(), String> {
        let mut n = vec![0u32; self.rec.len()];
        let mut due = vec![0i128; self.rec.len()];
        for (qi, d) in packets {
            n[qi] += 1;
            due[qi] += d as i128;
        }
        let mut c = 0u64;
        for (qi, r) in self.rec.iter().enumerate() {
            let (p, pg) = (qi / QUEUES, qi % QUEUES);
            if r.n != n[qi] {
                return Err(format!(
                    "ingress p{p} pg{pg}: L2BM N = {}, recount of its queued and in-flight packets {}",
                    r.n, n[qi]
                ));
            }
            let want = due[qi] - n[qi] as i128 * r.t_prev as i128;
            if r.t_total as i128 != want {
                return Err(format!(
                    "ingress p{p} pg{pg}: L2BM t_total = {}, sum of (due - t_prev) over its packets {want}",
                    r.t_total
                ));
            }
            let tau = tau_of(r.t_total, r.n);
            if r.tau != tau {
                return Err(format!(
                    "ingress p{p} pg{pg}: L2BM tau = {}, t_total / N = {tau}",
                    r.tau
                ));
            }
            c += tau;
        }
        if c != self.c {
            return Err(format!("L2BM C = {}, sum of tau {c}", self.c));
        }
        Ok(())
    }
}

impl L2bm {
    /// The QON unit of port `p` checks one of the OFF queues `off` per cycle, round robin
    /// from its scan pointer: `T_i` (Eq. 3) from the registered `tau`, `C` and `T`, then
    /// `X_on = T_i - delta`; the queue turns ON with no headroom cells and its shared
    /// occupancy below `X_on`.
    fn resume_port(&mut self, p: usize, off: u8, acct: &Accounting, t: u32) -> u8 {
        let rr = self.qon_rr[p] as u32;
        let wrapped = (off as u16 | (off as u16) << 8) >> rr;
        let pg = (wrapped.trailing_zeros() + rr) as usize % QUEUES;
        self.qon_rr[p] = ((pg + 1) % QUEUES) as u8;
        let [_, shared, headroom] = acct.group(p, pg);
        let tau = self.rec[p * QUEUES + pg].tau;
        self.qon[p].eval(pg as u8, tau, self.c, t);
        if headroom == 0 && shared < self.qon[p].xon() {
            1 << pg
        } else {
            0
        }
    }
}

impl BufferPolicy for L2bm {
    const RECORDS_DEQUEUES: bool = true;

    fn thresholds(&mut self, _: u32, acct: &Accounting, _: &mut Dirty) {
        self.dt_egress.eval(acct.lossy_total.get());
    }

    fn start_admission(&mut self) {
        self.clear_grants();
    }

    /// `T_i = (C / tau_i) * T` (Eq. 3).
    fn queue_threshold(&mut self, r: &Request, t: u32) -> u32 {
        let tau = self.rec[r.qi].tau;
        self.adm[r.port].eval(r.pg as u8, tau, self.c, t)
    }

    fn decide(
        &mut self,
        r: &Request,
        v: QueueView,
        pools: &Pools,
        acct: &Accounting,
        _: &PauseState,
    ) -> Result<Plan, DropReason> {
        if r.lossless {
            sih::lossless(r.n, v, pools.lossless, self.eta[r.port])
        } else {
            let eg = acct.egress[r.eq].get() + self.granted(r.eq);
            lossy_dual(r.n, v, pools.lossy, eg, self.dt_egress.t())
        }
    }

    fn flow_control(
        &self,
        r: &Request,
        outcome: Option<&Plan>,
        _: u32,
        _: &Accounting,
        req: &mut FlowRequests,
    ) {
        off_on_headroom(r, outcome, req);
    }

    fn admitted(&mut self, r: &Request, acct: &Accounting, now: u64) -> u64 {
        let eg = acct.egress[r.eq].get();
        self.enqueue(r.port, r.qi, r.eq, eg, r.n, now)
    }

    fn resume_queues(
        &mut self,
        p: usize,
        off: u8,
        acct: &Accounting,
        t: u32,
        dirty: &mut Dirty,
    ) -> u8 {
        // The QON unit's registers move with every check.
        dirty.ingress(p);
        self.resume_port(p, off, acct, t)
    }

    fn dequeued(&mut self, qi: usize, eq: usize, ncells: u32, due: u64, now: u64) {
        self.dequeue(qi, eq, ncells, due, now);
    }

    fn commit(&mut self, cycle: u64) -> Result<(), BlockError> {
        self.dt_egress.commit(cycle)?;
        self.apply_starts(cycle).map_err(BlockError)?;
        self.apply_events(cycle).map_err(BlockError)
    }

    fn probe_pool_units<V: Visit>(&self, v: &mut V) {
        v.scope("l2bm", |v| {
            v.wire("c", C_BITS, self.c);
            v.unit("dt_egress", &self.dt_egress);
        });
    }

    fn probe_port<V: Visit>(&self, p: usize, _: &PauseState, _: &Accounting, v: &mut V) {
        v.scope("l2bm", |v| {
            v.unit("est", &self.est[p]);
            v.unit("adm", &self.adm[p]);
            v.unit("qon", &self.qon[p]);
            v.wire("qon_rr", 3, self.qon_rr[p] as u64);
        });
    }

    fn probe_egress_queue<V: Visit>(&self, p: usize, q: usize, v: &mut V) {
        let eq = p * QUEUES + q;
        if let Some(m) = self.meter.get(eq) {
            v.scope("l2bm", |v| {
                v.scope("mu", |v| {
                    m.probe(v);
                    v.wire("k", K_BITS, self.k[eq] as u64);
                })
            });
        }
    }

    fn probe_group<V: Visit>(&self, p: usize, pg: usize, v: &mut V) {
        let rec = &self.rec[p * QUEUES + pg];
        v.scope("l2bm", |v| {
            v.wire("t_total", TOTAL_BITS, rec.t_total as u64);
            v.wire("n", CNT_BITS, rec.n as u64);
            v.wire("t_prev", TIME_BITS, rec.t_prev);
            v.wire("tau", TAU_BITS, rec.tau);
        });
    }

    /// The QON unit of a port moves while it has more than one OFF queue to take turns
    /// over, or its scan pointer or input registers (queue, `tau`, `C`, `T`) are not yet
    /// those of its one OFF queue; otherwise its evaluation repeats itself.
    fn busy(&self, pause: &PauseState, t: u32) -> bool {
        each_port(pause.off_ports()).any(|p| {
            let off = pause.resumable(p);
            let pg = off.trailing_zeros() as usize;
            let u = &self.qon[p];
            off.count_ones() > 1
                || self.qon_rr[p] as usize != (pg + 1) % QUEUES
                || (u.pg as usize, u.tau, u.c, u.t_base)
                    != (pg, self.rec[p * QUEUES + pg].tau, self.c, t)
        })
    }

    fn settled(&self, _: u32, acct: &Accounting) -> bool {
        self.dt_egress.settled(acct.lossy_total.get())
    }

    fn check_registers(&self, packets: impl Iterator<Item = (usize, u64)>) -> Result<(), String> {
        self.check(packets)
    }

    fn inject(&mut self, f: Fault) {
        match f {
            Fault::L2bmSkewCount => self.rec[0].n += 1,
            Fault::L2bmSkewTotal => self.rec[0].t_total += 1,
            Fault::L2bmMeterStuck => self.meter_stuck = true,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Policy, SwitchConfig};
    use crate::policy::decision::fixtures::view;
    use proptest::prelude::*;

    #[test]
    fn lossy_dual_needs_both_pools() {
        let v = view(0, 40, 0, 50);
        let plan = Plan {
            seg0: 8,
            seg1: 0,
            headroom: 0,
        };
        let lossy_pool = PoolParams {
            private: 8,
            shared_segment: 1000,
        };
        assert_eq!(lossy_dual(8, v, lossy_pool, 99, 100), Ok(plan));
        assert_eq!(
            lossy_dual(8, v, lossy_pool, 100, 100),
            Err(DropReason::EgressThreshold),
            "egress queue at its threshold"
        );
        // The ingress refusal comes first.
        assert_eq!(
            lossy_dual(8, view(8, 50, 0, 50), lossy_pool, 0, 100),
            Err(DropReason::LossyThreshold)
        );
    }

    fn block() -> L2bm {
        let mut c = SwitchConfig::small();
        c.policy = Policy::L2bm;
        L2bm::new(&c.build().unwrap())
    }

    /// Algorithm 1 in its exact form: `t_total` is the sum of the remaining estimates
    /// after any sequence of enqueues, dequeues and idle cycles, including overdue
    /// packets, and `C` is the sum of the `tau`s.
    #[test]
    fn recorder_keeps_the_exact_sum_of_remaining_estimates() {
        let mut l = block();
        // 100 G, 1 GHz, 208 B: 16.64 cycles per cell.
        let d1 = l.enqueue(0, 3, 5 * 8 + 3, 0, 8, 10);
        assert_eq!(d1, 10 + ((8 * l.k[5 * 8 + 3] as u64) >> 16));
        assert_eq!(d1, 10 + 133, "8 cells: floor(133.12)");
        // A second packet in the same cycle from port 1 to the same egress queue sees the
        // first one's cells (the bypass).
        let d2 = l.enqueue(1, 8 + 3, 5 * 8 + 3, 0, 8, 10);
        assert_eq!(d2, 10 + 266);
        l.apply_events(10).unwrap();
        assert_eq!(l.rec[3].t_total, 133);
        assert_eq!(l.rec[3].n, 1);
        assert_eq!(l.c, 133 + 266);
        // Next cycle: the bypass is clear; 4 cells already in the egress queue.
        l.clear_grants();
        let d3 = l.enqueue(0, 3, 6 * 8 + 3, 4, 1, 50);
        assert_eq!(d3, 50 + ((5 * l.k[6 * 8 + 3] as u64) >> 16));
        l.apply_events(50).unwrap();
        // Aged by 1 packet * 40 cycles, plus 83.
        assert_eq!(l.rec[3].t_total, 133 - 40 + 83);
        assert_eq!(l.rec[3].n, 2);
        assert_eq!(l.rec[3].tau, 88);
        // The first packet leaves late, at 200 (overdue by 57): its remainder is -57.
        l.dequeue(3, 5 * 8 + 3, 8, d1, 200);
        l.apply_events(200).unwrap();
        // The packet left is overdue too (due 133): t_total is negative, tau is 0.
        assert_eq!(l.rec[3].t_total, d3 as i64 - 200);
        assert_eq!(l.rec[3].n, 1);
        assert_eq!(l.rec[3].tau, 0);
        // Port 1's packet leaves overdue: its queue is empty and exactly 0 again. Queue 3
        // has no event, so its registers hold (not aged between events).
        l.clear_grants();
        l.dequeue(8 + 3, 5 * 8 + 3, 8, d2, 300);
        l.apply_events(300).unwrap();
        assert_eq!(
            l.rec[8 + 3],
            Recorder {
                t_prev: 300,
                ..Recorder::default()
            }
        );
        assert_eq!(l.rec[3].t_total, d3 as i64 - 200);
        l.check([(3, d3)].into_iter()).unwrap();
        assert_eq!(l.c, 0);
        l.dequeue(3, 6 * 8 + 3, 1, d3, 400);
        l.apply_events(400).unwrap();
        assert_eq!(
            l.rec[3],
            Recorder {
                t_prev: 400,
                ..Recorder::default()
            }
        );
        l.check(std::iter::empty()).unwrap();
        assert!(l.check([(3, d3)].into_iter()).is_err(), "the recount bites");
    }

    #[test]
    fn dequeue_of_a_packet_never_enqueued_is_an_error() {
        let mut l = block();
        l.dequeue(0, 0, 1, 5, 5);
        assert!(l.apply_events(5).unwrap_err().contains("N would become -1"));
    }

    proptest! {
        /// The threshold unit against Eq. 3 with real numbers, from the same registers:
        /// `w = clamp(C / tau, 1, W_MAX)`, `T = t_base * w`, within the documented bound
        /// `|T - T_exact| <= (eps + 2^-12) T_exact + 1` (below the 21-bit saturation).
        #[test]
        fn threshold_unit_is_eq3_within_the_bound(
            tau in prop_oneof![Just(0u64), 1u64..1 << 12, 1u64..1 << TAU_BITS],
            extra in prop_oneof![Just(0u64), 0u64..1 << 20, 0u64..1 << 45],
            t_base in 0u32..1 << 21,
        ) {
            let c = tau + extra;
            let mut u = ThrUnit::new(true, 15);
            let t = u.eval(2, tau, c, t_base);
            let w_max = W_MAX as f64 / W_ONE as f64;
            let w = if tau == 0 { w_max } else { (c as f64 / tau as f64).clamp(1.0, w_max) };
            let exact = t_base as f64 * w;
            let bound = (RecipDivider::REL_ERROR + 1.0 / W_ONE as f64) * exact + 1.0;
            if exact < ((1u64 << CNT_BITS) - 1) as f64 {
                prop_assert!((t as f64 - exact).abs() <= bound + 1e-6,
                    "tau {tau} C {c} t_base {t_base}: T = {t}, exact {exact}, bound {bound}");
            } else {
                prop_assert!(t as f64 >= (((1u64 << CNT_BITS) - 1) as f64).min(exact - bound));
            }
            prop_assert!(t >= t_base, "w >= 1: never below DT");
            prop_assert_eq!(u.xon(), t.saturating_sub(15));
            prop_assert_eq!(rtl::probes_of(&u).last().unwrap().2 as u32, u.xon());
        }

        /// `tau = t_total / N` by the divider, within `eps * tau + 1`.
        #[test]
        fn tau_is_the_average_within_the_bound(
            t_total in prop_oneof![-(1i64 << 40)..0, 0i64..1 << 20, 0i64..1 << 57],
            n in 1u32..1 << 21,
        ) {
            let tau = tau_of(t_total, n);
            let exact = t_total.max(0) as f64 / n as f64;
            let max = mask(TAU_BITS);
            if exact * (1.0 - RecipDivider::REL_ERROR) >= max as f64 {
                prop_assert_eq!(tau, max, "saturates");
            } else {
                prop_assert!((tau as f64 - exact).abs() <= RecipDivider::REL_ERROR * exact + 1.0);
            }
        }
    }

    #[test]
    fn empty_queue_saturates_the_weight() {
        let mut u = ThrUnit::new(false, 0);
        assert_eq!(u.eval(0, 0, 12345, 100), ((100 * W_MAX) >> W_FRAC) as u32);
        assert_eq!(u.w, W_MAX);
        assert!(u.div.sat());
        // One active queue: C = tau, w = 1, T = DT's T.
        assert_eq!(u.eval(0, 777, 777, 680), 680);
        assert_eq!(u.w, W_ONE);
        // Four equal queues: w = 4 (exact for a tau with at most 11 significant bits).
        assert_eq!(u.eval(0, 1024, 4096, 680), 2720);
        // Otherwise within the bound: 1000 = 2^9 * 1.953125, R[976] is rounded.
        assert_eq!(u.eval(0, 1000, 4000, 680), 2719);
    }
}
