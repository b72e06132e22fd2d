//! Dynamic Threshold: `T(t) = alpha * (B_s - sum_i sum_j omega_s^{i,j}(t))`, DSH Eq. 2.
//!
//! Built as the hardware does it (DSH IV-D): a saturating subtractor forms the free shared
//! space from the segment size and the *registered* occupancy sum, and a shifter multiplies
//! by `alpha = 2^k`. The occupancy counters are registers and so is `T`: `T` used in
//! cycle `c` is computed in cycle `c - 1` from the counters as they stood at its start,
//! i.e. from the occupancy committed at the end of cycle `c - 2`.

use crate::accounting::Accounting;
use crate::config::{Derived, CNT_BITS};
use rtl::{Block, BlockError, Clocked, Probed, Reg, SatSub, Shifter, Visit};

/// The two DT units of a switch, lossless and lossy. With a hybrid ingress pool both see
/// the free space of both segments.
pub fn pool_units(d: &Derived) -> (DtThreshold, DtThreshold) {
    let (segment, lossy_segment) = if d.cfg.hybrid_ingress_pool {
        let both = d.shared_cells + d.lossy_shared_cells;
        (both, both)
    } else {
        (d.shared_cells, d.lossy_shared_cells)
    };
    (
        DtThreshold::new(segment, d.cfg.alpha_log2),
        DtThreshold::new(lossy_segment, d.cfg.lossy_alpha_log2),
    )
}

/// The registered occupancies the two units of [`pool_units`] read.
pub fn pool_occupancy(d: &Derived, acct: &Accounting) -> (u32, u32) {
    let (shared, lossy_shared) = (acct.shared_total.get(), acct.lossy_shared_total.get());
    if d.cfg.hybrid_ingress_pool {
        (shared + lossy_shared, shared + lossy_shared)
    } else {
        (shared, lossy_shared)
    }
}

#[derive(Debug, Clone)]
pub struct DtThreshold {
    /// `B_s`, cells.
    pub segment_cells: u32,
    /// Subtractor: `free = B_s - occupancy`.
    pub sub_free: SatSub,
    /// Shifter: `T = free << k` (`k = log2 alpha`, may be negative).
    pub shift_alpha: Shifter,
    /// Registered `T`, cells.
    pub t: Reg<u32>,
}

impl DtThreshold {
    pub fn new(segment_cells: u32, alpha_log2: i32) -> Self {
        let mut s = Self {
            segment_cells,
            sub_free: SatSub::new(CNT_BITS),
            // Range checked in config validation.
            shift_alpha: Shifter::new(CNT_BITS, alpha_log2).expect("alpha validated"),
            t: Reg::new(0),
        };
        // Out of reset, `T` holds the value for an empty segment.
        s.eval(0);
        s.t = Reg::new(s.t.next());
        s
    }

    /// Compute next `T` from the occupancy sum latched at the last edge.
    #[inline]
    pub fn eval(&mut self, occupancy: u32) {
        let free = self
            .sub_free
            .eval(self.segment_cells as u64, occupancy as u64);
        let t = self.shift_alpha.eval(free);
        self.t.set(t as u32);
    }

    #[inline]
    pub fn t(&self) -> u32 {
        self.t.q()
    }

    /// Whether evaluating from `occupancy` would change nothing: the subtractor already
    /// shows it and `t` holds what the shifter drives.
    pub fn settled(&self, occupancy: u32) -> bool {
        self.sub_free.inputs().1 == occupancy as u64 && self.t.q() == self.t.next()
    }
}

impl Block<u32, ()> for DtThreshold {
    /// The thresholds phase: next `T` from the registered occupancy. An occupancy the
    /// subtractor already shows would drive the D input of `t` with what it holds (the
    /// segment size is fixed), so the units are evaluated only when it moved.
    #[inline]
    fn eval(&mut self, _: u64, occupancy: u32, _: ()) -> Result<(), BlockError> {
        if self.sub_free.inputs().1 != occupancy as u64 {
            DtThreshold::eval(self, occupancy);
        }
        Ok(())
    }
}

impl Clocked for DtThreshold {
    fn commit(&mut self, cycle: u64) -> Result<(), BlockError> {
        self.t.commit(cycle)
    }
}

impl Probed for DtThreshold {
    fn probe<V: Visit>(&self, v: &mut V) {
        v.unit("sub_free", &self.sub_free);
        v.unit("shift_alpha", &self.shift_alpha);
        v.wire("t", CNT_BITS, self.t.q() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The largest count a 21-bit register holds.
    const MAX: u32 = (1 << CNT_BITS) - 1;

    proptest! {
        /// Eq. 2 for every register value: `T = floor(alpha * max(0, B_s - S))`, with the
        /// borrow raised exactly when `S > B_s`, at zero, and at the largest counts.
        #[test]
        fn threshold_equals_eq2(
            segment in prop_oneof![Just(0u32), Just(MAX), 0u32..=MAX],
            occupancy in prop_oneof![Just(0u32), Just(MAX), 0u32..=MAX],
            k in Shifter::K_MIN..=Shifter::K_MAX,
        ) {
            let mut dt = DtThreshold::new(segment, k);
            dt.eval(occupancy);
            dt.commit(1).unwrap();
            let free = (segment as i64 - occupancy as i64).max(0) as u64;
            let want = if k >= 0 { (free << k).min(MAX as u64) } else { free >> -k };
            prop_assert_eq!(dt.t() as u64, want);
            prop_assert_eq!(dt.sub_free.borrow(), occupancy > segment);
        }
    }

    #[test]
    fn threshold_is_registered_alpha_times_free() {
        let mut dt = DtThreshold::new(1000, -4);
        assert_eq!(dt.t(), 1000 >> 4, "reset value is alpha * B_s");
        dt.eval(200);
        assert_eq!(dt.t(), 62, "T changes only at the edge");
        dt.commit(1).unwrap();
        assert_eq!(dt.t(), 800 >> 4);
        dt.eval(1200);
        dt.commit(2).unwrap();
        assert_eq!(dt.t(), 0, "over-full segment saturates free space at zero");
        assert!(dt.sub_free.borrow());
    }
}
