//! SIH, static independent headroom: the baseline of the DSH paper (section II).
//!
//! Every lossless ingress queue has its own headroom of `eta` cells (Eq. 1; `N_p N_q eta` in
//! all, Eq. 3). Admission follows the four cases of II-C ([`lossless`]); PFC
//! thresholds compare the queue's *shared* occupancy (footnote 1) with `X_off = T`
//! (implicit: case 2 needs `shared < T`, so a queue at `T` goes to headroom and turns OFF)
//! and `X_on = T - delta`, one saturating subtractor because `T` is global.

use super::decision::{decide, lossy, Place, Plan, PoolParams, Pools, QueueView, Request};
use super::rules::BufferPolicy;
use crate::accounting::Accounting;
use crate::config::{Derived, CNT_BITS};
use crate::dirty::Dirty;
use crate::pfc::state::PauseState;
use crate::ports::{each_port, FlowRequests};
use crate::wires::DropReason;
use rtl::{SatSub, Visit};

/// Lossless decision under SIH with headroom `eta` cells.
pub fn lossless(n: u32, v: QueueView, pool: PoolParams, eta: u32) -> Result<Plan, DropReason> {
    decide(n, &v, pool, |m| {
        if v.shared < v.t && v.shared_in_use + m <= pool.shared_segment {
            Ok(Place::Shared)
        } else if v.headroom + m <= eta {
            Ok(Place::Headroom)
        } else {
            Err(DropReason::HeadroomFull)
        }
    })
}

#[derive(Debug, Clone)]
pub struct Sih {
    /// Subtractor: `X_on = T - delta`.
    pub sub_xon: SatSub,
    delta: u32,
    eta: Vec<u32>,
}

impl Sih {
    /// The units, showing their values for the reset `T` from the first sample on.
    pub fn new(d: &Derived, t: u32) -> Self {
        let mut s = Self {
            sub_xon: SatSub::new(CNT_BITS),
            delta: d.delta_cells,
            eta: d.eta_cells.clone(),
        };
        s.eval_xon(t);
        s
    }

    /// `X_on` from the registered `T`.
    #[inline]
    pub fn eval_xon(&mut self, t: u32) -> u32 {
        self.sub_xon.eval(t as u64, self.delta as u64) as u32
    }
}

/// Case 3 of II-C: a packet put into headroom turns its queue OFF; so does a lossless drop
/// (case 4 implies case 3's condition), whatever its `eta`. SIH and L2BM share this rule.
pub(super) fn off_on_headroom(r: &Request, outcome: Option<&Plan>, req: &mut FlowRequests) {
    if outcome.is_none_or(|plan| plan.headroom > 0) {
        req.off(r.port, r.pg);
    }
}

impl BufferPolicy for Sih {
    /// `X_on` from `T`, evaluated only when `T` moved (the subtractor's other input,
    /// `delta`, is fixed).
    #[inline]
    fn thresholds(&mut self, t: u32, _: &Accounting, _: &mut Dirty) {
        if self.sub_xon.inputs().0 != t as u64 {
            self.eval_xon(t);
        }
    }

    fn decide(
        &mut self,
        r: &Request,
        v: QueueView,
        pools: &Pools,
        _: &Accounting,
        _: &PauseState,
    ) -> Result<Plan, DropReason> {
        if r.lossless {
            lossless(r.n, v, pools.lossless, self.eta[r.port])
        } else {
            lossy(r.n, v, pools.lossy)
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

    #[inline(always)]
    fn resume_queues(&mut self, p: usize, off: u8, acct: &Accounting, _: u32, _: &mut Dirty) -> u8 {
        let xon = self.sub_xon.y() as u32;
        let mut on = 0;
        for pg in each_port(off as u64) {
            let [_, shared, headroom] = acct.group(p, pg);
            // Headroom must be empty, or the next pause would find less than eta of it
            // (pfc/fsm.rs).
            if headroom == 0 && shared < xon {
                on |= 1 << pg;
            }
        }
        on
    }

    fn probe_pfc_thresholds<V: Visit>(&self, v: &mut V) {
        v.scope("pfc", |v| v.unit("sub_xon", &self.sub_xon));
    }

    fn settled(&self, t: u32, _: &Accounting) -> bool {
        self.sub_xon.inputs().0 == t as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SwitchConfig;
    use crate::policy::decision::fixtures::{view, POOL};

    #[test]
    fn the_four_cases() {
        // 1: private.
        assert_eq!(
            lossless(8, view(0, 0, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 8,
                seg1: 0,
                headroom: 0
            })
        );
        // 1 -> 2: straddles private and shared.
        assert_eq!(
            lossless(8, view(10, 0, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 5,
                seg1: 3,
                headroom: 0
            })
        );
        // 2: shared below T.
        assert_eq!(
            lossless(8, view(15, 49, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 0,
                seg1: 8,
                headroom: 0
            })
        );
        // 3: at T, into headroom.
        assert_eq!(
            lossless(8, view(15, 50, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 0,
                seg1: 0,
                headroom: 8
            })
        );
        // 4: headroom would overflow.
        assert_eq!(
            lossless(8, view(15, 50, 93, 50), POOL, 100),
            Err(DropReason::HeadroomFull)
        );
    }

    #[test]
    fn shared_segment_is_never_overcommitted() {
        let v = QueueView {
            private: 15,
            shared: 0,
            headroom: 0,
            t: 50,
            shared_in_use: 995,
        };
        assert_eq!(
            lossless(8, v, POOL, 100),
            Ok(Plan {
                seg0: 0,
                seg1: 0,
                headroom: 8
            })
        );
        assert_eq!(lossy(8, v, POOL), Err(DropReason::LossyThreshold));
    }

    proptest::proptest! {
        /// The SIH resume threshold `X_on = max(0, T - delta)` for every `T` a 21-bit
        /// register holds, including zero and the largest count.
        #[test]
        fn xon_equals_t_minus_delta(t in proptest::prop_oneof![proptest::strategy::Just(0u32), proptest::strategy::Just((1u32 << 21) - 1), 0u32..(1 << 21)]) {
            let d = SwitchConfig::small().build().unwrap();
            let mut s = Sih::new(&d, 0);
            let xon = s.eval_xon(t);
            proptest::prop_assert_eq!(xon as i64, (t as i64 - d.delta_cells as i64).max(0));
            proptest::prop_assert_eq!(s.sub_xon.borrow(), t < d.delta_cells);
        }
    }

    #[test]
    fn xon_saturates_at_zero() {
        let d = SwitchConfig::small().build().unwrap();
        let mut s = Sih::new(&d, 0);
        assert_eq!(s.eval_xon(d.delta_cells + 5), 5);
        assert_eq!(s.eval_xon(1), 0);
        assert!(s.sub_xon.borrow());
    }
}
