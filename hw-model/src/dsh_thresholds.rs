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

use crate::config::{Derived, CNT_BITS};
use rtl::{Multiplier, Probed, SatSub, Shifter, Wire};

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

    pub fn name(&self) -> &'static str {
        match self {
            Self::Shift(_) => "shift_xpoff",
            Self::Mul(_) => "mul_xpoff",
        }
    }

    pub fn probed(&self) -> &dyn Probed {
        match self {
            Self::Shift(s) => s,
            Self::Mul(m) => m,
        }
    }
}

#[derive(Debug, Clone)]
pub struct DshThresholds {
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

impl DshThresholds {
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
        let p = self.scale_xpoff.probed();
        p.wire_value(p.wires().len() - 1)
    }

    #[inline]
    pub fn xpon(&self) -> u64 {
        self.sub_xpon.y()
    }

    /// The probed wires of the global (port-level) units: (name, width, block index).
    pub fn global_wires(&self) -> Vec<(String, u32)> {
        let mut v: Vec<(String, u32)> = self
            .scale_xpoff
            .probed()
            .wires()
            .iter()
            .map(|w| (format!("{}.{}", self.scale_xpoff.name(), w.name), w.width))
            .collect();
        v.extend(
            self.sub_xpon
                .wires()
                .iter()
                .map(|w: &Wire| (format!("sub_xpon.{}", w.name), w.width)),
        );
        v
    }

    pub fn global_wire_value(&self, i: usize) -> u64 {
        let p = self.scale_xpoff.probed();
        let n = p.wires().len();
        if i < n {
            p.wire_value(i)
        } else {
            self.sub_xpon.wire_value(i - n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Policy, SwitchConfig};
    use proptest::prelude::*;

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
            let mut th = DshThresholds::new(&d);
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
        assert_eq!(
            DshThresholds::new(&dsh(4)).scale_xpoff.name(),
            "shift_xpoff"
        );
        assert_eq!(DshThresholds::new(&dsh(7)).scale_xpoff.name(), "mul_xpoff");
    }

    #[test]
    fn unchanged_threshold_is_not_recomputed() {
        let mut th = DshThresholds::new(&dsh(7));
        assert!(th.eval(100));
        assert!(!th.eval(100));
        assert!(th.eval(101));
    }
}
