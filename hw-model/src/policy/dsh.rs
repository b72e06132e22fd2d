//! DSH flow-control thresholds (section IV-D), built from the units the paper names:
//!
//! - subtractor 1 per ingress port: `X_qoff = T - eta` (Eq. 5), saturating at zero;
//! - subtractor 2 per ingress port: `X_qon = X_qoff - delta_q`;
//! - one shifter (`N_q` a power of two) or multiplier (otherwise): `X_poff = N_q * T`
//!   (Eq. 6), with `N_q` the number of lossless queues per port;
//! - subtractor 3: `X_pon = X_poff - delta_p`.
//!
//! `eta` depends on the port's link (Eq. 1), so subtractors 1 and 2 exist per port; the
//! port-level ones depend on `T` only. All are combinational from the registered `T` and
//! are re-evaluated only in cycles where `T` changed (their inputs are otherwise constant).
//!
//! The rest of DSH (section IV-B, Fig. 8): admission puts a lossless packet, after the
//! queue's private buffer, into the shared segment while its port is PON, with no per-queue
//! cap (footroom and shared headroom in one segment), else into the port's insurance
//! headroom of `eta` cells (Eq. 4; [`lossless`]); queue-level PFC at `X_qoff` / `X_qon`
//! and port-level PFC (PON/POFF) at `X_poff` / `X_pon`.

use super::decision::{decide, lossy, Place, Plan, PoolParams, Pools, QueueView, Request};
use super::rules::BufferPolicy;
use crate::accounting::Accounting;
use crate::config::{Derived, CNT_BITS};
use crate::dirty::Dirty;
use crate::pfc::state::PauseState;
use crate::ports::{each_port, FlowRequests};
use crate::wires::DropReason;
use rtl::{interleave, Multiplier, Name, Probed, SatSub, Shifter, Visit};

/// The ingress port's DSH state for one decision.
#[derive(Debug, Clone, Copy)]
pub struct PortView {
    /// The port is in POFF (Fig. 8).
    pub poff: bool,
    /// Insurance headroom cells the port holds.
    pub insurance: u32,
    /// The port's insurance headroom, `eta` cells (Eq. 4 reserves one per port).
    pub eta: u32,
}

/// Lossless decision under DSH (section IV-B, Fig. 8). Private while `q < phi`, as in SIH;
/// then, while the port is PON, the shared segment, which holds footroom and shared
/// headroom alike (no per-queue cap: queue-level PFC at `X_qoff = T - eta` does the
/// limiting, and a congested queue may use headroom left by the other queues of its port);
/// while the port is POFF, or if the segment is full, the port's insurance headroom;
/// otherwise the packet is dropped.
pub fn lossless(
    n: u32,
    v: QueueView,
    pool: PoolParams,
    port: PortView,
) -> Result<Plan, DropReason> {
    decide(n, &v, pool, |m| {
        if !port.poff && v.shared_in_use + m <= pool.shared_segment {
            Ok(Place::Shared)
        } else if port.insurance + m <= port.eta {
            Ok(Place::Headroom)
        } else {
            Err(DropReason::HeadroomFull)
        }
    })
}

/// `X_poff = N_q * T`: a shift when `N_q` is a power of two, a multiplier otherwise.
#[derive(Debug, Clone)]
pub enum PortScale {
    Shift(Shifter),
    Mul(Multiplier),
}

impl PortScale {
    fn eval(&mut self, t: u64) -> u64 {
        match self {
            Self::Shift(s) => s.eval(t),
            Self::Mul(m) => m.eval(t),
        }
    }

    fn y(&self) -> u64 {
        match self {
            Self::Shift(s) => s.y(),
            Self::Mul(m) => m.y(),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Self::Shift(_) => "shift_xpoff",
            Self::Mul(_) => "mul_xpoff",
        }
    }
}

impl Probed for PortScale {
    fn probe<V: Visit>(&self, v: &mut V) {
        match self {
            Self::Shift(s) => s.probe(v),
            Self::Mul(m) => m.probe(v),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Dsh {
    eta: Vec<u32>,
    delta_q: u32,
    delta_p: u32,
    /// Per port: subtractor 1 (`X_qoff`) and subtractor 2 (`X_qon`).
    pub sub_xqoff: Vec<SatSub>,
    pub sub_xqon: Vec<SatSub>,
    pub scale_xpoff: PortScale,
    pub sub_xpon: SatSub,
    /// `T` the outputs were last computed from.
    t: Option<u32>,
}

impl Dsh {
    pub fn new(d: &Derived) -> Self {
        let nq = d.lossless_queues_per_port.max(1) as u64;
        let scale_xpoff = if nq.is_power_of_two() {
            PortScale::Shift(
                Shifter::new(CNT_BITS + 3, nq.trailing_zeros() as i32).expect("N_q <= 8"),
            )
        } else {
            PortScale::Mul(Multiplier::new(CNT_BITS + 3, nq))
        };
        Self {
            eta: d.eta_cells.clone(),
            delta_q: d.delta_cells,
            delta_p: d.delta_port_cells,
            sub_xqoff: (0..d.ports).map(|_| SatSub::new(CNT_BITS)).collect(),
            sub_xqon: (0..d.ports).map(|_| SatSub::new(CNT_BITS)).collect(),
            scale_xpoff,
            sub_xpon: SatSub::new(CNT_BITS + 3),
            t: None,
        }
    }

    /// Recompute from `T` if it changed; returns whether it did.
    pub fn eval(&mut self, t: u32) -> bool {
        if self.t == Some(t) {
            return false;
        }
        self.t = Some(t);
        for p in 0..self.eta.len() {
            let xqoff = self.sub_xqoff[p].eval(t as u64, self.eta[p] as u64);
            self.sub_xqon[p].eval(xqoff, self.delta_q as u64);
        }
        let xpoff = self.scale_xpoff.eval(t as u64);
        self.sub_xpon.eval(xpoff, self.delta_p as u64);
        true
    }

    #[inline]
    pub fn xqoff(&self, port: usize) -> u32 {
        self.sub_xqoff[port].y() as u32
    }

    #[inline]
    pub fn xqon(&self, port: usize) -> u32 {
        self.sub_xqon[port].y() as u32
    }

    /// `X_poff`; may exceed the counter width (N_q * T), hence u64.
    #[inline]
    pub fn xpoff(&self) -> u64 {
        self.scale_xpoff.y()
    }

    #[inline]
    pub fn xpon(&self) -> u64 {
        self.sub_xpon.y()
    }
}

impl BufferPolicy for Dsh {
    fn thresholds(&mut self, t: u32, _: &Accounting, dirty: &mut Dirty) {
        if self.eval(t) {
            dirty.all_ingress();
        }
    }

    fn decide(
        &mut self,
        r: &Request,
        v: QueueView,
        pools: &Pools,
        acct: &Accounting,
        pause: &PauseState,
    ) -> Result<Plan, DropReason> {
        if r.lossless {
            let port = PortView {
                poff: pause.poff() & (1 << r.port) != 0,
                insurance: acct.port_headroom[r.port].get(),
                eta: self.eta[r.port],
            };
            lossless(r.n, v, pools.lossless, port)
        } else {
            lossy(r.n, v, pools.lossy)
        }
    }

    /// Eq. 5: QOFF once the queue's shared occupancy exceeds `X_qoff`; Eq. 6: POFF once
    /// the port's exceeds `X_poff`, or as soon as insurance is needed. A lossless drop
    /// stops the queue and the port.
    fn flow_control(
        &self,
        r: &Request,
        outcome: Option<&Plan>,
        shared: u32,
        acct: &Accounting,
        req: &mut FlowRequests,
    ) {
        let Some(plan) = outcome else {
            req.off(r.port, r.pg);
            req.poff(r.port);
            return;
        };
        let seg1 = plan.seg1 as u32;
        if seg1 > 0 && shared + seg1 > self.xqoff(r.port) {
            req.off(r.port, r.pg);
        }
        let port_shared = acct.port_shared[r.port].get() + seg1;
        if plan.headroom > 0 || port_shared as u64 > self.xpoff() {
            req.poff(r.port);
        }
    }

    fn resume_queues(&mut self, p: usize, off: u8, acct: &Accounting, _: u32, _: &mut Dirty) -> u8 {
        let mut on = 0;
        for pg in each_port(off as u64) {
            let [_, shared, insurance] = acct.group(p, pg);
            // The queue's insurance cells must be gone, or the next pause would find
            // less than eta of it (pfc/fsm.rs).
            if insurance == 0 && shared < self.xqon(p) {
                on |= 1 << pg;
            }
        }
        on
    }

    fn resume_ports(&self, poff: u64, acct: &Accounting) -> u64 {
        let xpon = self.xpon();
        let mut pon = 0;
        for p in each_port(poff) {
            // Insurance must be empty: Eq. 4 guarantees no loss only if a port that turns
            // POFF has its whole eta of insurance free for the in-flight cells.
            let insurance = acct.port_headroom[p].get();
            if insurance == 0 && (acct.port_shared[p].get() as u64) < xpon {
                pon |= 1 << p;
            }
        }
        pon
    }

    fn headroom_per_port(&self) -> bool {
        true
    }

    fn probe_pfc_thresholds<V: Visit>(&self, v: &mut V) {
        v.scope("dsh", |v| {
            v.unit(self.scale_xpoff.name(), &self.scale_xpoff);
            v.unit("sub_xpon", &self.sub_xpon);
        });
    }

    fn probe_port<V: Visit>(&self, p: usize, pause: &PauseState, acct: &Accounting, v: &mut V) {
        interleave(
            v,
            (Name::word("sub_xqoff"), &self.sub_xqoff[p]),
            (Name::word("sub_xqon"), &self.sub_xqon[p]),
        );
        v.wire("poff", 1, (pause.poff() >> p) & 1);
        v.wire(
            "port_shared_cells",
            CNT_BITS,
            acct.port_shared[p].get() as u64,
        );
        v.wire(
            "insurance_cells",
            CNT_BITS,
            acct.port_headroom[p].get() as u64,
        );
    }

    fn settled(&self, t: u32, _: &Accounting) -> bool {
        self.t == Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Policy, SwitchConfig};
    use crate::policy::decision::fixtures::{view, POOL};
    use proptest::prelude::*;

    #[test]
    fn dsh_uses_shared_until_poff_then_insurance() {
        let port = |poff, insurance| PortView {
            poff,
            insurance,
            eta: 20,
        };
        // Above T the queue still goes to shared: DSH has no per-queue cap.
        assert_eq!(
            lossless(8, view(15, 500, 0, 50), POOL, port(false, 0)),
            Ok(Plan {
                seg0: 0,
                seg1: 8,
                headroom: 0
            })
        );
        assert_eq!(
            lossless(8, view(15, 0, 0, 50), POOL, port(true, 0)),
            Ok(Plan {
                seg0: 0,
                seg1: 0,
                headroom: 8
            })
        );
        assert_eq!(
            lossless(8, view(15, 0, 0, 50), POOL, port(true, 13)),
            Err(DropReason::HeadroomFull)
        );
        // Private first even in POFF: it is reserved per queue.
        assert_eq!(
            lossless(8, view(10, 0, 0, 50), POOL, port(true, 0)),
            Ok(Plan {
                seg0: 5,
                seg1: 0,
                headroom: 3
            })
        );
    }

    fn dsh(nq: u8) -> Derived {
        let mut c = SwitchConfig::tomahawk();
        c.policy = Policy::Dsh;
        c.lossless_priorities = (0..nq).collect();
        c.build().unwrap()
    }

    proptest! {
        /// Eq. 5, the X_qon form, Eq. 6 and X_pon for every register value, including
        /// saturation at zero and the largest counts.
        #[test]
        fn units_equal_the_formulas(t in prop_oneof![0u32..64, 0u32..(1 << 21)], nq in 1u8..=7) {
            let d = dsh(nq);
            let mut th = Dsh::new(&d);
            th.eval(t);
            let eta = d.eta_cells[3] as i64;
            let xqoff = (t as i64 - eta).max(0);
            prop_assert_eq!(th.xqoff(3) as i64, xqoff);
            prop_assert_eq!(th.xqon(3) as i64, (xqoff - d.delta_cells as i64).max(0));
            let xpoff = nq as u64 * t as u64;
            prop_assert_eq!(th.xpoff(), xpoff);
            prop_assert_eq!(th.xpon(), xpoff.saturating_sub(d.delta_port_cells as u64));
            prop_assert_eq!(th.sub_xqoff[3].borrow(), (t as i64) < eta);
        }
    }

    #[test]
    fn power_of_two_queue_count_uses_the_shifter() {
        assert_eq!(Dsh::new(&dsh(4)).scale_xpoff.name(), "shift_xpoff");
        assert_eq!(Dsh::new(&dsh(7)).scale_xpoff.name(), "mul_xpoff");
    }

    #[test]
    fn unchanged_threshold_is_not_recomputed() {
        let mut th = Dsh::new(&dsh(7));
        assert!(th.eval(100));
        assert!(!th.eval(100));
        assert!(th.eval(101));
    }
}
